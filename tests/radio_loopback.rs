//! Loopback through the channel model: shaped BPSK and QPSK with a carrier
//! offset and its drift, a random phase, a fractional timing offset and a
//! 100 ppm clock offset, into `PskReceiver`; it must lock within
//! `LOCK_SYMBOLS` and then lose at most 0.5 dB against the ideal chain
//! (the same symbols and noise, perfectly synchronised) at BER 1e-4. Then
//! the same with the K=7 (171,133) rate-1/2 code Viterbi-decoded after the
//! receiver, against the same code over the ideal chain.

use gpufec::codes::BatchDecoder;
use gpufec::codes::channel::GaussianNoise;
use gpufec::codes::conv::{ConvCode, ConvEncoder, CpuViterbi, EncoderMode, FrameConfig, Trellis, ViterbiMode};
use gpufec::dsp::*;
use rand::{Rng, SeedableRng, rngs::SmallRng};

/// Symbols the receiver may take to lock (timing, frequency and phase).
const LOCK_SYMBOLS: usize = 3_000;
/// Symbols sent per case.
const SYMBOLS: usize = 400_000;
/// Eb/N0 at which the ideal chain's BER is about 1e-4 (8.4 dB for BPSK and Gray QPSK).
const IDEAL_EBN0_DB: f64 = 8.4;
/// What the receiver may lose against the ideal chain.
const LOSS_DB: f64 = 0.5;

fn random_bits(n: usize, seed: u64) -> Vec<u8> {
    let mut r = SmallRng::seed_from_u64(seed);
    (0..n).map(|_| r.random_range(0..2u8)).collect()
}

/// Es/N0 of `constellation` carrying bits of a code of rate `rate` at Eb/N0 `eb_n0_db`.
fn es_n0_db(constellation: Constellation, rate: f64, eb_n0_db: f64) -> f64 {
    eb_n0_db + 10.0 * (constellation.bits() as f64 * rate).log10()
}

/// Bit errors of hard decisions on `llrs` against `bits`.
fn errors(llrs: &[f32], bits: &[u8]) -> usize {
    llrs.iter().zip(bits).filter(|&(&l, &b)| (l < 0.0) as u8 != b).count()
}

/// The ideal chain's LLRs: the symbols plus complex noise of Es/N0
/// `es_n0_db` (the project's counter-based noise), demapped as
/// `SoftDemapper` does with the true amplitude and noise variance.
fn ideal_llrs(constellation: Constellation, bits: &[u8], es_n0_db: f64) -> Vec<f32> {
    let mut symbols = Vec::new();
    map_symbols(constellation, bits, &mut symbols).unwrap();
    let sigma = (0.5 * 10f64.powf(-es_n0_db / 10.0)).sqrt() as f32;
    let amplitude = if constellation == Constellation::Bpsk { 1.0 } else { std::f32::consts::FRAC_1_SQRT_2 };
    let scale = 2.0 * amplitude / (sigma * sigma);
    let mut z = vec![0f32; 2 * symbols.len()];
    GaussianNoise::new(99).fill(0, &mut z);
    symbols
        .iter()
        .zip(z.chunks_exact(2))
        .flat_map(|(s, z)| {
            let y = (s + Complex32::new(sigma * z[0], sigma * z[1])) * scale;
            if constellation == Constellation::Bpsk { vec![y.re] } else { vec![y.re, y.im] }
        })
        .collect()
}

/// Hard-decision errors of the ideal chain on `bits` at `eb_n0_db` (uncoded).
fn ideal_errors(constellation: Constellation, bits: &[u8], eb_n0_db: f64) -> usize {
    errors(&ideal_llrs(constellation, bits, es_n0_db(constellation, 1.0, eb_n0_db)), bits)
}

