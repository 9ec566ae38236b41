//! Error rates of the CPU polar decoders against published figures, with
//! fixed seeds and bounds of four standard deviations, through the family's
//! link and the shared point runner.
//!
//! The published figures: AFF3CT's reference curve for the (1024, 512)
//! polar code of the 5G sequence, systematic, decoded by its fast SC
//! decoder (aff3ct/error_rate_references, `POLAR/AWGN/BPSK/SC/
//! Polar_N1024_K512_SC_5G_intra_p32.txt`, made with AFF3CT v2.2.2):
//! FER 1.02e-1 and BER 8.15e-3 at Eb/N0 = 2.0 dB (13400 frames),
//! FER 1.57e-2 and BER 9.02e-4 at 2.5 dB (31983 frames).

use gpufec::codes::polar::{Algorithm, BpConfig, Construction, CpuPolar, PolarFrames, PolarLink, PolarSpec};
use gpufec::codes::sim::{Link, Point, StopRule, run_point};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

fn point(link: &mut dyn Link, ebn0: f64, frames: u64) -> Point {
    let stop = StopRule { max_bits: frames * link.frame_bits() as u64, max_errors: u64::MAX };
    run_point(link, ebn0, 1, stop, &AtomicBool::new(false), Duration::from_secs(3600), |_| {}).unwrap()
}

/// Whether `got` frame errors of `frames` lie within four standard
/// deviations of a rate `p` (the binomial's), the published figure's own
/// spread added.
fn within(got: u64, frames: u64, p: f64, published_frames: f64) -> bool {
    let mean = p * frames as f64;
    let var = frames as f64 * p * (1.0 - p) + (frames as f64).powi(2) * p * (1.0 - p) / published_frames;
    (got as f64 - mean).abs() <= 4.0 * var.sqrt()
}

#[test]
fn sc_matches_the_published_5g_curve() {
    let spec = PolarSpec::new(Arc::new(Construction::Nr.build(1024, 512).unwrap()), true, None).unwrap();
    for (ebn0, fer, ber, published, frames) in [(2.0, 1.02e-1, 8.15e-3, 13400.0, 4000), (2.5, 1.57e-2, 9.02e-4, 31983.0, 12000)] {
        let dec = CpuPolar::<f32>::new(spec.clone(), Algorithm::Sc, 0).unwrap();
        let mut link = PolarLink::new(PolarFrames::Codewords(spec.clone()), Box::new(dec), None).unwrap();
        let p = point(&mut link, ebn0, frames);
        assert_eq!(p.frames, frames);
        assert!(within(p.frame_errors, p.frames, fer, published), "{ebn0} dB: FER {} against the published {fer}", p.fer());
        // Bit errors come in bursts of a frame; a looser bound.
        assert!((p.ber() / ber - 1.0).abs() < 0.3, "{ebn0} dB: BER {} against the published {ber}", p.ber());
    }
}

/// At 3 dB the i8 model of BP (matched quantizer) and the f32 reference
/// both decode (256, 128) to a frame error rate of a few percent and differ
/// by little; SCL with a list of 8 does better than both.
#[test]
fn bp_in_both_arithmetics_and_scl_through_the_link() {
    let spec = PolarSpec::plain(Arc::new(Construction::Nr.build(256, 128).unwrap()));
    let frames = 4000;
    let run_f32 = |alg| {
        let dec = CpuPolar::<f32>::new(spec.clone(), alg, 0).unwrap();
        point(&mut PolarLink::new(PolarFrames::Codewords(spec.clone()), Box::new(dec), None).unwrap(), 3.0, frames)
    };
    let f = run_f32(Algorithm::Bp(BpConfig::default()));
    let l8 = run_f32(Algorithm::Scl { list: 8 });
    let i8cfg = BpConfig { precision: gpufec::codes::polar::BpPrecision::I8, ..BpConfig::default() };
    let dec = CpuPolar::<i8>::new(spec.clone(), Algorithm::Bp(i8cfg), 0).unwrap();
    let i = point(&mut PolarLink::new(PolarFrames::Codewords(spec.clone()), Box::new(dec), None).unwrap(), 3.0, frames);
    assert!(f.fer() > 0.003 && f.fer() < 0.05, "f32 BP FER {}", f.fer());
    assert!(i.frame_errors <= f.frame_errors * 3 / 2 + 10, "i8 BP {} frame errors, f32 {}", i.frame_errors, f.frame_errors);
    assert!(l8.frame_errors * 2 < f.frame_errors, "SCL 8 {} frame errors, BP {}", l8.frame_errors, f.frame_errors);
    // BP's G-matrix stop counts its iterations: a few on average, at most 40.
    assert!(f.mean_iterations() > 1.0 && f.mean_iterations() < 10.0, "{}", f.mean_iterations());
    assert!(l8.mean_iterations().is_nan());
}

/// Whole 5G messages through the link: a UCI of 100 bits in 300 (CRC11) at
/// 1.5 dB and a DCI of 40 bits at aggregation level 2 (216 bits, CRC24C
/// with an RNTI) at 3.5 dB, 3000 each. The list beats SC by more than half,
/// and the CRCs flag nearly every wrong message (none went unflagged when
/// this was written).
#[test]
fn five_g_messages_through_the_link() {
    use gpufec::codes::polar::nr::{NrDecoder, NrPolar};
    for (chain, ebn0) in [(NrPolar::uci(100, 300).unwrap(), 1.5), (NrPolar::dci(40, 216, 0x1234).unwrap(), 3.5)] {
        let run = |alg| {
            let dec = NrDecoder::new(chain.clone(), |s| Ok(Box::new(CpuPolar::<f32>::new(s.clone(), alg, 0)?))).unwrap();
            point(&mut PolarLink::new(PolarFrames::Nr(chain.clone()), Box::new(dec), None).unwrap(), ebn0, 3000)
        };
        let (sc, scl) = (run(Algorithm::Sc), run(Algorithm::Scl { list: 8 }));
        let what = chain.describe();
        assert!(sc.frame_errors > 50 && scl.frame_errors * 2 < sc.frame_errors, "{what}: SC {} SCL {} frame errors", sc.frame_errors, scl.frame_errors);
        assert!(sc.undetected() * 20 <= sc.frame_errors && scl.undetected() * 10 <= scl.frame_errors.max(10), "{what}: undetected SC {} SCL {}", sc.undetected(), scl.undetected());
    }
}
