//! The `gpufec` binary as a user meets it: each subcommand runs, and every
//! user error ends with a non-zero exit status and one line on stderr that
//! names what is wrong, never a panic.

mod common;

use common::{Watched, counted, gpufec, interrupted, interrupted_by};
use std::process::Output;

const SHIPPED: &str = "flowgraphs/viterbi_awgn.toml";
/// The same chain with the channel as separate sample-level blocks.
const SAMPLES: &str = "flowgraphs/viterbi_awgn_samples.toml";

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
    common::refused(&gpufec(args), want);
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
    // Under target/ (cargo's directory for tests' files), not left in /tmp.
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("gpufec-cli-{}-{name}", std::process::id()));
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

/// `run --json FILE` writes the summary's figures, equal to its printed
/// lines; it may not be a file of the run, and is checked before the run.
#[test]
fn run_json_holds_the_summary() {
    let json = std::env::temp_dir().join(format!("gpufec-cli-{}-run.json", std::process::id()));
    let json_arg = json.display().to_string();
    let out = ok(&["run", SHIPPED, "--backend", "cpu", "--set", "source.total=2e5", "--profile", "--json", &json_arg]);
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["format"], "gpufec-run/1");
    let ber = &doc["ber"][0];
    let (bits, errors) = (ber["bits"].as_u64().unwrap(), ber["bit_errors"].as_u64().unwrap());
    assert!(out.contains(&format!("summary: bits {bits}, errors {errors}, ")), "{out}\n{doc}");
    assert_eq!(bits, 200_000, "{doc}");
    let (low, high) = (ber["ber_95"][0].as_f64().unwrap(), ber["ber_95"][1].as_f64().unwrap());
    assert!(low <= ber["ber"].as_f64().unwrap() && ber["ber"].as_f64().unwrap() <= high, "{doc}");
    assert_eq!(doc["decoders"][0]["backend"], "cpu");
    assert_eq!(doc["decoders"][0]["bits"].as_u64(), Some(200_000), "{doc}");
    assert!(doc["blocks"].as_array().is_some_and(|b| !b.is_empty()), "--profile's blocks: {doc}");
    assert_eq!(doc["interrupted"], false);
    let _ = std::fs::remove_file(&json);
    // Not the flowgraph file, not a directory, not where nothing can be written.
    let copy = temp_file("run-json-input.toml", &std::fs::read_to_string(SHIPPED).unwrap());
    let before = std::fs::read_to_string(&copy).unwrap();
    fails(&["run", &copy, "--json", &copy], &["--json would write", "the flowgraph file"]);
    assert_eq!(std::fs::read_to_string(&copy).unwrap(), before, "the flowgraph file was touched");
    fails(&["run", SHIPPED, "--json", "/nonexistent-dir/run.json"], &["--json", "/nonexistent-dir"]);
    fails(&["run", SHIPPED, "--json", "/tmp"], &["--json", "is a directory"]);
}

