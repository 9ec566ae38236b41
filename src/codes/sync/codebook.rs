//! One codebook: q distinct codewords of n bits, the injective map C_i of
//! one symbol index.

use crate::codes::error::{CodeResult, invalid};
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use std::collections::HashSet;

/// Longest codeword, in bits (a codeword is held in a `u32`).
pub const MAX_N: usize = 32;

/// Largest alphabet q.
pub const MAX_Q: usize = 4096;

/// q codewords of n bits, all different; codeword `d` encodes symbol `d`.
/// Bit j of a codeword (sent j-th) is bit n − 1 − j of its word: the word
/// written in binary reads in the order the bits are sent.
///
/// # Example
/// ```
/// use gpufec::codes::sync::Codebook;
/// let c = Codebook::new(3, vec![0b000, 0b011, 0b101, 0b110]).unwrap();
/// assert_eq!((c.q(), c.n()), (4, 3));
/// assert_eq!(c.bits(1), vec![0, 1, 1]);
/// assert!(Codebook::new(3, vec![1, 2, 1, 3]).is_err()); // a codeword twice
/// assert!(Codebook::new(3, vec![1, 2, 3]).is_err());    // q = 3: not a power of two
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Codebook {
    n: usize,
    words: Vec<u32>,
}

/// Check an alphabet of q symbols in codewords of n bits.
pub(crate) fn check_sizes(q: usize, n: usize) -> CodeResult<()> {
    if !(1..=MAX_N).contains(&n) {
        return Err(invalid!("codewords of {n} bits: n must be 1..={MAX_N}"));
    }
    if q < 2 || !q.is_power_of_two() || q > MAX_Q {
        return Err(invalid!("an alphabet of q = {q} symbols: q must be a power of two in 2..={MAX_Q}"));
    }
    if n < MAX_N && q > 1 << n {
        return Err(invalid!("q = {q} symbols need more than 2^{n} = {} codewords of {n} bits", 1u64 << n));
    }
    Ok(())
}

impl Codebook {
    /// The codebook of `words` (q of them, each below 2^n, all different).
    pub fn new(n: usize, words: Vec<u32>) -> CodeResult<Self> {
        check_sizes(words.len(), n)?;
        if let Some(w) = words.iter().find(|&&w| n < MAX_N && w >> n != 0) {
            return Err(invalid!("codeword {w:#b} has more than {n} bits"));
        }
        let mut seen = HashSet::with_capacity(words.len());
        if let Some(w) = words.iter().find(|&&w| !seen.insert(w)) {
            return Err(invalid!("codeword {w:0n$b} appears twice: the code would not be injective"));
        }
        Ok(Self { n, words })
    }

    /// q different codewords of n bits drawn at random from `rng`.
    pub fn random(q: usize, n: usize, rng: &mut SmallRng) -> CodeResult<Self> {
        check_sizes(q, n)?;
        let words = if n <= 16 && q * 4 >= 1 << n {
            // Dense: a random q of all 2^n words.
            let mut all: Vec<u32> = (0..1u32 << n).collect();
            all.shuffle(rng);
            all.truncate(q);
            all
        } else {
            let mut seen = HashSet::with_capacity(q);
            let mut words = Vec::with_capacity(q);
            while words.len() < q {
                let w = if n == MAX_N { rng.random::<u32>() } else { rng.random::<u32>() & ((1 << n) - 1) };
                if seen.insert(w) {
                    words.push(w);
                }
            }
            words
        };
        Self::new(n, words)
    }

    /// The q lightest words of n bits (by weight, then value): the sparse
    /// codebook of the Davey–MacKay construction.
    pub fn sparse(q: usize, n: usize) -> CodeResult<Self> {
        check_sizes(q, n)?;
        // The lightest q words have weight at most w, where the words of
        // weight ≤ w first number q or more: walk the weights up.
        let mut words = Vec::with_capacity(q);
        let mut weight = 0;
        while words.len() < q {
            let before = words.len();
            each_of_weight(n, weight, &mut |w| words.push(w));
            words[before..].sort_unstable();
            weight += 1;
        }
        words.truncate(q);
        Self::new(n, words)
    }

    /// Every codeword XORed with `mask` (a watermark): still injective.
    pub fn xor(&self, mask: u32) -> Self {
        Self { n: self.n, words: self.words.iter().map(|w| w ^ mask).collect() }
    }

