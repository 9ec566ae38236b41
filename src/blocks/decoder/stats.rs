//! The live counters of a decoder block, for the runner's summary.

use crate::codes::decode::UnitReport;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// What a decoder block decoded so far, readable from any thread while the
/// flowgraph runs and after it ended.
#[derive(Debug)]
pub struct DecoderStats {
    units: AtomicU64,
    blocks: AtomicU64,
    bits: AtomicU64,
    iterations: AtomicU64,
    checked: AtomicU64,
    failed: AtomicU64,
    batches: AtomicU64,
    direct: AtomicU64,
    submit_ns: AtomicU64,
    collect_ns: AtomicU64,
    drain_ns: AtomicU64,
    /// Batches handed over and not yet collected.
    in_flight: AtomicU64,
    /// Time with a batch in flight, ended stretches; the current one runs
    /// from `occupied_since` (ns after `born`, plus one: 0 while none is).
    occupied_ns: AtomicU64,
    occupied_since: AtomicU64,
    born: Instant,
    /// Per device of a decoder over several: (device, batches, units).
    dealt: Mutex<Vec<(usize, u64, u64)>>,
}

impl Default for DecoderStats {
    fn default() -> Self {
        let zero = AtomicU64::default;
        Self {
            units: zero(),
            blocks: zero(),
            bits: zero(),
            iterations: zero(),
            checked: zero(),
            failed: zero(),
            batches: zero(),
            direct: zero(),
            submit_ns: zero(),
            collect_ns: zero(),
            drain_ns: zero(),
            in_flight: zero(),
            occupied_ns: zero(),
            occupied_since: zero(),
            born: Instant::now(),
            dealt: Mutex::default(),
        }
    }
}

/// A snapshot of [`DecoderStats`].
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DecoderCounts {
    /// Units decoded.
    pub units: u64,
    /// Code blocks they held (more than `units` for transport blocks).
    pub blocks: u64,
    /// Bits written.
    pub bits: u64,
    /// Decoder iterations over all units (0 for a decoder that does not iterate).
    pub iterations: u64,
    /// Units whose code has a check (a CRC) that was evaluated.
    pub checked: u64,
    /// Of those, units whose check failed.
    pub failed: u64,
    /// Batches submitted.
    pub batches: u64,
    /// Of those, batches whose items went to the decoder where they lay in
    /// the block's input buffer (a GPU decoder's copy engine read them there).
    pub direct: u64,
    /// Seconds the block spent handing batches to the decoder (a GPU
    /// decoder's host staging, a CPU decoder's whole work).
    pub submit_s: f64,
    /// Seconds it spent waiting for and taking back results.
    pub collect_s: f64,
    /// Seconds it spent writing results to its output (packing bits too).
    pub drain_s: f64,
    /// Batches handed to the decoder and not yet collected, now.
    pub in_flight: u64,
    /// Seconds with at least one batch in flight: for a GPU decoder, time in
    /// which the device had a batch to copy, decode or hand back.
    pub occupied_s: f64,
}

impl DecoderCounts {
    /// Mean iterations per code block, `None` for a decoder that does not iterate.
    pub fn mean_iterations(&self) -> Option<f64> {
        (self.iterations > 0 && self.blocks > 0).then(|| self.iterations as f64 / self.blocks as f64)
    }
}

impl DecoderStats {
    /// Count one unit of which `bits` bits were written.
    pub(crate) fn add(&self, r: &UnitReport, bits: usize) {
        self.units.fetch_add(1, Ordering::Relaxed);
        self.blocks.fetch_add(u64::from(r.blocks), Ordering::Relaxed);
        self.bits.fetch_add(bits as u64, Ordering::Relaxed);
        self.iterations.fetch_add(r.iterations as u64, Ordering::Relaxed);
        if let Some(ok) = r.check {
            self.checked.fetch_add(1, Ordering::Relaxed);
            self.failed.fetch_add(u64::from(!ok), Ordering::Relaxed);
        }
    }

    /// Count one batch handed to the decoder in `took`, `direct`ly from the input buffer or not.
    pub(crate) fn add_submit(&self, took: std::time::Duration, direct: bool) {
        self.batches.fetch_add(1, Ordering::Relaxed);
        self.direct.fetch_add(u64::from(direct), Ordering::Relaxed);
        self.submit_ns.fetch_add(took.as_nanos() as u64, Ordering::Relaxed);
    }

