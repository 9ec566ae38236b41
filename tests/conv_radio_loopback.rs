//! The K=7 (171,133) rate-1/2 code Viterbi-decoded after the real receiver:
//! coded bits shaped at 2 and 4 samples per symbol through the channel model
//! (carrier offset and drift, random phase, fractional timing, 100 ppm clock
//! offset) into `PskReceiver`, then the CPU Viterbi decoder, against the same
//! code over the ideal soft-bit chain (AWGN, perfect synchronisation).

use gpufec::codes::BatchDecoder;
use gpufec::codes::conv::{ConvCode, ConvEncoder, CpuViterbi, EncoderMode, FrameConfig, Trellis, ViterbiMode};
use gpufec::dsp::*;

mod radio_chain;
use radio_chain::*;

/// What the receiver may lose against the ideal chain.
const LOSS_DB: f64 = 0.5;

/// Information bits per terminated frame of the decoded chain.
const FRAME: usize = 1_000;
/// Coded bits per frame (the six tail bits included).
const CODED_FRAME: usize = 2 * (FRAME + 6);
/// Eb/N0 at which the ideal coded chain's BER is a few 1e-4 (3.5e-4 at 3 dB).
const CODED_IDEAL_EBN0_DB: f64 = 3.0;
/// Symbols the receiver may take to lock at the decoded chain's SNR (the
/// QPSK bound of tests/radio_loopback.rs, from Eb/N0 2.5 dB).
const CODED_LOCK_SYMBOLS: usize = 5_000;

fn k7() -> std::sync::Arc<Trellis> {
    std::sync::Arc::new(Trellis::new(&ConvCode::k7_171_133()))
}

fn encode(info: &[u8]) -> Vec<u8> {
    let mut coded = Vec::new();
    ConvEncoder::new(k7(), EncoderMode::Terminated { frame: FRAME }).unwrap().encode(info, &mut coded).unwrap();
    coded
}

/// Viterbi-decoded information bits of whole coded frames.
fn decode(llrs: &[f32]) -> Vec<u8> {
    let mode = ViterbiMode::Frame(FrameConfig::new(FRAME, true).unwrap());
    let mut bits = Vec::new();
    CpuViterbi::<f32>::new(k7(), mode, 0).unwrap().decode_all(llrs, &mut bits).unwrap();
    bits
}

/// Bit errors of `got` against `want`, and the frames of `FRAME` bits with
/// more than 10 % errors (a receiver that slipped or lost lock).
fn decoded_errors(got: &[u8], want: &[u8]) -> (usize, usize) {
    let frame_errors: Vec<usize> =
        got.chunks(FRAME).zip(want.chunks(FRAME)).map(|(g, w)| g.iter().zip(w).filter(|(a, b)| a != b).count()).collect();
    (frame_errors.iter().sum(), frame_errors.iter().filter(|&&e| e > FRAME / 10).count())
}

/// A decoded run: information bits compared, their errors through the
/// receiver (and frames lost) and through the ideal chain.
struct Decoded {
    bits: usize,
    receiver: usize,
    lost_frames: usize,
    ideal: usize,
}

/// `frames` frames of random bits coded, sent through the channel and the
/// receiver at Eb/N0 `rx_db`, aligned on the known coded bits (delay and
/// phase ambiguity, once for the run, where the shipped chains use the
/// marker or `PairSync`) and decoded from the first frame after
/// `CODED_LOCK_SYMBOLS`; the same frames through the ideal chain at `ideal_db`.
fn decoded_run(constellation: Constellation, sps: usize, frames: usize, rx_db: f64, ideal_db: f64, seed: u64) -> Decoded {
    let k = constellation.bits();
    let info = random_bits(frames * FRAME, seed);
    let coded = encode(&info);
    let llrs = loopback(constellation, &coded, sps, es_n0_db(constellation, 0.5, rx_db), seed);
    let (_, aligned) = align(constellation, &llrs, &coded);
    let first = (CODED_LOCK_SYMBOLS * k).div_ceil(CODED_FRAME);
    let last = aligned.len().min(coded.len()) / CODED_FRAME;
    let want = &info[first * FRAME..last * FRAME];
    let (receiver, lost_frames) = decoded_errors(&decode(&aligned[first * CODED_FRAME..last * CODED_FRAME]), want);
    let ideal_llrs = ideal_llrs(constellation, &coded, es_n0_db(constellation, 0.5, ideal_db));
    let (ideal, _) = decoded_errors(&decode(&ideal_llrs[first * CODED_FRAME..last * CODED_FRAME]), want);
    Decoded { bits: want.len(), receiver, lost_frames, ideal }
}

