//! The transmit side of a CCSDS frame as an [`Encoder`]: information bits,
//! a frame's data at a time, to the bits of the marker and the randomized
//! Reed–Solomon frame (what a convolutional encoder then takes).

use super::frame::FrameCodec;
use crate::codes::encode::{Encoder, Pending};
use crate::codes::error::CodeResult;
use crate::codes::packed::{par_pack_msb, unpack_msb};

/// Frames of bits before they go on the channel: `8 · data_len` information
/// bits (the first the most significant of the first byte) become the 32
/// marker bits and `8 · frame_len` bits of the frame.
///
/// # Example
/// ```
/// use gpufec::codes::encode::Encoder;
/// use gpufec::codes::ccsds::{AsmFramer, Basis, FrameCodec, ReedSolomon};
/// let mut e = AsmFramer::new(FrameCodec::new(ReedSolomon::new(146, 1, Basis::Conventional)?, true));
/// let mut out = Vec::new();
/// e.encode(&vec![0u8; 8 * 114], &mut out)?;
/// assert_eq!(out.len(), 32 + 8 * 146);
/// assert_eq!(out[..8], [0, 0, 0, 1, 1, 0, 1, 0]); // 0x1a
/// # Ok::<(), gpufec::codes::CodeError>(())
/// ```
#[derive(Debug, Clone)]
pub struct AsmFramer {
    codec: FrameCodec,
    pending: Pending,
}

impl AsmFramer {
    /// Frames of `codec`.
    pub fn new(codec: FrameCodec) -> Self {
        Self { codec, pending: Pending::default() }
    }

    fn sizes(&self) -> (usize, usize) {
        (8 * self.codec.data_len(), 8 * (4 + self.codec.frame_len()))
    }
}

/// Bits to bytes, the first bit the most significant.
pub(crate) fn pack(bits: &[u8]) -> Vec<u8> {
    let mut bytes = vec![0; bits.len().div_ceil(8)];
    par_pack_msb(bits, &mut bytes);
    bytes
}

impl Encoder for AsmFramer {
    fn encode(&mut self, bits: &[u8], out: &mut Vec<u8>) -> CodeResult<()> {
        let codec = self.codec;
        self.pending.encode(bits, self.sizes(), 64, out, |info, coded| {
            unpack_msb(&codec.encode(&pack(info))?, coded);
            Ok(())
        })
    }

    fn encode_into(&mut self, bits: &[u8], out: &mut [u8]) -> CodeResult<Option<(usize, usize)>> {
        let codec = self.codec;
        Ok(Some(self.pending.encode_into(bits, self.sizes(), 64, out, |info, coded| {
            unpack_msb(&codec.encode(&pack(info))?, coded);
            Ok(())
        })?))
    }

    fn at_boundary(&self) -> bool {
        self.pending.is_empty()
    }

    fn unit_bits(&self) -> u64 {
        8 * self.codec.data_len() as u64
    }

    fn rate(&self) -> f64 {
        let (k, n) = self.sizes();
        k as f64 / n as f64
    }
}