    /// Count `took` spent waiting for the decoder to read a batch handed over.
    pub(crate) fn add_submit_wait(&self, took: std::time::Duration) {
        self.submit_ns.fetch_add(took.as_nanos() as u64, Ordering::Relaxed);
    }

    /// Count `took` spent writing results out.
    pub(crate) fn add_drain(&self, took: std::time::Duration) {
        self.drain_ns.fetch_add(took.as_nanos() as u64, Ordering::Relaxed);
    }

    /// Count `took` spent waiting for a batch's results.
    pub(crate) fn add_collect(&self, took: std::time::Duration) {
        self.collect_ns.fetch_add(took.as_nanos() as u64, Ordering::Relaxed);
    }

    /// Note that `n` batches are in flight now (the block's own thread
    /// calls this, after each hand-over and collection).
    pub(crate) fn note_in_flight(&self, n: usize) {
        // Plus one: 0 stands for "no batch in flight".
        let now = self.born.elapsed().as_nanos() as u64 + 1;
        let was = self.in_flight.swap(n as u64, Ordering::Relaxed);
        if was == 0 && n > 0 {
            self.occupied_since.store(now, Ordering::Relaxed);
        } else if was > 0 && n == 0 {
            let since = self.occupied_since.swap(0, Ordering::Relaxed);
            self.occupied_ns.fetch_add(now.saturating_sub(since), Ordering::Relaxed);
        }
    }

    /// Note what each device of a decoder over several decoded so far.
    pub(crate) fn note_dealt(&self, dealt: Vec<(usize, u64, u64)>) {
        if !dealt.is_empty() {
            *self.dealt.lock().unwrap_or_else(|e| e.into_inner()) = dealt;
        }
    }

    /// What each device decoded, (device, batches, units); empty for a
    /// decoder on one device or the CPU.
    pub fn dealt(&self) -> Vec<(usize, u64, u64)> {
        self.dealt.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The counts now.
    pub fn counts(&self) -> DecoderCounts {
        DecoderCounts {
            units: self.units.load(Ordering::Relaxed),
            blocks: self.blocks.load(Ordering::Relaxed),
            bits: self.bits.load(Ordering::Relaxed),
            iterations: self.iterations.load(Ordering::Relaxed),
            checked: self.checked.load(Ordering::Relaxed),
            failed: self.failed.load(Ordering::Relaxed),
            batches: self.batches.load(Ordering::Relaxed),
            direct: self.direct.load(Ordering::Relaxed),
            submit_s: self.submit_ns.load(Ordering::Relaxed) as f64 * 1e-9,
            collect_s: self.collect_ns.load(Ordering::Relaxed) as f64 * 1e-9,
            drain_s: self.drain_ns.load(Ordering::Relaxed) as f64 * 1e-9,
            in_flight: self.in_flight.load(Ordering::Relaxed),
            occupied_s: self.occupied().as_secs_f64(),
        }
    }

    /// Time with a batch in flight so far, the stretch under way included.
    fn occupied(&self) -> std::time::Duration {
        let since = self.occupied_since.load(Ordering::Relaxed);
        let now = self.born.elapsed().as_nanos() as u64 + 1;
        let current = if since > 0 { now.saturating_sub(since) } else { 0 };
        std::time::Duration::from_nanos(self.occupied_ns.load(Ordering::Relaxed) + current)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn occupied_time_counts_only_stretches_with_a_batch_in_flight() {
        let s = DecoderStats::default();
        std::thread::sleep(std::time::Duration::from_millis(30));
        assert_eq!(s.counts().occupied_s, 0.0);
        s.note_in_flight(1);
        s.note_in_flight(2);
        std::thread::sleep(std::time::Duration::from_millis(40));
        let live = s.counts();
        assert_eq!(live.in_flight, 2);
        assert!(live.occupied_s >= 0.04, "the stretch under way counts: {live:?}");
        s.note_in_flight(0);
        let ended = s.counts().occupied_s;
        std::thread::sleep(std::time::Duration::from_millis(30));
        assert_eq!(s.counts().occupied_s, ended, "no batch in flight, no time counted");
    }
}
