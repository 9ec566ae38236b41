//! Saturating `f32 → i8` LLR quantizer with an explicit scale.

use crate::codes::error::{CodeResult, invalid};
use crate::codes::llr::check_finite;

/// Largest quantized magnitude. −128 is never produced, so negation is safe.
pub const I8_LLR_MAX: i8 = 127;

/// The scale of the matched quantizer per unit of noise variance: 16·σ² maps a
/// noiseless BPSK sample (LLR 2/σ²) to ±32 and saturates beyond ±4, which loses
/// under 0.1 dB against `f32` LLRs for the Viterbi decoder (BENCHMARKS.md).
pub const MATCHED_SCALE_PER_VARIANCE: f64 = 16.0;

/// Quantizes LLRs as `round(llr · scale)` saturated to ±127.
///
/// # Example
/// ```
/// use gpufec::codes::channel::Quantizer;
/// let q = Quantizer::new(4.0).unwrap();
/// let mut out = Vec::new();
/// q.quantize(&[0.3, -1.0, 100.0], &mut out).unwrap();
/// assert_eq!(out, vec![1, -4, 127]);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Quantizer {
    scale: f32,
}

impl Quantizer {
    /// A quantizer multiplying by `scale` (> 0, finite) before rounding.
    pub fn new(scale: f32) -> CodeResult<Self> {
        if !(scale.is_finite() && scale > 0.0) {
            return Err(invalid!("quantizer scale {scale} must be finite and positive"));
        }
        Ok(Self { scale })
    }

    /// The quantizer matched to noise of variance `variance` (σ²): scale
    /// [`MATCHED_SCALE_PER_VARIANCE`]·σ².
    pub fn matched(variance: f64) -> CodeResult<Self> {
        Self::new((MATCHED_SCALE_PER_VARIANCE * variance) as f32)
    }

    /// The scale.
    pub fn scale(&self) -> f32 {
        self.scale
    }

    /// Quantize one LLR.
    #[inline]
    pub fn one(&self, llr: f32) -> i8 {
        let m = I8_LLR_MAX as f32;
        (llr * self.scale).round().clamp(-m, m) as i8
    }

    /// Quantize `llrs`, appending to `out`. NaN or infinite input is an error
    /// and nothing is appended.
    pub fn quantize(&self, llrs: &[f32], out: &mut Vec<i8>) -> CodeResult<()> {
        check_finite(llrs)?;
        out.extend(llrs.iter().map(|&l| self.one(l)));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saturates_and_rounds() {
        let q = Quantizer::new(2.0).unwrap();
        assert_eq!(q.one(1e9), 127);
        assert_eq!(q.one(-1e9), -127);
        assert_eq!(q.one(0.26), 1);
        assert_eq!(q.one(-0.24), 0);
        let mut out = Vec::new();
        assert!(q.quantize(&[1.0, f32::NAN], &mut out).is_err());
        assert!(out.is_empty());
        assert!(Quantizer::new(0.0).is_err());
        assert!(Quantizer::new(f32::INFINITY).is_err());
    }
}
