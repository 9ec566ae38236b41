//! `gpufec run FILE`: build a flowgraph file, run it with live figures, and
//! summarise what it counted.

use super::curve::{counts_text, partial_text, sci};
use crate::codes::sim::Point;
use crate::codes::words::count_of;
use super::interrupt;
use crate::flowgraph::{BuildOptions, FlowgraphFile, Override, Progress, Summary};
use crate::gpu::Backend;
use clap::Args;
use super::count::count_usize;
use super::dashboard::{self, Dashboard};
use super::status_line::StatusLine;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use crate::flowgraph::StreamType;
use std::time::Duration;

/// Most executor threads `--executors` may ask for: the blocks' work is on
/// other threads, and 1024 of them failed to spawn under a 4 GiB address
/// space limit (FutureSDR then panics).
const MAX_EXECUTORS: usize = 64;

/// `gpufec run`.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// The flowgraph file (TOML), e.g. flowgraphs/viterbi_awgn.toml.
    file: PathBuf,
    /// Override a block parameter or a variable, e.g. --set awgn.ebn0_db=3 --set vars.rate=3/4.
    #[arg(long = "set", value_name = "BLOCK.PARAM=VALUE")]
    set: Vec<Override>,
    /// Backend of every decoder block: auto (the GPU when one is usable), cpu or gpu.
    #[arg(long)]
    backend: Option<Backend>,
    /// GPUs of every decoder block, overriding their gpu_devices: indices
    /// (0,1) or all; a decoder per device, batches to the least busy.
    #[arg(long, value_parser = crate::gpu::DeviceList::parse)]
    gpu_devices: Option<crate::gpu::DeviceList>,
    /// At the end, print each block's share of the busy time, its work calls
    /// and its items per second: which block sets the pace.
    #[arg(long)]
    profile: bool,
    /// Threads that run the blocks (0: a quarter of the cores, 1 to 4). The
    /// heavy work runs on other threads; fewer executors contend less for
    /// the stream buffers.
    #[arg(long, default_value = "0", value_parser = count_usize)]
    executors: usize,
    /// Serve a live dashboard of the run (page and JSON at /api/dashboard,
    /// beside FutureSDR's control port at /api/fg/) at ADDR: IP:PORT or a
    /// port; without ADDR, 127.0.0.1 on a free port. The run prints the URL.
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "127.0.0.1:0")]
    dashboard: Option<String>,
    /// Let --dashboard listen on an address that is not loopback, where
    /// anyone who reaches it sees the run and can call into the flowgraph
    /// through FutureSDR's control port.
    #[arg(long, requires = "dashboard")]
    dashboard_public: bool,
    /// No live progress on stderr: only what the run prints on stdout (its
    /// header, the dashboard's URL, the summary) and errors.
    #[arg(long, short)]
    quiet: bool,
    /// Also write the run's summary (every probe, BER sink, decoder, file
    /// and, with --profile, block) as JSON to this file when the run ends.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

