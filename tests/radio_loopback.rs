//! Loopback through the channel model: shaped BPSK and QPSK with a carrier
//! offset and its drift, a random phase, a fractional timing offset and a
//! 100 ppm clock offset, into `PskReceiver`; it must lock within
//! `LOCK_SYMBOLS` and then lose at most 0.5 dB against the ideal chain
//! (the same symbols and noise, perfectly synchronised) at BER 1e-4. The
//! same with a convolutional code decoded after the receiver:
//! tests/conv_radio_loopback.rs.

use gpufec::dsp::*;

mod radio_chain;
use radio_chain::*;

/// Symbols the receiver may take to lock (timing, frequency and phase).
const LOCK_SYMBOLS: usize = 3_000;
/// Symbols sent per case.
const SYMBOLS: usize = 400_000;
/// Eb/N0 at which the ideal chain's BER is about 1e-4 (8.4 dB for BPSK and Gray QPSK).
const IDEAL_EBN0_DB: f64 = 8.4;
/// What the receiver may lose against the ideal chain.
const LOSS_DB: f64 = 0.5;

/// Hard-decision errors of the ideal chain on `bits` at `eb_n0_db` (uncoded).
fn ideal_errors(constellation: Constellation, bits: &[u8], eb_n0_db: f64) -> usize {
    errors(&ideal_llrs(constellation, bits, es_n0_db(constellation, 1.0, eb_n0_db)), bits)
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
