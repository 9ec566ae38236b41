//! The attached sync marker (ASM) and the frame synchroniser that finds it
//! in a stream of hard bits: a marker with at most a given number of bit
//! errors, or its complement (the BPSK phase ambiguity: the whole stream
//! inverted), starts a frame of a fixed length; the frame's bits are taken
//! (complemented back when the marker was) and the search goes on after it.

use crate::codes::error::{CodeResult, invalid};

/// CCSDS 131.0-B's 32-bit marker before each frame of a convolutionally
/// coded or uncoded channel.
pub const ASM: u32 = 0x1ACF_FC1D;

/// Bit errors a marker may have at most. With e allowed, a random 32-bit
/// window passes for the marker or its complement with probability
/// 2·Σ_{i≤e} C(32, i) / 2^32: 1.9·10⁻⁵ at e = 4, 2.2·10⁻³ at e = 8.
pub const MAX_MARKER_ERRORS: u32 = 8;

/// The marker and how many bit errors it may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AsmSearch {
    marker: u32,
    max_errors: u32,
}

impl AsmSearch {
    /// Find `marker` with at most `max_errors` (up to [`MAX_MARKER_ERRORS`]) bits wrong.
    pub fn new(marker: u32, max_errors: u32) -> CodeResult<Self> {
        if max_errors > MAX_MARKER_ERRORS {
            return Err(invalid!("{max_errors} marker bit errors allowed is above the limit of {MAX_MARKER_ERRORS} (false markers grow as C(32, e)/2^32)"));
        }
        Ok(Self { marker, max_errors })
    }

    /// The last 32 bits (the latest in bit 0) against the marker: `Some`
    /// with the errors and whether the window is the marker's complement.
    pub fn test(&self, window: u32) -> Option<(u32, bool)> {
        let errors = (window ^ self.marker).count_ones();
        if errors <= self.max_errors {
            return Some((errors, false));
        }
        (32 - errors <= self.max_errors).then_some((32 - errors, true))
    }
}

/// Where a frame was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Found {
    /// Index in the stream of the frame's first bit (just after its marker).
    pub start: u64,
    /// Bit errors of its marker.
    pub errors: u32,
    /// Whether the marker came complemented (the bits are complemented back).
    pub inverted: bool,
}

/// A frame cut from the stream: where, and its bytes (eight bits to a byte,
/// the first in the most significant place).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncedFrame {
    /// Where its marker was.
    pub found: Found,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

/// The frame synchroniser: bits in, in any pieces; each frame of
/// `frame_bytes` after a marker out whole.
///
/// # Example
/// ```
/// use gpufec::codes::ccsds::{ASM, AsmSearch, FrameSync};
/// let mut finder = FrameSync::new(AsmSearch::new(ASM, 2)?, 2)?;
/// let bytes = [0x55u8, 0x1a, 0xcf, 0xfc, 0x1c, 0xbe, 0xef]; // one marker bit wrong
/// let bits: Vec<u8> = bytes.iter().flat_map(|b| (0..8).rev().map(move |i| b >> i & 1)).collect();
/// let (mut frames, half) = (Vec::new(), bits.len() / 2);
/// finder.push(&bits[..half], &mut frames);
/// finder.push(&bits[half..], &mut frames);
/// assert_eq!(frames[0].bytes, [0xbe, 0xef]);
/// assert_eq!((frames[0].found.start, frames[0].found.errors), (40, 1));
/// # Ok::<(), gpufec::codes::CodeError>(())
/// ```
#[derive(Debug, Clone)]
pub struct FrameSync {
    search: AsmSearch,
    frame_bits: usize,
    /// The latest bits, the newest in bit 0, and how many of them count
    /// (a marker never overlaps the frame before it).
    window: u32,
    valid: u32,
    /// Bits taken so far.
    seen: u64,
    /// The frame being collected: where it starts and its bits so far.
    open: Option<(Found, Vec<u8>)>,
}

impl FrameSync {
    /// Frames of `frame_bytes` (1..=[`MAX_FRAME_BYTES`](super::MAX_FRAME_BYTES)) after each marker of `search`.
    pub fn new(search: AsmSearch, frame_bytes: usize) -> CodeResult<Self> {
        super::frame::check_frame_bytes(frame_bytes)?;
        Ok(Self { search, frame_bits: 8 * frame_bytes, window: 0, valid: 0, seen: 0, open: None })
    }

    /// Take `bits` (0/1), appending each frame they complete to `frames`.
    pub fn push(&mut self, bits: &[u8], frames: &mut Vec<SyncedFrame>) {
        for &b in bits {
            let b = b & 1;
            self.seen += 1;
            if let Some((found, acc)) = &mut self.open {
                acc.push(b ^ u8::from(found.inverted));
                if acc.len() == self.frame_bits {
                    frames.push(SyncedFrame { found: *found, bytes: super::encoder::pack(acc) });
                    self.open = None;
                    self.valid = 0;
                }
                continue;
            }
            self.window = self.window << 1 | u32::from(b);
            self.valid = (self.valid + 1).min(32);
            if self.valid == 32
                && let Some((errors, inverted)) = self.search.test(self.window)
            {
                self.open = Some((Found { start: self.seen, errors, inverted }, Vec::with_capacity(self.frame_bits)));
            }
        }
    }

    /// Whether a frame was begun and not finished (at the end of a stream:
    /// one cut short).
    pub fn in_frame(&self) -> bool {
        self.open.is_some()
    }
}
