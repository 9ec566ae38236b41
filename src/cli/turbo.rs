//! `gpufec bench turbo`: the turbo family's decoders on noisy blocks: the CPU
//! decoder's rows; on a GPU the kernel's own figures (`gpu::bench_turbo`);
//! for transport blocks, the whole decoder path end to end on either.

use super::FamilyCli;
use super::bench::{BenchArgs, LlrSet, Run, devices_report, fastest, time_decoder, where_run};
use crate::codes::bits::BitSource;
use crate::codes::encode::Encoder;
use crate::codes::decode::Batch;
use crate::codes::llr::{Llr, LlrType};
use crate::codes::turbo::decoder::Precision;
use crate::codes::settings::Chain;
use crate::codes::turbo::{Dematching, Sent, TransportBlock, TransportEncoder, TurboChain, TurboCode};
use crate::flowgraph::family::downcast;
use crate::gpu::bench::GpuBench;
use crate::gpu::{BackendOptions, GpuTurbo, bench_turbo, turbo_decoder};
use anyhow::Context;
use serde_json::{Map, Value};

/// The family on the command line.
pub(super) const CLI: FamilyCli = FamilyCli {
    family: &crate::flowgraph::registry::turbo::FAMILY,
    bench_about: "Turbo decoding throughput of LTE code blocks or transport blocks on noisy LLRs, on the CPU or the GPU",
    bench,
};

/// The bench's default Eb/N0, dB: near the LTE K = 6144 waterfall at rate
/// 1/3, where blocks need most of their iterations.
pub const TURBO_BENCH_EBN0_DB: f64 = 1.5;

/// Run `gpufec bench turbo`: on the CPU, one row per thread count of the
/// decoder on f32 LLRs; on a GPU, kernel-only and end-to-end figures with
/// the time split and the host and copy-engine floors, on i8 LLRs unless
/// told; transport blocks end to end through the decoder contract, after
/// their encoder alone on the host's cores.
fn bench(code: &dyn crate::flowgraph::family::Code, _given: &Map<String, Value>, args: &BenchArgs) -> anyhow::Result<()> {
    let chain = downcast::<TurboChain>(code)?;
    let ebn0 = args.ebn0.unwrap_or(TURBO_BENCH_EBN0_DB);
    // The channel's own check, before anything is built.
    crate::codes::channel::noise_variance(ebn0, chain.rate()).context("--ebn0")?;
    let run = args.resolve()?;
    let llr = match args.llr {
        None if run.gpu => LlrType::I8,
        None => LlrType::F32,
        Some(LlrSet::I8) => LlrType::I8,
        Some(LlrSet::F32) => LlrType::F32,
        Some(LlrSet::Both) => anyhow::bail!("--llr both: bench turbo measures one LLR type at a time (i8 or f32)"),
    };
    if run.gpu {
        anyhow::ensure!(chain.precision() == Precision::F32, "--precision i16 is the CPU decoder's; the GPU decodes in f32");
    } else {
        anyhow::ensure!(llr == LlrType::F32, "--llr i8: the CPU bench decodes f32 LLRs (i8 is for --backend gpu)");
    }
    println!("machine: {}", super::bench::machine());
    match (chain.sent(), run.gpu) {
        (Sent::Transport(tb), _) => match llr {
            LlrType::I8 => bench_transport::<i8>(chain, tb, ebn0, &run),
            LlrType::F32 => bench_transport::<f32>(chain, tb, ebn0, &run),
        },
        (Sent::Blocks(_), true) if run.devices.is_none() => match llr {
            LlrType::I8 => bench_turbo::<i8>(chain, ebn0, run.bits, &run.pipeline(0)),
            LlrType::F32 => bench_turbo::<f32>(chain, ebn0, run.bits, &run.pipeline(0)),
        },
        (Sent::Blocks(code), _) => match llr {
            LlrType::I8 => bench_blocks::<i8>(chain, code, ebn0, &run),
            LlrType::F32 => bench_blocks::<f32>(chain, code, ebn0, &run),
        },
    }
}

/// Code blocks end to end through the chain's decoder (`BatchDecoder`) on
/// the bench's backend, per thread count on the CPU, over the bench's GPUs
/// with `--gpu-devices`.
fn bench_blocks<T: Llr>(chain: &TurboChain, code: &TurboCode, ebn0: f64, run: &Run) -> anyhow::Result<()> {
    let blocks = usize::try_from(run.bits)?.div_ceil(code.k()).max(1);
    let llrs = chain.noisy::<T>((blocks * code.k()) as u64, ebn0, 1)?.llrs;
    println!("bench turbo: K={} ({}), {} LLRs at Eb/N0 {ebn0} dB, {blocks} blocks per repetition", code.k(), chain.config().describe(), T::NAME);
    for &threads in &run.threads {
        let label = format!("K={} {} {}", code.k(), T::NAME, where_run(threads));
        crate::figures::measuring(&label);
        let pipeline = run.devices_pipeline();
        let options = BackendOptions { backend: run.backend, cpu_threads: threads, pipeline };
        let (mut dec, _) = turbo_decoder::<T>(chain, 1.0, false, &options)?;
        let timing = time_decoder(dec.as_mut(), &Batch::uniform(&llrs, code.coded_len())?, (blocks * code.k()) as u64, run.budget)?;
        crate::figures::row("code blocks", label, &timing.figures(threads))?;
        println!("{:.2} Mb/s  {threads} threads  {}", timing.mbps(), dec.describe());
        if let (Some(list), true) = (&run.devices, run.gpu) {
            let cfg = chain.config_for(code.k(), true);
            let one = |device| -> anyhow::Result<Box<dyn GpuBench<T>>> {
                let p = run.pipeline(device);
                Ok(Box::new(GpuTurbo::<T>::new(code.clone(), cfg, 1.0, &p)?))
            };
            devices_report(dec.as_mut(), &list.resolve()?, run, one, &llrs)?;
        }
    }
    Ok(())
}

