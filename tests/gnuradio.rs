//! GNU Radio itself on one side of a split chain: a GNU Radio flowgraph
//! pushes i8 LLRs over gr-zeromq's push_sink and
//! `flowgraphs/split_decoder.toml` pulls and decodes them. From a file of
//! gpufec's LLRs (`tests/gnuradio/push_llrs.py`), the bits and BER are those
//! gpufec decodes from the file; from GNU Radio's own encoder and noise
//! (`tests/gnuradio/encode_push.py`), those gpufec decodes from the file GNU
//! Radio wrote beside, and the BER is that of gpufec's own chain, within chance.
//! The other way, GNU Radio's pull_source (`tests/gnuradio/pull_llrs.py`)
//! takes from `flowgraphs/split_frontend.toml` the LLRs gpufec writes to a
//! file for the same seed, byte for byte.
//!
//! Needs Debian's `gnuradio` (`scripts/setup-zmq.sh` installs it); says
//! SKIPPED without it, and fails without it when `GPUFEC_GNURADIO=1`
//! (`.ci/run` sets it once the setup has installed GNU Radio).

mod common;

use common::{ber_line, finish_within, free_port, fresh_dir, gpufec, say};
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::Duration;

/// GNU Radio's Python, which Debian's packages install for.
const PYTHON: &str = "/usr/bin/python3";

fn have_gnuradio(test: &str) -> bool {
    let found = Command::new(PYTHON).args(["-c", "from gnuradio import gr, blocks, zeromq"]).output().is_ok_and(|o| o.status.success());
    if !found {
        assert!(std::env::var("GPUFEC_GNURADIO").as_deref() != Ok("1"), "GPUFEC_GNURADIO=1 but GNU Radio's Python bindings do not import");
        say(&format!("SKIPPED {test}: GNU Radio is not installed (scripts/setup-zmq.sh installs it)"));
    }
    found
}

fn ok(args: &[&str]) -> String {
    let o = gpufec(args);
    let (out, err) = (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "gpufec {args:?}: {out}\n{err}");
    out
}

/// The bit errors a BER line counts.
fn errors(line: &str) -> u64 {
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words.iter().position(|w| w.starts_with("errors")).expect("a BER line counts errors");
    words[at - 1].parse().unwrap()
}

/// Run GNU Radio's `script` (with `args`, its address last but for
/// `after`) against `split_decoder.toml` pulling 2·`total` LLRs and counting
/// against the bits of `seed`, writing the bits to `decoded`; the decoder's
/// summary.
fn decode_from_gnuradio(script: &str, args: &[&str], address: &str, after: &[&str], seed: &str, total: &str, decoded: &str) -> String {
    // gpufec connects and waits; GNU Radio binds and pushes. GNU Radio sends
    // no end of stream: the decoder ends after 2·total LLRs.
    let llrs = 2 * total.parse::<u64>().unwrap();
    let decoder = Command::new(env!("CARGO_BIN_EXE_gpufec"))
        .args(["run", "flowgraphs/split_decoder.toml", "--backend", "cpu"])
        .args(["--set", &format!("vars.address={address}"), "--set", &format!("pull.total={llrs}"), "--set", &format!("vars.seed={seed}")])
        .args(["--set", &format!("vars.total={total}"), "--set", &format!("vars.decoded={decoded}")])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut gnuradio = Command::new(PYTHON)
        .arg(script)
        .args(args)
        .arg(address)
        .args(after)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let dec = finish_within(decoder, Duration::from_secs(120));
    // Its queue delivered: GNU Radio may close its socket now.
    drop(gnuradio.stdin.take());
    let gr_status = gnuradio.wait().unwrap();
    let (mut gr_out, mut gr_err) = (String::new(), String::new());
    gnuradio.stdout.take().unwrap().read_to_string(&mut gr_out).unwrap();
    gnuradio.stderr.take().unwrap().read_to_string(&mut gr_err).unwrap();
    assert!(gr_status.success(), "GNU Radio's flowgraph failed: {gr_out}\n{gr_err}");
    assert!(gr_out.contains(&format!("pushed {llrs} items")), "{gr_out}");
    say(gr_out.trim());
    let (out, err) = (String::from_utf8_lossy(&dec.stdout), String::from_utf8_lossy(&dec.stderr));
    assert!(dec.status.success(), "{out}\n{err}");
    assert!(err.contains(&format!("block 'pull': received {llrs} items in")), "{err}");
    out.into_owned()
}

fn free_address() -> String {
    format!("tcp://127.0.0.1:{}", free_port())
}

/// Information bits and gpufec's LLRs for them (seed 3, 10^6 bits, 3 dB)
/// in `d`, and the BER line of gpufec decoding its own LLR file.
fn gpufec_files(d: &std::path::Path) -> (String, String, String) {
    let path = |name: &str| d.join(name).display().to_string();
    let (bits, llrs) = (path("bits.packed"), path("llrs.i8"));
    ok(&["run", "flowgraphs/awgn_to_files.toml", "--set", &format!("vars.bits={bits}"), "--set", &format!("vars.llrs={llrs}"), "--set", "source.total=1000000", "--set", "vars.seed=3", "--set", "vars.ebn0_db=3"]);
    let own = ber_line(&decode_file(&llrs, &bits, &path("own.packed")));
    (bits, llrs, own)
}

