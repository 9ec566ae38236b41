//! A CCSDS frame as sent: the data, Reed–Solomon parity after it, the whole
//! randomized, the marker in front (131.0-B §§4, 9, 10). [`FrameCodec`]
//! builds one from data and takes a received one (after its marker) back.

use super::marker::ASM;
use super::randomizer::randomize;
use super::rs::{ReedSolomon, Uncorrectable};
use crate::codes::error::{CodeResult, invalid};

/// Bytes a frame may have at most: eight interleaved whole codewords.
pub const MAX_FRAME_BYTES: usize = super::rs::MAX_INTERLEAVE * super::rs::N;

/// Refuse a frame length outside 1..=[`MAX_FRAME_BYTES`].
pub(super) fn check_frame_bytes(bytes: usize) -> CodeResult<()> {
    if !(1..=MAX_FRAME_BYTES).contains(&bytes) {
        return Err(invalid!("a frame of {bytes} bytes is outside 1..={MAX_FRAME_BYTES}"));
    }
    Ok(())
}

/// What became of a received frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameOutcome {
    /// Reed–Solomon passed, after correcting this many symbols.
    Corrected(usize),
    /// A codeword had more errors than Reed–Solomon corrects.
    Failed(Uncorrectable),
}

/// Reed–Solomon and the randomizer of a CCSDS frame.
///
/// # Example
/// ```
/// use gpufec::codes::ccsds::{Basis, FrameCodec, FrameOutcome, ReedSolomon};
/// let codec = FrameCodec::new(ReedSolomon::new(146, 1, Basis::Conventional)?, true);
/// let sent = codec.encode(&[1u8; 114])?;              // marker, then 146 randomized bytes
/// assert_eq!((sent.len(), &sent[..4]), (150, &[0x1a, 0xcf, 0xfc, 0x1d][..]));
/// let mut received = sent[4..].to_vec();
/// received[9] ^= 0xff;
/// assert_eq!(codec.decode(&mut received), FrameOutcome::Corrected(1));
/// assert_eq!(&received[..114], &[1u8; 114][..]);
/// # Ok::<(), gpufec::codes::CodeError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameCodec {
    rs: ReedSolomon,
    randomized: bool,
}

impl FrameCodec {
    /// Frames of `rs`, randomized or not.
    pub fn new(rs: ReedSolomon, randomized: bool) -> Self {
        Self { rs, randomized }
    }

    /// The Reed–Solomon code.
    pub fn rs(&self) -> &ReedSolomon {
        &self.rs
    }

    /// Bytes after the marker.
    pub fn frame_len(&self) -> usize {
        self.rs.frame_len()
    }

    /// Data bytes of a frame.
    pub fn data_len(&self) -> usize {
        self.rs.data_len()
    }

    /// The marker and the frame of `data` (exactly [`data_len`](Self::data_len) bytes).
    pub fn encode(&self, data: &[u8]) -> CodeResult<Vec<u8>> {
        let mut frame = self.rs.encode(data)?;
        if self.randomized {
            randomize(&mut frame);
        }
        let mut sent = ASM.to_be_bytes().to_vec();
        sent.extend_from_slice(&frame);
        Ok(sent)
    }

    /// Take back a received frame (the [`frame_len`](Self::frame_len) bytes
    /// after its marker) in place: derandomized and corrected, its data the
    /// first [`data_len`](Self::data_len) bytes when Reed–Solomon passes.
    pub fn decode(&self, frame: &mut [u8]) -> FrameOutcome {
        if self.randomized {
            randomize(frame);
        }
        match self.rs.decode(frame) {
            Ok(n) => FrameOutcome::Corrected(n),
            Err(e) => FrameOutcome::Failed(e),
        }
    }
}
