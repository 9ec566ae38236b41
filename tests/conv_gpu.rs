//! The GPU Viterbi decoder gives the CPU tiled model's bits, bit for bit, over
//! codes K ∈ {5, 7, 9}, rates 1/2, 2/3, 3/4, f ∈ {32 … 512}, v2 ∈ {10, 20, 32,
//! 45}, serial and parallel traceback (f0 ∈ {8, 16, 32}), i8 and f32 LLRs,
//! survivors in shared and in global memory, partial batches and streams whose
//! length is no multiple of f; output buffers are poisoned before every kernel.
//! Punctured streams are decoded both ways: depunctured before the decoder, and
//! depunctured by the kernel as it loads (rates 2/3 … 7/8 and a rate-1/3
//! pattern, every tile starting at each stage of the period), the latter
//! against the CPU model behind [`DepuncturedUnits`].
//!
//! These tests need a GPU. Without one they say `SKIPPED <name>` and pass,
//! unless `GPUFEC_REQUIRE_GPU=1`, which makes a missing GPU a failure. The
//! compile check needs only NVRTC and is skipped the same way without it.

use gpufec::codes::BatchDecoder;
use gpufec::codes::channel::{BpskAwgn, Channel, Quantizer, noise_variance};
use gpufec::codes::conv::*;
use gpufec::codes::simd::SimdLevel;
use gpufec::codes::{Batch, Decoded, LlrType, UnitSpan};
use gpufec::gpu::{Backend, BackendOptions, GpuViterbi, PipelineOptions, SurvivorMemory, ViterbiTuning, compile_viterbi_kernel, viterbi_decoder};
use rand::{Rng, SeedableRng, rngs::SmallRng};
use std::sync::Arc;

mod common;


/// One configuration of the matrix.
#[derive(Debug, Clone)]
struct Case {
    k: u32,
    polys: Vec<u32>,
    rate: &'static str,
    /// The kernel depunctures (else the units arrive depunctured).
    on_load: bool,
    tile: TileConfig,
    ring: SurvivorMemory,
    batch_units: usize,
    bits: usize,
}

