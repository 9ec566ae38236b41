//! `gpufec bench conv`: the convolutional family's decoders on noisy LLRs,
//! per configuration, LLR type and thread count, and on a GPU the kernel's
//! own figures and the paper's tables.

use super::bench::{BenchArgs, LlrSet, Row, Run, devices_report, time_decoder, where_run};
use super::FamilyCli;
use crate::codes::conv::{ConvChain, ConvSetup, ConvSettings, DEFAULT_GROUP, FrameConfig, NoisyLlrs, TileConfig, ViterbiLlr, ViterbiMode, default_tile};
use crate::codes::decode::Batch;
use crate::codes::llr::LlrType;
use crate::codes::settings::{Chain, Settings};
use crate::flowgraph::family::downcast;
use crate::gpu::bench::GpuBench;
use crate::gpu::{BENCH_EBN0_DB, BackendOptions, GpuBenchOptions, GpuViterbi, ViterbiTuning, viterbi_decoder};
use anyhow::Context;
use serde_json::{Map, Value};

/// The family on the command line.
pub(super) const CLI: FamilyCli = FamilyCli {
    family: &crate::flowgraph::registry::conv::FAMILY,
    bench_about: "Viterbi decoding throughput on noisy LLRs (K=7 (171,133) unless told otherwise); without tile, traceback and mode, the three standard configurations",
    bench,
};

/// Information bits per terminated frame of the standard bench setups.
pub const BENCH_FRAME_BITS: usize = 2048;

/// One decoder configuration to time, named for the tables.
#[derive(Debug, Clone, PartialEq)]
pub struct Setup {
    /// `tiled f=256 v1=20 v2=20 serial`, `frames of 2048, terminated`.
    pub name: String,
    /// What the decoder decodes.
    pub mode: ViterbiMode,
}

impl Setup {
    /// A setup named after its mode.
    pub fn new(mode: ViterbiMode) -> Self {
        let name = match mode {
            ViterbiMode::Tiled(t) => format!("tiled f={} v1={} v2={} {}", t.f, t.v1, t.v2, t.traceback),
            ViterbiMode::Frame(f) => format!("frames of {}, {}", f.frame, if f.terminated { "terminated" } else { "unterminated" }),
        };
        Self { name, mode }
    }
}

/// The configurations measured by default: the paper's tiles with serial
/// traceback (f=256, v1=20, v2=20) and with parallel traceback (f0=32, v2=45;
/// both within 0.05 dB of full-frame decoding, see BENCHMARKS.md), `group`
/// tiles to a work unit, and terminated frames of [`BENCH_FRAME_BITS`] bits.
pub fn standard_setups(group: usize) -> anyhow::Result<Vec<Setup>> {
    let serial = TileConfig::from_text(&default_tile(&crate::codes::conv::PuncturePattern::none(2)), "serial", group).map_err(|(_, e)| anyhow::anyhow!("--group: {e}"))?;
    let parallel = TileConfig::from_text("256,20,45", "parallel:32", group).map_err(|(_, e)| anyhow::anyhow!("--group: {e}"))?;
    let frames = FrameConfig::new(BENCH_FRAME_BITS, true)?;
    Ok([ViterbiMode::Tiled(serial), ViterbiMode::Tiled(parallel), ViterbiMode::Frame(frames)].into_iter().map(Setup::new).collect())
}

/// Whether the command line gave any of `fields`.
fn gave(given: &Map<String, Value>, fields: &[&str]) -> bool {
    fields.iter().any(|f| given.contains_key(*f))
}

