//! Seeded random information bits: the one source that the link simulator and
//! the `RandomBits` block share, so that a seed names the same bits in both.

use crate::codes::packed::BIT_BYTES;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// The index of the first value of `bits` that is not 0 or 1, if any, as fast
/// as memory allows: an OR over each piece vectorises, a search for the first
/// bad byte does not (it ran at one byte per cycle, the slowest step of the
/// channel block on many cores).
///
/// # Example
/// ```
/// use gpufec::codes::bits::first_non_bit;
/// assert_eq!(first_non_bit(&[0, 1, 1, 0]), None);
/// assert_eq!(first_non_bit(&[0, 1, 7, 2]), Some(2));
/// ```
pub fn first_non_bit(bits: &[u8]) -> Option<usize> {
    const PIECE: usize = 4096;
    let bad = bits.chunks(PIECE).position(|c| c.iter().fold(0u8, |acc, &b| acc | b) > 1)?;
    let at = bad * PIECE;
    bits[at..].iter().position(|&b| b > 1).map(|i| at + i)
}

/// Endless seeded stream of unpacked bits (`u8` 0/1), drawn 64 at a time from
/// one random word, least significant bit first. The stream does not depend on
/// how it is cut into calls.
///
/// # Example
/// ```
/// use gpufec::codes::bits::BitSource;
/// let mut a = BitSource::new(7);
/// let mut whole = vec![0u8; 100];
/// a.fill(&mut whole);
/// let mut b = BitSource::new(7);
/// let mut parts = vec![0u8; 100];
/// b.fill(&mut parts[..33]);
/// b.fill(&mut parts[33..]);
/// assert_eq!(whole, parts);
/// assert!(whole.iter().all(|&x| x <= 1));
/// // Word by word or bit by bit, the same stream.
/// let mut c = BitSource::new(7);
/// let mut odd = vec![0u8; 100];
/// for chunk in odd.chunks_mut(3) {
///     c.fill(chunk);
/// }
/// assert_eq!(whole, odd);
/// ```
#[derive(Debug, Clone)]
pub struct BitSource {
    rng: SmallRng,
    word: u64,
    left: u32,
}

impl BitSource {
    /// Bits drawn from `seed`.
    pub fn new(seed: u64) -> Self {
        Self { rng: SmallRng::seed_from_u64(seed), word: 0, left: 0 }
    }

    /// Overwrite `out` with the next bits of the stream.
    pub fn fill(&mut self, out: &mut [u8]) {
        // The rest of the current word, bit by bit.
        let head = out.len().min(self.left as usize);
        let (head, rest) = out.split_at_mut(head);
        self.take_bits(head);
        // Whole words, eight bits at a time.
        let mut words = rest.chunks_exact_mut(64);
        for w in words.by_ref() {
            let word: u64 = self.rng.random();
            for (k, o) in w.chunks_exact_mut(8).enumerate() {
                o.copy_from_slice(&BIT_BYTES[((word >> (8 * k)) & 0xff) as usize].to_le_bytes());
            }
        }
        let tail = words.into_remainder();
        if !tail.is_empty() {
            self.word = self.rng.random();
            self.left = 64;
            self.take_bits(tail);
        }
    }

    /// The next `out.len()` bits of the current word (which holds them).
    fn take_bits(&mut self, out: &mut [u8]) {
        for b in out {
            *b = (self.word & 1) as u8;
            self.word >>= 1;
            self.left -= 1;
        }
    }
}
