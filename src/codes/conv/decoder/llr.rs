//! The path-metric arithmetic each LLR type implies for the Viterbi decoders.
//!
//! `f32` LLRs accumulate in `f32` metrics; `i8` LLRs (saturated to ±127 by the
//! quantizer) accumulate exactly in `i32`, so any normalisation that subtracts a
//! common value changes no decision.

use crate::codes::llr::Llr;
use std::ops::{Add, Neg, Sub};

/// An LLR type the Viterbi decoders take, with its path-metric type.
pub trait ViterbiLlr: Llr {
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
    /// A metric so low that no reachable path ever falls below it.
    const METRIC_FLOOR: Self::Metric;
    /// The metric value of this LLR.
    fn metric(self) -> Self::Metric;
}

impl ViterbiLlr for f32 {
    type Metric = f32;
    const METRIC_FLOOR: f32 = -1.0e30;
    #[inline(always)]
    fn metric(self) -> f32 {
        self
    }
}

impl ViterbiLlr for i8 {
    type Metric = i32;
    const METRIC_FLOOR: i32 = -(1 << 28);
    #[inline(always)]
    fn metric(self) -> i32 {
        self as i32
    }
}
