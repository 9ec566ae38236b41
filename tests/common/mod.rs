//! What the integration tests share (each test binary uses part of it): a
//! shipped flowgraph file run on the CPU with some fields replaced, and
//! whether a GPU test can run here.
#![allow(dead_code)]

use gpufec::flowgraph::{BuildOptions, FlowgraphFile, Override, Summary, build, run};
use gpufec::gpu::Backend;
use std::process::{Command, Output};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// Run the flowgraph file at `path` on the CPU with each `--set` of `sets` applied.
pub fn run_file(path: &str, sets: &[&str]) -> anyhow::Result<Summary> {
    let mut file = FlowgraphFile::parse(path, &std::fs::read_to_string(path)?)?;
    for s in sets {
        file.apply(&s.parse::<Override>()?)?;
    }
    let built = build(&file, &BuildOptions { backend: Some(Backend::Cpu), profile: false, ..Default::default() })?;
    run(built, Duration::from_secs(3600), &AtomicBool::new(false), |_| {})
}

/// Whether the GPU tests can run; says `SKIPPED <test>` otherwise, and
/// fails when `GPUFEC_REQUIRE_GPU=1`.
pub fn have_gpu(test: &str) -> bool {
    match gpufec::gpu::available() {
        Ok(()) => true,
        Err(e) if std::env::var("GPUFEC_REQUIRE_GPU").as_deref() == Ok("1") => panic!("{test}: GPUFEC_REQUIRE_GPU=1 but {e:#}"),
        Err(e) => {
            skipped(test, &e);
            false
        }
    }
}

/// Whether NVRTC can compile kernels here (no GPU needed); as [`have_gpu`] otherwise.
pub fn have_nvrtc(test: &str) -> bool {
    match gpufec::gpu::nvrtc_available() {
        Ok(()) => true,
        Err(e) if std::env::var("GPUFEC_REQUIRE_GPU").as_deref() == Ok("1") => panic!("{test}: GPUFEC_REQUIRE_GPU=1 but {e:#}"),
        Err(e) => {
            skipped(test, &e);
            false
        }
    }
}

