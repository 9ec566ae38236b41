//! The prebuilt turbo_tb_awgn flowgraph (LTE transport blocks through the
//! whole chain; that it counts what the link simulator counts is
//! `families.rs`'s): the decoder's checks are the CRC24As; a framer in front
//! decodes too; every hostile field and a stream that ends inside a
//! transport block give one clear error.

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
const TB2000: [&str; 4] = ["vars.tbs=2000", "vars.coded=6072", "vars.rv=2", "vars.ebn0_db=0.6"];

#[test]
fn the_decoder_blocks_checks_are_the_transport_blocks_crcs() {
    let mut sets = TB2000.to_vec();
    sets.push("source.total=300000");
    let s = run_file(&sets).unwrap();
    let got = s.ber[0].1;
    assert!(got.frame_errors > 0 && got.frame_errors < got.frames / 4, "{got:?}");
    // Every frame error detected: the block's checks are the CRC24As.
    let counts = s.decoders[0].stats.counts();
    assert_eq!((counts.units, counts.checked, counts.failed), (150, 150, got.frame_errors), "{counts:?}");
}

#[test]
fn i8_llrs_from_a_framer_decode_several_code_blocks() {
    // Four code blocks of two sizes at rate 2/3, rv 0, cut by a framer.
    let text = std::fs::read_to_string(SHIPPED).unwrap().replace(
        "\"source > encoder > channel > decoder > probe > ber.decoded\"",
        "\"source > encoder > channel > framer > decoder > probe > ber.decoded\"",
    ) + "\n[blocks.framer]\ntype = \"Framer\"\nllr = \"i8\"\n";
    let mut file = FlowgraphFile::parse("framed.toml", &text).unwrap();
    for s in ["vars.tbs=20000", "vars.coded=30000", "vars.ebn0_db=4", "source.total=200000", "decoder.input=\"units\""] {
        file.apply(&s.parse::<Override>().unwrap()).unwrap();
    }
    let s = run(build(&file, &BuildOptions { backend: Some(Backend::Cpu), profile: false, ..Default::default() }).unwrap(), Duration::from_secs(600), &AtomicBool::new(false), |_| {}).unwrap();
    assert_eq!((s.ber[0].1.bits, s.ber[0].1.bit_errors, s.ber[0].1.frames), (200_000, 0, 10));
    let counts = s.decoders[0].stats.counts();
    // Each unit's iterations are its four code blocks', which stop on their
    // CRC24B well before 8: the mean is per code block, not per unit.
    assert_eq!((counts.units, counts.blocks, counts.checked, counts.failed), (10, 40, 10, 0), "{counts:?}");
    assert!((40..10 * 4 * 4).contains(&counts.iterations), "{counts:?}");
    let mean = counts.mean_iterations().unwrap();
    assert!((1.0..4.0).contains(&mean) && (mean - counts.iterations as f64 / 40.0).abs() < 1e-12, "{counts:?}");
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
        let field = format!("turbo.dematch=\"{how}\"");
        sets.extend([field.as_str(), &total]);
        let counts = run_file(&sets).unwrap().ber[0].1;
        assert_eq!(counts.bits, 2000 * 20, "{how}: {counts:?}");
    }
    let e = fails(&["turbo.dematch=\"gpu\"", "source.total=6120"]);
    assert!(e.contains("code 'turbo'") && e.contains("field 'dematch'") && e.contains("on-load") && e.contains("host"), "{e}");
    let e = fails(&["turbo.dematch=\"\"", "source.total=6120"]);
    assert!(e.contains("field 'dematch'"), "{e}");
}

/// `run_file` with `sets`, which must fail; its message.
fn fails(sets: &[&str]) -> String {
    format!("{:#}", run_file(sets).expect_err("a hostile value must be refused"))
}

