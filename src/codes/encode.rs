//! The encoder contract every code family implements, so that link
//! simulators, benchmarks and the generic encoder block drive any of them.

use crate::codes::error::CodeResult;

/// Turns information bits into the channel bits a transmitter sends.
pub trait Encoder: Send {
    /// Append the channel bits of `bits` (unpacked `u8` 0/1; any other value
    /// is an error and nothing is appended) to `out`.
    fn encode(&mut self, bits: &[u8], out: &mut Vec<u8>) -> CodeResult<()>;

    /// Whether the input so far ended where a stream may end (a frame
    /// boundary); always true for a streaming code.
    fn at_boundary(&self) -> bool;

    /// Information bits over channel bits sent (tails and puncturing counted):
    /// the R of Eb/N0 = Es/N0 / R.
    fn rate(&self) -> f64;
}
