//! Rate matching of 5G polar codes (TS 38.212 §5.4.1) and its inverse.
//!
//! The N coded bits d pass the sub-block interleaver (y_j = d_{J(j)}, 32
//! sub-blocks, §5.4.1.1), E bits are selected from y by repetition,
//! puncturing (the last E) or shortening (the first E) (§5.4.1.2), and the
//! uplink's triangular channel interleaver reorders them (§5.4.1.3). None
//! of it depends on the bits, so [`RateMatch`] works it out once as a map:
//! sent bit i carries coded bit `map()[i]`. Selection gathers by the map,
//! recovery scatters (adding the LLRs of repeated bits) and marks the
//! shortened bits as known zeros; punctured bits stay at LLR 0.

use crate::codes::bits::first_non_bit;
use crate::codes::error::{CodeError, CodeResult, invalid};
use crate::codes::llr::{Llr, check_finite};

/// Most bits one code block is sent in: E ≤ 8192 (TS 38.212 §5.4.1, the
/// bound on E_r of §6.3.1.4 and §6.3.2.4).
pub const MAX_E: usize = 8192;

/// Table 5.4.1.1-1: the sub-block interleaver pattern P(i).
const SUBBLOCK_PATTERN: [usize; 32] = [0, 1, 2, 4, 3, 5, 6, 7, 8, 16, 9, 17, 10, 18, 11, 19, 12, 20, 13, 21, 14, 22, 15, 23, 24, 25, 26, 28, 27, 29, 30, 31];

/// J(j) of §5.4.1.1 for a code of `n` bits (a power of two, at least 32):
/// y_j = d_{J(j)}.
pub fn subblock_index(n: usize, j: usize) -> usize {
    let b = n / 32;
    SUBBLOCK_PATTERN[j / b] * b + j % b
}

/// How §5.4.1.2 selects E bits from the N of the circular buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Selection {
    /// E ≥ N: the buffer over and over.
    Repetition,
    /// E < N and K/E ≤ 7/16: the last E bits.
    Puncturing,
    /// E < N and K/E > 7/16: the first E bits.
    Shortening,
}

impl Selection {
    /// The selection of `k` bits sent in `e` by a mother code of `n`.
    pub fn of(k: usize, e: usize, n: usize) -> Self {
        if e >= n {
            Selection::Repetition
        } else if 16 * k <= 7 * e {
            Selection::Puncturing
        } else {
            Selection::Shortening
        }
    }

    /// `repetition`, `puncturing` or `shortening`.
    pub fn name(self) -> &'static str {
        match self {
            Selection::Repetition => "repetition",
            Selection::Puncturing => "puncturing",
            Selection::Shortening => "shortening",
        }
    }
}

/// The rate matching of one code block: which coded bit each sent bit carries.
///
/// # Example
/// ```
/// use gpufec::codes::polar::nr::{RateMatch, Selection};
/// let rm = RateMatch::new(20, 60, 64, true).unwrap();
/// assert_eq!(rm.selection(), Selection::Puncturing);
/// let d: Vec<u8> = (0..64).map(|i| (i % 3 == 0) as u8).collect();
/// let mut sent = Vec::new();
/// rm.select(&d, &mut sent).unwrap();
/// let llrs: Vec<f32> = sent.iter().map(|&b| 1.0 - 2.0 * f32::from(b)).collect();
/// let mut back = vec![0.0; 64];
/// rm.recover(&llrs, &mut back).unwrap();
/// // Every sent bit comes back where it was; the 4 punctured ones at LLR 0.
/// assert_eq!(back.iter().filter(|&&l| l == 0.0).count(), 4);
/// assert!((0..64).all(|i| back[i] == 0.0 || (back[i] < 0.0) == (d[i] == 1)));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RateMatch {
    n: usize,
    selection: Selection,
    channel_interleaved: bool,
    map: Vec<u16>,
}