/// A covering matrix rather than the full product (1440 kernels): every value
/// of every parameter appears several times, in changing company.
fn cases() -> Vec<Case> {
    let codes: [(u32, &[u32]); 3] = [(5, &[0o23, 0o35]), (7, &[0o171, 0o133]), (9, &[0o561, 0o753])];
    let rates = ["1/2", "2/3", "3/4"];
    let fs = [32, 64, 128, 256, 512];
    let v2s = [10, 20, 32, 45];
    let tbs = [Traceback::Serial, Traceback::Parallel { f0: 8 }, Traceback::Parallel { f0: 16 }, Traceback::Parallel { f0: 32 }];
    let v1s = [20, 0, 7];
    let groups = [1, 3, 16];
    let rings = [SurvivorMemory::Auto, SurvivorMemory::Global, SurvivorMemory::Auto, SurvivorMemory::Shared];
    let mut out: Vec<Case> = (0..36)
        .map(|i| {
            let (k, polys) = codes[i % 3];
            let f = fs[i % 5];
            let group = groups[(i / 5) % 3];
            let tile = TileConfig::new(f, v1s[(i / 3) % 3], v2s[i % 4], tbs[(i / 4) % 4]).unwrap().with_group(group).unwrap();
            // 2.4 batches of 3 units, cut mid-tile: a partial last batch and a
            // stream that is no multiple of f.
            let bits = (7 * group * f + f / 3 + 1).min(200_000);
            Case { k, polys: polys.to_vec(), rate: rates[(i / 3) % 3], on_load: false, tile, ring: rings[(i / 9) % 4], batch_units: 3, bits }
        })
        .collect();
    // Depunctured on load: every standard rate, tiles whose f is the period's
    // multiple nearest below the matrix's f, v1 putting the tile start at each
    // stage of the period.
    let punctured = ["2/3", "3/4", "5/6", "7/8"];
    let v1s_on_load = [20, 0, 7, 13, 1];
    out.extend((0..16).map(|i| {
        let (k, polys) = codes[i % 3];
        let rate = punctured[i % 4];
        let period = PuncturePattern::standard(rate).unwrap().period();
        let f = fs[(i / 2) % 5] / period * period;
        let group = groups[(i / 3) % 3];
        let tb = match tbs[(i / 5) % 4] {
            Traceback::Parallel { f0 } => Traceback::Parallel { f0: f0.min(f) },
            s => s,
        };
        let tile = TileConfig::new(f, v1s_on_load[i % 5], v2s[(i / 4) % 4], tb).unwrap().with_group(group).unwrap();
        let bits = (5 * group * f + f / 3 + 1).min(200_000);
        Case { k, polys: polys.to_vec(), rate, on_load: true, tile, ring: rings[(i / 4) % 4], batch_units: 3, bits }
    }));
    // Geometry corner cases: f and f0 not multiples of 4 (byte-wise output and
    // loads), n = 3 (odd stage size), a unit pitch that needs padding, the
    // default batch size.
    let t = |f, v1, v2, tb, g| TileConfig::new(f, v1, v2, tb).unwrap().with_group(g).unwrap();
    let mut extra = |k, polys: &[u32], rate, on_load, tile: TileConfig, ring, batch_units, bits| {
        out.push(Case { k, polys: polys.to_vec(), rate, on_load, tile, ring, batch_units, bits })
    };
    extra(7, &[0o171, 0o133], "1/2", false, t(30, 5, 13, Traceback::Parallel { f0: 7 }, 3), SurvivorMemory::Auto, 2, 2000);
    extra(7, &[0o133, 0o171, 0o165], "1/3", false, t(64, 20, 32, Traceback::Serial, 5), SurvivorMemory::Auto, 2, 3000);
    extra(5, &[0o25, 0o33, 0o37, 0o27], "1/4", false, t(33, 3, 10, Traceback::Parallel { f0: 11 }, 1), SurvivorMemory::Global, 4, 1500);
    extra(7, &[0o171, 0o133], "1/2", false, t(256, 20, 32, Traceback::Serial, 64), SurvivorMemory::Auto, 0, 300_001);
    // n = 3 punctured to rate 1/2 (odd period size), and the headline tile at 3/4.
    extra(7, &[0o133, 0o171, 0o165], "110,011,101", true, t(63, 8, 20, Traceback::Parallel { f0: 16 }, 5), SurvivorMemory::Auto, 2, 3000);
    extra(7, &[0o171, 0o133], "3/4", true, t(255, 20, 20, Traceback::Serial, 64), SurvivorMemory::Auto, 0, 300_001);
    out
}

/// The pattern `case.rate` names: a standard rate, rows of its own, or none.
fn pattern(case: &Case, n: usize) -> PuncturePattern {
    match case.rate {
        "1/2" | "1/3" | "1/4" => PuncturePattern::none(n),
        r if r.contains(',') => PuncturePattern::parse(r).unwrap(),
        r => PuncturePattern::standard(r).unwrap(),
    }
}

/// Noisy LLRs of a random stream for `case`: encoded, punctured, AWGN at 2 dB,
/// depunctured (erasures are LLR 0) unless the kernel does it, as f32 and
/// quantized to i8.
fn channel(case: &Case, trellis: &Arc<Trellis>, seed: u64) -> (Vec<u8>, Vec<f32>, Vec<i8>) {
    let mut r = SmallRng::seed_from_u64(seed);
    let info: Vec<u8> = (0..case.bits).map(|_| r.random_range(0..2u8)).collect();
    let mut coded = Vec::new();
    ConvEncoder::new(trellis.clone(), EncoderMode::Streaming).unwrap().encode(&info, &mut coded).unwrap();
    let pattern = pattern(case, trellis.n());
    let mut sent = Vec::new();
    Puncturer::new(pattern.clone()).puncture(&coded, &mut sent);
    let rate = pattern.rate();
    let mut f = Vec::new();
    BpskAwgn::new(2.0, rate, r.random()).unwrap().transmit(&sent, &mut f).unwrap();
    if !case.on_load {
        let mut d = Vec::new();
        Depuncturer::new(pattern).depuncture(&f, &mut d);
        f = d;
    }
    let mut q = Vec::new();
    Quantizer::matched(noise_variance(2.0, rate).unwrap()).unwrap().quantize(&f, &mut q).unwrap();
    (info, f, q)
}

