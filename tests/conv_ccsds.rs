//! The CCSDS concatenated chain around the convolutional code with its
//! second output inverted (the shipped `ccsds_softbits.toml`): BY70-1's 24
//! known frames come back exactly; at moderate Eb/N0 Reed–Solomon corrects
//! what the Viterbi decoder leaves; an inverted stream is found and decoded;
//! a stream without markers, frames Reed–Solomon cannot correct and sizes
//! out of limits are counted or refused clearly.

use gpufec::codes::ccsds::{ASM, AsmFramer, AsmSearch, Basis, FrameCodec, FrameOutcome, FrameSync, ReedSolomon};
use gpufec::codes::conv::{ConvSettings, CpuViterbi, Tiler, ViterbiMode};
use gpufec::codes::settings::Settings;
use gpufec::codes::BatchDecoder;
use gpufec::codes::encode::Encoder;
use gpufec::flowgraph::{BuildOptions, FlowgraphFile, Override, Summary, build, run};
use gpufec::gpu::Backend;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

mod common;

const SHIPPED: &str = "flowgraphs/ccsds_softbits.toml";

fn known_frames() -> Vec<Vec<u8>> {
    let text = std::fs::read_to_string("tests/data/satellite/by70-1.frames.hex").unwrap();
    text.lines().map(|l| (0..l.len()).step_by(2).map(|i| u8::from_str_radix(&l[i..i + 2], 16).unwrap()).collect()).collect()
}

/// The shipped flowgraph with its source replaced by `source` (a block
/// table's body) and each of `sets` applied.
fn run_with(source: &str, sets: &[String]) -> anyhow::Result<Summary> {
    let shipped = std::fs::read_to_string(SHIPPED).unwrap();
    let start = shipped.find("[blocks.source]").unwrap();
    let end = start + shipped[start..].find("\n\n").unwrap();
    let text = format!("{}[blocks.source]\n{source}{}", &shipped[..start], &shipped[end..]);
    let mut file = FlowgraphFile::parse(SHIPPED, &text)?;
    for s in sets {
        file.apply(&s.parse::<Override>()?)?;
    }
    let built = build(&file, &BuildOptions { backend: Some(Backend::Cpu), profile: false, ..Default::default() })?;
    run(built, Duration::from_secs(3600), &AtomicBool::new(false), |_| {})
}

/// The 24 known frames as a binary file in `dir`, read bit by bit.
fn frames_source(dir: &Path) -> String {
    let bin = dir.join("by70-1.bin");
    std::fs::write(&bin, known_frames().concat()).unwrap();
    format!("type = \"FileSource\"\npath = \"{}\"\nformat = \"packed\"\n", bin.display())
}

/// (found, passed, corrected symbols, failed) of the run.
fn frame_counts(s: &Summary) -> (u64, u64, u64, u64) {
    let get = |name: &str| &s.frames.iter().find(|(n, _)| n == name).unwrap().1;
    let (sync, rs) = (get("sync"), get("rs"));
    let l = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
    (l(&sync.found), l(&rs.passed), l(&rs.corrected), l(&rs.failed))
}

fn hex_lines(path: &Path) -> Vec<Vec<u8>> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines().map(|l| (0..l.len()).step_by(2).map(|i| u8::from_str_radix(&l[i..i + 2], 16).unwrap()).collect()).collect()
}

#[test]
fn the_known_frames_come_back_exactly_and_rs_corrects_what_viterbi_leaves() {
    let dir = common::fresh_dir("ccsds", "known");
    let out = dir.join("out.hex");
    // 6 dB: nothing left for Reed–Solomon. 3.5 dB (2.3 dB per information bit of
    // the convolutional code): the Viterbi decoder leaves byte errors that
    // Reed–Solomon corrects, every frame still passing.
    for (ebn0, seed, needs_rs) in [(6.0, 1, false), (3.5, 5, true)] {
        let sets = [format!("vars.ebn0_db={ebn0}"), format!("vars.seed={seed}"), format!("vars.frames={}", out.display())];
        let s = run_with(&frames_source(&dir), &sets).unwrap();
        let (found, passed, corrected, failed) = frame_counts(&s);
        eprintln!("{ebn0} dB: {found} found, {passed} passed, {corrected} symbols corrected, {failed} failed");
        assert_eq!((found, passed, failed), (24, 24, 0), "{ebn0} dB");
        assert_eq!(corrected > 0, needs_rs, "{ebn0} dB: {corrected} symbols corrected");
        assert_eq!(hex_lines(&out), known_frames(), "{ebn0} dB");
    }
}

