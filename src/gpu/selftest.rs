//! A check of the GPU plumbing every family relies on, runnable on any GPU:
//! batches through a three-slot pipeline, each staged in chunks, through the
//! slot's auxiliary buffer, with per-batch status words read back, collected
//! in order. `gpufec info` runs it.

use super::compile::kernel;
use super::device::{context, cuda};
use super::pipeline::{Pipeline, PipelineOptions, SlotSize};
use cudarc::driver::{result, sys};
use std::ffi::c_void;

/// Items per batch: several staging chunks, so that chunked copies are checked too.
const ITEMS: usize = 5 << 20;
/// Batches: more than the slots, so that every slot is reused.
const BATCHES: u32 = 7;

/// The input item `i` of batch `b`.
fn item(b: u32, i: usize) -> u32 {
    (i as u32).wrapping_mul(2_654_435_761) ^ b
}

/// Run the self-test on `device`; a line saying what was checked, or what failed.
pub fn pipeline_selftest(device: usize) -> anyhow::Result<String> {
    let ctx = context(device)?;
    let f = kernel(&ctx, "selftest.cu", "selftest", &[])?;
    let options = PipelineOptions { device, slots: 3, poison: Some(0x5a), ..Default::default() };
    let size = SlotSize { in_items: ITEMS, dev_in_bytes: 4 * ITEMS, out_items: ITEMS, aux_bytes: vec![4 * ITEMS], status_words: 4 };
    let mut pipe = Pipeline::<u32, u32>::new(&ctx, &options, size)?;
    let mut next_check = 0u32;
    let mut check = |pipe: &mut Pipeline<u32, u32>| -> anyhow::Result<()> {
        let b = next_check;
        next_check += 1;
        let collected = pipe.collect(|out, status| {
            let salt = b.wrapping_mul(0x9e37_79b9);
            if let Some(i) = (0..ITEMS).find(|&i| out[i] != (item(b, i) ^ salt).wrapping_add(1)) {
                anyhow::bail!("batch {b}, item {i}: {:#x} came back, not {:#x}", out[i], (item(b, i) ^ salt).wrapping_add(1));
            }
            anyhow::ensure!(status == [(ITEMS / 4) as u32; 4], "batch {b}: status words {status:?}, not {} each", ITEMS / 4);
            Ok(())
        })?;
        anyhow::ensure!(collected, "batch {b} was not in flight");
        Ok(())
    };
    for b in 0..BATCHES {
        if pipe.in_flight() == pipe.depth() {
            check(&mut pipe)?;
        }
        let fill = |host: &mut [u32], parts: std::ops::Range<usize>| {
            for (h, i) in host.iter_mut().zip(parts) {
                *h = item(b, i);
            }
            Ok(())
        };
        pipe.submit(ITEMS, 1, fill, ITEMS, 4, |stream, slot| {
            let (mut input, mut out, mut aux) = (slot.input.ptr(), slot.output.ptr(), slot.aux[0].ptr());
            let mut status: sys::CUdeviceptr = slot.status.map_or(0, |s| s.ptr());
            let (mut n, mut salt) = (ITEMS as u32, b.wrapping_mul(0x9e37_79b9));
            let mut params: [*mut c_void; 6] = [
                (&mut input as *mut sys::CUdeviceptr).cast(),
                (&mut out as *mut sys::CUdeviceptr).cast(),
                (&mut aux as *mut sys::CUdeviceptr).cast(),
                (&mut status as *mut sys::CUdeviceptr).cast(),
                (&mut n as *mut u32).cast(),
                (&mut salt as *mut u32).cast(),
            ];
            // SAFETY: the parameters match the kernel's signature; input, output
            // and auxiliary buffers hold ITEMS words, the status buffer 4.
            unsafe { result::launch_kernel(f.cu_function(), ((ITEMS as u32).div_ceil(256), 1, 1), (256, 1, 1), 0, stream, &mut params) }
                .map_err(cuda("self-test kernel launch"))
        })?;
    }
    while pipe.in_flight() > 0 {
        check(&mut pipe)?;
    }
    Ok(format!(
        "pipeline self-test: {BATCHES} batches of {ITEMS} words through {} slots, chunked staging, auxiliary buffers and status read-back: ok",
        pipe.depth()
    ))
}
