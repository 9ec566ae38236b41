//! The CPU polar decoders against each other: node decisions against the
//! bit-by-bit schedule, SCL with one path against SC, the `i8` model against
//! `f32` BP, every SIMD level against the others, and bad parameters.

use super::*;
use crate::codes::channel::{BpskAwgn, Channel, Quantizer};
use crate::codes::crc::{CRC11, CRC24C};
use crate::codes::decode::{Batch, BatchDecoder, Decoded};
use crate::codes::error::CodeError;
use crate::codes::polar::nr::{ParityChecks, nr_code};
use crate::codes::polar::{Construction, InfoCheck, PolarCode, PolarSpec, codeword_of_info, test_bits};
use crate::codes::simd::SimdLevel;
use std::sync::Arc;

/// `frames` random payloads of `spec`, and their codewords through BPSK
/// and AWGN at `ebn0_db` as `f32` LLRs.
fn noisy(spec: &PolarSpec, ebn0_db: f64, frames: usize, seed: u64) -> (Vec<u8>, Vec<f32>) {
    let p = spec.payload_len();
    let payload = test_bits(frames * p, seed);
    let mut x = vec![0; frames * spec.n()];
    for (pl, xs) in payload.chunks(p).zip(x.chunks_mut(spec.n())) {
        spec.encode(pl, xs).unwrap();
    }
    let mut llrs = Vec::new();
    BpskAwgn::new(ebn0_db, spec.rate(), seed ^ 0xA5).unwrap().transmit(&x, &mut llrs).unwrap();
    (payload, llrs)
}

fn run<T: crate::codes::llr::Llr>(dec: &mut CpuPolar<T>, llrs: &[T]) -> Decoded {
    let mut out = Decoded::default();
    dec.decode(&Batch::uniform(llrs, dec.spec().n()).unwrap(), &mut out).unwrap();
    out
}

/// Frames decoded wrong.
fn frame_errors(got: &[u8], want: &[u8], p: usize) -> usize {
    got.chunks(p).zip(want.chunks(p)).filter(|(a, b)| a != b).count()
}

fn spec(code: PolarCode, crc: bool) -> PolarSpec {
    let k = code.k();
    PolarSpec::new(Arc::new(code), false, crc.then(|| InfoCheck::new(&CRC11, k).unwrap())).unwrap()
}

fn all_algorithms() -> Vec<Algorithm> {
    let bp = |early_stop| Algorithm::Bp(BpConfig { iterations: 30, early_stop, precision: BpPrecision::F32 { alpha: BP_ALPHA } });
    vec![Algorithm::Sc, Algorithm::Scl { list: 1 }, Algorithm::Scl { list: 4 }, Algorithm::Scl { list: 32 }, bp(EarlyStop::GMatrix), bp(EarlyStop::Never)]
}

#[test]
fn every_decoder_decodes_clean_codewords() {
    let codes = [
        Construction::Nr.build(64, 32).unwrap(),
        Construction::Ga { design_ebn0_db: 3.0 }.build(256, 200).unwrap(),
        Construction::Nr.build(8, 8).unwrap(),
        Construction::Nr.build(8, 1).unwrap(),
        nr_code(20, 220, 256, ParityChecks { total: 3, weight: 1 }).unwrap(),
    ];
    for code in codes {
        for crc in [false, code.k() > 20] {
            let spec = spec(code.clone(), crc);
            let (payload, llrs) = noisy(&spec, 60.0, 40, 3);
            for alg in all_algorithms() {
                let mut dec = CpuPolar::<f32>::new(spec.clone(), alg, 2).unwrap();
                let out = run(&mut dec, &llrs);
                assert_eq!(out.bits, payload, "{} {}", spec.describe(), alg.describe());
                let want_check = (crc || matches!(alg, Algorithm::Bp(BpConfig { early_stop: EarlyStop::GMatrix, .. }))).then_some(true);
                assert!(out.reports.iter().all(|r| r.check == want_check && r.bits == spec.payload_len()), "{} {}", spec.describe(), alg.describe());
            }
        }
    }
}

