//! `gpufec`: run flowgraph files, measure BER/FER curves and decoder
//! throughput, and list the GPUs. A thin layer over the library: parsing the
//! command line and printing; the work is in `gpufec::{flowgraph, ber, bench}`.

use clap::{Args, Parser, Subcommand, ValueEnum};
use gpufec::ber::{ConvOptions, ConvSimulator, EbN0Grid, LlrChoice, PointSimulator, run_curve};
use gpufec::bench::viterbi::{i8_quantizer, noisy_units, time_decoder};
use gpufec::codes::conv::{ConvCode, TileConfig, Traceback, Trellis, ViterbiMode};
use gpufec::codes::sim::StopRule;
use gpufec::codes::{BatchDecoder, Llr};
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
    /// cpu or gpu.
    #[arg(long, default_value = "cpu")]
    backend: Backend,
    /// LLR type: i8, f32 or both.
    #[arg(long, value_enum, default_value = "both")]
    llr: LlrSet,
    #[command(flatten)]
    tile: TileArgs,
    /// Information bits per measurement (rounded up to whole work units).
    #[arg(long, default_value = "1e7", value_parser = parse_count)]
    bits: u64,
    /// CPU threads; without it, one thread and all cores are measured.
    #[arg(long, value_parser = count_usize)]
    threads: Option<usize>,
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
    let live = std::io::stderr().is_terminal();
    let summary = gpufec::flowgraph::run(built, Duration::from_millis(500), |p| {
        if live {
            eprint!("\r\x1b[2K{}", progress_line(p));
            let _ = std::io::stderr().flush();
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
            std::fs::write(path, text + "\n").map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
        }
        Ok(())
    })?;
    Ok(())
}

fn bench_viterbi(a: BenchViterbiArgs) -> anyhow::Result<()> {
    let trellis = Arc::new(Trellis::new(&ConvCode::k7_171_133()));
    let traceback = Traceback::parse(&a.tile.traceback).map_err(|e| anyhow::anyhow!("--traceback: {e}"))?;
    let tile = TileConfig::parse(&a.tile.tile, traceback).map_err(|e| anyhow::anyhow!("--tile: {e}"))?;
    let tile = tile.with_group(a.tile.group).map_err(|e| anyhow::anyhow!("--group: {e}"))?;
    anyhow::ensure!(a.bits > 0, "--bits 0 measures nothing");
    anyhow::ensure!(a.threads != Some(0), "--threads 0: give at least one thread, or leave it out for 1 and all cores");
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads: Vec<usize> = match (a.backend, a.threads) {
        (Backend::Gpu, _) => vec![0],
        (_, Some(t)) => vec![t],
        (_, None) if cores > 1 => vec![1, cores],
        (_, None) => vec![1],
    };
    println!(
        "bench viterbi: K=7 (171,133) rate 1/2, tile f={} v1={} v2={} {}, group {}, {} information bits per run",
        tile.f, tile.v1, tile.v2, tile.traceback, tile.group, a.bits
    );
    println!("{:<44} {:>4} {:>8} {:>10} {:>9}", "decoder", "llr", "threads", "Mb/s", "seconds");
    if a.llr != LlrSet::F32 {
        let q = i8_quantizer(trellis.n())?;
        let (units, info) = noisy_units::<i8>(&trellis, tile, a.bits, 1, |l, o| Ok(q.quantize(l, o)?))?;
        bench_rows::<i8>(&trellis, tile, a.backend, &threads, &units, info)?;
    }
    if a.llr != LlrSet::I8 {
        let (units, info) = noisy_units::<f32>(&trellis, tile, a.bits, 1, |l, o| {
            o.extend_from_slice(l);
            Ok(())
        })?;
        bench_rows::<f32>(&trellis, tile, a.backend, &threads, &units, info)?;
    }
    Ok(())
}

fn bench_rows<T: GpuLlr>(
    trellis: &Arc<Trellis>,
    tile: TileConfig,
    backend: Backend,
    threads: &[usize],
    units: &[T],
    info: u64,
) -> anyhow::Result<()> {
    for &t in threads {
        let (mut decoder, not_gpu) =
            viterbi_decoder::<T>(trellis.clone(), ViterbiMode::Tiled(tile), backend, t, &GpuOptions::default())?;
        if let Some(why) = not_gpu {
            println!("(no GPU: {why})");
        }
        let timing = time_decoder(decoder.as_mut(), units, info)?;
        print_row(decoder.as_ref(), t, timing.mbps(), timing.seconds);
    }
    Ok(())
}

fn print_row<T: Llr>(decoder: &dyn BatchDecoder<T>, threads: usize, mbps: f64, seconds: f64) {
    let threads = if threads == 0 { "-".to_string() } else { threads.to_string() };
    println!("{:<44} {:>4} {:>8} {:>10.2} {:>9.3}", decoder.describe(), T::NAME, threads, mbps, seconds);
}

fn info() -> anyhow::Result<()> {
    match gpufec::gpu::devices() {
        Err(why) => println!("no GPU: {why:#}"),
        Ok(devices) if devices.is_empty() => println!("no GPU: the CUDA driver found no device"),
        Ok(devices) => {
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