#[test]
fn frames_rs_cannot_correct_are_counted_and_the_run_goes_on() {
    let dir = common::fresh_dir("ccsds", "failing");
    let out = dir.join("out.hex");
    let sets = ["vars.ebn0_db=1.5".to_string(), format!("vars.frames={}", out.display())];
    let s = run_with(&frames_source(&dir), &sets).unwrap();
    let (found, passed, _, failed) = frame_counts(&s);
    assert!(failed > 0 && found == passed + failed, "found {found}, passed {passed}, failed {failed}");
    // What passed is among the frames sent, in order.
    let known = known_frames();
    let got = hex_lines(&out);
    assert_eq!(got.len() as u64, passed);
    assert!(got.iter().all(|f| known.contains(f)));
}

#[test]
fn a_stream_without_markers_ends_cleanly_with_nothing_found() {
    let dir = common::fresh_dir("ccsds", "nomarker");
    let out = dir.join("out.hex");
    // Random bits straight to the convolutional encoder: the chain without its framer.
    let shipped = std::fs::read_to_string(SHIPPED).unwrap().replace("source > framer > encoder", "source > encoder");
    let start = shipped.find("[blocks.framer]").unwrap();
    let end = start + shipped[start..].find("\n\n").unwrap() + 2;
    let text = format!("{}{}", &shipped[..start], &shipped[end..]);
    let mut file = FlowgraphFile::parse(SHIPPED, &text).unwrap();
    for s in [format!("vars.frames={}", out.display()), "vars.ebn0_db=8".into(), "source.total=20000".into(), "sync.max_errors=0".into()] {
        file.apply(&s.parse::<Override>().unwrap()).unwrap();
    }
    let built = build(&file, &BuildOptions { backend: Some(Backend::Cpu), profile: false, ..Default::default() }).unwrap();
    let s = run(built, Duration::from_secs(3600), &AtomicBool::new(false), |_| {}).unwrap();
    assert_eq!(frame_counts(&s), (0, 0, 0, 0));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "");
}

#[test]
fn an_inverted_stream_is_found_and_decoded() {
    // BPSK's phase ambiguity: every LLR's sign flipped. The code's outputs
    // have odd-weight generators, so the complemented stream is the
    // codeword of the complemented bits; the marker comes complemented.
    let chain = ConvSettings { invert: Some("01".into()), ..Default::default() }.resolve().unwrap();
    let codec = FrameCodec::new(ReedSolomon::new(146, 1, Basis::Conventional).unwrap(), true);
    let bits: Vec<u8> = known_frames().concat().iter().flat_map(|b| (0..8).rev().map(move |i| b >> i & 1)).collect();
    let (mut framed, mut coded) = (Vec::new(), Vec::new());
    AsmFramer::new(codec).encode(&bits, &mut framed).unwrap();
    chain.encoder().unwrap().encode(&framed, &mut coded).unwrap();
    // Inverted, with every 23rd LLR's sign wrong besides.
    let llrs: Vec<f32> = coded.iter().enumerate().map(|(i, &b)| if (b == 0) ^ (i % 23 == 0) { -4.0 } else { 4.0 }).collect();
    let ViterbiMode::Tiled(tile) = chain.mode() else { panic!("a streaming chain") };
    let mut tiler = Tiler::new(tile, 2).inverting(chain.trellis().code().inverted());
    let mut units = Vec::new();
    tiler.push(&llrs, &mut units);
    tiler.finish(&mut units).unwrap();
    let mut decoded = Vec::new();
    CpuViterbi::<f32>::new(chain.trellis().clone(), chain.mode(), 2).unwrap().decode_all(&units, &mut decoded).unwrap();
    decoded.truncate(framed.len());
    let mut finder = FrameSync::new(AsmSearch::new(ASM, 4).unwrap(), 146).unwrap();
    let mut found = Vec::new();
    finder.push(&decoded, &mut found);
    let frames: Vec<Vec<u8>> = found
        .into_iter()
        .map(|mut f| {
            assert!(f.found.inverted);
            assert!(matches!(codec.decode(&mut f.bytes), FrameOutcome::Corrected(_)));
            f.bytes[..114].to_vec()
        })
        .collect();
    assert_eq!(frames, known_frames());
}

