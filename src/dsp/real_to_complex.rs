//! Real audio (an SSB receiver's output, a sound-card recording) to complex
//! baseband: the given carrier shifted to 0 Hz, the other sideband and the
//! image filtered out, optionally decimated.

use super::{Fir, MAX_TAPS, check_range};
use crate::codes::error::{CodeResult, invalid};
use futuredsp::{firdes, windows};
use num_complex::Complex32;

/// Multiplies real samples by e^(−j2π·fc·n/fs), then low-passes them to
/// `bandwidth` Hz each side of the carrier (a Hamming-windowed sinc of
/// 4·fs/bandwidth taps, odd) and keeps every `decimation`-th sample.
///
/// ```
/// use gpufec::dsp::RealToComplex;
/// let fs = 48_000.0;
/// let tone: Vec<f32> = (0..4800).map(|n| (2.0 * std::f64::consts::PI * 12_000.0 * n as f64 / fs).cos() as f32).collect();
/// let mut r2c = RealToComplex::new(fs, 11_500.0, 3_000.0, 1).unwrap();
/// let mut out = Vec::new();
/// r2c.process(&tone, &mut out);
/// // A 12 kHz tone is a 500 Hz complex tone of amplitude 1/2 after the shift.
/// assert!((out[4000].norm() - 0.5).abs() < 0.01);
/// ```
pub struct RealToComplex {
    /// Carrier phase in cycles, kept in [0, 1).
    phase: f64,
    step: f64,
    fir: Fir,
    mixed: Vec<Complex32>,
}

impl RealToComplex {
    /// A converter for samples at `sample_rate` Hz (1..=1e9) with the carrier
    /// at `carrier` Hz (inside the band: 0 ≤ fc < fs/2), keeping `bandwidth`
    /// Hz each side (0 < bw ≤ fs/2), decimating by `decimation`.
    pub fn new(sample_rate: f64, carrier: f64, bandwidth: f64, decimation: usize) -> CodeResult<Self> {
        check_range("sample rate", sample_rate, 1.0..=1e9)?;
        if !carrier.is_finite() || carrier < 0.0 || carrier >= sample_rate / 2.0 {
            return Err(invalid!(
                "carrier {carrier} Hz is outside the band 0..{} Hz of a {sample_rate} Hz stream",
                sample_rate / 2.0
            ));
        }
        check_range("bandwidth", bandwidth, sample_rate * 1e-4..=sample_rate / 2.0)?;
        let cutoff = bandwidth / sample_rate;
        let taps = ((4.0 / cutoff) as usize | 1).min(MAX_TAPS);
        let window = windows::hamming(taps, false);
        // A cutoff of exactly fs/2 is all-pass: one tap.
        let taps = if cutoff < 0.5 { firdes::lowpass::<f32>(cutoff, &window) } else { vec![1.0] };
        Ok(Self { phase: 0.0, step: carrier / sample_rate, fir: Fir::new(taps, decimation)?, mixed: Vec::new() })
    }

    /// Converts `input`, appending the baseband samples it completes to `out`.
    pub fn process(&mut self, input: &[f32], out: &mut Vec<Complex32>) {
        self.mixed.clear();
        for &x in input {
            let (s, c) = (-2.0 * std::f64::consts::PI * self.phase).sin_cos();
            self.mixed.push(Complex32::new(x * c as f32, x * s as f32));
            self.phase = (self.phase + self.step).fract();
        }
        self.fir.process(&self.mixed, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_other_sideband_is_filtered_out() {
        let fs = 48_000.0;
        // 500 Hz below the carrier: outside a 300 Hz bandwidth.
        let tone: Vec<f32> = (0..9600).map(|n| (2.0 * std::f64::consts::PI * 11_000.0 * n as f64 / fs).cos() as f32).collect();
        let mut r2c = RealToComplex::new(fs, 11_500.0, 300.0, 2).unwrap();
        let mut out = Vec::new();
        for chunk in tone.chunks(1001) {
            r2c.process(chunk, &mut out);
        }
        assert_eq!(out.len(), 4800);
        assert!(out[3000..].iter().all(|s| s.norm() < 0.01));
    }

    #[test]
    fn a_carrier_outside_the_band_is_refused() {
        assert!(RealToComplex::new(48_000.0, 30_000.0, 5_000.0, 1).is_err());
        assert!(RealToComplex::new(48_000.0, -1.0, 5_000.0, 1).is_err());
        assert!(RealToComplex::new(48_000.0, 10_000.0, 0.0, 1).is_err());
        assert!(RealToComplex::new(48_000.0, 10_000.0, 5_000.0, 0).is_err());
    }
}
