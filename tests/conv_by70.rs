//! The receive chain on a real recording: BY70-1's 9600-baud BPSK downlink
//! (`tests/data/satellite/`), WAV to soft bits (the same whatever the
//! pieces it is read in), and the shipped flowgraph from the WAV to the
//! frames that pass Reed–Solomon, against the frames gr-satellites decodes.

use gpufec::dsp::*;
use std::collections::BTreeSet;

mod common;

const WAV: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/satellite/by70-1.wav");
/// The 24 frames gr-satellites decodes from the recording (with Reed–Solomon).
const FRAMES: &str = include_str!("data/satellite/by70-1.frames.hex");

/// The recording through the receiver: soft bits after differential decoding.
fn receive(chunk: usize) -> Vec<f32> {
    let mut wav = WavReader::new(std::fs::File::open(WAV).unwrap()).unwrap();
    let format = wav.format();
    assert_eq!((format.channels, format.sample_rate), (1, 48_000));
    let mut r2c = RealToComplex::new(48_000.0, 11_500.0, 8_000.0, 1).unwrap();
    let mut rx = PskReceiver::new(ReceiverSettings { sps: 5, ..Default::default() }).unwrap();
    let (mut audio, mut base, mut llrs) = (Vec::new(), Vec::new(), Vec::new());
    loop {
        audio.clear();
        if wav.read(&mut audio, chunk).unwrap() == 0 {
            break;
        }
        base.clear();
        r2c.process(&audio, &mut base);
        rx.process(&base, &mut llrs);
    }
    llrs
}

fn load(a: &std::sync::atomic::AtomicU64) -> u64 {
    a.load(std::sync::atomic::Ordering::Relaxed)
}

/// Known frames, and the frames the flowgraph wrote, as sets of hex lines.
fn lines(text: &str) -> BTreeSet<String> {
    text.lines().map(str::to_string).collect()
}

/// `flowgraphs/by70-1.toml`, the whole receive chain as shipped (receiver,
/// Viterbi with the CCSDS inversion, differential decoding, marker,
/// derandomizer, Reed–Solomon), finds every one of the 24 frames
/// gr-satellites decodes, each passing Reed–Solomon, and the same frames on
/// every run.
#[test]
fn by70_1_flowgraph_decodes_every_known_frame() {
    let known = lines(FRAMES);
    assert_eq!(known.len(), 24);
    let mut runs = Vec::new();
    for run in 0..2 {
        let out = std::env::temp_dir().join(format!("gpufec-by70-{}-{run}.hex", std::process::id()));
        let set = format!("vars.frames={}", out.display());
        let summary = common::run_file("flowgraphs/by70-1.toml", &[&set]).unwrap();
        let text = std::fs::read_to_string(&out).unwrap();
        std::fs::remove_file(&out).unwrap();
        let got = lines(&text);
        let get = |name: &str, f: fn(&gpufec::blocks::FrameCounts) -> u64| {
            summary.frames.iter().find(|(n, _)| n == name).map(|(_, c)| f(c)).unwrap_or_else(|| panic!("no counts of '{name}'"))
        };
        let (found, passed, failed) = (get("sync", |c| load(&c.found)), get("rs", |c| load(&c.passed)), get("rs", |c| load(&c.failed)));
        let extra: Vec<&String> = got.difference(&known).collect();
        eprintln!("run {run}: {found} markers, {passed} frames passed Reed–Solomon, {failed} failed; not among the 24: {extra:?}");
        assert_eq!(known.difference(&got).count(), 0, "known frames missing: {:?}", known.difference(&got).collect::<Vec<_>>());
        assert_eq!(passed as usize, text.lines().count(), "one line per frame that passed");
        assert!(found >= passed + failed && found >= 24, "{found} found");
        runs.push(text);
    }
    assert_eq!(runs[0], runs[1], "the same frames on every run");
}

#[test]
fn the_demod_flowgraph_writes_the_receivers_soft_bits() {
    let out = std::env::temp_dir().join(format!("gpufec-by70-{}.f32", std::process::id()));
    let set = format!("vars.llrs={}", out.display());
    common::run_file("flowgraphs/by70-1_demod.toml", &[&set]).unwrap();
    let bytes = std::fs::read(&out).unwrap();
    std::fs::remove_file(&out).unwrap();
    let llrs: Vec<f32> = bytes.chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().unwrap())).collect();
    // 12.7 s at 9600 baud.
    assert!((120_000..125_000).contains(&llrs.len()), "{} soft bits", llrs.len());
    assert_eq!(llrs, receive(4096));
    // The same soft bits whatever the pieces the recording is read in.
    assert_eq!(receive(1000), llrs);
}
