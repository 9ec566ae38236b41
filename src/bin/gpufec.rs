//! `gpufec`: run flowgraph files, measure BER/FER curves and decoder
//! throughput, and list the GPUs. A thin layer over the library: parsing the
//! command line and printing; the work is in `gpufec::{flowgraph, ber, bench}`.

use clap::{Args, Parser, Subcommand, ValueEnum};
use gpufec::ber::{ConvOptions, ConvSimulator, EbN0Grid, LlrChoice, PointSimulator, run_curve};
use gpufec::bench::viterbi::{
    BENCH_EBN0_DB, BENCH_FRAME_BITS, Setup, i8_quantizer, noisy_units, standard_setups, time_decoder,
};
use gpufec::codes::conv::{ConvCode, FrameConfig, SimdLevel, TileConfig, Traceback, Trellis, ViterbiMode};
use gpufec::codes::sim::StopRule;
use gpufec::count::parse_count;
use gpufec::flowgraph::{BuildOptions, FlowgraphFile, Override, Progress};
use gpufec::gpu::{Backend, GpuLlr, GpuOptions, viterbi_decoder};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

/// FutureSDR blocks that decode channel codes on NVIDIA GPUs, with CPU reference decoders.
#[derive(Parser)]
#[command(name = "gpufec", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a flowgraph file, with live throughput and BER, and a summary at the end.
    Run(RunArgs),
    /// Measure a BER/FER curve with the direct link simulator.
    Ber(BerArgs),
    /// Measure decoder throughput.
    #[command(subcommand)]
    Bench(BenchCommand),
    /// List the GPUs and the CUDA driver found, or say why there are none.
    Info,
}

#[derive(Args)]
struct RunArgs {
    /// The flowgraph file (TOML), e.g. flowgraphs/viterbi_awgn.toml.
    file: PathBuf,
    /// Override a block parameter or a variable, e.g. --set awgn.ebn0_db=3 --set vars.rate=3/4.
    #[arg(long = "set", value_name = "BLOCK.PARAM=VALUE")]
    set: Vec<Override>,
    /// Backend of every decoder block: auto (the GPU when one is usable), cpu or gpu.
    #[arg(long)]
    backend: Option<Backend>,
}

/// Code families `ber` can simulate.
#[derive(Clone, Copy, ValueEnum)]
enum Code {
    /// Convolutional code with Viterbi decoding.
    Conv,
}

#[derive(Clone, Copy, ValueEnum)]
enum ModeArg {
    Streaming,
    Terminated,
}

#[derive(Clone, Copy, PartialEq, ValueEnum)]
enum LlrArg {
    I8,
    F32,
}

#[derive(Clone, Copy, PartialEq, ValueEnum)]
enum LlrSet {
    I8,
    F32,
    Both,
}

/// The convolutional code and its Viterbi decoder.
#[derive(Args)]
struct ConvArgs {
    /// Constraint length K.
    #[arg(long, default_value_t = 7)]
    k: u32,
    /// Generator polynomials in octal.
    #[arg(long, default_value = "171,133")]
    polys: String,
    /// Code rate after puncturing: 1/2, 2/3, 3/4, 5/6 or 7/8.
    #[arg(long, default_value = "1/2")]
    rate: String,
    /// A tiled stream, or terminated frames decoded whole.
    #[arg(long, value_enum, default_value = "streaming")]
    mode: ModeArg,
    /// Information bits per frame (terminated: default 1024; streaming: the FER frame, default f).
    #[arg(long, value_parser = count_usize)]
    frame: Option<usize>,
}

/// The Viterbi tile geometry.
#[derive(Args)]
struct TileArgs {
    /// Tile f,v1,v2 in trellis stages.
    #[arg(long, default_value = "256,20,20")]
    tile: String,
    /// Tiles per work unit.
    #[arg(long, default_value_t = 64)]
    group: usize,
    /// serial, or parallel:F0 (subframes of F0 stages).
    #[arg(long, default_value = "serial")]
    traceback: String,
}

#[derive(Args)]
struct BerArgs {
    /// Code family.
    #[arg(long, value_enum)]
    code: Code,
    #[command(flatten)]
    conv: ConvArgs,
    #[command(flatten)]
    tile: TileArgs,
    /// LLR type at the decoder (i8 is quantized with 16·σ²).
    #[arg(long, value_enum, default_value = "i8")]
    llr: LlrArg,
    /// Eb/N0 in dB: a list 1,2,3 or a range START:STEP:STOP.
    #[arg(long)]
    ebn0: EbN0Grid,
    /// Information bits per point at most (e.g. 1e7).
    #[arg(long, default_value = "1e6", value_parser = parse_count)]
    max_bits: u64,
    /// Bit errors after which a point stops.
    #[arg(long, default_value = "1000", value_parser = parse_count)]
    max_errors: u64,
    /// Seed of the bits and the noise.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Where the decoder runs: auto, cpu or gpu.
    #[arg(long, default_value = "auto")]
    backend: Backend,
    /// Also write the curve as JSON to this file (rewritten after every point).
    #[arg(long)]
    json: Option<PathBuf>,
}

