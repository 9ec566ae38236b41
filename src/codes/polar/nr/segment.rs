//! UCI code-block segmentation (TS 38.212 §6.3.1.2.1 and §5.2.1): a UCI
//! payload of A bits goes in one code block, or in two when A ≥ 1013, or
//! A ≥ 360 and E_UCI ≥ 1088; each block gets a CRC of 6 (A ≤ 19) or 11 bits.

use crate::codes::crc::{CRC6, CRC11, Crc};
use crate::codes::error::{CodeResult, invalid};

/// The smallest UCI payload a polar code carries (smaller ones use the
/// small block codes of §5.3.3).
pub const MIN_UCI_A: usize = 12;
/// The largest UCI payload (§6.3.1.1): 1706 bits.
pub const MAX_UCI_A: usize = 1706;

/// How a UCI payload of A bits is split into code blocks.
///
/// # Example
/// ```
/// use gpufec::codes::polar::nr::UciSegmentation;
/// let s = UciSegmentation::new(1013, 2000).unwrap();
/// // Two blocks of ⌈1013/2⌉ = 507 bits, the first led by one filler zero.
/// assert_eq!((s.blocks(), s.filler(), s.block_payload(), s.block_k(), s.block_e()), (2, 1, 507, 518, 1000));
/// assert_eq!(s.crc().name(), "CRC11");
/// ```
#[derive(Debug, Clone, Copy)]
pub struct UciSegmentation {
    a: usize,
    blocks: usize,
    e_uci: usize,
    crc: &'static Crc,
}

impl UciSegmentation {
    /// The segmentation of A = `a` bits (12..=1706) sent in E_UCI = `e_uci` bits.
    pub fn new(a: usize, e_uci: usize) -> CodeResult<Self> {
        if !(MIN_UCI_A..=MAX_UCI_A).contains(&a) {
            return Err(invalid!("a UCI payload of A = {a} bits: 5G polar codes carry {MIN_UCI_A}..={MAX_UCI_A} (fewer go by the small block codes)"));
        }
        let blocks = if a >= 1013 || (a >= 360 && e_uci >= 1088) { 2 } else { 1 };
        let crc = if a <= 19 { &CRC6 } else { &CRC11 };
        Ok(Self { a, blocks, e_uci, crc })
    }

    /// C: code blocks.
    pub fn blocks(&self) -> usize {
        self.blocks
    }

    /// A' − A: zeros in front of the first block's bits.
    pub fn filler(&self) -> usize {
        self.a.next_multiple_of(self.blocks) - self.a
    }

    /// A'/C: payload bits per block.
    pub fn block_payload(&self) -> usize {
        self.a.div_ceil(self.blocks)
    }

    /// K_r: bits per block with the CRC.
    pub fn block_k(&self) -> usize {
        self.block_payload() + self.crc.width()
    }

    /// E_r = ⌊E_UCI / C⌋: bits each block is sent in.
    pub fn block_e(&self) -> usize {
        self.e_uci / self.blocks
    }

    /// The CRC of each block.
    pub fn crc(&self) -> &'static Crc {
        self.crc
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_standards_thresholds() {
        let s = |a, e| UciSegmentation::new(a, e).unwrap();
        assert_eq!((s(360, 1087).blocks(), s(360, 1088).blocks(), s(359, 5000).blocks()), (1, 2, 1));
        assert_eq!((s(1012, 100).blocks(), s(1013, 100).blocks()), (1, 2));
        assert_eq!((s(19, 60).crc().width(), s(20, 60).crc().width()), (6, 11));
        assert_eq!(s(361, 2000).filler(), 1);
        assert_eq!(s(361, 2000).block_e(), 1000);
        assert!(UciSegmentation::new(11, 100).is_err());
        assert!(UciSegmentation::new(1707, 100_000).is_err());
    }
}
