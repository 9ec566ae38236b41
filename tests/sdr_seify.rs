//! The radio source through seify's dummy driver (cargo feature `seify`; it
//! sends zeros forever): the block stops after exactly the samples it was
//! asked for, the shipped `ccsds_rx_sdr.toml` runs its whole chain on them to
//! a clean end with no frames, and settings no radio could take are refused
//! naming the field before any device is opened.
#![cfg(feature = "seify")]

use futuresdr::blocks::VectorSink;
use futuresdr::runtime::Flowgraph;
use gpufec::blocks::{SdrSettings, SdrSource};
use num_complex::Complex32;
use std::sync::atomic::Ordering;

mod common;

const SHIPPED: &str = "flowgraphs/ccsds_rx_sdr.toml";

fn dummy(samples: Option<u64>) -> SdrSettings {
    SdrSettings { args: "driver=dummy".into(), frequency: 437.5e6, sample_rate: 240e3, gain: Some(30.0), samples }
}

#[test]
fn the_source_stops_after_exactly_the_samples_asked_for() {
    // Not a multiple of any buffer size, so the last read is cut to the bound.
    let n = 100_003;
    let mut fg = Flowgraph::new();
    let snk = fg.add(VectorSink::<Complex32>::new(n));
    let src = fg.add(SdrSource::new(dummy(Some(n as u64))).unwrap());
    fg.stream_dyn(src, "output", snk, "input").unwrap();
    let fg = gpufec::blocks::runtime().run(fg).unwrap();
    let items = snk.get(&fg).unwrap().items().clone();
    assert_eq!(items.len(), n);
    assert!(items.iter().all(|s| *s == Complex32::new(0.0, 0.0)), "the dummy driver sends zeros");
}

#[test]
fn the_shipped_receive_chain_ends_cleanly_on_zeros_with_no_frames() {
    let dir = common::fresh_dir("sdr", "zeros");
    let frames = dir.join("frames.hex");
    let (out, samples) = (format!("vars.frames=\"{}\"", frames.display()), "vars.samples=480000");
    let summary = common::run_file(SHIPPED, &[&out, samples]).unwrap();
    let counts = &summary.frames.iter().find(|(n, _)| n == "sync").unwrap().1;
    assert_eq!(counts.found.load(Ordering::Relaxed), 0, "zeros hold no marker");
    let decoded = summary.decoders[0].stats.counts();
    // 480 000 samples at 25 per symbol: 19 200 soft bits, 9 600 decoded,
    // less what the receiver's filters and the stage sync hold back.
    assert!((9_000..=9_600).contains(&decoded.bits), "{} bits decoded", decoded.bits);
    assert_eq!(std::fs::read(&frames).unwrap(), b"", "no frames written");
}

#[test]
fn settings_no_radio_could_take_are_refused_naming_the_field() {
    for (set, field, want) in [
        ("vars.frequency=-1.0", "frequency", "not a frequency above 0"),
        ("vars.sample_rate=0.0", "sample_rate", "not a frequency above 0"),
        ("vars.gain=-3.0", "gain", "not a gain of 0 dB or more"),
        ("vars.device=\" \"", "args", "is empty"),
        ("vars.device=\"driver=nosuchradio\"", "args", "radio 'driver=nosuchradio': cannot open it"),
    ] {
        let e = common::run_file(SHIPPED, &[set, "vars.samples=1000"]).unwrap_err().to_string();
        assert!(e.contains("block 'radio' (SdrSource)") && e.contains(&format!("field '{field}'")) && e.contains(want), "{set}: {e}");
    }
    let e = SdrSource::new(SdrSettings { frequency: f64::NAN, ..dummy(None) }).err().unwrap().to_string();
    assert!(e.starts_with("frequency: NaN Hz"), "{e}");
}

#[test]
fn the_cli_refuses_a_missing_radio_in_one_line_naming_its_arguments() {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_gpufec"))
        .args(["run", SHIPPED, "--set", "vars.device=driver=nosuchradio", "--set", "vars.samples=1000"])
        .output()
        .unwrap();
    common::refused(&o, &["SdrSource", "driver=nosuchradio", "cannot open it"]);
}
