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

/// A stream item the synchroniser reads: its hard bit, and the item with
/// the phase turned by 180° (a complemented marker's frame is turned back).
pub trait MarkedItem: Copy {
    /// Its hard decision, 0 or 1.
    fn bit(self) -> u8;
    /// The item as kept in a frame, complemented when its marker was.
    fn kept(self, inverted: bool) -> Self;
}

/// Hard bits: only the lowest bit is read.
impl MarkedItem for u8 {
    fn bit(self) -> u8 {
        self & 1
    }

    fn kept(self, inverted: bool) -> Self {
        self & 1 ^ u8::from(inverted)
    }
}

/// Soft bits, LLR = ln P(0)/P(1): a negative LLR is bit 1, and a complement is a change of sign.
impl MarkedItem for f32 {
    fn bit(self) -> u8 {
        u8::from(self < 0.0)
    }

    fn kept(self, inverted: bool) -> Self {
        if inverted { -self } else { self }
    }
}

/// The marker search over a stream of hard or soft bits: items in, in any
/// pieces; each frame of a fixed number of items after a marker out whole,
/// complemented back where its marker came complemented.
///
/// # Example
/// ```
/// use gpufec::codes::ccsds::{ASM, AsmSearch, MarkerSync};
/// let mut sync = MarkerSync::<f32>::new(AsmSearch::new(ASM, 0)?, 2)?;
/// // the marker complemented (a receiver locked at 180°), then a frame of two LLRs
/// let soft: Vec<f32> = (0..32).map(|i| if ASM >> (31 - i) & 1 == 1 { 3.0 } else { -3.0 }).chain([2.5, -1.5]).collect();
/// let mut frames = Vec::new();
/// sync.push(&soft, |found, items| frames.push((found.inverted, items.to_vec())));
/// assert_eq!(frames, [(true, vec![-2.5, 1.5])]);
/// # Ok::<(), gpufec::codes::CodeError>(())
/// ```
#[derive(Debug, Clone)]
pub struct MarkerSync<T> {
    search: AsmSearch,
    frame_len: usize,
    /// The latest hard bits, the newest in bit 0, and how many of them count
    /// (a marker never overlaps the frame before it).
    window: u32,
    valid: u32,
    /// Items taken so far.
    seen: u64,
    /// The frame being collected: where it starts and its items so far.
    open: Option<(Found, Vec<T>)>,
}

impl<T: MarkedItem> MarkerSync<T> {
    /// Frames of `frame_len` items (1..=[`MAX_SOFT_FRAME`]) after each marker of `search`.
    pub fn new(search: AsmSearch, frame_len: usize) -> CodeResult<Self> {
        if !(1..=MAX_SOFT_FRAME).contains(&frame_len) {
            return Err(invalid!("a frame of {frame_len} items is outside 1..={MAX_SOFT_FRAME}"));
        }
        Ok(Self { search, frame_len, window: 0, valid: 0, seen: 0, open: None })
    }

    /// Take `items`, calling `frame(where, its items)` for each frame they complete.
    pub fn push(&mut self, items: &[T], mut frame: impl FnMut(Found, &[T])) {
        for &x in items {
            self.seen += 1;
            if let Some((found, acc)) = &mut self.open {
                acc.push(x.kept(found.inverted));
                if acc.len() == self.frame_len {
                    frame(*found, acc);
                    self.open = None;
                    self.valid = 0;
                }
                continue;
            }
            self.window = self.window << 1 | u32::from(x.bit());
            self.valid = (self.valid + 1).min(32);
            if self.valid == 32
                && let Some((errors, inverted)) = self.search.test(self.window)
            {
                self.open = Some((Found { start: self.seen, errors, inverted }, Vec::with_capacity(self.frame_len)));
            }
        }
    }

    /// Whether a frame was begun and not finished (at the end of a stream:
    /// one cut short).
    pub fn in_frame(&self) -> bool {
        self.open.is_some()
    }
}

/// Items of a frame [`MarkerSync`] collects at most (2^20: an LTE transport
/// block's G bits at rate 1/3 are 18 432 and fewer).
pub const MAX_SOFT_FRAME: usize = 1 << 20;

/// The frame synchroniser of hard bits: bits in, in any pieces; each frame of
/// `frame_bytes` after a marker out whole, as bytes.
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
pub struct FrameSync(MarkerSync<u8>);

impl FrameSync {
    /// Frames of `frame_bytes` (1..=[`MAX_FRAME_BYTES`](super::MAX_FRAME_BYTES)) after each marker of `search`.
    pub fn new(search: AsmSearch, frame_bytes: usize) -> CodeResult<Self> {
        super::frame::check_frame_bytes(frame_bytes)?;
        Ok(Self(MarkerSync::new(search, 8 * frame_bytes)?))
    }

    /// Take `bits` (0/1), appending each frame they complete to `frames`.
    pub fn push(&mut self, bits: &[u8], frames: &mut Vec<SyncedFrame>) {
        self.0.push(bits, |found, bits| frames.push(SyncedFrame { found, bytes: super::encoder::pack(bits) }));
    }

    /// Whether a frame was begun and not finished (at the end of a stream:
    /// one cut short).
    pub fn in_frame(&self) -> bool {
        self.0.in_frame()
    }
}
