//! `gpufec ber conv` and `gpufec bench conv`: the convolutional family on the
//! command line.

use super::bench::{BenchArgs, LlrSet, Row, time_decoder};
use super::count::count_usize;
use super::curve::{CurveArgs, EBN0, run_curve};
use super::grid::Grid;
use crate::codes::conv::{
    ConvCode, ConvLink, ConvSetup, DEFAULT_GROUP, FrameConfig, default_tile, NoisyLlrs, PuncturePattern, TileConfig, Trellis, ViterbiLlr, ViterbiMode,
};
use crate::codes::decode::Batch;
use crate::codes::llr::LlrType;
use crate::codes::sim::Link;
use crate::gpu::{BENCH_EBN0_DB, Backend, BackendOptions, GpuBenchOptions, PipelineOptions, ViterbiTuning, viterbi_decoder};
use anyhow::Context;
use clap::{Args, ValueEnum};
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// The code: constraint length, generators and rate.
#[derive(Args, Debug, Clone)]
pub struct CodeArgs {
    /// Constraint length K.
    #[arg(long, default_value_t = 7)]
    pub k: u32,
    /// Generator polynomials in octal (default by rate: 171,133 for 1/2 and
    /// the punctured rates, 133,171,165 for 1/3, 133,171,145,133 for 1/4).
    #[arg(long)]
    pub polys: Option<String>,
    /// Code rate: 1/2, 1/3, 1/4 (unpunctured), or 2/3, 3/4, 5/6, 7/8 (punctured 1/2).
    #[arg(long, default_value = "1/2")]
    pub rate: String,
}

/// How the stream is decoded: tiles of a stream, or terminated frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    /// One stream in overlapping tiles.
    Streaming,
    /// Frames with K−1 tail bits, decoded whole.
    Terminated,
}

/// The Viterbi decoder's geometry.
#[derive(Args, Debug, Clone)]
pub struct DecoderArgs {
    /// A tiled stream, or terminated frames decoded whole.
    #[arg(long, value_enum, default_value = "streaming")]
    pub mode: ModeArg,
    /// Information bits per frame (terminated: default 1024; streaming: the FER frame, default f).
    #[arg(long, value_parser = count_usize)]
    pub frame: Option<usize>,
    /// Tile f,v1,v2 in trellis stages (streaming; default by rate, within 0.05 dB of full frames: 256,20,20 at 1/2, 256,24,28 at 2/3, 255,32,40 at 3/4, 255,44,56 at 5/6, 252,64,68 at 7/8).
    #[arg(long)]
    pub tile: Option<String>,
    /// Tiles per work unit (streaming; default 64).
    #[arg(long, value_parser = count_usize)]
    pub group: Option<usize>,
    /// serial, or parallel:F0 (subframes of F0 stages) (streaming; default serial).
    #[arg(long)]
    pub traceback: Option<String>,
}

/// `gpufec ber conv`.
#[derive(Args, Debug)]
pub struct BerArgs {
    #[command(flatten)]
    code: CodeArgs,
    #[command(flatten)]
    decoder: DecoderArgs,
    /// LLR type at the decoder (i8 is quantized with the matched 16·σ²).
    #[arg(long, default_value = "i8", value_parser = llr_type)]
    llr: LlrType,
    /// Eb/N0 per information bit, dB: a list 1,2,3 or a range START:STEP:STOP (negative values as written).
    #[arg(long, allow_hyphen_values = true, value_parser = |s: &str| Grid::parse(s, "Eb/N0"))]
    ebn0: Grid,
    #[command(flatten)]
    curve: CurveArgs,
    /// Where the decoder runs: auto (the GPU when one is usable), cpu or gpu.
    #[arg(long, default_value = "auto")]
    backend: Backend,
}

fn llr_type(s: &str) -> anyhow::Result<LlrType> {
    Ok(s.parse()?)
}

