//! One half-iteration: a constituent decoder's forward and backward
//! recursions over P sub-blocks with their guards, giving the extrinsic
//! LLRs. L blocks of one size run in lockstep, one per lane, so the
//! innermost loops are over lanes and vectorise; L = 1 is the plain serial
//! reference. The sub-blocks are computed one after another but each reads
//! only the previous iteration's edge metrics, so the result is what P
//! independent workers (the GPU's) compute.

use super::config::{DecoderConfig, MaxStar};
use crate::codes::turbo::rsc::RscTrellis;

/// Metric of a state that cannot be: finite, so that sums stay ordered.
pub(super) const IMPOSSIBLE: f32 = -1e30;

/// One metric per lane, aligned to a cache line: a vector load never
/// straddles two lines (unaligned 64-byte loads made AVX-512 slower than
/// AVX2).
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(C, align(64))]
pub(super) struct Lanes<const L: usize>(pub [f32; L]);

impl<const L: usize> Lanes<L> {
    #[inline(always)]
    pub(super) fn splat(x: f32) -> Self {
        Self([x; L])
    }

    #[inline(always)]
    pub(super) fn from_fn(f: impl FnMut(usize) -> f32) -> Self {
        Self(std::array::from_fn(f))
    }
}

impl<const L: usize> std::ops::Index<usize> for Lanes<L> {
    type Output = f32;
    #[inline(always)]
    fn index(&self, l: usize) -> &f32 {
        &self.0[l]
    }
}

impl<const L: usize> std::ops::IndexMut<usize> for Lanes<L> {
    #[inline(always)]
    fn index_mut(&mut self, l: usize) -> &mut f32 {
        &mut self.0[l]
    }
}

/// max* as a type, so each variant's loops are compiled without a branch.
pub(super) trait Op {
    fn op(a: f32, b: f32) -> f32;
}

pub(super) struct MaxOp;
pub(super) struct ExactOp;
pub(super) struct LinearOp;

impl Op for MaxOp {
    #[inline(always)]
    fn op(a: f32, b: f32) -> f32 {
        super::config::max(a, b)
    }
}
impl Op for ExactOp {
    #[inline(always)]
    fn op(a: f32, b: f32) -> f32 {
        MaxStar::Exact.apply(a, b)
    }
}
impl Op for LinearOp {
    #[inline(always)]
    fn op(a: f32, b: f32) -> f32 {
        MaxStar::Linear.apply(a, b)
    }
}

/// The trellis as the recursions read it. A branch's metric is one of four
/// per stage, indexed (u << 1) | parity: A + B, A − B, −A + B, −A − B with
/// A = (systematic + a-priori)/2 and B = parity/2.
pub(super) struct Tables {
    states: usize,
    /// Per state and input: next state and branch index.
    out: Vec<[(usize, usize); 2]>,
    /// Per state: its two predecessors and their branch indices.
    into: Vec<[(usize, usize); 2]>,
}

impl Tables {
    pub(super) fn new(t: &RscTrellis) -> Self {
        let states = t.states();
        let out: Vec<[(usize, usize); 2]> =
            (0..states).map(|s| [0, 1].map(|u| (t.next(s, u), (u << 1) | t.parity(s, u) as usize))).collect();
        let mut into = vec![Vec::new(); states];
        for (s, o) in out.iter().enumerate() {
            for &(n, b) in o {
                into[n].push((s, b));
            }
        }
        let into = into.into_iter().map(|v| [v[0], v[1]]).collect();
        Self { states, out, into }
    }
}

/// A constituent decoder's inputs: systematic and parity LLRs of its K + m
/// stages, a-priori LLRs of the K information stages.
pub(super) struct Inputs<'a, const L: usize> {
    pub sys: &'a [Lanes<L>],
    pub par: &'a [Lanes<L>],
    pub apriori: &'a [Lanes<L>],
}

impl<const L: usize> Inputs<'_, L> {
    #[inline(always)]
    fn branches(&self, k: usize) -> [Lanes<L>; 4] {
        let mut g = [Lanes::splat(0.0); 4];
        let la = self.apriori.get(k);
        for l in 0..L {
            let a = 0.5 * (self.sys[k][l] + la.map_or(0.0, |x| x[l]));
            let b = 0.5 * self.par[k][l];
            g[0][l] = a + b;
            g[1][l] = a - b;
            g[2][l] = -a + b;
            g[3][l] = -a - b;
        }
        g
    }
}

