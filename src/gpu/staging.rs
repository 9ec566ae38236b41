//! Staging a batch's units into a slot's pinned memory, for every family:
//! streaming stores on the host pool, each `f32` LLR checked finite on the
//! way (one pass over memory, not two), an error naming the first bad LLR by
//! its place in the batch.

use crate::codes::decode::Batch;
use crate::codes::error::CodeResult;
use crate::codes::llr::{Llr, LlrType, all_finite};
use crate::gpu::pipeline::{par_chunks, par_units};
use crate::gpu::stream_copy::stream_copy;
use rayon::prelude::*;

/// Copy units `range` of `batch` into `host` (their place in pinned staging)
/// at `pitch` items each, checking that every LLR is finite on the way (one
/// pass over memory, not two).
pub(crate) fn stage_units<T: Llr>(host: &mut [T], batch: &Batch<'_, T>, unit_len: usize, pitch: usize, range: std::ops::Range<usize>) -> anyhow::Result<()> {
    let Some(_) = batch.uniform_len() else {
        // Units that lie apart in the batch's buffer: one by one.
        return stage_each(host, batch, pitch, 0, |_, _| {}, range);
    };
    let finite = std::sync::atomic::AtomicBool::new(true);
    let copy = |d: &mut [T], c: &[T]| copy_checked(d, c, &finite);
    let items = &batch.items()[range.start * unit_len..range.end * unit_len];
    if pitch == unit_len {
        par_chunks(host, items, copy);
    } else {
        par_units(host, pitch, items, unit_len, |dst, src| {
            for (d, c) in dst.chunks_mut(pitch).zip(src.chunks(unit_len)) {
                copy(&mut d[..unit_len], c);
            }
        });
    }
    name_non_finite(finite, batch, range)
}

/// Copy units `range` of `batch` one by one into `host`, `pitch` items
/// apart, each behind a header of `head` items that `header(unit, items)`
/// writes (a decoder's per-unit word), checking every LLR as
/// [`stage_units`] does.
pub(crate) fn stage_each<T: Llr>(
    host: &mut [T],
    batch: &Batch<'_, T>,
    pitch: usize,
    head: usize,
    header: impl Fn(usize, &mut [T]) + Sync,
    range: std::ops::Range<usize>,
) -> anyhow::Result<()> {
    let finite = std::sync::atomic::AtomicBool::new(true);
    host[..range.len() * pitch].par_chunks_mut(pitch).with_min_len((1 << 20) / (pitch * size_of::<T>()).max(1)).enumerate().for_each(|(i, d)| {
        let unit = range.start + i;
        let (h, d) = d.split_at_mut(head);
        header(unit, h);
        let llrs = batch.unit(unit);
        copy_checked(&mut d[..llrs.len()], llrs, &finite);
    });
    name_non_finite(finite, batch, range)
}

/// Stream `src` into staging, noting in `finite` an f32 LLR that is not.
fn copy_checked<T: Llr>(dst: &mut [T], src: &[T], finite: &std::sync::atomic::AtomicBool) {
    stream_copy(dst, src);
    if T::TYPE == LlrType::F32 && !all_finite(src) {
        finite.store(false, std::sync::atomic::Ordering::Relaxed);
    }
}

/// The error naming the first non-finite LLR of units `range`, by its place
/// in the batch (not in a staging chunk), when the copies found one.
fn name_non_finite<T: Llr>(finite: std::sync::atomic::AtomicBool, batch: &Batch<'_, T>, range: std::ops::Range<usize>) -> anyhow::Result<()> {
    if !finite.into_inner() {
        batch.check_finite(range)?;
    }
    Ok(())
}

/// The items from the first unit's start to the last unit's end and the
/// stride between units, when the `units` units of `batch` (of `unit_len`
/// items each) follow each other at one stride (units cut in place from a
/// stream, or a caller's buffer of whole units), so that the region holds
/// unit u at u · stride (0 for one unit): what a decoder can copy to the
/// device as it lies.
fn strided_region<'a, T: Copy>(batch: &Batch<'a, T>, units: usize, unit_len: usize) -> Option<(&'a [T], usize)> {
    if units == 0 {
        return None;
    }
    let first = batch.span(0).start;
    let stride = if units > 1 { batch.span(1).start.checked_sub(first).filter(|&s| s > 0)? } else { 0 };
    let even = (0..units).all(|u| {
        let s = batch.span(u);
        s.start == first + u * stride && s.len == unit_len
    });
    even.then(|| (&batch.items()[first..first + (units - 1) * stride + unit_len], stride))
}

/// [`strided_region`], when `fits(stride)` says the decoder's kernel reads
/// units so, with its LLRs checked as staging checks them (f32: every one
/// finite, the error naming the first that is not); `None`: the batch is
/// staged instead.
pub(crate) fn in_place_region<'a, T: Llr>(batch: &Batch<'a, T>, units: usize, unit_len: usize, fits: impl Fn(usize) -> bool) -> CodeResult<Option<(&'a [T], usize)>> {
    let Some((region, stride)) = strided_region(batch, units, unit_len).filter(|&(_, stride)| fits(stride)) else {
        return Ok(None);
    };
    if T::TYPE == LlrType::F32 && !all_finite(region) {
        batch.check_finite(0..units)?;
    }
    Ok(Some((region, stride)))
}
