//! The CPU Viterbi decoder gives the scalar reference model's bits at every
//! SIMD level, for tiles (serial and parallel traceback, grouped) and frames
//! (terminated and not), f32 and i8 LLRs, on noisy and adversarial input.
//! Each level is forced explicitly; a level this CPU lacks is reported as
//! skipped (and must be refused).

use gpufec::codes::channel::{BpskAwgn, Channel, Quantizer, noise_variance};
use gpufec::codes::conv::*;
use gpufec::codes::simd::SimdLevel;
use gpufec::codes::BatchDecoder;
use rand::{Rng, SeedableRng, rngs::SmallRng};
use std::sync::Arc;

/// K ∈ {3, 4, 5, 7, 9}, n ∈ {2, 3, 4}, complementary and not (172 skips the
/// oldest bit; 25/33/37/27 and 15/17/13 mix).
fn codes() -> Vec<Arc<Trellis>> {
    [
        (3, vec![0o7, 0o5]),
        (4, vec![0o15, 0o17, 0o13]),
        (5, vec![0o23, 0o35]),
        (5, vec![0o25, 0o33, 0o37, 0o27]),
        (7, vec![0o171, 0o133]),
        (7, vec![0o133, 0o171, 0o165]),
        (7, vec![0o172, 0o133]),
        (9, vec![0o561, 0o753]),
        (9, vec![0o557, 0o663, 0o711]),
    ]
    .into_iter()
    .map(|(k, p)| Arc::new(Trellis::new(&ConvCode::new(k, &p).unwrap())))
    .collect()
}

/// Named channel outputs for `coded` bits: AWGN at 1 dB as f32 and quantized
/// three ways (fine, coarse with many ties, saturating), then inputs with no
/// code structure: all equal, erased, random ±127 / −128.
fn inputs(coded: &[u8], seed: u64) -> Vec<(&'static str, Vec<f32>, Vec<i8>)> {
    let mut f = Vec::new();
    BpskAwgn::new(1.0, 0.5, seed).unwrap().transmit(coded, &mut f).unwrap();
    let var = noise_variance(1.0, 0.5).unwrap() as f32;
    let quant = |scale: f32| {
        let mut q = Vec::new();
        Quantizer::new(scale).unwrap().quantize(&f, &mut q).unwrap();
        q
    };
    let mut r = SmallRng::seed_from_u64(seed);
    let sat: Vec<i8> = (0..f.len()).map(|_| [127, -127, -128][r.random_range(0..3)]).collect();
    let n = f.len();
    vec![
        ("awgn", f.clone(), quant(16.0 * var)),
        ("awgn coarse", f.iter().map(|x| x.round()).collect(), quant(0.5 * var)),
        ("awgn saturating", f.iter().map(|x| x * 1e4).collect(), quant(1000.0 * var)),
        ("all equal", vec![2.5; n], vec![3; n]),
        ("erased", vec![0.0; n], vec![0; n]),
        ("saturated", sat.iter().map(|&v| v as f32).collect(), sat),
    ]
}

fn modes() -> Vec<ViterbiMode> {
    let tile = |f, v1, v2, tb, group| ViterbiMode::Tiled(TileConfig::new(f, v1, v2, tb).unwrap().with_group(group).unwrap());
    let frame = |bits, terminated| ViterbiMode::Frame(FrameConfig::new(bits, terminated).unwrap());
    vec![
        tile(256, 20, 20, Traceback::Serial, 1),
        tile(256, 20, 35, Traceback::Parallel { f0: 32 }, 2),
        tile(64, 12, 20, Traceback::Parallel { f0: 16 }, 3),
        tile(7, 9, 9, Traceback::Parallel { f0: 3 }, 2),
        tile(100, 0, 0, Traceback::Serial, 1),
        frame(2048, true),
        frame(2048, false),
        frame(37, false),
        frame(1, true),
    ]
}

