//! The sample types a channel carries: real `f32`, or complex baseband `cf32`
//! (BPSK on the in-phase axis, noise on both).

use num_complex::Complex32;

/// A channel sample type.
pub trait Sample: Copy + Default + Send + Sync + std::fmt::Debug + 'static {
    /// Name in messages and flowgraph files (`f32`, `cf32`).
    const NAME: &'static str;
    /// The BPSK symbol of `bit` (0 → +1, 1 → −1).
    fn bpsk(bit: u8) -> Self;
    /// The component BPSK information is on.
    fn real(self) -> f32;
    /// Whether every component is finite.
    fn is_finite(self) -> bool;
    /// The samples as their real components, in memory order (I, Q, I, Q, ...
    /// for complex ones), for adding noise to every dimension.
    fn reals_mut(samples: &mut [Self]) -> &mut [f32];
}

impl Sample for f32 {
    const NAME: &'static str = "f32";
    #[inline(always)]
    fn bpsk(bit: u8) -> f32 {
        super::bpsk_symbol(bit)
    }
    #[inline(always)]
    fn real(self) -> f32 {
        self
    }
    #[inline(always)]
    fn is_finite(self) -> bool {
        f32::is_finite(self)
    }
    fn reals_mut(samples: &mut [f32]) -> &mut [f32] {
        samples
    }
}

impl Sample for Complex32 {
    const NAME: &'static str = "cf32";
    #[inline(always)]
    fn bpsk(bit: u8) -> Complex32 {
        Complex32::new(super::bpsk_symbol(bit), 0.0)
    }
    #[inline(always)]
    fn real(self) -> f32 {
        self.re
    }
    #[inline(always)]
    fn is_finite(self) -> bool {
        self.re.is_finite() && self.im.is_finite()
    }
    fn reals_mut(samples: &mut [Complex32]) -> &mut [f32] {
        // SAFETY: Complex<f32> is #[repr(C)] { re: f32, im: f32 }: two f32 with
        // no padding, so n of them are 2n f32 at the same address and alignment.
        unsafe { std::slice::from_raw_parts_mut(samples.as_mut_ptr().cast(), 2 * samples.len()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn complex_samples_are_seen_as_interleaved_reals() {
        let mut s = [Complex32::new(1.0, 2.0), Complex32::new(3.0, 4.0)];
        Complex32::reals_mut(&mut s)[3] = 9.0;
        assert_eq!(s[1], Complex32::new(3.0, 9.0));
        assert_eq!(Complex32::bpsk(1), Complex32::new(-1.0, 0.0));
        assert!(!Complex32::new(0.0, f32::NAN).is_finite());
    }
}