/// One path keeps SC's decisions: the same plan, arithmetic and tie rules.
#[test]
fn scl_with_one_path_is_sc_bit_for_bit() {
    for (code, ebn0) in [
        (Construction::Nr.build(1024, 512).unwrap(), 1.5),
        (Construction::Ga { design_ebn0_db: 2.0 }.build(256, 128).unwrap(), 1.0),
        (nr_code(20, 220, 256, ParityChecks { total: 3, weight: 1 }).unwrap(), -1.0),
    ] {
        let spec = spec(code, false);
        let (payload, llrs) = noisy(&spec, ebn0, 300, 11);
        let sc = run(&mut CpuPolar::<f32>::new(spec.clone(), Algorithm::Sc, 2).unwrap(), &llrs);
        let scl = run(&mut CpuPolar::<f32>::new(spec.clone(), Algorithm::Scl { list: 1 }, 2).unwrap(), &llrs);
        let errors = frame_errors(&sc.bits, &payload, spec.payload_len());
        assert!(errors > 20 && errors < 280, "{}: {errors} frame errors do not exercise both outcomes", spec.describe());
        assert_eq!(sc.bits, scl.bits, "{}", spec.describe());
        // And from i8 LLRs, where exact ties are common.
        let mut q = Vec::new();
        Quantizer::new(2.0).unwrap().quantize(&llrs, &mut q).unwrap();
        let sc = run(&mut CpuPolar::<i8>::new(spec.clone(), Algorithm::Sc, 2).unwrap(), &q);
        let scl = run(&mut CpuPolar::<i8>::new(spec.clone(), Algorithm::Scl { list: 1 }, 2).unwrap(), &q);
        assert_eq!(sc.bits, scl.bits, "{} i8", spec.describe());
    }
}

/// Deciding Rate-1 and repetition nodes whole is exact apart from float
/// rounding; the SPC node's parity fix is maximum likelihood, where bit by
/// bit SC is not, so the two SCs differ in a few frames and their frame
/// error counts stay close. With a list, Hashemi's forks (min(L − 1, size)
/// for Rate-1, min(L, size − 1) for SPC) keep what bit-by-bit SCL keeps:
/// the same frames, every one.
#[test]
fn node_decisions_agree_with_bit_by_bit_decoding() {
    let spec = spec(Construction::Nr.build(1024, 512).unwrap(), true);
    let p = spec.payload_len();
    let (payload, llrs) = noisy(&spec, 2.0, 400, 5);
    let fast = run(&mut CpuPolar::<f32>::new(spec.clone(), Algorithm::Sc, 2).unwrap(), &llrs);
    let plain = run(&mut CpuPolar::<f32>::new(spec.clone(), Algorithm::Sc, 2).unwrap().unpruned(), &llrs);
    let differ = frame_errors(&fast.bits, &plain.bits, p);
    let (ef, ep) = (frame_errors(&fast.bits, &payload, p), frame_errors(&plain.bits, &payload, p));
    assert!(ep > 5 && differ * 10 <= ep && ef.abs_diff(ep) * 5 <= ep, "SC: {differ} frames differ; errors {ef} (nodes) vs {ep} (bits)");
    for (list, ebn0) in [(2, 1.5), (8, 1.0), (32, 1.0)] {
        let (payload, llrs) = noisy(&spec, ebn0, 300, 5);
        let alg = Algorithm::Scl { list };
        let fast = run(&mut CpuPolar::<f32>::new(spec.clone(), alg, 2).unwrap(), &llrs);
        let plain = run(&mut CpuPolar::<f32>::new(spec.clone(), alg, 2).unwrap().unpruned(), &llrs);
        let errors = frame_errors(&plain.bits, &payload, p);
        assert!(errors > 20, "L = {list}: {errors} frame errors is too few to compare");
        assert_eq!(fast.bits, plain.bits, "L = {list}");
    }
}

/// A list helps, and a CRC-aided list helps more than SC (fixed seeds, at
/// a point where SC fails often).
#[test]
fn the_list_and_its_crc_beat_sc() {
    let spec = spec(Construction::Nr.build(256, 128).unwrap(), true);
    let (payload, llrs) = noisy(&spec, 2.0, 1000, 21);
    let p = spec.payload_len();
    let errors = |alg| frame_errors(&run(&mut CpuPolar::<f32>::new(spec.clone(), alg, 2).unwrap(), &llrs).bits, &payload, p);
    let (sc, l2, l8, l32) = (errors(Algorithm::Sc), errors(Algorithm::Scl { list: 2 }), errors(Algorithm::Scl { list: 8 }), errors(Algorithm::Scl { list: 32 }));
    assert!(sc > 60 && l2 < sc && l8 * 2 < sc && l32 <= l8, "SC {sc}, SCL 2 {l2}, 8 {l8}, 32 {l32}");
}

