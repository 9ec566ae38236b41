//! `gpufec bench sync`: the MAP decoder of insertion/deletion codes on
//! windows of a received stream at the code's channel: decoded information
//! bits and frames per second, γ's memory per frame and the arithmetic per
//! symbol, on the CPU (one row per thread count) or the GPU (over several
//! with `--gpu-devices`: the decoder contract's row and each device's figures).

use super::FamilyCli;
use super::bench::{BenchArgs, devices_report, time_decoder, where_run};
use crate::codes::decode::Batch;
use crate::codes::settings::Chain;
use crate::codes::sync::{SyncChain, SyncMapDecoder};
use crate::flowgraph::family::{Code, downcast};
use crate::gpu::bench::GpuBench;
use crate::gpu::{BackendOptions, GpuSync, bench_sync, sync_decoder};
use serde_json::{Map, Value};

/// The family on the command line.
pub(super) const CLI: FamilyCli = FamilyCli {
    family: &crate::flowgraph::registry::sync::FAMILY,
    bench_about: "MAP decoding throughput of insertion/deletion codes on received windows at the code's BSID channel, on the CPU or the GPU",
    bench,
};

/// Frames per CPU repetition unless `--bits` says: enough for every core.
const BENCH_FRAMES: usize = 256;

/// Run `gpufec bench sync` on hard bits of the code's channel (its Pi, Pd,
/// Ps; `--ebn0` is the AWGN family's and is refused).
fn bench(code: &dyn Code, _given: &Map<String, Value>, args: &BenchArgs) -> anyhow::Result<()> {
    let chain = downcast::<SyncChain>(code)?;
    anyhow::ensure!(args.ebn0.is_none() && args.llr.is_none(), "--ebn0 and --llr: bench sync decodes the hard bits of the code's BSID channel (--pi, --pd, --ps)");
    let run = args.resolve()?;
    println!("machine: {}", super::bench::machine());
    if run.gpu && run.devices.is_none() {
        return bench_sync(chain, run.bits, &run.pipeline(0));
    }
    let k = Chain::frame_bits(chain);
    let frames = match args.bits {
        Some(b) => usize::try_from(b.div_ceil(k as u64))?,
        None => BENCH_FRAMES,
    };
    let windows = chain.hard_windows(frames, 1)?;
    let reference = SyncMapDecoder::<u8>::new(chain.code().clone(), chain.params(), chain.stream_config(), 1)?;
    let ops = reference.ops_per_symbol();
    println!(
        "bench sync: {}; {frames} frames of {} received bits per window; {:.0} lattice cells, {:.0} flops per symbol ({} storage on the CPU: {} KiB of γ per frame)",
        Chain::describe(chain),
        chain.window(),
        ops.lattice_cells,
        ops.flops(),
        if reference.global_storage() { "global" } else { "local" },
        reference.gamma_bytes() / 1024
    );
    for &threads in &run.threads {
        let label = where_run(threads);
        crate::figures::measuring(&label);
        let pipeline = run.devices_pipeline();
        let options = BackendOptions { backend: run.backend, cpu_threads: threads, pipeline };
        let (mut dec, _) = sync_decoder::<u8>(chain.code(), chain.params(), chain.stream_config(), 1.0, false, &options)?;
        let batch_frames = dec.limit().units;
        // Repetitions of whole batches, so the timing is of full ones; fewer frames than a batch
        // are timed as they are (a whole number per thread), since a batch of slow codes can take minutes.
        // (On GPUs, whole batches always: the devices' figures need one.)
        let used = if frames >= batch_frames || run.gpu { frames.div_ceil(batch_frames) * batch_frames } else { frames.div_ceil(threads) * threads };
        let items: Vec<u8> = windows.iter().copied().cycle().take(used * chain.window()).collect();
        let timing = time_decoder(dec.as_mut(), &Batch::uniform(&items, chain.window())?, (used * k) as u64, run.budget)?;
        let fps = timing.mbps() * 1e6 / k as f64;
        let mut figures = timing.figures(threads);
        figures.push(("frames", fps, "frames/s"));
        crate::figures::row("decoders", label, &figures)?;
        // Slow codes run a few frames a second: keep four significant digits.
        let (mbps, fps) = (timing.mbps(), format!("{fps:.*}", if fps < 100.0 { 3 } else { 0 }));
        println!("{mbps:.*} Mb/s  {fps} frames/s  {threads} threads  {}", if mbps < 1.0 { 5 } else { 3 }, dec.describe());
        if let (Some(list), true) = (&run.devices, run.gpu) {
            let one = |device| -> anyhow::Result<Box<dyn GpuBench<u8>>> {
                let p = run.pipeline(device);
                Ok(Box::new(GpuSync::<u8>::new(chain.code().clone(), chain.params(), chain.stream_config(), 1.0, false, &p)?))
            };
            devices_report(dec.as_mut(), &list.resolve()?, &run, one, &items)?;
        }
    }
    Ok(())
}
