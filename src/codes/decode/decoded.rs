//! What a decoder hands back: bits, soft output, and a report per unit.

/// What decoding one unit found besides its bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct UnitReport {
    /// Bits the unit appended to [`Decoded::bits`].
    pub bits: usize,
    /// Decoder iterations spent on it, summed over its code blocks; 0 for a
    /// decoder that does not iterate (Viterbi).
    pub iterations: u32,
    /// Code blocks it held, each decoded on its own (a transport block's or
    /// a 5G message's; 1 for most units): iterations per code block are
    /// `iterations / blocks`.
    pub blocks: u32,
    /// The outcome of the code's own check (a CRC, the G-matrix check of a
    /// polar code), `None` for a code without one. A failed check is a frame
    /// error the receiver knows of.
    pub check: Option<bool>,
    /// Input items the unit consumed: its length, except for units that are
    /// windows of a stream ([`super::UnitInput::UpTo`]).
    pub consumed: usize,
}

/// Results of collected batches, appended batch after batch.
///
/// # Example
/// ```
/// use gpufec::codes::decode::{Decoded, UnitReport};
/// let mut d = Decoded::default();
/// d.bits.extend([0, 1, 1]);
/// d.reports.push(UnitReport { bits: 3, iterations: 0, blocks: 1, check: None, consumed: 6 });
/// assert_eq!(d.units(), 1);
/// d.clear();
/// assert!(d.bits.is_empty() && d.reports.is_empty());
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Decoded {
    /// Hard decisions, one `u8` (0 or 1) per information bit, units in order.
    pub bits: Vec<u8>,
    /// Instead of [`bits`](Self::bits), from a decoder asked to pack
    /// ([`super::BatchDecoder::pack_bits`]): hard decisions eight to a byte,
    /// the first in the most significant place, every unit whole bytes.
    pub packed: Vec<u8>,
    /// Soft output, one a-posteriori LLR per bit of [`bits`](Self::bits) (positive
    /// means 0); filled only by a decoder that gives it.
    pub soft: Vec<f32>,
    /// One report per unit, in order.
    pub reports: Vec<UnitReport>,
}

impl Decoded {
    /// Forget everything collected, keeping the allocations.
    pub fn clear(&mut self) {
        self.bits.clear();
        self.packed.clear();
        self.soft.clear();
        self.reports.clear();
    }

    /// Units reported.
    pub fn units(&self) -> usize {
        self.reports.len()
    }
}
