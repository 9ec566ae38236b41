//! Per-code lookup tables of a kernel: which branch label each lane adds.

use super::lanes::Lanes;
use crate::codes::conv::code::Trellis;

/// How one kernel instance maps a code's trellis onto vectors of `V`.
///
/// With S states and W = `V::WIDTH` lanes:
/// - S ≥ 2W (*groups*): group `c` takes old states `2cW .. 2cW + 2W` (vectors
///   `2c`, `2c + 1`) and splits them into even and odd predecessors `2i`,
///   `2i + 1` of `i = cW .. cW + W`; lane `l` then computes new states `cW + l`
///   (input 0, vector `c`) and `S/2 + cW + l` (input 1, vector `S/2W + c`).
///   Metrics stay in natural state order.
/// - S ≤ W (*single vector*): lane `l` holds state `l mod S` (replicated when
///   S < W); splitting the vector with itself gives each lane its new state's
///   two predecessors.
///
/// *Complementary* codes (every generator taps the current and the oldest bit,
/// as 171/133 does) flip every label bit between the two inputs and between
/// the two predecessors, so the four branch metrics of a lane are x, −x, −x, x:
/// one lookup instead of four, and `pm − x` for `pm + bm(¬label)`. That is
/// exact for integers. For `f32`, rounding to nearest is symmetric, so the
/// reference's sum of negated terms equals −x except possibly in the sign of a
/// zero; `pm + (+0)` and `pm + (−0)` differ only when `pm` is −0, and no metric
/// ever is (metrics start at +0 or the floor, and a sum or difference is −0
/// only when an operand already is), so every candidate is the same bits.
pub(super) struct Plan<V: Lanes> {
    /// Trellis states.
    pub states: usize,
    /// LLRs per stage.
    pub n: usize,
    /// Vectors holding the states: S / W, or 1 for the single-vector layout.
    pub vectors: usize,
    /// Complementary code: one lookup per group (the first index).
    pub complementary: bool,
    /// Per group `[even in 0, odd in 0, even in 1, odd in 1]` (inputs 0 / 1);
    /// the single vector uses `[even, odd]` of group 0. A fixed size, so the
    /// kernel's unrolled loop indexes it without checks.
    pub index: [[V::Index; 4]; MAX_GROUPS],
}

/// Most butterfly groups of any kernel: 256 states, 8 lanes.
pub(super) const MAX_GROUPS: usize = 16;

impl<V: Lanes> Plan<V> {
    /// Tables for `trellis`.
    ///
    /// # Safety
    /// The CPU must have `V`'s ISA level.
    pub unsafe fn new(trellis: &Trellis) -> Self {
        let (states, w) = (trellis.states(), V::WIDTH);
        let all = (1u8 << trellis.n()) - 1;
        let complementary = (0..states).all(|p| {
            (0..2).all(|u| {
                trellis.output(p ^ 1, u) == trellis.output(p, u) ^ all
                    && trellis.output(p, u ^ 1) == trellis.output(p, u) ^ all
            })
        });
        // New states of each lane, per vector of new states, in index order.
        let lane_states: Vec<Vec<usize>> = if states <= w {
            vec![(0..w).map(|l| l % states).collect()]
        } else {
            (0..states / (2 * w))
                .flat_map(|c| [0, states / 2].map(|half| (0..w).map(|l| half + c * w + l).collect()))
                .collect()
        };
        let labels: Vec<Vec<u8>> = lane_states
            .iter()
            .flat_map(|news| {
                [0, 1].map(|odd| {
                    news.iter().map(|&j| trellis.output(trellis.pred_base(j) | odd, trellis.input_of(j) as usize)).collect()
                })
            })
            .collect();
        // SAFETY (both): the caller guarantees V's ISA.
        let mut index = [[unsafe { V::index(&labels[0]) }; 4]; MAX_GROUPS];
        for (i, l) in labels.iter().enumerate() {
            index[i / 4][i % 4] = unsafe { V::index(l) };
        }
        Self { states, n: trellis.n(), vectors: states.max(w) / w, complementary, index }
    }
}