#[derive(Subcommand)]
enum BenchCommand {
    /// Viterbi decoding throughput (K=7 (171,133) unless told otherwise) on pre-generated noisy LLRs.
    Viterbi(BenchViterbiArgs),
}

#[derive(Args)]
struct BenchViterbiArgs {
    /// Where the decoder runs: cpu, gpu, or auto (the GPU when one is usable).
    #[arg(long, default_value = "cpu")]
    backend: Backend,
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
    /// Tiles per work unit.
    #[arg(long, default_value_t = 64)]
    group: usize,
    /// Information bits per repetition, rounded up to whole work units
    /// (default 2^20 on the CPU, 2^26 on a GPU).
    #[arg(long, value_parser = parse_count)]
    bits: Option<u64>,
    /// Seconds of repetitions per row; the fastest of at least three counts.
    #[arg(long, default_value_t = 1.0)]
    seconds: f64,
    /// CPU threads; without it, one thread and all cores are measured.
    #[arg(long, value_parser = count_usize)]
    threads: Option<usize>,
    /// On a GPU, skip the paper's Table IV and V grids (they take a minute or two).
    #[arg(long)]
    no_tables: bool,
    /// On a GPU, pipeline slots (batches in flight) for the end-to-end figures.
    #[arg(long, default_value_t = 2, value_parser = count_usize)]
    slots: usize,
}