/// Edge metrics of one constituent decoder carried from one iteration to
/// the next (PIVI, PIVIDSTW): `alpha[p]` starts sub-block p's forward
/// recursion (at its start, less g), `beta[p]` sub-block p's backward one (at
/// its end, plus g). `next_*` collect this iteration's.
pub(super) struct Edges<const L: usize> {
    alpha: Vec<Lanes<L>>,
    beta: Vec<Lanes<L>>,
    next_alpha: Vec<Lanes<L>>,
    next_beta: Vec<Lanes<L>>,
    /// Whether `alpha`/`beta` hold an iteration's metrics (not before the first).
    valid: bool,
}

impl<const L: usize> Edges<L> {
    pub(super) fn new(states: usize, subblocks: usize) -> Self {
        let v = vec![Lanes::splat(0.0); states * subblocks];
        Self { alpha: v.clone(), beta: v.clone(), next_alpha: v.clone(), next_beta: v, valid: false }
    }

    pub(super) fn reset(&mut self) {
        self.valid = false;
    }

    fn finish(&mut self) {
        std::mem::swap(&mut self.alpha, &mut self.next_alpha);
        std::mem::swap(&mut self.beta, &mut self.next_beta);
        self.valid = true;
    }
}

/// α of every stage of the longest sub-block.
pub(super) struct Workspace<const L: usize> {
    alpha: Vec<Lanes<L>>,
}

impl<const L: usize> Workspace<L> {
    pub(super) fn new(states: usize, longest: usize) -> Self {
        Self { alpha: vec![Lanes::splat(0.0); states * (longest + 1)] }
    }
}

/// Subtract state 0's metric: it is finite at every stage (the all-zero
/// path stays in state 0), so nothing overflows and the result is exact to
/// the metrics' differences.
#[inline(always)]
fn normalize<const L: usize>(m: &mut [Lanes<L>]) {
    let zero = m[0];
    for s in m {
        for l in 0..L {
            s[l] -= zero[l];
        }
    }
}

#[inline(always)]
fn forward<O: Op, const L: usize>(t: &Tables, a: &[Lanes<L>], g: &[Lanes<L>; 4], out: &mut [Lanes<L>]) {
    for (n, o) in out.iter_mut().enumerate() {
        let [(p0, b0), (p1, b1)] = t.into[n];
        for l in 0..L {
            o[l] = O::op(a[p0][l] + g[b0][l], a[p1][l] + g[b1][l]);
        }
    }
    normalize(out);
}

#[inline(always)]
fn backward<O: Op, const L: usize>(t: &Tables, next: &[Lanes<L>], g: &[Lanes<L>; 4], out: &mut [Lanes<L>]) {
    for (s, o) in out.iter_mut().enumerate() {
        let [(n0, b0), (n1, b1)] = t.out[s];
        for l in 0..L {
            o[l] = O::op(next[n0][l] + g[b0][l], next[n1][l] + g[b1][l]);
        }
    }
    normalize(out);
}

/// Extrinsic LLR of a stage: the branches' metrics without the systematic
/// and a-priori term (it is the same for every branch of one input, so it
/// cancels from the difference exactly, for max and max* alike).
#[inline(always)]
fn extrinsic<O: Op, const L: usize>(t: &Tables, a: &[Lanes<L>], next: &[Lanes<L>], par: &Lanes<L>) -> Lanes<L> {
    let half: Lanes<L> = Lanes::from_fn(|l| 0.5 * par[l]);
    let minus: Lanes<L> = Lanes::from_fn(|l| -half[l]);
    let mut m: [Lanes<L>; 2] = [Lanes::splat(IMPOSSIBLE); 2];
    for (a, out) in a.iter().zip(&t.out) {
        for (u, &(n, b)) in out.iter().enumerate() {
            let p = if b & 1 == 0 { &half } else { &minus };
            for l in 0..L {
                m[u][l] = O::op(m[u][l], a[l] + p[l] + next[n][l]);
            }
        }
    }
    Lanes::from_fn(|l| m[0][l] - m[1][l])
}

