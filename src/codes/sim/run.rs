//! Running one point: chunk sizes, the exact stop, progress and cancellation.

use super::point::{Ended, Point, StopRule};
use super::{Link, Tally};
use crate::codes::error::CodeResult;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How a running point stands.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// The counts so far.
    pub point: Point,
    /// Time since the point started.
    pub elapsed: Duration,
    /// Estimated time to whichever limit comes first, once it can be told.
    pub eta: Option<Duration>,
}

/// Seconds of work one chunk aims at: short enough that progress and Ctrl-C
/// are answered promptly, long enough that a chunk keeps a decoder busy.
const CHUNK_SECONDS: f64 = 0.25;
/// Bits of the first chunk, before the link's speed is known.
const FIRST_CHUNK: u64 = 1 << 16;

/// Simulate one point of `link` at `x`, bits and noise from `seed`, until
/// `stop` says (or `cancel` is set: the point then ends with what it counted,
/// marked [`Ended::Interrupted`]). `on_progress` is called after the first
/// chunk (a log shows at once that the point runs) and then about every
/// `every`, with the counts so far.
pub fn run_point(
    link: &mut dyn Link,
    x: f64,
    seed: u64,
    stop: StopRule,
    cancel: &AtomicBool,
    every: Duration,
    mut on_progress: impl FnMut(&Progress),
) -> CodeResult<Point> {
    stop.validate().map_err(|(_, e)| e)?;
    link.start(x, seed)?;
    let mut tally = Tally::new(x, link.frame_bits()).stopping(stop).counting_symbols(link.symbol_bits());
    let started = Instant::now();
    let mut reported: Option<Instant> = None;
    let mut chunk = FIRST_CHUNK;
    let mut sent = 0u64;
    while !tally.done() {
        if cancel.load(Ordering::Relaxed) {
            return Ok(tally.finish(Ended::Interrupted, started.elapsed().as_secs_f64()));
        }
        let p = *tally.point();
        let mut want = chunk.min(stop.max_bits - sent);
        if p.bit_errors > 0 {
            // Near the error limit, send little more than it should take.
            let bits_per_error = p.bits as f64 / p.bit_errors as f64;
            let needed = ((stop.max_errors - p.bit_errors.min(stop.max_errors)) as f64 * bits_per_error * 1.2) as u64;
            want = want.min(needed.max(link.frame_bits() as u64).max(4096));
        }
        let last = sent + want >= stop.max_bits;
        let t = Instant::now();
        link.run(want, last, &mut tally)?;
        sent += want;
        // Aim the next chunk at CHUNK_SECONDS of work.
        let secs = t.elapsed().as_secs_f64().max(1e-6);
        chunk = ((want as f64 * CHUNK_SECONDS / secs) as u64).clamp(FIRST_CHUNK, link.chunk_limit().max(FIRST_CHUNK));
        if last && !tally.done() {
            // Every bit was sent and flushed: whatever was counted is the point.
            break;
        }
        if reported.is_none_or(|r| r.elapsed() >= every) {
            reported = Some(Instant::now());
            on_progress(&Progress { point: *tally.point(), elapsed: started.elapsed(), eta: eta(tally.point(), stop, started.elapsed()) });
        }
    }
    Ok(tally.finish(Ended::MaxBits, started.elapsed().as_secs_f64()))
}

/// Time to whichever limit comes first at the pace so far.
fn eta(p: &Point, stop: StopRule, elapsed: Duration) -> Option<Duration> {
    if p.bits == 0 {
        return None;
    }
    let secs = elapsed.as_secs_f64();
    let by_bits = (stop.max_bits - p.bits.min(stop.max_bits)) as f64 * secs / p.bits as f64;
    let by_errors = match p.bit_errors {
        0 => f64::INFINITY,
        e => (stop.max_errors - e.min(stop.max_errors)) as f64 * secs / e as f64,
    };
    Some(Duration::from_secs_f64(by_bits.min(by_errors).min(1e9)))
}