/// The i8 model loses little against f32 BP at the matched quantizer's scale.
#[test]
fn i8_bp_is_close_to_f32_bp() {
    let spec = spec(Construction::Nr.build(256, 128).unwrap(), false);
    let ebn0 = 2.0;
    let (payload, llrs) = noisy(&spec, ebn0, 600, 9);
    let p = spec.payload_len();
    let cfg = |precision| Algorithm::Bp(BpConfig { iterations: 40, early_stop: EarlyStop::GMatrix, precision });
    let f = run(&mut CpuPolar::<f32>::new(spec.clone(), cfg(BpPrecision::F32 { alpha: BP_ALPHA }), 2).unwrap(), &llrs);
    let q = Quantizer::matched(crate::codes::channel::noise_variance(ebn0, spec.rate()).unwrap()).unwrap();
    let mut l8 = Vec::new();
    q.quantize(&llrs, &mut l8).unwrap();
    let i = run(&mut CpuPolar::<i8>::new(spec.clone(), cfg(BpPrecision::I8), 2).unwrap(), &l8);
    let (ef, ei) = (frame_errors(&f.bits, &payload, p), frame_errors(&i.bits, &payload, p));
    assert!(ef > 10 && ei <= ef + ef / 2 + 5, "f32 {ef}, i8 {ei} frame errors");
    let it = |d: &Decoded| d.reports.iter().map(|r| u64::from(r.iterations)).sum::<u64>() as f64 / d.reports.len() as f64;
    assert!((it(&i) - it(&f)).abs() < 0.25 * it(&f), "mean iterations f32 {} i8 {}", it(&f), it(&i));
    assert!(it(&f) > 2.0 && it(&f) < 30.0, "mean iterations {}", it(&f));
}

/// More BP iterations help, the G-matrix stop stops early on clean
/// codewords, and the CRC stop on a code with a CRC.
#[test]
fn bp_iterations_and_stops() {
    let spec = spec(Construction::Nr.build(256, 128).unwrap(), true);
    let (payload, llrs) = noisy(&spec, 3.0, 300, 4);
    let p = spec.payload_len();
    let bp = |iterations, early_stop| Algorithm::Bp(BpConfig { iterations, early_stop, precision: BpPrecision::F32 { alpha: BP_ALPHA } });
    let errors = |alg| {
        let out = run(&mut CpuPolar::<f32>::new(spec.clone(), alg, 2).unwrap(), &llrs);
        (frame_errors(&out.bits, &payload, p), out.reports.iter().map(|r| r.iterations).max().unwrap(), out.reports.iter().map(|r| r.iterations).min().unwrap())
    };
    let (e1, _, _) = errors(bp(1, EarlyStop::Never));
    let (e40, max40, min40) = errors(bp(40, EarlyStop::Never));
    assert!(e40 * 2 < e1 && (max40, min40) == (40, 40), "1: {e1}, 40: {e40}");
    let (eg, maxg, ming) = errors(bp(40, EarlyStop::GMatrix));
    let (ec, _, minc) = errors(bp(40, EarlyStop::Crc));
    assert!(ming < 10 && minc < 10 && maxg == 40 && eg <= e40 + 10 && ec <= e40 + 10, "G {eg} ({ming}..{maxg}), CRC {ec}");
}

/// Soft output: the sign of each payload bit's value is its decision, on
/// every codeword for a non-systematic code (both come from L + R at u),
/// and on every codeword the G-matrix stop ended for a systematic one
/// (then x̂ = û·G, whose bits are the output).
#[test]
fn bp_soft_output_agrees_with_its_bits() {
    for systematic in [false, true] {
        let code = Arc::new(Construction::Nr.build(128, 64).unwrap());
        let spec = PolarSpec::new(code, systematic, Some(InfoCheck::new(&CRC11, 64).unwrap())).unwrap();
        let (_, llrs) = noisy(&spec, 2.0, 200, 8);
        let mut dec = CpuPolar::<f32>::new(spec.clone(), Algorithm::Bp(BpConfig::default()), 2).unwrap().with_soft_output().unwrap();
        assert!(dec.gives_soft());
        let out = run(&mut dec, &llrs);
        assert_eq!(out.soft.len(), out.bits.len());
        let p = spec.payload_len();
        let mut compared = 0;
        for (u, r) in out.reports.iter().enumerate() {
            if systematic && r.iterations == 40 {
                continue;
            }
            compared += 1;
            for i in u * p..(u + 1) * p {
                assert_eq!(out.bits[i] == 1, out.soft[i] < 0.0, "systematic {systematic}, unit {u}, bit {i}");
            }
        }
        assert!(compared > 100, "{compared} codewords compared");
    }
}

