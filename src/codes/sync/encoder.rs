//! Information bits to codewords of a time-varying block code.

use super::code::SyncCode;
use crate::codes::bits::first_non_bit;
use crate::codes::encode::Encoder;
use crate::codes::error::{CodeResult, invalid};

/// Encodes information bits, log2 q at a time (the first the most
/// significant bit of the symbol), symbol i of each frame by codebook C_i.
/// Input may come in pieces of any size; a frame ends after N symbols.
///
/// # Example
/// ```
/// use gpufec::codes::encode::Encoder;
/// use gpufec::codes::sync::{Codebook, SyncCode, SyncEncoder};
/// let book = Codebook::new(3, vec![0b000, 0b011, 0b101, 0b110]).unwrap();
/// let mut enc = SyncEncoder::new(SyncCode::repeated(book, 2).unwrap());
/// let mut out = Vec::new();
/// enc.encode(&[1], &mut out).unwrap(); // half a symbol: nothing yet
/// assert!(out.is_empty() && !enc.at_boundary());
/// enc.encode(&[0, 0, 1], &mut out).unwrap(); // symbols 2 and 1
/// assert_eq!(out, vec![1, 0, 1, 0, 1, 1]);
/// assert!(enc.at_boundary());
/// ```
#[derive(Debug, Clone)]
pub struct SyncEncoder {
    code: SyncCode,
    /// Index of the next symbol in its frame.
    index: usize,
    /// Bits of the symbol being gathered, and how many.
    pending: usize,
    have: usize,
}

impl SyncEncoder {
    /// An encoder of `code`, at the start of a frame.
    pub fn new(code: SyncCode) -> Self {
        Self { code, index: 0, pending: 0, have: 0 }
    }

    /// The code it encodes.
    pub fn code(&self) -> &SyncCode {
        &self.code
    }
}

impl Encoder for SyncEncoder {
    fn encode(&mut self, bits: &[u8], out: &mut Vec<u8>) -> CodeResult<()> {
        if let Some(i) = first_non_bit(bits) {
            return Err(invalid!("information bit at index {i} is {}, not 0 or 1", bits[i]));
        }
        let k = self.code.symbol_bits();
        out.reserve((self.have + bits.len()) / k * self.code.n());
        for &b in bits {
            self.pending = self.pending << 1 | usize::from(b);
            self.have += 1;
            if self.have == k {
                self.code.codebook(self.index).push_bits(self.pending, out);
                self.index = (self.index + 1) % self.code.symbols();
                (self.pending, self.have) = (0, 0);
            }
        }
        Ok(())
    }

    fn at_boundary(&self) -> bool {
        self.index == 0 && self.have == 0
    }

    fn unit_bits(&self) -> u64 {
        (self.code.symbols() * self.code.symbol_bits()) as u64
    }

    fn rate(&self) -> f64 {
        self.code.rate()
    }
}
