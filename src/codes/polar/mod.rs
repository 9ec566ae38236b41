//! Polar codes: construction (the 5G NR reliability sequence, Gaussian
//! approximation, a frozen set from a file), the encoder x = u·G
//! (non-systematic and systematic), the 5G NR chain of TS 38.212 (CRC,
//! input interleaver, parity-check bits, rate matching, channel interleaver,
//! UCI segmentation, DCI), the CPU reference decoders (belief propagation in
//! `f32` and the `i8` model the GPU computes, SC, CRC-aided SCL) and the
//! links that simulate them.
//!
//! One convention throughout: G = F^⊗m with F = [[1, 0], [1, 1]] and no bit
//! reversal, so bit i of u is bit channel i of TS 38.212 (§5.3.1.2), and
//! codeword bit i is d_i there.

mod check;
mod code;
mod construct;
mod decoder;
mod encoder;
mod finished;
mod ga;
mod link;
pub mod nr;
mod sequence;
mod settings;
mod spec;
pub mod transform;

pub use check::InfoCheck;
pub use code::{BitKind, PolarCode, check_sizes};
pub use construct::{Construction, MAX_FROZEN_FILE_BYTES, read_frozen_file};
pub use decoder::{Algorithm, BP_ALPHA, BpConfig, BpPrecision, CpuPolar, DEFAULT_BATCH_CODEWORDS, EarlyStop, I8_MODEL_F32_SCALE, MAX_ITERATIONS, MAX_LIST, i8_model_f32_quantizer};
pub use encoder::{PolarEncoder, codeword_of_info};
pub use ga::{bit_channel_means, ga_reliability};
pub use link::{FramesEncoder, PolarFrames, PolarLink};
pub use settings::{CrcName, DEFAULT_GA_DB, DEFAULT_N, MessageKind, PolarChain, PolarSettings, Precision, StopWhen};
pub use sequence::{NR_MAX_N, nr_reliability};
pub use spec::{PcRegister, PolarSpec};

/// log2 of the shortest code: N = 8.
pub const MIN_LOG_N: u32 = 3;
/// log2 of the longest code: N = 2^16.
pub const MAX_LOG_N: u32 = 16;
/// Shortest code length.
pub const MIN_N: usize = 1 << MIN_LOG_N;
/// Longest code length: the decoders' scratch for one codeword stays a few
/// MiB (the GPU decoders go to 2^15).
pub const MAX_N: usize = 1 << MAX_LOG_N;

/// Seeded random bits for the family's tests.
#[cfg(test)]
pub(crate) fn test_bits(n: usize, seed: u64) -> Vec<u8> {
    let mut bits = vec![0; n];
    crate::codes::bits::BitSource::new(seed).fill(&mut bits);
    bits
}
