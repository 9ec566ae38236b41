//! Split chains: the front end and the decoder as two `gpufec run`
//! processes joined by ZeroMQ on loopback decode exactly what the chain
//! decodes in one process; bad addresses and mis-sized peers are one line
//! of error.

mod common;

use common::{ber_line, finish_within as finish, free_port, fresh_dir, gpufec, refused};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

fn start(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_gpufec")).args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("gpufec starts")
}

fn ok(o: &Output) -> String {
    let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{out}\n{err}");
    out.into_owned()
}

/// The single-process chain of the split files: bits → encoder → channel →
/// decoder → BER and a packed bit file.
fn single_process_chain(d: &Path) -> std::path::PathBuf {
    let path = d.join("single.toml");
    std::fs::write(
        &path,
        r#"
connections = ["source > encoder > channel > decoder > probe > ber.decoded", "source > ber.reference", "probe > decoded_file"]
[vars]
seed = 1
total = 1e6
ebn0_db = 4.0
decoded = "single.packed"
[codes.conv]
family = "conv"
rate = "1/2"
[blocks.source]
type = "RandomBits"
seed = "$seed"
total = "$total"
[blocks.encoder]
type = "ConvEncoder"
[blocks.channel]
type = "BpskAwgn"
ebn0_db = "$ebn0_db"
seed = "$seed"
llr = "i8"
[blocks.decoder]
type = "ViterbiDecoder"
llr = "i8"
input = "stream"
[blocks.probe]
type = "ThroughputProbe"
[blocks.decoded_file]
type = "FileSink"
path = "$decoded"
format = "packed"
[blocks.ber]
type = "BerSink"
"#,
    )
    .unwrap();
    path
}

#[test]
fn two_processes_on_loopback_decode_exactly_what_one_process_decodes() {
    let d = fresh_dir("split", "exact");
    let port = free_port();
    let (split, single) = (d.join("split.packed"), d.join("single.packed"));
    let common = ["--set", "vars.seed=7", "--set", "vars.total=2000000"];
    let decoder_sets = [format!("vars.address=tcp://127.0.0.1:{port}"), format!("vars.decoded={}", split.display())];
    let frontend_sets = [format!("vars.address=tcp://127.0.0.1:{port}"), "vars.ebn0_db=3".to_string()];
    let with = |file: &str, sets: &[String]| -> Vec<String> {
        let mut a = vec!["run".to_string(), file.to_string(), "--backend".into(), "cpu".into()];
        a.extend(common.iter().map(|s| s.to_string()));
        for s in sets {
            a.extend(["--set".to_string(), s.clone()]);
        }
        a
    };
    let (dec_args, fe_args) = (with("flowgraphs/split_decoder.toml", &decoder_sets), with("flowgraphs/split_frontend.toml", &frontend_sets));
    // Decoder first: it connects and waits; the front end binds and pushes.
    let decoder = start(&dec_args.iter().map(String::as_str).collect::<Vec<_>>());
    let frontend = start(&fe_args.iter().map(String::as_str).collect::<Vec<_>>());
    let fe = finish(frontend, Duration::from_secs(120));
    let dec = finish(decoder, Duration::from_secs(120));
    ok(&fe);
    let split_out = ok(&dec);
    let err = String::from_utf8_lossy(&dec.stderr);
    assert!(err.contains("block 'pull': received 4000000 items in"), "{err}");

    let path = single_process_chain(&d);
    let single_out = ok(&gpufec(&[
        "run",
        path.to_str().unwrap(),
        "--backend",
        "cpu",
        "--set",
        "vars.seed=7",
        "--set",
        "vars.total=2000000",
        "--set",
        "vars.ebn0_db=3",
        "--set",
        &format!("vars.decoded={}", single.display()),
    ]));
    let (a, b) = (std::fs::read(&split).unwrap(), std::fs::read(&single).unwrap());
    assert_eq!(a.len(), 250_000);
    assert!(a == b, "the split chain decoded other bits than the single process");
    let line = ber_line(&split_out);
    assert_eq!(line, ber_line(&single_out));
    assert!(!line.contains(" 0 errors"), "at 3 dB some bits are wrong, and both count the same: {line}");
}

#[test]
fn a_malformed_or_bound_address_is_one_line_of_error_before_the_run() {
    let o = gpufec(&["run", "flowgraphs/split_frontend.toml", "--set", "vars.address=tcp://127.0.0.1:99999"]);
    refused(&o, &["block 'push' (ZmqPushSink): field 'address'", "port '99999' is not a number in 1..=65535"]);
    let o = gpufec(&["run", "flowgraphs/split_decoder.toml", "--set", "vars.address=localhost:5555"]);
    refused(&o, &["block 'pull' (ZmqPullSource): field 'address'", "'localhost:5555' is not a ZeroMQ address: expected tcp://HOST:PORT"]);
    let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = held.local_addr().unwrap().port();
    let o = gpufec(&["run", "flowgraphs/split_frontend.toml", "--set", &format!("vars.address=tcp://127.0.0.1:{port}")]);
    refused(&o, &[&format!("cannot bind tcp://127.0.0.1:{port}: the address is already in use")]);
    let o = gpufec(&["run", "flowgraphs/split_frontend.toml", "--set", "push.hwm=0"]);
    refused(&o, &["field 'hwm': 0 is outside 1..=1048576"]);
}

#[test]
fn a_peer_sending_partial_items_fails_the_decoder_naming_the_bytes_and_the_item_size() {
    let ctx = zmq::Context::new();
    let push = ctx.socket(zmq::PUSH).unwrap();
    // A port the system picks as it binds: a free port found first could be
    // taken by a test running beside this one before the bind.
    push.bind("tcp://127.0.0.1:*").unwrap();
    let address = push.get_last_endpoint().unwrap().expect("a UTF-8 endpoint");
    let decoder = start(&[
        "run",
        "flowgraphs/split_decoder.toml",
        "--backend",
        "cpu",
        "--set",
        &format!("vars.address={address}"),
        "--set",
        "pull.item=f32",
        "--set",
        "decoder.llr=f32",
        "--set",
        "vars.decoded=/dev/null",
    ]);
    push.send(vec![0u8; 1001], 0).unwrap();
    let o = finish(decoder, Duration::from_secs(60));
    refused(&o, &["block 'pull'", "holds 1001 bytes of items, not a whole number of 4-byte f32 items (1 bytes left over)"]);
}
