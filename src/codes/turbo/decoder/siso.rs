//! One half-iteration: a constituent decoder's forward and backward
//! recursions over P sub-blocks with their guards, giving the extrinsic
//! LLRs. L blocks of one size run in lockstep, one per lane, so the
//! innermost loops are over lanes and vectorise; L = 1 is the plain serial
//! reference. The sub-blocks are computed one after another but each reads
//! only the previous iteration's edge metrics, so the result is what P
//! independent workers (the GPU's) compute.

use super::config::{DecoderConfig, MaxStar};
use crate::codes::turbo::rsc::RscTrellis;

/// The number type of the recursions: `f32` (the reference, and what the
/// GPU computes) or `i16` with saturating arithmetic (twice the lanes per
/// vector; max-log-MAP only). Every operation the decoder does on metrics
/// and LLRs is one of these, so both types run the same code.
pub(super) trait Metric: Copy + Default + PartialOrd + Send + Sync + std::fmt::Debug + 'static {
    /// Metric of a state that cannot be: finite, so that sums stay ordered.
    const IMPOSSIBLE: Self;
    const ZERO: Self;
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn neg(self) -> Self;
    /// x/2 (`i16`: rounded toward −∞).
    fn half(self) -> Self;
    /// x · `factor` (`i16`: by `q8`/256, rounded toward −∞).
    fn scaled(self, factor: f32, q8: i32) -> Self;
    /// A loaded LLR (`i16`: rounded and saturated).
    fn from_f32(x: f32) -> Self;
    fn to_f32(self) -> f32;
    /// The larger; a comparison, not `f32::max`, whose NaN rule costs two
    /// more instructions per lane (the decoders never see NaN).
    #[inline(always)]
    fn max(self, o: Self) -> Self {
        if self > o { self } else { o }
    }
    /// One half-iteration with this metric (the max* variants it has).
    fn half_iteration<const L: usize>(
        t: &Tables,
        cfg: &DecoderConfig,
        k: usize,
        inputs: &Inputs<'_, Self, L>,
        edges: &mut Edges<Self, L>,
        ws: &mut Workspace<Self, L>,
        extrinsic: &mut [Lanes<Self, L>],
    );
}

impl Metric for f32 {
    const IMPOSSIBLE: f32 = -1e30;
    const ZERO: f32 = 0.0;
    #[inline(always)]
    fn add(self, o: f32) -> f32 {
        self + o
    }
    #[inline(always)]
    fn sub(self, o: f32) -> f32 {
        self - o
    }
    #[inline(always)]
    fn neg(self) -> f32 {
        -self
    }
    #[inline(always)]
    fn half(self) -> f32 {
        0.5 * self
    }
    #[inline(always)]
    fn scaled(self, factor: f32, _q8: i32) -> f32 {
        factor * self
    }
    #[inline(always)]
    fn from_f32(x: f32) -> f32 {
        x
    }
    #[inline(always)]
    fn to_f32(self) -> f32 {
        self
    }
    #[inline(always)]
    fn half_iteration<const L: usize>(
        t: &Tables,
        cfg: &DecoderConfig,
        k: usize,
        inputs: &Inputs<'_, f32, L>,
        edges: &mut Edges<f32, L>,
        ws: &mut Workspace<f32, L>,
        extrinsic: &mut [Lanes<f32, L>],
    ) {
        match cfg.max_star {
            MaxStar::Max => run::<MaxOp, f32, L>(t, cfg, k, inputs, edges, ws, extrinsic),
            MaxStar::Exact => run::<ExactOp, f32, L>(t, cfg, k, inputs, edges, ws, extrinsic),
            MaxStar::Linear => run::<LinearOp, f32, L>(t, cfg, k, inputs, edges, ws, extrinsic),
        }
    }
}

impl Metric for i16 {
    /// Far below any reachable metric, with room for saturation below it.
    const IMPOSSIBLE: i16 = i16::MIN / 2;
    const ZERO: i16 = 0;
    #[inline(always)]
    fn add(self, o: i16) -> i16 {
        self.saturating_add(o)
    }
    #[inline(always)]
    fn sub(self, o: i16) -> i16 {
        self.saturating_sub(o)
    }
    #[inline(always)]
    fn neg(self) -> i16 {
        self.saturating_neg()
    }
    #[inline(always)]
    fn half(self) -> i16 {
        self >> 1
    }
    #[inline(always)]
    fn scaled(self, _factor: f32, q8: i32) -> i16 {
        ((self as i32 * q8) >> 8) as i16
    }
    #[inline(always)]
    fn from_f32(x: f32) -> i16 {
        x.round().clamp(-32767.0, 32767.0) as i16
    }
    #[inline(always)]
    fn to_f32(self) -> f32 {
        self as f32
    }
    #[inline(always)]
    fn half_iteration<const L: usize>(
        t: &Tables,
        cfg: &DecoderConfig,
        k: usize,
        inputs: &Inputs<'_, i16, L>,
        edges: &mut Edges<i16, L>,
        ws: &mut Workspace<i16, L>,
        extrinsic: &mut [Lanes<i16, L>],
    ) {
        // The constructor admits only max-log-MAP for 16-bit metrics.
        debug_assert_eq!(cfg.max_star, MaxStar::Max);
        run::<MaxOp, i16, L>(t, cfg, k, inputs, edges, ws, extrinsic)
    }
}

