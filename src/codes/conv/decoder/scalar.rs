//! The scalar reference Viterbi: add-compare-select over the shared trellis,
//! decisions bit-packed, serial and parallel traceback. This is the model the
//! SIMD path and the GPU kernel reproduce bit for bit.
//!
//! Tie-breaking (fixed, documented for every backend):
//! - in add-compare-select, new state `j` keeps the even predecessor
//!   `pred_base(j)` unless the odd one's candidate metric is strictly greater
//!   (decision bit 1 means "odd predecessor");
//! - the best state is the lowest-numbered state holding the maximum metric.
//!
//! Metrics are correlations: a branch adds `+llr` for each label bit 0 and
//! `−llr` for each label bit 1, summed in generator order; larger is better.

use crate::codes::conv::code::Trellis;
use crate::codes::conv::decoder::config::{FrameConfig, TileConfig};
use crate::codes::conv::decoder::llr::ViterbiLlr;

/// Branch metrics of one stage for every n-bit label, label bit i ↔ LLR i.
#[inline(always)]
pub fn branch_metrics<T: ViterbiLlr>(llrs: &[T], table: &mut [T::Metric; 16]) {
    let n = llrs.len();
    for (sym, slot) in table.iter_mut().enumerate().take(1 << n) {
        let term = |i: usize| {
            let m = llrs[i].metric();
            if (sym >> i) & 1 == 0 { m } else { -m }
        };
        let mut acc = term(0);
        for i in 1..n {
            acc = acc + term(i);
        }
        *slot = acc;
    }
}

/// Reusable working memory for one decoder thread: no allocation per tile.
#[derive(Debug, Default)]
pub struct Scratch<M> {
    /// Path metrics of the current stage, one per state.
    pub pm: Vec<M>,
    pm_next: Vec<M>,
    /// Decisions, `words_per_stage` 64-bit words per stage, bit `j` of the stage's
    /// words = decision of new state `j`.
    pub dec: Vec<u64>,
    /// Best state after each recorded stage.
    pub best: Vec<usize>,
}

impl<M: Copy + Default> Scratch<M> {
    /// Size the buffers for `stages` stages of a `states`-state trellis.
    pub(crate) fn prepare(&mut self, states: usize, stages: usize) {
        self.pm.resize(states, M::default());
        self.pm_next.resize(states, M::default());
        let words = words_per_stage(states) * stages;
        if self.dec.len() < words {
            self.dec.resize(words, 0);
        }
    }
}

/// 64-bit decision words per trellis stage.
#[inline(always)]
pub fn words_per_stage(states: usize) -> usize {
    states.div_ceil(64)
}

/// Lowest-numbered state with the largest metric.
#[inline]
pub fn best_state<M: Copy + PartialOrd>(pm: &[M]) -> usize {
    let mut best = 0;
    for (j, &m) in pm.iter().enumerate().skip(1) {
        if m > pm[best] {
            best = j;
        }
    }
    best
}

/// One add-compare-select stage from `pm` into `next`, decisions into `dec`.
#[inline(always)]
fn acs_stage<T: ViterbiLlr>(
    trellis: &Trellis,
    bm: &[T::Metric; 16],
    pm: &[T::Metric],
    next: &mut [T::Metric],
    dec: &mut [u64],
) {
    dec.iter_mut().for_each(|w| *w = 0);
    for (j, slot) in next.iter_mut().enumerate() {
        let p0 = trellis.pred_base(j);
        let u = trellis.input_of(j) as usize;
        let m0 = pm[p0] + bm[trellis.output(p0, u) as usize];
        let m1 = pm[p0 | 1] + bm[trellis.output(p0 | 1, u) as usize];
        let d = m1 > m0;
        *slot = if d { m1 } else { m0 };
        dec[j / 64] |= (d as u64) << (j % 64);
    }
}

/// Forward pass over `llrs` (n per stage) starting from `scratch.pm`.
///
/// After stage `t` (0-based) for each `t` in `record` (ascending), the best state
/// is pushed onto `scratch.best`. `normalize_every` > 0 subtracts the best
/// metric every that many stages (exact for integer metrics).
pub fn forward<T: ViterbiLlr>(
    trellis: &Trellis,
    llrs: &[T],
    scratch: &mut Scratch<T::Metric>,
    record: &[usize],
    normalize_every: usize,
) {
    let n = trellis.n();
    let states = trellis.states();
    let stages = llrs.len() / n;
    let wps = words_per_stage(states);
    scratch.prepare(states, stages);
    scratch.best.clear();
    let mut bm = [T::Metric::default(); 16];
    let mut rec = record.iter().peekable();
    for t in 0..stages {
        branch_metrics(&llrs[t * n..(t + 1) * n], &mut bm);
        let Scratch { pm, pm_next, dec, .. } = scratch;
        acs_stage::<T>(trellis, &bm, pm, pm_next, &mut dec[t * wps..(t + 1) * wps]);
        std::mem::swap(pm, pm_next);
        if normalize_every > 0 && (t + 1) % normalize_every == 0 {
            let top = scratch.pm[best_state(&scratch.pm)];
            scratch.pm.iter_mut().for_each(|m| *m = *m - top);
        }
        if rec.peek() == Some(&&t) {
            rec.next();
            let b = best_state(&scratch.pm);
            scratch.best.push(b);
        }
    }
}

