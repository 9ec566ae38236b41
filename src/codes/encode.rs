//! The encoder contract every code family implements, so that link
//! simulators, benchmarks and the generic encoder block drive any of them.

use crate::codes::bits::first_non_bit;
use crate::codes::error::{CodeResult, invalid};
use rayon::prelude::*;

/// Turns information bits into the channel bits a transmitter sends.
pub trait Encoder: Send {
    /// Append the channel bits of `bits` (unpacked `u8` 0/1; any other value
    /// is an error and nothing is appended) to `out`.
    fn encode(&mut self, bits: &[u8], out: &mut Vec<u8>) -> CodeResult<()>;

    /// Encode as many of the first `bits` as `out` has room for, straight
    /// into it: `Some((bits taken, channel bits written))`, `(0, 0)` when
    /// `out` cannot hold the output of one bit (or of the block the next bit
    /// completes). A streaming convolutional code and the block codes can
    /// (a block code takes no more bits than complete the blocks `out` has
    /// room for, and may take bits while writing none); the others say
    /// `None`, and the caller uses [`encode`](Self::encode). A value other than 0 or 1 among the bits
    /// it would take is an error, and nothing is written.
    fn encode_into(&mut self, _bits: &[u8], _out: &mut [u8]) -> CodeResult<Option<(usize, usize)>> {
        Ok(None)
    }

    /// Whether the input so far ended where a stream may end (a frame
    /// boundary); always true for a streaming code.
    fn at_boundary(&self) -> bool;

    /// Information bits a stream must hold a whole number of (a frame, code
    /// block or message; 1 for a streaming code), so that a flowgraph can
    /// check a source's total before the run.
    fn unit_bits(&self) -> u64;

    /// Information bits over channel bits sent (tails and puncturing counted):
    /// the R of Eb/N0 = Es/N0 / R.
    fn rate(&self) -> f64;
}

/// A boxed encoder is one: links and blocks hold whichever a family's
/// settings chose.
impl<E: Encoder + ?Sized> Encoder for Box<E> {
    fn encode(&mut self, bits: &[u8], out: &mut Vec<u8>) -> CodeResult<()> {
        (**self).encode(bits, out)
    }

    fn encode_into(&mut self, bits: &[u8], out: &mut [u8]) -> CodeResult<Option<(usize, usize)>> {
        (**self).encode_into(bits, out)
    }

    fn at_boundary(&self) -> bool {
        (**self).at_boundary()
    }

    fn unit_bits(&self) -> u64 {
        (**self).unit_bits()
    }

    fn rate(&self) -> f64 {
        (**self).rate()
    }
}

/// The information bits of an unfinished block, waiting for the rest: the
/// stream side of every block code's [`Encoder`] (turbo code blocks, LTE
/// transport blocks, polar codewords), which cuts the input into blocks and
/// encodes the whole ones on all cores.
#[derive(Debug, Clone, Default)]
pub(crate) struct Pending(Vec<u8>);

impl Pending {
    /// Whether no bits wait (the stream is at a block boundary).
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Encode the blocks of `k` information bits that the waiting bits and
    /// `bits` complete, appending `n` channel bits for each to `out`;
    /// `one(info, coded)` encodes one block. The blocks whole within `bits`
    /// are encoded straight from it (no copy), on all cores when there are
    /// at least `par_min`; the bits of an unfinished block wait. A value
    /// other than 0 or 1 in `bits` is an error and nothing is appended, as
    /// is an error of `one` (which leaves `out` as it was).
    pub(crate) fn encode<F>(&mut self, bits: &[u8], (k, n): (usize, usize), par_min: usize, out: &mut Vec<u8>, one: F) -> CodeResult<()>
    where
        F: Fn(&[u8], &mut [u8]) -> CodeResult<()> + Sync,
    {
        check_bits(bits)?;
        let start = out.len();
        out.resize(start + (self.0.len() + bits.len()) / k * n, 0);
        let r = self.encode_whole(bits, (k, n), par_min, &mut out[start..], one);
        if r.is_err() {
            out.truncate(start);
        }
        r
    }