/// Terminated frames when `--frame` is not given.
const DEFAULT_FRAME: usize = 1024;

/// The code and its puncturing from the options; errors name the option.
fn code(a: &CodeArgs) -> anyhow::Result<(Arc<Trellis>, PuncturePattern)> {
    let puncture = PuncturePattern::standard(&a.rate).context("--rate")?;
    let code = match &a.polys {
        Some(p) => ConvCode::from_octal(a.k, &p.split(',').collect::<Vec<_>>()).context("--k/--polys")?,
        None if a.k == 7 => ConvCode::k7_standard(puncture.n()).context("--rate")?,
        None => anyhow::bail!("--k {}: give the generators of a K={} code with --polys (the defaults are K=7 codes)", a.k, a.k),
    };
    let trellis = Arc::new(Trellis::new(&code));
    puncture.check_fits(trellis.n()).with_context(|| format!("--rate {} with --polys {}", a.rate, code.polys_octal()))?;
    Ok((trellis, puncture))
}

/// The tile geometry from the options (where absent, the default tile of the
/// puncturing `puncture`); an error names its option.
fn tile(d: &DecoderArgs, puncture: &PuncturePattern) -> anyhow::Result<TileConfig> {
    let tile = d.tile.clone().unwrap_or_else(|| default_tile(puncture));
    let traceback = d.traceback.as_deref().unwrap_or("serial");
    TileConfig::from_text(&tile, traceback, d.group.unwrap_or(DEFAULT_GROUP)).map_err(|(field, e)| anyhow::anyhow!("--{}: {e}", field.name()))
}

/// The decoder's mode and the counted frame.
fn mode(d: &DecoderArgs, puncture: &PuncturePattern) -> anyhow::Result<(ViterbiMode, usize)> {
    match d.mode {
        ModeArg::Terminated => {
            anyhow::ensure!(
                d.tile.is_none() && d.group.is_none() && d.traceback.is_none(),
                "--tile, --group and --traceback apply to tiles, not to --mode terminated"
            );
            let f = FrameConfig::new(d.frame.unwrap_or(DEFAULT_FRAME), true).context("--frame")?;
            Ok((ViterbiMode::Frame(f), f.frame))
        }
        ModeArg::Streaming => {
            let tile = tile(d, puncture)?;
            anyhow::ensure!(d.frame != Some(0), "--frame: a frame of 0 bits; it must be at least 1");
            Ok((ViterbiMode::Tiled(tile), d.frame.unwrap_or(tile.f)))
        }
    }
}

/// A link with a decoder of `T` on `backend`, and its description (saying
/// why it is not on the GPU when `auto` fell back).
fn link<T: ViterbiLlr>(setup: ConvSetup, backend: Backend) -> anyhow::Result<(Box<dyn Link>, String)> {
    let options = BackendOptions { backend, ..Default::default() };
    let (decoder, choice) =
        viterbi_decoder::<T>(setup.trellis.clone(), setup.mode, None, &options, ViterbiTuning::default()).with_context(|| format!("--backend {backend}"))?;
    let link = ConvLink::new(setup, decoder)?;
    let about = match choice.why_not_gpu {
        Some(why) => format!("{} (no GPU: {why})", link.describe()),
        None => link.describe(),
    };
    Ok((Box::new(link), about))
}

