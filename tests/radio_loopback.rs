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
/// Symbols within which the receiver locks at the low SNR of a rate-1/2
/// code (Eb/N0 2.5 dB and above: Es/N0 2.5 dB QPSK, −0.5 dB BPSK), the
/// lock detector saying so and the data right from there on: one
/// acquisition block (2048 QPSK, 512 BPSK symbols) and the lock detector's
/// averaging (about 700 symbols).
const QPSK_LOW_SNR_LOCK: usize = 5_000;
const BPSK_LOW_SNR_LOCK: usize = 1_500;
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

/// At Eb/N0 2.5 dB (rate 1/2), over four seeds per case, the receiver locks
/// within the bound (the detector says so and the data is right from there
/// on, no slip) and is locked at the end of the run.
#[test]
fn bpsk_and_qpsk_lock_within_a_bound_at_low_snr() {
    for (constellation, bound) in [(Constellation::Bpsk, BPSK_LOW_SNR_LOCK), (Constellation::Qpsk, QPSK_LOW_SNR_LOCK)] {
        for sps in [2, 4] {
            for seed in 100..104 {
                let lock = lock_run(constellation, sps, es_n0_db(constellation, 0.5, 2.5), LOCK_RUN, seed);
                eprintln!("{constellation:?} at {sps} samples per symbol, seed {seed}: {lock:?}");
                assert!(lock.first.is_some_and(|s| s <= bound) && lock.data <= bound, "{lock:?} beyond {bound} symbols");
                assert!(lock.at_end, "{lock:?}: not locked at the end");
            }
        }
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

/// Lock times behind BENCHMARKS.md's table (not run in CI):
/// `cargo test --release --test radio_loopback lock_time -- --ignored --nocapture`.
#[test]
#[ignore]
fn lock_time_table() {
    const SEEDS: u64 = 20;
    println!("| case | Eb/N0 (rate 1/2) | detector's first lock: median / max | data right from: median / max | never locked | detector dropped lock (runs) |");
    for (constellation, sps) in [(Constellation::Bpsk, 2), (Constellation::Bpsk, 4), (Constellation::Qpsk, 2), (Constellation::Qpsk, 4)] {
        for eb in [2.0, 2.5, 3.0, 3.5, 4.0] {
            let runs: Vec<Lock> = (0..SEEDS).map(|s| lock_run(constellation, sps, es_n0_db(constellation, 0.5, eb), LOCK_RUN, 100 + s)).collect();
            let mut det: Vec<usize> = runs.iter().map(|r| r.first.unwrap_or(LOCK_RUN)).collect();
            let mut data: Vec<usize> = runs.iter().map(|r| r.data).collect();
            det.sort();
            data.sort();
            let never = runs.iter().filter(|r| r.first.is_none()).count();
            let lost: usize = runs.iter().map(|r| r.lost).sum();
            let dropped = runs.iter().filter(|r| r.lost > 0).count();
            println!(
                "| {constellation:?}, {sps} sps | {eb} dB | {} / {} | {} / {} | {never} | {lost} ({dropped}) |",
                det[det.len() / 2],
                det[det.len() - 1],
                data[data.len() / 2],
                data[data.len() - 1]
            );
        }
    }
}


