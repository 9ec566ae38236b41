//! GNU Radio itself on one side of a split chain: a GNU Radio flowgraph
//! (`tests/gnuradio/push_llrs.py`) pushes a file of i8 LLRs over gr-zeromq's
//! push_sink, `flowgraphs/split_decoder.toml` pulls and decodes them, and the
//! bits and BER are those gpufec decodes from the same file in one process.
//!
//! Needs Debian's `gnuradio` (`scripts/setup-zmq.sh` installs it); says
//! SKIPPED without it, and fails without it when `GPUFEC_GNURADIO=1`
//! (`.ci/run` sets it once the setup has installed GNU Radio).

mod common;

use common::{fresh_dir, gpufec, say};
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// GNU Radio's Python, which Debian's packages install for.
const PYTHON: &str = "/usr/bin/python3";

fn have_gnuradio() -> bool {
    let found = Command::new(PYTHON).args(["-c", "from gnuradio import gr, blocks, zeromq"]).output().is_ok_and(|o| o.status.success());
    if !found {
        assert!(std::env::var("GPUFEC_GNURADIO").as_deref() != Ok("1"), "GPUFEC_GNURADIO=1 but GNU Radio's Python bindings do not import");
        say("SKIPPED gnuradio_pushes_llrs_that_gpufec_decodes_as_from_a_file: GNU Radio is not installed (scripts/setup-zmq.sh installs it)");
    }
    found
}

fn ok(args: &[&str]) -> String {
    let o = gpufec(args);
    let (out, err) = (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "gpufec {args:?}: {out}\n{err}");
    out
}

fn ber_line(out: &str) -> String {
    out.lines().find(|l| l.starts_with("ber 'ber':")).unwrap_or_else(|| panic!("no BER line in {out}")).to_string()
}

#[test]
fn gnuradio_pushes_llrs_that_gpufec_decodes_as_from_a_file() {
    if !have_gnuradio() {
        return;
    }
    let d = fresh_dir("gnuradio", "push");
    let path = |name: &str| d.join(name).display().to_string();
    let (bits, llrs) = (path("bits.packed"), path("llrs.i8"));
    let (from_file, from_gnuradio) = (path("file.packed"), path("gnuradio.packed"));
    let total = "1000000";
    let seed = "3";
    ok(&["run", "flowgraphs/awgn_to_files.toml", "--set", &format!("vars.bits={bits}"), "--set", &format!("vars.llrs={llrs}"), "--set", &format!("source.total={total}"), "--set", &format!("vars.seed={seed}"), "--set", "vars.ebn0_db=3"]);
    let file_run = ok(&["run", "flowgraphs/viterbi_file_ber.toml", "--backend", "cpu", "--set", &format!("vars.llrs={llrs}"), "--set", &format!("vars.bits={bits}"), "--set", &format!("vars.decoded={from_file}")]);

    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let address = format!("tcp://127.0.0.1:{port}");
    // gpufec connects and waits; GNU Radio binds and pushes. GNU Radio sends
    // no end of stream: the decoder ends after the file's 2·10^6 LLRs.
    let decoder = Command::new(env!("CARGO_BIN_EXE_gpufec"))
        .args(["run", "flowgraphs/split_decoder.toml", "--backend", "cpu"])
        .args(["--set", &format!("vars.address={address}"), "--set", "pull.total=2000000", "--set", &format!("vars.seed={seed}")])
        .args(["--set", &format!("vars.total={total}"), "--set", &format!("vars.decoded={from_gnuradio}")])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut gnuradio = Command::new(PYTHON)
        .args(["tests/gnuradio/push_llrs.py", &llrs, &address])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let mut decoder = decoder;
    while decoder.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(120) {
            let _ = decoder.kill();
            let _ = gnuradio.kill();
            panic!("the decoder did not end within 120 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let dec = decoder.wait_with_output().unwrap();
    // Its queue delivered: GNU Radio may close its socket now.
    drop(gnuradio.stdin.take());
    let gr_status = gnuradio.wait().unwrap();
    let mut gr_out = String::new();
    gnuradio.stdout.take().unwrap().read_to_string(&mut gr_out).unwrap();
    let mut gr_err = String::new();
    gnuradio.stderr.take().unwrap().read_to_string(&mut gr_err).unwrap();
    assert!(gr_status.success(), "GNU Radio's flowgraph failed: {gr_out}\n{gr_err}");
    assert!(gr_out.contains("pushed 2000000 items"), "{gr_out}");
    say(gr_out.trim());
    let (out, err) = (String::from_utf8_lossy(&dec.stdout), String::from_utf8_lossy(&dec.stderr));
    assert!(dec.status.success(), "{out}\n{err}");
    assert!(err.contains("block 'pull': received 2000000 items in"), "{err}");

    assert!(std::fs::read(&from_gnuradio).unwrap() == std::fs::read(&from_file).unwrap(), "the bits decoded from GNU Radio's stream differ from those decoded from the file");
    let line = ber_line(&out);
    assert_eq!(line, ber_line(&file_run));
    assert!(!line.contains(" 0 errors"), "at 3 dB some bits are wrong, and both count the same: {line}");
    say(&format!("GNU Radio → gpufec: {line}"));
}
