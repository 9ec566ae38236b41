//! The forward pass over any [`Lanes`] implementation: branch-metric tables,
//! add-compare-select over all states with the metrics held in registers,
//! bit-packed decisions in the reference model's layout, normalisation and
//! best-state records.

use super::lanes::Lanes;
use super::metric::KernelMetric;
use super::plan::Plan;
use crate::codes::conv::decoder::scalar::{Scratch, best_state, words_per_stage};

/// The metrics a forward pass starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Start {
    /// All states equal (a tile: the start state is unknown).
    Equal,
    /// State 0 at 0, every other state at the floor (a frame).
    State0,
}

/// What a forward pass runs over: `S` streams of LLRs (tiles or frames of one
/// shape), run in one loop so that each stage's dependency chains overlap.
#[derive(Debug, Clone, Copy)]
pub(super) struct Pass<'a, L, const S: usize> {
    /// Per stream, n LLRs per stage; all equally long.
    pub llrs: [&'a [L]; S],
    /// Where the metrics start.
    pub start: Start,
    /// Stages (ascending) after which to record the best state.
    pub record: &'a [usize],
    /// The reference's normalisation request (see [`KernelMetric::normalize_every`]).
    pub normalize_every: usize,
}

impl<L, const S: usize> Pass<'_, L, S> {
    /// The same pass over other LLRs.
    pub fn over<'b, M>(&self, llrs: [&'b [M]; S]) -> Pass<'b, M, S>
    where
        Self: 'b,
    {
        Pass { llrs, start: self.start, record: self.record, normalize_every: self.normalize_every }
    }
}

/// One thread's working memory for kernels of metric type `M`.
#[derive(Debug, Default)]
pub(crate) struct KernelScratch<M> {
    /// Decisions, recorded best states and final metrics, laid out as the
    /// reference model's, so its tracebacks read them unchanged.
    pub(super) out: Scratch<M>,
    /// The metrics in memory, where a pass starts, records or normalises.
    metrics: Vec<M>,
}

/// Run each stream of `pass` as `scalar::forward` does, into the scratch of
/// the same index: decisions into `out.dec`, the best state after each
/// recorded stage into `out.best`, final metrics into `out.pm`.
///
/// # Safety
/// The CPU must have `V`'s ISA level.
#[inline(always)]
pub(super) unsafe fn forward<V: Lanes, const S: usize>(
    plan: &Plan<V>,
    pass: &Pass<'_, V::Llr, S>,
    ws: &mut [KernelScratch<V::Metric>; S],
) {
    // SAFETY (every arm): the caller guarantees V's ISA. S ≤ 256 and W ≥ 8
    // leave at most 32 vectors, a power of two.
    unsafe {
        match (plan.vectors, plan.complementary) {
            (1, c) => forward_in::<V, 1, S>(plan, pass, ws, c),
            (2, false) => forward_in::<V, 2, S>(plan, pass, ws, false),
            (2, true) => forward_in::<V, 2, S>(plan, pass, ws, true),
            (4, false) => forward_in::<V, 4, S>(plan, pass, ws, false),
            (4, true) => forward_in::<V, 4, S>(plan, pass, ws, true),
            (8, false) => forward_in::<V, 8, S>(plan, pass, ws, false),
            (8, true) => forward_in::<V, 8, S>(plan, pass, ws, true),
            (16, c) => forward_in::<V, 16, S>(plan, pass, ws, c),
            (32, c) => forward_in::<V, 32, S>(plan, pass, ws, c),
            (v, _) => unreachable!("{v} metric vectors per stage"),
        }
    }
}

