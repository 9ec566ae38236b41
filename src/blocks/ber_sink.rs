//! Bit and frame error counting sink.

use super::{FirstError, Reporting};
use crate::codes::sim::{Point, StopRule, Tally};
use futuresdr::runtime::dev::prelude::*;
use crate::codes::threads::par_copy;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// When a [`BerSink`] stops the run; `None` means no limit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BerStop {
    /// Stop after this many compared bits.
    pub max_bits: Option<u64>,
    /// Stop once this many bit errors are counted.
    pub max_errors: Option<u64>,
}

impl BerStop {
    /// Check that each limit given can be reached after counting something;
    /// an error names the limit at fault (`max_bits`, `max_errors`).
    pub fn validate(&self) -> Result<(), (&'static str, &'static str)> {
        if self.max_bits == Some(0) {
            return Err(("max_bits", "0 would count nothing; give at least 1 or leave it out"));
        }
        if self.max_errors == Some(0) {
            return Err(("max_errors", "0 would stop before the first bit; give at least 1 or leave it out"));
        }
        Ok(())
    }
}

/// Bit and frame counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BerCounts {
    /// Bits compared.
    pub bits: u64,
    /// Bits in error.
    pub bit_errors: u64,
    /// Frames compared.
    pub frames: u64,
    /// Frames with at least one bit error.
    pub frame_errors: u64,
    /// Bits of a last frame cut short: in `bits`, not in `frames`.
    pub partial_bits: u64,
}

impl BerCounts {
    /// Bit error rate; NaN when nothing was compared (no result from nothing).
    pub fn ber(&self) -> f64 {
        Point::from(*self).ber()
    }

    /// Frame error rate; NaN when nothing was compared.
    pub fn fer(&self) -> f64 {
        Point::from(*self).fer()
    }
}

impl From<BerCounts> for Point {
    fn from(c: BerCounts) -> Point {
        Point { bits: c.bits, bit_errors: c.bit_errors, frames: c.frames, frame_errors: c.frame_errors, partial_bits: c.partial_bits, ..Point::default() }
    }
}

/// The live counters of a [`BerSink`], readable from any thread while the
/// flowgraph runs and after it ended.
#[derive(Debug, Default)]
pub struct BerCounters {
    bits: AtomicU64,
    bit_errors: AtomicU64,
    frames: AtomicU64,
    frame_errors: AtomicU64,
    partial_bits: AtomicU64,
    stopped: AtomicBool,
}

impl BerCounters {
    /// The counts now.
    pub fn counts(&self) -> BerCounts {
        BerCounts {
            bits: self.bits.load(Ordering::Relaxed),
            bit_errors: self.bit_errors.load(Ordering::Relaxed),
            frames: self.frames.load(Ordering::Relaxed),
            frame_errors: self.frame_errors.load(Ordering::Relaxed),
            partial_bits: self.partial_bits.load(Ordering::Relaxed),
        }
    }

    /// Whether the sink stopped the run because a target was reached.
    pub fn stopped(&self) -> bool {
        self.stopped.load(Ordering::Relaxed)
    }

    fn publish(&self, tally: &Tally) {
        let p = tally.point();
        self.bits.store(p.bits, Ordering::Relaxed);
        self.bit_errors.store(p.bit_errors, Ordering::Relaxed);
        self.frames.store(p.frames, Ordering::Relaxed);
        self.frame_errors.store(p.frame_errors, Ordering::Relaxed);
        self.partial_bits.store(p.partial_bits, Ordering::Relaxed);
    }
}

/// Compares decoded bits with the reference bits: counts bits, bit errors,
/// frames and frame errors ([`Tally`], as the link simulator does), and stops
/// the run when a [`BerStop`] target is reached: at exactly `max_bits`, or at
/// the end of the frame in which the `max_errors`-th error fell.
///
/// Reference bits are taken as they come and held until the decoded ones
/// arrive, so the decoder's latency never stalls the source. When both streams
/// end, they must have the same length: a difference means bits were lost or
/// invented on the way, and fails the flowgraph.
///
/// # Stream Inputs
///
/// `reference`: the transmitted information bits (`u8` 0/1).
///
/// `decoded`: the decoded information bits (`u8` 0/1).
///
/// # Stream Outputs
///
/// None.
///
/// # Usage
/// ```
/// use gpufec::blocks::{BerSink, BerStop};
/// let sink = BerSink::new(256, BerStop { max_bits: None, max_errors: Some(100) })?;
/// let live = sink.counters();   // read it from another thread while the flowgraph runs
/// assert_eq!(live.counts().bits, 0);
/// assert!(BerSink::new(256, BerStop { max_bits: Some(0), max_errors: None }).is_err());
/// # Ok::<(), anyhow::Error>(())
/// ```
#[derive(Block)]
pub struct BerSink {
    tally: Tally,
    counters: Arc<BerCounters>,
    waiting: Aside,
    errors: FirstError,
    #[input]
    reference: DefaultCpuReader<u8>,
    #[input]
    decoded: DefaultCpuReader<u8>,
}

