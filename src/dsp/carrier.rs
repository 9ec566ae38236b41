//! Carrier recovery at one sample per symbol: a frequency-locked loop for the
//! pull-in and a Costas loop for the phase, BPSK or QPSK.

use super::{Constellation, LoopGains, check_range};
use crate::codes::error::CodeResult;
use num_complex::Complex32;
use std::f32::consts::PI;

/// Frequency the loops may reach, radians per symbol (6.25 % of the symbol
/// rate): half the span a QPSK frequency detector sees without ambiguity.
const MAX_FREQUENCY: f32 = PI / 8.0;

/// Removes the carrier's frequency and phase offsets from symbols (one
/// sample per symbol, after timing recovery, at about unit amplitude).
///
/// Two detectors drive one numerically controlled oscillator:
/// - the FLL: the phase step between consecutive symbols raised to the
///   constellation's order M (2 for BPSK, 4 for QPSK), which removes the
///   modulation: e_f = arg(r_k^M · conj(r_{k−1}^M)) / M, radians per symbol,
///   unambiguous for offsets within ±π/M per symbol; it moves the
///   frequency by `fll_gain`·e_f each symbol (a first-order loop);
/// - the Costas loop: e_p = Im(r_k · conj(d_k)) with d_k the nearest
///   constellation point, a second-order loop ([`LoopGains`] with detector
///   gain 1 at unit amplitude) on the phase.
///
/// What remains is the constellation's ambiguity (a multiple of 2π/M), which
/// differential coding or a sync marker resolves.
///
/// ```
/// use gpufec::dsp::{CarrierRecovery, Complex32, Constellation};
/// let mut cr = CarrierRecovery::new(Constellation::Bpsk, 0.02, 0.707, 0.02).unwrap();
/// let mut y: Vec<Complex32> = (0..2000)
///     .map(|k| Complex32::from_polar(if k % 3 == 0 { 1.0 } else { -1.0 }, 0.05 * k as f32 + 1.0))
///     .collect();
/// cr.process(&mut y);
/// assert!(y[1900..].iter().all(|s| s.im.abs() < 0.05 && s.re.abs() > 0.95));
/// ```
pub struct CarrierRecovery {
    constellation: Constellation,
    gains: LoopGains,
    fll_gain: f32,
    phase: f32,
    frequency: f32,
    prev_power: Complex32,
}

impl CarrierRecovery {
    /// Loops for `constellation` with Costas noise bandwidth `bandwidth`
    /// (Bn·T per symbol, at most 0.1), damping `damping`, and FLL gain
    /// `fll_gain` (0..=0.5; 0 turns the FLL off).
    pub fn new(constellation: Constellation, bandwidth: f64, damping: f64, fll_gain: f64) -> CodeResult<Self> {
        check_range("FLL gain", fll_gain, 0.0..=0.5)?;
        Ok(Self {
            constellation,
            gains: LoopGains::new(bandwidth, damping, 1.0)?,
            fll_gain: fll_gain as f32,
            phase: 0.0,
            frequency: 0.0,
            prev_power: Complex32::new(0.0, 0.0),
        })
    }

    /// The frequency the loops follow now, radians per symbol.
    pub fn frequency(&self) -> f32 {
        self.frequency
    }

    /// Derotates `symbols` in place.
    pub fn process(&mut self, symbols: &mut [Complex32]) {
        let order = self.constellation.order();
        for y in symbols {
            let r = *y * Complex32::from_polar(1.0, -self.phase);
            let power = r.powu(order);
            let fll_error = (power * self.prev_power.conj()).arg() / order as f32;
            self.prev_power = power;
            let phase_error = match self.constellation {
                Constellation::Bpsk => r.im * r.re.signum(),
                Constellation::Qpsk => (r.im * r.re.signum() - r.re * r.im.signum()) * std::f32::consts::FRAC_1_SQRT_2,
            };
            self.frequency = (self.frequency + self.fll_gain * fll_error + self.gains.integral * phase_error)
                .clamp(-MAX_FREQUENCY, MAX_FREQUENCY);
            self.phase = (self.phase + self.frequency + self.gains.proportional * phase_error).rem_euclid(2.0 * PI);
            *y = r;
        }
    }
}
