//! The prebuilt viterbi_awgn flowgraph, run end to end on the CPU (that it
//! counts what the link simulator counts is `families.rs`'s): with no noise
//! it is error-free; a BER sink target stops it; depuncturing in the decoder
//! counts what the Depuncture block counts. On a machine with a GPU the GPU
//! flowgraph must count what the CPU flowgraph counts, both ways of
//! depuncturing.

use gpufec::blocks::BerCounts;
use gpufec::flowgraph::{BuildOptions, FlowgraphFile, Override, Summary, build, run};
use gpufec::gpu::Backend;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

mod common;

const SHIPPED: &str = "flowgraphs/viterbi_awgn.toml";
/// The shipped file, or its `f32` variant: `f32` LLRs from the channel to the decoder.
fn text(llr: &str) -> String {
    let shipped = std::fs::read_to_string(SHIPPED).unwrap();
    assert!(shipped.contains("llr = \"i8\""));
    shipped.replace("llr = \"i8\"", &format!("llr = \"{llr}\""))
}

fn run_file(llr: &str, sets: &[String], backend: Backend) -> anyhow::Result<Summary> {
    let mut file = FlowgraphFile::parse(SHIPPED, &text(llr))?;
    for s in sets {
        file.apply(&s.parse::<Override>()?)?;
    }
    let built = build(&file, &BuildOptions { backend: Some(backend), profile: false, ..Default::default() })?;
    run(built, Duration::from_secs(3600), &AtomicBool::new(false), |_| {})
}

fn counts(s: &Summary) -> BerCounts {
    assert_eq!(s.ber.len(), 1);
    s.ber[0].1
}

#[test]
fn depuncturing_in_the_decoder_counts_what_the_block_counts() {
    for (rate, ebn0, seed) in [("3/4", 4.5, 11u64), ("2/3", 3.5, 3)] {
        let sets = |at: &str| {
            [
                "source.total=300001".to_string(),
                format!("vars.rate={rate}"),
                format!("vars.ebn0_db={ebn0}"),
                format!("vars.seed={seed}"),
                "conv.tile=252,20,20".to_string(),
                format!("conv.depuncture={at}"),
            ]
        };
        let block = counts(&run_file("i8", &sets("block"), Backend::Cpu).unwrap());
        let decoder = run_file("i8", &sets("decoder"), Backend::Cpu).unwrap();
        assert!(decoder.decoders[0].describe.contains("depuncturing"), "{}", decoder.decoders[0].describe);
        let decoder = counts(&decoder);
        // auto (the shipped default) picks the decoder: 252 is a multiple of the period.
        assert_eq!(counts(&run_file("i8", &sets("auto"), Backend::Cpu).unwrap()), decoder, "rate {rate}");
        eprintln!("rate {rate} at {ebn0} dB: block {block:?}, decoder {decoder:?}");
        assert_eq!(decoder.bits, block.bits, "rate {rate}");
        assert!(block.bit_errors >= 10, "too few errors at rate {rate} to mean anything: {block:?}");
        // Only the first tile's 252 bits may decode differently (its stages
        // before the stream start differ; DepuncturedUnits' tests).
        assert!(decoder.bit_errors.abs_diff(block.bit_errors) <= 252, "rate {rate}: {block:?} vs {decoder:?}");
    }
    // The tile must start on the period; auto falls back to the block. (The
    // default tiles do start on it.)
    let sets = |at: &str| {
        ["source.total=1000".to_string(), "vars.rate=3/4".to_string(), "conv.tile=256,32,40".to_string(), format!("conv.depuncture={at}")]
    };
    let e = run_file("i8", &sets("decoder"), Backend::Cpu).err().unwrap();
    assert!(format!("{e:#}").contains("code 'conv' (conv): field 'depuncture'") && format!("{e:#}").contains("make f a multiple of 3"), "{e:#}");
    let auto = run_file("i8", &sets("auto"), Backend::Cpu).unwrap();
    assert!(!auto.decoders[0].describe.contains("depuncturing"), "{}", auto.decoders[0].describe);
    assert_eq!(counts(&auto).bits, 1000);
    let default = run_file("i8", &["source.total=1000".to_string(), "vars.rate=3/4".to_string()], Backend::Cpu).unwrap();
    assert!(default.decoders[0].describe.contains("depuncturing"), "{}", default.decoders[0].describe);
}

#[test]
fn noiseless_flowgraph_is_error_free_and_loses_no_bit() {
    let s = run_file("i8", &["source.total=100000".into(), "vars.ebn0_db=60".into()], Backend::Cpu).unwrap();
    let c = counts(&s);
    assert_eq!((c.bits, c.bit_errors, c.frame_errors), (100_000, 0, 0));
    // 390 whole frames of 256; the last 160 bits are no frame.
    assert_eq!((c.frames, c.partial_bits), (100_000 / 256, 100_000 % 256));
    assert!(!s.stopped_at_target);
    assert_eq!(s.throughput[0].1.items, 100_000);
    assert!(s.throughput[0].1.per_second() > 0.0);
}

#[test]
fn an_error_target_stops_an_endless_source() {
    let s = run_file("i8", &["source.total=1e9".into(), "vars.ebn0_db=1".into(), "ber.max_errors=200".into()], Backend::Cpu)
        .unwrap();
    let c = counts(&s);
    assert!(s.stopped_at_target);
    assert!(c.bit_errors >= 200 && c.bits < 10_000_000, "{c:?}");
}

#[test]
fn gpu_flowgraph_counts_what_the_cpu_flowgraph_counts() {
    if !common::have_gpu("gpu_flowgraph_counts_what_the_cpu_flowgraph_counts") {
        return;
    }
    let on_load = ["vars.rate=3/4", "vars.ebn0_db=4.5", "conv.tile=252,20,20", "conv.depuncture=decoder"];
    for (llr, extra) in [("i8", &[][..]), ("f32", &[]), ("i8", &on_load), ("f32", &on_load)] {
        let mut sets = vec!["source.total=3e6".to_string(), "vars.ebn0_db=3".to_string()];
        sets.extend(extra.iter().map(|s| s.to_string()));
        let cpu = run_file(llr, &sets, Backend::Cpu).unwrap();
        let gpu = run_file(llr, &sets, Backend::Gpu).unwrap();
        assert_eq!(gpu.decoders[0].backend, "gpu");
        assert_eq!(counts(&gpu), counts(&cpu), "{llr} {extra:?}");
        assert!(counts(&cpu).bit_errors >= 10, "{llr} {extra:?}: too few errors to mean anything");
    }
}
