//! Where the metrics of a frame lie: the state and corridor indices of the
//! decoder's limits, and which of them a received block of a given length
//! allows.

use crate::codes::sync::{StateLimits, SyncCode};

/// The sizes of one code's metrics under one set of limits.
///
/// States are drifts m in [m_τ⁻, m_τ⁺] at index k = m − m_τ⁻; drift changes
/// across a codeword are δ in [m_n⁻, m_n⁺] at index e = δ − m_n⁻. γ_i is
/// stored [k][e][D] (D innermost, as the seed lays it out), α and β [i][k].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Geometry {
    pub n: usize,
    pub q: usize,
    pub symbols: usize,
    /// M_τ.
    pub states: usize,
    /// m_τ⁻.
    pub lo: i32,
    /// M_n.
    pub corridor: usize,
    /// m_n⁻.
    pub corridor_lo: i32,
}

impl Geometry {
    pub fn new(code: &SyncCode, limits: &StateLimits) -> Self {
        Self {
            n: code.n(),
            q: code.q(),
            symbols: code.symbols(),
            states: limits.frame.states(),
            lo: limits.frame.lo,
            corridor: limits.codeword.states(),
            corridor_lo: limits.codeword.lo,
        }
    }

    /// τ = nN.
    pub fn tau(&self) -> usize {
        self.n * self.symbols
    }

    /// Values of γ for one index: M_τ·M_n·q.
    pub fn gamma_len(&self) -> usize {
        self.states * self.corridor * self.q
    }

    /// Received position where codeword `i` starts in state `k` (may be
    /// negative: a state no path reaches).
    pub fn start_unchecked(&self, i: usize, k: usize) -> i64 {
        (self.n * i) as i64 + k as i64 + i64::from(self.lo)
    }

    /// That position, if it lies within the `avail` received samples.
    pub fn start(&self, i: usize, k: usize, avail: usize) -> Option<usize> {
        let a = self.start_unchecked(i, k);
        (0..=avail as i64).contains(&a).then_some(a as usize)
    }

    /// Whether a codeword started at `a` in state `k` may end with drift
    /// change index `e`: the end state within the limits, its samples
    /// received.
    pub fn end_valid(&self, k: usize, e: usize, a: usize, avail: usize) -> bool {
        let end_state = k as i64 + e as i64 + i64::from(self.corridor_lo);
        let end = a as i64 + self.n as i64 + e as i64 + i64::from(self.corridor_lo);
        (0..self.states as i64).contains(&end_state) && end <= avail as i64
    }

    /// The state index that drift change index `e` leads to from `k`.
    pub fn next_state(&self, k: usize, e: usize) -> Option<usize> {
        let s = k as i64 + e as i64 + i64::from(self.corridor_lo);
        (0..self.states as i64).contains(&s).then_some(s as usize)
    }
}
