//! Error-rate curves as pictures: `gpufec plot A.json [B.json ...] -o
//! FILE.svg|png` and `ber ... --plot FILE`. A curve file is the JSON `ber
//! --json` writes (format [`CURVE_FORMAT`]); each becomes one series, its
//! legend built from its parameters.

mod draw;
mod theory;

pub use draw::{Layout, render};
pub use theory::{bpsk_limit_db, uncoded_bpsk_ber, wilson};

use clap::Args;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The `format` of a curve file this version writes and reads.
pub const CURVE_FORMAT: &str = "gpufec-curve/1";
/// Most curves in one plot: more would be no picture anyone can read.
pub const MAX_CURVES: usize = 16;
/// Largest curve file read (a curve of 1000 points is about 0.5 MB).
pub const MAX_CURVE_FILE_BYTES: u64 = 16 << 20;

/// `gpufec plot`'s options.
#[derive(Args, Debug, Clone)]
pub struct PlotArgs {
    /// Curve files written by `gpufec ber ... --json` (at most 16).
    #[arg(required = true)]
    pub curves: Vec<PathBuf>,
    /// The picture: FILE.svg or FILE.png (replaced whole).
    #[arg(short, long)]
    pub output: PathBuf,
}

/// One point of a series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlotPoint {
    /// On the axis.
    pub x: f64,
    /// Bits compared and in error.
    pub bits: u64,
    /// Bit errors.
    pub bit_errors: u64,
    /// Whole frames compared.
    pub frames: u64,
    /// Frames in error.
    pub frame_errors: u64,
    /// Mean decoder iterations, for iterative decoders.
    pub mean_iterations: Option<f64>,
}

/// One curve to draw.
#[derive(Debug, Clone)]
pub struct Series {
    /// Its legend.
    pub label: String,
    /// The axis: JSON key, how it is named, its unit.
    pub axis: (String, String, String),
    /// The code's rate (information bits per channel bit), for the limit line.
    pub rate: Option<f64>,
    /// Its points.
    pub points: Vec<PlotPoint>,
}

/// The series of a curve's JSON (as `ber --json` writes it), `what` naming
/// it in messages.
pub fn series_of(json: &Value, what: &str) -> anyhow::Result<Series> {
    let format = json.get("format").and_then(Value::as_str);
    anyhow::ensure!(
        format == Some(CURVE_FORMAT),
        "{what}: not a gpufec curve of format {CURVE_FORMAT} ({}): write it again with `gpufec ber ... --json`",
        match format {
            Some(f) => format!("its format is {f}"),
            None => "it names no format".into(),
        }
    );
    let text = |o: &Value, k: &str| o.get(k).and_then(Value::as_str).map(str::to_string);
    let axis = json.get("axis").ok_or_else(|| anyhow::anyhow!("{what}: no axis"))?;
    let axis = (
        text(axis, "key").ok_or_else(|| anyhow::anyhow!("{what}: the axis has no key"))?,
        text(axis, "label").unwrap_or_default(),
        text(axis, "unit").unwrap_or_default(),
    );
    let points = json.get("points").and_then(Value::as_array).ok_or_else(|| anyhow::anyhow!("{what}: no points"))?;
    anyhow::ensure!(!points.is_empty(), "{what}: the curve has no points: nothing to draw");
    let points = points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let count = |k: &str| p.get(k).and_then(Value::as_u64).ok_or_else(|| anyhow::anyhow!("{what}: point {i} has no count '{k}'"));
            let x = p.get(&axis.0).and_then(Value::as_f64).filter(|x| x.is_finite());
            let point = PlotPoint {
                x: x.ok_or_else(|| anyhow::anyhow!("{what}: point {i} has no finite '{}'", axis.0))?,
                bits: count("bits")?,
                bit_errors: count("bit_errors")?,
                frames: count("frames")?,
                frame_errors: count("frame_errors")?,
                mean_iterations: p.get("mean_iterations").and_then(Value::as_f64),
            };
            anyhow::ensure!(point.bit_errors <= point.bits && point.frame_errors <= point.frames, "{what}: point {i} counts more errors than bits or frames");
            Ok(point)
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    // Where it ran, when the backend line starts by saying so.
    let backend = text(json, "backend").and_then(|b| b.split_whitespace().next().filter(|w| ["cpu", "gpu"].contains(w)).map(str::to_string));
    // Where the channel ran, when the curve says (curves before this field, host).
    let channel = text(json, "channel").map(|c| format!("{c} channel"));
    let label = [text(json, "describe"), backend, channel].into_iter().flatten().collect::<Vec<_>>().join(", ");
    Ok(Series { label, axis, rate: json.get("rate").and_then(Value::as_f64), points })
}

/// The curve of file `path`, read within [`MAX_CURVE_FILE_BYTES`].
pub fn read_series(path: &Path) -> anyhow::Result<Series> {
    use std::io::Read;
    let what = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|e| anyhow::anyhow!("{what}: {e}"))?;
    let mut text = String::new();
    file.take(MAX_CURVE_FILE_BYTES + 1).read_to_string(&mut text).map_err(|e| anyhow::anyhow!("{what}: {e}"))?;
    anyhow::ensure!(text.len() as u64 <= MAX_CURVE_FILE_BYTES, "{what}: larger than {MAX_CURVE_FILE_BYTES} bytes: not a curve file");
    let json: Value = serde_json::from_str(&text).map_err(|e| anyhow::anyhow!("{what}: not JSON: {e}"))?;
    series_of(&json, &what)
}

/// `gpufec plot`: draw every curve file into one picture.
pub fn plot(a: &PlotArgs) -> anyhow::Result<()> {
    anyhow::ensure!(a.curves.len() <= MAX_CURVES, "{} curve files; a plot takes at most {MAX_CURVES}", a.curves.len());
    check_output(&a.output)?;
    let series = a.curves.iter().map(|p| read_series(p)).collect::<anyhow::Result<Vec<_>>>()?;
    render(&series, &a.output)?;
    println!("plot: {} of {} in {}", crate::codes::words::count_of(series.len() as u64, "curve"), crate::codes::words::count_of(series.iter().map(|s| s.points.len() as u64).sum::<u64>(), "point"), a.output.display());
    Ok(())
}

/// A picture's path: `.svg` or `.png`, in a place that can be written.
pub fn check_output(path: &Path) -> anyhow::Result<()> {
    draw::Kind::of(path)?;
    crate::files::check_writable(path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}