/// Run `gpufec ber conv`; whether Ctrl-C ended it.
pub fn ber(a: BerArgs) -> anyhow::Result<bool> {
    let (trellis, puncture) = code(&a.code)?;
    let (mode, frame_bits) = mode(&a.decoder, &puncture)?;
    let setup = ConvSetup { trellis: trellis.clone(), puncture: puncture.clone(), mode, frame_bits, i8_scale: None };
    let (mut link, about) = match a.llr {
        LlrType::I8 => link::<i8>(setup, a.backend)?,
        LlrType::F32 => link::<f32>(setup, a.backend)?,
    };
    println!("backend: {about}");
    let mut p = Map::new();
    p.insert("code".into(), "conv".into());
    p.insert("k".into(), trellis.k().into());
    p.insert("polys".into(), trellis.code().polys_octal().into());
    p.insert("rate".into(), a.code.rate.trim().into());
    p.insert("mode".into(), if matches!(mode, ViterbiMode::Frame(_)) { "terminated" } else { "streaming" }.into());
    p.insert("frame_bits".into(), frame_bits.into());
    if let ViterbiMode::Tiled(t) = mode {
        p.insert("tile".into(), json!({ "f": t.f, "v1": t.v1, "v2": t.v2 }));
        p.insert("group".into(), t.group.into());
        p.insert("traceback".into(), t.traceback.to_string().into());
    }
    p.insert("llr".into(), Value::from(a.llr.name()));
    p.insert("backend".into(), about.into());
    run_curve(link.as_mut(), EBN0, &a.ebn0, &a.curve, p)
}

/// `gpufec bench conv`.
#[derive(Args, Debug)]
pub struct BenchConvArgs {
    #[command(flatten)]
    bench: BenchArgs,
    /// LLR type: i8, f32 or both.
    #[arg(long, value_enum, default_value = "both")]
    llr: LlrSet,
    /// Measure one tiled configuration with this tile f,v1,v2 (without --tile,
    /// --traceback and --mode: the three standard configurations).
    #[arg(long)]
    tile: Option<String>,
    /// serial, or parallel:F0, for one tiled configuration.
    #[arg(long)]
    traceback: Option<String>,
    /// streaming (one tiled configuration) or terminated (frames decoded whole).
    #[arg(long, value_enum)]
    mode: Option<ModeArg>,
    /// Information bits per terminated frame.
    #[arg(long, value_parser = count_usize)]
    frame: Option<usize>,
    /// Tiles per work unit (default 64).
    #[arg(long, value_parser = count_usize)]
    group: Option<usize>,
    /// Code rate: 1/2, or a punctured rate (2/3, 3/4, 5/6, 7/8) whose tiles
    /// the decoder depunctures as it loads them (default tile by rate). On a
    /// GPU, a punctured rate's report is its rows of the punctured table.
    #[arg(long, default_value = "1/2")]
    rate: String,
}

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
    let serial = TileConfig::from_text(&default_tile(&PuncturePattern::none(2)), "serial", group).map_err(|(_, e)| anyhow::anyhow!("--group: {e}"))?;
    let parallel = TileConfig::from_text("256,20,45", "parallel:32", group).map_err(|(_, e)| anyhow::anyhow!("--group: {e}"))?;
    let frames = FrameConfig::new(BENCH_FRAME_BITS, true)?;
    Ok([ViterbiMode::Tiled(serial), ViterbiMode::Tiled(parallel), ViterbiMode::Frame(frames)].into_iter().map(Setup::new).collect())
}

/// The configurations `bench conv` measures at `puncture`: the standard ones
/// (at rate 1/2), or the one its options describe.
fn bench_setups(a: &BenchConvArgs, puncture: &PuncturePattern) -> anyhow::Result<Vec<Setup>> {
    let terminated = a.mode == Some(ModeArg::Terminated);
    anyhow::ensure!(a.frame.is_none() || terminated, "--frame applies to --mode terminated only");
    if terminated {
        let d = DecoderArgs {
            mode: ModeArg::Terminated,
            frame: Some(a.frame.unwrap_or(BENCH_FRAME_BITS)),
            tile: a.tile.clone(),
            group: a.group,
            traceback: a.traceback.clone(),
        };
        return Ok(vec![Setup::new(mode(&d, puncture)?.0)]);
    }
    if a.tile.is_none() && a.traceback.is_none() && a.mode.is_none() && puncture.is_identity() {
        return standard_setups(a.group.unwrap_or(DEFAULT_GROUP));
    }
    let d = DecoderArgs { mode: ModeArg::Streaming, frame: None, tile: a.tile.clone(), group: a.group, traceback: a.traceback.clone() };
    Ok(vec![Setup::new(ViterbiMode::Tiled(tile(&d, puncture)?))])
}