/// The work units of `llrs` for `case`, punctured when the kernel depunctures.
fn units<T: ViterbiLlr>(case: &Case, n: usize, llrs: &[T]) -> Vec<T> {
    let mut tiler = if case.on_load { Tiler::punctured(case.tile, pattern(case, n)).unwrap() } else { Tiler::new(case.tile, n) };
    let mut out = Vec::new();
    tiler.push(llrs, &mut out);
    tiler.finish(&mut out).unwrap();
    out
}

fn gpu_decoder<T: ViterbiLlr>(trellis: &Arc<Trellis>, case: &Case) -> anyhow::Result<GpuViterbi<T>> {
    let pipeline = PipelineOptions { batch_units: case.batch_units, poison: Some(0xa5), ..Default::default() };
    let tuning = ViterbiTuning { survivors: case.ring, ..Default::default() };
    let p = pattern(case, trellis.n());
    GpuViterbi::<T>::new(trellis.clone(), case.tile, case.on_load.then_some(&p), &pipeline, tuning)
}

/// Decode `units` on the CPU (scalar model, behind [`DepuncturedUnits`] when
/// the kernel depunctures) and the GPU and compare bit by bit.
fn compare<T: ViterbiLlr>(trellis: &Arc<Trellis>, case: &Case, gpu: &mut GpuViterbi<T>, units: &[T]) -> Result<(), String> {
    let mode = ViterbiMode::Tiled(case.tile);
    let plain = Box::new(CpuViterbi::<T>::new(trellis.clone(), mode, 0).unwrap().with_simd(SimdLevel::Scalar).unwrap());
    let mut cpu: Box<dyn BatchDecoder<T>> = if case.on_load {
        Box::new(DepuncturedUnits::new(plain, case.tile, pattern(case, trellis.n())).unwrap())
    } else {
        plain
    };
    let (mut want, mut got) = (Vec::new(), Vec::new());
    cpu.decode_all(units, &mut want).unwrap();
    gpu.decode_all(units, &mut got).map_err(|e| format!("{case:?} {}: {e:#}", T::NAME))?;
    if got.len() != want.len() {
        return Err(format!("{case:?} {}: {} bits from the GPU, {} from the CPU", T::NAME, got.len(), want.len()));
    }
    match (0..got.len()).find(|&i| got[i] != want[i]) {
        None => Ok(()),
        Some(i) => Err(format!(
            "{case:?} {} ({}): bit {i} of {} is {} on the GPU, {} on the CPU ({} bits differ)",
            T::NAME,
            gpu.describe(),
            got.len(),
            got[i],
            want[i],
            (0..got.len()).filter(|&j| got[j] != want[j]).count()
        )),
    }
}