/// The LLRs `PskReceiver` gives for `bits` sent at `sps` through the
/// impaired channel at Es/N0 `es_n0_db`.
fn loopback(constellation: Constellation, bits: &[u8], sps: usize, es_n0_db: f64, seed: u64) -> Vec<f32> {
    let mut symbols = Vec::new();
    map_symbols(constellation, bits, &mut symbols).unwrap();
    symbols.extend(vec![Complex32::new(0.0, 0.0); 64]);
    let mut shaped = Vec::new();
    PulseShaper::new(sps, 0.35, 16).unwrap().process(&symbols, &mut shaped);
    let mut r = SmallRng::seed_from_u64(seed);
    let samples = shaped.len() as f64;
    // 1 % of the symbol rate, drifting to 0.8 % over the run.
    let cfo = 0.01 / sps as f64;
    let params = ChannelParams {
        es_n0_db: Some(es_n0_db),
        cfo,
        drift: -0.2 * cfo / samples,
        phase: r.random_range(-std::f64::consts::PI..std::f64::consts::PI),
        timing: r.random_range(0.0..1.0),
        clock_ppm: 100.0,
        seed,
    };
    let mut received = Vec::new();
    let mut channel = ChannelModel::new(params).unwrap();
    for chunk in shaped.chunks(8192) {
        channel.process(chunk, &mut received);
    }
    let mut rx = PskReceiver::new(ReceiverSettings { constellation, sps, ..Default::default() }).unwrap();
    let mut llrs = Vec::new();
    for chunk in received.chunks(4096) {
        rx.process(chunk, &mut llrs);
    }
    llrs
}

/// Rotates QPSK LLR pairs by `quarter` quarter turns (what the Costas loop's
/// ambiguity does); for BPSK, two quarter turns invert.
fn rotate(constellation: Constellation, llrs: &[f32], quarter: usize) -> Vec<f32> {
    match constellation {
        Constellation::Bpsk => llrs.iter().map(|&l| if quarter % 2 == 1 { -l } else { l }).collect(),
        Constellation::Qpsk => llrs
            .chunks_exact(2)
            .flat_map(|p| {
                let (mut i, mut q) = (p[0], p[1]);
                for _ in 0..quarter {
                    (i, q) = (-q, i);
                }
                [i, q]
            })
            .collect(),
    }
}

/// The receiver's delay (in symbols) and ambiguity, from the tail of the run.
fn align(constellation: Constellation, llrs: &[f32], bits: &[u8]) -> (usize, Vec<f32>) {
    let k = constellation.bits();
    let probe = 2_000 * k;
    let from = bits.len() / 2;
    let (lag, quarter) = (0..80)
        .flat_map(|lag| (0..4).map(move |q| (lag, q)))
        .min_by_key(|&(lag, q)| {
            let got = rotate(constellation, &llrs[(from + lag * k)..(from + lag * k + probe)], q);
            errors(&got, &bits[from..from + probe])
        })
        .unwrap();
    let aligned = rotate(constellation, &llrs[lag * k..], quarter);
    (lag, aligned)
}

/// The first symbol from which no window of 200 symbols has more than 5 % errors.
fn lock_symbol(llrs: &[f32], bits: &[u8], k: usize) -> usize {
    let window = 200 * k;
    let windows = llrs.len().min(bits.len()) / window;
    let last_bad = (0..windows).rev().find(|&w| errors(&llrs[w * window..(w + 1) * window], &bits[w * window..(w + 1) * window]) > window / 20);
    last_bad.map_or(0, |w| (w + 1) * 200)
}

fn check(constellation: Constellation, sps: usize, seed: u64) {
    let k = constellation.bits();
    let bits = random_bits(SYMBOLS * k, seed);
    let llrs = loopback(constellation, &bits, sps, es_n0_db(constellation, 1.0, IDEAL_EBN0_DB + LOSS_DB), seed);
    let (lag, aligned) = align(constellation, &llrs, &bits);
    let locked = lock_symbol(&aligned, &bits, k);
    let n = aligned.len().min(bits.len()) - LOCK_SYMBOLS * k;
    let got = errors(&aligned[LOCK_SYMBOLS * k..][..n], &bits[LOCK_SYMBOLS * k..][..n]);
    let ideal = ideal_errors(constellation, &bits[LOCK_SYMBOLS * k..][..n], IDEAL_EBN0_DB);
    eprintln!(
        "{constellation:?} at {sps} samples per symbol: delay {lag} symbols, locked after {locked} symbols; \
         {got} errors in {n} bits at {:.1} dB (BER {:.2e}), ideal chain {ideal} at {IDEAL_EBN0_DB} dB (BER {:.2e})",
        IDEAL_EBN0_DB + LOSS_DB,
        got as f64 / n as f64,
        ideal as f64 / n as f64
    );
    assert!(locked <= LOCK_SYMBOLS, "locked after {locked} symbols");
    assert!(got <= ideal, "{got} errors {LOSS_DB} dB above the ideal chain's {ideal}");
}

#[test]
fn bpsk_locks_and_stays_within_half_a_db_at_2_and_4_samples_per_symbol() {
    check(Constellation::Bpsk, 2, 1);
    check(Constellation::Bpsk, 4, 2);
}