/// Defines `$name`, [`forward`] for lanes `$lanes` compiled with `$features`.
macro_rules! entry {
    ($(#[$doc:meta])* $name:ident, $lanes:ty, $features:literal) => {
        $(#[$doc])*
        ///
        /// # Safety
        /// The CPU must have the features this function is compiled with.
        #[target_feature(enable = $features)]
        pub(super) unsafe fn $name<const S: usize>(
            plan: &Plan<$lanes>,
            pass: &Pass<'_, <$lanes as Lanes>::Llr, S>,
            ws: &mut [KernelScratch<<$lanes as Lanes>::Metric>; S],
        ) {
            // SAFETY: this function's own precondition.
            unsafe { kernel::forward(plan, pass, ws) }
        }
    };
}
pub(super) use entry;

/// One stream's inputs and outputs, borrowed field by field.
struct Stream<'a, 'w, L, M> {
    llrs: &'a [L],
    dec: &'w mut [u64],
    best: &'w mut Vec<usize>,
    /// Where the final metrics go.
    final_pm: &'w mut Vec<M>,
    /// The metrics in memory, at checkpoints.
    metrics: &'w mut Vec<M>,
}

/// [`forward`] with the metrics in `NV` vectors; `complementary` is
/// `plan.complementary`, passed as a constant where that pays (the hot sizes).
///
/// # Safety
/// The CPU must have `V`'s ISA level.
#[inline(always)]
unsafe fn forward_in<V: Lanes, const NV: usize, const S: usize>(
    plan: &Plan<V>,
    pass: &Pass<'_, V::Llr, S>,
    ws: &mut [KernelScratch<V::Metric>; S],
    complementary: bool,
) {
    let (s, w) = (plan.states, V::WIDTH);
    let stages = pass.llrs.iter().map(|l| l.len() / plan.n).min().unwrap_or(0);
    let wps = words_per_stage(s);
    let mut llrs = pass.llrs.iter();
    let mut streams = ws.each_mut().map(|KernelScratch { out, metrics }| {
        out.prepare(s, stages);
        out.best.clear();
        metrics.clear();
        metrics.extend((0..NV * w).map(|l| {
            if pass.start == Start::State0 && l % s != 0 { V::Metric::FLOOR } else { V::Metric::default() }
        }));
        let Scratch { dec, best, pm, .. } = out;
        let llrs = llrs.next().map_or(&[][..], |l| l);
        Stream { llrs: &llrs[..stages * plan.n], dec: &mut dec[..stages * wps], best, final_pm: pm, metrics }
    });
    // Every stream starts from the same metrics.
    // SAFETY: the caller guarantees V's ISA, the only precondition of every
    // `Lanes` method below.
    let mut pm: [[V; NV]; S] = unsafe { [load_all(streams[0].metrics); S] };
    let every = V::Metric::normalize_every(pass.normalize_every);
    let mut records = pass.record.iter().copied();
    let mut next_record = records.next().unwrap_or(usize::MAX);
    const { assert!(S >= 1 && S <= 2, "a kernel runs one or two streams") };
    for t in 0..stages {
        // Stream by stream, written out rather than looped, so that each
        // stream's metrics stay in registers.
        // SAFETY (both): as above.
        if let (Some(st), Some(pm)) = (streams.get_mut(0), pm.get_mut(0)) {
            unsafe { stream_stage(plan, complementary, t, st, pm) };
        }
        if let (Some(st), Some(pm)) = (streams.get_mut(1), pm.get_mut(1)) {
            unsafe { stream_stage(plan, complementary, t, st, pm) };
        }
        let normalize = every > 0 && (t + 1) % every == 0;
        let recorded = t == next_record;
        if normalize || recorded {
            // SAFETY (both): as above.
            if let (Some(st), Some(pm)) = (streams.get_mut(0), pm.get_mut(0)) {
                unsafe { checkpoint(st, pm, s, normalize, recorded) };
            }
            if let (Some(st), Some(pm)) = (streams.get_mut(1), pm.get_mut(1)) {
                unsafe { checkpoint(st, pm, s, normalize, recorded) };
            }
            if recorded {
                next_record = records.next().unwrap_or(usize::MAX);
            }
        }
    }
    for (st, pm) in streams.iter_mut().zip(pm) {
        // SAFETY: as above.
        unsafe { store_all(&pm, st.metrics) };
        st.final_pm.clear();
        st.final_pm.extend_from_slice(&st.metrics[..s]);
    }
}

/// Normalise a stream's metrics and/or record its best state.
///
/// # Safety
/// The CPU must have `V`'s ISA level.
#[inline(always)]
unsafe fn checkpoint<V: Lanes, const NV: usize>(
    st: &mut Stream<'_, '_, V::Llr, V::Metric>,
    pm: &mut [V; NV],
    states: usize,
    normalize: bool,
    record: bool,
) {
    // SAFETY: the caller guarantees V's ISA.
    unsafe {
        store_all(pm, st.metrics);
        let best = match best_of(pm, states) {
            Some(best) => best,
            None => best_state(&st.metrics[..states]),
        };
        if normalize {
            let top = V::splat(st.metrics[best]);
            for v in pm.iter_mut() {
                *v = v.sub(top);
            }
        }
        if record {
            st.best.push(best);
        }
    }
}

/// Stage `t` of one stream.
///
/// # Safety
/// The CPU must have `V`'s ISA level.
#[inline(always)]
unsafe fn stream_stage<V: Lanes, const NV: usize>(
    plan: &Plan<V>,
    complementary: bool,
    t: usize,
    st: &mut Stream<'_, '_, V::Llr, V::Metric>,
    pm: &mut [V; NV],
) {
    let wps = words_per_stage(plan.states);
    let (stage, row) = (&st.llrs[t * plan.n..][..plan.n], &mut st.dec[t * wps..][..wps]);
    // SAFETY: the caller guarantees V's ISA.
    unsafe {
        let table = V::table(stage);
        *pm = if NV == 1 {
            single_stage(plan, complementary, table, pm, row)
        } else {
            group_stage(plan, complementary, table, pm, row)
        };
    }
}

/// # Safety
/// The CPU must have `V`'s ISA level.
#[inline(always)]
unsafe fn load_all<V: Lanes, const NV: usize>(m: &[V::Metric]) -> [V; NV] {
    // SAFETY: the caller guarantees V's ISA.
    unsafe {
        let mut pm = [V::load(m); NV];
        for (i, v) in pm.iter_mut().enumerate() {
            *v = V::load(&m[i * V::WIDTH..]);
        }
        pm
    }
}

/// Store the metrics to memory. A loop of exactly `NV` steps: the array stays
/// in registers everywhere else.
///
/// # Safety
/// The CPU must have `V`'s ISA level.
#[inline(always)]
unsafe fn store_all<V: Lanes, const NV: usize>(pm: &[V; NV], m: &mut [V::Metric]) {
    for (i, v) in pm.iter().enumerate() {
        // SAFETY: the caller guarantees V's ISA.
        unsafe { v.store(&mut m[i * V::WIDTH..]) };
    }
}

/// The lowest-numbered state holding the largest of the first `states`
/// metrics, as `scalar::best_state` finds it; `None` when a metric is NaN
/// (the caller then asks `best_state` itself).
///
/// # Safety
/// The CPU must have `V`'s ISA level.
#[inline(always)]
unsafe fn best_of<V: Lanes, const NV: usize>(pm: &[V; NV], states: usize) -> Option<usize> {
    // SAFETY: the caller guarantees V's ISA.
    unsafe {
        let mut top = pm[0];
        for v in pm {
            if v.has_nan() {
                return None;
            }
            top = top.max(*v);
        }
        let top = top.max_lane();
        let live = low_bits(states.min(V::WIDTH));
        for (i, v) in pm.iter().enumerate() {
            let hits = V::decisions(v.equal(top), v.equal(top)) & live;
            if hits != 0 {
                return Some(i * V::WIDTH + hits.trailing_zeros() as usize);
            }
        }
        None
    }
}

/// Add-compare-select for lanes whose even and odd predecessors are `even`
/// and `odd`: survivors and decisions of the new states on input 0 and on
/// input 1, with the branch labels of `index` (see [`Plan::index`]).
///
/// # Safety
/// The CPU must have `V`'s ISA level.
#[inline(always)]
unsafe fn butterfly<V: Lanes>(
    table: V::Table,
    complementary: bool,
    [e0, o0, e1, o1]: [V::Index; 4],
    even: V,
    odd: V,
) -> [(V, V::Mask); 2] {
    // SAFETY: the caller guarantees V's ISA.
    unsafe {
        let x = V::lookup(table, e0);
        if complementary {
            [V::select(even.add(x), odd.sub(x)), V::select(even.sub(x), odd.add(x))]
        } else {
            let (y, z, u) = (V::lookup(table, o0), V::lookup(table, e1), V::lookup(table, o1));
            [V::select(even.add(x), odd.add(y)), V::select(even.add(z), odd.add(u))]
        }
    }
}

/// One stage of the single-vector layout (S ≤ WIDTH): each lane's own input
/// is in its labels, so only the first half of the butterfly is used.
///
/// # Safety
/// The CPU must have `V`'s ISA level.
#[inline(always)]
unsafe fn single_stage<V: Lanes, const NV: usize>(plan: &Plan<V>, complementary: bool, table: V::Table, pm: &[V; NV], row: &mut [u64]) -> [V; NV] {
    // SAFETY: the caller guarantees V's ISA.
    unsafe {
        let (even, odd) = V::deinterleave(pm[0], pm[0]);
        let [(survivor, d), _] = butterfly(table, complementary, plan.index[0], even, odd);
        row[0] = V::decisions(d, d) & low_bits(plan.states);
        [survivor; NV]
    }
}

/// One stage of the group layout (S ≥ 2·WIDTH).
///
/// # Safety
/// The CPU must have `V`'s ISA level.
#[inline(always)]
unsafe fn group_stage<V: Lanes, const NV: usize>(plan: &Plan<V>, complementary: bool, table: V::Table, pm: &[V; NV], row: &mut [u64]) -> [V; NV] {
    // S = NV·W here; from the constants, so every bit position is one too.
    let (w, half) = (V::WIDTH, NV * V::WIDTH / 2);
    let mut next = *pm;
    let mut words = [0u64; 4];
    for c in 0..NV / 2 {
        // SAFETY: the caller guarantees V's ISA.
        let bits = unsafe {
            let (even, odd) = V::deinterleave(pm[2 * c], pm[2 * c + 1]);
            let [(s0, d0), (s1, d1)] = butterfly(table, complementary, plan.index[c], even, odd);
            next[c] = s0;
            next[NV / 2 + c] = s1;
            V::decisions(d0, d1)
        };
        // W divides 64, so neither run of W bits straddles a word.
        let (lo, hi) = (c * w, half + c * w);
        words[lo / 64] |= (bits & low_bits(w)) << (lo % 64);
        words[hi / 64] |= (bits >> w) << (hi % 64);
    }
    // A fixed count (S / 64 words, at least one), so no copy call per stage.
    for (r, word) in row.iter_mut().zip(words).take((NV * w).div_ceil(64)) {
        *r = word;
    }
    next
}

/// The low `bits` bits set (`bits` < 64).
#[inline(always)]
fn low_bits(bits: usize) -> u64 {
    (1u64 << bits) - 1
}