impl RateMatch {
    /// The rate matching of a block of `k` bits (CRC included) from a
    /// mother code of `n` bits (a power of two, 32..=1024) to `e` bits
    /// (1..=[`MAX_E`]), channel-interleaved (uplink) or not. Sizes are
    /// checked before the E-long map is made.
    pub fn new(k: usize, e: usize, n: usize, channel_interleaved: bool) -> CodeResult<Self> {
        if !n.is_power_of_two() || !(32..=1024).contains(&n) {
            return Err(invalid!("a 5G polar mother code of N = {n} bits: N is a power of two from 32 to 1024"));
        }
        if e == 0 || e > MAX_E {
            return Err(invalid!("E = {e}: a 5G polar code block is sent in 1..={MAX_E} bits"));
        }
        if k == 0 || k > n {
            return Err(invalid!("K = {k} bits in a mother code of N = {n}"));
        }
        let selection = Selection::of(k, e, n);
        // e_i = y_{i mod N}, y_{i + N − E} or y_i; y_j = d_{J(j)}.
        let offset = if selection == Selection::Puncturing { n - e } else { 0 };
        let picked: Vec<u16> = (0..e).map(|i| subblock_index(n, (i + offset) % n) as u16).collect();
        let map = if channel_interleaved { triangle_order(e).into_iter().map(|i| picked[i]).collect() } else { picked };
        Ok(Self { n, selection, channel_interleaved, map })
    }

    /// N: the mother code's bits.
    pub fn n(&self) -> usize {
        self.n
    }

    /// E: bits sent.
    pub fn e(&self) -> usize {
        self.map.len()
    }

    /// How the E bits were selected.
    pub fn selection(&self) -> Selection {
        self.selection
    }

    /// Whether the sent bits pass the channel interleaver.
    pub fn channel_interleaved(&self) -> bool {
        self.channel_interleaved
    }

    /// Sent bit i carries coded bit `map()[i]`.
    pub fn map(&self) -> &[u16] {
        &self.map
    }

    /// The coded bits (d_j, j ∈ 0..N) that shortening leaves out: the
    /// receiver knows they are 0.
    pub fn shortened(&self) -> impl Iterator<Item = usize> + '_ {
        let from = if self.selection == Selection::Shortening { self.e() } else { self.n };
        (from..self.n).map(|j| subblock_index(self.n, j))
    }

    /// Append the E sent bits of the N coded bits `d` (0 or 1) to `out`.
    pub fn select(&self, d: &[u8], out: &mut Vec<u8>) -> CodeResult<()> {
        if d.len() != self.n {
            return Err(CodeError::LengthMismatch(format!("rate matching takes N = {} coded bits, not {}", self.n, d.len())));
        }
        if let Some(i) = first_non_bit(d) {
            return Err(invalid!("coded bit {i} is {}, not 0 or 1", d[i]));
        }
        out.extend(self.map.iter().map(|&j| d[usize::from(j)]));
        Ok(())
    }

    /// The N LLRs of the coded bits from the E received `llrs`, into `out`:
    /// repeated bits added, punctured ones 0, shortened ones a certain 0
    /// ([`Llr::CERTAIN_ZERO`]). A NaN or infinite LLR is named by its index.
    pub fn recover<T: Llr>(&self, llrs: &[T], out: &mut [T]) -> CodeResult<()> {
        if llrs.len() != self.e() || out.len() != self.n {
            return Err(CodeError::LengthMismatch(format!("recovery takes E = {} LLRs to N = {}, not {} to {}", self.e(), self.n, llrs.len(), out.len())));
        }
        check_finite(llrs)?;
        out.fill(T::default());
        for (&j, &l) in self.map.iter().zip(llrs) {
            let o = &mut out[usize::from(j)];
            *o = o.plus(l);
        }
        for j in self.shortened() {
            out[j] = T::CERTAIN_ZERO;
        }
        Ok(())
    }
}

