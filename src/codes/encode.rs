//! The encoder contract every code family implements, so that link
//! simulators, benchmarks and the generic encoder block drive any of them.

use crate::codes::error::CodeResult;

/// Turns information bits into the channel bits a transmitter sends.
pub trait Encoder: Send {
    /// Append the channel bits of `bits` (unpacked `u8` 0/1; any other value
    /// is an error and nothing is appended) to `out`.
    fn encode(&mut self, bits: &[u8], out: &mut Vec<u8>) -> CodeResult<()>;

    /// Encode as many of the first `bits` as `out` has room for, straight
    /// into it: `Some((bits taken, channel bits written))`, `(0, 0)` when
    /// `out` cannot hold the output of one bit. Only an encoder whose output
    /// is a fixed multiple of its input (a streaming convolutional code)
    /// can; the others say `None`, and the caller uses
    /// [`encode`](Self::encode). A value other than 0 or 1 among the bits
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
