//! Channel models shared by every code family: BPSK, AWGN with its LLR
//! demapper, the counter-based noise under it, and the `i8` quantizer.

mod awgn;
mod bpsk;
mod noise;
mod quantize;
mod sample;

pub use awgn::{Awgn, BpskAwgn, EBN0_RANGE_DB, noise_variance};
pub use bpsk::{bpsk_map, bpsk_symbol};
pub use noise::GaussianNoise;
pub use quantize::{I8_LLR_MAX, MATCHED_SCALE_PER_VARIANCE, Quantizer, matched_clip};
pub use sample::Sample;

use crate::codes::error::CodeResult;

/// A channel model: what arrives for the items sent. Stateful (it keeps its
/// place in the stream), so that a stream sent in pieces of any size sees the
/// same channel as one sent at once.
pub trait Channel: Send {
    /// What is sent (channel bits, symbols).
    type In: Copy;
    /// What arrives (samples, LLRs, received bits).
    type Out: Copy;

    /// Send `input`, the next items of the stream, appending what arrives to
    /// `out` (as many items, or, for a channel that inserts and deletes, any
    /// number).
    fn transmit(&mut self, input: &[Self::In], out: &mut Vec<Self::Out>) -> CodeResult<()>;
}
