//! Nothing lost, nothing hung: a run never writes over one of its inputs,
//! leaves a result file whole, creates no output when it fails to start,
//! delivers every whole unit of a stream cut short, keeps up with a pipe
//! whatever its latency bound, shows a live output as it is decoded, and
//! says what a FIFO waits for. Each test fails on the code before its fix.

mod common;

use common::{Watched, fresh_dir, gpufec, interrupted_by, refused};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

const FILE_FLOWGRAPH: &str = "flowgraphs/viterbi_file.toml";
const BER_FLOWGRAPH: &str = "flowgraphs/viterbi_file_ber.toml";

/// A fresh directory of this test.
fn dir(name: &str) -> PathBuf {
    fresh_dir("lost", name)
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

/// Information bits and their i8 LLRs (K=7, rate 1/2, 4 dB) in `d`: 2e5 bits.
fn llr_files(d: &Path) -> (PathBuf, PathBuf) {
    let (bits, llrs) = (d.join("bits.packed"), d.join("llrs.i8"));
    let o = gpufec(&[
        "run",
        "flowgraphs/awgn_to_files.toml",
        "--set",
        "source.total=2e5",
        "--set",
        &format!("vars.bits={}", s(&bits)),
        "--set",
        &format!("vars.llrs={}", s(&llrs)),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    (bits, llrs)
}


#[test]
fn no_output_may_be_an_input_of_its_run() {
    let d = dir("inputs");
    let (bits, llrs) = llr_files(&d);
    let (llr_bytes, bit_bytes) = (std::fs::read(&llrs).unwrap(), std::fs::read(&bits).unwrap());
    let link = d.join("link.i8");
    std::os::unix::fs::symlink(&llrs, &link).unwrap();
    // The LLR file, itself or through a link.
    for out in [&llrs, &link] {
        let o = gpufec(&["run", FILE_FLOWGRAPH, "--backend", "cpu", "--set", &format!("vars.llrs={}", s(&llrs)), "--set", &format!("vars.decoded={}", s(out))]);
        refused(&o, &["block 'decoded_file' would write", "an input of the run (block 'llr_file')"]);
    }
    // The reference bits of a BER flowgraph.
    let o = gpufec(&[
        "run",
        BER_FLOWGRAPH,
        "--backend",
        "cpu",
        "--set",
        &format!("vars.llrs={}", s(&llrs)),
        "--set",
        &format!("vars.bits={}", s(&bits)),
        "--set",
        &format!("vars.decoded={}", s(&bits)),
    ]);
    refused(&o, &["an input of the run (block 'reference')"]);
    // The flowgraph file being run.
    let fg = d.join("copy.toml");
    std::fs::copy(FILE_FLOWGRAPH, &fg).unwrap();
    let text = std::fs::read(&fg).unwrap();
    let o = gpufec(&["run", &s(&fg), "--backend", "cpu", "--set", &format!("vars.llrs={}", s(&llrs)), "--set", &format!("vars.decoded={}", s(&fg))]);
    refused(&o, &["an input of the run (the flowgraph file)"]);
    // A settings file of a code and the curve's JSON.
    let il = d.join("il.txt");
    std::fs::write(&il, (0..40).map(|i| i.to_string()).collect::<Vec<_>>().join(" ")).unwrap();
    let il_text = std::fs::read(&il).unwrap();
    let o = gpufec(&["ber", "turbo", "--interleaver", &s(&il), "--json", &s(&il), "--ebn0", "1", "--max-bits", "1e3"]);
    refused(&o, &["--json would write", "an input of the run (--interleaver)"]);
    // Two sinks into one file.
    let two = d.join("two.toml");
    std::fs::write(
        &two,
        r#"connections = ["src > a", "src > b"]
[blocks.src]
type = "RandomBits"
seed = 1
total = 100
[blocks.a]
type = "FileSink"
path = "same.bits"
format = "bits"
[blocks.b]
type = "FileSink"
path = "./same.bits"
format = "bits"
"#,
    )
    .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_gpufec")).args(["run", &s(&two)]).current_dir(&d).output().unwrap();
    refused(&o, &["block 'a' and block 'b' would both write"]);
    assert!(!d.join("same.bits").exists());
    // Every input is as it was.
    assert_eq!(std::fs::read(&llrs).unwrap(), llr_bytes);
    assert_eq!(std::fs::read(&bits).unwrap(), bit_bytes);
    assert_eq!(std::fs::read(&fg).unwrap(), text);
    assert_eq!(std::fs::read(&il).unwrap(), il_text);
}

#[test]
fn a_run_that_fails_to_start_creates_no_output() {
    let d = dir("no-start");
    let out = d.join("decoded.packed");
    let o = gpufec(&["run", FILE_FLOWGRAPH, "--backend", "cpu", "--set", &format!("vars.llrs={}", s(&d.join("missing.i8"))), "--set", &format!("vars.decoded={}", s(&out))]);
    refused(&o, &["block 'llr_file'", "cannot open"]);
    assert!(!out.exists(), "a failed run made {}", out.display());
}

/// A SIGTERM in the middle of a curve's first point leaves the curve file
/// whole (that point, interrupted), never empty, and nothing beside it.
#[test]
fn a_curve_file_is_replaced_whole() {
    let d = dir("json");
    let json = d.join("curve.json");
    std::fs::write(&json, "{\"the previous\": \"curve\"}\n").unwrap();
    let args = ["ber", "conv", "--ebn0", "3,4", "--max-bits", "1e12", "--max-errors", "1e12", "--backend", "cpu", "--json", &s(&json)];
    let o = interrupted_by(&args, &["-TERM"], Watched::Stderr, common::counted);
    assert_eq!(o.status.code(), Some(143), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["points"][0]["ended"], "interrupted");
    assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1, "a temporary file was left beside the curve");
}

/// An LLR file of odd length at rate 1/2 fails the run, saying so and how
/// much came before; every whole unit before the cut is decoded and written.
#[test]
fn a_stream_cut_inside_a_stage_delivers_what_came_before() {
    let d = dir("cut");
    let (_, llrs) = llr_files(&d);
    let bytes = std::fs::read(&llrs).unwrap();
    let (whole, cut) = (d.join("whole.i8"), d.join("cut.i8"));
    std::fs::write(&whole, &bytes[..100_000]).unwrap();
    std::fs::write(&cut, &bytes[..100_001]).unwrap();
    let decode = |input: &Path, out: &Path| {
        gpufec(&["run", FILE_FLOWGRAPH, "--backend", "cpu", "--set", &format!("vars.llrs={}", s(input)), "--set", &format!("vars.decoded={}", s(out))])
    };
    let (from_whole, from_cut) = (d.join("whole.packed"), d.join("cut.packed"));
    assert!(decode(&whole, &from_whole).status.success());
    let o = decode(&cut, &from_cut);
    refused(&o, &["ended inside a trellis stage", "whole units before it were decoded and passed on (50000 bits)"]);
    let want = std::fs::read(&from_whole).unwrap();
    assert_eq!(want.len(), 6250);
    assert_eq!(std::fs::read(&from_cut).unwrap(), want);
    // Where a cut tail is expected (a receiver's last symbols), the decoder
    // block may be told to drop it: the run succeeds, saying what it dropped.
    let dropped = d.join("dropped.packed");
    let o = gpufec(&[
        "run", FILE_FLOWGRAPH, "--backend", "cpu", "--set", &format!("vars.llrs={}", s(&cut)), "--set", &format!("vars.decoded={}", s(&dropped)),
        "--set", "decoder.partial_end=\"drop\"",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("ended inside a trellis stage") && err.contains("the rest is dropped (partial_end = \"drop\")"), "{err}");
    assert_eq!(std::fs::read(&dropped).unwrap(), want);
}

/// Run `args` with `input` written to its stdin from another thread; the
/// output, and waits for it at most `limit` (a watchdog: a hang fails).
fn with_stdin(args: &[&str], input: Vec<u8>, limit: Duration) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpufec")).args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    std::thread::spawn(move || {
        // Pieces, as a live source gives them.
        for piece in input.chunks(8192) {
            if stdin.write_all(piece).is_err() {
                return;
            }
        }
    });
    let pid = child.id().to_string();
    let (done, watching) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        let hung = watching.recv_timeout(limit).is_err();
        if hung {
            let _ = Command::new("kill").args(["-KILL", &pid]).status();
        }
        hung
    });
    let out = child.wait_with_output().unwrap();
    let _ = done.send(());
    assert!(!watchdog.join().unwrap(), "gpufec {args:?} did not keep up with its pipe (killed after {limit:?})");
    out
}