#[test]
fn qpsk_locks_and_stays_within_half_a_db_at_2_and_4_samples_per_symbol() {
    check(Constellation::Qpsk, 2, 3);
    check(Constellation::Qpsk, 4, 4);
}

/// The receiver's loss at BER 1e-4: the difference of the dB at which the
/// (receiver, ideal) `curve` over `points` crosses 1e-4, each log BER
/// interpolated between the points around the crossing; "n/a" where a
/// curve does not cross between two points with errors.
fn loss_at_1e4(points: &[f64], curve: &[(f64, f64)]) -> String {
    let at_1e4 = |ber: &dyn Fn(usize) -> f64| {
        (0..points.len() - 1).find(|&i| ber(i) >= 1e-4 && ber(i + 1) < 1e-4 && ber(i + 1) > 0.0).map(|i| {
            let (a, b) = (ber(i).log10(), ber(i + 1).log10());
            points[i] + (a + 4.0) / (a - b) * (points[i + 1] - points[i])
        })
    };
    match (at_1e4(&|i| curve[i].0), at_1e4(&|i| curve[i].1)) {
        (Some(rx), Some(ideal)) => format!("{:.2} dB", rx - ideal),
        _ => "n/a".into(),
    }
}

/// The curve behind BENCHMARKS.md's loopback table (not run in CI):
/// `cargo test --release --test radio_loopback -- --ignored --nocapture`.
/// For each constellation and samples per symbol, hard-decision BER of the
/// receiver (after `LOCK_SYMBOLS`) and of the ideal chain on the same bits
/// over a few Eb/N0 points, and the receiver's loss at BER 1e-4 (both
/// curves interpolated in log BER against dB).
#[test]
#[ignore]
fn ber_curve_against_the_ideal_chain() {
    const CURVE_SYMBOLS: usize = 1_000_000;
    let points = [6.0, 7.0, 8.0, 9.0, 10.0];
    println!("| constellation | sps | lock (symbols) | {} | loss at 1e-4 |", points.map(|p| format!("{p} dB rx / ideal")).join(" | "));
    for (constellation, sps, seed) in [(Constellation::Bpsk, 2, 11), (Constellation::Bpsk, 4, 12), (Constellation::Qpsk, 2, 13), (Constellation::Qpsk, 4, 14)] {
        let k = constellation.bits();
        let bits = random_bits(CURVE_SYMBOLS * k, seed);
        let mut locks = Vec::new();
        let mut curve = Vec::new();
        for &eb in &points {
            let llrs = loopback(constellation, &bits, sps, es_n0_db(constellation, 1.0, eb), seed);
            let (_, aligned) = align(constellation, &llrs, &bits);
            locks.push(lock_symbol(&aligned, &bits, k));
            let n = aligned.len().min(bits.len()) - LOCK_SYMBOLS * k;
            let got = errors(&aligned[LOCK_SYMBOLS * k..][..n], &bits[LOCK_SYMBOLS * k..][..n]) as f64 / n as f64;
            let ideal = ideal_errors(constellation, &bits[LOCK_SYMBOLS * k..][..n], eb) as f64 / n as f64;
            curve.push((got, ideal));
        }
        let cells: Vec<String> = curve.iter().map(|(g, i)| format!("{g:.2e} / {i:.2e}")).collect();
        println!("| {constellation:?} | {sps} | {} | {} | {} |", locks.iter().max().unwrap(), cells.join(" | "), loss_at_1e4(&points, &curve));
    }
}

// The decoded chain: the K=7 (171,133) rate-1/2 code in terminated frames,
// its coded bits through the channel and `PskReceiver`, then the CPU
// Viterbi decoder, against the same code over the ideal chain.

/// Information bits per terminated frame of the decoded chain.
const FRAME: usize = 1_000;
/// Coded bits per frame (the six tail bits included).
const CODED_FRAME: usize = 2 * (FRAME + 6);
/// Eb/N0 at which the ideal coded chain's BER is a few 1e-4 (3.5e-4 at 3 dB).
const CODED_IDEAL_EBN0_DB: f64 = 3.0;
/// Symbols the receiver may take to lock at the decoded chain's SNR: QPSK's
/// frequency detector (the 4th power) is slow there, about 6000 symbols at
/// 3.5 dB Eb/N0 (3.5 dB Es/N0) and 12 000–35 000 at 2 dB; BPSK's takes a
/// few hundred.
const CODED_LOCK_SYMBOLS: usize = 20_000;

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
/// `cargo test --release --test radio_loopback decoded_ber_curve -- --ignored --nocapture`.
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