/// Coded bits for `mode`: a stream for tiles, whole frames otherwise.
fn coded(trellis: &Arc<Trellis>, mode: ViterbiMode, info: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    match mode {
        ViterbiMode::Tiled(_) => ConvEncoder::new(trellis.clone(), EncoderMode::Streaming).unwrap().encode(info, &mut out).unwrap(),
        ViterbiMode::Frame(f) => {
            let enc = if f.terminated { EncoderMode::Terminated { frame: f.frame } } else { EncoderMode::Streaming };
            for chunk in info.chunks_exact(f.frame) {
                ConvEncoder::new(trellis.clone(), enc).unwrap().encode(chunk, &mut out).unwrap();
            }
        }
    }
    out
}

/// Whole work units of `llrs` for `mode`.
fn units<T: ViterbiLlr>(mode: ViterbiMode, n: usize, llrs: &[T]) -> Vec<T> {
    match mode {
        ViterbiMode::Tiled(tile) => {
            let mut tiler = Tiler::new(tile, n);
            let mut out = Vec::new();
            tiler.push(llrs, &mut out);
            tiler.finish(&mut out).unwrap();
            out
        }
        ViterbiMode::Frame(_) => llrs.to_vec(),
    }
}

fn decode<T: ViterbiLlr>(trellis: &Arc<Trellis>, mode: ViterbiMode, level: SimdLevel, llrs: &[T]) -> Vec<u8> {
    let mut dec = CpuViterbi::<T>::new(trellis.clone(), mode, 2).unwrap().with_batch_units(5).with_simd(level).unwrap();
    assert_eq!(dec.simd(), level);
    let mut out = Vec::new();
    dec.decode_all(llrs, &mut out).unwrap();
    out
}

fn check<T: ViterbiLlr>(trellis: &Arc<Trellis>, mode: ViterbiMode, llrs: &[T], levels: &[SimdLevel], what: &str) {
    let reference = decode(trellis, mode, SimdLevel::Scalar, llrs);
    for &level in levels {
        let bits = decode(trellis, mode, level, llrs);
        if let Some(i) = (0..bits.len()).find(|&i| bits[i] != reference[i]) {
            panic!("{level} {} {what}: bit {i} of {} differs from the scalar reference", T::NAME, bits.len());
        }
    }
}

#[test]
fn every_simd_level_decodes_the_reference_bits() {
    let levels = SimdLevel::to_compare("every_simd_level_decodes_the_reference_bits");
    if levels.is_empty() {
        return;
    }
    let mut r = SmallRng::seed_from_u64(2026);
    for trellis in codes() {
        for mode in modes() {
            let bits = match mode {
                ViterbiMode::Tiled(_) => 1500,
                ViterbiMode::Frame(f) => 2 * f.frame,
            };
            let info: Vec<u8> = (0..bits).map(|_| r.random_range(0..2u8)).collect();
            for (name, f, q) in inputs(&coded(&trellis, mode, &info), r.random()) {
                let what = format!("K={} {} {mode:?} {name}", trellis.k(), trellis.code().polys_octal());
                check(&trellis, mode, &units(mode, trellis.n(), &f), &levels, &what);
                check(&trellis, mode, &units(mode, trellis.n(), &q), &levels, &what);
            }
        }
    }
}

#[test]
fn levels_are_named_detected_and_refused_when_missing() {
    let trellis = Arc::new(Trellis::new(&ConvCode::k7_171_133()));
    let mode = ViterbiMode::Frame(FrameConfig::new(64, true).unwrap());
    for level in SimdLevel::ALL {
        assert_eq!(SimdLevel::parse(&level.to_string()).unwrap(), level);
        let dec = CpuViterbi::<i8>::new(trellis.clone(), mode, 1).unwrap().with_simd(level);
        match dec {
            Ok(d) => assert!(d.describe().contains(&level.to_string()), "{}", d.describe()),
            Err(e) => assert!(!level.is_supported(), "{level} refused although supported: {e}"),
        }
    }
    assert!(SimdLevel::parse("sse9").is_err());
    assert!(SimdLevel::detect().is_supported());
    assert_eq!(CpuViterbi::<f32>::new(trellis, mode, 1).unwrap().simd(), SimdLevel::detect());
}
