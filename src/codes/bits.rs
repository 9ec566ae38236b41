//! Seeded random information bits: the one source that the link simulator and
//! the `RandomBits` block share, so that a seed names the same bits in both.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

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
        for b in out {
            if self.left == 0 {
                self.word = self.rng.random();
                self.left = 64;
            }
            *b = (self.word & 1) as u8;
            self.word >>= 1;
            self.left -= 1;
        }
    }
}
