//! Carrier recovery at one sample per symbol: a frequency-locked loop for the
//! pull-in and a Costas loop for the phase, BPSK or QPSK.

use super::acquisition::FrequencyAcquisition;
use super::{Constellation, LoopGains, check_range};
use crate::codes::error::CodeResult;
use num_complex::Complex32;
use std::f32::consts::PI;

/// Frequency the loops may reach, radians per symbol (6.25 % of the symbol
/// rate): half the span a QPSK frequency detector sees without ambiguity.
const MAX_FREQUENCY: f32 = PI / 8.0;

/// Averaging rate of the lock detector's moments, per symbol: about 1000
/// symbols, so that at 0 dB Es/N0 its estimates vary by a few per cent.
const LOCK_RATE: f32 = 1.0 / 1024.0;
/// Normalised coherence at or above which the loops count as locked: a
/// locked loop shows E cos(M·φ) of its phase jitter, above 0.8 down to
/// −1 dB Es/N0 for BPSK and 2 dB for QPSK; one that has not pulled in
/// averages a rotating phasor, near 0.
const LOCK_ON: f32 = 0.5;
/// Normalised coherence below which a locked loop counts as lost (hysteresis).
const LOCK_OFF: f32 = 0.3;
/// Mean of ±cos(M·θ) (θ each symbol's phase, a bounded statistic) that lock
/// also needs: on noise alone the M2M4 signal power is a small noisy
/// difference and the coherence over it can pass `LOCK_ON`, while this mean
/// stays within ±0.016 (one σ over the window); a locked loop shows 0.3 for
/// BPSK at −1 dB Es/N0 and 0.12 for QPSK at 2 dB. Half of it keeps a lock.
const MIN_PHASE_COHERENCE: f32 = 0.06;
/// Signal power over total, from the moments, below which the detector sees
/// no signal (about −10 dB Es/N0).
const MIN_SIGNAL: f32 = 0.1;
/// How much narrower the Costas loop is once locked than while pulling in:
/// at half the bandwidth QPSK slipped a quarter turn in 10^6 symbols at
/// 2.5 dB Es/N0 (tests/conv_radio_loopback.rs's curve); at a quarter the
/// lock detector dropped the lock more often just after locking.
const TRACKING_NARROWING: f64 = 3.0;
/// Symbols of a frequency acquisition block, by constellation: the block's
/// coherent gain must lift the M-th power's tone clear of its noise at the
/// lowest SNR served (2 dB Es/N0 for QPSK, −1 dB for BPSK, where QPSK's 4th
/// power keeps far less of its power in the tone than BPSK's square).
const BPSK_BLOCK: usize = 512;
const QPSK_BLOCK: usize = 2048;
/// How far (radians per symbol) an acquisition estimate must be from the
/// loops' frequency to replace it: well inside the Costas loop's lock-in
/// range, well outside its frequency jitter.
const RETUNE: f32 = 0.01;

/// Removes the carrier's frequency and phase offsets from symbols (one
/// sample per symbol, after timing recovery, at about unit amplitude).
///
/// A frequency acquisition and two detectors drive one numerically
/// controlled oscillator:
/// - acquisition: while not locked, the spectrum of |r|·e^{jMθ} over a block
///   of symbols (512 for BPSK, 2048 for QPSK) puts a peak at M times the
///   carrier offset; a clear peak sets the frequency where the loops are
///   more than 0.01 radian per symbol from it. It reaches 2 dB Es/N0 for
///   QPSK in one block, where the FLL below needs tens of thousands of
///   symbols;
/// - the FLL, until the first acquisition: the phase step between consecutive symbols raised to the
///   constellation's order M (2 for BPSK, 4 for QPSK), which removes the
///   modulation: e_f = arg(r_k^M · conj(r_{k−1}^M)) / M, radians per symbol,
///   unambiguous for offsets within ±π/M per symbol; it moves the
///   frequency by `fll_gain`·e_f each symbol (a first-order loop);
/// - the Costas loop: e_p = Im(r_k · conj(d_k)) with d_k the nearest
///   constellation point, a second-order loop ([`LoopGains`] with detector
///   gain 1 at unit amplitude) on the phase.
///
/// A lock detector switches between pulling in and tracking. Its
/// coherence is the mean of ±Re(r^M) (+ for BPSK, − for QPSK, whose points
/// raised to the 4th are negative) over S^(M/2), S the signal power that the
/// M2M4 estimator (S = √(2·M2² − M4), M2 and M4 the mean |r|² and |r|⁴)
/// finds whatever the phase does: 1 for a perfect lock at any SNR, near 0
/// while the phase rotates. Once it passes a threshold the FLL stops (if
/// the acquisition has not already stopped it: its detector is noisy at low
/// SNR and would walk the frequency into cycle slips) and the Costas loop
/// narrows to a third of its bandwidth; if it falls
/// below a lower one, the Costas loop goes back to pulling in (and the
/// acquisition runs again). Lock also needs the mean of ±cos(M·θ) above a
/// floor that noise alone does not reach. The first acquisition restarts
/// the detector's averages.
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
    /// Costas gains while pulling in and once locked.
    pull_in: LoopGains,
    tracking: LoopGains,
    fll_gain: f32,
    /// The lock detector's running sums of ±Re(r^M), |r|², |r|⁴, and of
    /// their weights (the sums over it are the means).
    coherent: f32,
    m2: f32,
    m4: f32,
    /// Running sum of ±cos(M·θ).
    phase_coherent: f32,
    weight: f32,
    locked: bool,
    phase: f32,
    frequency: f32,
    prev_power: Complex32,
    acquisition: FrequencyAcquisition,
    /// Whether an acquisition block has given the frequency: from then on
    /// the FLL stays off.
    acquired: bool,
}