fn count_usize(s: &str) -> anyhow::Result<usize> {
    Ok(usize::try_from(parse_count(s)?)?)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(a) => run(a),
        Command::Ber(a) => ber(a),
        Command::Bench(BenchCommand::Viterbi(a)) => bench_viterbi(a),
        Command::Info => info(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(a: RunArgs) -> anyhow::Result<()> {
    let mut file = FlowgraphFile::load(&a.file)?;
    for o in &a.set {
        file.apply(o)?;
    }
    let built = gpufec::flowgraph::build(&file, &BuildOptions { backend: a.backend })?;
    println!("flowgraph: {}{}", file.label, file.description.as_ref().map(|d| format!(" ({d})")).unwrap_or_default());
    for d in &built.decoders {
        println!("decoder '{}': backend {d}; {}", d.block, d.describe);
    }
    // Live figures on stderr: one line rewritten in place on a terminal, a
    // new line every second otherwise (a log, a pipe).
    let live = std::io::stderr().is_terminal();
    let tick = Duration::from_millis(if live { 250 } else { 1000 });
    let summary = gpufec::flowgraph::run(built, tick, |p| {
        if live {
            eprint!("\r\x1b[2K{}", progress_line(p));
            let _ = std::io::stderr().flush();
        } else {
            eprintln!("{}", progress_line(p));
        }
    });
    if live {
        eprint!("\r\x1b[2K");
    }
    let summary = summary?;
    for (name, t) in &summary.throughput {
        println!("probe '{name}': {} bits in {:.3} s, {:.2} Mb/s", t.items, t.seconds, t.per_second() / 1e6);
    }
    for (name, c) in &summary.ber {
        println!(
            "ber '{name}': {} bits, {} errors, BER {:.3e}, {} frames, {} frame errors, FER {:.3e}",
            c.bits, c.bit_errors, c.ber(), c.frames, c.frame_errors, c.fer()
        );
    }
    let counts = summary.ber.first().map(|(_, c)| *c).unwrap_or_default();
    let rate = summary.throughput.first().map(|(_, t)| format!("{:.2} Mb/s", t.per_second() / 1e6));
    let backends: Vec<String> = summary.decoders.iter().map(|d| d.to_string()).collect();
    println!(
        "summary: bits {}, errors {}, BER {:.3e}, FER {:.3e}, information {}, wall {:.2} s, backend {}{}",
        counts.bits,
        counts.bit_errors,
        counts.ber(),
        counts.fer(),
        rate.unwrap_or_else(|| "n/a (no probe)".into()),
        summary.wall.as_secs_f64(),
        if backends.is_empty() { "n/a (no decoder)".into() } else { backends.join(", ") },
        if summary.stopped_at_target { " (stopped at the BER sink's target)" } else { "" }
    );
    Ok(())
}

fn progress_line(p: &Progress) -> String {
    let mut line = format!("{:7.1} s", p.elapsed.as_secs_f64());
    if let Some(c) = p.ber {
        line += &format!("  bits {}  errors {}  BER {:.2e}  FER {:.2e}", c.bits, c.bit_errors, c.ber(), c.fer());
    }
    if let Some(t) = p.throughput {
        line += &format!("  {:.2} Mb/s", t.per_second() / 1e6);
    }
    line
}

fn ber(a: BerArgs) -> anyhow::Result<()> {
    let mut sim: Box<dyn PointSimulator> = match a.code {
        Code::Conv => Box::new(ConvSimulator::new(&ConvOptions {
            k: a.conv.k,
            polys: a.conv.polys,
            rate: a.conv.rate,
            terminated: matches!(a.conv.mode, ModeArg::Terminated),
            frame: a.conv.frame,
            tile: a.tile.tile,
            group: a.tile.group,
            traceback: a.tile.traceback,
            llr: if a.llr == LlrArg::I8 { LlrChoice::I8 } else { LlrChoice::F32 },
            backend: a.backend,
        })?),
    };
    if let Some(path) = &a.json {
        // Fail now rather than after the first point.
        std::fs::write(path, "").map_err(|e| anyhow::anyhow!("--json: cannot write {}: {e}", path.display()))?;
    }
    println!("backend: {}", sim.backend());
    let stop = StopRule { max_bits: a.max_bits, max_errors: a.max_errors };
    run_curve(sim.as_mut(), &a.ebn0, stop, a.seed, |curve| {
        if let Some(p) = curve.points.last() {
            println!(
                "Eb/N0 {:6.2} dB: {} bits, {} errors, BER {:.3e}, {} frames, {} frame errors, FER {:.3e}, {:.2} s",
                p.ebn0_db,
                p.bits,
                p.bit_errors,
                p.ber(),
                p.frames,
                p.frame_errors,
                p.fer(),
                p.seconds
            );
        }
        if let Some(path) = &a.json {
            let text = serde_json::to_string_pretty(&curve.to_json())?;
            let written = std::fs::write(path, text + "\n");
            written.map_err(|e| anyhow::anyhow!("--json: cannot write {}: {e}", path.display()))?;
        }
        Ok(())
    })?;
    Ok(())
}

fn bench_viterbi(a: BenchViterbiArgs) -> anyhow::Result<()> {
    let trellis = Arc::new(Trellis::new(&ConvCode::k7_171_133()));
    let setups = bench_setups(&a)?;
    anyhow::ensure!(a.bits != Some(0), "--bits 0 measures nothing");
    anyhow::ensure!(a.seconds.is_finite() && a.seconds >= 0.0, "--seconds must be a number of seconds ≥ 0");
    anyhow::ensure!(a.threads != Some(0), "--threads 0: give at least one thread, or leave it out for 1 and all cores");
    let on_gpu = match a.backend {
        Backend::Cpu => false,
        Backend::Gpu => {
            gpufec::gpu::available().map_err(|e| anyhow::anyhow!("--backend gpu: {e:#}"))?;
            true
        }
        Backend::Auto => match gpufec::gpu::available() {
            Ok(()) => true,
            Err(why) => {
                println!("backend auto: no GPU ({why:#}); measuring the CPU");
                false
            }
        },
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads: Vec<usize> = match (on_gpu, a.threads) {
        (true, _) => vec![0],
        (false, Some(t)) => vec![t],
        (false, None) if cores > 1 => vec![1, cores],
        (false, None) => vec![1],
    };
    let bits = a.bits.unwrap_or(if on_gpu { 1 << 26 } else { 1 << 20 });
    let run = BenchRun {
        trellis,
        backend: if on_gpu { a.backend } else { Backend::Cpu },
        threads,
        budget: Duration::from_secs_f64(a.seconds),
    };
    println!("machine: {}, {cores} cores", cpu_model());
    println!(
        "bench viterbi: K=7 (171,133) rate 1/2, Eb/N0 {BENCH_EBN0_DB} dB, {bits} information bits per repetition, \
         fastest of ≥ 3 repetitions over {} s",
        a.seconds
    );
    println!("{:<38} {:>4} {:>7} {:>9} {:>10}  decoder", "configuration", "llr", "threads", "Mb/s", "Mb/s/core");
    for setup in &setups {
        if on_gpu && matches!(setup.mode, ViterbiMode::Frame(_)) {
            println!("{:<38} (terminated frames are decoded on the CPU only)", setup.name);
            continue;
        }
        if a.llr != LlrSet::F32 {
            let q = i8_quantizer(run.trellis.n())?;
            let (units, info) = noisy_units::<i8>(&run.trellis, setup.mode, bits, 1, |l, o| Ok(q.quantize(l, o)?))?;
            run.rows::<i8>(setup, &units, info)?;
        }
        if a.llr != LlrSet::I8 {
            let (units, info) = noisy_units::<f32>(&run.trellis, setup.mode, bits, 1, |l, o| {
                o.extend_from_slice(l);
                Ok(())
            })?;
            run.rows::<f32>(setup, &units, info)?;
        }
    }
    if on_gpu && a.tile.is_none() && a.traceback.is_none() && a.mode.is_none() {
        // The GPU's own figures: kernel-only, time split, the paper's grids.
        println!();
        gpufec::gpu::bench_viterbi(&gpufec::gpu::GpuBenchOptions { group: a.group, tables: !a.no_tables, slots: a.slots, ..Default::default() })?;
    }
    Ok(())
}

/// The configurations `bench viterbi` measures: the standard ones, or the one its options describe.
fn bench_setups(a: &BenchViterbiArgs) -> anyhow::Result<Vec<Setup>> {
    let context = |flag: &'static str| move |e: gpufec::codes::CodeError| anyhow::anyhow!("{flag}: {e}");
    let terminated = matches!(a.mode, Some(ModeArg::Terminated));
    anyhow::ensure!(a.frame.is_none() || terminated, "--frame applies to --mode terminated only");
    if terminated {
        anyhow::ensure!(
            a.tile.is_none() && a.traceback.is_none(),
            "--tile and --traceback apply to tiles, not to --mode terminated"
        );
        let frame = FrameConfig::new(a.frame.unwrap_or(BENCH_FRAME_BITS), true).map_err(context("--frame"))?;
        return Ok(vec![Setup::new(ViterbiMode::Frame(frame))]);
    }
    if a.tile.is_none() && a.traceback.is_none() && a.mode.is_none() {
        return standard_setups(a.group).map_err(context("--group"));
    }
    let traceback = Traceback::parse(a.traceback.as_deref().unwrap_or("serial")).map_err(context("--traceback"))?;
    let tile = TileConfig::parse(a.tile.as_deref().unwrap_or("256,20,20"), Traceback::Serial).map_err(context("--tile"))?;
    let tile = TileConfig::new(tile.f, tile.v1, tile.v2, traceback).map_err(context("--traceback"))?;
    let tile = tile.with_group(a.group).map_err(context("--group"))?;
    Ok(vec![Setup::new(ViterbiMode::Tiled(tile))])
}

/// What every row of a `bench viterbi` run shares.
struct BenchRun {
    trellis: Arc<Trellis>,
    backend: Backend,
    /// Thread counts to measure (0 on a GPU).
    threads: Vec<usize>,
    budget: Duration,
}

impl BenchRun {
    /// One row per thread count for `setup` on the prepared `units`.
    fn rows<T: GpuLlr>(&self, setup: &Setup, units: &[T], info: u64) -> anyhow::Result<()> {
        for &t in &self.threads {
            let gpu = GpuOptions::default();
            let (mut decoder, _) = viterbi_decoder::<T>(self.trellis.clone(), setup.mode, None, self.backend, t, &gpu)
                .map_err(|e| anyhow::anyhow!("--backend {}: {e:#}", self.backend))?;
            let timing = time_decoder(decoder.as_mut(), units, info, self.budget)?;
            let (threads, per_core) = match t {
                0 => ("-".to_string(), "-".to_string()),
                t => (t.to_string(), format!("{:.1}", timing.mbps() / t as f64)),
            };
            println!(
                "{:<38} {:>4} {threads:>7} {:>9.1} {per_core:>10}  {}",
                setup.name,
                T::NAME,
                timing.mbps(),
                decoder.describe()
            );
        }
        Ok(())
    }
}

/// The CPU's model name as Linux reports it.
fn cpu_model() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo.lines().find_map(|l| l.strip_prefix("model name").and_then(|r| r.split(':').nth(1)));
    model.map_or_else(|| "unknown CPU".to_string(), |m| m.trim().to_string())
}

fn info() -> anyhow::Result<()> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("CPU: {}, {cores} cores; CPU decoders run at SIMD level {}", cpu_model(), SimdLevel::detect());
    match gpufec::gpu::devices() {
        Err(why) => println!("no GPU usable here ({why:#}): every decoder runs on the CPU"),
        Ok(devices) if devices.is_empty() => println!("no GPU here: the CUDA driver found no device"),
        Ok(devices) => {
            if let Some(d) = devices.first() {
                println!("CUDA driver {}.{}", d.driver_version / 1000, d.driver_version % 1000 / 10);
            }
            for d in devices {
                println!(
                    "GPU {}: {}, {} SMs, {:.1} GiB, compute capability {}.{}",
                    d.index,
                    d.name,
                    d.sms,
                    d.memory_bytes as f64 / (1u64 << 30) as f64,
                    d.compute_capability.0,
                    d.compute_capability.1
                );
            }
        }
    }
    Ok(())
}
