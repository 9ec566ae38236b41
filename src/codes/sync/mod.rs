//! Insertion/deletion ("sync") codes: the binary substitution, insertion and
//! deletion (BSID) channel, time-varying block codes over it (a message of N
//! q-ary symbols, symbol i sent as codeword `C_i(D)` of n bits: the
//! generalised Davey–MacKay inner code), the drift limits that bound the
//! decoder's state space, and the CPU reference MAP decoder (Briffa, "GPU
//! implementation and optimization of a flexible MAP decoder for
//! synchronization correction", Sections II–V).
//!
//! - [`channel`]: [`BsidParams`], the hard [`Bsid`] channel and [`BsidAwgn`]
//!   (BPSK over AWGN after the BSID events, LLRs out), both counter-based.
//! - [`drift`]: the drift after T bits as the channel's Markov chain, and
//!   [`StateLimits`] (m_τ± and m_n±) from an exclusion probability.
//! - [`codebook`] and [`code`]: [`Codebook`] and [`SyncCode`] (random, from a
//!   file, repeated, the Davey–MacKay watermark preset, marker bits).
//! - [`SyncEncoder`]: the shared `Encoder` contract.
//! - [`decoder`]: [`SyncMapDecoder`], a `BatchDecoder` of whole received frames
//!   or of windows of a stream (it reports where each frame ended).
//! - [`Speculative`]: a stream decoder's frames many at a time, with the
//!   bits of frame-at-a-time decoding.
//! - [`SyncLink`]: error rates against any of Pi, Pd, Ps.
//! - [`settings`]: [`SyncSettings`] and what they resolve into, [`SyncChain`].

pub mod channel;
pub mod code;
pub mod codebook;
pub mod decoder;
pub mod drift;
mod encoder;
mod link;
pub mod settings;
mod speculative;

pub use channel::{Bsid, BsidAwgn, BsidParams, MAX_INSERTION};
pub use code::{MAX_CODEWORDS, MAX_FRAME_BITS, MAX_SYMBOLS, SyncCode};
pub use codebook::{Codebook, MAX_N, MAX_Q};
pub use decoder::{DecoderConfig, Framing, MAX_FRAME_BYTES, OpCount, Storage, SyncMapDecoder};
pub use drift::{DriftLimits, MAX_CORRIDOR, MAX_STATES, StateLimits};
pub use encoder::SyncEncoder;
pub use settings::{SyncChain, SyncSettings};
pub use speculative::Speculative;
pub use link::{MakeChannel, MakeDecoder, Sweep, SyncLink};

#[cfg(test)]
mod tests;
