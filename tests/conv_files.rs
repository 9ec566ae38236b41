//! The file flowgraphs: awgn_to_files.toml writes information bits and their
//! noisy LLRs; viterbi_file.toml decodes the LLR file into a bit file that
//! equals the information bits at high Eb/N0; viterbi_file_ber.toml counts
//! what viterbi_awgn.toml counts for the same seed; cut or mis-sized files are
//! refused with their reason.

use gpufec::flowgraph::{BuildOptions, FlowgraphFile, Override, Summary, build, run};
use gpufec::gpu::Backend;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

fn run_flowgraph(name: &str, sets: &[String]) -> anyhow::Result<Summary> {
    let path = format!("flowgraphs/{name}");
    let mut file = FlowgraphFile::parse(&path, &std::fs::read_to_string(&path)?)?;
    for s in sets {
        file.apply(&s.parse::<Override>()?)?;
    }
    let built = build(&file, &BuildOptions { backend: Some(Backend::Cpu), profile: false, ..Default::default() })?;
    run(built, Duration::from_secs(3600), &AtomicBool::new(false), |_| {})
}

/// A fresh directory for one test's files.
fn dir(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("gpufec-files-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The `--set`s naming the three files in `d`.
fn files(d: &std::path::Path) -> Vec<String> {
    let p = |f: &str| d.join(f).display().to_string();
    vec![format!("vars.bits={}", p("bits.packed")), format!("vars.llrs={}", p("llrs.i8")), format!("vars.decoded={}", p("decoded.packed"))]
}

#[test]
fn bits_through_an_llr_file_come_back_exactly_at_high_ebn0() {
    for (rate, tile) in [("1/2", "256,20,20"), ("3/4", "252,20,48")] {
        let d = dir(&format!("exact-{}", rate.replace('/', "")));
        let f = files(&d);
        let mut write = vec!["source.total=300001".to_string(), "vars.ebn0_db=12".into(), format!("vars.rate={rate}")];
        write.push(f[0].clone());
        write.push(f[1].clone());
        run_flowgraph("awgn_to_files.toml", &write).unwrap();
        let mut decode = vec![format!("vars.rate={rate}"), format!("conv.tile={tile}")];
        decode.extend(f[1..].iter().cloned());
        let s = run_flowgraph("viterbi_file.toml", &decode).unwrap();
        assert_eq!(s.throughput[0].1.items, 300_001, "rate {rate}");
        let bits = std::fs::read(d.join("bits.packed")).unwrap();
        let decoded = std::fs::read(d.join("decoded.packed")).unwrap();
        assert_eq!(bits.len(), 300_001usize.div_ceil(8));
        assert_eq!(decoded, bits, "rate {rate}");
    }
}

#[test]
fn the_file_chain_counts_what_the_awgn_chain_counts() {
    let d = dir("ber");
    let f = files(&d);
    let common = ["source.total=400000".to_string(), "vars.ebn0_db=3".into(), "vars.seed=5".into()];
    let mut write = common.to_vec();
    write.extend(f[..2].iter().cloned());
    run_flowgraph("awgn_to_files.toml", &write).unwrap();
    let from_files = run_flowgraph("viterbi_file_ber.toml", &f).unwrap();
    let direct = run_flowgraph("viterbi_awgn.toml", &common).unwrap();
    assert_eq!(from_files.ber[0].1, direct.ber[0].1);
    assert!(direct.ber[0].1.bit_errors >= 10, "{:?}", direct.ber[0].1);
}

#[test]
fn cut_and_mis_sized_files_are_refused_with_their_reason() {
    let d = dir("bad");
    let f = files(&d);
    // An LLR file that ends inside a trellis stage (an odd number of LLRs at rate 1/2).
    std::fs::write(d.join("llrs.i8"), vec![10u8; 2 * 1000 + 1]).unwrap();
    let e = format!("{:#}", run_flowgraph("viterbi_file.toml", &f[1..]).unwrap_err());
    assert!(e.contains("decoder") && e.contains("inside"), "{e}");
    // A missing LLR file, named with the block and field.
    std::fs::remove_file(d.join("llrs.i8")).unwrap();
    let e = format!("{:#}", run_flowgraph("viterbi_file.toml", &f[1..]).unwrap_err());
    assert!(e.contains("block 'llr_file'") && e.contains("field 'path'") && e.contains("cannot open"), "{e}");
    // A reference of f32 samples is not whole items: 6 bytes.
    std::fs::write(d.join("llrs.i8"), [1u8; 4000]).unwrap();
    std::fs::write(d.join("six.f32"), [0u8; 6]).unwrap();
    let mut sets = f[1..].to_vec();
    sets.push(format!("llr_file.path={}", d.join("six.f32").display()));
    sets.push("llr_file.format=f32".into());
    sets.push("decoder.llr=f32".into());
    let e = format!("{:#}", run_flowgraph("viterbi_file.toml", &sets).unwrap_err());
    assert!(e.contains("is 6 bytes, not a whole number of 4-byte f32 items"), "{e}");
}
