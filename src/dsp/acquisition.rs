//! Coarse carrier frequency acquisition: the spectrum of the symbols' M-th
//! power over a block, whose peak sits at M times the carrier offset.

use num_complex::Complex32;
use rustfft::{Fft, FftPlanner};
use std::f32::consts::PI;
use std::sync::Arc;

/// Peak-to-mean power of the M-th power's spectrum (zero-padded to twice the
/// block) at or above which the peak counts as the carrier: noise alone
/// reaches it in about one block of 10^4 (e^−16 a bin, ~1000 independent bins).
const DETECTION: f32 = 16.0;

/// Estimates the carrier frequency of symbols (one sample per symbol,
/// before any derotation) from blocks of `block`: raising the phase to the
/// M-th power (M the constellation's order) removes the modulation and
/// leaves a tone at M·ω, which the FFT of the block finds with the whole
/// block's coherent gain. A frequency-locked loop on consecutive symbols
/// instead multiplies two noisy M-th powers each symbol and only averages
/// the angle, which at 2 dB Es/N0 (QPSK) takes tens of thousands of symbols.
pub(super) struct FrequencyAcquisition {
    order: u32,
    /// The largest |ω| to search, radians per symbol.
    max_frequency: f32,
    block: usize,
    powers: Vec<Complex32>,
    spectrum: Vec<Complex32>,
    scratch: Vec<Complex32>,
    fft: Arc<dyn Fft<f32>>,
}

impl FrequencyAcquisition {
    /// An estimator for constellation order `order` over blocks of `block`
    /// symbols, searching frequencies within ±`max_frequency` (at most π/order).
    pub(super) fn new(order: u32, block: usize, max_frequency: f32) -> Self {
        let fft = FftPlanner::new().plan_fft_forward(2 * block);
        let scratch = vec![Complex32::new(0.0, 0.0); fft.get_inplace_scratch_len()];
        Self { order, max_frequency, block, powers: Vec::with_capacity(block), spectrum: vec![Complex32::new(0.0, 0.0); 2 * block], scratch, fft }
    }

    /// Drops the block collected so far.
    pub(super) fn restart(&mut self) {
        self.powers.clear();
    }

    /// Takes symbol `y`; when it completes a block whose spectrum has a
    /// clear peak, the carrier frequency in radians per symbol.
    pub(super) fn push(&mut self, y: Complex32) -> Option<f32> {
        // |y|·e^{jMθ}: the M-th power of the phase with the amplitude
        // itself, not its M-th power, whose outliers (noise peaks, the AGC's
        // start) would bury the tone at low SNR.
        let magnitude = y.norm();
        self.powers.push(if magnitude > 0.0 { y.powu(self.order) / magnitude.powi(self.order as i32 - 1) } else { y });
        if self.powers.len() < self.block {
            return None;
        }
        let n = self.spectrum.len();
        self.spectrum[..self.block].copy_from_slice(&self.powers);
        self.spectrum[self.block..].fill(Complex32::new(0.0, 0.0));
        self.powers.clear();
        self.fft.process_with_scratch(&mut self.spectrum, &mut self.scratch);
        let power = |i: isize| self.spectrum[i.rem_euclid(n as isize) as usize].norm_sqr();
        let mean = self.spectrum.iter().map(|x| x.norm_sqr()).sum::<f32>() / n as f32;
        let reach = (self.max_frequency * self.order as f32 / (2.0 * PI) * n as f32) as isize;
        let peak = (-reach..=reach).max_by(|&a, &b| power(a).total_cmp(&power(b)))?;
        if power(peak) < DETECTION * mean {
            return None;
        }
        // The peak between bins, from a parabola through the magnitudes.
        let (a, b, c) = (power(peak - 1).sqrt(), power(peak).sqrt(), power(peak + 1).sqrt());
        let curvature = a - 2.0 * b + c;
        let offset = if curvature < 0.0 { (0.5 * (a - c) / curvature).clamp(-0.5, 0.5) } else { 0.0 };
        Some(2.0 * PI * (peak as f32 + offset) / n as f32 / self.order as f32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes::channel::GaussianNoise;

    /// `n` random QPSK symbols rotating by `frequency` radians per symbol at
    /// Es/N0 `es_n0_db` (noise alone when `signal` is false).
    fn qpsk(n: usize, frequency: f32, es_n0_db: f32, signal: bool) -> Vec<Complex32> {
        let (mut data, mut z) = (vec![0f32; 2 * n], vec![0f32; 2 * n]);
        GaussianNoise::new(3).fill(0, &mut data);
        GaussianNoise::new(4).fill(0, &mut z);
        let sigma = (0.5 * 10f32.powf(-es_n0_db / 10.0)).sqrt();
        (0..n)
            .map(|k| {
                let point = Complex32::new(data[2 * k].signum(), data[2 * k + 1].signum()) * std::f32::consts::FRAC_1_SQRT_2;
                let s = if signal { point * Complex32::from_polar(1.0, frequency * k as f32 + 0.3) } else { Complex32::new(0.0, 0.0) };
                s + Complex32::new(sigma * z[2 * k], sigma * z[2 * k + 1])
            })
            .collect()
    }

    #[test]
    fn finds_a_qpsk_carrier_at_2_db_in_one_block_and_nothing_in_noise() {
        for frequency in [0.0628, -0.03, 0.3] {
            let mut acquisition = FrequencyAcquisition::new(4, 2048, PI / 8.0);
            let estimates: Vec<f32> = qpsk(4 * 2048, frequency, 2.0, true).into_iter().filter_map(|y| acquisition.push(y)).collect();
            assert_eq!(estimates.len(), 4, "{frequency}: {estimates:?}");
            assert!(estimates.iter().all(|e| (e - frequency).abs() < 0.001), "{frequency}: {estimates:?}");
        }
        let mut acquisition = FrequencyAcquisition::new(4, 2048, PI / 8.0);
        assert!(qpsk(50 * 2048, 0.0, 2.0, false).into_iter().all(|y| acquisition.push(y).is_none()), "a carrier in noise alone");
        // Beyond the search range: not found (the 4th power would alias it).
        let mut acquisition = FrequencyAcquisition::new(4, 2048, PI / 8.0);
        assert!(qpsk(2048, 0.6, 10.0, true).into_iter().all(|y| acquisition.push(y).is_none()));
    }
}
