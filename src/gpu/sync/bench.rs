//! `gpufec bench sync --backend gpu`: the GPU MAP decoder's figures on
//! received windows of hard bits at the code's channel, through the shared
//! measurements of [`crate::gpu::bench`]: kernel-only (one device-resident
//! batch) and end to end through the decoder contract with the time split.

use super::GpuSync;
use crate::codes::decode::{Batch, BatchDecoder};
use crate::codes::settings::Chain;
use crate::codes::sync::SyncChain;
use crate::gpu::bench::{EndToEnd, GpuBench, end_to_end, kernel_only};
use crate::gpu::pipeline::{BatchSplit, PipelineOptions};
use anyhow::Context;

impl GpuBench<u8> for GpuSync<u8> {
    fn time_kernel(&mut self, batch: &Batch<'_, u8>, reps: usize) -> anyhow::Result<f64> {
        GpuSync::time_kernel(self, batch, reps)
    }

    fn last_split(&self) -> BatchSplit {
        GpuSync::last_split(self)
    }
}

/// Measure the GPU decoder of `chain`'s stream windows of hard bits: at
/// least `bits` information bits end to end (whole batches, two at least),
/// through `pipeline`'s slots and batches, with the chain's storage.
pub fn bench_sync(chain: &SyncChain, bits: u64, pipeline: &PipelineOptions) -> anyhow::Result<()> {
    let slots = pipeline.slots;
    let mut dec = GpuSync::<u8>::new(chain.code().clone(), chain.params(), chain.stream_config(), 1.0, false, pipeline).context("--backend gpu")?;
    let (per_batch, k) = (dec.limit().units, chain.frame_bits());
    let frames = usize::try_from(bits)?.div_ceil(k).max(2 * per_batch).div_ceil(per_batch) * per_batch;
    // Two batches of distinct windows; the end-to-end run cycles over them.
    let windows = chain.hard_windows(2 * per_batch, 1)?;
    println!(
        "bench sync --backend gpu: {}, {} storage, {} KiB of device memory per frame, {per_batch} frames per batch\n{}",
        chain.code().describe(),
        if dec.global_storage() { "global" } else { "local" },
        dec.unit_bytes() / 1024,
        dec.describe()
    );
    let reps = 5;
    let label = chain.code().describe();
    crate::figures::measuring(&format!("{label} kernel-only"));
    let kernel = kernel_only(&mut dec, &windows, reps)?;
    crate::figures::row("kernel-only", label.clone(), &[("kernel-only", kernel * 1e3, "Mb/s"), ("frames", kernel * 1e9 / k as f64, "frames/s")])?;
    println!("kernel-only: {:.1} Mb/s, {:.0} frames/s (one device-resident batch, mean of {reps} launches)", kernel * 1e3, kernel * 1e9 / k as f64);
    let batches = frames / per_batch;
    crate::figures::measuring(&format!("{label} end to end"));
    let e = end_to_end(&mut dec, &windows, batches)?;
    crate::figures::row("end to end", label, &e.figures())?;
    println!(
        "end to end: {:.1} Mb/s, {:.0} frames/s over {batches} batches ({slots} slots); per batch: {}: {}",
        e.gbps * 1e3,
        e.gbps * 1e9 / k as f64,
        EndToEnd::SPLIT_HEADER,
        e.split_cells()
    );
    Ok(())
}
