//! `gpufec ber turbo` and `gpufec bench turbo`: LTE turbo code blocks on the
//! CPU decoders (serial, or the sub-block model with its guard).

use super::bench::{BenchArgs, time_decoder};
use super::count::count_usize;
use super::curve::{CurveArgs, EBN0, run_curve};
use super::grid::Grid;
use crate::codes::decode::{Batch, BatchDecoder};
use crate::codes::sim::Link;
use crate::codes::turbo::{CpuTurbo, DecoderConfig, EarlyStop, Guard, MaxStar, TurboCode, TurboEncoder, TurboLink};
use crate::codes::channel::{BpskAwgn, Channel};
use crate::codes::encode::Encoder;
use crate::gpu::{BENCH_EBN0_DB, Backend};
use anyhow::Context;
use clap::{Args, ValueEnum};
use serde_json::{Map, Value};

/// When a block stops early.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum StopArg {
    /// Every iteration runs.
    Never,
    /// When an iteration's decisions equal the previous iteration's.
    Stable,
}

/// The code and the decoder, shared by `ber turbo` and `bench turbo`.
#[derive(Args, Debug, Clone)]
pub struct TurboArgs {
    /// Code block size K, one of the 188 LTE sizes 40..=6144.
    #[arg(long, default_value = "6144", value_parser = count_usize)]
    pub block: usize,
    /// Iterations at most (1..=64).
    #[arg(long, default_value = "8", value_parser = count_usize)]
    pub iterations: usize,
    /// max-log, log-map or log-map-linear.
    #[arg(long, default_value = "max-log")]
    pub algorithm: String,
    /// Extrinsic scaling factor in (0, 1] (default 0.75 with max-log, 1 with log-MAP).
    #[arg(long)]
    pub scaling: Option<f32>,
    /// Sub-blocks P decoded independently (1: the serial decoder).
    #[arg(long, default_value = "1", value_parser = count_usize)]
    pub subblocks: usize,
    /// none, pivi, dstw or pividstw (with P > 1).
    #[arg(long, default_value = "none")]
    pub guard: String,
    /// Training window g in stages (dstw, pividstw).
    #[arg(long, default_value = "0", value_parser = count_usize)]
    pub window: usize,
    /// When a block stops before the last iteration.
    #[arg(long, value_enum, default_value = "never")]
    pub early_stop: StopArg,
    /// CPU threads (0: every core).
    #[arg(long, default_value = "0", value_parser = count_usize)]
    pub threads: usize,
}

impl TurboArgs {
    /// The LTE code of `--block` and the decoder configuration; errors name the option.
    pub fn resolve(&self) -> anyhow::Result<(TurboCode, DecoderConfig)> {
        let code = TurboCode::lte(self.block).context("--block")?;
        let max_star: MaxStar = self.algorithm.parse().context("--algorithm")?;
        let guard: Guard = self.guard.parse().context("--guard")?;
        anyhow::ensure!(self.subblocks > 1 || guard == Guard::None, "--guard {}: a guard needs --subblocks > 1", guard.name());
        let cfg = DecoderConfig {
            max_star,
            scaling: self.scaling.unwrap_or(if max_star == MaxStar::Max { 0.75 } else { 1.0 }),
            iterations: self.iterations,
            early_stop: match self.early_stop {
                StopArg::Never => EarlyStop::Never,
                StopArg::Stable => EarlyStop::Stable,
            },
            subblocks: self.subblocks,
            guard,
            window: self.window,
        };
        cfg.validate(code.k()).context("turbo decoder")?;
        Ok((code, cfg))
    }

    fn parameters(&self, code: &TurboCode, cfg: &DecoderConfig) -> Map<String, Value> {
        let mut p = Map::new();
        p.insert("code".into(), "turbo".into());
        p.insert("block".into(), code.k().into());
        p.insert("decoder".into(), cfg.describe().into());
        p.insert("iterations".into(), cfg.iterations.into());
        p.insert("algorithm".into(), cfg.max_star.name().into());
        p.insert("scaling".into(), f64::from(cfg.scaling).into());
        p.insert("subblocks".into(), cfg.subblocks.into());
        p.insert("guard".into(), cfg.guard.name().into());
        p.insert("window".into(), cfg.window.into());
        p
    }
}

/// `gpufec ber turbo`.
#[derive(Args, Debug)]
pub struct BerTurboArgs {
    #[command(flatten)]
    turbo: TurboArgs,
    /// Eb/N0 per code block bit, dB: a list 0.5,0.75 or a range START:STEP:STOP.
    #[arg(long, allow_hyphen_values = true, value_parser = |s: &str| Grid::parse(s, "Eb/N0"))]
    ebn0: Grid,
    #[command(flatten)]
    curve: CurveArgs,
}

/// Run `gpufec ber turbo`; whether Ctrl-C ended it.
pub fn ber(a: BerTurboArgs) -> anyhow::Result<bool> {
    let (code, cfg) = a.turbo.resolve()?;
    let decoder = CpuTurbo::<f32>::new(code.clone(), cfg, 1.0, a.turbo.threads).context("--threads")?;
    let mut link = TurboLink::new(code.clone(), Box::new(decoder))?;
    println!("backend: {}", link.describe());
    let p = a.turbo.parameters(&code, &cfg);
    run_curve(&mut link, EBN0, &a.ebn0, &a.curve, p)
}

/// `gpufec bench turbo`.
#[derive(Args, Debug)]
pub struct BenchTurboArgs {
    #[command(flatten)]
    turbo: TurboArgs,
    #[command(flatten)]
    bench: BenchArgs,
}

/// Run `gpufec bench turbo`: the CPU decoder on noisy blocks at the bench Eb/N0.
pub fn bench(a: BenchTurboArgs) -> anyhow::Result<()> {
    anyhow::ensure!(a.bench.backend == Backend::Cpu, "--backend {}: the turbo decoder runs on the CPU so far", a.bench.backend);
    anyhow::ensure!(a.bench.threads.is_none(), "--threads: give the turbo decoder's threads with its own --threads");
    let (code, cfg) = a.turbo.resolve()?;
    let run = a.bench.resolve()?;
    let blocks = (run.bits as usize).div_ceil(code.k()).max(1);
    let mut enc = TurboEncoder::new(code.clone());
    let bits: Vec<u8> = (0..blocks * code.k()).map(|i| (i.wrapping_mul(0x9E37_79B9) >> 7) as u8 & 1).collect();
    let mut coded = Vec::new();
    enc.encode(&bits, &mut coded)?;
    let mut llrs = Vec::new();
    BpskAwgn::new(BENCH_EBN0_DB, enc.rate(), 1)?.transmit(&coded, &mut llrs)?;
    println!("machine: {}", super::bench::machine());
    println!("bench turbo: K={} ({}), Eb/N0 {BENCH_EBN0_DB} dB, {blocks} blocks per repetition", code.k(), cfg.describe());
    let mut dec = CpuTurbo::<f32>::new(code.clone(), cfg, 1.0, a.turbo.threads)?;
    let batch = Batch::uniform(&llrs, code.coded_len())?;
    let timing = time_decoder(&mut dec, &batch, (blocks * code.k()) as u64, run.budget)?;
    println!("{:.2} Mb/s  {}", timing.mbps(), dec.describe());
    Ok(())
}