/// A pipe is decoded as it comes, whatever the decoder's latency bound: the
/// old source read once per bound, so a bound of a minute took an hour here.
#[test]
fn a_pipe_is_decoded_as_it_comes_whatever_the_latency_bound() {
    let d = dir("pipe");
    let (_, llrs) = llr_files(&d);
    let from_file = d.join("file.packed");
    let o = gpufec(&["run", FILE_FLOWGRAPH, "--backend", "cpu", "--set", &format!("vars.llrs={}", s(&llrs)), "--set", &format!("vars.decoded={}", s(&from_file))]);
    assert!(o.status.success());
    let want = std::fs::read(&from_file).unwrap();
    for latency in ["10", "60000"] {
        let out = d.join(format!("pipe-{latency}.packed"));
        let o = with_stdin(
            &["run", FILE_FLOWGRAPH, "--backend", "cpu", "--set", "vars.llrs=/dev/stdin", "--set", &format!("vars.decoded={}", s(&out)), "--set", &format!("decoder.max_latency_ms={latency}")],
            std::fs::read(&llrs).unwrap(),
            Duration::from_secs(120),
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(std::fs::read(&out).unwrap(), want, "latency bound {latency} ms");
    }
}

/// Bits from a live pipe through the channel (on the GPU where one is
/// usable), the decoder and the BER sink are counted as the same bits from a
/// file are: the BER sink holds back reference bits that arrive in pieces.
#[test]
fn bits_from_a_pipe_are_counted_as_bits_from_a_file() {
    let d = dir("pipe-ber");
    let (bits, _) = llr_files(&d);
    let shipped = std::fs::read_to_string("flowgraphs/viterbi_awgn.toml").unwrap();
    let random = "type = \"RandomBits\"\nseed = \"$seed\"\ntotal = 1e8       # information bits; a few seconds on two cores";
    assert!(shipped.contains(random), "the shipped flowgraph's source changed");
    let flowgraph = d.join("from_bits.toml");
    std::fs::write(&flowgraph, shipped.replace(random, "type = \"FileSource\"\npath = \"/dev/stdin\"\nformat = \"packed\"")).unwrap();
    let from_file = gpufec(&["run", &s(&flowgraph), "--set", &format!("source.path={}", s(&bits))]);
    let from_file = String::from_utf8_lossy(&from_file.stdout).to_string();
    let o = with_stdin(&["run", &s(&flowgraph)], std::fs::read(&bits).unwrap(), Duration::from_secs(120));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let from_pipe = String::from_utf8_lossy(&o.stdout).to_string();
    assert_eq!(common::ber_line(&from_pipe), common::ber_line(&from_file));
    assert!(common::ber_line(&from_file).contains("ber 'ber': 200000 bits"), "{from_file}");
}

/// A reader of a live output sees each piece as it is decoded, not when
/// megabytes have gathered or the stream ends; and a FIFO with no writer
/// says so, and Ctrl-C then ends the run with its summary.
#[test]
fn a_live_output_shows_as_it_is_decoded_and_a_silent_fifo_says_what_it_waits_for() {
    let d = dir("live");
    let (_, llrs) = llr_files(&d);
    let out = d.join("live.packed");
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpufec"))
        .args(["run", FILE_FLOWGRAPH, "--backend", "cpu", "--set", "vars.llrs=/dev/stdin", "--set", &format!("vars.decoded={}", s(&out)), "--set", "decoder.max_latency_ms=10"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // A tenth of the stream, and the pipe left open: the decoder's latency
    // bound sends it on; the sink must write it out now.
    let bytes = std::fs::read(&llrs).unwrap();
    stdin.write_all(&bytes[..40_000]).unwrap();
    let mut seen = 0;
    for _ in 0..1200 {
        seen = std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0);
        if seen > 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(seen > 0, "nothing of the live output was written while its input stayed open");
    assert!(status.success());

    let fifo = d.join("in.fifo");
    let c = std::ffi::CString::new(s(&fifo)).unwrap();
    // SAFETY: a NUL-terminated path; mkfifo only reads it.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let args = ["run", FILE_FLOWGRAPH, "--backend", "cpu", "--set", &format!("vars.llrs={}", s(&fifo)), "--set", &format!("vars.decoded={}", s(&d.join("x.packed")))];
    let o = interrupted_by(&args, &["-INT"], Watched::Stderr, |line| line.contains("waiting for a writer of"));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(130), "{stdout}");
    assert!(stdout.lines().any(|l| l.starts_with("summary:") && l.ends_with("(interrupted)")), "{stdout}");
}

/// Sizes that would exhaust memory or threads are refused before the run,
/// with one line naming the limit (500 blocks made FutureSDR's buffer
/// allocation panic under a 4 GiB address-space limit, `--executors 1024`
/// its thread spawn).
#[test]
fn too_many_blocks_or_executors_are_refused_before_the_run() {
    let d = dir("limits");
    let mut text = String::from("connections = [\"b0 > n0\"]\n[blocks.b0]\ntype = \"RandomBits\"\nseed = 1\ntotal = 10\n[blocks.n0]\ntype = \"FileSink\"\npath = \"/dev/null\"\nformat = \"bits\"\n");
    for i in 1..=64 {
        text += &format!("[blocks.x{i}]\ntype = \"RandomBits\"\nseed = 1\n");
    }
    let fg = d.join("many.toml");
    std::fs::write(&fg, text).unwrap();
    refused(&gpufec(&["run", &s(&fg)]), &["66 blocks; a flowgraph has at most 64"]);
    refused(&gpufec(&["run", "flowgraphs/viterbi_awgn.toml", "--executors", "1024"]), &["--executors 1024: at most 64"]);
}

/// A source whose total is not a whole number of the encoder's frames
/// stops at the last whole frame and says so on stderr before the run, in
/// one line naming the block, the total, the frame and the bits dropped (it
/// used to fail after all the work); a total below one frame is refused. A
/// stream shorter than a BER sink's frame counts its bits but no frame, and
/// says so (it used to report FER 0 or 1 from a frame that never completed).
#[test]
fn totals_stop_at_the_last_whole_frame_and_a_partial_frame_is_no_frame() {
    for (file, unit) in [
        ("flowgraphs/turbo_tb_awgn.toml", 6120),
        ("flowgraphs/turbo_awgn.toml", 6144),
        ("flowgraphs/polar_awgn.toml", 512),
        ("flowgraphs/polar_5g_awgn.toml", 200),
        ("flowgraphs/sync_bsid.toml", 1050),
    ] {
        let total = 3 * unit + 7;
        let o = gpufec(&["run", file, "--backend", "cpu", "--set", &format!("source.total={total}")]);
        let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
        assert!(o.status.success(), "{file}: {err}");
        let said = format!("block 'source' sends {total} bits, not a whole number of the {unit}-bit frames block 'encoder' encodes: it stops after {} (3 frames), dropping the last 7 bits", 3 * unit);
        assert_eq!(err.lines().filter(|l| l.contains(&said)).count(), 1, "{file}: {err}");
        assert!(out.contains(&format!("summary: bits {}, ", 3 * unit)), "{file}: {out}");
        let o = gpufec(&["run", file, "--backend", "cpu", "--set", &format!("source.total={}", unit - 1)]);
        refused(&o, &[&format!("block 'source' sends {} bits, fewer than one of the {unit}-bit frames", unit - 1), &format!("a multiple of {unit}")]);
        assert!(o.stdout.is_empty(), "{file}: the run started: {}", String::from_utf8_lossy(&o.stdout));
    }
    // Terminated convolutional frames too; a streaming code takes any total.
    let terminated = ["--set", "conv.mode=terminated", "--set", "conv.frame=2048"];
    let o = gpufec(&[&["run", "flowgraphs/viterbi_awgn.toml", "--backend", "cpu", "--set", "source.total=5000"][..], &terminated[..]].concat());
    assert!(String::from_utf8_lossy(&o.stderr).contains("it stops after 4096 (2 frames), dropping the last 904 bits"), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("summary: bits 4096, "), "{}", String::from_utf8_lossy(&o.stdout));
    let o = gpufec(&["run", "flowgraphs/viterbi_awgn.toml", "--backend", "cpu", "--set", "source.total=1000"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Frames of 256: three whole, 232 bits of a fourth.
    assert!(out.contains("1000 bits, 0 errors, BER 0.000e0, 3 frames, 0 frame errors, FER 0.000e0 (the last 232 bits, less than a frame, in BER only)"), "{out}");
    let o = gpufec(&["run", "flowgraphs/viterbi_awgn.toml", "--backend", "cpu", "--set", "source.total=7"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("summary: bits 7, errors 0, BER 0.000e0, FER n/a (the last 7 bits, less than a frame, in BER only)"), "{out}");
}

/// A run says what each file sink wrote (items, bytes, where), also when it
/// has no decoder and no BER sink; the counts match the files.
#[test]
fn file_sinks_say_what_they_wrote() {
    let d = dir("written");
    let (bits, llrs) = (d.join("bits.packed"), d.join("llrs.i8"));
    let o = gpufec(&["run", "flowgraphs/awgn_to_files.toml", "--set", "source.total=1001", "--set", &format!("vars.bits={}", s(&bits)), "--set", &format!("vars.llrs={}", s(&llrs))]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!((std::fs::metadata(&bits).unwrap().len(), std::fs::metadata(&llrs).unwrap().len()), (126, 2002));
    assert!(out.contains(&format!("file 'bit_file': 1001 bits, 126 bytes in {}", s(&bits))), "{out}");
    assert!(out.contains(&format!("file 'llr_file': 2002 i8 items, 2002 bytes in {}", s(&llrs))), "{out}");
    assert!(out.contains("summary: no decoder and no BER sink, 2128 bytes written to 2 files"), "{out}");
}

/// A tile decoder reading its input as a framer's units (the default) but
/// fed a plain stream decoded garbage in silence (BER near 1/2, or a late
/// "ended inside a code block"): it is refused at once, naming the fix;
/// codes whose units are the stream itself (terminated frames) read it.
#[test]
fn a_plain_stream_is_never_read_as_tiles() {
    let d = dir("units");
    let fg = d.join("units.toml");
    let text = "connections = [\"s > e > c > d > b.decoded\", \"s > b.reference\"]\n[codes.conv]\nfamily = \"conv\"\n\
        [blocks.s]\ntype = \"RandomBits\"\nseed = 1\ntotal = 983040\n[blocks.e]\ntype = \"ConvEncoder\"\n\
        [blocks.c]\ntype = \"BpskAwgn\"\nebn0_db = 5\nseed = 1\nllr = \"f32\"\n\
        [blocks.d]\ntype = \"ViterbiDecoder\"\nllr = \"f32\"\nbackend = \"cpu\"\n[blocks.b]\ntype = \"BerSink\"\n";
    std::fs::write(&fg, text).unwrap();
    refused(&gpufec(&["run", &s(&fg)]), &["block 'd'", "before the first unit mark", "input = \"stream\""]);
    let o = gpufec(&["run", &s(&fg), "--set", "d.input=\"stream\""]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("summary: bits 983040, errors 0"), "{}", String::from_utf8_lossy(&o.stderr));
    let o = gpufec(&["run", &s(&fg), "--set", "conv.mode=terminated", "--set", "conv.frame=2048"]);
    let out = String::from_utf8_lossy(&o.stdout);
    let errors: u64 = out.split("summary: bits 983040, errors ").nth(1).and_then(|r| r.split(',').next()).and_then(|e| e.parse().ok()).unwrap_or(u64::MAX);
    assert!(errors < 100, "a BER of 1e-4 or more at 5 dB: {out}{}", String::from_utf8_lossy(&o.stderr));
}
