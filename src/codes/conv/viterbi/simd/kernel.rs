//! The forward pass over any [`Lanes`] implementation: branch-metric tables,
//! add-compare-select over all states with the metrics held in registers,
//! bit-packed decisions in the reference model's layout, normalisation and
//! best-state records.

use super::lanes::Lanes;
use super::metric::KernelMetric;
use super::plan::Plan;
use crate::codes::conv::viterbi::scalar::{Scratch, best_state, words_per_stage};

/// The metrics a forward pass starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Start {
    /// All states equal (a tile: the start state is unknown).
    Equal,
    /// State 0 at 0, every other state at the floor (a frame).
    State0,
}

/// What one forward pass runs over.
#[derive(Debug, Clone, Copy)]
pub(super) struct Pass<'a, L> {
    /// n LLRs per stage.
    pub llrs: &'a [L],
    /// Where the metrics start.
    pub start: Start,
    /// Stages (ascending) after which to record the best state.
    pub record: &'a [usize],
    /// The reference's normalisation request (see [`KernelMetric::normalize_every`]).
    pub normalize_every: usize,
}

impl<L> Pass<'_, L> {
    /// The same pass over other LLRs.
    pub fn over<'b, M>(&self, llrs: &'b [M]) -> Pass<'b, M>
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

/// Run `pass` as `scalar::forward` does: decisions into `ws.out.dec`, the
/// best state after each recorded stage into `ws.out.best`, final metrics
/// into `ws.out.pm`.
///
/// # Safety
/// The CPU must have `V`'s ISA level.
#[inline(always)]
pub(super) unsafe fn forward<V: Lanes>(plan: &Plan<V>, pass: &Pass<'_, V::Llr>, ws: &mut KernelScratch<V::Metric>) {
    // SAFETY (every arm): the caller guarantees V's ISA. S ≤ 256 and W ≥ 8
    // leave at most 32 vectors, a power of two.
    unsafe {
        match (plan.vectors, plan.complementary) {
            (1, c) => forward_in::<V, 1>(plan, pass, ws, c),
            (2, false) => forward_in::<V, 2>(plan, pass, ws, false),
            (2, true) => forward_in::<V, 2>(plan, pass, ws, true),
            (4, false) => forward_in::<V, 4>(plan, pass, ws, false),
            (4, true) => forward_in::<V, 4>(plan, pass, ws, true),
            (8, false) => forward_in::<V, 8>(plan, pass, ws, false),
            (8, true) => forward_in::<V, 8>(plan, pass, ws, true),
            (16, c) => forward_in::<V, 16>(plan, pass, ws, c),
            (32, c) => forward_in::<V, 32>(plan, pass, ws, c),
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
        pub(super) unsafe fn $name(
            plan: &Plan<$lanes>,
            pass: &Pass<'_, <$lanes as Lanes>::Llr>,
            ws: &mut KernelScratch<<$lanes as Lanes>::Metric>,
        ) {
            // SAFETY: this function's own precondition.
            unsafe { kernel::forward(plan, pass, ws) }
        }
    };
}
pub(super) use entry;

/// [`forward`] with the metrics in `NV` vectors; `complementary` is
/// `plan.complementary`, passed as a constant where that pays (the hot sizes).
///
/// # Safety
/// The CPU must have `V`'s ISA level.
#[inline(always)]
unsafe fn forward_in<V: Lanes, const NV: usize>(
    plan: &Plan<V>,
    pass: &Pass<'_, V::Llr>,
    ws: &mut KernelScratch<V::Metric>,
    complementary: bool,
) {
    let (s, w) = (plan.states, V::WIDTH);
    let stages = pass.llrs.len() / plan.n;
    let wps = words_per_stage(s);
    let KernelScratch { out, metrics } = ws;
    out.prepare(s, stages);
    out.best.clear();
    metrics.clear();
    metrics.extend((0..NV * w).map(|l| {
        if pass.start == Start::State0 && l % s != 0 { V::Metric::FLOOR } else { V::Metric::default() }
    }));
    // SAFETY: the caller guarantees V's ISA, the only precondition of every
    // `Lanes` method below.
    let mut pm = unsafe { load_all::<V, NV>(metrics) };
    let every = V::Metric::normalize_every(pass.normalize_every);
    let (mut records, mut next_record) = (pass.record.iter(), usize::MAX);
    next_record = records.next().copied().unwrap_or(next_record);
    let rows = out.dec[..stages * wps].chunks_exact_mut(wps);
    for (t, (stage, row)) in pass.llrs.chunks_exact(plan.n).zip(rows).enumerate() {
        // SAFETY: as above.
        unsafe {
            let table = V::table(stage);
            pm = if NV == 1 {
                single_stage(plan, complementary, table, &pm, row)
            } else {
                group_stage(plan, complementary, table, &pm, row)
            };
        }
        let normalize = every > 0 && (t + 1) % every == 0;
        if normalize || t == next_record {
            // SAFETY: as above.
            unsafe {
                store_all(&pm, metrics);
                let best = best_of(&pm, s).unwrap_or_else(|| best_state(&metrics[..s]));
                if normalize {
                    let top = V::splat(metrics[best]);
                    pm.iter_mut().for_each(|v| *v = v.sub(top));
                }
                if t == next_record {
                    out.best.push(best);
                    next_record = records.next().copied().unwrap_or(usize::MAX);
                }
            }
        }
    }
    // SAFETY: as above.
    unsafe { store_all(&pm, metrics) };
    out.pm.clear();
    out.pm.extend_from_slice(&metrics[..s]);
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
        if pm.iter().any(|v| v.has_nan()) {
            return None;
        }
        let top = pm.iter().skip(1).fold(pm[0], |a, &b| a.max(b)).max_lane();
        let live = low_bits(states.min(V::WIDTH));
        pm.iter().enumerate().find_map(|(i, v)| {
            let hits = V::decisions(v.equal(top), v.equal(top)) & live;
            (hits != 0).then(|| i * V::WIDTH + hits.trailing_zeros() as usize)
        })
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
            let bm = |i| V::lookup(table, i);
            [V::select(even.add(x), odd.add(bm(o0))), V::select(even.add(bm(e1)), odd.add(bm(o1)))]
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
