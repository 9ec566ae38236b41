//! Error-rate plots: a curve's points are where its JSON says (read back
//! from the SVG), every format draws, and bad curve files and paths get one
//! clear line each.

mod common;

use common::{fresh_dir, gpufec, refused};
use gpufec::cli::plot::{read_series, render};
use std::path::{Path, PathBuf};

fn dir(name: &str) -> PathBuf {
    fresh_dir("plot", name)
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

fn fails(args: &[&str], want: &[&str]) {
    refused(&gpufec(args), want);
}

/// The centres of the filled circles of an SVG: the BER markers (an
/// interval's middle is a hollow one).
fn circles(svg: &str) -> Vec<(f64, f64)> {
    let attr = |tag: &str, name: &str| -> f64 {
        let at = tag.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
        tag[at..].split('"').next().unwrap().parse().unwrap()
    };
    svg.split("<circle").skip(1).filter(|t| !t.split('>').next().unwrap().contains("fill=\"none\"")).map(|t| (attr(t, "cx"), attr(t, "cy"))).collect()
}

#[test]
fn a_curves_points_are_where_its_json_says() {
    let d = dir("points");
    let (json, svg, png) = (d.join("c.json"), d.join("c.svg"), d.join("c.png"));
    let o = gpufec(&["ber", "conv", "--ebn0", "1:1:3", "--max-bits", "2e5", "--json", &s(&json), "--plot", &s(&png)]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(&std::fs::read(&png).unwrap()[1..4], b"PNG");
    let series = read_series(&json).unwrap();
    let layout = render(std::slice::from_ref(&series), &svg).unwrap();
    let text = std::fs::read_to_string(&svg).unwrap();
    let found = circles(&text);
    let (px, py) = &layout.pixels;
    let value = |(cx, cy): (f64, f64)| {
        let x = layout.x.0 + (cx - px.start as f64) / (px.end - px.start) as f64 * (layout.x.1 - layout.x.0);
        let log_y = layout.log_y.1 - (cy - py.start as f64) / (py.end - py.start) as f64 * (layout.log_y.1 - layout.log_y.0);
        (x, log_y)
    };
    // Every point with errors is drawn once, at its BER, within a pixel.
    let (dx, dy) = ((layout.x.1 - layout.x.0) / (px.end - px.start) as f64, (layout.log_y.1 - layout.log_y.0) / (py.end - py.start) as f64);
    let want: Vec<(f64, f64)> = series.points.iter().filter(|p| p.bit_errors > 0).map(|p| (p.x, (p.bit_errors as f64 / p.bits as f64).log10())).collect();
    assert_eq!(found.len(), want.len(), "{found:?}");
    for (&(x, y), &c) in want.iter().zip(&found) {
        let (gx, gy) = value(c);
        assert!((gx - x).abs() <= 1.5 * dx && (gy - y).abs() <= 1.5 * dy, "point ({x}, 1e{y}) drawn at ({gx}, 1e{gy})");
    }
    // The legend names the code and the reference lines.
    assert!(text.contains("K=7 (171,133) rate 1/2") && text.contains("uncoded BPSK") && text.contains("BPSK limit, rate 0.500 (0.19 dB)"), "legend");
    // `plot` redraws it from the file, and two curves in one picture.
    let both = d.join("both.svg");
    let o = gpufec(&["plot", &s(&json), &s(&json), "-o", &s(&both)]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(circles(&std::fs::read_to_string(&both).unwrap()).len(), 2 * want.len());
}

#[test]
fn bad_curve_files_and_paths_are_refused() {
    let d = dir("bad");
    let json = d.join("c.json");
    let o = gpufec(&["ber", "conv", "--ebn0", "3", "--max-bits", "1e4", "--json", &s(&json)]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = s(&d.join("p.svg"));
    fails(&["plot", &s(&json), "-o", "/nonexistent/dir/p.svg"], &["/nonexistent/dir/p.svg"]);
    fails(&["plot", &s(&json), "-o", &s(&d.join("p.jpg"))], &["p.jpg: a plot is written as .svg or .png"]);
    let other = d.join("other.json");
    std::fs::write(&other, "{\"name\": \"a curve of another tool\", \"data\": [1, 2]}").unwrap();
    fails(&["plot", &s(&other), "-o", &out], &["other.json: not a gpufec curve of format gpufec-curve/1 (it names no format)"]);
    let older = d.join("older.json");
    std::fs::write(&older, "{\"format\": \"gpufec-curve/0\", \"points\": []}").unwrap();
    fails(&["plot", &s(&older), "-o", &out], &["its format is gpufec-curve/0"]);
    let empty = d.join("empty.json");
    let text = std::fs::read_to_string(&json).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["points"] = serde_json::json!([]);
    std::fs::write(&empty, v.to_string()).unwrap();
    fails(&["plot", &s(&empty), "-o", &out], &["empty.json: the curve has no points: nothing to draw"]);
    let garbage = d.join("garbage.json");
    std::fs::write(&garbage, "not json at all").unwrap();
    fails(&["plot", &s(&garbage), "-o", &out], &["garbage.json: not JSON"]);
    let many: Vec<String> = (0..17).map(|_| s(&json)).collect();
    let mut args = vec!["plot"];
    args.extend(many.iter().map(String::as_str));
    args.extend(["-o", &out]);
    fails(&args, &["17 curve files; a plot takes at most 16"]);
    fails(&["ber", "conv", "--ebn0", "3", "--plot", "/nonexistent/dir/p.png"], &["--plot"]);
    assert!(!Path::new(&out).exists(), "a refused plot wrote its file");
}

/// A curve file too large to be one, a negative or missing count, a
/// non-finite axis value and a directory: one line each, nothing written.
#[test]
fn huge_negative_and_odd_curve_files_are_refused() {
    let d = dir("hostile");
    let out = s(&d.join("p.svg"));
    let huge = d.join("huge.json");
    std::fs::write(&huge, vec![b' '; (16 << 20) + 1]).unwrap();
    fails(&["plot", &s(&huge), "-o", &out], &["huge.json: larger than 16777216 bytes"]);
    let curve = |point: &str| {
        format!("{{\"format\": \"gpufec-curve/1\", \"axis\": {{\"key\": \"ebn0_db\", \"label\": \"Eb/N0\", \"unit\": \"dB\"}}, \"points\": [{point}]}}")
    };
    let negative = d.join("negative.json");
    std::fs::write(&negative, curve("{\"ebn0_db\": 1, \"bits\": -5, \"bit_errors\": 0, \"frames\": 1, \"frame_errors\": 0}")).unwrap();
    fails(&["plot", &s(&negative), "-o", &out], &["point 0 has no count 'bits'"]);
    let no_x = d.join("nox.json");
    std::fs::write(&no_x, curve("{\"ebn0_db\": null, \"bits\": 5, \"bit_errors\": 0, \"frames\": 1, \"frame_errors\": 0}")).unwrap();
    fails(&["plot", &s(&no_x), "-o", &out], &["point 0 has no finite 'ebn0_db'"]);
    let more = d.join("more.json");
    std::fs::write(&more, curve("{\"ebn0_db\": 1, \"bits\": 5, \"bit_errors\": 6, \"frames\": 1, \"frame_errors\": 0}")).unwrap();
    fails(&["plot", &s(&more), "-o", &out], &["more errors than bits"]);
    fails(&["plot", &s(&d), "-o", &out], &[&s(&d)]);
    assert!(!Path::new(&out).exists(), "a refused plot wrote its file");
}