#[test]
fn gpu_decodes_the_cpu_tiled_models_bits() {
    if !common::have_gpu("gpu_decodes_the_cpu_tiled_models_bits") {
        return;
    }
    let cases = cases();
    // Kernels compile in parallel (NVRTC takes seconds per configuration).
    let failures: Vec<String> = std::thread::scope(|s| {
        let jobs: Vec<_> = cases
            .iter()
            .enumerate()
            .map(|(i, case)| {
                s.spawn(move || -> Vec<String> {
                    let trellis = Arc::new(Trellis::new(&ConvCode::new(case.k, &case.polys).unwrap()));
                    let (_, f, q) = channel(case, &trellis, 1000 + i as u64);
                    let n = trellis.n();
                    let mut errs = Vec::new();
                    match gpu_decoder::<f32>(&trellis, case) {
                        Ok(mut d) => errs.extend(compare(&trellis, case, &mut d, &units(case, n, &f)).err()),
                        Err(e) => errs.push(format!("{case:?} f32: {e:#}")),
                    }
                    match gpu_decoder::<i8>(&trellis, case) {
                        Ok(mut d) => errs.extend(compare(&trellis, case, &mut d, &units(case, n, &q)).err()),
                        Err(e) => errs.push(format!("{case:?} i8: {e:#}")),
                    }
                    errs
                })
            })
            .collect();
        jobs.into_iter().flat_map(|j| j.join().unwrap()).collect()
    });
    assert!(failures.is_empty(), "{} of {} decoders differ from the CPU model:\n{}", failures.len(), 2 * cases.len(), failures.join("\n"));
}

#[test]
fn gpu_matches_on_adversarial_inputs() {
    if !common::have_gpu("gpu_matches_on_adversarial_inputs") {
        return;
    }
    // Ties everywhere (equal and erased LLRs) test the tie-breaking rule;
    // saturated ±127/−128 and huge floats test metric range and normalisation.
    let case = Case {
        k: 7,
        polys: vec![0o171, 0o133],
        rate: "1/2",
        on_load: false,
        tile: TileConfig::new(64, 20, 45, Traceback::Parallel { f0: 16 }).unwrap().with_group(4).unwrap(),
        ring: SurvivorMemory::Auto,
        batch_units: 2,
        bits: 5000,
    };
    let trellis = Arc::new(Trellis::new(&ConvCode::k7_171_133()));
    let mut r = SmallRng::seed_from_u64(7);
    let len = 2 * case.bits;
    let sat: Vec<i8> = (0..len).map(|_| [127, -127, -128][r.random_range(0..3)]).collect();
    let huge: Vec<f32> = (0..len).map(|_| r.random_range(-1e30f32..1e30)).collect();
    let mut errs = Vec::new();
    let mut d8 = gpu_decoder::<i8>(&trellis, &case).unwrap();
    let mut d32 = gpu_decoder::<f32>(&trellis, &case).unwrap();
    for (name, q) in [("equal", vec![3i8; len]), ("erased", vec![0; len]), ("saturated", sat)] {
        errs.extend(compare(&trellis, &case, &mut d8, &units(&case, 2, &q)).err().map(|e| format!("{name}: {e}")));
    }
    for (name, f) in [("equal", vec![2.5f32; len]), ("erased", vec![0.0; len]), ("huge", huge)] {
        errs.extend(compare(&trellis, &case, &mut d32, &units(&case, 2, &f)).err().map(|e| format!("{name}: {e}")));
    }
    assert!(errs.is_empty(), "{}", errs.join("\n"));
}

/// The CCSDS convention (second output inverted) and its NASA-DSN order
/// reach the kernel through its labels (VINV): noisy streams decode to the
/// CPU model's bits, unpunctured and punctured on load.
#[test]
fn gpu_decodes_the_ccsds_and_nasa_dsn_conventions_as_the_cpu_model() {
    if !common::have_gpu("gpu_decodes_the_ccsds_and_nasa_dsn_conventions_as_the_cpu_model") {
        return;
    }
    let tile = TileConfig::new(252, 20, 20, Traceback::Serial).unwrap().with_group(8).unwrap();
    let mut errs = Vec::new();
    for (i, code) in [ConvCode::k7_171_133().with_inverted(0b10).unwrap(), ConvCode::k7_171_133().with_inverted(0b10).unwrap().reversed()].into_iter().enumerate() {
        for (rate, on_load) in [("1/2", false), ("3/4", true)] {
            let case = Case { k: 7, polys: code.polys().to_vec(), rate, on_load, tile, ring: SurvivorMemory::Auto, batch_units: 3, bits: 30_000 };
            let trellis = Arc::new(Trellis::new(&code));
            let (_, f, q) = channel(&case, &trellis, 40 + i as u64);
            let n = trellis.n();
            match gpu_decoder::<f32>(&trellis, &case) {
                Ok(mut d) => errs.extend(compare(&trellis, &case, &mut d, &units(&case, n, &f)).err()),
                Err(e) => errs.push(format!("{case:?} f32: {e:#}")),
            }
            match gpu_decoder::<i8>(&trellis, &case) {
                Ok(mut d) => errs.extend(compare(&trellis, &case, &mut d, &units(&case, n, &q)).err()),
                Err(e) => errs.push(format!("{case:?} i8: {e:#}")),
            }
        }
    }
    assert!(errs.is_empty(), "{}", errs.join("\n"));
}

