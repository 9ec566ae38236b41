//! `gpufec ber <family>`: what every family's curve shares: the options that
//! say how long each point runs and where the curve goes, the run over the
//! grid with live progress, the JSON file, and Ctrl-C.

use super::count::parse_count;
use super::grid::Grid;
use super::interrupt;
use crate::codes::sim::{Axis, Ended, Link, Point, Progress, StopRule, run_point};
use clap::Args;
use serde_json::{Map, Value, json};
use super::status_line::StatusLine;
use std::path::PathBuf;
use std::time::Duration;

/// How long each point runs, with which seed, and where the curve is written.
#[derive(Args, Debug, Clone)]
pub struct CurveArgs {
    /// Information bits per point at most (e.g. 1e7).
    #[arg(long, default_value = "1e6", value_parser = parse_count)]
    pub max_bits: u64,
    /// Bit errors after which a point ends, with the frame they fell in.
    #[arg(long, default_value = "1000", value_parser = parse_count)]
    pub max_errors: u64,
    /// Seed of the bits and the noise.
    #[arg(long, default_value = "1", value_parser = parse_count)]
    pub seed: u64,
    /// Also write the curve as JSON to this file (rewritten after every point,
    /// and with the partial point on Ctrl-C).
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Also draw the curve to this picture, FILE.svg or FILE.png (redrawn
    /// after every point; `gpufec plot` draws several curves together).
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// No live progress on stderr: only the points' lines on stdout, and errors.
    #[arg(long, short)]
    pub quiet: bool,
}

/// A curve: the run's parameters and the points measured so far.
#[derive(Debug, Clone)]
pub struct Curve {
    /// Its x axis.
    pub axis: Axis,
    /// Parameters of the run.
    pub parameters: Map<String, Value>,
    /// Points, in the order run.
    pub points: Vec<Point>,
}

/// A rate, or JSON null when there was nothing to count.
fn rate(x: f64) -> Value {
    if x.is_finite() { json!(x) } else { Value::Null }
}

impl Curve {
    /// The JSON object: `format` (`gpufec-curve/1`), the `axis` (key, label,
    /// unit), the parameters, and `points`, each with the axis value
    /// (under the axis name), `bits`, `bit_errors`, `frames`, `frame_errors`,
    /// `partial_bits` (a last frame cut short: in `bits`, not in `frames`), `ber`, `fer`, `detected`, `undetected`, `mean_iterations`, `seconds`
    /// and `ended`; `symbols`, `symbol_errors` and `ser` where symbols were
    /// counted. A rate of nothing is `null`.
    pub fn to_json(&self) -> Value {
        let mut obj = self.parameters.clone();
        obj.insert("format".into(), json!(super::plot::CURVE_FORMAT));
        obj.insert("axis".into(), json!({"key": self.axis.key, "label": self.axis.label, "unit": self.axis.unit}));
        let points = self
            .points
            .iter()
            .map(|p| {
                let mut o = Map::new();
                o.insert(self.axis.key.into(), json!(p.x));
                for (k, v) in [("bits", p.bits), ("bit_errors", p.bit_errors), ("frames", p.frames), ("frame_errors", p.frame_errors), ("partial_bits", p.partial_bits)] {
                    o.insert(k.into(), json!(v));
                }
                o.insert("ber".into(), rate(p.ber()));
                o.insert("fer".into(), rate(p.fer()));
                o.insert("detected".into(), json!(p.detected));
                o.insert("undetected".into(), json!(p.undetected()));
                o.insert("mean_iterations".into(), rate(p.mean_iterations()));
                if p.symbols > 0 {
                    o.insert("symbols".into(), json!(p.symbols));
                    o.insert("symbol_errors".into(), json!(p.symbol_errors));
                    o.insert("ser".into(), rate(p.ser()));
                }
                o.insert("seconds".into(), json!(p.seconds));
                o.insert("ended".into(), json!(p.ended.name()));
                Value::Object(o)
            })
            .collect();
        obj.insert("points".into(), Value::Array(points));
        Value::Object(obj)
    }
}

/// `e` with three significant digits, or `n/a` for a rate of nothing.
pub(super) fn sci(x: f64) -> String {
    if x.is_finite() { format!("{x:.3e}") } else { "n/a".into() }
}

/// Bit and frame counts and their rates, as `ber` and `run` print them.
pub(super) fn counts_text(p: &Point) -> String {
    use crate::codes::words::count_of;
    format!(
        "{}, {}, BER {}, {}, {}, FER {}{}",
        count_of(p.bits, "bit"),
        count_of(p.bit_errors, "error"),
        sci(p.ber()),
        count_of(p.frames, "frame"),
        count_of(p.frame_errors, "frame error"),
        sci(p.fer()),
        partial_text(p.partial_bits)
    )
}

/// What a last frame cut short means for the counts, or nothing.
pub(super) fn partial_text(partial_bits: u64) -> String {
    match partial_bits {
        0 => String::new(),
        n => format!(" (the last {}, less than a frame, in BER only)", crate::codes::words::count_of(n, "bit")),
    }
}

/// One point as the `ber` command prints it, its information bits a second last.
pub fn point_line(axis: Axis, p: &Point) -> String {
    let mut line = format!("{}: {}", axis.at(p.x), counts_text(p));
    if p.detected > 0 {
        line += &format!(" ({} detected, {} undetected)", p.detected, p.undetected());
    }
    if p.mean_iterations().is_finite() {
        line += &format!(", {:.2} iterations", p.mean_iterations());
    }
    if p.symbols > 0 {
        line += &format!(", SER {}", sci(p.ser()));
    }
    line += &format!(", {:.2} s", p.seconds);
    if p.seconds > 0.0 {
        // Information bits a second: what a device link's point costs without a bench.
        let rate = p.bits as f64 / p.seconds;
        line += &if rate >= 1e9 { format!(" ({:.2} Gb/s)", rate / 1e9) } else { format!(" ({:.2} Mb/s)", rate / 1e6) };
    }
    if p.ended == Ended::Interrupted {
        line += " (interrupted)";
    }
    line
}

/// `bar` (empty in a log) and `of` (point i of n) lead the line.
fn progress_line(axis: Axis, p: &Progress, bar: &str, of: &str) -> String {
    let q = &p.point;
    let secs = p.elapsed.as_secs_f64().max(1e-9);
    let eta = p.eta.map_or("?".to_string(), |d| format!("{:.0} s", d.as_secs_f64().ceil()));
    format!(
        "  {bar}{of}{}: {} bits, {} errors, BER {}, {:.2} Mb/s, ETA {eta}",
        axis.at(q.x),
        q.bits,
        q.bit_errors,
        sci(q.ber()),
        q.bits as f64 / secs / 1e6
    )
}

/// Run `link` at every point of `grid` and print each point as it ends (and
/// its progress meanwhile on stderr: one line rewritten in place on a
/// terminal, a line every few seconds otherwise). The curve goes to
/// `args.json` after every point, with `parameters` (the code, the decoder and
/// its backend) and the stop rules. Ctrl-C ends the current point with what it
/// counted, writes it, and stops; the returned flag says so.
pub fn run_curve(
    link: &mut dyn Link,
    axis: Axis,
    grid: &Grid,
    args: &CurveArgs,
    mut parameters: Map<String, Value>,
) -> anyhow::Result<bool> {
    let stop = StopRule { max_bits: args.max_bits, max_errors: args.max_errors };
    stop.validate().map_err(|(field, e)| anyhow::anyhow!("--{}: {e}", field.replace('_', "-")))?;
    // Every point, before the first runs.
    for &x in &grid.0 {
        link.check(x).map_err(|e| anyhow::anyhow!("{}: {e}", axis.flag))?;
    }
    if let Some(path) = &args.json {
        // Fail now rather than after the first point; the file itself is
        // replaced only by a whole curve.
        crate::files::check_writable(path).map_err(|e| anyhow::anyhow!("--json: {e}"))?;
    }
    if let Some(path) = &args.plot {
        super::plot::check_output(path).map_err(|e| anyhow::anyhow!("--plot: {e}"))?;
    }
    parameters.insert("max_bits".into(), args.max_bits.into());
    parameters.insert("max_errors".into(), args.max_errors.into());
    parameters.insert("seed".into(), args.seed.into());
    let mut curve = Curve { axis, parameters, points: Vec::new() };
    let status = StatusLine::new(args.quiet);
    let every = status.tick(Duration::from_millis(250), Duration::from_secs(5));
    interrupt::install(interrupt::OnSignal::Report);
    for (i, &x) in grid.0.iter().enumerate() {
        let of = if grid.0.len() > 1 { format!("point {} of {}, ", i + 1, grid.0.len()) } else { String::new() };
        let point = run_point(link, x, args.seed, stop, interrupt::flag(), every, |p| {
            // The share of whichever limit is nearer.
            let done = (p.point.bits as f64 / stop.max_bits as f64).max(p.point.bit_errors as f64 / stop.max_errors as f64);
            status.show(&progress_line(axis, p, &status.bar(done), &of))
        });
        status.clear();
        curve.points.push(point?);
        let last = curve.points.last().copied().unwrap_or_default();
        println!("{}", point_line(axis, &last));
        let json = curve.to_json();
        if let Some(path) = &args.json {
            let text = serde_json::to_string_pretty(&json)?;
            crate::files::replace(path, (text + "\n").as_bytes()).map_err(|e| anyhow::anyhow!("--json: {e}"))?;
        }
        if let Some(path) = &args.plot {
            let series = super::plot::series_of(&json, "the curve")?;
            super::plot::render(&[series], path).map_err(|e| anyhow::anyhow!("--plot: {e}"))?;
        }
        if last.ended == Ended::Interrupted {
            return Ok(true);
        }
    }
    Ok(false)
}