impl CarrierRecovery {
    /// Loops for `constellation` with Costas noise bandwidth `bandwidth`
    /// (Bn·T per symbol, at most 0.1), damping `damping`, and FLL gain
    /// `fll_gain` (0..=0.5; 0 turns the FLL off; it runs only until the
    /// first acquisition block).
    pub fn new(constellation: Constellation, bandwidth: f64, damping: f64, fll_gain: f64) -> CodeResult<Self> {
        check_range("FLL gain", fll_gain, 0.0..=0.5)?;
        Ok(Self {
            constellation,
            pull_in: LoopGains::new(bandwidth, damping, 1.0)?,
            tracking: LoopGains::new(bandwidth / TRACKING_NARROWING, damping, 1.0)?,
            fll_gain: fll_gain as f32,
            coherent: 0.0,
            m2: 0.0,
            m4: 0.0,
            phase_coherent: 0.0,
            weight: 0.0,
            locked: false,
            phase: 0.0,
            frequency: 0.0,
            prev_power: Complex32::new(0.0, 0.0),
            acquisition: FrequencyAcquisition::new(
                constellation.order(),
                if constellation == Constellation::Bpsk { BPSK_BLOCK } else { QPSK_BLOCK },
                MAX_FREQUENCY,
            ),
            acquired: false,
        })
    }

    /// The frequency the loops follow now, radians per symbol.
    pub fn frequency(&self) -> f32 {
        self.frequency
    }

    /// The lock detector's coherence: near 1 when locked, near 0 while the
    /// phase rotates; 0 until it has seen about 700 symbols.
    pub fn coherence(&self) -> f32 {
        if self.weight < 0.5 {
            return 0.0;
        }
        let (m2, m4) = (self.m2 / self.weight, self.m4 / self.weight);
        let signal = (2.0 * m2 * m2 - m4).max(0.0).sqrt();
        if signal < MIN_SIGNAL * m2 {
            // No signal to lock to, or moments of a level that has not settled.
            return 0.0;
        }
        let reference = if self.constellation == Constellation::Bpsk { signal } else { signal * signal };
        self.coherent / self.weight / reference.max(f32::MIN_POSITIVE)
    }

    /// Whether the lock detector says the loops are locked (tracking).
    pub fn locked(&self) -> bool {
        self.locked
    }

    fn restart_lock_detector(&mut self) {
        (self.coherent, self.m2, self.m4, self.phase_coherent, self.weight) = (0.0, 0.0, 0.0, 0.0, 0.0);
    }