/// The channel interleaver of §5.4.1.3 as an order: sent bit i is e_{order[i]}.
/// The E bits are written row by row into the triangle of T rows (row r
/// holds T − r bits, T the smallest with T(T + 1)/2 ≥ E), and read column
/// by column, skipping the cells past E.
fn triangle_order(e: usize) -> Vec<usize> {
    let mut t = 0;
    while t * (t + 1) / 2 < e {
        t += 1;
    }
    // Where row r starts in the row-by-row order.
    let row_start = |r: usize| r * t - r * r.saturating_sub(1) / 2;
    let mut order = Vec::with_capacity(e);
    for col in 0..t {
        for row in 0..t - col {
            let i = row_start(row) + col;
            if i < e {
                order.push(i);
            }
        }
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_subblock_interleaver_is_a_permutation_of_32_blocks() {
        for n in [32, 64, 512, 1024] {
            let mut seen: Vec<usize> = (0..n).map(|j| subblock_index(n, j)).collect();
            seen.sort_unstable();
            assert_eq!(seen, (0..n).collect::<Vec<_>>());
        }
        // Block 3 of the output is block 4 of the input (P(3) = 4).
        assert_eq!(subblock_index(64, 6), 8);
        assert_eq!(subblock_index(64, 7), 9);
    }

    /// The triangle written out by hand for E = 7 (T = 4):
    /// row 0: e0 e1 e2 e3 / row 1: e4 e5 e6 / row 2: – – / row 3: –.
    #[test]
    fn the_channel_interleaver_reads_columns() {
        assert_eq!(triangle_order(7), vec![0, 4, 1, 5, 2, 6, 3]);
        assert_eq!(triangle_order(10), vec![0, 4, 7, 9, 1, 5, 8, 2, 6, 3]);
        for e in [1, 2, 3, 100, 8192] {
            let mut o = triangle_order(e);
            o.sort_unstable();
            assert_eq!(o, (0..e).collect::<Vec<_>>(), "E {e}");
        }
    }

    #[test]
    fn recovery_undoes_selection_in_every_mode() {
        for (k, e, n, mode) in [(20, 60, 64, Selection::Puncturing), (50, 90, 128, Selection::Shortening), (20, 300, 128, Selection::Repetition)] {
            for ci in [false, true] {
                let rm = RateMatch::new(k, e, n, ci).unwrap();
                assert_eq!(rm.selection(), mode);
                let d = crate::codes::polar::test_bits(n, e as u64);
                let mut sent = Vec::new();
                rm.select(&d, &mut sent).unwrap();
                let llrs: Vec<i8> = sent.iter().map(|&b| if b == 0 { 100 } else { -100 }).collect();
                let mut back = vec![0i8; n];
                rm.recover(&llrs, &mut back).unwrap();
                let shortened: Vec<usize> = rm.shortened().collect();
                for j in 0..n {
                    let times = rm.map().iter().filter(|&&m| usize::from(m) == j).count();
                    let want = if shortened.contains(&j) { 127 } else { (times as i16 * if d[j] == 0 { 100 } else { -100 }).clamp(-127, 127) as i8 };
                    assert_eq!(back[j], want, "{mode:?} bit {j}");
                }
            }
        }
    }

    #[test]
    fn bad_sizes_and_inputs_are_refused() {
        assert!(RateMatch::new(20, 60, 48, false).is_err());
        assert!(RateMatch::new(20, 60, 2048, false).is_err());
        assert!(RateMatch::new(20, 0, 64, false).is_err());
        assert!(RateMatch::new(20, MAX_E + 1, 64, false).is_err());
        assert!(RateMatch::new(0, 60, 64, false).is_err());
        let rm = RateMatch::new(20, 60, 64, false).unwrap();
        assert!(rm.select(&[0; 63], &mut Vec::new()).is_err());
        assert!(rm.select(&[2; 64], &mut Vec::new()).is_err());
        let mut out = [0.0f32; 64];
        let mut llrs = [1.0f32; 60];
        llrs[17] = f32::NAN;
        assert_eq!(rm.recover(&llrs, &mut out), Err(CodeError::NonFiniteLlr { index: 17 }));
        assert!(rm.recover(&[1.0f32; 59], &mut out).is_err());
    }
}
