//! Drawing curves with plotters: BER (solid, circles) and FER (dashed,
//! triangles) per series on a log axis, 95 % Wilson intervals where few
//! errors were counted, zero-error points as arrows down from their upper
//! bound, uncoded BPSK and the BPSK limit of each code's rate on Eb/N0 axes,
//! and the mean iterations beneath for iterative decoders. Text uses the
//! embedded DejaVu Sans, so no system font library is needed.

use super::theory::{bpsk_limit_db, uncoded_bpsk_ber, wilson};
use super::{PlotPoint, Series};
use image::ImageEncoder;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;

/// Picture size in pixels.
const SIZE: (u32, u32) = (1000, 700);
/// Points with fewer errors than this get an interval.
const FEW_ERRORS: u64 = 100;
/// Colours of the series, in order.
const COLOURS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];

/// What the picture is written as.
pub(super) enum Kind {
    Svg,
    Png,
}

impl Kind {
    /// By the path's extension.
    pub(super) fn of(path: &Path) -> anyhow::Result<Self> {
        match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
            Some("svg") => Ok(Kind::Svg),
            Some("png") => Ok(Kind::Png),
            _ => anyhow::bail!("{}: a plot is written as .svg or .png", path.display()),
        }
    }
}

/// Where the error-rate panel drew: its pixel area and the values at its
/// edges (x on the axis, or log10 of a probability axis; y as log10 of the
/// rate), so that a reader of the picture can map its points back.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    /// Pixels of the plotting area, x then y (y grows downwards).
    pub pixels: (std::ops::Range<i32>, std::ops::Range<i32>),
    /// Values at its left and right edges.
    pub x: (f64, f64),
    /// log10 of the rates at its bottom and top edges.
    pub log_y: (f64, f64),
    /// Whether x is log10 of the axis value (a probability axis).
    pub log_x: bool,
}

fn register_font() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // The font is the binary's own, checked by the tests: it parses.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, include_bytes!("../../../assets/fonts/DejaVuSans.ttf"));
    });
}

/// Draw `series` (at least one, on one axis) into `path`, replacing it
/// whole; the layout of the error-rate panel.
pub fn render(series: &[Series], path: &Path) -> anyhow::Result<Layout> {
    anyhow::ensure!(!series.is_empty(), "no curve to draw");
    let axis = &series[0].axis;
    if let Some(other) = series.iter().find(|s| s.axis.0 != axis.0) {
        anyhow::bail!("the curves have different axes ({} and {}): draw them apart", axis.0, other.axis.0);
    }
    register_font();
    let (bytes, layout) = match Kind::of(path)? {
        Kind::Svg => {
            let mut text = String::new();
            let layout = draw(series, SVGBackend::with_string(&mut text, SIZE).into_drawing_area())?;
            (text.into_bytes(), layout)
        }
        Kind::Png => {
            let mut rgb = vec![0u8; (SIZE.0 * SIZE.1 * 3) as usize];
            let layout = draw(series, BitMapBackend::with_buffer(&mut rgb, SIZE).into_drawing_area())?;
            let mut png = Vec::new();
            image::codecs::png::PngEncoder::new(&mut png)
                .write_image(&rgb, SIZE.0, SIZE.1, image::ColorType::Rgb8)
                .map_err(|e| anyhow::anyhow!("encoding {}: {e}", path.display()))?;
            (png, layout)
        }
    };
    crate::files::replace(path, &bytes)?;
    Ok(layout)
}

/// An x tick's text: the axis value, or 10^x on a probability axis.
fn x_tick(x: f64, log_x: bool) -> String {
    // `+ 0.0` turns a rounding's -0 into 0.
    if log_x { format!("{:.1e}", 10f64.powf(x)) } else { format!("{:.1}", x + 0.0) }
}

/// A plotters error as ours.
fn failed<E: std::fmt::Debug>(e: E) -> anyhow::Error {
    anyhow::anyhow!("drawing the plot: {e:?}")
}