    /// Derotates `symbols` in place.
    pub fn process(&mut self, symbols: &mut [Complex32]) {
        let order = self.constellation.order();
        let sign = if self.constellation == Constellation::Bpsk { 1.0 } else { -1.0 };
        for y in symbols {
            if self.locked {
                self.acquisition.restart();
            } else if let Some(frequency) = self.acquisition.push(*y) {
                if (frequency - self.frequency).abs() > RETUNE {
                    self.frequency = frequency;
                }
                if !self.acquired {
                    // The detector's moments hold the start-up (the AGC's
                    // and timing loop's transients), whose outliers in |r|⁴
                    // would keep the M2M4 signal estimate near zero for
                    // thousands of symbols.
                    self.restart_lock_detector();
                    self.acquired = true;
                }
            }
            let r = *y * Complex32::from_polar(1.0, -self.phase);
            let power = r.powu(order);
            let fll_error = (power * self.prev_power.conj()).arg() / order as f32;
            self.prev_power = power;
            let r2 = r.norm_sqr();
            self.coherent += LOCK_RATE * (sign * power.re - self.coherent);
            self.m2 += LOCK_RATE * (r2 - self.m2);
            self.m4 += LOCK_RATE * (r2 * r2 - self.m4);
            let cos = if r2 > 0.0 { sign * power.re / power.norm() } else { 0.0 };
            self.phase_coherent += LOCK_RATE * (cos - self.phase_coherent);
            self.weight += LOCK_RATE * (1.0 - self.weight);
            let (coherence, phase) = (self.coherence(), self.phase_coherent / self.weight);
            self.locked = if self.locked {
                coherence >= LOCK_OFF && phase >= 0.5 * MIN_PHASE_COHERENCE
            } else {
                coherence >= LOCK_ON && phase >= MIN_PHASE_COHERENCE
            };
            let gains = if self.locked { self.tracking } else { self.pull_in };
            let fll_gain = if self.locked || self.acquired { 0.0 } else { self.fll_gain };
            let phase_error = match self.constellation {
                Constellation::Bpsk => r.im * r.re.signum(),
                Constellation::Qpsk => (r.im * r.re.signum() - r.re * r.im.signum()) * std::f32::consts::FRAC_1_SQRT_2,
            };
            self.frequency = (self.frequency + fll_gain * fll_error + gains.integral * phase_error)
                .clamp(-MAX_FREQUENCY, MAX_FREQUENCY);
            self.phase = (self.phase + self.frequency + gains.proportional * phase_error).rem_euclid(2.0 * PI);
            *y = r;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes::channel::GaussianNoise;

    /// The signs of `n` BPSK symbols.
    fn signs(n: usize) -> Vec<f32> {
        let mut x = vec![0f32; n];
        GaussianNoise::new(1).fill(0, &mut x);
        x.iter().map(|x| x.signum()).collect()
    }

    /// The [`signs`] rotating by `frequency` radians per symbol, plus
    /// complex noise of σ = `sigma` per dimension; noise alone when `signal`
    /// is false.
    fn symbols(n: usize, frequency: f32, sigma: f32, signal: bool) -> Vec<Complex32> {
        let (bits, mut z) = (signs(n), vec![0f32; 2 * n]);
        GaussianNoise::new(2).fill(0, &mut z);
        (0..n)
            .map(|k| {
                let s = if signal { Complex32::from_polar(bits[k], frequency * k as f32 + 0.7) } else { Complex32::new(0.0, 0.0) };
                s + Complex32::new(sigma * z[2 * k], sigma * z[2 * k + 1])
            })
            .collect()
    }

    #[test]
    fn the_lock_detector_locks_on_a_weak_carrier_and_never_on_noise() {
        // 0 dB Es/N0, an offset of 1 % of the symbol rate.
        let sigma = std::f32::consts::FRAC_1_SQRT_2;
        let mut cr = CarrierRecovery::new(Constellation::Bpsk, 0.01, 0.707, 0.001).unwrap();
        let mut y = symbols(20_000, 0.0628, sigma, true);
        cr.process(&mut y[..500]);
        assert!(!cr.locked(), "locked before the detector has seen a window");
        cr.process(&mut y[500..]);
        assert!(cr.locked() && cr.coherence() > 0.7, "coherence {}", cr.coherence());
        assert!((cr.frequency() - 0.0628).abs() < 0.005, "frequency {}", cr.frequency());
        let errors = y[10_000..].iter().zip(&signs(20_000)[10_000..]).filter(|(y, b)| y.re.signum() != **b).count();
        // 8 % is BPSK's BER at 0 dB; a half-turn ambiguity reads as 92 %.
        assert!(errors.min(10_000 - errors) < 1_000, "{errors} errors in 10 000 symbols");

        let mut cr = CarrierRecovery::new(Constellation::Qpsk, 0.01, 0.707, 0.001).unwrap();
        let mut noise = symbols(40_000, 0.0, 1.0, false);
        for chunk in noise.chunks_mut(100) {
            cr.process(chunk);
            assert!(!cr.locked(), "locked on noise (coherence {})", cr.coherence());
        }
    }

    #[test]
    fn qpsk_locks_within_5000_symbols_at_2_db_with_a_1_percent_offset() {
        // Es/N0 2 dB: σ² = 10^−0.2 / 2 per dimension.
        let sigma = (0.5 * 10f32.powf(-0.2)).sqrt();
        let (bits, mut z) = (signs(20_000), vec![0f32; 40_000]);
        GaussianNoise::new(5).fill(0, &mut z);
        let sent: Vec<Complex32> =
            (0..10_000).map(|k| Complex32::new(bits[2 * k], bits[2 * k + 1]) * std::f32::consts::FRAC_1_SQRT_2).collect();
        let mut y: Vec<Complex32> = sent
            .iter()
            .enumerate()
            .map(|(k, s)| s * Complex32::from_polar(1.0, 0.0628 * k as f32 - 2.0) + Complex32::new(sigma * z[2 * k], sigma * z[2 * k + 1]))
            .collect();
        let mut cr = CarrierRecovery::new(Constellation::Qpsk, 0.01, 0.707, 0.001).unwrap();
        cr.process(&mut y[..5_000]);
        assert!(cr.locked(), "not locked after 5000 symbols (coherence {}, frequency {})", cr.coherence(), cr.frequency());
        cr.process(&mut y[5_000..]);
        assert!(cr.locked() && (cr.frequency() - 0.0628).abs() < 0.003, "frequency {}", cr.frequency());
        // Symbol errors after lock, under the best of the four rotations: the
        // ideal rate at 2 dB is about 20 %; a slip would leave far more.
        let best = (0..4)
            .map(|q| {
                let turn = Complex32::new(0.0, 1.0).powu(q);
                y[5_000..].iter().zip(&sent[5_000..]).filter(|(y, s)| {
                    let d = *y * turn;
                    d.re.signum() != s.re.signum() || d.im.signum() != s.im.signum()
                }).count()
            })
            .min()
            .unwrap();
        assert!(best < 1_250, "{best} symbol errors in 5000");
    }
}
