//! The prebuilt turbo_awgn flowgraph (that it counts what the link simulator
//! counts is `families.rs`'s): f32 and i8 LLRs count about the same; a
//! stream that ends inside a code block is an error; the soft output agrees
//! with the bits.

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
const K1024: [&str; 2] = ["turbo.block=1024", "vars.ebn0_db=0.6"];

#[test]
fn f32_llrs_count_what_i8_llrs_count_near_enough() {
    // Max-log-MAP does not depend on the LLRs' scale; the quantizer's
    // rounding changes a few decisions only.
    let total = format!("source.total={}", 1024 * 300);
    let mut sets = K1024.to_vec();
    sets.push(&total);
    let i8s = run_file(&sets).unwrap().ber[0].1;
    sets.extend(["channel.llr=\"f32\"", "decoder.llr=\"f32\""]);
    let f32s = run_file(&sets).unwrap().ber[0].1;
    assert_eq!((i8s.bits, f32s.bits), (1024 * 300, 1024 * 300));
    assert!(f32s.frame_errors > 0 && f32s.frame_errors < f32s.frames / 2, "{f32s:?}");
    assert!(i8s.frame_errors.abs_diff(f32s.frame_errors) <= 3 + f32s.frame_errors / 5, "i8 {i8s:?} against f32 {f32s:?}");
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
    assert!(e.contains("sends 1000 bits, fewer than one of the 1024-bit frames") && e.contains("a multiple of 1024"), "{e}");
}

#[test]
fn soft_output_agrees_with_the_bits() {
    let dir = std::env::temp_dir().join(format!("gpufec-turbo-soft-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (bits_path, soft_path) = (dir.join("bits.u8"), dir.join("soft.f32"));
    let text = format!(
        r#"description = "soft output"
connections = ["source > encoder > channel > framer > decoder", "decoder.output > bits", "decoder.soft > soft"]
[codes.turbo]
family = "turbo"
block = 1024
[blocks.source]
type = "RandomBits"
seed = 1
total = 2048
[blocks.encoder]
type = "TurboEncoder"
[blocks.channel]
type = "BpskAwgn"
ebn0_db = 0.4
seed = 1
llr = "f32"
[blocks.framer]
type = "Framer"
llr = "f32"
[blocks.decoder]
type = "TurboDecoder"
llr = "f32"
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
    run(build(&file, &BuildOptions { backend: Some(Backend::Cpu), profile: false, ..Default::default() }).unwrap(), Duration::from_secs(600), &AtomicBool::new(false), |_| {}).unwrap();
    let bits = std::fs::read(&bits_path).unwrap();
    let soft: Vec<f32> = std::fs::read(&soft_path).unwrap().chunks(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!((bits.len(), soft.len()), (2048, 2048));
    assert!(bits.iter().zip(&soft).all(|(&b, &l)| (b == 1) == (l < 0.0)));
    // At 0.4 dB some decisions are unsure: the soft output is not just ±large.
    assert!(soft.iter().any(|l| l.abs() < 5.0), "{:?}", &soft[..8]);
}
