//! What the dashboard shows: the run's figures as the runner read them, kept
//! over time, and as JSON (`gpufec-dashboard/1`) for the page and for scripts.

use crate::blocks::BerCounts;
use crate::cli::plot::wilson;
use crate::flowgraph::Progress;
use serde_json::{Value, json};

/// Most samples kept: past it every other one is dropped, so a long run
/// keeps its whole course at half the resolution.
const MAX_SAMPLES: usize = 1200;

/// Seconds over which the throughput chart's rates are taken: a decoder
/// hands its bits on a batch at a time, so over one tick the rate would jump
/// between nothing and a batch's worth.
const RATE_WINDOW_S: f64 = 1.0;

/// One reading of the figures that the charts draw over time.
#[derive(Debug, Clone)]
struct Sample {
    /// Seconds since the run started.
    t: f64,
    /// Items each probe passed so far.
    probe_items: Vec<u64>,
    /// Counts of each BER sink.
    ber: Vec<BerCounts>,
}

/// The run's course and its latest figures.
#[derive(Debug, Default)]
pub(super) struct History {
    title: String,
    about: Vec<String>,
    samples: Vec<Sample>,
    latest: Option<Progress>,
}

impl History {
    /// Name the flowgraph: its title and lines describing its codes and decoders.
    pub fn describe(&mut self, title: String, about: Vec<String>) {
        (self.title, self.about) = (title, about);
    }

    /// Add the figures `p`.
    pub fn record(&mut self, p: &Progress) {
        if self.samples.len() >= MAX_SAMPLES {
            let mut i = 0;
            self.samples.retain(|_| {
                i += 1;
                i % 2 == 1
            });
        }
        self.samples.push(Sample {
            t: p.elapsed.as_secs_f64(),
            probe_items: p.throughput.iter().map(|(_, t)| t.items).collect(),
            ber: p.ber.iter().map(|(_, c)| *c).collect(),
        });
        self.latest = Some(p.clone());
    }

    /// Everything as JSON: the latest figures, and each chart's series.
    pub fn json(&self) -> Value {
        let Some(p) = &self.latest else {
            return json!({ "format": FORMAT, "title": self.title, "about": self.about, "elapsed_s": 0.0, "samples": 0 });
        };
        let elapsed = p.elapsed.as_secs_f64();
        let probes: Vec<Value> = p.throughput.iter().enumerate().map(|(i, (name, t))| {
            let items = |s: &Sample| s.probe_items.get(i).copied().unwrap_or(0);
            let mut series: Vec<[f64; 2]> = Vec::new();
            let mut from = 0;
            for (k, now) in self.samples.iter().enumerate().skip(1) {
                while from + 1 < k && now.t - self.samples[from + 1].t >= RATE_WINDOW_S {
                    from += 1;
                }
                let then = &self.samples[from];
                if now.t > then.t {
                    series.push([now.t, items(now).saturating_sub(items(then)) as f64 / (now.t - then.t) / 1e6]);
                }
            }
            json!({ "name": name, "bits": t.items, "seconds": t.seconds, "mbps": t.per_second() / 1e6, "series": series })
        }).collect();
        let ber: Vec<Value> = p.ber.iter().enumerate().map(|(i, (name, c))| {
            let series: Vec<Value> = self.samples.iter().filter_map(|s| s.ber.get(i).map(|c| json!([s.t, rates(c)]))).collect();
            json!({
                "name": name, "bits": c.bits, "bit_errors": c.bit_errors, "frames": c.frames,
                "frame_errors": c.frame_errors, "partial_bits": c.partial_bits, "rates": rates(c), "series": series,
            })
        }).collect();
        let total: f64 = p.loads.iter().filter_map(|(_, _, busy)| *busy).map(|b| b.as_secs_f64()).sum();
        let blocks: Vec<Value> = p.loads.iter().map(|(name, kind, busy)| {
            let busy = busy.map(|b| b.as_secs_f64());
            let share = busy.filter(|_| total > 0.0).map(|b| 100.0 * b / total);
            json!({ "name": name, "type": kind, "busy_s": busy, "share_pct": share })
        }).collect();
        let decoders: Vec<Value> = p.decoders.iter().map(|(name, backend, c)| {
            // Only a GPU decoder's batches in flight are time on the device.
            let gpu_share = (*backend == "gpu" && elapsed > 0.0).then(|| 100.0 * c.occupied_s / elapsed);
            json!({
                "name": name, "backend": backend, "units": c.units, "bits": c.bits, "batches": c.batches,
                "in_flight": c.in_flight, "gpu_share_pct": gpu_share, "mean_iterations": c.mean_iterations(),
                "checked": c.checked, "failed": c.failed,
            })
        }).collect();
        json!({
            "format": FORMAT, "title": self.title, "about": self.about, "elapsed_s": elapsed, "samples": self.samples.len(),
            "probes": probes, "ber": ber, "blocks": blocks, "decoders": decoders,
        })
    }
}

