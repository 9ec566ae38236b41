//! Layer 4: the `gpufec` command line. One module per code family for its
//! `ber` and `bench` subcommands (`conv`), and the parts they share: curves
//! with live progress and Ctrl-C (`curve`), decoder timing (`bench`), counts
//! as people write them (`count`), axis grids (`grid`); and `run` and `info`.

mod bench;
mod conv;
mod count;
mod curve;
mod grid;
mod info;
mod interrupt;
mod status_line;
mod turbo;
mod run;

pub use bench::{BenchArgs, LlrSet, MAX_BENCH_BITS, MAX_BENCH_SECONDS, Run, Timing, time_decoder};
pub use conv::{BENCH_FRAME_BITS, Setup, standard_setups};
pub use count::{count_usize, parse_count};
pub use curve::{Axis, Curve, CurveArgs, EBN0, point_line, run_curve};
pub use grid::Grid;
pub use interrupt::INTERRUPTED;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

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
    Run(run::RunArgs),
    /// Measure an error-rate curve with a family's direct link simulator.
    #[command(subcommand)]
    Ber(Ber),
    /// Measure decoder throughput.
    #[command(subcommand)]
    Bench(Bench),
    /// List the GPUs, their limits, the CUDA driver and the kernel cache, or say why there is no GPU.
    Info,
}

/// `gpufec ber <family>`.
#[derive(Subcommand)]
enum Ber {
    /// Convolutional code with Viterbi decoding, BPSK over AWGN.
    Conv(conv::BerArgs),
    /// LTE turbo code blocks, BPSK over AWGN, the CPU turbo decoder.
    Turbo(turbo::BerTurboArgs),
}

/// `gpufec bench <family>`.
#[derive(Subcommand)]
enum Bench {
    /// Viterbi decoding throughput (K=7 (171,133) unless told otherwise) on pre-generated noisy LLRs.
    #[command(alias = "viterbi")]
    Conv(conv::BenchConvArgs),
    /// CPU turbo decoding throughput of LTE code blocks on noisy LLRs.
    Turbo(turbo::BenchTurboArgs),
}

/// The `gpufec` command: parse the command line, run, and turn the outcome
/// into an exit status (0; 1 with one `error: ...` line; 2 for a command line
/// the parser rejects; 130 after Ctrl-C, with the summary of what was counted).
///
/// Call it first thing in a program's `main`, before any other thread
/// starts: it may set `TMPDIR` (see `buffers_in_shared_memory`).
pub fn main() -> ExitCode {
    buffers_in_shared_memory();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(a) => run::run(a),
        Command::Ber(Ber::Conv(a)) => conv::ber(a),
        Command::Bench(Bench::Conv(a)) => conv::bench(a).map(|()| false),
        Command::Ber(Ber::Turbo(a)) => turbo::ber(a),
        Command::Bench(Bench::Turbo(a)) => turbo::bench(a).map(|()| false),
        Command::Info => info::info().map(|()| false),
    };
    match result {
        Ok(false) => ExitCode::SUCCESS,
        Ok(true) => ExitCode::from(INTERRUPTED),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Where FutureSDR puts its stream buffers unless `TMPDIR` says otherwise.
const SHARED_MEMORY: &str = "/dev/shm";
/// Free room the shared-memory file system must have for the buffers: a
/// full tmpfs would kill the process with SIGBUS on a write, so a small one
/// (a container's default 64 MiB) is left alone.
const SHARED_MEMORY_MIN_FREE: u64 = 4 << 30;

/// Point `TMPDIR` at `/dev/shm` when it is unset and that tmpfs has room.
///
/// FutureSDR maps each stream buffer twice from a file it creates in the
/// temporary directory. On a disk file system (`/tmp` on ext4) every page of
/// a buffer is a page of that file; in tmpfs it is plain memory, which the
/// chain writes and reads faster (file → decoder → file on the lent H200,
/// same lease: 5.5–5.6 against 4.5–5.1 Gb/s, and 5.9–6.0 against 5.3–5.4
/// with the decoder copying from the buffer; BENCHMARKS.md, tenth session).
fn buffers_in_shared_memory() {
    if std::env::var_os("TMPDIR").is_some() {
        return;
    }
    let Ok(path) = std::ffi::CString::new(SHARED_MEMORY) else { return };
    // SAFETY: statvfs is plain old data, for which all zero bytes are a value.
    let mut fs: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: a NUL-terminated path and a struct statvfs fills.
    if unsafe { libc::statvfs(path.as_ptr(), &mut fs) } != 0 {
        return;
    }
    #[allow(clippy::useless_conversion)] // the fields' types differ between platforms
    let free = u64::from(fs.f_bavail).saturating_mul(u64::from(fs.f_frsize));
    // SAFETY: access only reads its arguments.
    let writable = unsafe { libc::access(path.as_ptr(), libc::W_OK) } == 0;
    if free >= SHARED_MEMORY_MIN_FREE && writable {
        // SAFETY: called first thing in main, before any other thread exists.
        unsafe { std::env::set_var("TMPDIR", SHARED_MEMORY) };
    }
}
