//! Helpers for the block unit tests: run one block between a vector source and
//! a vector sink, and sources and sinks that carry tags, stall, and note when
//! items arrive.

use super::{FirstError, runtime};
use futuresdr::blocks::{VectorSink, VectorSource};
use futuresdr::runtime::dev::prelude::*;
use futuresdr::runtime::{BlockId, Flowgraph};
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
    match runtime().run(fg) {
        Ok(fg) => Ok(snk.get(&fg).map_err(|e| e.to_string())?.items().clone()),
        Err(e) => Err(errors.message().unwrap_or_else(|| e.to_string())),
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

/// Emits `items` with `tags` at their indices; with `pause`, it stops for that
/// long after the given number of items before it goes on (an input that stalls).
#[derive(Block)]
pub(crate) struct TaggedSource<T: CpuSample + Copy> {
    items: Vec<T>,
    tags: Vec<(usize, Tag)>,
    at: usize,
    pause: Option<(usize, Duration)>,
    until: Option<Instant>,
    #[output]
    output: DefaultCpuWriter<T>,
}

impl<T: CpuSample + Copy> TaggedSource<T> {
    pub(crate) fn new(items: Vec<T>, tags: Vec<(usize, Tag)>, pause: Option<(usize, Duration)>) -> Self {
        Self { items, tags, at: 0, pause, until: None, output: DefaultCpuWriter::default() }
    }
}

#[doc(hidden)]
impl<T: CpuSample + Copy> Kernel for TaggedSource<T> {
    async fn work(&mut self, io: &mut WorkIo, _mo: &mut MessageOutputs, _meta: &mut BlockMeta) -> Result<()> {
        let mut end = self.items.len();
        if let Some((after, wait)) = self.pause {
            if self.at < after {
                end = after;
            } else {
                let until = *self.until.get_or_insert_with(|| Instant::now() + wait);
                if Instant::now() < until {
                    io.block_on(futuresdr::runtime::Timer::after(until - Instant::now()));
                    return Ok(());
                }
                self.pause = None;
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
    /// When the first item arrived.
    pub first_at: Option<Instant>,
}

/// Keeps every item and tag it reads, and when the first item came.
#[derive(Block)]
pub(crate) struct RecordingSink<T: CpuSample + Copy> {
    record: Arc<Mutex<Record<T>>>,
    #[input]
    input: DefaultCpuReader<T>,
}

impl<T: CpuSample + Copy> RecordingSink<T> {
    pub(crate) fn new() -> (Self, Arc<Mutex<Record<T>>>) {
        let record = Arc::new(Mutex::new(Record { items: Vec::new(), tags: Vec::new(), first_at: None }));
        (Self { record: record.clone(), input: DefaultCpuReader::default() }, record)
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
        if n > 0 {
            r.first_at.get_or_insert_with(Instant::now);
        }
        let base = r.items.len();
        r.tags.extend(tags.iter().filter(|t| t.index < n).map(|t| (base + t.index, t.tag.clone())));
        r.items.extend_from_slice(items);
        drop(r);
        self.input.consume(n);
        if finished {
            io.finished = true;
        }
        Ok(())
    }
}