/// Run `gpufec bench conv`: the standard configurations (none of tile,
/// traceback, mode and frame given, unpunctured), or the one the settings
/// describe (terminated frames of [`BENCH_FRAME_BITS`] unless told).
fn bench(code: &dyn crate::flowgraph::family::Code, given: &Map<String, Value>, args: &BenchArgs) -> anyhow::Result<()> {
    let mut chain = downcast::<ConvChain>(code)?.clone();
    let ebn0 = args.ebn0.unwrap_or(BENCH_EBN0_DB);
    let run = args.resolve()?;
    let single = gave(given, &["tile", "traceback", "mode", "frame"]);
    if chain.settings().mode == Some(crate::codes::conv::Mode::Terminated) && !given.contains_key("frame") {
        let settings = ConvSettings { frame: Some(BENCH_FRAME_BITS as u64), ..chain.settings().clone() };
        chain = settings.resolve().map_err(|e| anyhow::anyhow!("{}: {}", super::settings::flag(e.field), e.problem))?;
    }
    let setups = if single || !chain.puncture().is_identity() { vec![Setup::new(chain.mode())] } else { standard_setups(chain_group(&chain))? };
    println!("machine: {}", super::bench::machine());
    println!(
        "bench conv: {}, Eb/N0 {ebn0} dB, {} asked per repetition (rounded up to whole units: bits/rep), fastest of ≥ 3 repetitions over {} s",
        chain.describe(),
        crate::codes::words::count_of(run.bits, "information bit"),
        args.seconds
    );
    println!("{}", Row::header());
    for setup in &setups {
        if run.gpu && matches!(setup.mode, ViterbiMode::Frame(_)) {
            println!("{:<38} (terminated frames are decoded on the CPU only)", setup.name);
            continue;
        }
        let conv = ConvSetup {
            trellis: chain.trellis().clone(),
            puncture: chain.puncture().clone(),
            mode: setup.mode,
            frame_bits: match setup.mode {
                ViterbiMode::Tiled(t) => t.f,
                ViterbiMode::Frame(f) => f.frame,
            },
            i8_scale: None,
        };
        for llr in args.llr.unwrap_or(LlrSet::Both).types() {
            match llr {
                LlrType::I8 => rows::<i8>(&conv, chain.decoder_depunctures(), setup, ebn0, &run)?,
                LlrType::F32 => rows::<f32>(&conv, chain.decoder_depunctures(), setup, ebn0, &run)?,
            }
        }
    }
    let default_code = !gave(given, &["k", "polys", "pattern"]) && chain.trellis().n() == 2;
    if run.gpu && !single && default_code && run.devices.is_none() {
        // The GPU's own figures: kernel-only, time split, the paper's grids.
        println!();
        let only = (!chain.puncture().is_identity()).then(|| given.get("rate").and_then(Value::as_str).unwrap_or_default().trim().to_string());
        crate::gpu::bench_viterbi(&GpuBenchOptions { group: chain_group(&chain), tables: !args.no_tables, slots: run.slots, only_rate: only, ..Default::default() })?;
    }
    Ok(())
}

/// Tiles per work unit of the chain (the default for frames).
fn chain_group(chain: &ConvChain) -> usize {
    match chain.mode() {
        ViterbiMode::Tiled(t) => t.group,
        ViterbiMode::Frame(_) => DEFAULT_GROUP,
    }
}

/// One row per thread count for `setup` (`on_load`: tiles as sent, the
/// decoder depunctures).
fn rows<T: ViterbiLlr>(conv: &ConvSetup, on_load: bool, setup: &Setup, ebn0: f64, run: &Run) -> anyhow::Result<()> {
    let on_load = on_load && matches!(setup.mode, ViterbiMode::Tiled(_));
    let (units, info) = NoisyLlrs::<T>::new(conv, ebn0, 1)?.units(setup.mode, on_load, run.bits)?;
    for &threads in &run.threads {
        let label = format!("{} {} {}", setup.name, T::NAME, where_run(threads));
        crate::figures::measuring(&label);
        let pipeline = run.devices_pipeline();
        let options = BackendOptions { backend: run.backend, cpu_threads: threads, pipeline };
        let (mut decoder, _) = viterbi_decoder::<T>(conv.trellis.clone(), setup.mode, on_load.then_some(&conv.puncture), &options, ViterbiTuning::default())
            .with_context(|| format!("--backend {}", run.backend))?;
        let batch = Batch::uniform(&units, decoder.shapes()[0].items)?;
        let timing = time_decoder(decoder.as_mut(), &batch, info, run.budget)?;
        crate::figures::row("decoders", label, &timing.figures(threads))?;
        println!("{}", Row { setup: &setup.name, llr: T::NAME, threads, bits: info, mbps: timing.mbps(), describe: decoder.describe() });
        if let (Some(list), ViterbiMode::Tiled(tile), true) = (&run.devices, setup.mode, run.gpu) {
            let one = |device| -> anyhow::Result<Box<dyn GpuBench<T>>> {
                let p = run.pipeline(device);
                Ok(Box::new(GpuViterbi::<T>::new(conv.trellis.clone(), tile, on_load.then_some(&conv.puncture), &p, ViterbiTuning::default())?))
            };
            devices_report(decoder.as_mut(), &list.resolve()?, run, one, &units)?;
        }
    }
    Ok(())
}