fn draw<DB: DrawingBackend>(series: &[Series], root: DrawingArea<DB, Shift>) -> anyhow::Result<Layout> {
    root.fill(&WHITE).map_err(failed)?;
    let (_, label, unit) = &series[0].axis;
    let ebn0 = unit == "dB";
    let log_x = !ebn0 && series.iter().flat_map(|s| &s.points).all(|p| p.x > 0.0);
    let fx = |x: f64| if log_x { x.log10() } else { x };
    let iterative = series.iter().any(|s| s.points.iter().any(|p| p.mean_iterations.is_some()));
    let (top, bottom) = if iterative {
        let (t, b) = root.split_vertically(SIZE.1 * 70 / 100);
        (t, Some(b))
    } else {
        (root.clone(), None)
    };

    // The x range: the points, and the limit lines of an Eb/N0 axis.
    let limits: Vec<(f64, f64)> = if ebn0 { series.iter().filter_map(|s| s.rate).filter_map(|r| Some((r, bpsk_limit_db(r)?))).collect() } else { Vec::new() };
    let xs = series.iter().flat_map(|s| s.points.iter().map(|p| fx(p.x))).chain(limits.iter().map(|l| l.1));
    let (mut x0, mut x1) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| (a.min(x), b.max(x)));
    let pad = ((x1 - x0) * 0.05).max(0.25);
    (x0, x1) = (x0 - pad, x1 + pad);

    // The y range: every rate, interval end and bound drawn, in decades.
    let mut lowest: f64 = 0.1;
    for p in series.iter().flat_map(|s| &s.points) {
        for (k, n) in [(p.bit_errors, p.bits), (p.frame_errors, p.frames)] {
            if n > 0 {
                let (lo, hi) = wilson(k, n);
                lowest = lowest.min(if k == 0 { hi / 3.0 } else { lo.max(k as f64 / n as f64 / 3.0) });
            }
        }
    }
    let log_y = ((lowest.max(1e-15)).log10().floor(), 0.0);
    let y_range = (10f64.powf(log_y.0), 1.0);

    let x_name = if unit.is_empty() { label.clone() } else { format!("{label} ({unit})") };
    let mut chart = ChartBuilder::on(&top)
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(x0..x1, (y_range.0..y_range.1).log_scale())
        .map_err(failed)?;
    chart
        .configure_mesh()
        .x_desc(if log_x { format!("{x_name}, log") } else { x_name })
        .y_desc("BER (solid), FER (dashed)")
        .x_label_formatter(&|x| x_tick(*x, log_x))
        .y_label_formatter(&|y| format!("{y:.0e}"))
        .label_style(("sans-serif", 15))
        .axis_desc_style(("sans-serif", 17))
        .draw()
        .map_err(failed)?;

    if ebn0 {
        let steps = 400;
        let uncoded = (0..=steps).map(|i| x0 + (x1 - x0) * i as f64 / steps as f64).map(|x| (x, uncoded_bpsk_ber(x))).filter(|&(_, y)| y >= y_range.0);
        chart
            .draw_series(LineSeries::new(uncoded, BLACK.mix(0.5).stroke_width(1)))
            .map_err(failed)?
            .label("uncoded BPSK")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], BLACK.mix(0.5)));
        let mut named = Vec::new();
        for &(rate, db) in &limits {
            if named.iter().any(|&r: &f64| (r - rate).abs() < 1e-9) {
                continue;
            }
            named.push(rate);
            chart
                .draw_series(DashedLineSeries::new([(db, y_range.0), (db, 1.0)], 3, 5, BLACK.mix(0.6).stroke_width(1)))
                .map_err(failed)?
                .label(format!("BPSK limit, rate {rate:.3} ({db:.2} dB)"))
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 6, y), (x + 12, y), (x + 24, y)], BLACK.mix(0.6)));
        }
    }

    for (i, s) in series.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let counted = |p: &PlotPoint, k: u64, n: u64| (n > 0 && k > 0).then(|| (fx(p.x), k as f64 / n as f64));
        let ber: Vec<(f64, f64)> = s.points.iter().filter_map(|p| counted(p, p.bit_errors, p.bits)).collect();
        let fer: Vec<(f64, f64)> = s.points.iter().filter_map(|p| counted(p, p.frame_errors, p.frames)).collect();
        chart
            .draw_series(LineSeries::new(ber.clone(), colour.stroke_width(2)))
            .map_err(failed)?
            .label(s.label.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], colour.stroke_width(2)));
        chart.draw_series(ber.iter().map(|&p| Circle::new(p, 4, colour.filled()))).map_err(failed)?;
        chart.draw_series(DashedLineSeries::new(fer.clone(), 7, 4, colour.stroke_width(2))).map_err(failed)?;
        chart.draw_series(fer.iter().map(|&p| TriangleMarker::new(p, 5, colour.filled()))).map_err(failed)?;
        for p in &s.points {
            for (k, n) in [(p.bit_errors, p.bits), (p.frame_errors, p.frames)] {
                if n == 0 {
                    continue;
                }
                let (lo, hi) = wilson(k, n);
                let x = fx(p.x);
                if k == 0 {
                    // No error counted: the rate is below `hi`; an arrow down from it.
                    let tip = hi / 3.0;
                    let head = (tip * 1.6, (x1 - x0) / 150.0);
                    let arrow = vec![(x, hi), (x, tip), (x - head.1, head.0), (x, tip), (x + head.1, head.0)];
                    chart.draw_series(std::iter::once(PathElement::new(arrow, colour.stroke_width(2)))).map_err(failed)?;
                } else if k < FEW_ERRORS {
                    let mid = k as f64 / n as f64;
                    chart.draw_series(std::iter::once(ErrorBar::new_vertical(x, lo.max(y_range.0), mid, hi, colour.stroke_width(1), 8))).map_err(failed)?;
                }
            }
        }
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.4))
        .label_font(("sans-serif", 14))
        .position(SeriesLabelPosition::LowerLeft)
        .draw()
        .map_err(failed)?;
    let layout = Layout { pixels: chart.plotting_area().get_pixel_range(), x: (x0, x1), log_y, log_x };

    if let Some(bottom) = bottom {
        let most = series.iter().flat_map(|s| &s.points).filter_map(|p| p.mean_iterations).fold(1.0f64, f64::max);
        let mut it = ChartBuilder::on(&bottom)
            .margin(15)
            .x_label_area_size(35)
            .y_label_area_size(70)
            .build_cartesian_2d(x0..x1, 0.0..most * 1.15)
            .map_err(failed)?;
        it.configure_mesh()
            .y_desc("mean iterations")
            .x_label_formatter(&|x| x_tick(*x, log_x))
            .label_style(("sans-serif", 15))
            .axis_desc_style(("sans-serif", 17))
            .draw()
            .map_err(failed)?;
        for (i, s) in series.iter().enumerate() {
            let colour = COLOURS[i % COLOURS.len()];
            let pts: Vec<(f64, f64)> = s.points.iter().filter_map(|p| Some((fx(p.x), p.mean_iterations?))).collect();
            it.draw_series(LineSeries::new(pts.clone(), colour.stroke_width(2))).map_err(failed)?;
            it.draw_series(pts.iter().map(|&p| Circle::new(p, 3, colour.filled()))).map_err(failed)?;
        }
    }
    root.present().map_err(failed)?;
    Ok(layout)
}
