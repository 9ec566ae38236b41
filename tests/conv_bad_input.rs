//! Every bad input to the convolutional chain is answered with a clear error,
//! never a panic or a hang.

use gpufec::codes::BatchDecoder;
use gpufec::codes::conv::*;
use gpufec::codes::sim::{ConvLink, LinkDecoder, LlrKind, StopRule};
use std::sync::Arc;

fn k7() -> Arc<Trellis> {
    Arc::new(Trellis::new(&ConvCode::k7_171_133()))
}

fn tiled() -> ViterbiMode {
    ViterbiMode::Tiled(TileConfig::new(64, 8, 16, Traceback::Serial).unwrap())
}

#[test]
fn non_finite_llrs_are_rejected_with_their_index() {
    let mut dec = CpuViterbi::<f32>::new(k7(), tiled(), 2).unwrap();
    let unit = dec.unit().llrs_in;
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
    let unit = dec.unit().llrs_in;
    let err = dec.decode_all(&vec![1i8; unit + 1], &mut Vec::new()).unwrap_err().to_string();
    assert!(err.contains("whole number"), "{err}");
    let mut out = vec![0u8; 10];
    assert!(dec.decode_units(&vec![1i8; unit], &mut out).is_err());
}

#[test]
fn link_rejects_a_pattern_that_does_not_fit_the_code() {
    let link = ConvLink {
        trellis: k7(),
        puncture: PuncturePattern::parse("110,101,111").unwrap(),
        mode: tiled(),
        frame_bits: 64,
        llr: LlrKind::F32,
    };
    let mut dec = LinkDecoder::F32(Box::new(CpuViterbi::<f32>::new(k7(), tiled(), 1).unwrap()));
    let err = link.run_point(&mut dec, 3.0, StopRule { max_bits: 1000, max_errors: 10 }, 1).unwrap_err().to_string();
    assert!(err.contains("3 rows") && err.contains("2 outputs"), "{err}");
    let mut wrong = LinkDecoder::I8(Box::new(CpuViterbi::<i8>::new(k7(), tiled(), 1).unwrap()));
    let link = ConvLink { puncture: PuncturePattern::none(2), ..link };
    assert!(link.run_point(&mut wrong, 3.0, StopRule { max_bits: 1000, max_errors: 10 }, 1).is_err());
    assert!(link.run_point(&mut dec, f64::NAN, StopRule { max_bits: 1000, max_errors: 10 }, 1).is_err());
}
