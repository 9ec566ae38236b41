//! The `gpufec` binary as a user meets it: each subcommand runs, and every
//! user error ends with a non-zero exit status and one line on stderr that
//! names what is wrong, never a panic.

use std::process::{Command, Output};

const SHIPPED: &str = "flowgraphs/viterbi_awgn.toml";

fn gpufec(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gpufec")).args(args).output().expect("the gpufec binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The run succeeded; its stdout.
fn ok(args: &[&str]) -> String {
    let o = gpufec(args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "gpufec {args:?} failed: {err}");
    assert!(!err.contains("panicked"), "gpufec {args:?}: {err}");
    stdout(&o)
}

/// The run failed with exit status 1 and one line `error: ...` holding every piece of `want`.
fn fails(args: &[&str], want: &[&str]) {
    let o = gpufec(args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "gpufec {args:?} should fail with status 1; stderr: {err}");
    assert!(err.starts_with("error: ") && err.trim_end().lines().count() == 1, "gpufec {args:?}: not one line: {err}");
    for w in want {
        assert!(err.contains(w), "gpufec {args:?}: {err:?} lacks {w:?}");
    }
}

/// A value the command-line parser rejects: status 2, its message first, no panic.
fn rejected(args: &[&str], want: &str) {
    let o = gpufec(args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "gpufec {args:?}: {err}");
    assert!(err.starts_with("error: ") && err.contains(want) && !err.contains("panicked"), "gpufec {args:?}: {err}");
}

fn no_gpu() -> bool {
    gpufec::gpu::available().is_err()
}

fn temp_file(name: &str, text: &str) -> String {
    let path = std::env::temp_dir().join(format!("gpufec-cli-{}-{name}", std::process::id()));
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn run_prints_the_backend_and_a_summary() {
    let out = ok(&["run", SHIPPED, "--set", "source.total=2e5", "--set", "vars.ebn0_db=3"]);
    assert!(out.contains("decoder 'decoder': backend "), "{out}");
    assert!(out.contains("summary: bits 200000, errors "), "{out}");
    assert!(out.contains("Mb/s"), "{out}");
    if no_gpu() {
        // auto says that it fell back to the CPU, and why.
        assert!(out.contains("backend cpu (no GPU: "), "{out}");
    }
    let out = ok(&["run", SHIPPED, "--backend", "cpu", "--set", "source.total=1e5"]);
    assert!(out.contains("backend cpu;"), "{out}");
}

#[test]
fn run_rejects_bad_files_and_settings_in_one_line() {
    fails(&["run", "no/such/file.toml"], &["no/such/file.toml"]);
    fails(&["run", SHIPPED, "--set", "awgn.snr=3"], &[SHIPPED, "block 'awgn'", "unknown field 'snr'"]);
    fails(&["run", SHIPPED, "--set", "awgn.ebn0_db=high"], &[SHIPPED, "block 'awgn'", "field 'ebn0_db'", "expected a number"]);
    fails(&["run", SHIPPED, "--set", "decoder.llr=f32"], &[SHIPPED, "framer.output carries i8 but decoder.input takes f32"]);
    rejected(&["run", SHIPPED, "--set", "noblock"], "block.param=value");
    rejected(&["run", SHIPPED, "--backend", "tpu"], "backend 'tpu' is not one of auto, cpu, gpu");
    let unknown = temp_file("unknown.toml", "[blocks.src]\ntype = \"Oscillator\"\n");
    fails(&["run", &unknown], &[&unknown, "block 'src'", "unknown block type 'Oscillator'"]);
    let malformed = temp_file("malformed.toml", "[blocks.src\ntype = \"RandomBits\"\n");
    fails(&["run", &malformed], &[&malformed, ":1:", "malformed TOML"]);
    if no_gpu() {
        fails(&["run", SHIPPED, "--backend", "gpu"], &["--backend gpu: "]);
    }
}

#[test]
fn ber_writes_json_with_every_field() {
    let json = temp_file("curve.json", "");
    let out = ok(&[
        "ber", "conv", "--k", "7", "--polys", "171,133", "--rate", "2/3", "--mode", "streaming", "--tile",
        "64,20,30", "--traceback", "parallel:16", "--ebn0", "3:1:4", "--max-bits", "5e4", "--max-errors", "1e3",
        "--seed", "9", "--backend", "cpu", "--json", &json,
    ]);
    assert_eq!(out.lines().filter(|l| l.starts_with("Eb/N0")).count(), 2, "{out}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["rate"], "2/3");
    assert_eq!(v["traceback"], "parallel:16");
    assert_eq!(v["seed"], 9);
    let points = v["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    for (p, ebn0) in points.iter().zip([3.0, 4.0]) {
        assert_eq!(p["ebn0_db"], ebn0);
        assert!(p["bits"].as_u64().unwrap() >= 50_000, "{p}");
        for field in ["bit_errors", "frames", "frame_errors", "ber", "fer", "seconds"] {
            assert!(p[field].is_number(), "point lacks {field}: {p}");
        }
    }
    let out = ok(&["ber", "conv", "--mode", "terminated", "--frame", "500", "--ebn0", "4", "--max-bits", "2e4"]);
    assert!(out.contains("20000 bits") && out.contains("40 frames"), "{out}");
}

#[test]
fn ber_rejects_bad_options_in_one_line() {
    let ber = |more: &[&'static str]| [&["ber", "conv", "--ebn0", "4"], more].concat();
    fails(&ber(&["--rate", "4/5"]), &["--rate", "4/5"]);
    fails(&ber(&["--k", "12"]), &["--k", "K=12"]);
    fails(&ber(&["--polys", "171,9"]), &["--k/--polys"]);
    fails(&ber(&["--tile", "0,20,20"]), &["--tile", "f=0"]);
    fails(&ber(&["--traceback", "parallel:0"]), &["--traceback", "f0=0"]);
    fails(&ber(&["--tile", "64,20,20", "--traceback", "parallel:65"]), &["--traceback", "f0=65"]);
    fails(&ber(&["--json", "/no/such/dir/curve.json"]), &["--json", "/no/such/dir/curve.json"]);
    if no_gpu() {
        fails(&ber(&["--backend", "gpu"]), &["--backend gpu: "]);
    }
    rejected(&ber(&["--max-bits", "1.5"]), "'1.5' is not a count");
    rejected(&["ber", "conv", "--ebn0", "1:x:3"], "Eb/N0 'x'");
    rejected(&["ber", "turbo", "--ebn0", "1"], "turbo");
}

#[test]
fn info_and_bench_run() {
    let out = ok(&["info"]);
    assert!(out.contains("CPU decoders run at SIMD level"), "{out}");
    if no_gpu() {
        assert!(out.contains("no GPU"), "{out}");
        fails(&["bench", "viterbi", "--backend", "gpu"], &["--backend gpu: "]);
    }
    let out = ok(&["bench", "viterbi", "--backend", "cpu", "--bits", "3e4", "--seconds", "0", "--threads", "1"]);
    for setup in ["tiled f=256 v1=20 v2=20 serial", "tiled f=256 v1=20 v2=45 parallel:32", "frames of 2048, terminated"] {
        for llr in ["i8", "f32"] {
            let row = out.lines().find(|l| l.starts_with(setup) && l.contains(&format!(" {llr} LLRs")));
            assert!(row.is_some(), "no row for {setup}, {llr}: {out}");
        }
    }
    fails(&["bench", "viterbi", "--mode", "terminated", "--tile", "64,8,8"], &["--tile"]);
    fails(&["bench", "viterbi", "--tile", "64,8"], &["--tile", "64,8"]);
}