impl BerSink {
    /// Sink counting frames of `frame_bits` bits (at least 1), stopping as
    /// `stop` says (a limit of 0 counts nothing, and is refused).
    pub fn new(frame_bits: usize, stop: BerStop) -> anyhow::Result<Self> {
        anyhow::ensure!(frame_bits > 0, "a frame of 0 bits; frame_bits must be at least 1");
        stop.validate().map_err(|(field, why)| anyhow::anyhow!("{field} = {why}"))?;
        let rule = StopRule { max_bits: stop.max_bits.unwrap_or(u64::MAX), max_errors: stop.max_errors.unwrap_or(u64::MAX) };
        Ok(Self {
            tally: Tally::new(0.0, frame_bits).stopping(rule),
            counters: Arc::default(),
            waiting: Aside::default(),
            errors: FirstError::default(),
            reference: DefaultCpuReader::default(),
            decoded: DefaultCpuReader::default(),
        })
    }

    /// A handle on the live counters.
    pub fn counters(&self) -> Arc<BerCounters> {
        self.counters.clone()
    }

    fn step(&mut self, io: &mut WorkIo) -> anyhow::Result<()> {
        let r = self.reference.slice();
        self.waiting.push(r);
        let taken = r.len();
        self.reference.consume(taken);

        let d = self.decoded.slice();
        let n = d.len().min(self.waiting.len());
        let (front, back) = self.waiting.as_slices();
        let split = n.min(front.len());
        let counted = self.tally.add(&d[..split], &front[..split]) + self.tally.add(&d[split..n], &back[..n - split]);
        let n = if self.tally.done() { counted } else { n };
        let remaining = d.len() - n;
        self.decoded.consume(n);
        self.waiting.consume(n);

        if self.tally.done() {
            self.counters.stopped.store(true, Ordering::Relaxed);
            io.finished = true;
        } else if self.decoded.finished() && self.reference.finished() && self.reference.slice().is_empty() {
            anyhow::ensure!(
                remaining == 0 && self.waiting.is_empty(),
                "the decoded stream has {} bits but the reference has {}: bits were {} on the way",
                self.tally.point().bits + remaining as u64,
                self.tally.point().bits + self.waiting.len() as u64,
                if remaining > 0 { "invented" } else { "lost" }
            );
            io.finished = true;
        }
        if io.finished {
            self.tally.close_frame();
        }
        self.counters.publish(&self.tally);
        Ok(())
    }
}

/// Reference bits set aside until their decoded ones come: a ring that
/// doubles when full, written with parallel copies (a GPU chain sets aside
/// gigabits a second, more than one core copies).
#[derive(Default)]
struct Aside {
    buf: Vec<u8>,
    head: usize,
    len: usize,
}

impl Aside {
    fn len(&self) -> usize {
        self.len
    }

    fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bits in order: the run up to the end of the ring, then the wrapped one.
    fn as_slices(&self) -> (&[u8], &[u8]) {
        let first = (self.buf.len() - self.head).min(self.len);
        (&self.buf[self.head..self.head + first], &self.buf[..self.len - first])
    }

    /// Drop the first `n` bits.
    fn consume(&mut self, n: usize) {
        debug_assert!(n <= self.len);
        self.len -= n;
        self.head = if self.len == 0 { 0 } else { (self.head + n) % self.buf.len() };
    }

    fn push(&mut self, bits: &[u8]) {
        if bits.is_empty() {
            return;
        }
        if self.len + bits.len() > self.buf.len() {
            let mut grown = vec![0u8; (self.len + bits.len()).next_power_of_two().max(2 * self.buf.len())];
            let (a, b) = self.as_slices();
            par_copy(a, &mut grown[..a.len()]);
            par_copy(b, &mut grown[a.len()..a.len() + b.len()]);
            (self.buf, self.head) = (grown, 0);
        }
        let cap = self.buf.len();
        let tail = (self.head + self.len) % cap;
        let first = (cap - tail).min(bits.len());
        par_copy(&bits[..first], &mut self.buf[tail..tail + first]);
        par_copy(&bits[first..], &mut self.buf[..bits.len() - first]);
        self.len += bits.len();
    }
}

