//! What the loopback tests of the receive chain share (tests/radio_loopback.rs
//! and tests/conv_radio_loopback.rs): random bits, the impaired channel into
//! `PskReceiver`, the ideal chain's LLRs, the alignment of the receiver's
//! output on known bits, and the loss read off two curves.
#![allow(dead_code)]

use gpufec::codes::channel::GaussianNoise;
use gpufec::dsp::*;
use rand::{Rng, SeedableRng, rngs::SmallRng};

/// Random bits of `seed`.
pub fn random_bits(n: usize, seed: u64) -> Vec<u8> {
    let mut r = SmallRng::seed_from_u64(seed);
    (0..n).map(|_| r.random_range(0..2u8)).collect()
}

/// Es/N0 of `constellation` carrying bits of a code of rate `rate` at Eb/N0 `eb_n0_db`.
pub fn es_n0_db(constellation: Constellation, rate: f64, eb_n0_db: f64) -> f64 {
    eb_n0_db + 10.0 * (constellation.bits() as f64 * rate).log10()
}

/// Bit errors of hard decisions on `llrs` against `bits`.
pub fn errors(llrs: &[f32], bits: &[u8]) -> usize {
    llrs.iter().zip(bits).filter(|&(&l, &b)| (l < 0.0) as u8 != b).count()
}

/// The ideal chain's LLRs: the symbols plus complex noise of Es/N0
/// `es_n0_db` (the project's counter-based noise), demapped as
/// `SoftDemapper` does with the true amplitude and noise variance.
pub fn ideal_llrs(constellation: Constellation, bits: &[u8], es_n0_db: f64) -> Vec<f32> {
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

/// The LLRs `PskReceiver` gives for `bits` sent at `sps` through the
/// impaired channel at Es/N0 `es_n0_db`.
pub fn loopback(constellation: Constellation, bits: &[u8], sps: usize, es_n0_db: f64, seed: u64) -> Vec<f32> {
    let received = impaired(constellation, bits, sps, es_n0_db, seed);
    let mut rx = PskReceiver::new(ReceiverSettings { constellation, sps, ..Default::default() }).unwrap();
    let mut llrs = Vec::new();
    for chunk in received.chunks(4096) {
        rx.process(chunk, &mut llrs);
    }
    llrs
}

/// `bits` mapped, shaped at `sps` and sent through the impaired channel at
/// Es/N0 `es_n0_db`: what the receiver sees.
pub fn impaired(constellation: Constellation, bits: &[u8], sps: usize, es_n0_db: f64, seed: u64) -> Vec<Complex32> {
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
    received
}

/// Rotates QPSK LLR pairs by `quarter` quarter turns (what the Costas loop's
/// ambiguity does); for BPSK, two quarter turns invert.
pub fn rotate(constellation: Constellation, llrs: &[f32], quarter: usize) -> Vec<f32> {
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
pub fn align(constellation: Constellation, llrs: &[f32], bits: &[u8]) -> (usize, Vec<f32>) {
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

/// The receiver's loss at BER 1e-4: the difference of the dB at which the
/// (receiver, ideal) `curve` over `points` crosses 1e-4, each log BER
/// interpolated between the points around the crossing; "n/a" where a
/// curve does not cross between two points with errors.
pub fn loss_at_1e4(points: &[f64], curve: &[(f64, f64)]) -> String {
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

/// How the receiver pulled in on one run.
#[derive(Debug, Clone, Copy)]
pub struct Lock {
    /// The symbol at which the carrier loop's lock detector first said locked.
    pub first: Option<usize>,
    /// Whether it says locked at the end of the run.
    pub at_end: bool,
    /// Times the detector said locked and later dropped it.
    pub lost: usize,
    /// The first symbol from which no window of `LOCK_WINDOW` symbols has a
    /// bit error rate above `LOCK_BER` (the data is right from there on).
    pub data: usize,
}

/// Window and bit error rate of [`Lock::data`]: the raw BER at the lowest
/// SNR measured (−1 dB Es/N0 BPSK, 2 dB QPSK) is about 0.1, a loop that has
/// not pulled in or slipped gives 0.5 or more.
pub const LOCK_WINDOW: usize = 500;
pub const LOCK_BER: f64 = 0.25;

/// Symbols of a lock-time run: the channel's drift (0.2 % of the symbol
/// rate over the run) is then about 3·10⁻⁷ radian per symbol².
pub const LOCK_RUN: usize = 40_000;

/// `symbols` random symbols of `seed` through the impaired channel at `sps`
/// and Es/N0 `es_n0_db` into `PskReceiver`, and when it locked.
pub fn lock_run(constellation: Constellation, sps: usize, es_n0_db: f64, symbols: usize, seed: u64) -> Lock {
    let k = constellation.bits();
    let bits = random_bits(symbols * k, seed);
    let received = impaired(constellation, &bits, sps, es_n0_db, seed);
    let mut rx = PskReceiver::new(ReceiverSettings { constellation, sps, ..Default::default() }).unwrap();
    let (mut llrs, mut first, mut was, mut lost) = (Vec::new(), None, false, 0);
    for chunk in received.chunks(16 * sps) {
        rx.process(chunk, &mut llrs);
        let locked = rx.carrier().locked();
        if locked && first.is_none() {
            first = Some(llrs.len() / k);
        }
        lost += (was && !locked) as usize;
        was = locked;
    }
    let (_, aligned) = align(constellation, &llrs, &bits);
    let window = LOCK_WINDOW * k;
    let windows = aligned.len().min(bits.len()) / window;
    let bad = |w: usize| errors(&aligned[w * window..(w + 1) * window], &bits[w * window..(w + 1) * window]) as f64 > LOCK_BER * window as f64;
    let data = (0..windows).rev().find(|&w| bad(w)).map_or(0, |w| (w + 1) * LOCK_WINDOW);
    Lock { first, at_end: was, lost, data }
}
