//! `gpufec ber turbo` and `gpufec bench turbo`: LTE turbo code blocks on the
//! CPU decoders (serial, or the sub-block model with its guard) or the GPU
//! decoder (the sub-block model).

use super::bench::{BenchArgs, time_decoder};
use super::count::count_usize;
use super::curve::{CurveArgs, EBN0, run_curve};
use super::grid::Grid;
use crate::codes::decode::{Batch, BatchDecoder};
use crate::codes::sim::Link;
use crate::codes::turbo::{CpuTurbo, DecoderConfig, EarlyStop, Guard, MaxStar, TransportBlock, TransportLink, TurboCode, TurboEncoder, TurboLink};
use crate::codes::channel::{BpskAwgn, Channel, Quantizer, noise_variance};
use crate::codes::llr::{Llr, LlrType};
use crate::codes::encode::Encoder;
use crate::gpu::bench::{copy_engine, end_to_end, host_floor, kernel_only};
use crate::codes::turbo::decoder::Precision;
use crate::codes::turbo::qpp::{Interleaver, Qpp};
use crate::codes::turbo::Rsc;
use crate::gpu::{Backend, BackendOptions, Choice, Dematching, GpuTurbo, PipelineOptions, transport_decoder, turbo_decoder};
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
    /// The constituent code's feedback and feedforward polynomials in octal,
    /// memory 2..=4 (default LTE's 13,15); bare code blocks only.
    #[arg(long)]
    pub polys: Option<String>,
    /// An interleaver of your own: a file of the permutation's indices
    /// (decimal, separated by spaces, commas or lines; K = their count);
    /// instead of --block's QPP.
    #[arg(long)]
    pub interleaver: Option<std::path::PathBuf>,
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
    /// Where the GPU decoder de-rate-matches a transport block's code blocks
    /// (with --tbs): on-load (the received LLRs go to the GPU, which puts
    /// them in place) or host (3K + 12 f32 LLRs per code block go). The CPU
    /// decoder's are always de-rate-matched on the host.
    #[arg(long)]
    pub dematch: Option<Dematching>,
    /// Iterations at most (1..=64).
    #[arg(long, default_value = "8", value_parser = count_usize)]
    pub iterations: usize,
    /// max-log, log-map or log-map-linear.
    #[arg(long, default_value = "max-log")]
    pub algorithm: String,
    /// Extrinsic scaling factor in (0, 1] (default 0.75 with max-log, 1 with log-MAP).
    #[arg(long, allow_hyphen_values = true)]
    pub scaling: Option<f32>,
    /// Sub-blocks P decoded independently (1: the serial decoder). Without
    /// --subblocks, --guard and --window: the serial decoder on the CPU, and
    /// on the GPU P = K/48 (at most 128) with PIVIDSTW g = 8 (≤ 0.06 dB lost at K = 6144).
    #[arg(long, value_parser = count_usize)]
    pub subblocks: Option<usize>,
    /// none, pivi, dstw or pividstw (with P > 1).
    #[arg(long)]
    pub guard: Option<String>,
    /// Training window g in stages (dstw, pividstw).
    #[arg(long, value_parser = count_usize)]
    pub window: Option<usize>,
    /// When a block stops before the last iteration.
    #[arg(long, value_enum, default_value = "never")]
    pub early_stop: StopArg,
    /// CPU threads (0: every core).
    #[arg(long, default_value = "0", value_parser = count_usize)]
    pub threads: usize,
    /// The CPU decoder's metrics: f32 (the reference, what the GPU computes)
    /// or i16 (saturating, twice the blocks per instruction; max-log only).
    #[arg(long, value_enum, default_value = "f32")]
    pub precision: PrecisionArg,
}

/// `--precision`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PrecisionArg {
    /// 32-bit floats.
    F32,
    /// 16-bit integers with saturation.
    I16,
}

impl PrecisionArg {
    /// The decoder's precision.
    pub fn precision(self) -> Precision {
        match self {
            PrecisionArg::F32 => Precision::F32,
            PrecisionArg::I16 => Precision::I16,
        }
    }
}