#[test]
fn sizes_out_of_limits_are_refused_naming_the_field() {
    let dir = common::fresh_dir("ccsds", "limits");
    for (set, field) in [
        ("sync.frame_bytes=0", "frame_bytes"),
        ("sync.frame_bytes=2041", "frame_bytes"),
        ("sync.max_errors=9", "max_errors"),
        ("sync.marker=1acffc", "marker"),
        ("rs.interleave=9", "interleave"),
        ("rs.interleave=0", "interleave"),
        ("rs.data_bytes=224", "data_bytes"),
        ("framer.data_bytes=0", "data_bytes"),
        ("frames.frame_bytes=0", "frame_bytes"),
    ] {
        let sets = [set.to_string(), format!("vars.frames={}", dir.join("x.hex").display())];
        let e = run_with("type = \"RandomBits\"\nseed = 1\ntotal = 912\n", &sets).unwrap_err().to_string();
        assert!(e.contains(field), "{set}: {e}");
    }
    // 116 bytes at depth 5 do not split into codewords.
    let sets = ["framer.data_bytes=116".into(), "framer.interleave=5".into(), format!("vars.frames={}", dir.join("x.hex").display())];
    let e = run_with("type = \"RandomBits\"\nseed = 1\ntotal = 928\n", &sets).unwrap_err().to_string();
    assert!(e.contains("data_bytes") && e.contains("depth 5"), "{e}");
}