/// Units of a stream cut in place (one stride apart, overlapping) go to the
/// device from where they lie, page-locked there, and decode to the CPU
/// model's bits: whole and punctured-on-load streams, i8 and f32, a region
/// starting off a page and line boundary, new data in the same memory every
/// batch, the memory overwritten as soon as `reused_read` says it was read
/// (before the results are collected), packed output, a NaN in the region,
/// and a batch that is not one stride apart (staged instead).
#[test]
fn gpu_decodes_units_where_they_lie() {
    if !common::have_gpu("gpu_decodes_units_where_they_lie") {
        return;
    }
    fn run<T: ViterbiLlr>(case: &Case, offset: usize, draw: impl Fn(&mut SmallRng) -> T) -> Result<(), String> {
        let trellis = Arc::new(Trellis::new(&ConvCode::new(case.k, &case.polys).unwrap()));
        let p = pattern(case, trellis.n());
        let unit = if case.on_load { Tiler::<T>::punctured(case.tile, p.clone()).unwrap().unit_len() } else { Tiler::<T>::new(case.tile, trellis.n()).unit_len() };
        let stride = case.tile.group * case.tile.f / p.period() * p.kept_per_period();
        let units = case.batch_units;
        // Declared before the decoder, so that it outlives the decoder's lock on its pages.
        let mut stream = vec![T::default(); offset + (units - 1) * stride + unit];
        let spans: Vec<UnitSpan> = (0..units).map(|u| UnitSpan { start: offset + u * stride, len: unit, format: 0 }).collect();
        let mut gpu = gpu_decoder::<T>(&trellis, case).map_err(|e| format!("{e:#}"))?;
        if gpu.shapes()[0].items != unit {
            return Err(format!("the decoder's unit is {} items, the tiler's {unit}", gpu.shapes()[0].items));
        }
        let cpu_bits = |units_items: &[T]| {
            let plain = Box::new(CpuViterbi::<T>::new(trellis.clone(), ViterbiMode::Tiled(case.tile), 0).unwrap());
            let mut cpu: Box<dyn BatchDecoder<T>> =
                if case.on_load { Box::new(DepuncturedUnits::new(plain, case.tile, p.clone()).unwrap()) } else { plain };
            let mut want = Vec::new();
            cpu.decode_all(units_items, &mut want).unwrap();
            want
        };
        let copy_units = |stream: &[T]| -> Vec<T> { spans.iter().flat_map(|s| stream[s.start..s.start + s.len].to_vec()).collect() };
        let mut r = SmallRng::seed_from_u64(offset as u64);
        for round in 0..4 {
            stream.iter_mut().for_each(|x| *x = draw(&mut r));
            let sent = copy_units(&stream);
            if round == 3 && !gpu.pack_bits() {
                return Err(format!("f = {} is whole bytes, yet the decoder will not pack", case.tile.f));
            }
            // SAFETY: `stream` outlives the decoder and is not written until `reused_read`.
            let direct = unsafe { gpu.submit_reused(&Batch::spans(&stream, &spans).unwrap()) }.map_err(|e| format!("round {round}: {e:#}"))?;
            if !direct {
                return Err(format!("{case:?} {}: round {round} was staged, not copied where it lies", T::NAME));
            }
            gpu.reused_read().map_err(|e| format!("{e:#}"))?;
            // Read, so the memory is the caller's again: new data must not reach this batch.
            stream.iter_mut().for_each(|x| *x = draw(&mut r));
            let mut got = Decoded::default();
            gpu.collect(&mut got).map_err(|e| format!("{e:#}"))?;
            let want = cpu_bits(&sent);
            let same = if round < 3 {
                got.bits == want
            } else {
                // Asked to pack (f is a multiple of 8): the bits as MSB-first bytes.
                let mut bytes = vec![0u8; want.len().div_ceil(8)];
                gpufec::codes::packed::par_pack_msb(&want, &mut bytes);
                got.packed == bytes && got.bits.is_empty()
            };
            if !same {
                return Err(format!("{case:?} {} offset {offset} round {round}: the decoded bits differ from the CPU model's", T::NAME));
            }
        }
        // Units not one stride apart are staged.
        let mut uneven = spans.clone();
        uneven[units - 1].start -= 1;
        // SAFETY: as above.
        if unsafe { gpu.submit_reused(&Batch::spans(&stream, &uneven).unwrap()) }.map_err(|e| format!("{e:#}"))? {
            return Err("units one item out of step went where they lie".into());
        }
        gpu.collect(&mut Decoded::default()).map_err(|e| format!("{e:#}"))?;
        gpu.forget_reused();
        Ok(())
    }
    let tile = |f, group| TileConfig::new(f, 20, 32, Traceback::Serial).unwrap().with_group(group).unwrap();
    let whole = Case { k: 7, polys: vec![0o171, 0o133], rate: "1/2", on_load: false, tile: tile(256, 8), ring: SurvivorMemory::Auto, batch_units: 37, bits: 0 };
    let punctured = Case { rate: "3/4", on_load: true, tile: tile(264, 4), batch_units: 50, ..whole.clone() };
    let mut errs = Vec::new();
    for case in [&whole, &punctured] {
        for offset in [0, 4099] {
            errs.extend(run::<i8>(case, offset, |r| r.random_range(-127..=127)).err());
            errs.extend(run::<f32>(case, offset, |r| r.random_range(-20.0..20.0)).err());
        }
    }
    // A NaN in the region is named, as staging names it.
    let trellis = Arc::new(Trellis::new(&ConvCode::k7_171_133()));
    let unit = Tiler::<f32>::new(whole.tile, 2).unit_len();
    let stride = whole.tile.group * whole.tile.f * 2;
    let mut stream = vec![1.0f32; stride + unit];
    stream[stride + 5] = f32::NAN;
    let mut gpu = gpu_decoder::<f32>(&trellis, &whole).unwrap();
    let spans = [UnitSpan { start: 0, len: unit, format: 0 }, UnitSpan { start: stride, len: unit, format: 0 }];
    // SAFETY: `stream` outlives the decoder.
    let e = unsafe { gpu.submit_reused(&Batch::spans(&stream, &spans).unwrap()) }.unwrap_err();
    assert!(format!("{e:#}").contains("NaN"), "{e:#}");
    assert!(errs.is_empty(), "{}", errs.join("\n"));
}

