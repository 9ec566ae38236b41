//! Loopback through the channel model: shaped BPSK and QPSK with a carrier
//! offset and its drift, a random phase, a fractional timing offset and a
//! 100 ppm clock offset, into `PskReceiver`; it must lock within
//! `LOCK_SYMBOLS` and then lose at most 0.5 dB against the ideal chain
//! (the same symbols and noise, perfectly synchronised) at BER 1e-4.

use gpufec::codes::channel::GaussianNoise;
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

fn es_n0_db(constellation: Constellation, eb_n0_db: f64) -> f64 {
    eb_n0_db + 10.0 * (constellation.bits() as f64).log10()
}

/// Bit errors of hard decisions on `llrs` against `bits`.
fn errors(llrs: &[f32], bits: &[u8]) -> usize {
    llrs.iter().zip(bits).filter(|&(&l, &b)| (l < 0.0) as u8 != b).count()
}

/// The ideal chain: the symbols plus complex noise of the same Es/N0 (the
/// project's counter-based noise), demapped with the true noise variance.
fn ideal_errors(constellation: Constellation, bits: &[u8], eb_n0_db: f64) -> usize {
    let mut symbols = Vec::new();
    map_symbols(constellation, bits, &mut symbols).unwrap();
    let sigma = (0.5 * 10f64.powf(-es_n0_db(constellation, eb_n0_db) / 10.0)).sqrt() as f32;
    let mut z = vec![0f32; 2 * symbols.len()];
    GaussianNoise::new(99).fill(0, &mut z);
    let llrs: Vec<f32> = symbols
        .iter()
        .zip(z.chunks_exact(2))
        .flat_map(|(s, z)| {
            let y = s + Complex32::new(sigma * z[0], sigma * z[1]);
            if constellation == Constellation::Bpsk { vec![y.re] } else { vec![y.re, y.im] }
        })
        .collect();
    errors(&llrs, bits)
}

/// The LLRs `PskReceiver` gives for `bits` sent at `sps` through the impaired channel.
fn loopback(constellation: Constellation, bits: &[u8], sps: usize, eb_n0_db: f64, seed: u64) -> Vec<f32> {
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
        es_n0_db: Some(es_n0_db(constellation, eb_n0_db)),
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
    let llrs = loopback(constellation, &bits, sps, IDEAL_EBN0_DB + LOSS_DB, seed);
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
            let llrs = loopback(constellation, &bits, sps, eb, seed);
            let (_, aligned) = align(constellation, &llrs, &bits);
            locks.push(lock_symbol(&aligned, &bits, k));
            let n = aligned.len().min(bits.len()) - LOCK_SYMBOLS * k;
            let got = errors(&aligned[LOCK_SYMBOLS * k..][..n], &bits[LOCK_SYMBOLS * k..][..n]) as f64 / n as f64;
            let ideal = ideal_errors(constellation, &bits[LOCK_SYMBOLS * k..][..n], eb) as f64 / n as f64;
            curve.push((got, ideal));
        }
        // The dB at which a curve crosses 1e-4, between the points around it.
        let at_1e4 = |ber: &dyn Fn(usize) -> f64| {
            (0..points.len() - 1).find(|&i| ber(i) >= 1e-4 && ber(i + 1) < 1e-4 && ber(i + 1) > 0.0).map(|i| {
                let (a, b) = (ber(i).log10(), ber(i + 1).log10());
                points[i] + (a + 4.0) / (a - b) * (points[i + 1] - points[i])
            })
        };
        let loss = match (at_1e4(&|i| curve[i].0), at_1e4(&|i| curve[i].1)) {
            (Some(rx), Some(ideal)) => format!("{:.2} dB", rx - ideal),
            _ => "n/a".into(),
        };
        let cells: Vec<String> = curve.iter().map(|(g, i)| format!("{g:.2e} / {i:.2e}")).collect();
        println!("| {constellation:?} | {sps} | {} | {} | {loss} |", locks.iter().max().unwrap(), cells.join(" | "));
    }
}
