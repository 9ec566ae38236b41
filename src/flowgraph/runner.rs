//! Running a built flowgraph while watching its live figures.

use super::assembly::{Built, DecoderNote, FileNote, LoadNote, RecordingNote};
use crate::blocks::{BerCounters, BerCounts, ControlPort, DecoderCounts, FrameCounts, Throughput, ThroughputMeter, runtime_on};
use std::sync::Arc;
use futuresdr::runtime::Runtime;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The live figures of a running flowgraph: what the status line and the
/// dashboard show, read once per tick.
#[derive(Debug, Clone)]
pub struct Progress {
    /// Time since the run started.
    pub elapsed: Duration,
    /// Counts of every BER sink, by block name.
    pub ber: Vec<(String, BerCounts)>,
    /// Reading of every throughput probe, by block name.
    pub throughput: Vec<(String, Throughput)>,
    /// Every decoder block's name, backend and counts.
    pub decoders: Vec<(String, &'static str, DecoderCounts)>,
    /// Every block's name, type and busy time, sources first, when the
    /// flowgraph was built to be profiled (`None` for a block that is a wire).
    pub loads: Vec<(String, &'static str, Option<Duration>)>,
}

impl Progress {
    fn read(elapsed: Duration, ber_sinks: &[(String, Arc<BerCounters>)], probes: &[(String, Arc<ThroughputMeter>)], decoders: &[DecoderNote], loads: &[LoadNote]) -> Self {
        Self {
            elapsed,
            ber: ber_sinks.iter().map(|(n, c)| (n.clone(), c.counts())).collect(),
            throughput: probes.iter().map(|(n, m)| (n.clone(), m.reading())).collect(),
            decoders: decoders.iter().map(|d| (d.block.clone(), d.backend, d.stats.counts())).collect(),
            loads: loads.iter().map(|l| (l.block.clone(), l.kind, l.load.as_ref().map(|l| l.busy()))).collect(),
        }
    }
}

/// What a finished run measured.
#[derive(Debug, Clone)]
pub struct Summary {
    /// Final counts of every BER sink, by block name.
    pub ber: Vec<(String, BerCounts)>,
    /// Whether a BER sink stopped the run at its target.
    pub stopped_at_target: bool,
    /// Whether the caller's cancel flag (Ctrl-C) stopped it; the counts are
    /// what it had by then.
    pub interrupted: bool,
    /// Final reading of every throughput probe, by block name.
    pub throughput: Vec<(String, Throughput)>,
    /// The decoders and their backends.
    pub decoders: Vec<DecoderNote>,
    /// The file sinks and what they wrote.
    pub files: Vec<FileNote>,
    /// The recordings the sources read.
    pub recordings: Vec<RecordingNote>,
    /// The framing blocks' counts, by block name.
    pub frames: Vec<(String, Arc<FrameCounts>)>,
    /// Every block's load (busy time, calls, items), sources first, when the
    /// flowgraph was built to be profiled.
    pub loads: Vec<LoadNote>,
    /// Wall-clock time of the run.
    pub wall: Duration,
}

/// Run `built` to its end, calling `on_tick` with the live figures every
/// `tick` meanwhile. When `cancel` is set the flowgraph is told to stop and
/// the summary holds what was counted until then. A block's error fails the
/// run with that block's message.
pub fn run(built: Built, tick: Duration, cancel: &AtomicBool, on_tick: impl FnMut(&Progress)) -> anyhow::Result<Summary> {
    run_on(0, None, built, tick, cancel, on_tick)
}

/// [`run`] with `executors` FutureSDR executor threads (0:
/// [`default_executors`](crate::blocks::default_executors)), and FutureSDR's
/// control port where `control` says.
pub fn run_on(
    executors: usize,
    control: Option<ControlPort>,
    built: Built,
    tick: Duration,
    cancel: &AtomicBool,
    mut on_tick: impl FnMut(&Progress),
) -> anyhow::Result<Summary> {
    let Built { flowgraph, errors, ber_sinks, probes, decoders, placements: _, files, recordings, frames, loads, codes: _ } = built;
    let progress = |started: Instant| Progress::read(started.elapsed(), &ber_sinks, &probes, &decoders, &loads);
    let started = Instant::now();
    let (handle_tx, handle_rx) = std::sync::mpsc::channel();
    let worker = std::thread::spawn(move || {
        let served = control.as_ref().map(|c| c.addr);
        let rt = runtime_on(executors, control);
        if let Some(addr) = served {
            ControlPort::wait_until_served(addr).map_err(|e| e.to_string())?;
        }
        let (task, handle) = rt.start(flowgraph).map_err(|e| e.to_string())?.split();
        let _ = handle_tx.send(handle);
        Runtime::block_on(task).map(drop).map_err(|e| e.to_string())
    });
    let mut next_tick = started + tick;
    let (mut handle, mut interrupted_at, mut stop_sent) = (None, None, false);
    while !worker.is_finished() {
        std::thread::sleep(Duration::from_millis(20));
        if handle.is_none() {
            handle = handle_rx.try_recv().ok();
        }
        if interrupted_at.is_none() && cancel.load(Ordering::Relaxed) {
            interrupted_at = Some(Instant::now());
        }
        if let (Some(_), false, Some(h)) = (interrupted_at, stop_sent, &handle) {
            // The run ends as the blocks finish; a failure to ask only means it already ended.
            let _ = Runtime::block_on(h.stop());
            stop_sent = true;
        }
        if interrupted_at.is_some_and(|t| t.elapsed() >= STOP_GRACE) {
            // A block waits in a system call (a FIFO's open with nobody at
            // the other end, which also holds up the start; a read of a
            // silent pipe) and cannot hear the stop: report what was
            // counted, and leave it to the process's end.
            eprintln!("a block did not stop within {} s (it waits on a file or pipe): reporting what was counted", STOP_GRACE.as_secs());
            return Ok(summary(&ber_sinks, &probes, decoders, files, recordings, frames, loads, started.elapsed(), true));
        }
        if Instant::now() >= next_tick {
            on_tick(&progress(started));
            next_tick += tick;
        }
    }
    let wall = started.elapsed();
    let outcome = worker.join().map_err(|_| anyhow::anyhow!("the flowgraph thread panicked"))?;
    if let Err(e) = outcome {
        anyhow::bail!(errors.message().unwrap_or(e));
    }
    // A block that ended its stream normally but found it wrong (cut inside a
    // unit) has let the others write what came before: the run fails now.
    if let Some(e) = errors.message() {
        anyhow::bail!(e);
    }
    Ok(summary(&ber_sinks, &probes, decoders, files, recordings, frames, loads, wall, interrupted_at.is_some()))
}

/// How long an interrupted run may take to stop before it is reported as it stands.
const STOP_GRACE: Duration = Duration::from_secs(3);

#[allow(clippy::too_many_arguments)]
fn summary(
    ber_sinks: &[(String, Arc<BerCounters>)],
    probes: &[(String, Arc<ThroughputMeter>)],
    decoders: Vec<DecoderNote>,
    files: Vec<FileNote>,
    recordings: Vec<RecordingNote>,
    frames: Vec<(String, Arc<FrameCounts>)>,
    loads: Vec<LoadNote>,
    wall: Duration,
    interrupted: bool,
) -> Summary {
    let last = Progress::read(wall, ber_sinks, probes, &[], &[]);
    Summary {
        stopped_at_target: ber_sinks.iter().any(|(_, c)| c.stopped()),
        interrupted,
        ber: last.ber,
        throughput: last.throughput,
        decoders,
        files,
        recordings,
        frames,
        loads,
        wall,
    }
}