#[test]
fn gpu_refuses_bad_input_with_clear_errors() {
    if !common::have_gpu("gpu_refuses_bad_input_with_clear_errors") {
        return;
    }
    let trellis = Arc::new(Trellis::new(&ConvCode::k7_171_133()));
    let tile = TileConfig::new(64, 20, 20, Traceback::Serial).unwrap();
    let frame = ViterbiMode::Frame(FrameConfig::new(100, true).unwrap());
    let on_gpu = BackendOptions { backend: Backend::Gpu, ..Default::default() };
    let e = viterbi_decoder::<i8>(trellis.clone(), frame, None, &on_gpu, ViterbiTuning::default()).err().unwrap();
    assert!(format!("{e:#}").contains("frames are decoded on the CPU"), "{e:#}");
    let long = TileConfig::new(8192, 20, 64, Traceback::Serial).unwrap();
    let shared = ViterbiTuning { survivors: SurvivorMemory::Shared, ..Default::default() };
    let e = GpuViterbi::<i8>::new(trellis.clone(), long, None, &PipelineOptions::default(), shared).err().unwrap();
    assert!(format!("{e:#}").contains("shared memory"), "{e:#}");
    let e = GpuViterbi::<i8>::new(trellis.clone(), tile, None, &PipelineOptions { device: 99, ..Default::default() }, ViterbiTuning::default()).err().unwrap();
    assert!(format!("{e:#}").contains("device 99 does not exist"), "{e:#}");
    let e = GpuViterbi::<i8>::new(trellis.clone(), tile, None, &PipelineOptions { batch_units: 1 << 40, ..Default::default() }, ViterbiTuning::default()).err().unwrap();
    assert!(format!("{e:#}").contains("exceeds the limit"), "{e:#}");

    let opts = PipelineOptions { batch_units: 2, ..Default::default() };
    let mut d = GpuViterbi::<f32>::new(trellis.clone(), tile, None, &opts, ViterbiTuning::default()).unwrap();
    let unit = d.shapes()[0].items;
    let mut out = Decoded::default();
    let mut nan = vec![1.0f32; unit];
    nan[17] = f32::NAN;
    let e = d.submit(&Batch::uniform(&nan, unit).unwrap()).unwrap_err();
    assert!(format!("{e:#}").contains("LLR at index 17 "), "{e:#}");
    let partial = vec![1.0; unit + 1];
    assert!(Batch::uniform(&partial, unit).is_err(), "a partial unit must be refused");
    let long_unit = [UnitSpan { start: 0, len: unit + 1, format: 0 }];
    assert!(d.submit(&Batch::spans(&partial, &long_unit).unwrap()).is_err(), "a unit of the wrong length must be refused");
    let three = vec![1.0; 3 * unit];
    assert!(d.submit(&Batch::uniform(&three, unit).unwrap()).is_err(), "more units than a batch must be refused");
    assert!(!d.collect(&mut out).unwrap());
    // The decoder still works after refusals, on spans with gaps too.
    let mut bits = Vec::new();
    d.decode_all(&vec![1.0; 2 * unit], &mut bits).unwrap();
    assert_eq!(bits, vec![0; 2 * 64]);
    let gapped = vec![1.0f32; 2 * unit + 5];
    let spans = [UnitSpan { start: 0, len: unit, format: 0 }, UnitSpan { start: unit + 5, len: unit, format: 0 }];
    d.decode(&Batch::spans(&gapped, &spans).unwrap(), &mut out).unwrap();
    assert_eq!((out.bits.len(), out.reports.len()), (2 * 64, 2));
}

#[test]
fn every_kernel_configuration_compiles_for_sm_90() {
    if !common::have_nvrtc("every_kernel_configuration_compiles_for_sm_90") {
        return;
    }
    let cases = cases();
    let errs: Vec<String> = std::thread::scope(|s| {
        let jobs: Vec<_> = cases
            .iter()
            .flat_map(|c| [(c, false, false), (c, true, true)])
            .map(|(case, f32, global)| {
                s.spawn(move || {
                    let trellis = Trellis::new(&ConvCode::new(case.k, &case.polys).unwrap());
                    let p = pattern(case, trellis.n());
                    let llr = if f32 { LlrType::F32 } else { LlrType::I8 };
                    compile_viterbi_kernel(&trellis, &case.tile, case.on_load.then_some(&p), llr, global, "sm_90").err().map(|e| format!("{case:?}: {e:#}"))
                })
            })
            .collect();
        jobs.into_iter().filter_map(|j| j.join().unwrap()).collect()
    });
    assert!(errs.is_empty(), "{}", errs.join("\n"));
}
