//! Layer 4: the `gpufec` command line: `run` and `info`, and for every code
//! family `ber <family>` (the same for each: its settings' options and the
//! curve's) and `bench <family>` (the shared options, then the family's own
//! measurement in its module). A family is listed once, in `FAMILIES`; the
//! parts every command shares are curves with live progress and Ctrl-C
//! (`curve`), decoder timing (`bench`), counts as people write them
//! (`count`), axis grids (`grid`) and the settings' options (`settings`).

mod ber;
mod bench;
mod conv;
mod count;
mod curve;
mod dashboard;
mod grid;
mod info;
mod interrupt;
pub mod plot;
mod polar;
mod run;
mod settings;
mod status_line;
mod run_json;
mod sync;
mod turbo;

pub use bench::{BenchArgs, LlrSet, MAX_BENCH_BITS, MAX_BENCH_SECONDS, Run, Timing, time_decoder};
pub use conv::{BENCH_FRAME_BITS, Setup, standard_setups};
pub use count::{count_usize, parse_count};
pub use crate::codes::sim::{Axis, EBN0};
pub use curve::{Curve, CurveArgs, point_line, run_curve};
pub use grid::Grid;
pub use interrupt::INTERRUPTED;

use crate::flowgraph::family::{Code, Family};
use clap::{ArgMatches, Args, Command, FromArgMatches};
use serde_json::{Map, Value};
use std::process::ExitCode;

/// A family's own part of the command line: its `bench` measurement.
pub(crate) struct FamilyCli {
    /// The family (its name, summary and settings).
    pub family: &'static Family,
    /// What `bench <family>` measures, one line.
    pub bench_about: &'static str,
    /// Run `bench <family>` for the resolved `code`, of which the command
    /// line gave the settings `given`.
    pub bench: fn(code: &dyn Code, given: &Map<String, Value>, args: &BenchArgs) -> anyhow::Result<()>,
}

/// Every family on the command line, one line each.
const FAMILIES: &[FamilyCli] = &[conv::CLI, turbo::CLI, polar::CLI, sync::CLI];

/// The whole command line.
fn command() -> Command {
    let ber = FAMILIES.iter().fold(
        Command::new("ber").about("Measure an error-rate curve with a family's direct link simulator.").subcommand_required(true),
        |c, f| c.subcommand(ber::BerArgs::augment_args(settings::with_fields(Command::new(f.family.name).about(f.family.summary), f.family.fields)).arg(ber::axis_arg(f.family.axis))),
    );
    let bench = FAMILIES.iter().fold(
        Command::new("bench").about("Measure decoder throughput.").subcommand_required(true),
        |c, f| c.subcommand(BenchArgs::augment_args(settings::with_fields(Command::new(f.family.name).about(f.bench_about), f.family.fields))),
    );
    Command::new("gpufec")
        .version(env!("CARGO_PKG_VERSION"))
        .about("FutureSDR blocks that decode channel codes on NVIDIA GPUs, with CPU reference decoders.")
        .subcommand_required(true)
        .subcommand(run::RunArgs::augment_args(Command::new("run").about("Run a flowgraph file, with live throughput and BER, and a summary at the end.")))
        .subcommand(ber)
        .subcommand(bench)
        .subcommand(plot::PlotArgs::augment_args(Command::new("plot").about("Draw error-rate curves (the JSON files of `ber --json`) as one SVG or PNG picture.")))
        .subcommand(Command::new("info").about("List the GPUs, their limits, the CUDA driver and the kernel cache, or say why there is no GPU."))
}

/// The family command `m` names under `ber` or `bench`.
fn family_of(m: &ArgMatches) -> anyhow::Result<(&'static FamilyCli, &ArgMatches)> {
    let (name, sub) = m.subcommand().ok_or_else(|| anyhow::anyhow!("name a code family"))?;
    let f = FAMILIES.iter().find(|f| f.family.name == name).ok_or_else(|| anyhow::anyhow!("no code family '{name}'"))?;
    Ok((f, sub))
}

fn dispatch(m: &ArgMatches) -> anyhow::Result<bool> {
    match m.subcommand() {
        Some(("run", sub)) => run::run(run::RunArgs::from_arg_matches(sub)?),
        Some(("ber", sub)) => {
            let (f, m) = family_of(sub)?;
            ber::ber(f.family, m)
        }
        Some(("bench", sub)) => {
            let (f, m) = family_of(sub)?;
            let args = BenchArgs::from_arg_matches(m)?;
            let given = settings::given(m, f.family.fields);
            let code = settings::resolve(f.family, given.clone())?;
            args.start_figures()?;
            interrupt::install(interrupt::OnSignal::Quit);
            let done = (f.bench)(code.as_ref(), &given, &args);
            let rows = crate::figures::finish();
            if let (Ok(()), Some(path)) = (&done, &args.json) {
                match rows.len() {
                    0 => println!("no row was measured: {} not written", path.display()),
                    n => println!("{} written to {}", crate::codes::words::count_of(n as u64, "row"), path.display()),
                }
            }
            done.map(|()| false)
        }
        Some(("plot", sub)) => plot::plot(&plot::PlotArgs::from_arg_matches(sub)?).map(|()| false),
        Some(("info", _)) => info::info().map(|()| false),
        _ => anyhow::bail!("name a command: run, ber, bench, plot or info"),
    }
}

/// The `gpufec` command: parse the command line, run, and turn the outcome
/// into an exit status (0; 1 with one `error: ...` line; 2 for a command line
/// the parser rejects; 130 after Ctrl-C and 143 after SIGTERM, with the summary
/// of what was counted, or for `bench` the rows measured so far).
///
/// Call it first thing in a program's `main`, before any other thread
/// starts: it may set `TMPDIR` (see `buffers_in_shared_memory`).
pub fn main() -> ExitCode {
    buffers_in_shared_memory();
    let matches = command().get_matches();
    match dispatch(&matches) {
        Ok(false) => ExitCode::SUCCESS,
        Ok(true) => ExitCode::from(interrupt::exit_status()),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_is_well_formed_and_lists_every_family() {
        command().debug_assert();
        for f in crate::flowgraph::family::families() {
            assert!(FAMILIES.iter().any(|c| std::ptr::eq(c.family, f)), "family {} has no command line", f.name);
        }
    }
}
