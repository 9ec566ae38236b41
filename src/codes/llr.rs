//! The two LLR sample types that travel between blocks, and the path-metric
//! arithmetic each one implies.
//!
//! LLR = ln P(b=0)/P(b=1): positive means bit 0. `f32` LLRs accumulate in `f32`
//! metrics; `i8` LLRs (saturated to ±127 by the quantizer) accumulate exactly in
//! `i32`, so any normalisation that subtracts a common value changes no decision.

use crate::codes::error::{CodeError, CodeResult};
use std::ops::{Add, Neg, Sub};

/// A soft-bit sample type accepted by the decoders.
pub trait Llr: Copy + Default + Send + Sync + PartialEq + std::fmt::Debug + 'static {
    /// Path-metric type the decoders accumulate this LLR type in.
    type Metric: Copy
        + Default
        + PartialOrd
        + Add<Output = Self::Metric>
        + Sub<Output = Self::Metric>
        + Neg<Output = Self::Metric>
        + Send
        + Sync
        + std::fmt::Debug
        + 'static;
    /// Name used in messages and flowgraph files (`f32`, `i8`).
    const NAME: &'static str;
    /// A confident "bit 0": the framer fills the stages before a stream's start
    /// with it, because every encoder starts from the all-zero state.
    const CERTAIN_ZERO: Self;
    /// A metric so low that no reachable path ever falls below it.
    const METRIC_FLOOR: Self::Metric;
    /// The metric value of this LLR.
    fn metric(self) -> Self::Metric;
    /// Whether the value is a usable LLR (not NaN, not infinite).
    fn is_finite(self) -> bool;
    /// The slice as its concrete sample type, for kernels written per type
    /// (the SIMD Viterbi); `None` for a type without such kernels.
    fn typed(llrs: &[Self]) -> Option<LlrSlice<'_>> {
        let _ = llrs;
        None
    }
}

/// A slice of LLRs seen as its concrete sample type.
#[derive(Debug, Clone, Copy)]
pub enum LlrSlice<'a> {
    /// `f32` LLRs.
    F32(&'a [f32]),
    /// `i8` LLRs.
    I8(&'a [i8]),
}

impl Llr for f32 {
    type Metric = f32;
    const NAME: &'static str = "f32";
    // Far above any channel LLR (2y/σ² stays below ~200 up to 20 dB Eb/N0), yet
    // small enough that a few hundred such stages leave f32 metrics precise.
    const CERTAIN_ZERO: f32 = 1000.0;
    const METRIC_FLOOR: f32 = -1.0e30;
    #[inline(always)]
    fn metric(self) -> f32 {
        self
    }
    #[inline(always)]
    fn is_finite(self) -> bool {
        f32::is_finite(self)
    }
    fn typed(llrs: &[f32]) -> Option<LlrSlice<'_>> {
        Some(LlrSlice::F32(llrs))
    }
}

impl Llr for i8 {
    type Metric = i32;
    const NAME: &'static str = "i8";
    const CERTAIN_ZERO: i8 = 127;
    const METRIC_FLOOR: i32 = -(1 << 28);
    #[inline(always)]
    fn metric(self) -> i32 {
        self as i32
    }
    #[inline(always)]
    fn is_finite(self) -> bool {
        true
    }
    fn typed(llrs: &[i8]) -> Option<LlrSlice<'_>> {
        Some(LlrSlice::I8(llrs))
    }
}

/// Reject NaN or infinite LLRs with the index of the first one.
pub fn check_finite<T: Llr>(llrs: &[T]) -> CodeResult<()> {
    if all_finite(llrs) {
        return Ok(());
    }
    let index = llrs.iter().position(|v| !v.is_finite()).unwrap_or_default();
    Err(CodeError::NonFiniteLlr { index })
}

/// Whether every LLR is finite, as fast as memory allows: a fold without early
/// exit vectorises, a search for the first bad value does not.
pub fn all_finite<T: Llr>(llrs: &[T]) -> bool {
    llrs.chunks(4096).all(|c| c.iter().fold(true, |ok, v| ok & v.is_finite()))
}
