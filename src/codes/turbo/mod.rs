//! LTE turbo codes (3GPP TS 36.212 §5.1.3.2) and the transport-block chain
//! around them: the QPP interleaver, the constituent RSC codes, the encoder,
//! CRC24A/B, code-block segmentation, rate matching, and the CPU reference
//! decoders (serial, and the sub-block model the GPU computes).
//!
//! One layout throughout: a code block of K bits is sent as the three
//! streams d⁽⁰⁾, d⁽¹⁾, d⁽²⁾ of §5.1.3.2 (D = K + 4 bits each, tails
//! included), one after the other: `[d0 | d1 | d2]`, 3K + 12 bits. Rate
//! matching reads that layout and de-rate-matching writes it, so encoder,
//! decoders and GPU launcher share it.

pub mod qpp;
pub mod rate_match;
pub mod segment;

mod code;
pub mod decoder;
mod encoder;
mod link;
mod rsc;
mod settings;
mod transport;
mod transport_decoder;

pub use code::{Layout, TurboCode};
pub use decoder::{CpuTurbo, DecoderConfig, EarlyStop, Guard, MaxStar};
pub use encoder::{TurboEncoder, encode_block};
pub use link::TurboLink;
pub use transport::{KNOWN_ZERO_LLR, MAX_A, MAX_G, TransportBlock, TransportEncoder, known_zero};
pub use transport_decoder::TransportDecoder;
pub use rsc::{MAX_MEMORY, MIN_MEMORY, Rsc, RscTrellis};
pub use settings::{Dematching, Sent, StopWhen, TurboChain, TurboSettings};

/// Seeded pseudo-random bits for the family's tests (xorshift64).
#[cfg(test)]
pub(crate) fn test_bits(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 40) as u8 & 1
        })
        .collect()
}
