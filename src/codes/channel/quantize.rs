//! Saturating `f32 → i8` LLR quantizer with an explicit scale.

use crate::codes::error::{CodeResult, invalid};
use crate::codes::llr::check_finite;

/// Largest quantized magnitude. −128 is never produced, so negation is safe.
pub const I8_LLR_MAX: i8 = 127;

/// The scale of the matched quantizer per unit of noise variance where the
/// noise is weak (σ ≤ 3/4): 16·σ² maps a noiseless BPSK sample (LLR 2/σ²) to
/// ±32 and saturates received samples beyond ±4.
pub const MATCHED_SCALE_PER_VARIANCE: f64 = 16.0;

/// The received sample magnitude the matched quantizer saturates at: 4, or
/// the noiseless ±1 and four standard deviations of noise beyond it when
/// that is more. A fixed ±4 cut at strong noise (σ = 5.5 for LTE transport
/// blocks at a rate of 1/67 and 0.5 dB) clips most samples, and i8 then
/// lost three orders of magnitude of BER against f32 (BENCHMARKS.md, "the i8
/// quantizer's loss").
pub fn matched_clip(variance: f64) -> f64 {
    (1.0 + 4.0 * variance.sqrt()).max(4.0)
}

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
    /// [`MATCHED_SCALE_PER_VARIANCE`]·σ² · 4 / [`matched_clip`] (16·σ²
    /// for σ ≤ 3/4), so that ±127 stands for the clip level.
    pub fn matched(variance: f64) -> CodeResult<Self> {
        Self::new((MATCHED_SCALE_PER_VARIANCE * variance * 4.0 / matched_clip(variance)) as f32)
    }

    /// The scale.
    pub fn scale(&self) -> f32 {
        self.scale
    }

    /// Quantize one LLR: `round(llr · scale)`, halves away from zero, then
    /// saturated to ±127 (NaN gives 0, an erasure; callers reject it first).
    ///
    /// Written with a truncating conversion and an exact remainder instead of
    /// `f32::round`, which is a library call on baseline x86-64 and keeps a
    /// loop of these from vectorizing; the results are the same for every
    /// input (`rounds_exactly_like_f32_round` checks the neighbours of every
    /// half).
    #[inline(always)]
    pub fn one(&self, llr: f32) -> i8 {
        let y = llr * self.scale;
        // Beyond ±128 everything saturates anyway; `max` turns NaN into −128,
        // so the conversion below is always in range (and NaN is an erasure).
        // Not `clamp`: that keeps NaN.
        #[allow(clippy::manual_clamp)]
        let c = y.max(-128.0).min(128.0);
        // SAFETY: c is a number in [−128, 128], which i32 holds.
        let t: i32 = unsafe { c.to_int_unchecked() };
        // c − t is exact: both have the same sign and |c| < 2^24.
        let frac = c - t as f32;
        let r = (t + i32::from(frac >= 0.5) - i32::from(frac <= -0.5)).clamp(-(I8_LLR_MAX as i32), I8_LLR_MAX as i32);
        if y.is_nan() { 0 } else { r as i8 }
    }

    /// Quantize `llrs` into `out` (of the same length), which must be finite.
    #[inline]
    pub fn quantize_into(&self, llrs: &[f32], out: &mut [i8]) {
        for (o, &l) in out.iter_mut().zip(llrs) {
            *o = self.one(l);
        }
    }

    /// Quantize `llrs`, appending to `out`. NaN or infinite input is an error
    /// and nothing is appended.
    pub fn quantize(&self, llrs: &[f32], out: &mut Vec<i8>) -> CodeResult<()> {
        check_finite(llrs)?;
        let at = out.len();
        out.resize(at + llrs.len(), 0);
        self.quantize_into(llrs, &mut out[at..]);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_matched_scale_is_16_variances_for_weak_noise_and_follows_sigma_beyond() {
        for variance in [0.01, 0.25, 0.5625] {
            assert_eq!(super::Quantizer::matched(variance).unwrap().scale(), (16.0 * variance) as f32);
        }
        // σ = 5.5: the noiseless sample and four σ beyond it reach ±127, not ±4.
        let (variance, sigma) = (30.25, 5.5f32);
        let q = super::Quantizer::matched(variance).unwrap();
        assert_eq!(q.one(2.0 * (1.0 + 4.0 * sigma) / variance as f32), 127);
        assert!(q.one(2.0 * 4.0 / variance as f32) < 40, "±4 is far from saturating now");
    }

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

    #[test]
    fn rounds_exactly_like_f32_round() {
        let q = Quantizer::new(1.0).unwrap();
        let want = |y: f32| y.round().clamp(-127.0, 127.0) as i8;
        for k in -300..=300 {
            let half = k as f32 + 0.5;
            let mut x = half;
            // Ten floats either side of every half, and the half itself.
            for _ in 0..10 {
                x = x.next_down();
            }
            for _ in 0..21 {
                assert_eq!(q.one(x), want(x), "{x:e}");
                x = x.next_up();
            }
        }
        for x in [0.0, -0.0, 1e-30, -1e-30, 126.49, 127.5, -127.5, 128.0, -129.0, 1e30, -1e30, f32::MAX, f32::MIN, f32::NAN] {
            assert_eq!(q.one(x), want(x), "{x:e}");
        }
        let q = Quantizer::new(6.3697147).unwrap();
        let mut x = -30.0f32;
        while x < 30.0 {
            assert_eq!(q.one(x), (x * 6.3697147).round().clamp(-127.0, 127.0) as i8, "{x}");
            x += 0.000_731;
        }
    }
}