/// Run `gpufec run`; whether Ctrl-C ended it.
pub fn run(a: RunArgs) -> anyhow::Result<bool> {
    anyhow::ensure!(a.executors <= MAX_EXECUTORS, "--executors {}: at most {MAX_EXECUTORS}", a.executors);
    let mut dashboard = a.dashboard.as_deref().map(|addr| Dashboard::open(addr, a.dashboard_public)).transpose()?;
    let mut file = FlowgraphFile::load(&a.file)?;
    for o in &a.set {
        file.apply(o)?;
    }
    // The dashboard shows each block's share of the busy time.
    let profile = a.profile || dashboard.is_some();
    if let Some(path) = &a.json {
        // Refused now, not after the run.
        crate::files::check_writable(path).map_err(|e| anyhow::anyhow!("--json: {e}"))?;
    }
    let also_writes = a.json.iter().map(|path| crate::files::Use::new("--json", path)).collect();
    let built = crate::flowgraph::build(&file, &BuildOptions { backend: a.backend, profile, also_writes, gpu_devices: a.gpu_devices.clone() })?;
    let title = format!("{}{}", file.label, file.description.as_ref().map(|d| format!(" ({d})")).unwrap_or_default());
    println!("flowgraph: {title}");
    let codes = built.codes.iter().map(|(name, code)| format!("code '{name}': {} {}", code.family(), code.describe()));
    let decoders = built.decoders.iter().map(|d| format!("decoder '{}': backend {d}; {}", d.block, d.describe));
    let about: Vec<String> = codes.chain(built.placements.iter().cloned()).chain(decoders).collect();
    for line in &about {
        println!("{line}");
    }
    let control = dashboard.as_mut().map(|d| d.serve(title.clone(), about.clone()));
    if let Some(d) = &dashboard {
        println!("dashboard: {} (values: {}api/dashboard, FutureSDR's control port: {}api/fg/)", d.url(), d.url(), d.url());
    }
    let status = StatusLine::new(a.quiet);
    let line_every = status.tick(Duration::from_millis(250), Duration::from_secs(1));
    let tick = if dashboard.is_some() { line_every.min(dashboard::TICK) } else { line_every };
    let ticks_per_line = (line_every.as_millis() / tick.as_millis()).max(1);
    let mut ticks = 0;
    interrupt::install(interrupt::OnSignal::Report);
    let summary = crate::flowgraph::run_on(a.executors, control, built, tick, interrupt::flag(), |p| {
        if ticks % ticks_per_line == 0 {
            status.show(&progress_line(p));
        }
        ticks += 1;
        if let Some(d) = &dashboard {
            d.record(p);
        }
    });
    status.clear();
    let summary = summary?;
    if a.profile {
        print_profile(&summary);
    }
    print_summary(&summary);
    if let Some(path) = &a.json {
        let text = serde_json::to_string_pretty(&super::run_json::summary_json(&title, &about, &summary))? + "\n";
        crate::files::replace(path, text.as_bytes()).map_err(|e| anyhow::anyhow!("--json: {e}"))?;
    }
    Ok(summary.interrupted)
}

fn print_summary(summary: &Summary) {
    for (name, t) in &summary.throughput {
        println!("probe '{name}': {} bits in {:.3} s, {} Mb/s", t.items, t.seconds, mbps(t.per_second()));
    }
    for (name, c) in &summary.ber {
        println!("ber '{name}': {}", counts_text(&Point::from(*c)));
    }
    for d in &summary.decoders {
        let c = d.stats.counts();
        let mut line = format!("decoder '{}': {}, {} bits", d.block, count_of(c.units, "unit"), c.bits);
        if let Some(it) = c.mean_iterations() {
            line += &format!(", {it:.2} iterations per code block");
            if c.blocks > c.units {
                line += &format!(" ({} in all)", count_of(c.blocks, "code block"));
            }
        }
        if c.checked > 0 {
            line += &format!(", {} of {} checks failed", c.failed, c.checked);
        }
        if c.batches > 0 {
            line += &format!("; {}", count_of(c.batches, "batch"));
            if c.direct > 0 {
                line += &format!(" ({} copied to the GPU from where they lay)", c.direct);
            }
            line += &format!(", {:.3} s handing them over, {:.3} s waiting for results, {:.3} s writing them out", c.submit_s, c.collect_s, c.drain_s);
        }
        let dealt = d.stats.dealt();
        if !dealt.is_empty() {
            let each: Vec<String> = dealt.iter().map(|(dev, b, u)| format!("GPU {dev} {} ({})", count_of(*b, "batch"), count_of(*u, "unit"))).collect();
            line += &format!("; per device: {}", each.join(", "));
        }
        println!("{line}");
    }
    for r in &summary.recordings {
        println!("recording '{}': {r}", r.block);
    }
    for (name, counts) in &summary.frames {
        println!("frames '{name}': {}", counts.line());
    }
    let mut bytes_written = 0;
    for f in &summary.files {
        let (items, bytes) = (f.written.items.load(Ordering::Relaxed), f.written.bytes.load(Ordering::Relaxed));
        bytes_written += bytes;
        let noun = match f.stream {
            StreamType::U8 => "bit",
            StreamType::Packed => "packed byte",
            StreamType::I8 => "i8 item",
            StreamType::F32 => "f32 item",
            StreamType::Cf32 => "complex sample",
        };
        println!("file '{}': {}, {} in {}", f.block, count_of(items, noun), count_of(bytes, "byte"), f.path);
    }
    let counts = summary.ber.first().map(|(_, c)| *c).unwrap_or_default();
    let rate = summary.throughput.first().map(|(_, t)| format!("{} Mb/s", mbps(t.per_second())));
    let backends: Vec<String> = summary.decoders.iter().map(|d| d.to_string()).collect();
    let ended = if summary.interrupted {
        " (interrupted)"
    } else if summary.stopped_at_target {
        " (stopped at the BER sink's target)"
    } else {
        ""
    };
    if summary.ber.is_empty() {
        // No reference to count errors against: say what was decoded, not "bits 0, BER n/a".
        let decoded: u64 = summary.decoders.iter().map(|d| d.stats.counts().bits).sum();
        if summary.decoders.is_empty() {
            let wrote = match summary.files.len() {
                0 => "nothing written".to_string(),
                n => format!("{} written to {}", count_of(bytes_written, "byte"), count_of(n as u64, "file")),
            };
            println!("summary: no decoder and no BER sink, {wrote}, wall {:.2} s{ended}", summary.wall.as_secs_f64());
            return;
        }
        println!(
            "summary: {decoded} bits decoded (no BER sink), information {}, wall {:.2} s, backend {}{ended}",
            rate.unwrap_or_else(|| "n/a (no probe)".into()),
            summary.wall.as_secs_f64(),
            if backends.is_empty() { "n/a (no decoder)".into() } else { backends.join(", ") },
        );
        return;
    }
    println!(
        "summary: bits {}, errors {}, BER {}, FER {}{}, information {}, wall {:.2} s, backend {}{ended}",
        counts.bits,
        counts.bit_errors,
        sci(counts.ber()),
        sci(counts.fer()),
        partial_text(counts.partial_bits),
        rate.unwrap_or_else(|| "n/a (no probe)".into()),
        summary.wall.as_secs_f64(),
        if backends.is_empty() { "n/a (no decoder)".into() } else { backends.join(", ") },
    );
}

