//! The turbo encoder: blocks of K information bits to sent blocks of
//! 3K + 4m bits in the family's [`Layout`].

use super::code::{Layout, TurboCode};
use crate::codes::bits::first_non_bit;
use crate::codes::encode::Encoder;
use crate::codes::error::{CodeError, CodeResult};
use rayon::prelude::*;

/// Encodes a stream of information bits block by block; bits of an
/// unfinished block wait for the rest.
///
/// # Example
/// ```
/// use gpufec::codes::encode::Encoder;
/// use gpufec::codes::turbo::qpp::Interleaver;
/// use gpufec::codes::turbo::{Rsc, TurboCode, TurboEncoder};
/// let code = TurboCode::new(Rsc::lte(), &Interleaver::from_permutation(vec![0, 3, 2, 1]).unwrap()).unwrap();
/// let mut enc = TurboEncoder::new(code);
/// let mut out = Vec::new();
/// enc.encode(&[1, 0, 1], &mut out).unwrap();
/// assert!(out.is_empty() && !enc.at_boundary());
/// enc.encode(&[1], &mut out).unwrap();
/// assert_eq!(out.len(), 3 * 4 + 12);
/// assert_eq!(&out[..4], &[1, 0, 1, 1]); // d0 starts with the systematic bits
/// ```
#[derive(Debug, Clone)]
pub struct TurboEncoder {
    code: TurboCode,
    pending: Vec<u8>,
}

impl TurboEncoder {
    /// An encoder of `code`.
    pub fn new(code: TurboCode) -> Self {
        Self { code, pending: Vec::new() }
    }

    /// The code.
    pub fn code(&self) -> &TurboCode {
        &self.code
    }
}

/// Encode one block of K bits into `out` (`Layout::len` bits).
pub fn encode_block(code: &TurboCode, bits: &[u8], out: &mut [u8]) {
    let l: Layout = code.layout();
    let (k, t) = (l.k, code.trellis());
    let perm = code.permutation();
    let (mut z1, mut z2) = (Vec::with_capacity(k), Vec::with_capacity(k));
    let (mut tail1, mut tail2) = (Vec::with_capacity(l.m), Vec::with_capacity(l.m));
    t.encode(bits.iter().copied(), &mut z1, &mut tail1);
    t.encode(perm.iter().map(|&p| bits[p as usize]), &mut z2, &mut tail2);
    out[..k].copy_from_slice(bits);
    out[l.stream_start(1)..][..k].copy_from_slice(&z1);
    out[l.stream_start(2)..][..k].copy_from_slice(&z2);
    for (j, &(x, z)) in tail1.iter().chain(&tail2).enumerate() {
        out[l.tail(2 * j)] = x;
        out[l.tail(2 * j + 1)] = z;
    }
}

impl Encoder for TurboEncoder {
    fn encode(&mut self, bits: &[u8], out: &mut Vec<u8>) -> CodeResult<()> {
        if let Some(i) = first_non_bit(bits) {
            return Err(CodeError::InvalidParameter(format!("input bit at index {i} is {}, not 0 or 1", bits[i])));
        }
        let (k, n) = (self.code.k(), self.code.coded_len());
        let mut rest = bits;
        if !self.pending.is_empty() {
            let take = rest.len().min(k - self.pending.len());
            self.pending.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            if self.pending.len() == k {
                let start = out.len();
                out.resize(start + n, 0);
                encode_block(&self.code, &self.pending, &mut out[start..]);
                self.pending.clear();
            }
        }
        let whole = rest.len() / k;
        let start = out.len();
        out.resize(start + whole * n, 0);
        let code = &self.code;
        out[start..].par_chunks_mut(n).zip(rest.par_chunks_exact(k)).for_each(|(o, b)| encode_block(code, b, o));
        self.pending.extend_from_slice(&rest[whole * k..]);
        Ok(())
    }

    fn at_boundary(&self) -> bool {
        self.pending.is_empty()
    }

    fn rate(&self) -> f64 {
        self.code.k() as f64 / self.code.coded_len() as f64
    }
}
