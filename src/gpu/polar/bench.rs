//! `gpufec bench polar --backend gpu`: the GPU BP decoder's figures on noisy
//! codewords, through the shared measurements of [`crate::gpu::bench`]:
//! kernel-only (one device-resident batch), end to end through the decoder
//! contract with the time split, the host-memory floor and the copy
//! engine's ceiling for the batch's bytes; and the mean iterations of the
//! codewords measured, on which an early-stopping decoder's speed depends.

use super::GpuPolar;
use crate::codes::decode::{Batch, BatchDecoder, Decoded};
use crate::codes::llr::Llr;
use crate::codes::polar::{Algorithm, PolarChain, PolarFrames};
use crate::codes::settings::Chain;
use crate::gpu::bench::{EndToEnd, GpuBench, copy_engine, end_to_end, end_to_end_in_place, host_floor, kernel_only};
use crate::gpu::pipeline::{BatchSplit, PipelineOptions};
use anyhow::Context;

impl<T: Llr> GpuBench<T> for GpuPolar<T> {
    fn time_kernel(&mut self, batch: &Batch<'_, T>, reps: usize) -> anyhow::Result<f64> {
        GpuPolar::time_kernel(self, batch, reps)
    }

    fn last_split(&self) -> BatchSplit {
        GpuPolar::last_split(self)
    }
}

/// Measure the GPU decoder of `chain`'s bare codewords on LLRs of `T` at
/// `ebn0` dB: at least `bits` payload bits end to end (whole batches, two
/// at least), through `pipeline`'s slots and batches.
pub fn bench_polar<T: Llr>(chain: &PolarChain, ebn0: f64, bits: u64, pipeline: &PipelineOptions) -> anyhow::Result<()> {
    let slots = pipeline.slots;
    let PolarFrames::Codewords(spec) = chain.frames() else {
        anyhow::bail!("the GPU bench of bare codewords was given 5G messages");
    };
    let Algorithm::Bp(cfg) = chain.algorithm() else {
        anyhow::bail!("--backend gpu decodes BP; {} runs on the CPU", chain.algorithm().describe());
    };
    let mut dec = GpuPolar::<T>::new(spec.clone(), cfg, false, pipeline).context("--backend gpu")?;
    let (n, p) = (spec.n(), spec.payload_len());
    let per_batch = dec.limit().units;
    let codewords = usize::try_from(bits)?.div_ceil(p).max(2 * per_batch).div_ceil(per_batch) * per_batch;
    let noisy = chain.noisy::<T>((2 * per_batch * p) as u64, ebn0, 1)?;
    let units = noisy.llrs;
    println!("bench polar --backend gpu: {}, {} LLRs at Eb/N0 {ebn0} dB, {per_batch} codewords per batch\n{}", chain.describe(), T::NAME, dec.describe());
    let mut first = Decoded::default();
    dec.decode(&Batch::uniform(&units[..per_batch * n], n)?, &mut first)?;
    let mean = first.reports.iter().map(|r| f64::from(r.iterations)).sum::<f64>() / first.reports.len().max(1) as f64;
    println!("mean iterations: {mean:.2} over {} codewords", first.reports.len());
    let reps = 10;
    let label = format!("N={n} {}", T::NAME);
    crate::figures::row("mean iterations", label.clone(), &[("mean iterations", mean, "iterations")])?;
    crate::figures::measuring(&format!("{label} kernel-only"));
    let kernel = kernel_only(&mut dec, &units, reps)?;
    crate::figures::row("kernel-only", label.clone(), &[("kernel-only", kernel, "Gb/s")])?;
    println!("kernel-only: {kernel:.2} Gb/s (one device-resident batch, mean of {reps} decodes)");
    let batches = codewords / per_batch;
    crate::figures::measuring(&format!("{label} end to end"));
    let e = end_to_end(&mut dec, &units, batches)?;
    crate::figures::row("end to end", label.clone(), &e.figures())?;
    println!("end to end: {:.2} Gb/s over {batches} batches ({slots} slots); per batch: {}: {}", e.gbps, EndToEnd::SPLIT_HEADER, e.split_cells());
    crate::figures::measuring(&format!("{label} end to end in place"));
    let e = end_to_end_in_place(&mut dec, &units, batches)?;
    crate::figures::row("end to end in place", label, &e.figures())?;
    println!(
        "end to end in place (the LLRs page-locked where they lie, as a stream's decoder block submits them): {:.2} Gb/s over {batches} batches ({slots} slots); per batch: {}: {}",
        e.gbps,
        EndToEnd::SPLIT_HEADER,
        e.split_cells()
    );
    // LLR bytes per payload bit, rounded up: N LLRs for its P bits.
    let in_bytes = (n * size_of::<T>()).div_ceil(p);
    host_floor(0, in_bytes, per_batch * p)?;
    copy_engine(0, per_batch * n * size_of::<T>())?;
    Ok(())
}
