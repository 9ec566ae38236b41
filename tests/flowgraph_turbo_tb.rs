//! The prebuilt turbo_tb_awgn flowgraph (LTE transport blocks through the
//! whole chain) counts exactly what the direct link simulation (`gpufec ber
//! turbo --tbs --coded --rv`) counts for the same seed, with f32 LLRs; i8
//! LLRs and a framer in front decode too; every hostile field and a stream
//! that ends inside a transport block give one clear error.

use gpufec::blocks::BerCounts;
use gpufec::codes::BatchDecoder;
use gpufec::codes::sim::{StopRule, run_point};
use gpufec::codes::turbo::{CpuTurbo, DecoderConfig, EarlyStop, TransportBlock, TransportDecoder, TransportLink};
use gpufec::flowgraph::{BuildOptions, FlowgraphFile, Override, Summary, build, run};
use gpufec::gpu::Backend;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

mod common;

const SHIPPED: &str = "flowgraphs/turbo_tb_awgn.toml";

fn run_file(sets: &[&str]) -> anyhow::Result<Summary> {
    common::run_file(SHIPPED, sets)
}

/// A = 2000 in G = 6072 (one code block of 2048 with 24 filler bits), rv 2,
/// at 0.6 dB: some transport blocks fail, most do not.
const TB2000: [&str; 5] = ["vars.tbs=2000", "vars.coded=6072", "vars.rv=2", "vars.rate=\"2000/6072\"", "vars.ebn0_db=0.6"];

#[test]
fn counts_what_the_direct_simulation_counts() {
    let bits = 2000 * 150;
    let total = format!("source.total={bits}");
    let mut sets = TB2000.to_vec();
    sets.extend(["channel.llr=\"f32\"", "decoder.llr=\"f32\"", &total]);
    let s = run_file(&sets).unwrap();
    assert_eq!(s.ber.len(), 1);
    let got = s.ber[0].1;
    // What `gpufec ber turbo --tbs 2000 --coded 6072 --rv 2 --early-stop crc --backend cpu` builds.
    let cfg = DecoderConfig { early_stop: EarlyStop::Crc24A, ..DecoderConfig::default() };
    let tb = TransportBlock::new(2000, 6072, 2).unwrap();
    let dec = TransportDecoder::new(tb, |code| CpuTurbo::<f32>::new(code, cfg, 1.0, 0).map(|d| Box::new(d) as Box<dyn BatchDecoder<f32>>)).unwrap();
    let mut link = TransportLink::new(dec);
    let stop = StopRule { max_bits: bits, max_errors: u64::MAX };
    let p = run_point(&mut link, 0.6, 1, stop, &AtomicBool::new(false), Duration::MAX, |_| {}).unwrap();
    let want = BerCounts { bits: p.bits, bit_errors: p.bit_errors, frames: p.frames, frame_errors: p.frame_errors };
    assert_eq!(got, want);
    assert!(want.frame_errors > 0 && want.frame_errors < want.frames / 4, "{want:?}");
    // The decoder block's checks are the transport blocks' CRCs: every frame error detected.
    let counts = s.decoders[0].stats.counts();
    assert_eq!((counts.units, counts.checked, counts.failed), (150, 150, want.frame_errors), "{counts:?}");
}

#[test]
fn i8_llrs_from_a_framer_decode_several_code_blocks() {
    // Four code blocks of two sizes at rate 2/3, rv 0, cut by a framer.
    let text = std::fs::read_to_string(SHIPPED).unwrap().replace(
        "\"source > encoder > channel > decoder > probe > ber.decoded\"",
        "\"source > encoder > channel > framer > decoder > probe > ber.decoded\"",
    ) + "\n[blocks.framer]\ntype = \"Framer\"\nllr = \"i8\"\nunits = \"blocks\"\nblock_llrs = \"$coded\"\n";
    let mut file = FlowgraphFile::parse("framed.toml", &text).unwrap();
    for s in ["vars.tbs=20000", "vars.coded=30000", "vars.rate=\"20000/30000\"", "vars.ebn0_db=4", "source.total=200000", "decoder.input=\"units\""] {
        file.apply(&s.parse::<Override>().unwrap()).unwrap();
    }
    let s = run(build(&file, &BuildOptions { backend: Some(Backend::Cpu), profile: false }).unwrap(), Duration::from_secs(600), &AtomicBool::new(false), |_| {}).unwrap();
    assert_eq!((s.ber[0].1.bits, s.ber[0].1.bit_errors, s.ber[0].1.frames), (200_000, 0, 10));
    let counts = s.decoders[0].stats.counts();
    // Each unit's iterations are its four code blocks', which stop on their CRC24B well before 8.
    assert_eq!((counts.units, counts.checked, counts.failed), (10, 10, 0), "{counts:?}");
    assert!((40..10 * 4 * 4).contains(&counts.iterations), "{counts:?}");
}