/// Say something where the harness does not swallow it (it captures
/// `eprintln!`, not writes to the stderr handle).
pub fn say(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Say that a test was skipped, and why.
pub fn skipped(test: &str, why: &anyhow::Error) {
    say(&format!("SKIPPED {test}: {why:#}"));
}

/// Start the `gpufec` binary with `args`, send it `signals` (back to back,
/// as `timeout` and a process group's `kill` do) once a line on `watched`
/// is `ready` (no sleeping: the signal comes when the run is under way,
/// however fast the machine), and return its exit status and output.
pub fn interrupted_by(args: &[&str], signals: &[&str], watched: Watched, ready: fn(&str) -> bool) -> Output {
    use std::io::BufRead;
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpufec"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("gpufec starts");
    let pid = child.id().to_string();
    // A run that never shows progress must not hang the suite.
    let (done, watching) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn({
        let pid = pid.clone();
        move || {
            if watching.recv_timeout(std::time::Duration::from_secs(300)).is_err() {
                let _ = Command::new("kill").args(["-KILL", &pid]).status();
            }
        }
    });
    let (stdout, stderr) = (child.stdout.take().expect("stdout piped"), child.stderr.take().expect("stderr piped"));
    // The stream not watched is drained meanwhile, so a full pipe cannot stall the run.
    let (watched_stream, other): (Box<dyn std::io::Read + Send>, Box<dyn std::io::Read + Send>) = match watched {
        Watched::Stderr => (Box::new(stderr), Box::new(stdout)),
        Watched::Stdout => (Box::new(stdout), Box::new(stderr)),
    };
    let drain = std::thread::spawn(move || {
        let mut text = String::new();
        let mut other = other;
        std::io::Read::read_to_string(&mut other, &mut text).expect("output reads");
        text
    });
    let mut reader = std::io::BufReader::new(watched_stream);
    let (mut seen, mut line) = (String::new(), String::new());
    while reader.read_line(&mut line).expect("output reads") > 0 {
        seen += &line;
        if ready(&line) {
            break;
        }
        line.clear();
    }
    for sig in signals {
        let killed = Command::new("kill").args([*sig, pid.as_str()]).status().expect("kill runs");
        assert!(killed.success());
    }
    std::io::Read::read_to_string(&mut reader, &mut seen).expect("output reads");
    let other = drain.join().expect("the drain ends");
    let status = child.wait().expect("gpufec ends");
    let _ = done.send(());
    watchdog.join().expect("the watchdog ends");
    let (out, err) = match watched {
        Watched::Stderr => (other, seen),
        Watched::Stdout => (seen, other),
    };
    Output { status, stdout: out.into_bytes(), stderr: err.into_bytes() }
}

/// Which output shows that a command has counted bits.
#[derive(Clone, Copy)]
pub enum Watched {
    /// The progress lines of `run` and `ber`.
    Stderr,
    /// The rows of `bench`.
    Stdout,
}

/// [`interrupted_by`] one SIGINT once progress shows on stderr.
pub fn interrupted(args: &[&str]) -> Output {
    interrupted_by(args, &["-INT"], Watched::Stderr, counted)
}

/// Whether a progress line reports bits counted: `Eb/N0 3.00 dB: 12345
/// bits, ...` (`ber`), `1.0 s  bits 12345  ...` (`run`), or a row of
/// `bench` (`... 139.2  cpu (1 thread, ...)`).
pub fn counted(line: &str) -> bool {
    if line.contains(" cpu (") {
        return true;
    }
    let words: Vec<&str> = line.split(|c: char| c.is_whitespace() || c == ',' || c == ':').filter(|w| !w.is_empty()).collect();
    words.iter().enumerate().any(|(i, w)| {
        *w == "bits" && [i.checked_sub(1), Some(i + 1)].into_iter().flatten().filter_map(|j| words.get(j)).any(|n| n.parse::<u64>().is_ok_and(|n| n > 0))
    })
}


/// Run the `gpufec` binary of this build with `args`.
pub fn gpufec(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gpufec")).args(args).output().expect("the gpufec binary runs")
}

/// A fresh, empty directory for test `name` of the binary `tag`.
pub fn fresh_dir(tag: &str, name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("gpufec-{tag}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The run failed with exit status 1 and one line `error: ...` holding
/// every piece of `want`.
pub fn refused(o: &Output, want: &[&str]) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.starts_with("error: ") && err.trim_end().lines().count() == 1, "not one line: {err}");
    for w in want {
        assert!(err.contains(w), "{err:?} lacks {w:?}");
    }
}

/// A loopback port that was free a moment ago (for a ZeroMQ address).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// The output of `child`, which is killed, failing the test, if it runs
/// past `limit` (a test must not hang).
pub fn finish_within(mut child: std::process::Child, limit: Duration) -> Output {
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            let o = child.wait_with_output().unwrap();
            panic!("a process ran past {limit:?} and was killed: {}", String::from_utf8_lossy(&o.stderr));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// The line of the BER sink named `ber` in a run's summary.
pub fn ber_line(out: &str) -> String {
    out.lines().find(|l| l.starts_with("ber 'ber':")).unwrap_or_else(|| panic!("no BER line in {out}")).to_string()
}

/// Decode `llrs` (units of `unit` LLRs) through `d` batch by batch where
/// they lie (`submit_reused`), as a stream's decoder block submits its
/// input buffer; `locked`: every batch must go page-locked, not staged.
pub fn decode_in_place<T: gpufec::codes::llr::Llr>(d: &mut dyn gpufec::codes::decode::BatchDecoder<T>, llrs: &[T], unit: usize, locked: bool) -> gpufec::codes::decode::Decoded {
    let mut out = gpufec::codes::decode::Decoded::default();
    for part in llrs.chunks(d.limit().units * unit) {
        if d.in_flight() >= d.depth() {
            d.collect(&mut out).unwrap();
        }
        // SAFETY: `llrs` is not written, and outlives the loan: `forget_reused` below.
        let went = unsafe { d.submit_reused(&gpufec::codes::decode::Batch::uniform(part, unit).unwrap()) }.unwrap();
        assert!(went || !locked, "the batch was staged, not copied where it lies");
    }
    while d.collect(&mut out).unwrap() {}
    d.reused_read().unwrap();
    d.forget_reused();
    out
}

/// `bits` (0 or 1 each) packed eight to a byte, the first
/// in the most significant place: a decoder's packed output.
pub fn packed(bits: &[u8]) -> Vec<u8> {
    let mut out = vec![0; bits.len().div_ceil(8)];
    gpufec::codes::packed::par_pack_msb(bits, &mut out);
    out
}