/// What is sent: bare code blocks, or transport blocks through the LTE chain.
pub enum Sent {
    /// Code blocks of one code.
    Blocks(TurboCode),
    /// Transport blocks.
    Transport(TransportBlock),
}

impl TurboArgs {
    /// Whether the sub-block split is left to the backend (none of
    /// --subblocks, --guard, --window given).
    pub fn auto_split(&self) -> bool {
        self.subblocks.is_none() && self.guard.is_none() && self.window.is_none()
    }

    /// What is sent and the decoder configuration; errors name the option.
    pub fn resolve(&self) -> anyhow::Result<(Sent, DecoderConfig)> {
        let sent = match self.tbs {
            Some(a) => {
                anyhow::ensure!(self.block.is_none(), "--block and --tbs: give one (a transport block is cut into its own code blocks)");
                anyhow::ensure!(self.polys.is_none() && self.interleaver.is_none(), "--polys and --interleaver apply to bare code blocks, not to LTE transport blocks (--tbs)");
                let g = self.coded.unwrap_or(3 * (a + 24));
                Sent::Transport(TransportBlock::new(a, g, self.rv).context("--tbs/--coded/--rv")?)
            }
            None => {
                anyhow::ensure!(self.coded.is_none() && self.rv == 0 && self.dematch.is_none(), "--coded, --rv and --dematch apply to transport blocks (--tbs)");
                let rsc = match &self.polys {
                    None => Rsc::lte(),
                    Some(p) => match p.split(',').collect::<Vec<_>>()[..] {
                        [fb, ff] => Rsc::from_octal(fb, ff).context("--polys")?,
                        _ => anyhow::bail!("--polys {p}: give two octal polynomials, feedback first, e.g. 13,15"),
                    },
                };
                let interleaver = match &self.interleaver {
                    Some(path) => {
                        anyhow::ensure!(self.block.is_none(), "--block and --interleaver: give one (the file's length is K)");
                        Interleaver::read_text(path).context("--interleaver")?
                    }
                    None => Interleaver::Qpp(Qpp::lte(self.block.unwrap_or(6144)).context("--block")?),
                };
                Sent::Blocks(TurboCode::new(rsc, &interleaver).context("--interleaver")?)
            }
        };
        let max_star: MaxStar = self.algorithm.parse().context("--algorithm")?;
        let guard: Guard = self.guard.as_deref().unwrap_or("none").parse().context("--guard")?;
        let subblocks = self.subblocks.unwrap_or(1);
        anyhow::ensure!(subblocks > 1 || guard == Guard::None, "--guard {}: a guard needs --subblocks > 1", guard.name());
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
            subblocks,
            guard,
            window: self.window.unwrap_or(0),
        };
        let sizes = match &sent {
            Sent::Blocks(code) => vec![code.k()],
            Sent::Transport(tb) => tb.block_sizes(),
        };
        for k in sizes {
            cfg.check(k).map_err(|(field, e)| anyhow::anyhow!("--{}: {e} (turbo decoder of K = {k})", field.replace('_', "-")))?;
        }
        anyhow::ensure!(
            self.precision == PrecisionArg::F32 || max_star == MaxStar::Max,
            "--precision i16 decodes with max-log-MAP only, not --algorithm {}",
            max_star.name()
        );
        Ok((sent, cfg))
    }

    fn parameters(&self, sent: &Sent, cfg: &DecoderConfig) -> Map<String, Value> {
        let mut p = Map::new();
        p.insert("code".into(), "turbo".into());
        match sent {
            Sent::Blocks(code) => {
                p.insert("block".into(), code.k().into());
                p.insert("turbo_code".into(), code.describe().into());
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
    /// Where the decoder runs: auto (the GPU when one is usable), cpu or gpu.
    #[arg(long, default_value = "auto")]
    backend: Backend,
}

/// Run `gpufec ber turbo`; whether Ctrl-C ended it.
pub fn ber(a: BerTurboArgs) -> anyhow::Result<bool> {
    let (sent, cfg) = a.turbo.resolve()?;
    let (backend, precision, auto_split) = (a.backend, a.turbo.precision.precision(), a.turbo.auto_split());
    let options = BackendOptions { backend, cpu_threads: a.turbo.threads, pipeline: PipelineOptions::default() };
    let (mut link, chosen): (Box<dyn Link>, Choice) = match &sent {
        Sent::Blocks(code) => {
            let (d, choice) = turbo_decoder::<f32>(code.clone(), cfg, 1.0, precision, auto_split, false, &options).with_context(|| format!("--backend {backend}"))?;
            (Box::new(TurboLink::new(code.clone(), d)?), choice)
        }
        Sent::Transport(tb) => {
            let dematching = a.turbo.dematch.unwrap_or_default();
            let (d, choice) = transport_decoder::<f32>(tb, cfg, 1.0, precision, auto_split, dematching, &options).with_context(|| format!("--backend {backend}"))?;
            (Box::new(TransportLink::new(d)), choice)
        }
    };
    let about = match chosen.why_not_gpu {
        Some(why) => format!("{} (no GPU: {why})", link.describe()),
        None => link.describe(),
    };
    println!("backend: {about}");
    let mut p = a.turbo.parameters(&sent, &cfg);
    p.insert("backend".into(), about.into());
    run_curve(link.as_mut(), EBN0, &a.ebn0, &a.curve, p)
}

/// `gpufec bench turbo`.
#[derive(Args, Debug)]
pub struct BenchTurboArgs {
    #[command(flatten)]
    turbo: TurboArgs,
    #[command(flatten)]
    bench: BenchArgs,
    /// Eb/N0 of the noisy blocks, dB (early stopping makes the speed depend on it).
    #[arg(long, default_value_t = TURBO_BENCH_EBN0_DB, allow_hyphen_values = true)]
    ebn0: f64,
    /// LLR type: on a GPU i8 (quantized with the matched scale, the default)
    /// or f32; the CPU bench decodes f32.
    #[arg(long, value_parser = llr_type)]
    llr: Option<LlrType>,
}

/// The bench's default Eb/N0, dB: near the LTE K = 6144 waterfall at rate
/// 1/3, where blocks need most of their iterations.
pub const TURBO_BENCH_EBN0_DB: f64 = 1.5;

fn llr_type(s: &str) -> anyhow::Result<LlrType> {
    Ok(s.parse()?)
}

/// Run `gpufec bench turbo`: the CPU decoder's rows, or on a GPU its
/// kernel-only and end-to-end figures with the time split and the host and
/// copy-engine floors, on noisy blocks at `--ebn0`.
pub fn bench(a: BenchTurboArgs) -> anyhow::Result<()> {
    anyhow::ensure!(a.bench.threads.is_none(), "--threads: give the turbo decoder's threads with its own --threads");
    // The channel's own check, before anything is built.
    noise_variance(a.ebn0, 1.0 / 3.0).context("--ebn0")?;
    let (sent, cfg) = a.turbo.resolve()?;
    let run = a.bench.resolve()?;
    if !run.gpu {
        anyhow::ensure!(a.llr != Some(LlrType::I8), "--llr i8: the CPU bench decodes f32 LLRs (i8 is for --backend gpu)");
    }
    println!("machine: {}", super::bench::machine());
    let code = match sent {
        Sent::Blocks(code) => code,
        Sent::Transport(tb) => {
            let dematching = a.turbo.dematch.unwrap_or_default();
            return match (run.gpu, a.llr.unwrap_or(if run.gpu { LlrType::I8 } else { LlrType::F32 })) {
                (true, LlrType::I8) => bench_transport::<i8>(&tb, cfg, &a, dematching, &run),
                _ => bench_transport::<f32>(&tb, cfg, &a, dematching, &run),
            };
        }
    };
    if run.gpu {
        anyhow::ensure!(a.turbo.precision == PrecisionArg::F32, "--precision i16 is the CPU decoder's; the GPU decodes in f32");
        let cfg = if a.turbo.auto_split() { cfg.with_gpu_split(code.k()) } else { cfg };
        return match a.llr.unwrap_or(LlrType::I8) {
            LlrType::I8 => bench_gpu::<i8>(code, cfg, a.ebn0, &run),
            LlrType::F32 => bench_gpu::<f32>(code, cfg, a.ebn0, &run),
        };
    }
    let blocks = (run.bits as usize).div_ceil(code.k()).max(1);
    let (llrs, _) = noisy_blocks::<f32>(&code, blocks, a.ebn0)?;
    println!("bench turbo: K={} ({}), Eb/N0 {} dB, {blocks} blocks per repetition", code.k(), cfg.describe(), a.ebn0);
    let mut dec = CpuTurbo::<f32>::new(code.clone(), cfg, 1.0, a.turbo.threads)?.with_precision(a.turbo.precision.precision())?;
    let batch = Batch::uniform(&llrs, code.coded_len())?;
    let timing = time_decoder(&mut dec, &batch, (blocks * code.k()) as u64, run.budget)?;
    println!("{:.2} Mb/s  {}", timing.mbps(), dec.describe());
    Ok(())
}

/// Transport blocks of `tb` end to end through [`transport_decoder`] on
/// the bench's backend (code blocks de-rate-matched as `dematching` says on
/// the GPU), noisy at `--ebn0`, LLRs of `T`: the fastest of the timed decodes
/// (at least three, for `--seconds`) of enough transport blocks for `--bits`
/// and two of the decoder's batches.
fn bench_transport<T: Llr>(tb: &TransportBlock, cfg: DecoderConfig, a: &BenchTurboArgs, dematching: Dematching, run: &super::bench::Run) -> anyhow::Result<()> {
    let (precision, auto_split) = (a.turbo.precision.precision(), a.turbo.auto_split());
    anyhow::ensure!(!run.gpu || precision == Precision::F32, "--precision i16 is the CPU decoder's; the GPU decodes in f32");
    let threads = run.threads.last().copied().unwrap_or(0);
    let options = BackendOptions { backend: run.backend, cpu_threads: threads, pipeline: PipelineOptions { slots: run.slots, ..Default::default() } };
    let rate = tb.a() as f64 / tb.g() as f64;
    let quantizer = Quantizer::matched(noise_variance(a.ebn0, rate)?)?;
    let scale = if T::TYPE == LlrType::I8 { quantizer.scale() } else { 1.0 };
    let (mut dec, _) = transport_decoder::<T>(tb, cfg, scale, precision, auto_split, dematching, &options)?;
    let per_batch = dec.limit().units;
    let count = (run.bits as usize).div_ceil(tb.a()).max(2 * per_batch);
    let bits: Vec<u8> = (0..count * tb.a()).map(|i| (i.wrapping_mul(0x9E37_79B9) >> 7) as u8 & 1).collect();
    let mut coded = Vec::new();
    crate::codes::turbo::TransportEncoder::new(tb.clone()).encode(&bits, &mut coded)?;
    let mut llrs = Vec::new();
    BpskAwgn::<T>::with_quantizer(a.ebn0, rate, 1, quantizer)?.transmit(&coded, &mut llrs)?;
    println!(
        "bench turbo: transport blocks of A = {} in G = {} (rate {rate:.3}, rv {}), {} code blocks {:?}, {} LLRs at Eb/N0 {} dB, {count} transport blocks, {per_batch} per batch\n{}",
        tb.a(),
        tb.g(),
        a.turbo.rv,
        tb.blocks().len(),
        tb.block_sizes(),
        T::NAME,
        a.ebn0,
        dec.describe()
    );
    let timing = time_decoder(&mut dec, &Batch::uniform(&llrs, tb.g())?, (count * tb.a()) as u64, run.budget)?;
    // What crosses to the decoder per information bit: the received LLRs, or
    // 3K + 12 f32 LLRs per code block.
    let bytes = match (run.gpu, dematching) {
        (true, Dematching::OnLoad) => tb.g() * size_of::<T>(),
        _ => tb.blocks().iter().map(|k| 4 * (3 * k + 12)).sum(),
    };
    println!("end to end: {:.1} Mb/s ({:.2} LLR bytes per information bit handed to the code block decoders)", timing.mbps(), bytes as f64 / tb.a() as f64);
    Ok(())
}

/// `blocks` encoded pseudo-random code blocks of `code` over BPSK/AWGN at
/// `ebn0` dB as LLRs of `T` (i8 quantized with the channel's matched scale),
/// and the scale to divide them by.
fn noisy_blocks<T: Llr>(code: &TurboCode, blocks: usize, ebn0: f64) -> anyhow::Result<(Vec<T>, f32)> {
    let mut enc = TurboEncoder::new(code.clone());
    let bits: Vec<u8> = (0..blocks * code.k()).map(|i| (i.wrapping_mul(0x9E37_79B9) >> 7) as u8 & 1).collect();
    let mut coded = Vec::new();
    enc.encode(&bits, &mut coded)?;
    let quantizer = Quantizer::matched(noise_variance(ebn0, enc.rate())?)?;
    let scale = if T::TYPE == LlrType::I8 { quantizer.scale() } else { 1.0 };
    let mut llrs = Vec::new();
    BpskAwgn::<T>::with_quantizer(ebn0, enc.rate(), 1, quantizer)?.transmit(&coded, &mut llrs)?;
    Ok((llrs, scale))
}

/// The GPU's figures for `code` and `cfg`: kernel-only (one device-resident
/// batch), end to end through the decoder contract with the time split, the
/// host-memory floor and the copy engine's ceiling for the batch's bytes.
fn bench_gpu<T: Llr>(code: TurboCode, cfg: DecoderConfig, ebn0: f64, run: &super::bench::Run) -> anyhow::Result<()> {
    let pipeline = PipelineOptions { slots: run.slots, ..Default::default() };
    // The LLRs' scale is only known once the channel is: a first decoder gives the batch size.
    let probe = GpuTurbo::<T>::new(code.clone(), cfg, 1.0, &pipeline).context("--backend gpu")?;
    let per_batch = probe.limit().units;
    drop(probe);
    // Two distinct batches, or more to cover --bits.
    let blocks = (run.bits as usize).div_ceil(code.k()).max(2 * per_batch).div_ceil(per_batch) * per_batch;
    let (units, scale) = noisy_blocks::<T>(&code, 2 * per_batch, ebn0)?;
    let mut dec = GpuTurbo::<T>::new(code.clone(), cfg, scale, &pipeline).context("--backend gpu")?;
    let k = code.k();
    println!(
        "bench turbo --backend gpu: K={k} ({}), {} LLRs at Eb/N0 {ebn0} dB, {per_batch} blocks per batch\n{}",
        cfg.describe(),
        T::NAME,
        dec.describe()
    );
    let reps = 10;
    let kernel = kernel_only(&mut dec, &units, reps)?;
    println!("kernel-only: {kernel:.2} Gb/s (one device-resident batch, mean of {reps} decodes: load, iterations, stop)");
    let batches = blocks / per_batch;
    let e = end_to_end(&mut dec, &units, batches)?;
    println!(
        "end to end: {:.2} Gb/s over {batches} batches ({} slots): per batch H2D {:.2} ms, kernels {:.2} ms, D2H {:.2} ms, staging {:.2} ms, unpacking {:.2} ms, wall {:.2} ms, overlap {:.0} %",
        e.gbps,
        run.slots,
        e.h2d_ms,
        e.kernel_ms,
        e.d2h_ms,
        e.stage_ms,
        e.unpack_ms,
        e.wall_ms,
        e.overlap_percent()
    );
    // LLR bytes per information bit: the 3K + 4m LLRs of a block over its K
    // bits, rounded down (the tail's 4m LLRs are a fraction of a percent;
    // rounding up would count 4 bytes for 3).
    let in_bytes = (code.coded_len() * size_of::<T>() / k).max(1);
    host_floor(0, in_bytes, per_batch * k)?;
    copy_engine(0, per_batch * code.coded_len() * size_of::<T>())?;
    Ok(())
}