/// Run `gpufec bench conv`.
pub fn bench(a: BenchConvArgs) -> anyhow::Result<()> {
    let puncture = PuncturePattern::standard(a.rate.trim()).context("--rate")?;
    anyhow::ensure!(puncture.n() == 2, "--rate {}: bench conv measures K=7 (171,133) at 1/2 and its punctured rates", a.rate);
    let setups = bench_setups(&a, &puncture)?;
    let run = a.bench.resolve()?;
    let trellis = Arc::new(Trellis::new(&ConvCode::k7_171_133()));
    println!("machine: {}", super::bench::machine());
    println!(
        "bench conv: K=7 (171,133) rate {}, Eb/N0 {BENCH_EBN0_DB} dB, {} information bits per repetition, fastest of ≥ 3 repetitions over {} s",
        a.rate.trim(),
        run.bits,
        a.bench.seconds
    );
    println!("{}", Row::header());
    for setup in &setups {
        if run.gpu && matches!(setup.mode, ViterbiMode::Frame(_)) {
            println!("{:<38} (terminated frames are decoded on the CPU only)", setup.name);
            continue;
        }
        let conv = ConvSetup {
            trellis: trellis.clone(),
            puncture: puncture.clone(),
            mode: setup.mode,
            frame_bits: match setup.mode {
                ViterbiMode::Tiled(t) => t.f,
                ViterbiMode::Frame(f) => f.frame,
            },
            i8_scale: None,
        };
        for llr in a.llr.types() {
            match llr {
                LlrType::I8 => rows::<i8>(&conv, setup, &run)?,
                LlrType::F32 => rows::<f32>(&conv, setup, &run)?,
            }
        }
    }
    if run.gpu && a.tile.is_none() && a.traceback.is_none() && a.mode.is_none() {
        // The GPU's own figures: kernel-only, time split, the paper's grids.
        println!();
        let group = a.group.unwrap_or(DEFAULT_GROUP);
        let only = (!puncture.is_identity()).then(|| a.rate.trim().to_string());
        crate::gpu::bench_viterbi(&GpuBenchOptions { group, tables: !a.bench.no_tables, slots: run.slots, only_rate: only, ..Default::default() })?;
    }
    Ok(())
}

/// One row per thread count for `setup`.
fn rows<T: ViterbiLlr>(conv: &ConvSetup, setup: &Setup, run: &super::bench::Run) -> anyhow::Result<()> {
    // Tiles of a punctured stream hold the LLRs as sent; the decoder puts the erasures back.
    let on_load = matches!(setup.mode, ViterbiMode::Tiled(_)) && !conv.puncture.is_identity();
    let (units, info) = NoisyLlrs::<T>::new(conv, BENCH_EBN0_DB, 1)?.units(setup.mode, on_load, run.bits)?;
    for &threads in &run.threads {
        let pipeline = PipelineOptions { slots: run.slots, ..Default::default() };
        let options = BackendOptions { backend: run.backend, cpu_threads: threads, pipeline };
        let (mut decoder, _) = viterbi_decoder::<T>(conv.trellis.clone(), setup.mode, on_load.then_some(&conv.puncture), &options, ViterbiTuning::default())
            .with_context(|| format!("--backend {}", run.backend))?;
        let batch = Batch::uniform(&units, decoder.shapes()[0].items)?;
        let timing = time_decoder(decoder.as_mut(), &batch, info, run.budget)?;
        println!("{}", Row { setup: &setup.name, llr: T::NAME, threads, mbps: timing.mbps(), describe: decoder.describe() });
    }
    Ok(())
}
