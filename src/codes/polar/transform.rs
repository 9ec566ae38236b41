//! x = u·G over GF(2) on bits packed 64 to a word, the one transform the
//! encoder, the decoders' re-encoding and the G-matrix early stop share.
//!
//! Bit i of a vector is bit i mod 64 of word i / 64 (least significant
//! first). G = F^⊗m is the product of m commuting butterfly stages; the
//! stage of span h sets v_i ^= v_{i+h} for every i with i & h = 0. Spans
//! below 64 are shifts and masks inside each word, longer ones XOR words.
//! G·G = I, so the same transform inverts itself (u = x·G).

use crate::codes::packed::BIT_BYTES;

/// For span h = 2^s < 64, the bits i of a word with i & h = 0.
const LOW_OF_PAIR: [u64; 6] = [
    0x5555_5555_5555_5555,
    0x3333_3333_3333_3333,
    0x0F0F_0F0F_0F0F_0F0F,
    0x00FF_00FF_00FF_00FF,
    0x0000_FFFF_0000_FFFF,
    0x0000_0000_FFFF_FFFF,
];

/// Words that hold `n` bits.
pub fn words(n: usize) -> usize {
    n.div_ceil(64)
}

/// Apply G = F^⊗m in place to the `n` = 2^m bits packed in `v`
/// (`words(n)` words; the bits above `n` in a short word must be 0).
///
/// # Example
/// ```
/// use gpufec::codes::polar::transform::polar_transform;
/// let mut v = [0b0000_1000u64]; // u = e_3 of a code of 8 bits
/// polar_transform(&mut v, 8);
/// assert_eq!(v[0], 0b0000_1111); // row 3 of G: x_0..x_3
/// polar_transform(&mut v, 8);
/// assert_eq!(v[0], 0b0000_1000); // G·G = I
/// ```
pub fn polar_transform(v: &mut [u64], n: usize) {
    debug_assert!(n.is_power_of_two() && v.len() == words(n));
    for (s, mask) in LOW_OF_PAIR.iter().enumerate().take(n.trailing_zeros() as usize) {
        for w in v.iter_mut() {
            *w ^= (*w >> (1 << s)) & mask;
        }
    }
    let mut h = 1;
    while h < v.len() {
        for block in v.chunks_exact_mut(2 * h) {
            let (lo, hi) = block.split_at_mut(h);
            for (a, b) in lo.iter_mut().zip(hi.iter()) {
                *a ^= *b;
            }
        }
        h *= 2;
    }
}

/// Pack unpacked bits (each 0 or 1) into `out`, `words(bits.len())` words.
pub fn pack(bits: &[u8], out: &mut [u64]) {
    out.fill(0);
    for (w, chunk) in out.iter_mut().zip(bits.chunks(64)) {
        *w = chunk.iter().enumerate().fold(0, |acc, (i, &b)| acc | u64::from(b & 1) << i);
    }
}

/// The first `x.len()` bits of packed `v`, one `u8` (0 or 1) each, `x[i]`
/// = bit `i`: a table look-up per byte, not a shift per bit.
///
/// # Example
/// ```
/// use gpufec::codes::polar::transform::unpack;
/// let mut x = [9u8; 10];
/// unpack(&[0b10_0000_0101], &mut x);
/// assert_eq!(x, [1, 0, 1, 0, 0, 0, 0, 0, 0, 1]);
/// ```
pub fn unpack(v: &[u64], x: &mut [u8]) {
    let whole = x.len() / 8 * 8;
    let (bytes, rest) = x.split_at_mut(whole);
    for (k, out) in bytes.chunks_exact_mut(8).enumerate() {
        let byte = (v[k / 8] >> (8 * (k % 8))) as u8;
        out.copy_from_slice(&BIT_BYTES[byte as usize].to_le_bytes());
    }
    for (j, b) in rest.iter_mut().enumerate() {
        *b = bit(v, whole + j);
    }
}

/// Bit `i` of packed `v`.
#[inline]
pub fn bit(v: &[u64], i: usize) -> u8 {
    (v[i / 64] >> (i % 64)) as u8 & 1
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Row i of F^⊗m: bit j is 1 exactly when j's binary digits are a
    /// subset of i's (Lucas' theorem for the Kronecker power).
    fn row(i: usize, n: usize) -> Vec<u8> {
        (0..n).map(|j| u8::from(j & i == j)).collect()
    }

    #[test]
    fn rows_are_the_kronecker_powers() {
        for m in 0..=9 {
            let n = 1 << m;
            for i in (0..n).step_by(((n / 64) | 1).max(1)) {
                let mut e = vec![0u8; n];
                e[i] = 1;
                let mut v = vec![0; words(n)];
                pack(&e, &mut v);
                polar_transform(&mut v, n);
                let got: Vec<u8> = (0..n).map(|j| bit(&v, j)).collect();
                assert_eq!(got, row(i, n), "N {n} row {i}");
            }
        }
    }

    #[test]
    fn unpack_is_bit_by_bit() {
        let v = [0x0123_4567_89AB_CDEFu64, 0xF0E1_D2C3_B4A5_9687, 0x8000_0000_0000_0001];
        for len in [0, 1, 7, 8, 9, 63, 64, 65, 130, 192] {
            let mut x = vec![7u8; len];
            unpack(&v, &mut x);
            let want: Vec<u8> = (0..len).map(|i| bit(&v, i)).collect();
            assert_eq!(x, want, "{len} bits");
        }
    }
}
