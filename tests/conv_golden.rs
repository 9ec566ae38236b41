//! The Viterbi decoders' bits on fixed noisy inputs, pinned by digest: any
//! change to the decoders, the tiler or the depuncturing that alters a single
//! decoded bit fails here. The digests were taken from the decoders as they
//! stood before the platform rework (commit f3f1bdc) and must never change.
//! The inputs come from a self-contained generator, so that changes to the
//! library's channel models do not move them. On a machine with a GPU the GPU
//! decoder must give the same digests.

use gpufec::codes::BatchDecoder;
use gpufec::codes::channel::Quantizer;
use gpufec::codes::conv::*;
use gpufec::gpu::{GpuViterbi, PipelineOptions, ViterbiTuning};
use std::sync::Arc;

mod common;

/// SplitMix64: a fixed, documented sequence independent of any crate.
struct Mix(u64);

impl Mix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1) with 24 bits, exactly representable in f32.
    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// FNV-1a over the bits.
fn digest(bits: &[u8]) -> u64 {
    bits.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// Information bits and the f32 LLRs of their codeword (BPSK, noise of
/// standard deviation `sigma` from a sum of four uniforms, LLR 2y/σ²),
/// punctured with `pattern`.
fn channel(trellis: &Arc<Trellis>, mode: EncoderMode, pattern: &PuncturePattern, bits: usize, sigma: f32, seed: u64) -> (Vec<u8>, Vec<f32>) {
    let mut mix = Mix(seed);
    let info: Vec<u8> = (0..bits).map(|_| (mix.next() >> 63) as u8).collect();
    let mut coded = Vec::new();
    ConvEncoder::new(trellis.clone(), mode).unwrap().encode(&info, &mut coded).unwrap();
    let mut sent = Vec::new();
    Puncturer::new(pattern.clone()).puncture(&coded, &mut sent);
    let gain = 2.0 / (sigma * sigma);
    let llrs = sent
        .iter()
        .map(|&b| {
            // Sum of four uniforms: mean 2, variance 1/3.
            let z = (mix.unit() + mix.unit() + mix.unit() + mix.unit() - 2.0) * 3f32.sqrt();
            let y = if b == 0 { 1.0 } else { -1.0 } + sigma * z;
            gain * y
        })
        .collect();
    (info, llrs)
}

/// Decoded bits of `units` and their errors against `info`.
fn run<T: ViterbiLlr>(dec: &mut dyn BatchDecoder<T>, units: &[T], info: &[u8]) -> (u64, usize) {
    let mut bits = Vec::new();
    dec.decode_all(units, &mut bits).unwrap();
    bits.truncate(info.len());
    assert_eq!(bits.len(), info.len());
    (digest(&bits), bits.iter().zip(info).filter(|(a, b)| a != b).count())
}

fn tiles<T: gpufec::codes::Llr>(tile: TileConfig, n: usize, llrs: &[T]) -> Vec<T> {
    let mut t = Tiler::new(tile, n);
    let mut out = Vec::new();
    t.push(llrs, &mut out);
    t.finish(&mut out).unwrap();
    out
}

/// One pinned case: its name, the digest of the f32 decode and of the i8
/// decode, and the errors of each (so that a digest is known to cover a
/// decode with errors in it).
struct Pinned {
    name: &'static str,
    f32: (u64, usize),
    i8: (u64, usize),
}

fn code(k: u32, polys: &[u32]) -> Arc<Trellis> {
    Arc::new(Trellis::new(&ConvCode::new(k, polys).unwrap()))
}

fn cases() -> Vec<(&'static str, Arc<Trellis>, &'static str, ViterbiMode)> {
    let k7 = code(7, &[0o171, 0o133]);
    let tile = |f, v1, v2, tb| ViterbiMode::Tiled(TileConfig::new(f, v1, v2, tb).unwrap().with_group(16).unwrap());
    vec![
        ("k7 serial", k7.clone(), "1/2", tile(256, 20, 20, Traceback::Serial)),
        ("k7 parallel", k7.clone(), "1/2", tile(256, 20, 45, Traceback::Parallel { f0: 32 })),
        ("k5 serial", code(5, &[0o23, 0o35]), "1/2", tile(64, 12, 16, Traceback::Serial)),
        ("k9 parallel", code(9, &[0o561, 0o753]), "1/2", tile(128, 30, 40, Traceback::Parallel { f0: 16 })),
        ("k7 r1/3", code(7, &[0o133, 0o171, 0o165]), "1/2", tile(100, 20, 30, Traceback::Serial)),
        ("k7 frames", k7.clone(), "1/2", ViterbiMode::Frame(FrameConfig::new(2048, true).unwrap())),
        ("k7 3/4 on load", k7, "3/4", tile(252, 20, 30, Traceback::Parallel { f0: 36 })),
    ]
}

/// Decode every case on the CPU, or on the GPU when `gpu` (frames, which the
/// GPU does not decode, are skipped: `None`), returning the digests.
fn decode_cases(gpu: bool) -> Vec<Option<(u64, usize, u64, usize)>> {
    let mut out = Vec::new();
    for (i, (name, trellis, rate, mode)) in cases().into_iter().enumerate() {
        if gpu && matches!(mode, ViterbiMode::Frame(_)) {
            out.push(None);
            continue;
        }
        let n = trellis.n();
        let pattern = if rate == "1/2" { PuncturePattern::none(n) } else { PuncturePattern::standard(rate).unwrap() };
        let (enc_mode, bits) = match mode {
            ViterbiMode::Tiled(_) => (EncoderMode::Streaming, 60_001),
            ViterbiMode::Frame(f) => (EncoderMode::Terminated { frame: f.frame }, 30 * 2048),
        };
        // Eb/N0 = 2.5 dB (3.5 dB for the punctured rate): errors in every case.
        let ebn0 = 10f64.powf(if pattern.is_identity() { 0.25 } else { 0.35 });
        let sigma = (1.0 / (2.0 * pattern.rate() * ebn0)).sqrt() as f32;
        let (info, llrs) = channel(&trellis, enc_mode, &pattern, bits, sigma, 1000 + i as u64);
        let mut q = Vec::new();
        Quantizer::new(16.0 * sigma * sigma).unwrap().quantize(&llrs, &mut q).unwrap();
        let results: Vec<(u64, usize)> = [false, true]
            .into_iter()
            .map(|as_i8| {
                macro_rules! decode {
                    ($t:ty, $llrs:expr) => {{
                        let llrs: &[$t] = $llrs;
                        let on_load = !pattern.is_identity();
                        let units = match mode {
                            ViterbiMode::Tiled(tile) if on_load => {
                                let mut t = Tiler::punctured(tile, pattern.clone()).unwrap();
                                let mut o = Vec::new();
                                t.push(llrs, &mut o);
                                t.finish(&mut o).unwrap();
                                o
                            }
                            ViterbiMode::Tiled(tile) => tiles(tile, n, llrs),
                            ViterbiMode::Frame(_) => llrs.to_vec(),
                        };
                        let mut dec: Box<dyn BatchDecoder<$t>> = match mode {
                            ViterbiMode::Tiled(tile) if gpu => {
                                let pipeline = PipelineOptions { batch_units: 5, poison: Some(0x3c), ..Default::default() };
                                let p = on_load.then_some(&pattern);
                                Box::new(GpuViterbi::<$t>::new(trellis.clone(), tile, p, &pipeline, ViterbiTuning::default()).unwrap())
                            }
                            ViterbiMode::Tiled(tile) if on_load => {
                                let plain = Box::new(CpuViterbi::<$t>::new(trellis.clone(), mode, 2).unwrap().with_batch_units(5));
                                Box::new(DepuncturedUnits::new(plain, tile, pattern.clone()).unwrap())
                            }
                            _ => Box::new(CpuViterbi::<$t>::new(trellis.clone(), mode, 2).unwrap().with_batch_units(5)),
                        };
                        run(dec.as_mut(), &units, &info)
                    }};
                }
                if as_i8 { decode!(i8, &q) } else { decode!(f32, &llrs) }
            })
            .collect();
        eprintln!("{name}: f32 {:#018x} ({} errors), i8 {:#018x} ({} errors)", results[0].0, results[0].1, results[1].0, results[1].1);
        out.push(Some((results[0].0, results[0].1, results[1].0, results[1].1)));
    }
    out
}

fn pinned() -> Vec<Pinned> {
    let p = |name, f32, i8| Pinned { name, f32, i8 };
    vec![
        p("k7 serial", (0xcd4d_245e_c9f0_8123, 85), (0xddc6_483b_fdbb_d6cb, 91)),
        p("k7 parallel", (0xdbee_9094_124e_b98d, 67), (0xdbee_9094_124e_b98d, 67)),
        p("k5 serial", (0x6615_e676_49a1_a23f, 196), (0x7ae0_99a7_0740_2004, 193)),
        p("k9 parallel", (0x7123_4e04_83d7_459b, 64), (0x7123_4e04_83d7_459b, 64)),
        p("k7 r1/3", (0xcab9_c37f_e958_ad30, 31), (0xcab9_c37f_e958_ad30, 31)),
        p("k7 frames", (0xf526_bb0f_c3e4_fea3, 67), (0x0b09_b924_187d_495a, 92)),
        p("k7 3/4 on load", (0x9005_5e11_4259_de3a, 91), (0x9005_5e11_4259_de3a, 91)),
    ]
}

fn check(got: &[Option<(u64, usize, u64, usize)>]) {
    let want = pinned();
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(&want) {
        assert!(w.f32.1 > 10 && w.i8.1 > 10, "{}: too few errors for the digest to mean much", w.name);
        let Some(g) = g else { continue };
        assert_eq!((g.0, g.1), w.f32, "{} f32", w.name);
        assert_eq!((g.2, g.3), w.i8, "{} i8", w.name);
    }
}

#[test]
fn cpu_decoders_give_the_pinned_bits() {
    check(&decode_cases(false));
}

/// The GPU decoder gives the bits the CPU decoders gave before the rework.
/// Without a GPU it says `SKIPPED` and passes, unless `GPUFEC_REQUIRE_GPU=1`.
#[test]
fn gpu_decoder_gives_the_pinned_bits() {
    if !common::have_gpu("gpu_decoder_gives_the_pinned_bits") {
        return;
    }
    check(&decode_cases(true));
}
