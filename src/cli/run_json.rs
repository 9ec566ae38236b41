//! `gpufec run FILE --json OUT`: the run's summary for scripts, the same
//! figures as its last lines (`gpufec-run/1`), written once the run ends, an
//! interrupted one too.

use super::dashboard::rates;
use crate::flowgraph::Summary;
use serde_json::{Value, json};
use std::sync::atomic::Ordering;

/// The name and version of the JSON's layout.
pub const FORMAT: &str = "gpufec-run/1";

/// The summary of the run of the flowgraph `title` (its code and decoder
/// lines `about`) as JSON: every probe, BER sink, decoder, framing block's
/// counts, file and profiled block; rates of nothing are `null`, never a number.
pub fn summary_json(title: &str, about: &[String], summary: &Summary) -> Value {
    let finite = |x: f64| x.is_finite().then_some(x);
    let probes: Vec<Value> = summary
        .throughput
        .iter()
        .map(|(name, t)| json!({ "name": name, "bits": t.items, "seconds": t.seconds, "mbps": finite(t.per_second() / 1e6) }))
        .collect();
    let ber: Vec<Value> = summary
        .ber
        .iter()
        .map(|(name, c)| {
            let [b, bl, bh, f, fl, fh] = rates(c);
            json!({
                "name": name, "bits": c.bits, "bit_errors": c.bit_errors, "frames": c.frames, "frame_errors": c.frame_errors,
                "partial_bits": c.partial_bits, "ber": b, "ber_95": [bl, bh], "fer": f, "fer_95": [fl, fh],
            })
        })
        .collect();
    let decoders: Vec<Value> = summary
        .decoders
        .iter()
        .map(|d| {
            let c = d.stats.counts();
            json!({
                "name": d.block, "backend": d.backend, "describe": d.describe, "not_gpu": d.not_gpu,
                "units": c.units, "code_blocks": c.blocks, "bits": c.bits, "mean_iterations": c.mean_iterations(),
                "checked": c.checked, "failed": c.failed, "batches": c.batches,
                "submit_s": c.submit_s, "collect_s": c.collect_s, "drain_s": c.drain_s, "occupied_s": c.occupied_s,
                "devices": d.stats.dealt().iter().map(|(dev, b, u)| json!({ "device": dev, "batches": b, "units": u })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let files: Vec<Value> = summary
        .files
        .iter()
        .map(|f| json!({ "name": f.block, "path": f.path, "items": f.written.items.load(Ordering::Relaxed), "bytes": f.written.bytes.load(Ordering::Relaxed) }))
        .collect();
    let recordings: Vec<Value> = summary
        .recordings
        .iter()
        .map(|r| {
            let m = &r.meta;
            json!({ "name": r.block, "path": r.path, "datatype": m.datatype.name(), "sample_rate": m.sample_rate, "frequency": m.frequency, "recorder": m.recorder, "samples": r.samples })
        })
        .collect();
    let frames: Vec<Value> = summary
        .frames
        .iter()
        .map(|(name, c)| {
            let get = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
            json!({
                "name": name, "found": get(&c.found), "inverted": get(&c.inverted), "marker_errors": get(&c.marker_errors),
                "cut_short": get(&c.cut_short), "passed": get(&c.passed), "corrected": get(&c.corrected), "failed": get(&c.failed),
            })
        })
        .collect();
    let blocks: Vec<Value> = summary
        .loads
        .iter()
        .filter_map(|l| l.load.as_ref().map(|load| (l, load)))
        .map(|(l, load)| json!({ "name": l.block, "type": l.kind, "busy_s": load.busy().as_secs_f64(), "cpu_s": load.cpu().as_secs_f64(), "calls": load.calls(), "items": load.items() }))
        .collect();
    json!({
        "format": FORMAT, "gpufec": env!("CARGO_PKG_VERSION"), "title": title, "about": about,
        "wall_s": summary.wall.as_secs_f64(), "interrupted": summary.interrupted, "stopped_at_target": summary.stopped_at_target,
        "probes": probes, "ber": ber, "decoders": decoders, "frames": frames, "files": files, "recordings": recordings, "blocks": blocks,
    })
}
