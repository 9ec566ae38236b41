//! `gpufec bench turbo --backend gpu`: the GPU turbo decoder's figures on
//! noisy code blocks, through the shared measurements of
//! [`crate::gpu::bench`]: kernel-only (one device-resident batch), end to end
//! through the decoder contract with the time split, the host-memory floor
//! and the copy engine's ceiling for the batch's bytes.

use super::GpuTurbo;
use crate::codes::decode::BatchDecoder;
use crate::codes::llr::Llr;
use crate::codes::settings::Chain;
use crate::codes::turbo::{DecoderConfig, Sent, TurboChain};
use crate::gpu::bench::{EndToEnd, GpuBench, copy_engine, end_to_end, host_floor, kernel_only};
use crate::gpu::pipeline::{BatchSplit, PipelineOptions};
use anyhow::Context;

impl<T: Llr> GpuBench<T> for GpuTurbo<T> {
    fn time_kernel(&mut self, batch: &crate::codes::decode::Batch<'_, T>, reps: usize) -> anyhow::Result<f64> {
        GpuTurbo::time_kernel(self, batch, reps)
    }

    fn last_split(&self) -> BatchSplit {
        GpuTurbo::last_split(self)
    }
}

/// Measure the GPU decoder of `chain`'s code blocks (bare code blocks only)
/// on LLRs of `T` at `ebn0` dB: at least `bits` information bits end to end
/// (whole batches, two at least), through `pipeline`'s slots and batches.
pub fn bench_turbo<T: Llr>(chain: &TurboChain, ebn0: f64, bits: u64, pipeline: &PipelineOptions) -> anyhow::Result<()> {
    let slots = pipeline.slots;
    let Sent::Blocks(code) = chain.sent() else {
        anyhow::bail!("the GPU bench of bare code blocks was given transport blocks");
    };
    let cfg: DecoderConfig = chain.config_for(code.k(), true);
    // The LLRs' scale is only known once the channel is: a first decoder gives the batch size.
    let per_batch = GpuTurbo::<T>::new(code.clone(), cfg, 1.0, pipeline).context("--backend gpu")?.limit().units;
    let blocks = usize::try_from(bits)?.div_ceil(code.k()).max(2 * per_batch).div_ceil(per_batch) * per_batch;
    let noisy = chain.noisy::<T>((2 * per_batch * code.k()) as u64, ebn0, 1)?;
    let (units, scale) = (noisy.llrs, noisy.scale);
    let mut dec = GpuTurbo::<T>::new(code.clone(), cfg, scale, pipeline).context("--backend gpu")?;
    let k = code.k();
    println!("bench turbo --backend gpu: K={k} ({}), {} LLRs at Eb/N0 {ebn0} dB, {per_batch} blocks per batch\n{}", cfg.describe(), T::NAME, dec.describe());
    let reps = 10;
    let label = format!("K={k} {}", T::NAME);
    crate::figures::measuring(&format!("{label} kernel-only"));
    let kernel = kernel_only(&mut dec, &units, reps)?;
    crate::figures::row("kernel-only", label.clone(), &[("kernel-only", kernel, "Gb/s")])?;
    println!("kernel-only: {kernel:.2} Gb/s (one device-resident batch, mean of {reps} decodes: load, iterations, stop)");
    let batches = blocks / per_batch;
    crate::figures::measuring(&format!("{label} end to end"));
    let e = end_to_end(&mut dec, &units, batches)?;
    crate::figures::row("end to end", label, &e.figures())?;
    println!("end to end: {:.2} Gb/s over {batches} batches ({slots} slots); per batch: {}: {}", e.gbps, EndToEnd::SPLIT_HEADER, e.split_cells());
    // LLR bytes per information bit: the 3K + 4m LLRs of a block over its K
    // bits, rounded down (the tail's 4m LLRs are a fraction of a percent;
    // rounding up would count 4 bytes for 3).
    let in_bytes = (code.coded_len() * size_of::<T>() / k).max(1);
    host_floor(0, in_bytes, per_batch * k)?;
    copy_engine(0, per_batch * code.coded_len() * size_of::<T>())?;
    Ok(())
}
