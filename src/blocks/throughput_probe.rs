//! Pass-through block that measures information throughput.

use super::stream::{self, map_each_tagged};
use super::unit_tags::VALID_BITS_TAG;
use crate::codes::threads::par_copy;
use futuresdr::runtime::dev::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

/// Items that passed a [`ThroughputProbe`] and the time they took.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Throughput {
    /// Items (information bits) passed.
    pub items: u64,
    /// Seconds from the start of the flowgraph to now, or to the last item
    /// once the stream ended.
    pub seconds: f64,
}

impl Throughput {
    /// Items per second; NaN before any item passed (no rate from nothing).
    pub fn per_second(&self) -> f64 {
        if self.seconds > 0.0 && self.items > 0 { self.items as f64 / self.seconds } else { f64::NAN }
    }
}

/// The live meter of a [`ThroughputProbe`], readable from any thread.
#[derive(Debug, Default)]
pub struct ThroughputMeter {
    start: OnceLock<Instant>,
    items: AtomicU64,
    /// Nanoseconds from `start` to the end of the stream; 0 while it runs.
    ended_ns: AtomicU64,
}

impl ThroughputMeter {
    /// The reading now.
    pub fn reading(&self) -> Throughput {
        let items = self.items.load(Ordering::Relaxed);
        let ended = self.ended_ns.load(Ordering::Relaxed);
        let seconds = match self.start.get() {
            None => 0.0,
            Some(_) if ended > 0 => ended as f64 * 1e-9,
            Some(s) => s.elapsed().as_secs_f64(),
        };
        Throughput { items, seconds }
    }
}

/// Passes information bits through unchanged and measures how many pass per
/// second, from the start of the flowgraph: a live figure while it runs, and
/// the final one once the stream ended. Put it after the decoder.
///
/// # Stream Inputs
///
/// `input`: information bits (`u8` 0/1, or packed eight to a byte: [`Self::packed`]).
///
/// # Stream Outputs
///
/// `output`: the same bits, with their tags.
///
/// # Usage
/// ```
/// use gpufec::blocks::ThroughputProbe;
/// let probe = ThroughputProbe::new();
/// let meter = probe.meter();   // read it from another thread while the flowgraph runs
/// assert_eq!(meter.reading().items, 0);
/// ```
#[derive(Block)]
pub struct ThroughputProbe {
    meter: Arc<ThroughputMeter>,
    /// Information bits per item: 8 for packed bits.
    bits_per_item: u64,
    #[input]
    input: DefaultCpuReader<u8>,
    #[output]
    output: DefaultCpuWriter<u8>,
}

impl ThroughputProbe {
    /// A probe.
    pub fn new() -> Self {
        Self { meter: Arc::default(), bits_per_item: 1, input: DefaultCpuReader::default(), output: stream::output() }
    }

    /// A probe of packed bits (a `u8` of eight bits per item, as a decoder
    /// with packed output writes them): it counts eight bits per item, so a
    /// stream that ends inside its last byte counts the real bits its
    /// [`VALID_BITS_TAG`] names (a decoder with packed output puts it there).
    pub fn packed() -> Self {
        Self { bits_per_item: 8, ..Self::new() }
    }

    /// A handle on the live meter.
    pub fn meter(&self) -> Arc<ThroughputMeter> {
        self.meter.clone()
    }
}

impl Default for ThroughputProbe {
    fn default() -> Self {
        Self::new()
    }
}

impl super::Counted for ThroughputProbe {
    fn items(&self) -> u64 {
        self.meter.items.load(Ordering::Relaxed)
    }
}

#[doc(hidden)]
impl Kernel for ThroughputProbe {
    async fn init(&mut self, _mo: &mut MessageOutputs, _meta: &mut BlockMeta) -> Result<()> {
        self.meter.start.get_or_init(Instant::now);
        Ok(())
    }

    async fn work(&mut self, io: &mut WorkIo, _mo: &mut MessageOutputs, _meta: &mut BlockMeta) -> Result<()> {
        let meter = &self.meter;
        let packed = self.bits_per_item == 8;
        // A packed stream's last byte says how many of its bits are real.
        let mut padding = 0;
        let mut taken = 0;
        map_each_tagged(&mut self.input, &mut self.output, io, &mut taken, |i, o, tags| {
            par_copy(i, o);
            if packed {
                padding += tags
                    .iter()
                    .filter_map(|t| match &t.tag {
                        Tag::NamedUsize(name, v) if name == VALID_BITS_TAG => Some(8 - (*v).min(8) as u64),
                        _ => None,
                    })
                    .sum::<u64>();
            }
            Ok(())
        })?;
        meter.items.fetch_add(taken * self.bits_per_item - padding, Ordering::Relaxed);
        if io.finished {
            let start = meter.start.get_or_init(Instant::now);
            meter.ended_ns.store((start.elapsed().as_nanos() as u64).max(1), Ordering::Relaxed);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::FirstError;
    use crate::blocks::testing::run_through;

    #[test]
    fn passes_bits_and_counts_them() {
        let bits: Vec<u8> = (0..100_000).map(|i| (i % 2) as u8).collect();
        let probe = ThroughputProbe::new();
        let meter = probe.meter();
        let got: Vec<u8> = run_through(bits.clone(), &FirstError::default(), |fg| fg.add(probe).into()).unwrap();
        assert_eq!(got, bits);
        let r = meter.reading();
        assert_eq!(r.items, 100_000);
        assert!(r.seconds > 0.0);
        let later = meter.reading();
        assert_eq!(r.seconds, later.seconds, "the final figure stays fixed after the end");
        assert!(r.per_second() > 0.0);
    }
}