    /// Every codeword followed by the bits of `marker` (appended in order).
    pub fn with_marker(&self, marker: &[u8]) -> CodeResult<Self> {
        let n = self.n + marker.len();
        if n > MAX_N {
            return Err(invalid!("codewords of {} bits with a marker of {} exceed {MAX_N} bits", self.n, marker.len()));
        }
        if let Some(b) = marker.iter().find(|&&b| b > 1) {
            return Err(invalid!("marker bit {b} is not 0 or 1"));
        }
        let tail = marker.iter().fold(0u32, |acc, &b| acc << 1 | u32::from(b));
        let words = self.words.iter().map(|&w| ((u64::from(w) << marker.len()) as u32) | tail).collect();
        Ok(Self { n, words })
    }

    /// Alphabet size q.
    pub fn q(&self) -> usize {
        self.words.len()
    }

    /// Codeword length n in bits.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The codeword of symbol `d` as a word (bit n − 1 sent first).
    pub fn word(&self, d: usize) -> u32 {
        self.words[d]
    }

    /// Every codeword, by symbol.
    pub fn words(&self) -> &[u32] {
        &self.words
    }

    /// The bits of symbol `d`'s codeword in the order they are sent.
    pub fn bits(&self, d: usize) -> Vec<u8> {
        let mut v = Vec::with_capacity(self.n);
        self.push_bits(d, &mut v);
        v
    }

    /// Append the bits of symbol `d`'s codeword to `out`, first sent first.
    pub fn push_bits(&self, d: usize, out: &mut Vec<u8>) {
        let w = self.words[d];
        out.extend((0..self.n).rev().map(|j| (w >> j) as u8 & 1));
    }
}

/// Calls `f` with every n-bit word of weight `w`.
fn each_of_weight(n: usize, w: usize, f: &mut impl FnMut(u32)) {
    fn rec(from: usize, n: usize, left: usize, acc: u32, f: &mut impl FnMut(u32)) {
        if left == 0 {
            f(acc);
            return;
        }
        for b in from..=n - left {
            rec(b + 1, n, left - 1, acc | 1 << b, f);
        }
    }
    if w <= n {
        rec(0, n, w, 0, f);
    }
}

/// A seeded generator for codebooks and watermarks.
pub(crate) fn rng(seed: u64) -> SmallRng {
    SmallRng::seed_from_u64(seed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_outside_the_limits_are_refused() {
        for (q, n) in [(3, 4), (6, 8), (32, 4), (2, 0), (2, MAX_N + 1), (2 * MAX_Q, MAX_N), (1, 4)] {
            let e = Codebook::random(q, n, &mut rng(1)).unwrap_err();
            assert!(matches!(e, crate::codes::CodeError::InvalidParameter(_)), "q={q} n={n}: {e}");
        }
        assert!(Codebook::new(3, vec![0, 1, 2, 8]).is_err(), "a word of 4 bits in a codebook of 3");
    }

    #[test]
    fn random_codebooks_are_injective_and_seeded() {
        for (q, n) in [(4, 2), (16, 8), (256, 16), (32, 32)] {
            let a = Codebook::random(q, n, &mut rng(5)).unwrap();
            let b = Codebook::random(q, n, &mut rng(5)).unwrap();
            assert_eq!(a, b);
            let distinct: HashSet<u32> = a.words().iter().copied().collect();
            assert_eq!(distinct.len(), q);
        }
    }

    #[test]
    fn sparse_codebooks_take_the_lightest_words() {
        let c = Codebook::sparse(16, 8).unwrap();
        let weights: Vec<u32> = c.words().iter().map(|w| w.count_ones()).collect();
        // 1 word of weight 0, 8 of weight 1, then 7 of the 28 of weight 2.
        assert_eq!(weights.iter().filter(|&&w| w == 0).count(), 1);
        assert_eq!(weights.iter().filter(|&&w| w == 1).count(), 8);
        assert_eq!(weights.iter().filter(|&&w| w == 2).count(), 7);
        assert_eq!(Codebook::sparse(256, 8).unwrap().q(), 256);
    }

    #[test]
    fn markers_are_appended() {
        let c = Codebook::new(2, vec![0b00, 0b01, 0b10, 0b11]).unwrap().with_marker(&[0, 1]).unwrap();
        assert_eq!(c.bits(2), vec![1, 0, 0, 1]);
        assert!(c.with_marker(&[2]).is_err());
    }
}
