//! The prebuilt turbo_awgn flowgraph counts exactly what the direct link
//! simulation (`gpufec ber turbo`) counts for the same seed, with f32 LLRs;
//! i8 LLRs decode too; a stream that ends inside a code block is an error.

use gpufec::blocks::BerCounts;
use gpufec::codes::sim::{StopRule, run_point};
use gpufec::codes::turbo::{CpuTurbo, DecoderConfig, TurboCode, TurboLink};
use gpufec::flowgraph::{BuildOptions, FlowgraphFile, Summary, build, run};
use gpufec::gpu::Backend;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

mod common;

const SHIPPED: &str = "flowgraphs/turbo_awgn.toml";

fn run_file(sets: &[&str]) -> anyhow::Result<Summary> {
    common::run_file(SHIPPED, sets)
}

/// K = 1024 blocks (rate 1024/3084) at 0.6 dB: some blocks fail, most do not.
const K1024: [&str; 4] = ["vars.block=1024", "vars.block_llrs=3084", "vars.rate=\"1024/3084\"", "vars.ebn0_db=0.6"];

#[test]
fn counts_what_the_direct_simulation_counts() {
    let bits = 1024 * 300;
    let total = format!("source.total={bits}");
    let mut sets = K1024.to_vec();
    sets.extend(["channel.llr=\"f32\"", "framer.llr=\"f32\"", "decoder.llr=\"f32\"", &total]);
    let s = run_file(&sets).unwrap();
    assert_eq!(s.ber.len(), 1);
    let got = s.ber[0].1;
    let code = TurboCode::lte(1024).unwrap();
    let dec = CpuTurbo::<f32>::new(code.clone(), DecoderConfig::default(), 1.0, 0).unwrap();
    let mut link = TurboLink::new(code, Box::new(dec)).unwrap();
    let stop = StopRule { max_bits: bits, max_errors: u64::MAX };
    let p = run_point(&mut link, 0.6, 1, stop, &AtomicBool::new(false), Duration::MAX, |_| {}).unwrap();
    let want = BerCounts { bits: p.bits, bit_errors: p.bit_errors, frames: p.frames, frame_errors: p.frame_errors };
    assert_eq!(got, want);
    assert!(want.frame_errors > 0 && want.frame_errors < want.frames / 2, "{want:?}");
}

#[test]
fn i8_llrs_decode_and_a_cut_block_is_an_error() {
    let mut sets = K1024.to_vec();
    sets.extend(["vars.ebn0_db=3", "source.total=102400"]);
    let s = run_file(&sets).unwrap();
    assert_eq!((s.ber[0].1.bits, s.ber[0].1.bit_errors), (102400, 0));
    let mut sets = K1024.to_vec();
    sets.push("source.total=1000");
    let e = format!("{:#}", run_file(&sets).unwrap_err());
    assert!(e.contains("inside a terminated frame (or code block"), "{e}");
}

#[test]
fn soft_output_agrees_with_the_bits() {
    let dir = std::env::temp_dir().join(format!("gpufec-turbo-soft-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (bits_path, soft_path) = (dir.join("bits.u8"), dir.join("soft.f32"));
    let text = format!(
        r#"description = "soft output"
connections = ["source > encoder > channel > framer > decoder", "decoder.output > bits", "decoder.soft > soft"]
[blocks.source]
type = "RandomBits"
seed = 1
total = 2048
[blocks.encoder]
type = "TurboEncoder"
block = 1024
[blocks.channel]
type = "BpskAwgn"
ebn0_db = 0.4
rate = "1024/3084"
seed = 1
llr = "f32"
[blocks.framer]
type = "Framer"
llr = "f32"
units = "blocks"
block_llrs = 3084
[blocks.decoder]
type = "TurboDecoder"
llr = "f32"
block = 1024
soft_output = true
[blocks.bits]
type = "FileSink"
path = "{}"
format = "bits"
[blocks.soft]
type = "FileSink"
path = "{}"
format = "f32"
"#,
        bits_path.display(),
        soft_path.display()
    );
    let file = FlowgraphFile::parse("soft.toml", &text).unwrap();
    run(build(&file, &BuildOptions { backend: Some(Backend::Cpu), profile: false }).unwrap(), Duration::from_secs(600), &AtomicBool::new(false), |_| {}).unwrap();
    let bits = std::fs::read(&bits_path).unwrap();
    let soft: Vec<f32> = std::fs::read(&soft_path).unwrap().chunks(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!((bits.len(), soft.len()), (2048, 2048));
    assert!(bits.iter().zip(&soft).all(|(&b, &l)| (b == 1) == (l < 0.0)));
    // At 0.4 dB some decisions are unsure: the soft output is not just ±large.
    assert!(soft.iter().any(|l| l.abs() < 5.0), "{:?}", &soft[..8]);
}
