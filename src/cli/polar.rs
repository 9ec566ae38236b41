//! `gpufec bench polar`: the polar family's decoders on noisy codewords or
//! 5G messages: the CPU decoder's rows per thread count; on a GPU the
//! kernel's own figures for bare codewords (`gpu::bench_polar`), and 5G
//! messages end to end through the decoder contract; over several GPUs
//! (`--gpu-devices`) the decoder contract's row and each device's figures.

use super::FamilyCli;
use super::bench::{BenchArgs, LlrSet, Run, devices_report, time_decoder, where_run};
use crate::codes::decode::Batch;
use crate::codes::llr::{Llr, LlrType};
use crate::codes::polar::{PolarChain, PolarFrames};
use crate::codes::settings::Chain;
use crate::flowgraph::family::downcast;
use crate::codes::polar::Algorithm;
use crate::gpu::bench::GpuBench;
use crate::gpu::{BackendOptions, GpuPolar, bench_polar, polar_decoder};
use anyhow::Context;
use serde_json::{Map, Value};

/// The family on the command line.
pub(super) const CLI: FamilyCli = FamilyCli {
    family: &crate::flowgraph::registry::polar::FAMILY,
    bench_about: "Polar decoding throughput (BP, SC, CA-SCL) of codewords or 5G messages on noisy LLRs, on the CPU or the GPU",
    bench,
};

/// The bench's default Eb/N0, dB: where BP with the G-matrix stop needs a
/// few iterations on rate-1/2 codes (the headline point).
pub const POLAR_BENCH_EBN0_DB: f64 = 5.0;

/// Run `gpufec bench polar`: i8 LLRs unless told (the GPU's, and the
/// default BP's); on the CPU one row per thread count, on a GPU the
/// kernel-only and end-to-end figures.
fn bench(code: &dyn crate::flowgraph::family::Code, _given: &Map<String, Value>, args: &BenchArgs) -> anyhow::Result<()> {
    let chain = downcast::<PolarChain>(code)?;
    let ebn0 = args.ebn0.unwrap_or(POLAR_BENCH_EBN0_DB);
    // The channel's own check, before anything is built.
    crate::codes::channel::noise_variance(ebn0, chain.rate()).context("--ebn0")?;
    let run = args.resolve()?;
    let llr = match args.llr {
        None | Some(LlrSet::I8) => LlrType::I8,
        Some(LlrSet::F32) => LlrType::F32,
        Some(LlrSet::Both) => anyhow::bail!("--llr both: bench polar measures one LLR type at a time (i8 or f32)"),
    };
    println!("machine: {}", super::bench::machine());
    match (chain.frames(), run.gpu, llr) {
        (PolarFrames::Codewords(_), true, LlrType::I8) if run.devices.is_none() => bench_polar::<i8>(chain, ebn0, run.bits, &run.pipeline(0)),
        (PolarFrames::Codewords(_), true, LlrType::F32) if run.devices.is_none() => bench_polar::<f32>(chain, ebn0, run.bits, &run.pipeline(0)),
        (_, _, LlrType::I8) => rows::<i8>(chain, ebn0, &run),
        (_, _, LlrType::F32) => rows::<f32>(chain, ebn0, &run),
    }
}

/// The chain's decoder on the bench's backend, end to end through the
/// decoder contract: one row per thread count (one on a GPU, over the
/// bench's GPUs with `--gpu-devices`, followed by each device's figures
/// for bare codewords).
fn rows<T: Llr>(chain: &PolarChain, ebn0: f64, run: &Run) -> anyhow::Result<()> {
    let frame = chain.frame_bits();
    let units = usize::try_from(run.bits)?.div_ceil(frame).max(1);
    let noisy = chain.noisy::<T>((units * frame) as u64, ebn0, 1)?;
    println!("bench polar: {}, {} LLRs at Eb/N0 {ebn0} dB, {units} units per repetition", chain.describe(), T::NAME);
    for &threads in &run.threads {
        let label = format!("{} {}", T::NAME, where_run(threads));
        crate::figures::measuring(&label);
        let pipeline = run.devices_pipeline();
        let options = BackendOptions { backend: run.backend, cpu_threads: threads, pipeline };
        let (mut dec, _) = polar_decoder::<T>(chain, false, &options)?;
        let timing = time_decoder(dec.as_mut(), &Batch::uniform(&noisy.llrs, chain.unit_llrs())?, (units * frame) as u64, run.budget)?;
        crate::figures::row("decoders", label, &timing.figures(threads))?;
        let per_core = if threads > 0 { format!(", {:.2} Mb/s per thread", timing.mbps() / threads as f64) } else { String::new() };
        println!("{:.2} Mb/s  {threads} threads{per_core}  {}", timing.mbps(), dec.describe());
        if let (Some(list), true, PolarFrames::Codewords(spec), Algorithm::Bp(cfg)) = (&run.devices, run.gpu, chain.frames(), chain.algorithm()) {
            let one = |device| -> anyhow::Result<Box<dyn GpuBench<T>>> {
                let p = run.pipeline(device);
                Ok(Box::new(GpuPolar::<T>::new(spec.clone(), cfg, false, &p)?))
            };
            devices_report(dec.as_mut(), &list.resolve()?, run, one, &noisy.llrs)?;
        }
    }
    Ok(())
}