/// Trace back from `state` at stage `from` (inclusive) down to stage `to`
/// (inclusive), writing the bit of each stage `t` with `keep.contains(t)` to
/// `out[t - keep.start]`. Returns the state before stage `to`.
pub fn traceback(
    trellis: &Trellis,
    dec: &[u64],
    state: usize,
    from: usize,
    to: usize,
    keep: std::ops::Range<usize>,
    out: &mut [u8],
) -> usize {
    let base = keep.start;
    let mut walks = [Walk { state, from, to, keep }];
    walk_together(trellis, dec, &mut walks, base, out);
    walks[0].state
}

/// One traceback in progress: at `state` before stage `from`, going down to
/// stage `to`, keeping the bits of the stages in `keep`.
#[derive(Debug, Clone)]
struct Walk {
    state: usize,
    from: usize,
    to: usize,
    keep: std::ops::Range<usize>,
}

/// Run independent tracebacks in lockstep, each writing the bit of stage `t`
/// to `out[t - base]`. Every step waits on the one before, so stepping several
/// walks together lets their waits overlap.
fn walk_together<const N: usize>(trellis: &Trellis, dec: &[u64], walks: &mut [Walk; N], base: usize, out: &mut [u8]) {
    let wps = words_per_stage(trellis.states());
    // With one word per stage (K ≤ 7) the word's address does not depend on
    // the state, so its load is not part of that wait.
    if wps == 1 {
        steps(trellis, walks, base, out, |t, s| dec[t] >> s)
    } else {
        steps(trellis, walks, base, out, |t, s| dec[t * wps + s / 64] >> (s % 64))
    }
}

/// The steps of [`walk_together`], given the decision word of stage `t`
/// shifted to put state `s`'s decision in bit 0.
#[inline(always)]
fn steps<const N: usize>(
    trellis: &Trellis,
    walks: &mut [Walk; N],
    base: usize,
    out: &mut [u8],
    decision: impl Fn(usize, usize) -> u64,
) {
    // The states live in a local array, so they stay in registers.
    let mut states = walks.each_ref().map(|w| w.state);
    let mut step = |w: &Walk, state: &mut usize, t: usize| {
        if w.keep.contains(&t) {
            out[t - base] = trellis.input_of(*state);
        }
        *state = trellis.pred_base(*state) | (decision(t, *state) & 1) as usize;
    };
    let len = |w: &Walk| (w.from + 1).saturating_sub(w.to);
    let common = walks.iter().map(len).min().unwrap_or(0);
    for k in 0..common {
        for (w, state) in walks.iter().zip(states.iter_mut()) {
            step(w, state, w.from - k);
        }
    }
    for (w, state) in walks.iter().zip(states.iter_mut()) {
        for k in common..len(w) {
            step(w, state, w.from - k);
        }
    }
    for (w, state) in walks.iter_mut().zip(states) {
        w.state = state;
    }
}

/// Stages after which a tile's forward pass records its best state: the
/// traceback start of each subframe.
pub fn tile_record_points(tile: &TileConfig) -> Vec<usize> {
    (0..tile.subframes()).map(|s| tile.traceback_start(s)).collect()
}

/// Trace back a tile whose forward pass has run (decisions and recorded best
/// states in `scratch`), writing its `f` decisions to `out`.
pub fn tile_traceback<M>(trellis: &Trellis, tile: &TileConfig, scratch: &Scratch<M>, out: &mut [u8]) {
    let sub = tile.subframe();
    let walk = |s: usize| {
        let lo = tile.v1 + s * sub;
        let hi = (lo + sub).min(tile.v1 + tile.f);
        Walk { state: scratch.best[s], from: tile.traceback_start(s), to: lo, keep: lo..hi }
    };
    // Parallel traceback's subframes are independent: four at a time.
    let n = tile.subframes();
    for first in (0..n).step_by(4) {
        match n - first {
            1 => walk_together(trellis, &scratch.dec, &mut [walk(first)], tile.v1, out),
            2 => walk_together(trellis, &scratch.dec, &mut [walk(first), walk(first + 1)], tile.v1, out),
            3 => walk_together(trellis, &scratch.dec, &mut std::array::from_fn::<_, 3, _>(|i| walk(first + i)), tile.v1, out),
            _ => walk_together(trellis, &scratch.dec, &mut std::array::from_fn::<_, 4, _>(|i| walk(first + i)), tile.v1, out),
        }
    }
}

