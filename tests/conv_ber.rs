//! BER of the CPU Viterbi decoders against theory and against each other, with
//! fixed seeds (deterministic: a bound that fails means the decoder changed).

use gpufec::codes::conv::*;
use gpufec::codes::sim::{Link, Point, StopRule, run_point};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

fn k7() -> Arc<Trellis> {
    Arc::new(Trellis::new(&ConvCode::k7_171_133()))
}

/// The LLR type at the decoder, with the i8 quantizer's scale (`None`: matched).
#[derive(Debug, Clone, Copy)]
enum LlrKind {
    F32,
    I8 { scale: Option<f32> },
}

fn run(rate: &str, mode: ViterbiMode, llr: LlrKind, ebn0: f64, stop: StopRule, seed: u64) -> Point {
    let trellis = k7();
    let setup = ConvSetup {
        trellis: trellis.clone(),
        puncture: PuncturePattern::standard(rate).unwrap(),
        mode,
        frame_bits: match mode {
            ViterbiMode::Frame(f) => f.frame,
            ViterbiMode::Tiled(t) => t.f,
        },
        i8_scale: match llr {
            LlrKind::I8 { scale } => scale,
            LlrKind::F32 => None,
        },
    };
    let mut link: Box<dyn Link> = match llr {
        LlrKind::F32 => Box::new(ConvLink::new(setup, Box::new(CpuViterbi::<f32>::new(trellis, mode, 0).unwrap())).unwrap()),
        LlrKind::I8 { .. } => Box::new(ConvLink::new(setup, Box::new(CpuViterbi::<i8>::new(trellis, mode, 0).unwrap())).unwrap()),
    };
    let p = run_point(link.as_mut(), ebn0, seed, stop, &AtomicBool::new(false), Duration::MAX, |_| {}).unwrap();
    eprintln!("{rate} {mode:?} {llr:?} {ebn0} dB: {} errors / {} bits = {:.3e}, {} frames, {:.2} s", p.bit_errors, p.bits, p.ber(), p.frames, p.seconds);
    p
}

fn frame(n: usize) -> ViterbiMode {
    ViterbiMode::Frame(FrameConfig::new(n, true).unwrap())
}

/// Gaussian tail Q(x) from the asymptotic expansion of erfc: for the x > 4.5
/// used here it agrees with erfc to better than 1e-4 (relative).
fn q(x: f64) -> f64 {
    let z = x / std::f64::consts::SQRT_2;
    let mut term = 1.0;
    let mut sum = 1.0;
    for k in 1..6 {
        term *= -((2 * k - 1) as f64) / (2.0 * z * z);
        sum += term;
    }
    0.5 * (-z * z).exp() / (z * std::f64::consts::PI.sqrt()) * sum
}

/// Union bound on the BER of K=7 (171,133), soft decision, from its first five
/// bit-weight spectrum terms (d = 10, 12, 14, 16, 18).
fn union_bound(ebn0_db: f64) -> f64 {
    let es = 0.5 * 10f64.powf(ebn0_db / 10.0);
    [(10, 36.0), (12, 211.0), (14, 1404.0), (16, 11633.0), (18, 77433.0)]
        .iter()
        .map(|&(d, c)| c * q((2.0 * d as f64 * es).sqrt()))
        .sum()
}

#[test]
fn full_frame_k7_matches_the_known_curve() {
    // Known soft-decision curve (unquantized): ~5e-3 at 2 dB, ~3.5e-4 at 3 dB,
    // ~1.5e-5 at 4 dB. Error events come in bursts of several bits, so the
    // windows are wide; they still catch a decoder that is off by ~0.3 dB.
    for (ebn0, want, max_bits) in [(2.0, 5e-3, 400_000u64), (3.0, 3.5e-4, 2_000_000), (4.0, 1.5e-5, 12_000_000)] {
        let p = run("1/2", frame(2048), LlrKind::F32, ebn0, StopRule { max_bits, max_errors: 600 }, 1);
        assert!(p.bit_errors >= 100, "too few errors to judge at {ebn0} dB: {}", p.bit_errors);
        assert!(p.ber() > want * 0.55 && p.ber() < want * 1.6, "BER {:.3e} at {ebn0} dB, expected about {want:.1e}", p.ber());
    }
}

#[test]
fn union_bound_holds_at_high_snr() {
    // At 4.5 dB the union bound (3.0e-6) is tight: the measured BER must sit
    // near it, never well above.
    let p = run("1/2", frame(2048), LlrKind::F32, 4.5, StopRule { max_bits: 60_000_000, max_errors: 200 }, 2);
    let ub = union_bound(4.5);
    assert!(p.ber() < 1.25 * ub && p.ber() > 0.25 * ub, "BER {:.3e} vs union bound {ub:.3e}", p.ber());
}

#[test]
fn punctured_rates_match_their_curves() {
    // DVB-S 2/3 and 3/4 with K=7: about 1e-4 at 4.0 dB and 4.6 dB respectively
    // (soft decision); windows as above.
    let p = run("2/3", frame(2048), LlrKind::F32, 4.0, StopRule { max_bits: 6_000_000, max_errors: 500 }, 3);
    assert!(p.ber() > 3e-5 && p.ber() < 3e-4, "2/3 at 4.0 dB: {:.3e}", p.ber());
    let p = run("3/4", frame(2048), LlrKind::F32, 4.6, StopRule { max_bits: 6_000_000, max_errors: 500 }, 4);
    assert!(p.ber() > 3e-5 && p.ber() < 3e-4, "3/4 at 4.6 dB: {:.3e}", p.ber());
}

#[test]
fn i8_input_is_within_a_tenth_of_a_db_of_f32() {
    // If i8 lost more than 0.1 dB, its BER at 3.1 dB would exceed the f32 BER at
    // 3.0 dB. Same seed, so both see the same bits and noise.
    let stop = StopRule { max_bits: 3_000_000, max_errors: 100_000 };
    let f = run("1/2", frame(2048), LlrKind::F32, 3.0, stop, 5);
    let i = run("1/2", frame(2048), LlrKind::I8 { scale: None }, 3.1, stop, 5);
    assert!(i.ber() < f.ber(), "i8 at 3.1 dB {:.3e} vs f32 at 3.0 dB {:.3e}", i.ber(), f.ber());
    let i0 = run("1/2", frame(2048), LlrKind::I8 { scale: None }, 3.0, stop, 5);
    assert!(i0.ber() < 1.3 * f.ber(), "i8 {:.3e} vs f32 {:.3e} at 3 dB", i0.ber(), f.ber());
}