    /// [`Self::encode`] straight into `out` (the [`Encoder::encode_into`]
    /// of a block code): takes no more of `bits` than complete the blocks
    /// `out` has room for, and says how many it took and how many channel
    /// bits it wrote.
    pub(crate) fn encode_into<F>(&mut self, bits: &[u8], (k, n): (usize, usize), par_min: usize, out: &mut [u8], one: F) -> CodeResult<(usize, usize)>
    where
        F: Fn(&[u8], &mut [u8]) -> CodeResult<()> + Sync,
    {
        let take = bits.len().min((out.len() / n * k + k - 1).saturating_sub(self.0.len()));
        let bits = &bits[..take];
        check_bits(bits)?;
        let written = (self.0.len() + take) / k * n;
        self.encode_whole(bits, (k, n), par_min, &mut out[..written], one)?;
        Ok((take, written))
    }

    /// Encode into `out`, exactly the blocks that the waiting bits and `bits` complete.
    fn encode_whole<F>(&mut self, bits: &[u8], (k, n): (usize, usize), par_min: usize, mut out: &mut [u8], one: F) -> CodeResult<()>
    where
        F: Fn(&[u8], &mut [u8]) -> CodeResult<()> + Sync,
    {
        let mut rest = bits;
        if !self.0.is_empty() {
            let take = rest.len().min(k - self.0.len());
            self.0.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            if self.0.len() < k {
                return Ok(());
            }
            let (first, others) = out.split_at_mut(n);
            one(&self.0, first)?;
            self.0.clear();
            out = others;
        }
        let whole = rest.len() / k;
        let ins = &rest[..whole * k];
        if whole < par_min.max(2) {
            out.chunks_exact_mut(n).zip(ins.chunks_exact(k)).try_for_each(|(o, b)| one(b, o))?;
        } else {
            out.par_chunks_exact_mut(n).zip(ins.par_chunks_exact(k)).try_for_each(|(o, b)| one(b, o))?;
        }
        self.0.extend_from_slice(&rest[whole * k..]);
        Ok(())
    }
}

/// Information bits must be 0 or 1.
fn check_bits(bits: &[u8]) -> CodeResult<()> {
    match first_non_bit(bits) {
        Some(i) => Err(invalid!("input bit at index {i} is {}, not 0 or 1", bits[i])),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks of 3 bits to their 3 bits and a parity bit; a block of three
    /// ones fails.
    fn parity_block(info: &[u8], coded: &mut [u8]) -> CodeResult<()> {
        if info == [1, 1, 1] {
            return Err(invalid!("three ones"));
        }
        coded[..3].copy_from_slice(info);
        coded[3] = info.iter().fold(0, |a, b| a ^ b);
        Ok(())
    }

    #[test]
    fn blocks_wait_for_their_bits_and_errors_append_nothing() {
        let mut pending = Pending::default();
        let mut out = vec![7];
        // Many whole blocks (all cores) after a waiting one, then a piece.
        let bits: Vec<u8> = (0..3 * 40 + 2).map(|i| u8::from(i % 5 == 1)).collect();
        for piece in [&bits[..2], &bits[2..]] {
            pending.encode(piece, (3, 4), 8, &mut out, parity_block).unwrap();
        }
        assert!(!pending.is_empty());
        let want: Vec<u8> = bits[..120].chunks(3).flat_map(|b| [b[0], b[1], b[2], b[0] ^ b[1] ^ b[2]]).collect();
        assert_eq!(&out[1..], &want[..]);
        let before = out.clone();
        let e = pending.encode(&[0, 1, 1, 1, 1], (3, 4), 1, &mut out, parity_block).unwrap_err().to_string();
        assert!(e.contains("three ones") && out == before, "{e}");
        let e = pending.encode(&[0, 3], (3, 4), 1, &mut out, parity_block).unwrap_err().to_string();
        assert!(e.contains("index 1 is 3") && out == before, "{e}");
    }

    #[test]
    fn straight_into_a_slice_takes_what_fits() {
        let mut pending = Pending::default();
        let mut out = [9u8; 9];
        // Room for two blocks: it takes the bits of two and two of a third.
        assert_eq!(pending.encode_into(&[1, 0, 0, 0, 1, 1, 0, 1, 0, 1], (3, 4), 1, &mut out, parity_block).unwrap(), (8, 8));
        assert_eq!(&out, &[1, 0, 0, 1, 0, 1, 1, 0, 9]);
        // No room: a bit that completes the waiting block is not taken.
        assert_eq!(pending.encode_into(&[0], (3, 4), 1, &mut out[..3], parity_block).unwrap(), (0, 0));
        assert_eq!(pending.encode_into(&[0], (3, 4), 1, &mut out[..4], parity_block).unwrap(), (1, 4));
        assert_eq!((&out[..4], pending.is_empty()), (&[0, 1, 0, 1][..], true));
    }
}