/// Decode one tile of `tile.stages() · n` LLRs into `tile.f` bits: the
/// reference model of the tiled decoder.
pub fn decode_tile<T: ViterbiLlr>(
    trellis: &Trellis,
    tile: &TileConfig,
    llrs: &[T],
    scratch: &mut Scratch<T::Metric>,
    record: &[usize],
    out: &mut [u8],
) {
    debug_assert_eq!(llrs.len(), tile.stages() * trellis.n());
    scratch.pm.clear();
    scratch.pm.resize(trellis.states(), T::Metric::default());
    forward(trellis, llrs, scratch, record, 0);
    tile_traceback(trellis, tile, scratch, out);
}

/// Decode one frame of `frame.stages(K) · n` LLRs from start state 0 into
/// `frame.frame` bits; a terminated frame is traced back from state 0, an
/// unterminated one from the best state.
pub fn decode_frame<T: ViterbiLlr>(
    trellis: &Trellis,
    frame: &FrameConfig,
    llrs: &[T],
    scratch: &mut Scratch<T::Metric>,
    out: &mut [u8],
) {
    let stages = frame.stages(trellis.k());
    debug_assert_eq!(llrs.len(), stages * trellis.n());
    scratch.pm.clear();
    scratch.pm.resize(trellis.states(), T::METRIC_FLOOR);
    scratch.pm[0] = T::Metric::default();
    forward(trellis, llrs, scratch, &[], FRAME_NORMALIZE_EVERY);
    frame_traceback(trellis, frame, scratch, out);
}

/// Stages between the normalisations of a frame's forward pass (subtracting
/// the best metric: exact for integer metrics, and the f32 rounding every
/// backend must reproduce).
pub const FRAME_NORMALIZE_EVERY: usize = 64;

/// Trace back a frame whose forward pass has run (decisions and final metrics
/// in `scratch`): a terminated frame from state 0, an unterminated one from
/// the best state.
pub fn frame_traceback<M: Copy + PartialOrd>(trellis: &Trellis, frame: &FrameConfig, scratch: &Scratch<M>, out: &mut [u8]) {
    let stages = frame.stages(trellis.k());
    let end = if frame.terminated { 0 } else { best_state(&scratch.pm) };
    traceback(trellis, &scratch.dec, end, stages - 1, 0, 0..frame.frame, out);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes::conv::code::ConvCode;
    use crate::codes::conv::decoder::config::Traceback;
    use rand::{Rng, SeedableRng, rngs::SmallRng};

    #[test]
    fn subframes_traced_together_match_one_at_a_time() {
        let mut r = SmallRng::seed_from_u64(5);
        for code in [ConvCode::k7_171_133(), ConvCode::new(9, &[0o561, 0o753]).unwrap(), ConvCode::new(3, &[7, 5]).unwrap()] {
            let trellis = Trellis::new(&code);
            for (f, v1, v2, f0) in [(256, 20, 35, 32), (100, 3, 7, 9), (50, 0, 0, 7), (20, 5, 40, 3), (64, 8, 8, 64)] {
                let tile = TileConfig::new(f, v1, v2, Traceback::Parallel { f0 }).unwrap();
                let wps = words_per_stage(trellis.states());
                let scratch = Scratch::<f32> {
                    dec: (0..tile.stages() * wps).map(|_| r.random()).collect(),
                    best: (0..tile.subframes()).map(|_| r.random_range(0..trellis.states())).collect(),
                    ..Default::default()
                };
                let mut together = vec![9u8; f];
                tile_traceback(&trellis, &tile, &scratch, &mut together);
                let mut alone = vec![9u8; f];
                for s in 0..tile.subframes() {
                    let lo = v1 + s * f0;
                    let hi = (lo + f0).min(v1 + f);
                    let from = tile.traceback_start(s);
                    traceback(&trellis, &scratch.dec, scratch.best[s], from, lo, lo..hi, &mut alone[lo - v1..]);
                }
                assert_eq!(together, alone, "K={} f={f} v1={v1} v2={v2} f0={f0}", code.k());
            }
        }
    }
}
