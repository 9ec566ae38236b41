//! Every bad input to the convolutional chain is answered with a clear error,
//! never a panic or a hang.

use gpufec::codes::conv::*;
use gpufec::codes::sim::{Link, StopRule, run_point};
use gpufec::codes::{Batch, BatchDecoder};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

fn k7() -> Arc<Trellis> {
    Arc::new(Trellis::new(&ConvCode::k7_171_133()))
}

fn tiled() -> ViterbiMode {
    ViterbiMode::Tiled(TileConfig::new(64, 8, 16, Traceback::Serial).unwrap())
}

#[test]
fn non_finite_llrs_are_rejected_with_their_index() {
    let mut dec = CpuViterbi::<f32>::new(k7(), tiled(), 2).unwrap();
    let unit = dec.shapes()[0].items;
    for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        let mut llrs = vec![1.0f32; 3 * unit];
        llrs[unit + 5] = bad;
        let err = dec.decode_all(&llrs, &mut Vec::new()).unwrap_err().to_string();
        assert!(err.contains(&format!("index {}", unit + 5)), "{err}");
    }
}

#[test]
fn partial_units_and_length_mismatches_are_rejected() {
    let mut dec = CpuViterbi::<i8>::new(k7(), tiled(), 1).unwrap();
    let unit = dec.shapes()[0].items;
    let err = dec.decode_all(&vec![1i8; unit + 1], &mut Vec::new()).unwrap_err().to_string();
    assert!(err.contains("whole number"), "{err}");
    let mut out = vec![0u8; 10];
    let llrs = vec![1i8; unit];
    assert!(dec.decode_units(&Batch::uniform(&llrs, unit).unwrap(), &mut out).is_err());
}

#[test]
fn link_rejects_a_pattern_that_does_not_fit_the_code() {
    let setup = ConvSetup {
        trellis: k7(),
        puncture: PuncturePattern::parse("110,101,111").unwrap(),
        mode: tiled(),
        frame_bits: 64,
        i8_scale: None,
    };
    let dec = || Box::new(CpuViterbi::<f32>::new(k7(), tiled(), 1).unwrap());
    let err = ConvLink::new(setup.clone(), dec()).err().unwrap().to_string();
    assert!(err.contains("3 rows") && err.contains("2 outputs"), "{err}");
    // A decoder of other units than the link cuts (the LLR type is the link's own, by type).
    let other = ViterbiMode::Tiled(TileConfig::new(64, 8, 20, Traceback::Serial).unwrap());
    let setup = ConvSetup { puncture: PuncturePattern::none(2), ..setup };
    assert!(ConvLink::new(setup.clone(), Box::new(CpuViterbi::<i8>::new(k7(), other, 1).unwrap())).is_err());
    let mut link = ConvLink::new(setup, dec()).unwrap();
    let stop = StopRule { max_bits: 1000, max_errors: 10 };
    assert!(run_point(&mut link, f64::NAN, 1, stop, &AtomicBool::new(false), Duration::MAX, |_| {}).is_err());
    assert!(link.start(3.0, 1).is_ok());
}
