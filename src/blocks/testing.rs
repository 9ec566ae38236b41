//! Helpers for the block unit tests: run one block between a vector source and
//! a vector sink, and sources and sinks that carry tags and stall until the
//! output of what they left waiting shows.

use super::{FirstError, runtime};
use futuresdr::blocks::{VectorSink, VectorSource};
use futuresdr::runtime::dev::prelude::*;
use futuresdr::runtime::{BlockId, Flowgraph};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Run `input` through the block that `add` puts into a flowgraph (ports
/// `input` and `output`); its output, or the error it raised.
pub(crate) fn run_through<I: CpuSample, O: CpuSample>(
    input: Vec<I>,
    errors: &FirstError,
    add: impl FnOnce(&mut Flowgraph) -> BlockId,
) -> Result<Vec<O>, String> {
    // Readers before writers: see `blocks` on FutureSDR's initialization order.
    let mut fg = Flowgraph::new();
    let snk = fg.add(VectorSink::<O>::new(1024));
    let block = add(&mut fg);
    let src = fg.add(VectorSource::<I>::new(input));
    fg.stream_dyn(src, "output", block, "input").map_err(|e| e.to_string())?;
    fg.stream_dyn(block, "output", snk, "input").map_err(|e| e.to_string())?;
    match (runtime().run(fg), errors.message()) {
        // A block may end normally and still fail the run (a stream cut inside a unit).
        (Ok(_), Some(e)) => Err(e),
        (Ok(fg), None) => Ok(snk.get(&fg).map_err(|e| e.to_string())?.items().clone()),
        (Err(e), m) => Err(m.unwrap_or_else(|| e.to_string())),
    }
}

/// Everything the source block that `add` puts into a flowgraph emits (port `output`).
pub(crate) fn collect_from<O: CpuSample>(add: impl FnOnce(&mut Flowgraph) -> BlockId) -> Vec<O> {
    let mut fg = Flowgraph::new();
    let snk = fg.add(VectorSink::<O>::new(1024));
    let src = add(&mut fg);
    fg.stream_dyn(src, "output", snk, "input").expect("test wiring");
    let fg = runtime().run(fg).expect("test flowgraph runs");
    snk.get(&fg).expect("sink is there").items().clone()
}

/// Where a [`TaggedSource`] stalls: after `after` items it emits nothing
/// more until its [`RecordingSink`] has seen an item (the output of what the
/// stall left waiting), or, failing that, until `timeout` has passed; it
/// then notes which of the two let it go on. A test that asserts on that,
/// not on how long anything took, passes on a machine of any speed and load.
#[derive(Debug, Clone)]
pub(crate) struct Stall {
    pub after: usize,
    pub timeout: Duration,
    /// Set by the sink at its first item.
    seen: Arc<AtomicBool>,
    /// Whether the sink had an item when the source went on.
    pub output_first: Arc<AtomicBool>,
}

impl Stall {
    /// A stall after `after` items, for at most `timeout`.
    pub(crate) fn new(after: usize, timeout: Duration) -> Self {
        Self { after, timeout, seen: Arc::default(), output_first: Arc::default() }
    }
}

/// Emits `items` with `tags` at their indices, stalling as `stall` says.
#[derive(Block)]
pub(crate) struct TaggedSource<T: CpuSample + Copy> {
    items: Vec<T>,
    tags: Vec<(usize, Tag)>,
    at: usize,
    stall: Option<Stall>,
    until: Option<Instant>,
    #[output]
    output: DefaultCpuWriter<T>,
}

impl<T: CpuSample + Copy> TaggedSource<T> {
    pub(crate) fn new(items: Vec<T>, tags: Vec<(usize, Tag)>, stall: Option<Stall>) -> Self {
        Self { items, tags, at: 0, stall, until: None, output: DefaultCpuWriter::default() }
    }
}

#[doc(hidden)]
impl<T: CpuSample + Copy> Kernel for TaggedSource<T> {
    async fn work(&mut self, io: &mut WorkIo, _mo: &mut MessageOutputs, _meta: &mut BlockMeta) -> Result<()> {
        let mut end = self.items.len();
        if let Some(stall) = &self.stall {
            if self.at < stall.after {
                end = stall.after;
            } else {
                let until = *self.until.get_or_insert_with(|| Instant::now() + stall.timeout);
                let seen = stall.seen.load(Ordering::Acquire);
                if !seen && Instant::now() < until {
                    io.block_on(futuresdr::runtime::Timer::after(Duration::from_millis(5)));
                    return Ok(());
                }
                stall.output_first.store(seen, Ordering::Release);
                self.stall = None;
            }
        }
        let (o, mut tags) = self.output.slice_with_tags();
        let n = o.len().min(end - self.at);
        o[..n].copy_from_slice(&self.items[self.at..self.at + n]);
        for (i, t) in self.tags.iter().filter(|(i, _)| (self.at..self.at + n).contains(i)) {
            tags.add_tag(i - self.at, t.clone());
        }
        self.output.produce(n);
        self.at += n;
        if self.at == self.items.len() {
            io.finished = true;
        } else if n > 0 {
            io.call_again = true;
        }
        Ok(())
    }
}

/// What a [`RecordingSink`] saw.
#[derive(Debug, Default)]
pub(crate) struct Record<T> {
    pub items: Vec<T>,
    /// Tags at their item's index in the whole stream.
    pub tags: Vec<(usize, Tag)>,
}

/// Keeps every item and tag it reads, and tells a [`Stall`] when the first came.
#[derive(Block)]
pub(crate) struct RecordingSink<T: CpuSample + Copy> {
    record: Arc<Mutex<Record<T>>>,
    seen: Option<Arc<AtomicBool>>,
    #[input]
    input: DefaultCpuReader<T>,
}

impl<T: CpuSample + Copy> RecordingSink<T> {
    /// A sink telling `stall`, if any, of its first item.
    pub(crate) fn new(stall: Option<&Stall>) -> (Self, Arc<Mutex<Record<T>>>) {
        let record = Arc::new(Mutex::new(Record { items: Vec::new(), tags: Vec::new() }));
        (Self { record: record.clone(), seen: stall.map(|s| s.seen.clone()), input: DefaultCpuReader::default() }, record)
    }
}

#[doc(hidden)]
impl<T: CpuSample + Copy> Kernel for RecordingSink<T> {
    async fn work(&mut self, io: &mut WorkIo, _mo: &mut MessageOutputs, _meta: &mut BlockMeta) -> Result<()> {
        // Finished before the slice: items that come after the look are then not lost.
        let finished = self.input.finished();
        let (items, tags) = self.input.slice_with_tags();
        let n = items.len();
        let mut r = self.record.lock().unwrap_or_else(|p| p.into_inner());
        let base = r.items.len();
        r.tags.extend(tags.iter().filter(|t| t.index < n).map(|t| (base + t.index, t.tag.clone())));
        r.items.extend_from_slice(items);
        drop(r);
        if n > 0
            && let Some(seen) = &self.seen
        {
            seen.store(true, Ordering::Release);
        }
        self.input.consume(n);
        if finished {
            io.finished = true;
        }
        Ok(())
    }
}

/// What [`run_decoder_block`] gives back: the bits and their tags, and the soft output.
pub(crate) type BlockOutput = (Vec<u8>, Vec<(usize, Tag)>, Vec<f32>);

/// Run `items` (with `tags`, stalling as `stall` says) through the decoder
/// block `add` puts into a flowgraph (its `soft[0]` read when `soft`); the
/// bits and tags out, and the soft output.
pub(crate) fn run_decoder_block<T: CpuSample + Copy>(
    items: Vec<T>,
    tags: Vec<(usize, Tag)>,
    stall: Option<Stall>,
    soft: bool,
    errors: &FirstError,
    add: impl FnOnce(&mut Flowgraph) -> BlockId,
) -> Result<BlockOutput, String> {
    let mut fg = Flowgraph::new();
    let (bits_sink, bits) = RecordingSink::<u8>::new(stall.as_ref());
    let (soft_sink, soft_record) = RecordingSink::<f32>::new(None);
    let b = fg.add(bits_sink);
    let s = soft.then(|| fg.add(soft_sink));
    let dec = add(&mut fg);
    let src = fg.add(TaggedSource::new(items, tags, stall));
    fg.stream_dyn(src, "output", dec, "input").map_err(|e| e.to_string())?;
    fg.stream_dyn(dec, "output", b, "input").map_err(|e| e.to_string())?;
    if let Some(s) = s {
        fg.stream_dyn(dec, "soft[0]", s, "input").map_err(|e| e.to_string())?;
    }
    runtime().run(fg).map_err(|e| errors.message().unwrap_or_else(|| e.to_string()))?;
    let r = bits.lock().unwrap_or_else(|p| p.into_inner());
    Ok((r.items.clone(), r.tags.clone(), soft_record.lock().unwrap_or_else(|p| p.into_inner()).items.clone()))
}