#[test]
fn run_rejects_bad_files_and_settings_in_one_line() {
    fails(&["run", "no/such/file.toml"], &["no/such/file.toml"]);
    fails(&["run", SAMPLES, "--set", "awgn.snr=3"], &[SAMPLES, "block 'awgn'", "unknown field 'snr'"]);
    fails(&["run", SAMPLES, "--set", "awgn.ebn0_db=high"], &[SAMPLES, "block 'awgn'", "field 'ebn0_db'", "expected a number"]);
    fails(&["run", SHIPPED, "--set", "decoder.llr=f32"], &[SHIPPED, "depuncture.output carries i8 but decoder.input takes f32"]);
    rejected(&["run", SHIPPED, "--set", "noblock"], "block.param=value");
    rejected(&["run", SHIPPED, "--backend", "tpu"], "backend 'tpu' is not one of auto, cpu, gpu");
    let unknown = temp_file("unknown.toml", "[blocks.src]\ntype = \"Oscillator\"\n");
    fails(&["run", &unknown], &[&unknown, "block 'src'", "unknown block type 'Oscillator'"]);
    let malformed = temp_file("malformed.toml", "[blocks.src\ntype = \"RandomBits\"\n");
    fails(&["run", &malformed], &[&malformed, ":1:", "malformed TOML"]);
    fails(&["run", SHIPPED, "--set", "channel.backend=tpu"], &[SHIPPED, "block 'channel'", "field 'backend'"]);
    for bad in ["5000", "-1", "nan", "\"\""] {
        fails(&["run", SHIPPED, "--set", &format!("channel.gpu_device={bad}")], &[SHIPPED, "block 'channel'", "field 'gpu_device'"]);
    }
    fails(&["run", SHIPPED, "--set", "channel.backend=\"\""], &[SHIPPED, "block 'channel'", "field 'backend'"]);
    if no_gpu() {
        fails(&["run", SHIPPED, "--backend", "gpu"], &["--backend gpu: "]);
        // The channel on a GPU that is not there: its own field is named.
        fails(&["run", SHIPPED, "--set", "channel.backend=gpu", "--set", "decoder.backend=cpu"], &[SHIPPED, "block 'channel'", "field 'backend': gpu: "]);
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
    assert_eq!(v["code"], "conv");
    assert_eq!((v["settings"]["rate"].as_str(), v["settings"]["traceback"].as_str()), (Some("2/3"), Some("parallel:16")));
    assert_eq!(v["describe"], "K=7 (171,133) rate 2/3, tiles 64,20,30 parallel:16 ×64, depunctured by the decoder");
    assert_eq!(v["seed"], 9);
    assert_eq!(v["channel"], "host");
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
    fails(&ber(&["--k", "12"]), &["--k", "12 is outside 3..=9"]);
    fails(&ber(&["--polys", "171,9"]), &["--polys", "'9'"]);
    fails(&ber(&["--tile", "0,20,20"]), &["--tile", "f=0"]);
    fails(&ber(&["--traceback", "parallel:0"]), &["--traceback", "f0=0"]);
    fails(&ber(&["--tile", "64,20,20", "--traceback", "parallel:65"]), &["--traceback", "f0=65"]);
    fails(&ber(&["--json", "/no/such/dir/curve.json"]), &["--json", "/no/such/dir/curve.json"]);
    if no_gpu() {
        fails(&ber(&["--backend", "gpu"]), &["--backend gpu: "]);
    }
    rejected(&ber(&["--max-bits", "1.5"]), "'1.5' is not a count");
    rejected(&["ber", "conv", "--ebn0", "1:x:3"], "Eb/N0 'x'");
    rejected(&["ber", "ldpc", "--ebn0", "1"], "ldpc");
    // Where the channel runs: the device wants a GPU, and a family with a device link.
    fails(&ber(&["--channel", "device", "--backend", "cpu"]), &["--channel device", "--backend cpu"]);
    fails(&["ber", "polar", "--ebn0", "2", "--k", "40", "--e", "100", "--algorithm", "scl:8", "--channel", "device", "--backend", "gpu"], &["--channel device", "SCL L=8 runs on the host"]);
    fails(&["ber", "polar", "--ebn0", "2", "--algorithm", "sc", "--channel", "device", "--backend", "gpu"], &["--channel device", "SC runs on the host"]);
    if no_gpu() {
        fails(&ber(&["--channel", "device"]), &["--channel device: "]);
    }
    rejected(&ber(&["--channel", "gpu"]), "'gpu'");
    // Device lists: checked as given, and against the devices found.
    rejected(&ber(&["--gpu-devices", "0,0"]), "device 0 is listed twice");
    rejected(&ber(&["--gpu-devices", ""]), "an empty device list");
    rejected(&["bench", "conv", "--backend", "gpu", "--gpu-devices", "one"], "'one' is not a device index");
    fails(&["bench", "conv", "--backend", "cpu", "--gpu-devices", "0"], &["--gpu-devices apply to the GPU"]);
    fails(&["bench", "conv", "--take-out"], &["--take-out applies to several GPUs", "--gpu-devices"]);
    if no_gpu() {
        fails(&ber(&["--backend", "gpu", "--gpu-devices", "0,1", "--channel", "host"]), &["--backend gpu"]);
    }
}

#[test]
fn info_and_bench_run() {
    let out = ok(&["info"]);
    assert!(out.contains("CPU decoders run at SIMD level"), "{out}");
    if no_gpu() {
        assert!(out.contains("no GPU"), "{out}");
        fails(&["bench", "conv", "--backend", "gpu"], &["--backend gpu: "]);
    }
    let out = ok(&["bench", "conv", "--backend", "cpu", "--bits", "3e4", "--seconds", "0", "--threads", "1"]);
    for setup in ["tiled f=256 v1=20 v2=20 serial", "tiled f=256 v1=20 v2=45 parallel:32", "frames of 2048, terminated"] {
        for llr in ["i8", "f32"] {
            let row = out.lines().find(|l| l.starts_with(setup) && l.contains(&format!(" {llr} LLRs")));
            assert!(row.is_some(), "no row for {setup}, {llr}: {out}");
        }
    }
    // Each row says how many bits it decoded: whole units, not the bits asked.
    let out = ok(&["bench", "conv", "--backend", "cpu", "--bits", "1", "--seconds", "0", "--threads", "1", "--llr", "i8"]);
    assert!(out.contains("1 information bit asked per repetition"), "{out}");
    let bits_of = |setup: &str| -> u64 {
        let row = out.lines().find(|l| l.starts_with(setup)).unwrap_or_else(|| panic!("no row for {setup}: {out}"));
        row[setup.len()..].split_whitespace().nth(2).and_then(|b| b.parse().ok()).unwrap_or_else(|| panic!("no bits/rep in {row}"))
    };
    assert_eq!(bits_of("frames of 2048, terminated"), 2048, "{out}");
    assert_eq!(bits_of("tiled f=256 v1=20 v2=20 serial"), 256 * 64, "{out}");
    fails(&["bench", "conv", "--mode", "terminated", "--tile", "64,8,8"], &["--tile"]);
    fails(&["bench", "conv", "--tile", "64,8"], &["--tile", "64,8"]);
    // A punctured rate: its default tile, the erasures put back by the decoder.
    let out = ok(&["bench", "conv", "--rate", "3/4", "--llr", "i8", "--bits", "3e4", "--seconds", "0", "--threads", "1"]);
    assert!(out.contains("rate 3/4") && out.contains("tiled f=255 v1=32 v2=40 serial") && out.contains("depuncturing '101,110'"), "{out}");
    // Any code the settings describe: rate 1/3 (133,171,165).
    let out = ok(&["bench", "conv", "--rate", "1/3", "--llr", "f32", "--bits", "3e4", "--seconds", "0", "--threads", "1", "--mode", "terminated"]);
    assert!(out.contains("K=7 (133,171,165) rate 1/3, terminated frames of 2048") && out.contains("frames of 2048, terminated"), "{out}");
    fails(&["bench", "conv", "--rate", "5/9"], &["--rate", "5/9"]);
}

/// What a new user tried that once crashed, hung or lied: each is now one
/// clear error naming the option or field, or works as written.
#[test]
fn hostile_inputs_get_clear_errors() {
    fails(&["bench", "conv", "--seconds", "1e30", "--bits", "1e4"], &["--seconds", "3600"]);
    fails(&["bench", "conv", "--seconds", "-1"], &["--seconds"]);
    fails(&["bench", "conv", "--bits", "1e12"], &["--bits 1000000000000", "at most 268435456"]);
    fails(&["bench", "conv", "--threads", "1e7", "--bits", "1e4"], &["--threads 10000000", "1..=1024"]);
    fails(&["bench", "conv", "--slots", "1e3", "--bits", "1e4"], &["--slots 1000", "1..=16"]);
    fails(&["ber", "conv", "--ebn0", "4", "--group", "1e7"], &["--group", "exceeds the limit"]);
    // Sizes whose sum or count would wrap around are refused, not wrapped.
    fails(&["ber", "conv", "--ebn0", "3", "--tile", "1,18446744073709551615,1"], &["--tile", "exceeds the limit of 65536"]);
    rejected(&["ber", "conv", "--ebn0", "0:1e-300:1"], "at most 1000");
    // A long list is echoed once (by the option's error), not twice.
    let long: Vec<String> = (0..2000).map(|i| format!("{}.{:02}", i / 100, i % 100)).collect();
    let long = long.join(",");
    rejected(&["ber", "conv", "--ebn0", &long], "Eb/N0 list has 2000 points; at most 1000");
    let err = String::from_utf8_lossy(&gpufec(&["ber", "conv", "--ebn0", &long]).stderr).to_string();
    assert_eq!(err.matches("19.98,19.99").count(), 1, "{err}");
    // Every point is checked before the first runs; options that do not apply are refused.
    fails(&["ber", "conv", "--ebn0", "3,100", "--max-bits", "1e4"], &["--ebn0", "100 dB is outside"]);
    let o = gpufec(&["ber", "conv", "--ebn0", "3,100", "--max-bits", "1e4"]);
    assert!(!stdout(&o).contains("Eb/N0"), "the good point ran before the bad one was refused: {}", stdout(&o));
    fails(&["ber", "conv", "--ebn0", "3", "--k", "3"], &["--k", "K=3", "polys"]);
    fails(&["ber", "conv", "--ebn0", "3", "--mode", "terminated", "--group", "5"], &["--group", "not to mode terminated"]);
    fails(&["bench", "conv", "--backend", "cpu", "--slots", "4", "--bits", "1e4"], &["--slots", "the GPU"]);
    fails(&["bench", "polar", "--backend", "cpu", "--batch-units", "4", "--bits", "1e4"], &["--batch-units", "the GPU"]);
    // Counts as people write them are accepted everywhere.
    let out = ok(&["ber", "conv", "--ebn0", "4", "--seed", "1e7", "--max-bits", "2e4", "--backend", "cpu"]);
    assert!(out.contains("20000 bits"), "{out}");
    // A file that never ends is refused at its size limit, not read into memory.
    fails(&["run", "/dev/zero"], &["/dev/zero", "longer than 1048576 bytes"]);
    // Sizes in a flowgraph file are checked against their limits, and errors
    // name the field at fault.
    fails(&["run", SHIPPED, "--set", "conv.k=1e9"], &["code 'conv'", "field 'k'", "outside 3..=9"]);
    fails(&["run", SHIPPED, "--set", "decoder.threads=5000"], &["block 'decoder'", "field 'threads'", "outside 0..=1024"]);
    fails(&["run", SHIPPED, "--set", "decoder.gpu_take_out=5"], &["field 'gpu_take_out'", "expected true or false"]);
    fails(&["run", SHIPPED, "--set", "decoder.gpu_slots=0"], &["field 'gpu_slots'", "outside 1..=16"]);
    fails(&["run", SHIPPED, "--set", "decoder.max_latency_ms=1e12"], &["field 'max_latency_ms'"]);
    fails(&["run", SHIPPED, "--set", "conv.group=1e9"], &["field 'group'", "exceeds the limit"]);
    let terminated = ["--set", "conv.mode=terminated", "--set", "conv.frame=100", "--set", "vars.rate=3/4", "--set", "conv.depuncture=decoder"];
    fails(&[&["run", SHIPPED][..], &terminated].concat(), &["code 'conv'", "field 'depuncture'", "terminated frames"]);
    // A pattern with more rows than the code has outputs.
    let pattern_only = temp_file("pattern.toml", &std::fs::read_to_string(SHIPPED).unwrap().replace("rate = \"$rate\"      #", "pattern = \"110,101,011\"\npolys = \"171,133\" #"));
    fails(&["run", &pattern_only], &["code 'conv'", "field 'pattern'", "3 rows but the code has 2 outputs"]);
    // A BER sink told to count nothing reports no BER of 0.
    fails(&["run", SHIPPED, "--set", "ber.max_bits=0"], &["block 'ber'", "field 'max_bits'", "count nothing"]);
    fails(&["run", SHIPPED, "--set", "ber.max_errors=0"], &["block 'ber'", "field 'max_errors'"]);
}

/// Every option and flowgraph field the platform added or bounded, tried
/// zero, huge, negative, NaN, empty and of the wrong kind: one clear error each.
#[test]
fn new_options_and_fields_refuse_hostile_values() {
    // run's executors and profile: huge, negative, not a count.
    fails(&["run", SHIPPED, "--executors", "1e9"], &["--executors 1000000000: at most 64"]);
    rejected(&["run", SHIPPED, "--executors=-1"], "'-1' is not a count");
    rejected(&["run", SHIPPED, "--executors", "2.5"], "is not a count");
    rejected(&["run", SHIPPED, "--profile=yes"], "--profile");
    // File blocks: a missing file, a format not offered, a file of no whole items.
    fails(&["run", "flowgraphs/viterbi_file.toml", "--set", "vars.llrs=/no/such.i8"], &["block 'llr_file'", "field 'path'", "cannot open /no/such.i8"]);
    fails(&["run", "flowgraphs/viterbi_file.toml", "--set", "llr_file.format=i16"], &["field 'format'", "bits, packed, i8, f32, cf32, ci16"]);
    fails(&["run", "flowgraphs/viterbi_file.toml", "--set", "llr_file.format=f32"], &["llr_file.output carries f32 but decoder.input takes i8"]);
    fails(&["run", "flowgraphs/viterbi_file.toml", "--set", "decoded_file.path=/no/such/dir/x"], &["block 'decoded_file'", "cannot write /no/such/dir/x"]);
    fails(&["run", "flowgraphs/viterbi_file.toml", "--set", "vars.llrs="], &["block 'llr_file'", "field 'path'", "the path is empty"]);
    // Packed bits go only where packed bits are taken, and a packed stream only to a packed file.
    fails(&["run", "flowgraphs/viterbi_file.toml", "--set", "decoder.output=bits"], &["decoder.output carries u8 but probe.input takes packed bits"]);
    fails(&["run", "flowgraphs/viterbi_file.toml", "--set", "decoder.output=nibbles"], &["field 'output'", "bits, packed"]);
    fails(&["run", "flowgraphs/viterbi_file.toml", "--set", "decoded_file.format=bits"], &["block 'decoded_file'", "field 'stream'", "needs format packed, not bits"]);
    fails(&["run", "flowgraphs/viterbi_file.toml", "--set", "probe.stream=bits"], &["decoder.output carries packed bits but probe.input takes u8"]);
    fails(&["run", "flowgraphs/viterbi_file.toml", "--set", "probe.stream=bytes"], &["block 'probe'", "field 'stream'", "bits, packed"]);
    fails(&["run", "flowgraphs/viterbi_file.toml", "--set", "llr_file.stream=packed"], &["block 'llr_file'", "field 'stream'", "needs format packed, not i8"]);
    fails(&["run", "flowgraphs/viterbi_file.toml", "--set", "decoded_file.stream="], &["block 'decoded_file'", "field 'stream'"]);
    fails(&["run", "flowgraphs/viterbi_file.toml", "--set", "decoded_file.path="], &["block 'decoded_file'", "field 'path'", "the path is empty"]);
    fails(&["run", "flowgraphs/viterbi_file.toml", "--set", "vars.llrs=/tmp"], &["block 'llr_file'", "field 'path'", "/tmp is a directory"]);
    fails(&["run", "flowgraphs/viterbi_file.toml", "--set", "decoded_file.path=/tmp"], &["block 'decoded_file'", "/tmp is a directory"]);
    fails(&["run", "flowgraphs/viterbi_file.toml", "--set", "llr_file.format="], &["field 'format'", "one of bits, packed"]);
    fails(&["run", "flowgraphs/viterbi_file.toml", "--set", "llr_file.repeat=yes"], &["field 'repeat'", "true or false"]);
    // The fused channel: zero, negative, NaN, huge and empty values.
    fails(&["run", SHIPPED, "--set", "channel.scale=0"], &["block 'channel'", "field 'scale'"]);
    fails(&["run", SHIPPED, "--set", "channel.scale=-1"], &["block 'channel'", "field 'scale'", "finite and positive"]);
    fails(&["run", SHIPPED, "--set", "channel.scale=nan"], &["block 'channel'", "field 'scale'", "NaN is not finite"]);
    fails(&["run", SHIPPED, "--set", "channel.scale=1e300"], &["block 'channel'", "field 'scale'", "finite and positive"]);
    fails(&["run", SHIPPED, "--set", "channel.scale="], &["block 'channel'", "field 'scale'", "expected a number"]);
    fails(&["run", SHIPPED, "--set", "channel.ebn0_db=1e300"], &["block 'channel'", "field 'ebn0_db'", "1e300 dB is outside"]);
    fails(&["run", SHIPPED, "--set", "channel.rate=0"], &["block 'channel'", "field 'rate'", "in (0, 1]"]);
    fails(&["run", SHIPPED, "--set", "conv.tile=auto2"], &["field 'tile'", "three whole numbers"]);
    let f32_chain = ["channel", "depuncture", "decoder"].map(|b| format!("{b}.llr=f32"));
    let mut args = vec!["run", SHIPPED, "--set", "channel.scale=2"];
    for s in &f32_chain {
        args.extend(["--set", s]);
    }
    fails(&args, &["block 'channel'", "field 'scale'", "only i8 LLRs are quantized"]);
    // Command line: zero, NaN and empty.
    fails(&["bench", "conv", "--bits", "0"], &["--bits 0", "measures nothing"]);
    fails(&["bench", "conv", "--threads", "0", "--bits", "1e4"], &["--threads 0", "1..=1024"]);
    fails(&["bench", "conv", "--slots", "0", "--bits", "1e4"], &["--slots 0", "1..=16"]);
    fails(&["bench", "conv", "--batch-units", "0", "--bits", "1e4"], &["--batch-units 0", "at least one unit"]);
    for bad in ["nan", "", "2.5", "1e30"] {
        rejected(&["bench", "conv", "--batch-units", bad, "--bits", "1e4"], "--batch-units");
        // --threads, a GPU's host threads there too, is checked before any backend is chosen.
        rejected(&["bench", "conv", "--threads", bad, "--bits", "1e4"], "--threads");
    }
    rejected(&["bench", "conv", "--batch-units", "-3", "--bits", "1e4"], "'-3'");
    rejected(&["bench", "conv", "--threads", "-3", "--bits", "1e4"], "'-3'");
    fails(&["bench", "conv", "--backend", "auto", "--threads", "2000", "--bits", "1e4"], &["--threads 2000", "1..=1024"]);
    fails(&["bench", "conv", "--seconds", "nan", "--bits", "1e4"], &["--seconds", "0 to 3600"]);
    rejected(&["ber", "conv", "--ebn0", "nan"], "Eb/N0 'nan'");
    rejected(&["ber", "conv", "--ebn0", ""], "Eb/N0 ''");
    fails(&["ber", "conv", "--ebn0", "1e300"], &["--ebn0", "Eb/N0 = 1e300 dB is outside"]);
    fails(&["ber", "conv", "--ebn0", "4", "--max-bits", "0"], &["--max-bits", "simulates nothing"]);
    fails(&["ber", "conv", "--ebn0", "4", "--max-errors", "0"], &["--max-errors", "before the first bit"]);
    fails(&["ber", "conv", "--ebn0", "4", "--group", "0"], &["--group", "0 tiles"]);
    fails(&["ber", "conv", "--ebn0", "4", "--frame", "0"], &["--frame", "0 bits"]);
    fails(&["ber", "conv", "--ebn0", "4", "--mode", "terminated", "--frame", "0"], &["--frame", "0 bits"]);
    fails(&["ber", "conv", "--ebn0", "4", "--mode", "terminated", "--frame", "1e9"], &["--frame", "exceeds the limit"]);
    // Flowgraph fields: a choice not offered, a flag that is not true or false.
    fails(&["run", SAMPLES, "--set", "awgn.samples=c32"], &["block 'awgn'", "field 'samples'", "f32, cf32"]);
    fails(&["run", SAMPLES, "--set", "bpsk.samples=cf32"], &["bpsk.output carries cf32 but awgn.input takes f32"]);
    fails(&["run", SHIPPED, "--set", "decoder.input=bogus"], &["field 'input'", "units, stream"]);
    fails(&["run", SHIPPED, "--set", "decoder.report_tags=maybe"], &["field 'report_tags'", "true or false"]);
    fails(&["run", SHIPPED, "--set", "decoder.soft_output=1"], &["field 'soft_output'", "true or false"]);
    fails(&["run", SHIPPED, "--set", "decoder.max_latency_ms=-1"], &["field 'max_latency_ms'", "≥ 0"]);
    // Sizes: zero and huge.
    fails(&["run", SHIPPED, "--set", "conv.k=0"], &["code 'conv'", "field 'k'", "outside 3..=9"]);
    fails(&["run", SHIPPED, "--set", "depuncture.n=4"], &["block 'depuncture'", "unknown field 'n'"]);
    fails(&["run", SHIPPED, "--set", "decoder.gpu_device=1e9"], &["field 'gpu_device'", "outside"]);
    fails(&["run", SHIPPED, "--set", "decoder.gpu_batch_units=1e12"], &["field 'gpu_batch_units'", "outside"]);
    fails(&["run", SHIPPED, "--set", "decoder.gpu_host_threads=1e9"], &["field 'gpu_host_threads'", "outside 0..=1024"]);
    fails(&["run", SHIPPED, "--set", "ber.frame_bits=0"], &["block 'ber'", "field 'frame_bits'", "at least 1"]);
    // The quantizer's scale: both ways at once, Eb/N0 NaN and huge, rate 0.
    fails(&["run", SAMPLES, "--set", "quantize.scale=4"], &["block 'quantize'", "either scale, or ebn0_db and rate"]);
    fails(&["run", SAMPLES, "--set", "awgn.ebn0_db=nan"], &["field 'ebn0_db'", "is not finite"]);
    fails(&["run", SAMPLES, "--set", "quantize.ebn0_db=1e300"], &["block 'quantize'", "field 'ebn0_db'", "1e300 dB is outside"]);
    fails(&["run", SAMPLES, "--set", "quantize.rate=0"], &["block 'quantize'", "field 'rate'", "in (0, 1]"]);
}

#[test]
fn negative_eb_n0_lower_rates_and_exact_stops() {
    let json = temp_file("low.json", "");
    let out = ok(&["ber", "conv", "--ebn0", "-4", "--max-bits", "3e4", "--max-errors", "1e9", "--backend", "cpu", "--json", &json]);
    assert!(out.contains("Eb/N0  -4.00 dB: 30000 bits"), "{out}");
    // At 0 dB errors come fast: the point ends with the frame of the 100th error.
    let out = ok(&["ber", "conv", "--ebn0", "0", "--max-errors", "100", "--max-bits", "1e8", "--backend", "cpu", "--json", &json]);
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let p = &v["points"][0];
    let (errors, bits) = (p["bit_errors"].as_u64().unwrap(), p["bits"].as_u64().unwrap());
    assert!((100..100 + 256).contains(&errors), "{out}");
    assert_eq!(bits % 256, 0, "a point that stops at max_errors ends on a frame: {out}");
    assert_eq!(p["ended"], "max_errors");
    for (rate, polys, n) in [("1/3", "133,171,165", 3), ("1/4", "133,171,145,133", 4)] {
        let out = ok(&["ber", "conv", "--rate", rate, "--ebn0", "2", "--max-bits", "2e4", "--backend", "cpu", "--json", &json]);
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert!(v["describe"].as_str().unwrap().starts_with(&format!("K=7 ({polys}) rate {rate}")), "{out}");
        assert!(v["points"][0]["bits"].as_u64() == Some(20_000), "rate {rate}, n = {n}: {out}");
    }
    fails(&["ber", "conv", "--rate", "1/3", "--polys", "171,133", "--ebn0", "2"], &["--rate", "3 rows", "2 outputs"]);
    // A family's options are its own: conv does not take a turbo option.
    rejected(&["ber", "conv", "--ebn0", "2", "--iterations", "8"], "--iterations");
}

#[test]
fn ctrl_c_ends_ber_and_run_with_what_was_counted() {
    let json = temp_file("interrupted.json", "");
    let o = interrupted(&["ber", "conv", "--ebn0", "3,4", "--max-bits", "1e12", "--max-errors", "1e12", "--backend", "cpu", "--json", &json]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(130), "{out}\n{}", String::from_utf8_lossy(&o.stderr));
    let line = out.lines().find(|l| l.starts_with("Eb/N0")).unwrap_or_default();
    assert!(line.contains("(interrupted)") && !line.contains(" 0 bits"), "{out}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let points = v["points"].as_array().unwrap();
    assert_eq!(points.len(), 1, "the curve stops at the interrupted point");
    assert_eq!(points[0]["ended"], "interrupted");
    assert!(points[0]["bits"].as_u64().unwrap() > 0);

    // The signal twice at once, as `timeout` sends it, is one request: a run
    // that quit on the duplicate lost its summary about half the time, so
    // the race is given several chances; SIGTERM reports alike, as 143.
    for (signals, code) in [(&["-INT"][..], 130), (&["-INT", "-INT"], 130), (&["-INT", "-INT"], 130), (&["-INT", "-INT"], 130), (&["-TERM", "-TERM"], 143)] {
        let o = interrupted_by(&["run", SHIPPED, "--backend", "cpu", "--set", "source.total=1e12"], signals, Watched::Stderr, counted);
        let out = stdout(&o);
        assert_eq!(o.status.code(), Some(code), "{signals:?}: {out}\n{}", String::from_utf8_lossy(&o.stderr));
        let summary = out.lines().find(|l| l.starts_with("summary:")).unwrap_or_default();
        assert!(summary.contains("(interrupted)") && !summary.contains("bits 0,"), "{signals:?}: {out}");
    }
}

/// `--quiet` writes no progress while a run and a curve go on longer than
/// their progress ticks (1 s and 5 s without a terminal), and they still end
/// with their results on Ctrl-C. Nothing gpufec writes is coloured.
#[test]
fn quiet_runs_and_curves_print_only_their_results() {
    use std::process::{Command, Stdio};
    let start = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_gpufec")).args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("gpufec starts")
    };
    let runs = [
        start(&["run", SHIPPED, "--backend", "cpu", "--set", "source.total=1e12", "--quiet"]),
        start(&["ber", "conv", "--ebn0", "4", "--max-bits", "1e12", "--max-errors", "1e12", "--backend", "cpu", "-q"]),
    ];
    std::thread::sleep(std::time::Duration::from_millis(6000));
    for child in runs {
        let killed = Command::new("kill").args(["-INT", &child.id().to_string()]).status().expect("kill runs");
        assert!(killed.success());
        let o = child.wait_with_output().expect("gpufec ends");
        let (out, err) = (stdout(&o), String::from_utf8_lossy(&o.stderr).into_owned());
        assert_eq!(o.status.code(), Some(130), "{out}\n{err}");
        // Only the answer to the Ctrl-C itself.
        assert!(err.lines().all(|l| l.is_empty() || l.starts_with("interrupted: stopping")), "--quiet wrote to stderr: {err:?}");
        assert!(out.lines().any(|l| l.contains("(interrupted)") && !l.contains(" 0 bits") && !l.contains("bits 0,")), "{out}");
        assert!(!out.contains('\x1b'), "{out:?}");
    }
}

/// Ctrl-C during `bench` ends it at once, keeping the rows it measured, in
/// the JSON file too.
#[test]
fn ctrl_c_ends_bench_with_the_rows_so_far() {
    let json = std::env::temp_dir().join(format!("gpufec-cli-{}-interrupted-bench.json", std::process::id()));
    let json_arg = json.display().to_string();
    let o = interrupted_by(&["bench", "conv", "--backend", "cpu", "--seconds", "0.3", "--bits", "1e5", "--json", &json_arg], &["-INT"], Watched::Stdout, counted);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(130), "{out}");
    let printed = out.lines().filter(|l| l.starts_with("tiled f=256") && l.contains("cpu (")).count();
    assert!(printed > 0, "{out}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("the rows above are what was measured"), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).expect("the rows so far are written")).unwrap();
    assert_eq!(doc["rows"].as_array().map(Vec::len), Some(printed), "{doc}");
    let _ = std::fs::remove_file(&json);
}

/// `bench --json FILE` keeps every printed row with its figures and units,
/// the machine and the command; stderr says which row runs (not with
/// `--quiet`); an unwritable file is refused before anything is measured.
#[test]
fn bench_json_keeps_every_row_with_units() {
    let json = std::env::temp_dir().join(format!("gpufec-cli-{}-bench.json", std::process::id()));
    let json_arg = json.display().to_string();
    let args = ["bench", "conv", "--backend", "cpu", "--bits", "3e4", "--seconds", "0", "--threads", "1", "--json", &json_arg];
    let o = gpufec(&args);
    let (out, err) = (stdout(&o), String::from_utf8_lossy(&o.stderr).to_string());
    assert!(o.status.success(), "{err}");
    assert!(out.contains(&format!("6 rows written to {json_arg}")), "{out}");
    assert_eq!(err.lines().filter(|l| l.starts_with("measuring: ")).count(), 6, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["format"], "gpufec-bench/1");
    assert!(doc["machine"]["cores"].as_u64().is_some_and(|c| c >= 1), "{doc}");
    assert!(doc["command"].as_str().is_some_and(|c| c.contains("--json")), "{doc}");
    let rows = doc["rows"].as_array().unwrap();
    let printed: Vec<&str> = out.lines().filter(|l| l.contains("cpu (1 thread")).collect();
    assert_eq!(rows.len(), printed.len(), "{out}");
    for (row, line) in rows.iter().zip(&printed) {
        // "{setup} {llr} 1 thread", printed as "{setup} {llr} {threads} {bits/rep} {Mb/s} ..."
        let label = row["row"].as_str().unwrap();
        let setup = label.rsplitn(4, ' ').last().unwrap();
        assert!(line.starts_with(setup), "{label} / {line}");
        let figure = &row["figures"][0];
        assert_eq!((figure["name"].as_str(), figure["unit"].as_str()), (Some("throughput"), Some("Mb/s")), "{row}");
        // The printed Mb/s is the recorded value, rounded.
        let shown: f64 = line[setup.len()..].split_whitespace().nth(3).and_then(|w| w.parse().ok()).unwrap_or(f64::NAN);
        let value = figure["value"].as_f64().unwrap();
        assert!((value - shown).abs() <= 0.051, "{value} vs {line}");
    }
    let o = gpufec(&[&args[..], &["--quiet"]].concat());
    assert!(o.status.success() && !String::from_utf8_lossy(&o.stderr).contains("measuring"), "{}", String::from_utf8_lossy(&o.stderr));
    let _ = std::fs::remove_file(&json);
    let o = gpufec(&["bench", "conv", "--backend", "cpu", "--bits", "3e4", "--seconds", "0", "--json", "/nonexistent-dir/bench.json"]);
    common::refused(&o, &["--json", "/nonexistent-dir"]);
    assert!(!stdout(&o).contains("Mb/s"), "measured before refusing: {}", stdout(&o));
}

/// The turbo family's command line: a short curve of code blocks and of
/// transport blocks, and every bad value answered by one line naming it.
#[test]
fn turbo_commands_run_and_refuse_bad_values() {
    let out = ok(&["ber", "turbo", "--block", "40", "--ebn0", "4", "--max-bits", "4000", "--threads", "1"]);
    assert!(out.contains("K 40, QPP (3, 10)") && out.contains("4000 bits, 0 errors"), "{out}");
    let out = ok(&["ber", "turbo", "--tbs", "1000", "--coded", "2100", "--rv", "2", "--early-stop", "crc", "--ebn0", "5", "--max-bits", "3000"]);
    assert!(out.contains("code blocks 1024,") && out.contains("3000 bits, 0 errors") && out.contains("stop on CRC24A"), "{out}");
    let out = ok(&["bench", "turbo", "--block", "1024", "--iterations", "2", "--bits", "1e4", "--seconds", "0", "--threads", "1"]);
    assert!(out.contains("Mb/s") && out.contains("K 1024"), "{out}");
    for (args, want) in [
        (&["--block", "41"][..], &["--block", "nearest are 40 and 48"][..]),
        (&["--block", "0"], &["--block", "K=0"]),
        (&["--block", "1e9"], &["--block"]),
        (&["--iterations", "0"], &["--iterations", "0 is outside 1..=64"]),
        (&["--iterations", "1000"], &["--iterations", "1000 is outside 1..=64"]),
        (&["--scaling", "-1"], &["--scaling", "scaling -1"]),
        (&["--guard", "pivi"], &["--guard", "subblocks > 1"]),
        (&["--subblocks", "96", "--guard", "dstw", "--window", "100"], &["--window", "g = 100", "shortest sub-block"]),
        (&["--subblocks", "7000"], &["--subblocks", "7000 is outside 1..=6144"]),
        (&["--early-stop", "crc"], &["--early-stop", "no CRC", "tbs"]),
        (&["--tbs", "0"], &["--tbs", "0 is outside 1..=1048552"]),
        (&["--tbs", "100", "--coded", "50"], &["--coded", "no decoder can recover"]),
        (&["--tbs", "100", "--rv", "4"], &["--rv", "4 is outside 0..=3"]),
        (&["--tbs", "1e9"], &["--tbs", "outside 1..=1048552"]),
        (&["--block", "40", "--tbs", "100"], &["--block", "applies to bare code blocks"]),
        (&["--coded", "100"], &["--coded", "applies to transport blocks: give tbs too"]),
        (&["--dematch", "host"], &["--dematch", "applies to transport blocks: give tbs too"]),
        (&["--tbs", "100", "--coded", "0"], &["--coded", "0 is outside 1..=67108864"]),
        (&["--precision", "i16", "--algorithm", "log-map"], &["--precision", "max-log-MAP only"]),
        (&["--polys", ""], &["--polys", "two octal polynomials"]),
        (&["--interleaver", "/dev/null"], &["--interleaver", "no entries"]),
    ] {
        let mut a = vec!["ber", "turbo", "--ebn0", "1"];
        a.extend_from_slice(args);
        fails(&a, want);
    }
    fails(&["ber", "turbo", "--ebn0", "100"], &["--ebn0", "100 dB"]);
    // Values the parser refuses: a choice not offered, a number that is not finite.
    rejected(&["ber", "turbo", "--ebn0", "1", "--algorithm", "bcjr"], "invalid value 'bcjr' for '--algorithm");
    rejected(&["ber", "turbo", "--ebn0", "1", "--scaling", "NaN"], "'NaN' is not a finite number");
    // The benchmark's transport-block options are checked the same way, before anything is allocated.
    for (args, want) in [
        (&["--tbs", "0"][..], &["--tbs", "0 is outside 1..=1048552"][..]),
        (&["--tbs", "1e12"], &["--tbs", "outside 1..=1048552"]),
        (&["--tbs", "100", "--coded", "0"], &["--coded", "0 is outside"]),
    ] {
        let mut a = vec!["bench", "turbo"];
        a.extend_from_slice(args);
        fails(&a, want);
    }
    // Values the parser refuses: an unknown or empty de-rate-matching, a count that is no number.
    for cmd in ["ber", "bench"] {
        rejected(&[cmd, "turbo", "--tbs", "100", "--dematch", "gpu"], "invalid value 'gpu' for '--dematch <DEMATCH>'");
        rejected(&[cmd, "turbo", "--tbs", "100", "--dematch", ""], "a value is required for '--dematch <DEMATCH>'");
        rejected(&[cmd, "turbo", "--tbs", "100", "--coded", "NaN"], "'NaN' is not a count");
    }
    // No GPU where the tests run: the one-line reason, naming the option.
    if no_gpu() {
        fails(&["bench", "turbo", "--backend", "gpu"], &["--backend gpu: "]);
    }
    fails(&["bench", "turbo", "--ebn0", "100"], &["--ebn0", "100 dB"]);
    fails(&["bench", "turbo", "--llr", "i8", "--backend", "cpu"], &["--llr i8", "f32"]);
    // Transport blocks end to end (on the CPU: de-rate-matched on the host, whatever --dematch says).
    let out = ok(&["bench", "turbo", "--tbs", "1000", "--coded", "2100", "--dematch", "on-load", "--iterations", "2", "--bits", "1e4", "--seconds", "0", "--threads", "1"]);
    assert!(out.contains("de-rate-matched on the host") && out.contains("end to end") && out.contains("Mb/s"), "{out}");
    // A code of your own: memory 4, an interleaver from a file.
    let dir = std::env::temp_dir().join(format!("gpufec-cli-interleaver-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("perm.txt");
    let perm: Vec<String> = (0..100u32).map(|i| ((37 * i + 11) % 100).to_string()).collect();
    std::fs::write(&file, perm.join(",")).unwrap();
    let path = file.to_str().unwrap();
    let out = ok(&["ber", "turbo", "--polys", "23,35", "--interleaver", path, "--ebn0", "5", "--max-bits", "2000", "--backend", "cpu"]);
    assert!(out.contains("rsc 23/35, K 100, a table") && out.contains("2000 bits, 0 errors"), "{out}");
    std::fs::write(&file, "0,1,1").unwrap();
    fails(&["ber", "turbo", "--interleaver", path, "--ebn0", "5"], &["--interleaver", "not a permutation"]);
    std::fs::remove_dir_all(&dir).unwrap();
    fails(&["ber", "turbo", "--interleaver", "/no/such/perm.txt", "--ebn0", "5"], &["--interleaver", "/no/such/perm.txt"]);
    fails(&["ber", "turbo", "--polys", "13", "--ebn0", "5"], &["--polys", "'13'", "two octal polynomials"]);
    fails(&["ber", "turbo", "--polys", "77,75", "--ebn0", "5"], &["--polys", "memory 5"]);
    fails(&["ber", "turbo", "--polys", "13,15", "--tbs", "100", "--ebn0", "5"], &["--polys", "applies to bare code blocks"]);
    // The flowgraph kinds name the field at fault.
    for (set, want) in [
        ("turbo.iterations=0", &["code 'turbo'", "'iterations'", "1..=64"][..]),
        ("turbo.block=41", &["'block'", "nearest are 40 and 48"]),
        ("turbo.guard=\"pivi\"", &["'guard'", "subblocks > 1"]),
        ("turbo.algorithm=\"log-map\"", &["block 'decoder'", "'input_scale' is missing"]),
        ("turbo.scaling=2", &["'scaling'", "(0, 1]"]),
        ("turbo.subblocks=100000", &["'subblocks'", "1..=6144"]),
        ("turbo.window=4", &["'window'", "needs guard dstw"]),
        ("decoder.input_scale=-1", &["'input_scale'", "finite factor"]),
        ("decoder.input_scale=nan", &["input_scale"]),
    ] {
        fails(&["run", "flowgraphs/turbo_awgn.toml", "--set", set, "--set", "source.total=6144"], want);
    }
    let log_map_i16 = ["turbo.precision=\"i16\"", "turbo.algorithm=\"log-map\"", "decoder.input_scale=1"];
    let mut args = vec!["run", "flowgraphs/turbo_awgn.toml"];
    log_map_i16.iter().for_each(|s| args.extend(["--set", s]));
    fails(&args, &["'precision'", "max-log-MAP only"]);
}

#[test]
fn polar_commands_run_and_refuse_bad_values() {
    let out = ok(&["ber", "polar", "--n", "256", "--k", "128", "--algorithm", "sc", "--ebn0", "6", "--max-bits", "12800", "--threads", "1"]);
    assert!(out.contains("(256, 128)") && out.contains("12800 bits, 0 errors"), "{out}");
    // The point's line ends with its information bits a second.
    assert!(out.lines().any(|l| l.contains("6.00 dB: 12800 bits") && (l.ends_with(" Mb/s)") || l.ends_with(" Gb/s)"))), "{out}");
    let out = ok(&["ber", "polar", "--k", "40", "--e", "200", "--message", "dci", "--rnti", "17", "--algorithm", "scl:8", "--ebn0", "6", "--max-bits", "4000"]);
    assert!(out.contains("DCI A=40 E=200") && out.contains("4000 bits, 0 errors"), "{out}");
    let out = ok(&["ber", "polar", "--n", "64", "--k", "32", "--precision", "f32", "--alpha", "0.8", "--iterations", "30", "--ebn0", "7", "--max-bits", "3200"]);
    assert!(out.contains("BP f32 α=0.8 Imax=30") && out.contains("3200 bits, 0 errors"), "{out}");
    let out = ok(&["bench", "polar", "--n", "256", "--k", "128", "--bits", "1e4", "--seconds", "0", "--threads", "1"]);
    assert!(out.contains("Mb/s") && out.contains("(256, 128)"), "{out}");
    // Issue 24's bad values: N not a power of two or beyond the limit, K > N
    // or 0, a frozen-set file of the wrong size or with repeats, E too
    // small for K, a list of 0 or 1e9 paths, iterations 0 or huge.
    let wrong_size = temp_file("wrong-size", "0 1 2");
    let repeated = temp_file("repeated", "0 1 2 3 4 5 6 6");
    for (args, want) in [
        (&["--n", "1000"][..], &["--n", "not a power of two"][..]),
        (&["--n", "65537"], &["--n", "outside 8..=65536"]),
        (&["--n", "1e12"], &["--n", "outside 8..=65536"]),
        (&["--n", "4"], &["--n", "outside 8..=65536"]),
        (&["--n", "64", "--k", "65"], &["--k", "outside 1..=64"]),
        (&["--n", "64", "--k", "0"], &["--k", "outside 1..=64"]),
        (&["--n", "16", "--k", "8", "--construction", &wrong_size], &["--construction", "frozen-set file"]),
        (&["--n", "16", "--k", "8", "--construction", &repeated], &["--construction", "twice"]),
        (&["--k", "100", "--e", "50"], &["--e", "E_UCI = 50"]),
        (&["--algorithm", "scl:0"], &["--algorithm", "1..=32"]),
        (&["--algorithm", "scl:1000000000"], &["--algorithm", "1..=32"]),
        (&["--iterations", "0"], &["--iterations", "0 is outside 1..=1000"]),
        (&["--iterations", "1e9"], &["--iterations", "outside 1..=1000"]),
        (&["--early-stop", "crc"], &["--early-stop", "no CRC"]),
        (&["--alpha", "0.5"], &["--alpha", "15/16"]),
        (&["--e", "100", "--n", "128"], &["--n", "applies to bare codewords"]),
        (&["--rnti", "4"], &["--rnti", "give e"]),
    ] {
        let mut a = vec!["ber", "polar", "--ebn0", "1"];
        a.extend_from_slice(args);
        fails(&a, want);
    }
    if no_gpu() {
        fails(&["bench", "polar", "--backend", "gpu"], &["--backend gpu: "]);
    }
    fails(&["bench", "polar", "--llr", "both"], &["--llr both"]);
    for f in [wrong_size, repeated] {
        let _ = std::fs::remove_file(f);
    }
}

/// `ber sync` says where its decoder runs before the first point, as every
/// family does (it used to print the code again: each point builds its own
/// decoder, for its channel's limits).
#[test]
fn ber_sync_names_its_backend() {
    let out = ok(&["ber", "sync", "--q", "4", "--n", "4", "--N", "10", "--p", "0.01", "--max-bits", "1e3", "--backend", "cpu", "--threads", "1"]);
    let line = out.lines().find(|l| l.starts_with("backend: ")).unwrap_or_else(|| panic!("no backend line: {out}"));
    assert!(line.starts_with("backend: cpu (1 thread"), "{line}");
}
