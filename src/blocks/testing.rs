//! Helpers for the block unit tests: run one block between a vector source and
//! a vector sink.

use super::{FirstError, runtime};
use futuresdr::blocks::{VectorSink, VectorSource};
use futuresdr::runtime::dev::CpuSample;
use futuresdr::runtime::{BlockId, Flowgraph};

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
