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
use crate::codes::conv::decoder::config::ViterbiMode;
use crate::codes::conv::decoder::scalar::{self, FRAME_NORMALIZE_EVERY, Scratch};
use crate::codes::error::{CodeResult, invalid};
use crate::codes::simd::SimdLevel;
use crate::codes::conv::decoder::llr::ViterbiLlr;
#[cfg(target_arch = "x86_64")]
use crate::codes::llr::{Llr, LlrSlice};
use kernel::{KernelScratch, Pass, Start};
#[cfg(target_arch = "x86_64")]
use plan::Plan;

/// One decoder thread's working memory, for every level; the kernels' for
/// up to [`STREAMS`] jobs decoded together.
#[derive(Debug, Default)]
pub(crate) struct Workspace<M> {
    scalar: Scratch<M>,
    f32: [KernelScratch<f32>; STREAMS],
    i16: [KernelScratch<i16>; STREAMS],
}

/// Jobs (tiles or frames) a kernel decodes in one loop. Each stage waits on
/// the one before (permute, add, compare); a second, independent job fills
/// those waits: the AVX-512 K=7 stage loop runs about 1.5× faster, a whole
/// decode 10–20% (BENCHMARKS.md).
pub(crate) const STREAMS: usize = 2;

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

/// Where a forward pass left its results, per stream.
enum Ran<'w, M, const S: usize> {
    F32(&'w [KernelScratch<f32>; S]),
    I16(&'w [KernelScratch<i16>; S]),
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
    fn run<'w, T: ViterbiLlr, const S: usize>(&self, pass: Pass<'_, T, S>, ws: &'w mut Workspace<T::Metric>) -> Ran<'w, T::Metric, S> {
        #[cfg(target_arch = "x86_64")]
        {
            let (Some(f32s), Some(i16s)) = (ws.f32.first_chunk_mut::<S>(), ws.i16.first_chunk_mut::<S>()) else {
                return Ran::Scalar(&mut ws.scalar);
            };
            // SAFETY (every arm): `new` built these plans only after checking
            // that the CPU has their level.
            match (&self.plans, typed(pass.llrs)) {
                (Plans::Avx2(plan, _), Some(Typed::F32(l))) => {
                    unsafe { avx2::forward_f32(plan, &pass.over(l), f32s) };
                    return Ran::F32(f32s);
                }
                (Plans::Avx2(_, plan), Some(Typed::I8(l))) => {
                    unsafe { avx2::forward_i16(plan, &pass.over(l), i16s) };
                    return Ran::I16(i16s);
                }
                (Plans::Avx512(plan, _), Some(Typed::F32(l))) => {
                    unsafe { avx512::forward_f32(plan, &pass.over(l), f32s) };
                    return Ran::F32(f32s);
                }
                (Plans::Avx512(_, plan), Some(Typed::I8(l))) => {
                    unsafe { avx512::forward_i16(plan, &pass.over(l), i16s) };
                    return Ran::I16(i16s);
                }
                _ => {}
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = pass;
        Ran::Scalar(&mut ws.scalar)
    }

    /// Decode `S` jobs of `mode` (tiles or frames; `record` is the tiles'
    /// record points) together, each bit-exact with the reference's
    /// [`scalar::decode_tile`] or [`scalar::decode_frame`].
    pub(crate) fn decode<T: ViterbiLlr, const S: usize>(
        &self,
        trellis: &Trellis,
        mode: &ViterbiMode,
        record: &[usize],
        llrs: [&[T]; S],
        ws: &mut Workspace<T::Metric>,
        out: [&mut [u8]; S],
    ) {
        let pass = match mode {
            ViterbiMode::Tiled(_) => Pass { llrs, start: Start::Equal, record, normalize_every: 0 },
            ViterbiMode::Frame(_) => {
                Pass { llrs, start: Start::State0, record: &[], normalize_every: FRAME_NORMALIZE_EVERY }
            }
        };
        match self.run(pass, ws) {
            Ran::F32(s) => s.iter().zip(out).for_each(|(s, out)| traceback(trellis, mode, &s.out, out)),
            Ran::I16(s) => s.iter().zip(out).for_each(|(s, out)| traceback(trellis, mode, &s.out, out)),
            Ran::Scalar(s) => {
                for (llrs, out) in llrs.into_iter().zip(out) {
                    match mode {
                        ViterbiMode::Tiled(tile) => scalar::decode_tile(trellis, tile, llrs, s, record, out),
                        ViterbiMode::Frame(frame) => scalar::decode_frame(trellis, frame, llrs, s, out),
                    }
                }
            }
        }
    }
}

/// The reference's traceback of one job whose forward pass has run.
fn traceback<M: Copy + PartialOrd>(trellis: &Trellis, mode: &ViterbiMode, scratch: &Scratch<M>, out: &mut [u8]) {
    match mode {
        ViterbiMode::Tiled(tile) => scalar::tile_traceback(trellis, tile, scratch, out),
        ViterbiMode::Frame(frame) => scalar::frame_traceback(trellis, frame, scratch, out),
    }
}

/// LLR streams of one concrete type.
#[cfg(target_arch = "x86_64")]
enum Typed<'a, const S: usize> {
    F32([&'a [f32]; S]),
    I8([&'a [i8]; S]),
}

/// The streams as their concrete type.
#[cfg(target_arch = "x86_64")]
fn typed<T: Llr, const S: usize>(llrs: [&[T]; S]) -> Option<Typed<'_, S>> {
    match T::typed(llrs.first()?) {
        LlrSlice::F32(_) => Some(Typed::F32(llrs.map(|l| match T::typed(l) {
            LlrSlice::F32(l) => l,
            LlrSlice::I8(_) => &[],
        }))),
        LlrSlice::I8(_) => Some(Typed::I8(llrs.map(|l| match T::typed(l) {
            LlrSlice::I8(l) => l,
            LlrSlice::F32(_) => &[],
        }))),
    }
}