#[test]
fn every_simd_level_gives_the_same_bits() {
    let spec = spec(Construction::Nr.build(512, 256).unwrap(), false);
    let (_, llrs) = noisy(&spec, 1.5, 100, 31);
    let want = run(&mut CpuPolar::<f32>::new(spec.clone(), Algorithm::Sc, 1).unwrap().with_simd(SimdLevel::Scalar).unwrap(), &llrs);
    for level in SimdLevel::supported() {
        let got = run(&mut CpuPolar::<f32>::new(spec.clone(), Algorithm::Sc, 2).unwrap().with_simd(level).unwrap().with_batch_units(37), &llrs);
        assert_eq!(got.bits, want.bits, "{level}");
    }
}

#[test]
fn systematic_codes_decode_to_their_information_bits() {
    let code = Arc::new(Construction::Ga { design_ebn0_db: 2.0 }.build(512, 256).unwrap());
    let spec = PolarSpec::new(code, true, Some(InfoCheck::new(&CRC24C, 256).unwrap())).unwrap();
    let (payload, llrs) = noisy(&spec, 60.0, 20, 2);
    for alg in all_algorithms() {
        assert_eq!(run(&mut CpuPolar::<f32>::new(spec.clone(), alg, 2).unwrap(), &llrs).bits, payload, "{}", alg.describe());
    }
    // And the clean codeword is what the encoder sent.
    let mut info = Vec::new();
    spec.check().unwrap().attach(&payload[..spec.payload_len()], &mut info).unwrap();
    let mut x = vec![0; 512];
    codeword_of_info(&spec, &info, &mut x);
    assert_eq!(x.iter().zip(&llrs[..512]).filter(|&(&b, &l)| (b == 1) != (l < 0.0)).count(), 0);
}

#[test]
fn bad_parameters_and_inputs_are_refused() {
    let s = spec(Construction::Nr.build(64, 32).unwrap(), false);
    let bp = |iterations, early_stop, precision| Algorithm::Bp(BpConfig { iterations, early_stop, precision });
    let f32bp = BpPrecision::F32 { alpha: BP_ALPHA };
    for (alg, says) in [
        (Algorithm::Scl { list: 0 }, "1..=32"),
        (Algorithm::Scl { list: 33 }, "1..=32"),
        (Algorithm::Scl { list: 1_000_000_000 }, "1..=32"),
        (bp(0, EarlyStop::GMatrix, f32bp), "1..=1000"),
        (bp(1001, EarlyStop::GMatrix, f32bp), "1..=1000"),
        (bp(u32::MAX, EarlyStop::Never, f32bp), "1..=1000"),
        (bp(10, EarlyStop::Crc, f32bp), "carries a CRC"),
        (bp(10, EarlyStop::GMatrix, BpPrecision::F32 { alpha: 0.0 }), "0 < α ≤ 1"),
        (bp(10, EarlyStop::GMatrix, BpPrecision::F32 { alpha: f32::NAN }), "0 < α ≤ 1"),
    ] {
        let e = CpuPolar::<f32>::new(s.clone(), alg, 1).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains(says), "{alg:?}: {e}");
    }
    assert!(CpuPolar::<f32>::new(s.clone(), Algorithm::Sc, 1).unwrap().with_soft_output().is_err());
    assert!(CpuPolar::<f32>::new(s.clone(), Algorithm::Sc, crate::codes::threads::MAX_THREADS + 1).is_err());
    let mut llrs = vec![1.0f32; 64 * 3];
    llrs[64 + 5] = f32::NAN;
    for alg in all_algorithms() {
        let mut dec = CpuPolar::<f32>::new(s.clone(), alg, 2).unwrap();
        let mut out = Decoded::default();
        assert_eq!(dec.decode(&Batch::uniform(&llrs, 64).unwrap(), &mut out), Err(CodeError::NonFiniteLlr { index: 69 }), "{}", alg.describe());
        let mut bits = Vec::new();
        assert!(dec.decode_all(&[1.0; 63], &mut bits).is_err());
    }
    assert!(CpuPolar::<i8>::new(s, bp(20, EarlyStop::GMatrix, BpPrecision::I8), 1).is_ok());
}



