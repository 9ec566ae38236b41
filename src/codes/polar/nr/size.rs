//! The mother code length of TS 38.212 §5.3.1: N = 2^n from K, E and n_max.

use crate::codes::error::{CodeResult, invalid};

/// n_min of §5.3.1: no mother code is shorter than 32 bits.
pub const N_MIN_LOG: u32 = 5;
/// R_min = 1/8 of §5.3.1, as its inverse.
const INVERSE_R_MIN: usize = 8;

/// ⌈log2 x⌉ for x ≥ 1.
fn ceil_log2(x: usize) -> u32 {
    usize::BITS - (x - 1).leading_zeros()
}

/// N for `k` bits to encode (CRC included, parity-check bits not) sent in
/// `e` bits, with n_max = `n_max` (9 downlink, 10 uplink):
/// n = max(min(n1, n2, n_max), n_min), where n1 is ⌈log2 E⌉, one less when
/// E ≤ (9/8)·2^(⌈log2 E⌉ − 1) and K/E < 9/16, and n2 = ⌈log2(K/R_min)⌉.
///
/// # Example
/// ```
/// use gpufec::codes::polar::nr::mother_length;
/// assert_eq!(mother_length(20, 60, 10).unwrap(), 64);
/// assert_eq!(mother_length(56, 864, 9).unwrap(), 512); // a DCI at aggregation level 8
/// assert_eq!(mother_length(40, 1100, 10).unwrap(), 512); // n2 = ⌈log2 320⌉
/// ```
pub fn mother_length(k: usize, e: usize, n_max: u32) -> CodeResult<usize> {
    if k == 0 || e == 0 {
        return Err(invalid!("a polar code block of K = {k} bits sent in E = {e} bits"));
    }
    if !(9..=10).contains(&n_max) {
        return Err(invalid!("n_max = {n_max}: 5G polar codes take 9 (downlink) or 10 (uplink)"));
    }
    let c = ceil_log2(e);
    // E ≤ (9/8)·2^(c−1) and K/E < 9/16, in integers.
    let n1 = if c > 0 && 8 * e <= 9 << (c - 1) && 16 * k < 9 * e { c - 1 } else { c };
    let n2 = ceil_log2(INVERSE_R_MIN * k);
    Ok(1 << n1.min(n2).min(n_max).max(N_MIN_LOG))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Cases worked by hand from §5.3.1.
    #[test]
    fn hand_worked_cases() {
        // E = 100: ⌈log2⌉ = 7, 100 ≤ 72 fails: n1 = 7; n2 = ⌈log2 160⌉ = 8.
        assert_eq!(mother_length(20, 100, 10).unwrap(), 128);
        // E = 140 ≤ 144 and 16·40 < 9·140: n1 = 7; n2 = ⌈log2 320⌉ = 9.
        assert_eq!(mother_length(40, 140, 10).unwrap(), 128);
        // The same E with K/E = 80/140 ≥ 9/16: n1 = 8.
        assert_eq!(mother_length(80, 140, 10).unwrap(), 256);
        // n_max caps it: E = 8192 and K = 1000 want 1024 uplink, 512 downlink.
        assert_eq!(mother_length(1000, 8192, 10).unwrap(), 1024);
        assert_eq!(mother_length(1000, 8192, 9).unwrap(), 512);
        // n_min: a tiny block still gets 32 bits.
        assert_eq!(mother_length(1, 8, 9).unwrap(), 32);
        assert!(mother_length(0, 8, 9).is_err());
        assert!(mother_length(8, 0, 9).is_err());
        assert!(mother_length(8, 64, 11).is_err());
    }
}