/// One metric per lane, aligned to a cache line: a vector load never
/// straddles two lines (unaligned 64-byte loads made AVX-512 slower than
/// AVX2).
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(C, align(64))]
pub(super) struct Lanes<M, const L: usize>(pub [M; L]);

impl<M: Metric, const L: usize> Lanes<M, L> {
    #[inline(always)]
    pub(super) fn splat(x: M) -> Self {
        Self([x; L])
    }

    #[inline(always)]
    pub(super) fn from_fn(f: impl FnMut(usize) -> M) -> Self {
        Self(std::array::from_fn(f))
    }
}

impl<M, const L: usize> std::ops::Index<usize> for Lanes<M, L> {
    type Output = M;
    #[inline(always)]
    fn index(&self, l: usize) -> &M {
        &self.0[l]
    }
}

impl<M, const L: usize> std::ops::IndexMut<usize> for Lanes<M, L> {
    #[inline(always)]
    fn index_mut(&mut self, l: usize) -> &mut M {
        &mut self.0[l]
    }
}

/// max* as a type, so each variant's loops are compiled without a branch.
pub(super) trait Op<M> {
    fn op(a: M, b: M) -> M;
}

pub(super) struct MaxOp;
pub(super) struct ExactOp;
pub(super) struct LinearOp;

impl<M: Metric> Op<M> for MaxOp {
    #[inline(always)]
    fn op(a: M, b: M) -> M {
        a.max(b)
    }
}
impl Op<f32> for ExactOp {
    #[inline(always)]
    fn op(a: f32, b: f32) -> f32 {
        MaxStar::Exact.apply(a, b)
    }
}
impl Op<f32> for LinearOp {
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
pub(super) struct Inputs<'a, M, const L: usize> {
    pub sys: &'a [Lanes<M, L>],
    pub par: &'a [Lanes<M, L>],
    pub apriori: &'a [Lanes<M, L>],
}

impl<M: Metric, const L: usize> Inputs<'_, M, L> {
    #[inline(always)]
    fn branches(&self, k: usize) -> [Lanes<M, L>; 4] {
        let mut g = [Lanes::splat(M::ZERO); 4];
        let la = self.apriori.get(k);
        for l in 0..L {
            let a = self.sys[k][l].add(la.map_or(M::ZERO, |x| x[l])).half();
            let b = self.par[k][l].half();
            g[0][l] = a.add(b);
            g[1][l] = a.sub(b);
            g[2][l] = a.neg().add(b);
            g[3][l] = a.neg().sub(b);
        }
        g
    }
}

/// Edge metrics of one constituent decoder carried from one iteration to
/// the next (PIVI, PIVIDSTW): `alpha[p]` starts sub-block p's forward
/// recursion (at its start, less g), `beta[p]` sub-block p's backward one (at
/// its end, plus g). `next_*` collect this iteration's.
pub(super) struct Edges<M, const L: usize> {
    alpha: Vec<Lanes<M, L>>,
    beta: Vec<Lanes<M, L>>,
    next_alpha: Vec<Lanes<M, L>>,
    next_beta: Vec<Lanes<M, L>>,
    /// Whether `alpha`/`beta` hold an iteration's metrics (not before the first).
    valid: bool,
}