/// `viterbi_file_ber.toml` on `llrs` against `bits`, the bits into `decoded`.
fn decode_file(llrs: &str, bits: &str, decoded: &str) -> String {
    ok(&["run", "flowgraphs/viterbi_file_ber.toml", "--backend", "cpu", "--set", &format!("vars.llrs={llrs}"), "--set", &format!("vars.bits={bits}"), "--set", &format!("vars.decoded={decoded}")])
}

#[test]
fn gnuradio_pushes_llrs_that_gpufec_decodes_as_from_a_file() {
    if !have_gnuradio("gnuradio_pushes_llrs_that_gpufec_decodes_as_from_a_file") {
        return;
    }
    let d = fresh_dir("gnuradio", "push");
    let (_, llrs, from_file) = gpufec_files(&d);
    let decoded = d.join("gnuradio.packed").display().to_string();
    let out = decode_from_gnuradio("tests/gnuradio/push_llrs.py", &[&llrs], &free_address(), &[], "3", "1000000", &decoded);
    assert!(std::fs::read(&decoded).unwrap() == std::fs::read(d.join("own.packed")).unwrap(), "the bits decoded from GNU Radio's stream differ from those decoded from the file");
    let line = ber_line(&out);
    assert_eq!(line, from_file);
    assert!(errors(&line) > 0, "at 3 dB some bits are wrong, and both count the same: {line}");
    say(&format!("GNU Radio's push_sink → gpufec: {line}"));
}

#[test]
fn gnuradio_encodes_and_adds_noise_and_gpufec_decodes_as_its_own_chain() {
    if !have_gnuradio("gnuradio_encodes_and_adds_noise_and_gpufec_decodes_as_its_own_chain") {
        return;
    }
    let d = fresh_dir("gnuradio", "encode");
    let (bits, _, own) = gpufec_files(&d);
    let path = |name: &str| d.join(name).display().to_string();
    let (gr_llrs, decoded) = (path("gr_llrs.i8"), path("gnuradio.packed"));
    let out = decode_from_gnuradio("tests/gnuradio/encode_push.py", &[&bits, "3", "5"], &free_address(), &[&gr_llrs], "3", "1000000", &decoded);
    // What came over ZeroMQ is what GNU Radio wrote to its file, decoded alike.
    let from_file = decode_file(&gr_llrs, &bits, &path("gr_file.packed"));
    assert!(std::fs::read(&decoded).unwrap() == std::fs::read(path("gr_file.packed")).unwrap(), "the bits decoded from GNU Radio's stream differ from those decoded from its file");
    let line = ber_line(&out);
    assert_eq!(line, ber_line(&from_file));
    // GNU Radio's encoder is gpufec's code (a wrong one decodes to BER ½), and
    // its noise at 3 dB costs what gpufec's own channel costs, within chance.
    let (theirs, ours) = (errors(&line), errors(&own));
    assert!(theirs > 0 && theirs * 2 > ours && theirs < ours * 2, "GNU Radio's chain: {line}; gpufec's: {own}");
    say(&format!("GNU Radio's encoder and noise → gpufec: {line}; gpufec's own chain: {own}"));
}

#[test]
fn gnuradio_pulls_the_llrs_of_the_split_front_end_as_gpufec_writes_them_to_a_file() {
    if !have_gnuradio("gnuradio_pulls_the_llrs_of_the_split_front_end_as_gpufec_writes_them_to_a_file") {
        return;
    }
    let d = fresh_dir("gnuradio", "pull");
    let (_, llrs, _) = gpufec_files(&d);
    let pulled = d.join("pulled.i8").display().to_string();
    let port = free_port();
    // gpufec binds and pushes (waiting for a receiver); GNU Radio connects and pulls.
    let frontend = Command::new(env!("CARGO_BIN_EXE_gpufec"))
        .args(["run", "flowgraphs/split_frontend.toml", "--set", &format!("vars.address=tcp://127.0.0.1:{port}")])
        .args(["--set", "vars.seed=3", "--set", "vars.total=1000000", "--set", "vars.ebn0_db=3"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let gnuradio = Command::new(PYTHON)
        .args(["tests/gnuradio/pull_llrs.py", &format!("tcp://127.0.0.1:{port}"), "2000000", &pulled])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let gnuradio = finish_within(gnuradio, Duration::from_secs(120));
    let (gr_out, gr_err) = (String::from_utf8_lossy(&gnuradio.stdout), String::from_utf8_lossy(&gnuradio.stderr));
    assert!(gnuradio.status.success(), "GNU Radio's flowgraph failed: {gr_out}\n{gr_err}");
    say(gr_out.trim());
    let fe = finish_within(frontend, Duration::from_secs(120));
    assert!(fe.status.success(), "{}", String::from_utf8_lossy(&fe.stderr));
    assert!(std::fs::read(&pulled).unwrap() == std::fs::read(&llrs).unwrap(), "GNU Radio pulled other LLRs than gpufec writes to a file for the same seed");
}
