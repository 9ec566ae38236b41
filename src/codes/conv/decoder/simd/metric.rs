//! The path-metric element types of the kernels, and why each gives exactly
//! the reference model's decisions.

use crate::codes::conv::decoder::llr::ViterbiLlr;

/// What the kernel needs to know about its metric element.
pub(super) trait KernelMetric: Copy + Default + PartialOrd + std::fmt::Debug {
    /// Start metric of the states a frame cannot be in yet.
    const FLOOR: Self;
    /// Stages between normalisations (subtracting the best metric from all),
    /// given the reference model's request.
    fn normalize_every(requested: usize) -> usize;
}

/// `f32` LLRs: the kernel does the reference's arithmetic operation for
/// operation — the same start values, the same branch-metric additions in
/// generator order, `pm + bm`, a strict `>`, and the same normalisation
/// (subtract the best metric, on the reference's schedule) — so every metric
/// is rounded identically and every decision is the same bit.
impl KernelMetric for f32 {
    const FLOOR: f32 = <f32 as ViterbiLlr>::METRIC_FLOOR;
    fn normalize_every(requested: usize) -> usize {
        requested
    }
}

/// `i8` LLRs: the reference accumulates in `i32`, the kernels in `i16` with
/// wrapping adds. In exact integer arithmetic a decision compares two sums and
/// the best state is an arg-max; subtracting one value from every metric
/// changes neither. So the kernel's metrics are the reference's minus a common
/// offset, and its decisions are the same bits, as long as no `i16` value
/// leaves [−32768, 32767]. It cannot, for any length:
///
/// - Let B = 128·n ≤ 512 bound a branch metric (n ≤ 4 terms ±llr, |llr| ≤ 128,
///   which covers `i8::MIN`; the framer's `CERTAIN_ZERO` is 127).
/// - A stage moves every metric by at most B: a new metric is `pm + bm` for
///   some old `pm`, so it lies within [old min − B, old max + B].
/// - Spread: at stage t ≥ K−1 let M be the best metric at stage t−(K−1). Any
///   state is reached from that best state by K−1 branches, so every metric is
///   ≥ M − (K−1)B; every survivor passes through some state at t−(K−1), so
///   every metric is ≤ M + (K−1)B. Hence max − min ≤ D = 2(K−1)B ≤ 8192 (K ≤ 9).
/// - Every 32 stages the best metric is subtracted from all; afterwards
///   they lie in [−D, 0], and 32 stages later (candidates included) in
///   [−D − 32B, D + 32B] ⊂ ±24576. Tiles start all equal (0), so before the
///   first normalisation everything lies in ±32B = ±16384.
/// - Frames start with 0 in state 0 and `FLOOR` = −16384 elsewhere. A
///   reachable state's metric is ≥ −tB ≥ −4096 for t ≤ K−1 ≤ 8, a candidate
///   from an unreachable state ≤ FLOOR + 8B = −12288: the reachable one wins, as
///   in the reference with its floor of −2^28, and two unreachable candidates
///   are the same sums offset by each model's floor. From stage K−1 on every
///   state descends from state 0 and the bound above holds (the first
///   normalisation, at stage 32, comes later). The lowest value ever formed is
///   FLOOR − 8B = −20480.
impl KernelMetric for i16 {
    const FLOOR: i16 = -16384;
    fn normalize_every(_requested: usize) -> usize {
        32
    }
}