/// The name and version of the JSON's layout.
const FORMAT: &str = "gpufec-dashboard/1";

/// BER and FER with their 95 % Wilson intervals: `[ber, low, high, fer,
/// low, high]`, `null` for a rate of nothing.
pub(in crate::cli) fn rates(c: &BerCounts) -> [Option<f64>; 6] {
    let finite = |x: f64| x.is_finite().then_some(x);
    let (bl, bh) = wilson(c.bit_errors, c.bits);
    let (fl, fh) = wilson(c.frame_errors, c.frames);
    let (b, f) = (c.bits > 0, c.frames > 0);
    [finite(c.ber()), b.then_some(bl), b.then_some(bh), finite(c.fer()), f.then_some(fl), f.then_some(fh)]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::{DecoderCounts, Throughput};
    use std::time::Duration;

    fn progress(t: f64, items: u64, bits: u64, errors: u64) -> Progress {
        Progress {
            elapsed: Duration::from_secs_f64(t),
            ber: vec![("ber".into(), BerCounts { bits, bit_errors: errors, frames: bits / 100, frame_errors: errors.min(bits / 100), partial_bits: 0 })],
            throughput: vec![("probe".into(), Throughput { items, seconds: t })],
            decoders: vec![("decoder".into(), "cpu", DecoderCounts { units: 3, blocks: 3, iterations: 12, ..Default::default() })],
            loads: vec![("source".into(), "RandomBits", Some(Duration::from_millis(100))), ("wire".into(), "Puncture", None), ("decoder".into(), "ViterbiDecoder", Some(Duration::from_millis(300)))],
        }
    }

    #[test]
    fn the_values_are_the_runs_figures() {
        let mut h = History::default();
        h.describe("viterbi_awgn".into(), vec!["code 'conv': ...".into()]);
        assert_eq!(h.json()["samples"], 0);
        h.record(&progress(1.0, 1_000_000, 1_000_000, 0));
        h.record(&progress(2.0, 3_000_000, 3_000_000, 30));
        let v = h.json();
        assert_eq!(v["format"], FORMAT);
        assert_eq!(v["probes"][0]["series"], json!([[2.0, 2.0]]), "2 Mb in the second second");
        h.record(&progress(2.5, 3_000_000, 3_000_000, 30));
        h.record(&progress(3.0, 4_000_000, 3_000_000, 30));
        let rates: Vec<f64> = h.json()["probes"][0]["series"].as_array().unwrap().iter().map(|p| p[1].as_f64().unwrap()).collect();
        assert_eq!(rates, [2.0, 2.0 / 1.5, 1.0], "each over the last second (or since the first sample)");
        assert_eq!(v["probes"][0]["mbps"], 1.5);
        let r = &v["ber"][0]["rates"];
        assert_eq!(r[0], 1e-5);
        assert!(r[1].as_f64().unwrap() < 1e-5 && r[2].as_f64().unwrap() > 1e-5);
        assert!(v["ber"][0]["series"][0][1][0].is_number() && v["ber"][0]["series"][0][1][1] == 0.0, "no error yet: {}", v["ber"][0]["series"]);
        assert_eq!(v["blocks"][2]["share_pct"], 75.0);
        assert!(v["blocks"][1]["share_pct"].is_null(), "a wire has no load");
        assert_eq!(v["decoders"][0]["mean_iterations"], 4.0);
        assert!(v["decoders"][0]["gpu_share_pct"].is_null(), "a CPU decoder has no GPU time");
    }

    #[test]
    fn a_long_run_keeps_its_whole_course() {
        let mut h = History::default();
        for i in 0..3 * MAX_SAMPLES as u64 {
            h.record(&progress(i as f64, i, i, 0));
        }
        assert!(h.samples.len() <= MAX_SAMPLES);
        assert_eq!(h.samples[0].t, 0.0);
        assert!(h.samples.windows(2).all(|w| w[1].t > w[0].t));
        assert_eq!(h.samples.last().unwrap().t, (3 * MAX_SAMPLES - 1) as f64);
    }
}
