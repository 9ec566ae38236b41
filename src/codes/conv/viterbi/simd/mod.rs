//! SIMD forward passes of the CPU Viterbi decoder, chosen at run time.
//!
//! The kernels produce exactly the reference model's decisions and best
//! states (`scalar.rs`), in its layout, so the reference tracebacks read them
//! unchanged and every output bit is the same: for `f32` LLRs by doing the
//! same floating-point operations in the same order, for `i8` LLRs by exact
//! integer arithmetic in 16-bit lanes (see `metric.rs` for the bound).
//!
//! - `lanes.rs`: the vector operations a kernel needs (one trait);
//! - `plan.rs`: how a code's trellis maps onto lanes (built once per decoder);
//! - `kernel.rs`: the forward pass, written once over the trait;
//! - `avx2.rs`, `avx512.rs`: the trait for each instruction set;
//! - `metric.rs`: the metric element types and why each is exact.

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;
mod kernel;
mod lanes;
mod metric;
mod plan;
#[cfg(test)]
mod tests;

use crate::codes::conv::code::Trellis;
use crate::codes::conv::viterbi::config::{FrameConfig, TileConfig};
use crate::codes::conv::viterbi::scalar::{self, FRAME_NORMALIZE_EVERY, Scratch};
use crate::codes::error::{CodeResult, invalid};
#[cfg(target_arch = "x86_64")]
use crate::codes::llr::LlrSlice;
use crate::codes::llr::Llr;
use kernel::{KernelScratch, Pass, Start};
#[cfg(target_arch = "x86_64")]
use plan::Plan;

/// Instruction-set level of the CPU Viterbi's forward pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SimdLevel {
    /// The reference model itself (`scalar.rs`); runs everywhere.
    Scalar,
    /// 256-bit AVX2: 8 `f32` or 16 `i16` metrics per register.
    Avx2,
    /// 512-bit AVX-512F and AVX-512BW: 16 `f32` or 32 `i16` metrics per register.
    Avx512,
}

impl SimdLevel {
    /// Every level, slowest first.
    pub const ALL: [SimdLevel; 3] = [SimdLevel::Scalar, SimdLevel::Avx2, SimdLevel::Avx512];

    /// Whether this CPU can run the level.
    pub fn is_supported(self) -> bool {
        match self {
            SimdLevel::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            SimdLevel::Avx2 => is_x86_feature_detected!("avx2"),
            #[cfg(target_arch = "x86_64")]
            SimdLevel::Avx512 => is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bw"),
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// The levels this CPU can run, slowest first.
    pub fn supported() -> Vec<SimdLevel> {
        Self::ALL.into_iter().filter(|l| l.is_supported()).collect()
    }

    /// The level decoders use by default: the fastest one this CPU runs.
    ///
    /// AVX-512 is preferred to AVX2 where both run (measured on a 2-core AMD
    /// EPYC, see BENCHMARKS.md).
    pub fn detect() -> SimdLevel {
        Self::supported().last().copied().unwrap_or(SimdLevel::Scalar)
    }

    /// Parse `scalar`, `avx2` or `avx512`.
    pub fn parse(s: &str) -> CodeResult<Self> {
        Self::ALL
            .into_iter()
            .find(|l| l.to_string() == s.trim())
            .ok_or_else(|| invalid!("SIMD level '{s}' is none of scalar, avx2, avx512"))
    }
}

impl std::fmt::Display for SimdLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SimdLevel::Scalar => "scalar",
            SimdLevel::Avx2 => "avx2",
            SimdLevel::Avx512 => "avx512",
        })
    }
}

/// One decoder thread's working memory, for every level.
#[derive(Debug, Default)]
pub(crate) struct Workspace<M> {
    scalar: Scratch<M>,
    f32: KernelScratch<f32>,
    i16: KernelScratch<i16>,
}

/// A code's forward pass at one level: the per-code tables of both LLR types.
pub(crate) struct Kernel {
    level: SimdLevel,
    plans: Plans,
}

enum Plans {
    Scalar,
    #[cfg(target_arch = "x86_64")]
    Avx2(Plan<avx2::F32x8>, Plan<avx2::I16x16>),
    #[cfg(target_arch = "x86_64")]
    Avx512(Plan<avx512::F32x16>, Plan<avx512::I16x32>),
}

