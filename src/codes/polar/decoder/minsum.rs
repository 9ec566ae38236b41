//! The min-sum arithmetic of SC and SCL on `f32` LLRs, written once so that
//! the lane-parallel SC decoder and the list decoder compute the same IEEE
//! operations (bit for bit, whatever the vector width).
//!
//! A bit travels as a sign mask: 0 for bit 0, `SIGN` for bit 1, so that
//! g's "±a" is one XOR.

/// The sign bit of an `f32`.
pub(super) const SIGN: u32 = 0x8000_0000;

/// f(a, b) = sign(a)·sign(b)·min(|a|, |b|).
#[inline(always)]
pub(super) fn f(a: f32, b: f32) -> f32 {
    let (a_abs, b_abs) = (a.abs(), b.abs());
    // A plain comparison, one vector instruction (`f32::min` adds a NaN
    // fix-up that LLRs, checked finite, never need).
    let least = if a_abs < b_abs { a_abs } else { b_abs };
    f32::from_bits(((a.to_bits() ^ b.to_bits()) & SIGN) | least.to_bits())
}

/// g(a, b, u) = b + (1 − 2u)·a, u given as a sign mask.
#[inline(always)]
pub(super) fn g(a: f32, b: f32, u: u32) -> f32 {
    b + f32::from_bits(a.to_bits() ^ u)
}

/// The hard decision of an LLR as a sign mask: bit 1 only for a negative
/// LLR (a zero, of either sign, decides 0).
#[inline(always)]
pub(super) fn hard(a: f32) -> u32 {
    if a < 0.0 { SIGN } else { 0 }
}

/// The sum of a repetition node's LLRs, in index order.
#[inline(always)]
pub(super) fn rep_sum(llrs: impl Iterator<Item = f32>) -> f32 {
    llrs.fold(0.0, |s, a| s + a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn min_sum_by_hand() {
        assert_eq!(f(3.0, -2.0), -2.0);
        assert_eq!(f(-3.0, -2.5), 2.5);
        assert_eq!(g(3.0, 1.0, 0), 4.0);
        assert_eq!(g(3.0, 1.0, SIGN), -2.0);
        assert_eq!((hard(-0.5), hard(0.0), hard(-0.0), hard(2.0)), (SIGN, 0, 0, 0));
        assert_eq!(rep_sum([1.0, -4.0, 2.5].into_iter()), -0.5);
    }
}
