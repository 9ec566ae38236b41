//! The transmit side of a CCSDS frame as an [`Encoder`]: information bits,
//! a frame's data at a time, to the bits of the marker and the randomized
//! Reed–Solomon frame (what a convolutional encoder then takes); and the
//! marker alone before each frame of another code's channel bits.

use super::frame::FrameCodec;
use super::marker::MAX_SOFT_FRAME;
use crate::codes::encode::{Encoder, Pending};
use crate::codes::error::{CodeResult, invalid};
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

/// The marker before every `frame_bits` channel bits of another code (an
/// LTE transport block's G bits, say), for a receiver's
/// [`MarkerSync`](super::MarkerSync) to find: `frame_bits` bits in,
/// `32 + frame_bits` out.
///
/// # Example
/// ```
/// use gpufec::codes::encode::Encoder;
/// use gpufec::codes::ccsds::{ASM, AsmInserter};
/// let mut e = AsmInserter::new(ASM, 3)?;
/// let mut out = Vec::new();
/// e.encode(&[1, 0, 1], &mut out)?;
/// assert_eq!((out.len(), &out[..8], &out[32..]), (35, &[0, 0, 0, 1, 1, 0, 1, 0][..], &[1, 0, 1][..]));
/// # Ok::<(), gpufec::codes::CodeError>(())
/// ```
#[derive(Debug, Clone)]
pub struct AsmInserter {
    marker: [u8; 32],
    frame_bits: usize,
    pending: Pending,
}

impl AsmInserter {
    /// `marker` (its most significant bit sent first) before every `frame_bits` (1..=[`MAX_SOFT_FRAME`]) bits.
    pub fn new(marker: u32, frame_bits: usize) -> CodeResult<Self> {
        if !(1..=MAX_SOFT_FRAME).contains(&frame_bits) {
            return Err(invalid!("a frame of {frame_bits} bits is outside 1..={MAX_SOFT_FRAME}"));
        }
        let mut bits = [0; 32];
        unpack_msb(&marker.to_be_bytes(), &mut bits);
        Ok(Self { marker: bits, frame_bits, pending: Pending::default() })
    }

    fn sizes(&self) -> (usize, usize) {
        (self.frame_bits, 32 + self.frame_bits)
    }

    /// One frame's bits after the marker.
    fn one(&self) -> impl Fn(&[u8], &mut [u8]) -> CodeResult<()> + Sync + use<> {
        let marker = self.marker;
        move |info, coded| {
            coded[..32].copy_from_slice(&marker);
            coded[32..].copy_from_slice(info);
            Ok(())
        }
    }
}

impl Encoder for AsmInserter {
    fn encode(&mut self, bits: &[u8], out: &mut Vec<u8>) -> CodeResult<()> {
        let (one, sizes) = (self.one(), self.sizes());
        self.pending.encode(bits, sizes, usize::MAX, out, one)
    }

    fn encode_into(&mut self, bits: &[u8], out: &mut [u8]) -> CodeResult<Option<(usize, usize)>> {
        let (one, sizes) = (self.one(), self.sizes());
        Ok(Some(self.pending.encode_into(bits, sizes, usize::MAX, out, one)?))
    }

    fn at_boundary(&self) -> bool {
        self.pending.is_empty()
    }

    fn unit_bits(&self) -> u64 {
        self.frame_bits as u64
    }

    fn rate(&self) -> f64 {
        let (k, n) = self.sizes();
        k as f64 / n as f64
    }
}