/// The transport-block encoder alone (CRC24A, segmentation and CRC24B,
/// turbo encoding, rate matching) on all the host's cores: `count`
/// transport blocks of random bits in one call straight into a buffer of
/// their G bits each, the fastest of the timed calls (at least three, for
/// `--seconds`), in information bits per second.
fn bench_transport_encoder(tb: &TransportBlock, count: usize, run: &Run) -> anyhow::Result<()> {
    let mut info = vec![0u8; count * tb.a()];
    BitSource::new(1).fill(&mut info);
    let mut sent = vec![0u8; count * tb.g()];
    let mut encoder = TransportEncoder::new(tb.clone());
    let mut encode = || {
        let done = encoder.encode_into(&info, &mut sent)?;
        anyhow::ensure!(done == Some((info.len(), sent.len())), "the encoder took and wrote {done:?} of {} bits and {} channel bits", info.len(), sent.len());
        Ok(())
    };
    encode()?;
    let threads = rayon::current_num_threads();
    let label = format!("transport encoder A={} G={} {}", tb.a(), tb.g(), where_run(threads));
    crate::figures::measuring(&label);
    let timing = fastest((count * tb.a()) as u64, run.budget, encode)?;
    crate::figures::row("transport encoder", label, &timing.figures(threads))?;
    println!("encoder: {:.1} Mb/s on {} (information bits; {count} transport blocks a call)", timing.mbps(), where_run(threads));
    Ok(())
}

/// Transport blocks of `tb` end to end through the chain's decoder on the
/// bench's backend, noisy at `ebn0`, LLRs of `T`: the fastest of the timed
/// decodes (at least three, for `--seconds`) of enough transport blocks for
/// `--bits` and two of the decoder's batches.
fn bench_transport<T: Llr>(chain: &TurboChain, tb: &TransportBlock, ebn0: f64, run: &Run) -> anyhow::Result<()> {
    let threads = run.threads.last().copied().unwrap_or(0);
    let options = BackendOptions { backend: run.backend, cpu_threads: threads, pipeline: run.pipeline(0) };
    let per_batch = turbo_decoder::<T>(chain, 1.0, false, &options)?.0.limit().units;
    let count = usize::try_from(run.bits)?.div_ceil(tb.a()).max(2 * per_batch);
    bench_transport_encoder(tb, count, run)?;
    let noisy = chain.noisy::<T>((count * tb.a()) as u64, ebn0, 1)?;
    let (llrs, scale) = (noisy.llrs, noisy.scale);
    let (mut dec, _) = turbo_decoder::<T>(chain, scale, false, &options)?;
    println!(
        "bench turbo: transport blocks of A = {} in G = {} (rate {:.3}, rv {}), code blocks {}, {} LLRs at Eb/N0 {ebn0} dB, {count} transport blocks, {per_batch} per batch\n{}",
        tb.a(),
        tb.g(),
        chain.rate(),
        chain.settings().rv.unwrap_or(0),
        crate::codes::words::runs_of(&tb.blocks()),
        T::NAME,
        dec.describe()
    );
    let label = format!("transport blocks A={} G={} {} {}", tb.a(), tb.g(), T::NAME, where_run(threads));
    crate::figures::measuring(&label);
    let timing = time_decoder(dec.as_mut(), &Batch::uniform(&llrs, tb.g())?, (count * tb.a()) as u64, run.budget)?;
    // What crosses to the decoder per information bit: the received LLRs, or
    // 3K + 12 LLRs (of T) per code block.
    let bytes = match (run.gpu, chain.dematching()) {
        (true, Dematching::OnLoad) => tb.g() * size_of::<T>(),
        _ => tb.blocks().iter().map(|k| size_of::<T>() * (3 * k + 12)).sum(),
    };
    let per_bit = bytes as f64 / tb.a() as f64;
    let mut figures = timing.figures(threads);
    figures.push(("LLR bytes per information bit to the code block decoders", per_bit, "B/bit"));
    crate::figures::row("transport blocks end to end", label, &figures)?;
    println!("end to end: {:.1} Mb/s ({per_bit:.2} LLR bytes per information bit handed to the code block decoders)", timing.mbps());
    Ok(())
}