/// Metrics of a terminated edge: state 0 only.
fn terminated<const L: usize>(m: &mut [Lanes<L>]) {
    m.fill(Lanes::splat(IMPOSSIBLE));
    m[0] = Lanes::splat(0.0);
}

/// One half-iteration of the constituent decoder of `k` information stages
/// (and the tail): the extrinsic LLR of every information stage into
/// `extrinsic`. Inlined so that the caller's SIMD level applies.
#[inline(always)]
pub(super) fn half_iteration<const L: usize>(
    t: &Tables,
    cfg: &DecoderConfig,
    k: usize,
    inputs: &Inputs<'_, L>,
    edges: &mut Edges<L>,
    ws: &mut Workspace<L>,
    extrinsic: &mut [Lanes<L>],
) {
    match cfg.max_star {
        MaxStar::Max => run::<MaxOp, L>(t, cfg, k, inputs, edges, ws, extrinsic),
        MaxStar::Exact => run::<ExactOp, L>(t, cfg, k, inputs, edges, ws, extrinsic),
        MaxStar::Linear => run::<LinearOp, L>(t, cfg, k, inputs, edges, ws, extrinsic),
    }
}

#[inline(always)]
fn run<O: Op, const L: usize>(
    t: &Tables,
    cfg: &DecoderConfig,
    k: usize,
    inputs: &Inputs<'_, L>,
    edges: &mut Edges<L>,
    ws: &mut Workspace<L>,
    extrinsic: &mut [Lanes<L>],
) {
    let (s, p_count, g) = (t.states, cfg.subblocks, cfg.window);
    let stages = inputs.sys.len();
    let carried = cfg.guard.carries() && edges.valid;
    let mut cur = vec![Lanes::splat(0.0); s];
    let mut tmp = vec![Lanes::splat(0.0); s];
    for p in 0..p_count {
        let start = cfg.subblock_start(k, p);
        let end = if p + 1 == p_count { stages } else { cfg.subblock_start(k, p + 1) };
        let len = end - start;

        // α at the start: the true start, or an estimate.
        if p == 0 {
            terminated(&mut cur);
        } else {
            let from = if cfg.guard.trains() { start - g } else { start };
            if carried {
                cur.copy_from_slice(&edges.alpha[p * s..][..s]);
            } else {
                cur.fill(Lanes::splat(0.0));
            }
            for kk in from..start {
                forward::<O, L>(t, &cur, &inputs.branches(kk), &mut tmp);
                std::mem::swap(&mut cur, &mut tmp);
            }
        }
        let alpha = &mut ws.alpha[..(len + 1) * s];
        alpha[..s].copy_from_slice(&cur);
        for i in 0..len {
            let (done, rest) = alpha.split_at_mut((i + 1) * s);
            forward::<O, L>(t, &done[i * s..], &inputs.branches(start + i), &mut rest[..s]);
        }
        if p + 1 < p_count && cfg.guard.carries() {
            let at = if cfg.guard.trains() { len - g } else { len };
            edges.next_alpha[(p + 1) * s..][..s].copy_from_slice(&alpha[at * s..][..s]);
        }

        // β at the end: the terminated end, or an estimate.
        if p + 1 == p_count {
            terminated(&mut cur);
        } else {
            let from = if cfg.guard.trains() { end + g } else { end };
            if carried {
                cur.copy_from_slice(&edges.beta[p * s..][..s]);
            } else {
                cur.fill(Lanes::splat(0.0));
            }
            for kk in (end..from).rev() {
                backward::<O, L>(t, &cur, &inputs.branches(kk), &mut tmp);
                std::mem::swap(&mut cur, &mut tmp);
            }
        }
        for i in (0..len).rev() {
            let kk = start + i;
            if kk < k {
                extrinsic[kk] = self::extrinsic::<O, L>(t, &alpha[i * s..][..s], &cur, &inputs.par[kk]);
            }
            backward::<O, L>(t, &cur, &inputs.branches(kk), &mut tmp);
            std::mem::swap(&mut cur, &mut tmp);
            if p > 0 && cfg.guard.carries() && i == if cfg.guard.trains() { g } else { 0 } {
                edges.next_beta[(p - 1) * s..][..s].copy_from_slice(&cur);
            }
        }
    }
    if cfg.guard.carries() {
        edges.finish();
    }
}