impl<M: Metric, const L: usize> Edges<M, L> {
    pub(super) fn new(states: usize, subblocks: usize) -> Self {
        let v = vec![Lanes::splat(M::ZERO); states * subblocks];
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
pub(super) struct Workspace<M, const L: usize> {
    alpha: Vec<Lanes<M, L>>,
}

impl<M: Metric, const L: usize> Workspace<M, L> {
    pub(super) fn new(states: usize, longest: usize) -> Self {
        Self { alpha: vec![Lanes::splat(M::ZERO); states * (longest + 1)] }
    }
}

/// Subtract state 0's metric: it is finite at every stage (the all-zero
/// path stays in state 0), so nothing overflows and the result is exact to
/// the metrics' differences.
#[inline(always)]
fn normalize<M: Metric, const L: usize>(m: &mut [Lanes<M, L>]) {
    let zero = m[0];
    for s in m {
        for l in 0..L {
            s[l] = s[l].sub(zero[l]);
        }
    }
}

/// One step of either recursion: each new metric is max* over its two
/// branches of (metric at the branch's other end + branch metric), then
/// normalised. Forward, `pairs` are each state's predecessors (`into`);
/// backward, its successors (`out`).
#[inline(always)]
fn step<O: Op<M>, M: Metric, const L: usize>(pairs: &[[(usize, usize); 2]], from: &[Lanes<M, L>], g: &[Lanes<M, L>; 4], out: &mut [Lanes<M, L>]) {
    for (o, &[(s0, b0), (s1, b1)]) in out.iter_mut().zip(pairs) {
        for l in 0..L {
            o[l] = O::op(from[s0][l].add(g[b0][l]), from[s1][l].add(g[b1][l]));
        }
    }
    normalize(out);
}

/// Extrinsic LLR of a stage: the branches' metrics without the systematic
/// and a-priori term (it is the same for every branch of one input, so it
/// cancels from the difference exactly, for max and max* alike).
#[inline(always)]
fn extrinsic<O: Op<M>, M: Metric, const L: usize>(t: &Tables, a: &[Lanes<M, L>], next: &[Lanes<M, L>], par: &Lanes<M, L>) -> Lanes<M, L> {
    let half: Lanes<M, L> = Lanes::from_fn(|l| par[l].half());
    let minus: Lanes<M, L> = Lanes::from_fn(|l| half[l].neg());
    let mut m: [Lanes<M, L>; 2] = [Lanes::splat(M::IMPOSSIBLE); 2];
    for (a, out) in a.iter().zip(&t.out) {
        for (u, &(n, b)) in out.iter().enumerate() {
            let p = if b & 1 == 0 { &half } else { &minus };
            for l in 0..L {
                m[u][l] = O::op(m[u][l], a[l].add(p[l]).add(next[n][l]));
            }
        }
    }
    Lanes::from_fn(|l| m[0][l].sub(m[1][l]))
}

/// Metrics of a terminated edge: state 0 only.
fn terminated<M: Metric, const L: usize>(m: &mut [Lanes<M, L>]) {
    m.fill(Lanes::splat(M::IMPOSSIBLE));
    m[0] = Lanes::splat(M::ZERO);
}

/// One half-iteration of the constituent decoder of `k` information stages
/// (and the tail): the extrinsic LLR of every information stage into
/// `extrinsic`. Inlined so that the caller's SIMD level applies.
#[inline(always)]
pub(super) fn half_iteration<M: Metric, const L: usize>(
    t: &Tables,
    cfg: &DecoderConfig,
    k: usize,
    inputs: &Inputs<'_, M, L>,
    edges: &mut Edges<M, L>,
    ws: &mut Workspace<M, L>,
    extrinsic: &mut [Lanes<M, L>],
) {
    M::half_iteration(t, cfg, k, inputs, edges, ws, extrinsic)
}

#[inline(always)]
fn run<O: Op<M>, M: Metric, const L: usize>(
    t: &Tables,
    cfg: &DecoderConfig,
    k: usize,
    inputs: &Inputs<'_, M, L>,
    edges: &mut Edges<M, L>,
    ws: &mut Workspace<M, L>,
    extrinsic: &mut [Lanes<M, L>],
) {
    let (s, p_count, g) = (t.states, cfg.subblocks, cfg.window);
    let stages = inputs.sys.len();
    let carried = cfg.guard.carries() && edges.valid;
    let mut cur = vec![Lanes::splat(M::ZERO); s];
    let mut tmp = vec![Lanes::splat(M::ZERO); s];
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
                cur.fill(Lanes::splat(M::ZERO));
            }
            for kk in from..start {
                step::<O, M, L>(&t.into, &cur, &inputs.branches(kk), &mut tmp);
                std::mem::swap(&mut cur, &mut tmp);
            }
        }
        let alpha = &mut ws.alpha[..(len + 1) * s];
        alpha[..s].copy_from_slice(&cur);
        for i in 0..len {
            let (done, rest) = alpha.split_at_mut((i + 1) * s);
            step::<O, M, L>(&t.into, &done[i * s..], &inputs.branches(start + i), &mut rest[..s]);
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
                cur.fill(Lanes::splat(M::ZERO));
            }
            for kk in (end..from).rev() {
                step::<O, M, L>(&t.out, &cur, &inputs.branches(kk), &mut tmp);
                std::mem::swap(&mut cur, &mut tmp);
            }
        }
        for i in (0..len).rev() {
            let kk = start + i;
            if kk < k {
                extrinsic[kk] = self::extrinsic::<O, M, L>(t, &alpha[i * s..][..s], &cur, &inputs.par[kk]);
            }
            step::<O, M, L>(&t.out, &cur, &inputs.branches(kk), &mut tmp);
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