/// Where a forward pass left its results.
enum Ran<'w, M> {
    F32(&'w Scratch<f32>),
    I16(&'w Scratch<i16>),
    /// Not run: the reference model decodes with this scratch.
    Scalar(&'w mut Scratch<M>),
}

impl Kernel {
    /// The forward pass of `trellis` at `level`; an error if this CPU lacks it.
    pub(crate) fn new(trellis: &Trellis, level: SimdLevel) -> CodeResult<Self> {
        if !level.is_supported() {
            return Err(invalid!("this CPU cannot run the {level} Viterbi kernels"));
        }
        let plans = match level {
            SimdLevel::Scalar => Plans::Scalar,
            // SAFETY (both arms): the CPU has the level, checked above.
            #[cfg(target_arch = "x86_64")]
            SimdLevel::Avx2 => unsafe { Plans::Avx2(Plan::new(trellis), Plan::new(trellis)) },
            #[cfg(target_arch = "x86_64")]
            SimdLevel::Avx512 => unsafe { Plans::Avx512(Plan::new(trellis), Plan::new(trellis)) },
            #[cfg(not(target_arch = "x86_64"))]
            _ => Plans::Scalar,
        };
        Ok(Self { level, plans })
    }

    /// The level this kernel runs at.
    pub(crate) fn level(&self) -> SimdLevel {
        self.level
    }

    /// Run `pass` if a SIMD kernel takes its LLRs.
    fn run<'w, T: Llr>(&self, pass: Pass<'_, T>, ws: &'w mut Workspace<T::Metric>) -> Ran<'w, T::Metric> {
        #[cfg(target_arch = "x86_64")]
        {
            let (f32s, i16s) = (&mut ws.f32, &mut ws.i16);
            // SAFETY (every arm): `new` built these plans only after checking
            // that the CPU has their level.
            match (&self.plans, T::typed(pass.llrs)) {
                (Plans::Avx2(plan, _), Some(LlrSlice::F32(l))) => {
                    unsafe { avx2::forward_f32(plan, &pass.over(l), f32s) };
                    return Ran::F32(&f32s.out);
                }
                (Plans::Avx2(_, plan), Some(LlrSlice::I8(l))) => {
                    unsafe { avx2::forward_i16(plan, &pass.over(l), i16s) };
                    return Ran::I16(&i16s.out);
                }
                (Plans::Avx512(plan, _), Some(LlrSlice::F32(l))) => {
                    unsafe { avx512::forward_f32(plan, &pass.over(l), f32s) };
                    return Ran::F32(&f32s.out);
                }
                (Plans::Avx512(_, plan), Some(LlrSlice::I8(l))) => {
                    unsafe { avx512::forward_i16(plan, &pass.over(l), i16s) };
                    return Ran::I16(&i16s.out);
                }
                _ => {}
            }
        }
        Ran::Scalar(&mut ws.scalar)
    }

    /// Decode one tile, bit-exact with [`scalar::decode_tile`].
    pub(crate) fn decode_tile<T: Llr>(
        &self,
        trellis: &Trellis,
        tile: &TileConfig,
        llrs: &[T],
        ws: &mut Workspace<T::Metric>,
        record: &[usize],
        out: &mut [u8],
    ) {
        let pass = Pass { llrs, start: Start::Equal, record, normalize_every: 0 };
        match self.run(pass, ws) {
            Ran::F32(s) => scalar::tile_traceback(trellis, tile, s, out),
            Ran::I16(s) => scalar::tile_traceback(trellis, tile, s, out),
            Ran::Scalar(s) => scalar::decode_tile(trellis, tile, llrs, s, record, out),
        }
    }

    /// Decode one frame, bit-exact with [`scalar::decode_frame`].
    pub(crate) fn decode_frame<T: Llr>(
        &self,
        trellis: &Trellis,
        frame: &FrameConfig,
        llrs: &[T],
        ws: &mut Workspace<T::Metric>,
        out: &mut [u8],
    ) {
        let pass = Pass { llrs, start: Start::State0, record: &[], normalize_every: FRAME_NORMALIZE_EVERY };
        match self.run(pass, ws) {
            Ran::F32(s) => scalar::frame_traceback(trellis, frame, s, out),
            Ran::I16(s) => scalar::frame_traceback(trellis, frame, s, out),
            Ran::Scalar(s) => scalar::decode_frame(trellis, frame, llrs, s, out),
        }
    }
}
