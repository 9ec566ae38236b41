//! LTE transport blocks through a real receive chain (the shipped
//! `turbo_rx_loopback.toml`): the marker before each block's G coded bits,
//! BPSK through the channel model's offsets, the BPSK receiver, the soft
//! marker search and the turbo decoder. Every block after the receiver's
//! lock comes back exactly at either half turn of the phase; a marker the
//! receiver does not know finds nothing, and bad sizes are refused naming
//! the field.

use std::path::Path;
use std::sync::atomic::Ordering;

mod common;

const SHIPPED: &str = "flowgraphs/turbo_rx_loopback.toml";
/// Bytes of a transport block (A = 1000 bits), blocks sent, and the last
/// one, which the receiver's filters always cut short.
const TB_BYTES: usize = 125;
const SENT: usize = 40;

fn run(dir: &Path, sets: &[&str]) -> anyhow::Result<gpufec::flowgraph::Summary> {
    let (decoded, sent) = (format!("vars.decoded=\"{}\"", dir.join("decoded.bin").display()), format!("vars.sent=\"{}\"", dir.join("sent.bin").display()));
    let mut all = vec![decoded.as_str(), sent.as_str()];
    all.extend_from_slice(sets);
    common::run_file(SHIPPED, &all)
}

#[test]
fn every_transport_block_after_the_lock_comes_back_exactly_at_either_half_turn() {
    let dir = common::fresh_dir("turbo_rx", "exact");
    // Phases near 0 and near 180° (the Costas loop's other lock: the markers
    // come complemented), one near the loop's unstable quarter turn; at 4 dB
    // the loops lock later, and the first block is lost (phase 1) or fails
    // its CRC (phase 0).
    let mut inverted_seen = [false; 2];
    for (phase, seed, esn0) in [(0.0, 1, 8), (1.0, 1, 8), (2.5, 2, 8), (3.1, 1, 8), (5.5, 3, 8), (0.0, 1, 4), (1.0, 1, 4)] {
        let (p, s, e) = (format!("vars.phase={phase}"), format!("vars.seed={seed}"), format!("vars.esn0_db={esn0}"));
        let summary = run(&dir, &[&e, &p, &s]).unwrap();
        let sync = &summary.frames.iter().find(|(n, _)| n == "sync").unwrap().1;
        let (found, inverted) = (sync.found.load(Ordering::Relaxed) as usize, sync.inverted.load(Ordering::Relaxed) as usize);
        assert_eq!(sync.cut_short.load(Ordering::Relaxed), 1, "phase {phase}: the last block is cut short by the receiver's filters");
        let checks = summary.decoders[0].stats.counts();
        let sent = std::fs::read(dir.join("sent.bin")).unwrap();
        let decoded = std::fs::read(dir.join("decoded.bin")).unwrap();
        assert_eq!(sent.len(), SENT * TB_BYTES);
        assert_eq!(decoded.len(), found * TB_BYTES, "phase {phase}");
        // The first block may go by while the loops lock (not found, or
        // found and failing its CRC); every other one must be there.
        let skip = SENT - 1 - found;
        assert!(skip <= 1, "phase {phase}: {found} of {} blocks found", SENT - 1);
        let wrong: Vec<usize> = (0..found).filter(|&j| decoded[j * TB_BYTES..][..TB_BYTES] != sent[(j + skip) * TB_BYTES..][..TB_BYTES]).collect();
        eprintln!("phase {phase} seed {seed} {esn0} dB: {found} found ({inverted} inverted), {} CRC failed, wrong {wrong:?}", checks.failed);
        assert!(wrong.is_empty() || wrong == [0], "phase {phase}: blocks {wrong:?} wrong");
        assert_eq!(checks.failed as usize, wrong.len(), "phase {phase}: a wrong block fails its CRC, a right one passes");
        inverted_seen[usize::from(inverted > found / 2)] = true;
    }
    assert_eq!(inverted_seen, [true, true], "the runs locked at both half turns");
}

#[test]
fn a_marker_the_receiver_does_not_know_finds_nothing_and_ends_cleanly() {
    let dir = common::fresh_dir("turbo_rx", "nomarker");
    // No bit errors allowed: with 4, random coded bits pass for a marker at
    // about 1.9e-5 of the 124 000 positions.
    let summary = run(&dir, &["sync.marker=\"deadbeef\"", "sync.max_errors=0"]).unwrap();
    let sync = &summary.frames.iter().find(|(n, _)| n == "sync").unwrap().1;
    assert_eq!(sync.found.load(Ordering::Relaxed), 0);
    assert_eq!(std::fs::read(dir.join("decoded.bin")).unwrap().len(), 0);
}

#[test]
fn bad_marker_settings_are_refused_naming_the_field() {
    let dir = common::fresh_dir("turbo_rx", "refused");
    for (set, field) in [
        ("marker.frame_bits=0", "frame_bits"),
        ("sync.frame_bits=1048577", "frame_bits"),
        ("sync.marker=\"1acffc\"", "marker"),
        ("marker.marker=\"xyz\"", "marker"),
        ("sync.max_errors=9", "max_errors"),
    ] {
        let e = run(&dir, &[set]).unwrap_err().to_string();
        assert!(e.contains(field), "{set}: {e}");
    }
}