impl Reporting for BerSink {
    fn first_error(&mut self) -> &mut FirstError {
        &mut self.errors
    }
}

impl super::Counted for BerSink {
    fn items(&self) -> u64 {
        self.counters.counts().bits
    }
}

#[doc(hidden)]
impl Kernel for BerSink {
    async fn work(&mut self, io: &mut WorkIo, _mo: &mut MessageOutputs, meta: &mut BlockMeta) -> Result<()> {
        let r = self.step(io);
        self.errors.keep(meta, r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::runtime;
    use futuresdr::blocks::VectorSource;
    use futuresdr::runtime::Flowgraph;

    fn run(reference: Vec<u8>, decoded: Vec<u8>, stop: BerStop) -> (Result<BerCounts, String>, bool) {
        let errors = FirstError::default();
        let sink = BerSink::new(10, stop).unwrap().report_to(&errors);
        let counters = sink.counters();
        let mut fg = Flowgraph::new();
        let s = fg.add(sink);
        let r = fg.add(VectorSource::<u8>::new(reference));
        let d = fg.add(VectorSource::<u8>::new(decoded));
        fg.stream(&r, |b| b.output(), &s, |b| b.reference()).unwrap();
        fg.stream(&d, |b| b.output(), &s, |b| b.decoded()).unwrap();
        let result = match runtime().run(fg) {
            Ok(_) => Ok(counters.counts()),
            Err(e) => Err(errors.message().unwrap_or(e.to_string())),
        };
        (result, counters.stopped())
    }

    #[test]
    fn counts_bits_and_frames() {
        let reference = vec![0u8; 95];
        let mut decoded = reference.clone();
        decoded[3] = 1;
        decoded[4] = 1;
        decoded[94] = 1;
        let (counts, stopped) = run(reference, decoded, BerStop::default());
        let counts = counts.unwrap();
        // Nine whole frames of 10; the last 5 bits are no frame.
        assert_eq!(counts, BerCounts { bits: 95, bit_errors: 3, frames: 9, frame_errors: 1, partial_bits: 5 });
        assert!(!stopped);
        assert!((counts.ber() - 3.0 / 95.0).abs() < 1e-12);
    }

    #[test]
    fn stops_at_the_targets() {
        let (counts, stopped) =
            run(vec![0; 100_000], vec![0; 100_000], BerStop { max_bits: Some(1234), max_errors: None });
        assert_eq!(counts.unwrap().bits, 1234);
        assert!(stopped);
        let (counts, stopped) =
            run(vec![0; 100_000], vec![1; 100_000], BerStop { max_bits: None, max_errors: Some(50) });
        assert!(counts.unwrap().bit_errors >= 50);
        assert!(stopped);
    }

    #[test]
    fn bits_set_aside_come_back_in_order_across_wraps_and_growth() {
        let mut aside = Aside::default();
        let mut want = std::collections::VecDeque::new();
        let mut next = 0u32;
        for (push, take) in [(5, 3), (7, 0), (1, 9), (100, 50), (200_000, 100_000), (3, 100_054), (70_000, 70_000)] {
            let bits: Vec<u8> = (0..push).map(|i| ((next + i) % 251) as u8).collect();
            next += push;
            aside.push(&bits);
            want.extend(&bits);
            aside.consume(take);
            want.drain(..take);
            let (a, b) = aside.as_slices();
            assert_eq!([a, b].concat(), want.iter().copied().collect::<Vec<u8>>());
            assert_eq!(aside.len(), want.len());
        }
        assert!(aside.is_empty());
    }

    #[test]
    fn lost_or_invented_bits_fail_the_flowgraph() {
        let (err, _) = run(vec![0; 100], vec![0; 90], BerStop::default());
        assert!(err.unwrap_err().contains("has 90 bits but the reference has 100: bits were lost"));
        let (err, _) = run(vec![0; 90], vec![0; 100], BerStop::default());
        assert!(err.unwrap_err().contains("has 100 bits but the reference has 90: bits were invented"));
    }
}
