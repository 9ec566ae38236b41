//! Seeded random information bits: the one source that the link simulator and
//! the `RandomBits` block share, so that a seed names the same bits in both.

use crate::codes::channel::GaussianNoise;
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
    draw: Draw,
}

/// Where a [`BitSource`]'s bits come from.
#[derive(Debug, Clone)]
enum Draw {
    /// A sequential generator, 64 bits a word; `left` bits of `word` unused.
    Sequential { rng: SmallRng, word: u64, left: u32 },
    /// Counter-based: bit `next` and on, each a function of the seed and its
    /// index alone ([`BitSource::counter`]).
    Counter { noise: GaussianNoise, next: u64 },
}

impl BitSource {
    /// Bits drawn from `seed`.
    pub fn new(seed: u64) -> Self {
        Self { draw: Draw::Sequential { rng: SmallRng::seed_from_u64(seed), word: 0, left: 0 } }
    }

    /// Bits of `seed` by counter, the stream a GPU generates in parallel
    /// (the device link simulators): bit `c` is bit `c mod 32` of word
    /// `(c / 32) mod 4` of Philox4x32-10 block `c / 128` under the key of
    /// `seed`, the words of [`GaussianNoise::words`]. A different stream
    /// from [`BitSource::new`]'s for the same seed.
    ///
    /// # Example
    /// ```
    /// use gpufec::codes::bits::BitSource;
    /// use gpufec::codes::channel::GaussianNoise;
    /// let mut bits = vec![0u8; 300];
    /// BitSource::counter(5).fill(&mut bits);
    /// let mut w = [[0u32; 4]; 1];
    /// GaussianNoise::new(5).words(2, &mut w); // bits 256 .. 383
    /// assert_eq!(bits[256 + 33], ((w[0][1] >> 1) & 1) as u8);
    /// ```
    pub fn counter(seed: u64) -> Self {
        Self { draw: Draw::Counter { noise: GaussianNoise::new(seed), next: 0 } }
    }

    /// Overwrite `out` with the next bits of the stream.
    pub fn fill(&mut self, out: &mut [u8]) {
        match &mut self.draw {
            Draw::Sequential { rng, word, left } => fill_sequential(rng, word, left, out),
            Draw::Counter { noise, next } => {
                fill_counter(noise, *next, out);
                *next += out.len() as u64;
            }
        }
    }
}

/// The sequential stream: the rest of the current word, whole words eight
/// bits at a time, then the head of a new word.
fn fill_sequential(rng: &mut SmallRng, word: &mut u64, left: &mut u32, out: &mut [u8]) {
    let head = out.len().min(*left as usize);
    let (head, rest) = out.split_at_mut(head);
    take_bits(word, left, head);
    let mut words = rest.chunks_exact_mut(64);
    for w in words.by_ref() {
        let x: u64 = rng.random();
        for (k, o) in w.chunks_exact_mut(8).enumerate() {
            o.copy_from_slice(&BIT_BYTES[((x >> (8 * k)) & 0xff) as usize].to_le_bytes());
        }
    }
    let tail = words.into_remainder();
    if !tail.is_empty() {
        *word = rng.random();
        *left = 64;
        take_bits(word, left, tail);
    }
}

/// The next `out.len()` bits of `word` (which holds them).
fn take_bits(word: &mut u64, left: &mut u32, out: &mut [u8]) {
    for b in out {
        *b = (*word & 1) as u8;
        *word >>= 1;
        *left -= 1;
    }
}

/// Bits `first ..` of the counter stream of `noise`'s key into `out`.
fn fill_counter(noise: &GaussianNoise, first: u64, out: &mut [u8]) {
    const BLOCK: u64 = 128;
    let mut words = [[0u32; 4]; 64];
    let mut at = 0;
    while at < out.len() {
        let c = first + at as u64;
        let block = c / BLOCK;
        let blocks = ((out.len() - at) as u64 + c % BLOCK).div_ceil(BLOCK).min(words.len() as u64) as usize;
        noise.words(block, &mut words[..blocks]);
        let start = (c % BLOCK) as usize;
        let take = (blocks * BLOCK as usize - start).min(out.len() - at);
        for (j, o) in out[at..at + take].iter_mut().enumerate() {
            let i = start + j;
            *o = ((words[i / 128][(i / 32) % 4] >> (i % 32)) & 1) as u8;
        }
        at += take;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counter bits do not depend on how the stream is cut, start where a
    /// source started later would, and are balanced.
    #[test]
    fn counter_bits_are_the_same_in_any_chunking() {
        let mut whole = vec![0u8; 50_000];
        BitSource::counter(11).fill(&mut whole);
        let mut parts = vec![0u8; 50_000];
        let mut s = BitSource::counter(11);
        let mut at = 0;
        for len in [1, 127, 128, 129, 8191, 3, 10_000].into_iter().cycle() {
            let end = (at + len).min(parts.len());
            s.fill(&mut parts[at..end]);
            at = end;
            if at == parts.len() {
                break;
            }
        }
        assert_eq!(whole, parts);
        let ones = whole.iter().filter(|&&b| b == 1).count();
        assert!((24_000..26_000).contains(&ones), "{ones} ones in 50000");
        let mut other = vec![0u8; 50_000];
        BitSource::new(11).fill(&mut other);
        assert_ne!(whole, other, "the counter stream is not the sequential one");
    }
}
