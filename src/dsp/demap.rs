//! Soft demapping with LLRs scaled by a running estimate of the symbols'
//! amplitude and noise variance.

use super::{Constellation, check_range};
use crate::codes::error::CodeResult;
use num_complex::Complex32;

/// Noise variance relative to the squared amplitude below which the
/// estimate is not trusted (60 dB SNR): it keeps LLRs finite.
const MIN_RELATIVE_VARIANCE: f32 = 1e-6;

/// Symbols (carrier and timing recovered) to LLRs, ln P(b=0)/P(b=1): for
/// each real dimension carrying a bit, LLR = 2·A·y/σ², with A the mean
/// amplitude of a dimension and σ² the noise variance per dimension, both
/// averaged over about 1/`rate` symbols.
///
/// BPSK takes A from |Re y| and σ² from (Im y)², which holds only noise once
/// the phase is locked, so the estimate has no decision bias at low SNR;
/// [`SoftDemapper::real`] is BPSK on real values (Im y = 0, as a 2-FSK
/// discriminator gives), σ² from the decisions: mean (|y| − A)². QPSK takes
/// both from the decisions on I and Q.
///
/// ```
/// use gpufec::dsp::{Complex32, Constellation, SoftDemapper};
/// let mut d = SoftDemapper::new(Constellation::Bpsk, 0.01).unwrap();
/// let y: Vec<Complex32> = (0..1000).map(|k| Complex32::new(if k % 2 == 0 { 1.0 } else { -1.0 }, if k % 3 == 0 { 0.3 } else { -0.3 })).collect();
/// let mut llrs = Vec::new();
/// d.process(&y, &mut llrs);
/// // σ² = 0.09: LLR = 2/0.09 ≈ 22 for bit 0.
/// assert!((llrs[998] - 22.2).abs() < 0.5 && llrs[999] < -20.0);
/// ```
pub struct SoftDemapper {
    constellation: Constellation,
    /// BPSK's noise from its decisions, not from its quadrature axis.
    real: bool,
    rate: f32,
    amplitude: f32,
    variance: f32,
}

impl SoftDemapper {
    /// A demapper for `constellation` averaging with rate `rate` (1e-6..=1).
    pub fn new(constellation: Constellation, rate: f64) -> CodeResult<Self> {
        check_range("noise estimate rate", rate, 1e-6..=1.0)?;
        Ok(Self { constellation, real: false, rate: rate as f32, amplitude: 1.0, variance: 1.0 })
    }

    /// A BPSK demapper of real values (the imaginary parts are ignored).
    pub fn real(rate: f64) -> CodeResult<Self> {
        Ok(Self { real: true, ..Self::new(Constellation::Bpsk, rate)? })
    }

    /// The noise variance per dimension over the squared amplitude: 1 / (2·Es/N0) for BPSK.
    pub fn relative_variance(&self) -> f32 {
        self.variance / (self.amplitude * self.amplitude)
    }

    /// Appends the LLRs of `symbols` to `out` (one per symbol for BPSK, I then Q for QPSK).
    pub fn process(&mut self, symbols: &[Complex32], out: &mut Vec<f32>) {
        let rate = self.rate;
        for y in symbols {
            match self.constellation {
                Constellation::Bpsk => {
                    self.amplitude += rate * (y.re.abs() - self.amplitude);
                    let noise = if self.real { y.re.abs() - self.amplitude } else { y.im };
                    self.variance += rate * (noise * noise - self.variance);
                }
                Constellation::Qpsk => {
                    self.amplitude += rate * (0.5 * (y.re.abs() + y.im.abs()) - self.amplitude);
                    let (di, dq) = (y.re.abs() - self.amplitude, y.im.abs() - self.amplitude);
                    self.variance += rate * (0.5 * (di * di + dq * dq) - self.variance);
                }
            }
            let variance = self.variance.max(MIN_RELATIVE_VARIANCE * self.amplitude * self.amplitude);
            let scale = if variance > 0.0 { 2.0 * self.amplitude / variance } else { 0.0 };
            out.push(scale * y.re);
            if self.constellation == Constellation::Qpsk {
                out.push(scale * y.im);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes::channel::GaussianNoise;

    #[test]
    fn the_noise_estimate_matches_the_channel() {
        for constellation in [Constellation::Bpsk, Constellation::Qpsk] {
            let sigma = 0.4f32;
            let n = 20_000;
            let mut z = vec![0f32; 2 * n];
            GaussianNoise::new(7).fill(0, &mut z);
            let a = if constellation == Constellation::Bpsk { 1.0 } else { std::f32::consts::FRAC_1_SQRT_2 };
            let y: Vec<Complex32> = (0..n)
                .map(|k| {
                    let s = if constellation == Constellation::Bpsk { Complex32::new(1.0, 0.0) } else { Complex32::new(a, -a) };
                    s + Complex32::new(sigma * z[2 * k], sigma * z[2 * k + 1])
                })
                .collect();
            let mut d = SoftDemapper::new(constellation, 0.001).unwrap();
            let mut llrs = Vec::new();
            d.process(&y, &mut llrs);
            let want = sigma * sigma / (a * a);
            let got = d.relative_variance();
            assert!((got / want - 1.0).abs() < 0.15, "{constellation:?}: {got} for {want}");
            assert_eq!(llrs.len(), n * constellation.bits());
        }
        assert!(SoftDemapper::new(Constellation::Bpsk, 0.0).is_err());
    }
}
