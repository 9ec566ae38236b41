//! `gpufec ber turbo` and `gpufec bench turbo`: LTE turbo code blocks on the
//! CPU decoders (serial, or the sub-block model with its guard).

use super::bench::{BenchArgs, time_decoder};
use super::count::count_usize;
use super::curve::{CurveArgs, EBN0, run_curve};
use super::grid::Grid;
use crate::codes::decode::{Batch, BatchDecoder};
use crate::codes::sim::Link;
use crate::codes::turbo::{CpuTurbo, DecoderConfig, EarlyStop, Guard, MaxStar, TransportBlock, TransportDecoder, TransportLink, TurboCode, TurboEncoder, TurboLink};
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
    /// When the code block's CRC checks (CRC24B, or the transport block's
    /// CRC24A when it is one code block); needs --tbs.
    Crc,
}

/// The code and the decoder, shared by `ber turbo` and `bench turbo`.
#[derive(Args, Debug, Clone)]
pub struct TurboArgs {
    /// Code block size K, one of the 188 LTE sizes 40..=6144 (without --tbs).
    #[arg(long, value_parser = count_usize)]
    pub block: Option<usize>,
    /// Transport block size A: the whole LTE chain (CRC24A, segmentation,
    /// CRC24B, rate matching to --coded bits) instead of bare code blocks.
    #[arg(long, value_parser = count_usize)]
    pub tbs: Option<usize>,
    /// Coded bits G a transport block is sent in (with --tbs; default 3·(A + 24)).
    #[arg(long, value_parser = count_usize)]
    pub coded: Option<usize>,
    /// Redundancy version 0..=3 (with --tbs).
    #[arg(long, default_value_t = 0)]
    pub rv: u8,
    /// Iterations at most (1..=64).
    #[arg(long, default_value = "8", value_parser = count_usize)]
    pub iterations: usize,
    /// max-log, log-map or log-map-linear.
    #[arg(long, default_value = "max-log")]
    pub algorithm: String,
    /// Extrinsic scaling factor in (0, 1] (default 0.75 with max-log, 1 with log-MAP).
    #[arg(long, allow_hyphen_values = true)]
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

/// What is sent: bare code blocks, or transport blocks through the LTE chain.
pub enum Sent {
    /// Code blocks of one code.
    Blocks(TurboCode),
    /// Transport blocks.
    Transport(TransportBlock),
}

impl TurboArgs {
    /// What is sent and the decoder configuration; errors name the option.
    pub fn resolve(&self) -> anyhow::Result<(Sent, DecoderConfig)> {
        let sent = match self.tbs {
            Some(a) => {
                anyhow::ensure!(self.block.is_none(), "--block and --tbs: give one (a transport block is cut into its own code blocks)");
                let g = self.coded.unwrap_or(3 * (a + 24));
                Sent::Transport(TransportBlock::new(a, g, self.rv).context("--tbs/--coded/--rv")?)
            }
            None => {
                anyhow::ensure!(self.coded.is_none() && self.rv == 0, "--coded and --rv apply to transport blocks (--tbs)");
                Sent::Blocks(TurboCode::lte(self.block.unwrap_or(6144)).context("--block")?)
            }
        };
        let max_star: MaxStar = self.algorithm.parse().context("--algorithm")?;
        let guard: Guard = self.guard.parse().context("--guard")?;
        anyhow::ensure!(self.subblocks > 1 || guard == Guard::None, "--guard {}: a guard needs --subblocks > 1", guard.name());
        let cfg = DecoderConfig {
            max_star,
            scaling: self.scaling.unwrap_or(if max_star == MaxStar::Max { 0.75 } else { 1.0 }),
            iterations: self.iterations,
            early_stop: match (self.early_stop, &sent) {
                (StopArg::Never, _) => EarlyStop::Never,
                (StopArg::Stable, _) => EarlyStop::Stable,
                (StopArg::Crc, Sent::Transport(tb)) if tb.segmentation().c == 1 => EarlyStop::Crc24A,
                (StopArg::Crc, Sent::Transport(_)) => EarlyStop::Crc24B,
                (StopArg::Crc, Sent::Blocks(_)) => anyhow::bail!("--early-stop crc: bare code blocks carry no CRC; send transport blocks (--tbs)"),
            },
            subblocks: self.subblocks,
            guard,
            window: self.window,
        };
        let sizes = match &sent {
            Sent::Blocks(code) => vec![code.k()],
            Sent::Transport(tb) => tb.block_sizes(),
        };
        for k in sizes {
            cfg.validate(k).with_context(|| format!("turbo decoder of K = {k}"))?;
        }
        Ok((sent, cfg))
    }

    fn parameters(&self, sent: &Sent, cfg: &DecoderConfig) -> Map<String, Value> {
        let mut p = Map::new();
        p.insert("code".into(), "turbo".into());
        match sent {
            Sent::Blocks(code) => {
                p.insert("block".into(), code.k().into());
            }
            Sent::Transport(tb) => {
                p.insert("tbs".into(), tb.a().into());
                p.insert("coded".into(), tb.g().into());
                p.insert("rv".into(), self.rv.into());
                p.insert("blocks".into(), tb.blocks().into());
            }
        }
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
    let (sent, cfg) = a.turbo.resolve()?;
    let threads = a.turbo.threads;
    let decoder = |code: TurboCode| CpuTurbo::<f32>::new(code, cfg, 1.0, threads);
    let mut link: Box<dyn Link> = match &sent {
        Sent::Blocks(code) => Box::new(TurboLink::new(code.clone(), Box::new(decoder(code.clone()).context("--threads")?))?),
        Sent::Transport(tb) => Box::new(TransportLink::new(TransportDecoder::new(tb.clone(), |code| Ok(Box::new(decoder(code)?)))?)),
    };
    println!("backend: {}", link.describe());
    let p = a.turbo.parameters(&sent, &cfg);
    run_curve(link.as_mut(), EBN0, &a.ebn0, &a.curve, p)
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
    let (Sent::Blocks(code), cfg) = a.turbo.resolve()? else {
        anyhow::bail!("--tbs: bench turbo measures code blocks (--block)");
    };
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