/// The decoded chain through the receiver at Eb/N0 3.5 dB has no more
/// errors than the ideal chain at 3.0 dB, over 400 frames (400 000 bits,
/// the ideal chain's expected 140 errors in about 25 error events).
fn check_decoded(constellation: Constellation, sps: usize, seed: u64) {
    let d = decoded_run(constellation, sps, 400, CODED_IDEAL_EBN0_DB + LOSS_DB, CODED_IDEAL_EBN0_DB, seed);
    eprintln!(
        "decoded {constellation:?} at {sps} samples per symbol: {} errors in {} bits at {:.1} dB ({} frames lost), ideal chain {} at {CODED_IDEAL_EBN0_DB} dB",
        d.receiver,
        d.bits,
        CODED_IDEAL_EBN0_DB + LOSS_DB,
        d.lost_frames,
        d.ideal
    );
    assert_eq!(d.lost_frames, 0, "frames lost");
    assert!(d.ideal >= 50, "too few ideal errors to judge: {}", d.ideal);
    assert!(d.receiver <= d.ideal, "{} decoded errors {LOSS_DB} dB above the ideal chain's {}", d.receiver, d.ideal);
}

#[test]
fn decoded_bpsk_stays_within_half_a_db_at_2_and_4_samples_per_symbol() {
    check_decoded(Constellation::Bpsk, 2, 21);
    check_decoded(Constellation::Bpsk, 4, 22);
}

#[test]
fn decoded_qpsk_stays_within_half_a_db_at_2_and_4_samples_per_symbol() {
    check_decoded(Constellation::Qpsk, 2, 23);
    check_decoded(Constellation::Qpsk, 4, 24);
}

/// The decoded curve behind BENCHMARKS.md's table (not run in CI):
/// `cargo test --release --test conv_radio_loopback -- --ignored --nocapture`.
/// 1000 frames (10^6 information bits) per case and point, through the
/// receiver and through the ideal chain at the same Eb/N0; frames lost are
/// those with more than 10 % errors (the receiver not yet locked after
/// `CODED_LOCK_SYMBOLS`, or slipped).
#[test]
#[ignore]
fn decoded_ber_curve_against_the_ideal_chain() {
    let points = [2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0];
    println!("| case | {} | loss at 1e-4 |", points.map(|p| format!("{p} dB rx / ideal (frames lost)")).join(" | "));
    for (constellation, sps, seed) in [(Constellation::Bpsk, 2, 31), (Constellation::Bpsk, 4, 32), (Constellation::Qpsk, 2, 33), (Constellation::Qpsk, 4, 34)] {
        let mut curve = Vec::new();
        let mut cells = Vec::new();
        for &eb in &points {
            let d = decoded_run(constellation, sps, 1_000, eb, eb, seed);
            let (rx, ideal) = (d.receiver as f64 / d.bits as f64, d.ideal as f64 / d.bits as f64);
            cells.push(format!("{rx:.2e} / {ideal:.2e} ({})", d.lost_frames));
            curve.push((rx, ideal));
        }
        println!("| {constellation:?}, {sps} sps | {} | {} |", cells.join(" | "), loss_at_1e4(&points, &curve));
    }
}
