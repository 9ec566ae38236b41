//! The figures a benchmark measures, kept as they are printed: every row of
//! every table with its figures and their units, for `gpufec bench ...
//! --json FILE` (rewritten after each row, so Ctrl-C keeps the rows measured
//! so far); and which row is being measured, on stderr, while it runs.
//!
//! Benches print in several layers (the CLI's CPU rows, each GPU launcher's
//! tables), so the record is process-wide, like stdout itself: a bench calls
//! [`measuring`] before a row and [`row`] once it has it, before printing it.
//! Nothing is kept unless [`start`] was called. Shared by every command; it
//! knows nothing of codes.

use serde::Serialize;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Mutex;

/// The JSON document's format name; a change in its shape changes the number.
pub const FORMAT: &str = "gpufec-bench/1";

/// One figure of a row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figure {
    /// What it measures, as the printed table heads it (`kernel-only`).
    pub name: String,
    /// The value, unrounded.
    pub value: f64,
    /// Its unit (`Gb/s`, `ms`, `GB/s`, `Mb/s`, `frames/s`).
    pub unit: String,
}

/// One printed row: its table, the row's own label, its figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// The table or section it belongs to.
    pub table: String,
    /// What the row measures (configuration, LLR type, threads ...).
    pub row: String,
    /// Its figures.
    pub figures: Vec<Figure>,
}

/// Where measurements are shown and kept.
struct Record {
    /// The whole document but its rows, written with them to `path`.
    head: serde_json::Map<String, serde_json::Value>,
    rows: Vec<Row>,
    path: Option<PathBuf>,
    /// Progress on stderr: rewritten in place on a terminal, plain lines otherwise.
    progress: Option<Progress>,
    /// A live progress line is on the terminal.
    shown: bool,
}

#[derive(Clone, Copy, PartialEq)]
enum Progress {
    Live,
    Lines,
}

static RECORD: Mutex<Option<Record>> = Mutex::new(None);

fn record() -> std::sync::MutexGuard<'static, Option<Record>> {
    // A bench thread that panicked mid-row leaves rows that are still whole.
    RECORD.lock().unwrap_or_else(|e| e.into_inner())
}

/// Start keeping rows for this process: written with `head` (the command,
/// the machine, the devices) to `path` after every row when one is given;
/// which row runs is shown on stderr unless `quiet`.
pub fn start(head: serde_json::Map<String, serde_json::Value>, path: Option<PathBuf>, quiet: bool) {
    let progress = (!quiet).then(|| if std::io::stderr().is_terminal() { Progress::Live } else { Progress::Lines });
    *record() = Some(Record { head, rows: Vec::new(), path, progress, shown: false });
}

/// Say on stderr which row is measured next (a long bench takes minutes).
pub fn measuring(what: &str) {
    let mut guard = record();
    let Some(r) = guard.as_mut() else { return };
    match r.progress {
        Some(Progress::Live) => {
            eprint!("\r\x1b[2Kmeasuring: {what}");
            let _ = std::io::stderr().flush();
            r.shown = true;
        }
        Some(Progress::Lines) => eprintln!("measuring: {what}"),
        None => {}
    }
}

/// Keep the row `row` of `table` with its `figures` (name, value, unit), and
/// rewrite the JSON file with it. Call it before printing the row: it clears
/// the live progress line first.
pub fn row(table: &str, row: impl Into<String>, figures: &[(&str, f64, &str)]) -> anyhow::Result<()> {
    let mut guard = record();
    let Some(r) = guard.as_mut() else { return Ok(()) };
    if r.shown {
        eprint!("\r\x1b[2K");
        r.shown = false;
    }
    let figures = figures.iter().map(|&(name, value, unit)| Figure { name: name.into(), value, unit: unit.into() }).collect();
    r.rows.push(Row { table: table.into(), row: row.into(), figures });
    if let Some(path) = &r.path {
        let mut doc = r.head.clone();
        doc.insert("rows".into(), serde_json::to_value(&r.rows)?);
        let text = serde_json::to_string_pretty(&doc)? + "\n";
        crate::files::replace(path, text.as_bytes()).map_err(|e| anyhow::anyhow!("--json: {e}"))?;
    }
    Ok(())
}

/// Stop keeping rows; the rows kept. A live progress line still shown is cleared.
pub fn finish() -> Vec<Row> {
    let Some(r) = record().take() else { return Vec::new() };
    if r.shown {
        eprint!("\r\x1b[2K");
    }
    r.rows
}

/// The head of a document: its format, what made it, and `fields`.
pub fn head(fields: impl IntoIterator<Item = (&'static str, serde_json::Value)>) -> serde_json::Map<String, serde_json::Value> {
    let mut m = serde_json::Map::new();
    m.insert("format".into(), FORMAT.into());
    m.insert("gpufec".into(), env!("CARGO_PKG_VERSION").into());
    m.extend(fields.into_iter().map(|(k, v)| (k.to_string(), v)));
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    // The record is process-wide: one test walks it through start, rows and finish.
    #[test]
    fn rows_are_kept_and_written_after_each() {
        assert!(row("t", "before start", &[]).is_ok());
        let dir = std::env::temp_dir().join(format!("gpufec-figures-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("bench.json");
        start(head([("command", "gpufec bench test".into())]), Some(path.clone()), true);
        measuring("row one");
        row("Headline", "serial i8", &[("kernel-only", 61.25, "Gb/s"), ("H2D", 1.5, "ms")]).unwrap();
        let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(doc["format"], FORMAT);
        assert_eq!(doc["command"], "gpufec bench test");
        assert_eq!(doc["rows"][0]["figures"][0]["value"], 61.25);
        assert_eq!(doc["rows"][0]["figures"][1]["unit"], "ms");
        row("Headline", "parallel i8", &[("kernel-only", f64::from(60u8), "Gb/s")]).unwrap();
        let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(doc["rows"].as_array().unwrap().len(), 2);
        let rows = finish();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].row, "parallel i8");
        assert!(finish().is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