/// Both `dematch` values build and decode (on the CPU both de-rate-match
/// on the host; that the GPU's on-load path counts what the host path
/// counts is `tests/gpu_turbo.rs`'s `gpu_dematching_on_load_is_the_hosts`);
/// a bad value is named.
#[test]
fn dematch_values_are_checked() {
    let total = format!("source.total={}", 2000 * 20);
    for how in ["host", "on-load"] {
        let mut sets = TB2000.to_vec();
        let field = format!("decoder.dematch=\"{how}\"");
        sets.extend([field.as_str(), &total]);
        let counts = run_file(&sets).unwrap().ber[0].1;
        assert_eq!(counts.bits, 2000 * 20, "{how}: {counts:?}");
    }
    let e = fails(&["decoder.dematch=\"gpu\"", "source.total=6120"]);
    assert!(e.contains("field 'dematch'") && e.contains("on-load") && e.contains("host"), "{e}");
    let e = fails(&["decoder.dematch=\"\"", "source.total=6120"]);
    assert!(e.contains("field 'dematch'"), "{e}");
}

/// `run_file` with `sets`, which must fail; its message.
fn fails(sets: &[&str]) -> String {
    format!("{:#}", run_file(sets).expect_err("a hostile value must be refused"))
}

#[test]
fn hostile_fields_are_named() {
    // The transport fields are the encoder's and the decoder's alike.
    for block in ["encoder", "decoder"] {
        for (field, want) in [
            ("tbs=0", &["'tbs'", "0 is outside 1..=1048552"][..]),
            ("tbs=2000000", &["'tbs'", "2000000 is outside 1..=1048552"]),
            ("coded=6000", &["'coded'", "no decoder can recover"]),
            ("coded=1e12", &["'coded'", "outside 1..=67108864"]),
            ("rv=4", &["'rv'", "4 is outside 0..=3"]),
            ("rv=-1", &["'rv'", "-1"]),
            ("block=6144", &["'block'", "give block or tbs"]),
        ] {
            let set = format!("{block}.{field}");
            let e = fails(&[&set, "source.total=6120"]);
            assert!(e.contains(&format!("block '{block}'")) && want.iter().all(|w| e.contains(w)), "{set}: {e}");
        }
    }
    for (set, want) in [("decoder.soft_output=true", &["'soft_output'", "hard decisions only"][..]), ("decoder.subblocks=7000", &["'subblocks'", "1..=6144"])] {
        let e = fails(&[set, "source.total=6120"]);
        assert!(want.iter().all(|w| e.contains(w)), "{set}: {e}");
    }
    // tbs without coded, coded or rv without tbs.
    let text = std::fs::read_to_string(SHIPPED).unwrap();
    for (drop, field) in [("coded = \"$coded\"\n", "'coded' is missing"), ("tbs = \"$tbs\"\n", "'coded': applies to transport blocks: give tbs too")] {
        let file = FlowgraphFile::parse(SHIPPED, &text.replacen(drop, "", 1)).unwrap();
        let e = format!("{:#}", build(&file, &BuildOptions { backend: Some(Backend::Cpu), profile: false }).err().expect("refused"));
        assert!(e.contains("block 'encoder'") && e.contains(field), "{e}");
    }
    // An early stop on a CRC needs a CRC.
    let file = FlowgraphFile::parse("bare.toml", &text.replace("tbs = \"$tbs\"\ncoded = \"$coded\"\nrv = \"$rv\"\n", "")).unwrap();
    let e = format!("{:#}", build(&file, &BuildOptions { backend: Some(Backend::Cpu), profile: false }).err().expect("refused"));
    assert!(e.contains("'early_stop'") && e.contains("no CRC"), "{e}");
}

/// Decode the LLRs of `file` (format `format`) as transport blocks of
/// A = 2000 in G = 6072; the run's error.
fn decode_file_fails(file: &std::path::Path, format: &str) -> String {
    let text = format!(
        r#"description = "LLRs from a file"
connections = ["llrs > decoder > ber.decoded", "bits > ber.reference"]
[blocks.llrs]
type = "FileSource"
path = "{}"
format = "{format}"
[blocks.bits]
type = "RandomBits"
total = 4000
[blocks.decoder]
type = "TurboDecoder"
llr = "{format}"
input = "stream"
tbs = 2000
coded = 6072
[blocks.ber]
type = "BerSink"
frame_bits = 2000
"#,
        file.display()
    );
    let file = FlowgraphFile::parse("llrs.toml", &text).unwrap();
    let built = build(&file, &BuildOptions { backend: Some(Backend::Cpu), profile: false }).unwrap();
    format!("{:#}", run(built, Duration::from_secs(600), &AtomicBool::new(false), |_| {}).expect_err("refused"))
}

#[test]
fn a_stream_cut_inside_a_transport_block_and_nan_llrs_are_reported() {
    // The bits end inside the second transport block: the encoder says so.
    let e = fails(&["source.total=8000"]);
    assert!(e.contains("inside a terminated frame (or code block, or transport block)"), "{e}");
    let dir = std::env::temp_dir().join(format!("gpufec-tb-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // LLRs that end inside the second transport block: counted, not dropped.
    let cut = dir.join("cut.i8");
    std::fs::write(&cut, vec![20u8; 6072 + 100]).unwrap();
    let e = decode_file_fails(&cut, "i8");
    assert!(e.contains("ended inside a transport block (100 of 6072 LLRs present)"), "{e}");
    // A NaN in the second transport block is named by its place.
    let nan = dir.join("nan.f32");
    let mut llrs = vec![2.0f32; 2 * 6072];
    llrs[6072 + 7] = f32::NAN;
    std::fs::write(&nan, llrs.iter().flat_map(|x| x.to_ne_bytes()).collect::<Vec<u8>>()).unwrap();
    let e = decode_file_fails(&nan, "f32");
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(e.contains("NaN or infinite"), "{e}");
}