/// Frames through the whole chain from samples: `ccsds_tx.toml` writes a
/// SigMF recording of 100 frames (differential precoding, the CCSDS code,
/// BPSK, root-raised-cosine pulses, a 1 % carrier offset with drift, phase,
/// timing and a 100 ppm clock offset, Es/N0 10 dB), `ccsds_rx_file.toml`
/// receives it: every frame comes back exactly but the last, which the
/// receiver's filters cut short (counted). The receiver's first soft bit
/// falls on either output of a stage (the transmit filter's span decides):
/// the stage synchroniser finds both. The recording is `cf32_le` once and
/// `ci16_le` once; its metadata says what the transmitter set.
#[test]
fn frames_come_back_from_a_sigmf_recording_at_either_stage_alignment() {
    let dir = std::env::temp_dir().join(format!("gpufec-ccsds-samples-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (recording, sent, frames) = (dir.join("rec"), dir.join("sent.bin"), dir.join("frames.hex"));
    let at = |p: &std::path::Path| p.display().to_string();
    for (span, datatype) in [("10", "cf32_le"), ("12", "ci16_le")] {
        let sets = [format!("vars.samples={}", at(&recording)), format!("vars.sent={}", at(&sent)), format!("shaper.span={span}"), format!("recording.datatype=\"{datatype}\"")];
        common::run_file("flowgraphs/ccsds_tx.toml", &sets.iter().map(String::as_str).collect::<Vec<_>>()).unwrap();
        let meta: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("rec.sigmf-meta")).unwrap()).unwrap();
        assert_eq!(meta["global"]["core:datatype"], datatype);
        assert_eq!(meta["global"]["core:sample_rate"], 38400.0);
        assert_eq!(meta["global"]["core:recorder"], format!("gpufec {}", env!("CARGO_PKG_VERSION")));
        assert_eq!(meta["captures"][0]["core:frequency"], 436.2e6);
        let summary = common::run_file("flowgraphs/ccsds_rx_file.toml", &[&format!("vars.samples={}", at(&dir.join("rec.sigmf-data"))), &format!("vars.frames={}", at(&frames))]).unwrap();
        let sent: Vec<String> = std::fs::read(&sent).unwrap().chunks(114).map(|f| f.iter().map(|b| format!("{b:02x}")).collect()).collect();
        let got: Vec<String> = std::fs::read_to_string(&frames).unwrap().lines().map(str::to_string).collect();
        assert_eq!(sent.len(), 100);
        assert_eq!(got, sent[..99], "span {span}, {datatype}");
        let counts = &summary.frames.iter().find(|(n, _)| n == "sync").unwrap().1;
        assert_eq!(counts.cut_short.load(std::sync::atomic::Ordering::Relaxed), 1, "span {span}");
        let [rec] = &summary.recordings[..] else { panic!("{:?}", summary.recordings) };
        assert_eq!((rec.meta.datatype.name(), rec.meta.sample_rate, rec.meta.frequency), (datatype.to_string(), 38400.0, Some(436.2e6)));
    }
    // A recording at another rate than the chain's, and a missing one, are refused before the run.
    let e = common::run_file("flowgraphs/ccsds_rx_file.toml", &[&format!("vars.samples={}", at(&recording)), "vars.sample_rate=76800"]).unwrap_err().to_string();
    assert!(e.contains("block 'samples'") && e.contains("recorded at 38400 samples/s, but the chain is built for 76800"), "{e}");
    let e = common::run_file("flowgraphs/ccsds_rx_file.toml", &[&format!("vars.samples={}", at(&dir.join("none")))]).unwrap_err().to_string();
    assert!(e.contains("cannot open") && e.contains("none.sigmf-meta"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// QPSK frames through `ccsds_qpsk_loopback.toml` at each quarter turn of
/// the carrier's phase (no carrier offset, so that the Costas loop locks at
/// the quarter the phase gives): the stage synchroniser turns the LLR pairs
/// back at 90° and 270°, the marker search complements the frames at 90°
/// and 180° (the four locks: as sent; turned and complemented;
/// complemented; turned), and every frame comes back but the last, cut
/// short by the receiver's filters. With the flowgraph's 1 % carrier
/// offset the first frame falls in the pull-in; every later one comes back,
/// in hex lines and in a KISS file.
#[test]
fn qpsk_frames_come_back_at_every_quarter_turn_of_the_phase() {
    let dir = std::env::temp_dir().join(format!("gpufec-ccsds-qpsk-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (sent, frames) = (dir.join("sent.bin"), dir.join("frames.hex"));
    let files = [format!("vars.sent={}", sent.display()), format!("vars.frames={}", frames.display())];
    let run = |sets: &[String]| {
        let sets: Vec<&str> = files.iter().chain(sets).map(String::as_str).collect();
        let summary = common::run_file("flowgraphs/ccsds_qpsk_loopback.toml", &sets).unwrap();
        let sent: Vec<String> = std::fs::read(&sent).unwrap().chunks(114).map(|f| f.iter().map(|b| format!("{b:02x}")).collect()).collect();
        let got: Vec<String> = std::fs::read_to_string(&frames).unwrap().lines().map(str::to_string).collect();
        let inverted = summary.frames.iter().find(|(n, _)| n == "sync").unwrap().1.inverted.load(std::sync::atomic::Ordering::Relaxed);
        (sent, got, inverted)
    };
    for quarter in 0..4 {
        let phase = 0.3 + quarter as f64 * std::f64::consts::FRAC_PI_2;
        let (sent, got, inverted) = run(&[format!("vars.phase={phase}"), "channel.cfo=0".into()]);
        assert_eq!(got, sent[..99], "{quarter} quarter turns");
        assert_eq!(inverted, if quarter == 1 || quarter == 2 { 99 } else { 0 }, "{quarter} quarter turns");
    }
    let (sent, got, _) = run(&[]);
    assert_eq!(got, sent[1..99]);
    // The same frames as a KISS file (random data holds FEND and FESC bytes: escaped, and read back).
    let kiss = dir.join("frames.kiss");
    common::run_file("flowgraphs/ccsds_qpsk_loopback.toml", &[&files[0], &format!("vars.frames={}", kiss.display()), "frames.file=\"kiss\""]).unwrap();
    let stream = std::fs::read(&kiss).unwrap();
    let frames: Vec<String> = gpufec::codes::ccsds::kiss_frames(&stream).unwrap().iter().map(|f| f.iter().map(|b| format!("{b:02x}")).collect()).collect();
    assert_eq!(frames, sent[1..99]);
    assert!(stream.len() > 98 * 116, "{} bytes: no byte was escaped", stream.len());
    std::fs::remove_dir_all(&dir).unwrap();
}