#[test]
fn hostile_fields_are_named() {
    // The transport fields are the code's, which encoder and decoder share.
    for (field, want) in [
        ("tbs=0", &["'tbs'", "0 is outside 1..=1048552"][..]),
        ("tbs=2000000", &["'tbs'", "2000000 is outside 1..=1048552"]),
        ("coded=6000", &["'coded'", "no decoder can recover"]),
        ("coded=1e12", &["'coded'", "outside 1..=67108864"]),
        ("rv=4", &["'rv'", "4 is outside 0..=3"]),
        ("rv=-1", &["'rv'", "-1"]),
        ("block=6144", &["'block'", "applies to bare code blocks"]),
        ("subblocks=7000", &["'subblocks'", "1..=6144"]),
    ] {
        let set = format!("turbo.{field}");
        let e = fails(&[&set, "source.total=6120"]);
        assert!(e.contains("code 'turbo' (turbo)") && want.iter().all(|w| e.contains(w)), "{set}: {e}");
    }
    let text = std::fs::read_to_string(SHIPPED).unwrap();
    let build_of = |text: &str| build(&FlowgraphFile::parse(SHIPPED, text).unwrap(), &BuildOptions { backend: Some(Backend::Cpu), profile: false, ..Default::default() });
    // Soft output wired to a sink: transport blocks have none.
    let soft = text.replace("\"source > encoder > channel > decoder > probe > ber.decoded\"", "\"source > encoder > channel > decoder\", \"decoder.output > probe > ber.decoded\", \"decoder.soft > soft\"")
        + "\n[blocks.soft]\ntype = \"FileSink\"\npath = \"/dev/null\"\nformat = \"f32\"\n";
    let e = format!("{:#}", build_of(&soft.replace("input = \"stream\"", "input = \"stream\"\nsoft_output = true")).err().expect("refused"));
    assert!(e.contains("block 'decoder'") && e.contains("'soft_output'") && e.contains("hard decisions only"), "{e}");
    // Without coded, G is 3·(A + 24), as on the command line.
    let built = build_of(&text.replacen("coded = \"$coded\"\n", "", 1)).unwrap();
    assert_eq!(built.codes[0].1.rate(), 6120.0 / (3.0 * 6144.0));
    // Coded or rv without tbs.
    let e = format!("{:#}", build_of(&text.replacen("tbs = \"$tbs\"\n", "", 1)).err().expect("refused"));
    assert!(e.contains("code 'turbo'") && e.contains("field 'coded' (from $coded): applies to transport blocks: give tbs too"), "{e}");
    // An early stop on a CRC needs a CRC.
    let e = format!("{:#}", build_of(&text.replace("tbs = \"$tbs\"\ncoded = \"$coded\"\nrv = \"$rv\"\n", "")).err().expect("refused"));
    assert!(e.contains("'early_stop'") && e.contains("no CRC"), "{e}");
}

/// Decode the LLRs of `file` (format `format`) as transport blocks of
/// A = 2000 in G = 6072; the run's error.
fn decode_file_fails(file: &std::path::Path, format: &str) -> String {
    let text = format!(
        r#"description = "LLRs from a file"
connections = ["llrs > decoder > ber.decoded", "bits > ber.reference"]
[codes.tb]
family = "turbo"
tbs = 2000
coded = 6072
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
[blocks.ber]
type = "BerSink"
"#,
        file.display()
    );
    let file = FlowgraphFile::parse("llrs.toml", &text).unwrap();
    let built = build(&file, &BuildOptions { backend: Some(Backend::Cpu), profile: false, ..Default::default() }).unwrap();
    format!("{:#}", run(built, Duration::from_secs(600), &AtomicBool::new(false), |_| {}).expect_err("refused"))
}

#[test]
fn a_stream_cut_inside_a_transport_block_and_nan_llrs_are_reported() {
    // Bits for less than one transport block: refused before the run.
    let e = fails(&["source.total=6000"]);
    assert!(e.contains("sends 6000 bits, fewer than one of the 6120-bit frames block 'encoder' encodes"), "{e}");
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

/// i8 LLRs lose no more than f32 where the noise is strong: at a rate of
/// 1/67 and 0.5 dB (σ = 5.3 per channel bit) the old matched scale (±4
/// saturating) clipped most samples and counted BER 1.66e-1 where f32
/// counted 2.7e-4; the scale now follows σ.
#[test]
fn i8_llrs_keep_up_with_f32_at_a_low_rate() {
    let base = ["vars.tbs=6120", "vars.coded=410040", "vars.ebn0_db=0.5", "source.total=122400"];
    let ber = |llr: &str| {
        let mut sets = base.to_vec();
        let (c, d) = (format!("channel.llr={llr}"), format!("decoder.llr={llr}"));
        sets.extend([c.as_str(), d.as_str()]);
        run_file(&sets).unwrap().ber[0].1
    };
    let (i8s, f32s) = (ber("i8"), ber("f32"));
    assert_eq!(i8s.bits, 122_400);
    assert!(i8s.bit_errors <= f32s.bit_errors + 100, "i8 {i8s:?} against f32 {f32s:?}");
}
