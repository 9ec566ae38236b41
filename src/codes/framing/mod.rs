//! Cutting a stream into the work units of a decoder.
//!
//! A [`Cutter`] takes a stream in pieces of any size and cuts whole units out
//! of it. Each family brings its own: overlapping Viterbi tiles
//! ([`crate::codes::conv::Tiler`]), code blocks of a fixed length or of
//! lengths that marks in the stream announce ([`BlockCutter`]), and windows
//! whose start depends on how much the decoder found the previous unit to
//! consume ([`WindowCutter`], for insertion/deletion channels). The framer
//! block, the decoder block (which may cut its own input) and the link
//! simulators all run the same cutters.

mod blocks;
mod window;

pub use blocks::BlockCutter;
pub use window::WindowCutter;

use crate::codes::decode::UnitSpan;
use crate::codes::error::CodeResult;

/// Largest unit a cutter accepts, in items: a bound on what one unit can
/// make any block or simulator allocate.
pub const MAX_UNIT_ITEMS: usize = 1 << 26;

/// One unit a cutter cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CutUnit {
    /// Where it lies in [`Cut::items`], and its format.
    pub span: UnitSpan,
    /// How many of its decoded bits are real, when fewer than all (the
    /// padded last unit of a stream); the rest are dropped.
    pub valid_bits: Option<usize>,
    /// Stream position of the first item whose bits this unit decodes (its
    /// own items, without the overlap it shares with its neighbours).
    pub origin: u64,
    /// How many own items it has from `origin` on; `None` when only the
    /// decoder knows (the items its report says it consumed).
    pub own: Option<usize>,
}

/// Units cut so far: their items back to back, and where each lies.
#[derive(Debug, Clone)]
pub struct Cut<T> {
    /// The units' items.
    pub items: Vec<T>,
    /// The units, in stream order.
    pub units: Vec<CutUnit>,
}

impl<T> Default for Cut<T> {
    fn default() -> Self {
        Self { items: Vec::new(), units: Vec::new() }
    }
}

impl<T> Cut<T> {
    /// Forget every unit, keeping the allocations.
    pub fn clear(&mut self) {
        self.items.clear();
        self.units.clear();
    }

    /// Record the last `len` items appended as one unit.
    pub fn close_unit(&mut self, len: usize, format: u16, origin: u64, own: Option<usize>) {
        let span = UnitSpan { start: self.items.len() - len, len, format };
        self.units.push(CutUnit { span, valid_bits: None, origin, own });
    }
}

/// A framing mark in a stream: a unit starts at offset `at` of the piece
/// being cut (a framer's or a burst detector's tags). What it leaves out keeps
/// its value from the mark before.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Mark {
    /// Offset in the piece handed to [`Cutter::cut`].
    pub at: usize,
    /// Items of the units from here on.
    pub len: Option<usize>,
    /// Their format.
    pub format: Option<u16>,
    /// Real bits of the unit starting here, when it is padded.
    pub valid_bits: Option<usize>,
}

/// How many units [`Cutter::cut_in_place`] should cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InPlace {
    /// Cut nothing unless at least this many units are whole.
    pub min_units: usize,
    /// At most this many units.
    pub max_units: usize,
    /// At most this many items in all the units cut (overlaps counted per unit).
    pub max_items: usize,
}

/// Cuts a stream into work units.
pub trait Cutter<T>: Send {
    /// The largest unit it cuts, in items.
    fn max_unit_items(&self) -> usize;

    /// Whether its units are the stream itself, back to back, of one length
    /// and format, with nothing shared or added (fixed blocks): a stream is
    /// then its own units and needs no framer's marks. Not so for tiles,
    /// which overlap, or windows, which the decoder learns.
    fn plain(&self) -> bool {
        false
    }

    /// Take the next `input` items of the stream (with the framing `marks`
    /// found among them, in order) and append every unit that became whole
    /// to `out`.
    fn cut(&mut self, input: &[T], marks: &[Mark], out: &mut Cut<T>) -> CodeResult<()>;

    /// The stream ended: append what remains as units. A stream that ended
    /// inside a unit is an error, but every whole unit before it is still
    /// appended, so that it is decoded and delivered before the run fails.
    fn end(&mut self, out: &mut Cut<T>) -> CodeResult<()>;

    /// Whether it needs the decoder's reports ([`learn`](Self::learn)) to
    /// know where a unit ends, so that it must run inside the decoder block.
    fn learns(&self) -> bool {
        false
    }

    /// Whether it waits to [`learn`](Self::learn) how much its last unit
    /// consumed before it can cut the next.
    fn awaiting(&self) -> bool {
        false
    }

    /// The oldest unit it awaits consumed `items` items of the stream; cut
    /// the next unit to `out` if its items are there.
    fn learn(&mut self, items: usize, out: &mut Cut<T>) -> CodeResult<()> {
        let _ = (items, out);
        Ok(())
    }

    /// Whether it can cut units in place ([`cut_in_place`](Self::cut_in_place)),
    /// at least once its first units are cut.
    fn cuts_in_place(&self) -> bool {
        false
    }

    /// Cut units without copying them: of the next `available` items of the
    /// stream (from where it stands), append the units that lie whole inside
    /// them as `want` asks, their spans relative to those items, and return
    /// how many leading items no later unit reads (the caller drops them from
    /// its stream once the units are decoded and gives the rest again).
    /// `None` when it cannot now (a unit that needs padding, items held from
    /// an earlier piece): the caller then cuts by copying ([`cut`](Self::cut))
    /// and [`release`](Self::release)s what is held.
    fn cut_in_place(&mut self, available: usize, want: InPlace, out: &mut Vec<CutUnit>) -> Option<usize> {
        let _ = (available, want, out);
        None
    }

    /// Forget the items held from earlier pieces that no unit has taken and
    /// return how many: the caller keeps them in its stream and gives them
    /// again. A cutter that cannot give items back returns 0 and keeps them.
    fn release(&mut self) -> usize {
        0
    }

    /// One line saying how it cuts, e.g. `tiles f=256 v1=20 v2=20, 64 per unit`.
    fn describe(&self) -> String;
}

#[cfg(test)]
mod tests;
