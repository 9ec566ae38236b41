//! A turbo code: two copies of one RSC code, the second fed through an
//! interleaver, and where each of its bits sits in a sent code block.

use super::qpp::{Interleaver, MAX_BLOCK, Qpp};
use super::rsc::{Rsc, RscTrellis};
use crate::codes::error::{CodeResult, invalid};
use std::sync::Arc;

/// A parallel concatenated code of block length K: constituent code, its
/// trellis and the interleaver Π (the second encoder reads c'_i = c_{Π(i)}).
///
/// # Example
/// ```
/// use gpufec::codes::turbo::qpp::Interleaver;
/// use gpufec::codes::turbo::{Rsc, TurboCode};
/// let code = TurboCode::lte(6144).unwrap();
/// assert_eq!((code.k(), code.coded_len()), (6144, 3 * 6144 + 12));
/// let table = Interleaver::from_permutation(vec![2, 0, 3, 1]).unwrap();
/// assert_eq!(TurboCode::new(Rsc::lte(), &table).unwrap().describe(), "rsc 13/15, K 4, a table");
/// assert!(TurboCode::lte(41).is_err());
/// ```
#[derive(Debug, Clone)]
pub struct TurboCode {
    trellis: Arc<RscTrellis>,
    perm: Arc<[u32]>,
    interleaver: String,
}

impl TurboCode {
    /// The code of 3GPP TS 36.212 for block size `k` (one of the 188 sizes).
    pub fn lte(k: usize) -> CodeResult<Self> {
        Self::new(Rsc::lte(), &Interleaver::Qpp(Qpp::lte(k)?))
    }

    /// The code of `rsc` with `interleaver` of K ≤ [`MAX_BLOCK`] positions.
    pub fn new(rsc: Rsc, interleaver: &Interleaver) -> CodeResult<Self> {
        let k = interleaver.len();
        if k > MAX_BLOCK {
            return Err(invalid!("a code block of {k} bits: at most {MAX_BLOCK}"));
        }
        let name = match interleaver {
            Interleaver::Qpp(q) => format!("QPP ({}, {})", q.f1(), q.f2()),
            Interleaver::Table(_) => "a table".to_string(),
        };
        Ok(Self { trellis: Arc::new(RscTrellis::new(&rsc)), perm: interleaver.permutation().into(), interleaver: name })
    }

    /// Information bits per block.
    pub fn k(&self) -> usize {
        self.perm.len()
    }

    /// The constituent code's trellis.
    pub fn trellis(&self) -> &RscTrellis {
        &self.trellis
    }

    /// The interleaver Π as a table.
    pub fn permutation(&self) -> &[u32] {
        &self.perm
    }

    /// Where each bit of a sent block sits.
    pub fn layout(&self) -> Layout {
        Layout { k: self.k(), m: self.trellis.memory() }
    }

    /// Bits of a sent block: 3K + 4m.
    pub fn coded_len(&self) -> usize {
        self.layout().len()
    }

    /// `rsc 13/15, K 6144, QPP (263, 480)`.
    pub fn describe(&self) -> String {
        let (fb, ff) = self.trellis.code().octal();
        format!("rsc {fb}/{ff}, K {}, {}", self.k(), self.interleaver)
    }
}

/// A sent block: the streams d⁽⁰⁾ (systematic), d⁽¹⁾ (parity of the first
/// encoder), d⁽²⁾ (parity of the second), one after the other, each K bits
/// followed by its share of the 4m tail bits. The tail sequence x_K, z_K,
/// x_{K+1}, z_{K+1}, …, x'_K, z'_K, … goes round robin over d⁽⁰⁾, d⁽¹⁾,
/// d⁽²⁾, as TS 36.212 §5.1.3.2.2 places it for m = 3 (4 tail bits per
/// stream, D = K + 4).
///
/// # Example
/// ```
/// use gpufec::codes::turbo::Layout;
/// let l = Layout { k: 40, m: 3 };
/// assert_eq!((l.stream_len(0), l.len()), (44, 132));
/// // x_K is d0[K]; z'_{K+2} is d2[K+3], the last bit.
/// assert_eq!((l.tail(0), l.tail(11)), (40, 131));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Information bits.
    pub k: usize,
    /// Memory of the constituent code.
    pub m: usize,
}

impl Layout {
    /// Length of stream `i` (0, 1, 2).
    pub fn stream_len(&self, i: usize) -> usize {
        self.k + (4 * self.m + 2 - i) / 3
    }

    /// Start of stream `i`.
    pub fn stream_start(&self, i: usize) -> usize {
        (0..i).map(|j| self.stream_len(j)).sum()
    }

    /// Bits of the block.
    // A block is never empty (K ≥ 1), so an `is_empty` would always say false.
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> usize {
        3 * self.k + 4 * self.m
    }

    /// Index of bit `j` (0..4m) of the tail sequence: the first encoder's
    /// (x, z) pairs, then the second's.
    pub fn tail(&self, j: usize) -> usize {
        self.stream_start(j % 3) + self.k + j / 3
    }
}