/// The per-block table of `--profile`: busy time is the time in a block's
/// work calls (including work it hands to other threads and waits for), so
/// items per busy second is what the block could sustain alone, and the block
/// with the largest share sets the pace of the chain.
fn print_profile(summary: &Summary) {
    let total: f64 = summary.loads.iter().filter_map(|l| l.load.as_ref()).map(|l| l.busy().as_secs_f64()).sum();
    let wall = summary.wall.as_secs_f64();
    println!("profile: busy time in each block's work calls, wall {wall:.2} s");
    println!(
        "{:<14} {:<16} {:>9} {:>7} {:>9} {:>9} {:>13} {:>12} {:>12}",
        "block", "type", "busy s", "share", "cpu s", "calls", "items", "M/s busy", "M/s wall"
    );
    for l in &summary.loads {
        let Some(load) = &l.load else {
            println!("{:<14} {:<16} passes its stream through unchanged: no block, connected past", l.block, l.kind);
            continue;
        };
        let (busy, items) = (load.busy().as_secs_f64(), load.items());
        let share = if total > 0.0 { 100.0 * busy / total } else { 0.0 };
        let rate = |s: f64| if s > 0.0 { format!("{:.1}", items as f64 / s / 1e6) } else { "n/a".into() };
        println!(
            "{:<14} {:<16} {:>9.3} {:>6.1}% {:>9.3} {:>9} {:>13} {:>12} {:>12}",
            l.block,
            l.kind,
            busy,
            share,
            load.cpu().as_secs_f64(),
            load.calls(),
            items,
            rate(busy),
            rate(wall)
        );
    }
}

/// Items per second as Mb/s, or `n/a` before any passed.
fn mbps(per_second: f64) -> String {
    if per_second.is_finite() { format!("{:.2}", per_second / 1e6) } else { "n/a".into() }
}

/// The status line: the first BER sink and the first probe.
fn progress_line(p: &Progress) -> String {
    let mut line = format!("{:7.1} s", p.elapsed.as_secs_f64());
    if let Some((_, c)) = p.ber.first() {
        line += &format!("  bits {}  errors {}  BER {}  FER {}", c.bits, c.bit_errors, sci(c.ber()), sci(c.fer()));
    }
    if let Some((_, t)) = p.throughput.first() {
        line += &format!("  {} Mb/s", mbps(t.per_second()));
    }
    line
}
