//! The GPU MAP decoder of insertion/deletion codes gives the CPU reference's
//! results on fresh random inputs: the same decisions and unit reports
//! (where each frame ended, whether it left the limits), the symbol APPs
//! and the bit LLRs from them within a relative 1e-5 (the sums run in another
//! order on the device), over q from 2 to 256, channels
//! from Pi = Pd = 1e-3 to 5e-2 with substitutions, hard bits and `f32` and
//! `i8` LLRs, whole frames and windows of a stream, global and local
//! storage, and batches larger and smaller than the device's default;
//! output buffers are poisoned before every kernel. Bad input fails with
//! the reference's errors.
//!
//! These tests need a GPU. Without one they say `SKIPPED <name>` and pass,
//! unless `GPUFEC_REQUIRE_GPU=1`, which makes a missing GPU a failure. The
//! compile check needs only NVRTC and is skipped the same way without it.

use gpufec::codes::channel::{Channel, Quantizer, noise_variance};
use gpufec::codes::decode::{Batch, BatchDecoder, Decoded, UnitSpan};
use gpufec::codes::encode::Encoder;
use gpufec::codes::sync::decoder::Received;
use gpufec::codes::sync::{Bsid, BsidAwgn, BsidParams, DecoderConfig, Framing, Storage, SyncCode, SyncEncoder, SyncMapDecoder};
use gpufec::gpu::{GpuSync, PipelineOptions, compile_sync_kernel};
use rand::{Rng, SeedableRng, rngs::SmallRng};

mod common;

/// One configuration.
#[derive(Debug, Clone)]
struct Case {
    q: usize,
    n: usize,
    symbols: usize,
    /// Pi = Pd, and Ps.
    p: f64,
    ps: f64,
    framing: Framing,
    storage: Storage,
    /// Units per GPU batch (0: the device's default).
    batch_units: usize,
}

fn cases() -> Vec<Case> {
    let c = |q, n, symbols, p, ps, framing, storage, batch_units| Case { q, n, symbols, p, ps, framing, storage, batch_units };
    vec![
        c(32, 10, 210, 1e-3, 0.0, Framing::Stream, Storage::Global, 0),
        c(32, 10, 210, 1e-3, 0.0, Framing::Stream, Storage::Local, 7),
        c(16, 8, 60, 1e-2, 1e-2, Framing::Frames, Storage::Global, 5),
        c(16, 8, 60, 1e-2, 1e-2, Framing::Frames, Storage::Local, 0),
        c(2, 3, 100, 5e-2, 0.0, Framing::Stream, Storage::Auto, 3),
        c(4, 4, 50, 2e-2, 1e-3, Framing::Frames, Storage::Auto, 0),
        c(256, 16, 12, 5e-3, 0.0, Framing::Stream, Storage::Local, 0),
        c(64, 12, 30, 3e-2, 0.0, Framing::Stream, Storage::Global, 4),
        // More symbol values than threads in a CTA.
        c(2048, 12, 8, 2e-3, 0.0, Framing::Frames, Storage::Local, 0),
        // A corridor too wide for a lattice in registers.
        c(4, 32, 4, 0.3, 0.0, Framing::Stream, Storage::Global, 0),
    ]
}

impl Case {
    fn name(&self) -> String {
        format!("q={} n={} N={} Pi=Pd={} Ps={} {:?} {:?} batches of {}", self.q, self.n, self.symbols, self.p, self.ps, self.framing, self.storage, self.batch_units)
    }

    fn params(&self) -> BsidParams {
        BsidParams::new(self.p, self.p, self.ps).unwrap()
    }

    fn cfg(&self) -> DecoderConfig {
        DecoderConfig { framing: self.framing, storage: self.storage, ..DecoderConfig::default() }
    }

    fn code(&self) -> SyncCode {
        SyncCode::random(self.q, self.n, self.symbols, 3).unwrap()
    }

    /// Received items a unit holds at most.
    fn window(&self) -> usize {
        SyncMapDecoder::<u8>::new(self.code(), self.params(), self.cfg(), 1).unwrap().shapes()[0].items
    }
}

/// A seed that differs from run to run; a failure names it.
fn fresh_seed() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64)
}

/// `frames` random frames of `code` through `channel`: each frame's
/// received items (whole frames), or its window from its true start.
fn units<C: Channel<In = u8>>(code: &SyncCode, mut channel: C, framing: Framing, window: usize, frames: usize, rng: &mut SmallRng) -> (Vec<C::Out>, Vec<UnitSpan>) {
    let mut enc = SyncEncoder::new(code.clone());
    let (mut received, mut starts) = (Vec::new(), Vec::new());
    for _ in 0..frames + 4 {
        let info: Vec<u8> = (0..code.info_bits()).map(|_| rng.random_range(0..2u8)).collect();
        let mut sent = Vec::new();
        enc.encode(&info, &mut sent).unwrap();
        starts.push(received.len());
        channel.transmit(&sent, &mut received).unwrap();
    }
    starts.push(received.len());
    let spans = (0..frames)
        .filter_map(|f| match framing {
            Framing::Frames => Some(UnitSpan { start: starts[f], len: starts[f + 1] - starts[f], format: 0 }).filter(|s| s.len > 0 && s.len <= window),
            Framing::Stream => Some(UnitSpan { start: starts[f], len: window.min(received.len() - starts[f]), format: 0 }),
        })
        .collect();
    (received, spans)
}

fn decode<T: Received>(d: &mut dyn BatchDecoder<T>, items: &[T], spans: &[UnitSpan]) -> Decoded {
    let mut out = Decoded::default();
    d.decode(&Batch::spans(items, spans).unwrap(), &mut out).unwrap();
    out
}

fn compare<T: Received>(case: &Case, what: &str, items: &[T], spans: &[UnitSpan], scale: f32) {
    let (code, params, cfg) = (case.code(), case.params(), case.cfg());
    let mut cpu = SyncMapDecoder::<T>::new(code.clone(), params, cfg, 0).unwrap().with_input_scale(scale).unwrap().with_soft_output();
    let pipeline = PipelineOptions { batch_units: case.batch_units, poison: Some(0xA5), ..Default::default() };
    let mut gpu = GpuSync::<T>::new(code, params, cfg, scale, true, &pipeline).unwrap_or_else(|e| panic!("{what}: {e:#}"));
    if case.storage != Storage::Auto {
        assert_eq!(gpu.global_storage(), case.storage == Storage::Global, "{what}: {}", gpu.describe());
    }
    let (want, got) = (decode(&mut cpu, items, spans), decode(&mut gpu, items, spans));
    assert_eq!(got.reports, want.reports, "{what}");
    assert!(got.bits == want.bits, "{what}: the GPU's decisions differ from the CPU's");
    assert_eq!(got.soft.len(), want.soft.len(), "{what}");
    for (i, (g, w)) in got.soft.iter().zip(&want.soft).enumerate() {
        assert!((g - w).abs() <= 1e-5 * w.abs().max(1.0), "{what}: bit LLR {i}: GPU {g}, CPU {w}");
    }
    assert!(want.bits.contains(&1) && want.reports.iter().any(|r| r.check.is_none()), "{what}: the input proves little");
}

#[test]
fn the_gpu_gives_the_cpu_references_results_on_fresh_inputs() {
    if !common::have_gpu("the_gpu_gives_the_cpu_references_results_on_fresh_inputs") {
        return;
    }
    let seed = fresh_seed();
    for case in cases() {
        let mut rng = SmallRng::seed_from_u64(seed);
        let (code, window) = (case.code(), case.window());
        // Small codes send more frames than a GPU has SMs, so that their
        // batches take the decoder's packed CTAs, not only its wide ones.
        let frames = if case.q * case.symbols <= 200 { 400 } else { 40 };
        let what = format!("{} (seed {seed})", case.name());
        let (hard, spans) = units(&code, Bsid::new(case.params(), seed), case.framing, window, frames, &mut rng);
        compare::<u8>(&case, &format!("{what}, hard bits"), &hard, &spans, 1.0);
        let ebn0 = 6.0;
        let (llrs, spans) = units(&code, BsidAwgn::new(case.params(), ebn0, code.rate().min(1.0), seed).unwrap(), case.framing, window, frames, &mut rng);
        compare::<f32>(&case, &format!("{what}, f32 LLRs"), &llrs, &spans, 1.0);
        let quantizer = Quantizer::matched(noise_variance(ebn0, code.rate().min(1.0)).unwrap()).unwrap();
        let channel = BsidAwgn::<i8>::with_quantizer(case.params(), ebn0, code.rate().min(1.0), seed, quantizer).unwrap();
        let (q8, spans) = units(&code, channel, case.framing, window, frames, &mut rng);
        compare::<i8>(&case, &format!("{what}, i8 LLRs"), &q8, &spans, quantizer.scale());
    }
}

/// The symbol APPs of every unit, against [`SyncMapDecoder::decode_frame`]'s.
fn compare_apps<T: Received>(case: &Case, what: &str, items: &[T], spans: &[UnitSpan], scale: f32) {
    let (code, params, cfg) = (case.code(), case.params(), case.cfg());
    let mut cpu = SyncMapDecoder::<T>::new(code.clone(), params, cfg, 0).unwrap().with_input_scale(scale).unwrap();
    let pipeline = PipelineOptions { batch_units: case.batch_units, poison: Some(0x5A), ..Default::default() };
    let mut gpu = GpuSync::<T>::with_apps(code, params, cfg, scale, &pipeline).unwrap_or_else(|e| panic!("{what}: {e:#}"));
    decode(&mut gpu, items, spans);
    let got = gpu.take_apps();
    let mut want = Vec::new();
    for s in spans {
        let (mut bits, mut app) = (Vec::new(), Vec::new());
        cpu.decode_frame(&items[s.start..s.start + s.len], &mut bits, &mut app).unwrap();
        want.extend(app);
    }
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!((g - w).abs() <= 1e-5 * w.abs(), "{what}: APP {i}: GPU {g}, CPU {w}");
    }
}

#[test]
fn the_gpus_symbol_apps_are_the_references() {
    if !common::have_gpu("the_gpus_symbol_apps_are_the_references") {
        return;
    }
    let seed = fresh_seed();
    for case in cases() {
        let mut rng = SmallRng::seed_from_u64(seed ^ 1);
        let (code, window) = (case.code(), case.window());
        let what = format!("{} (seed {seed})", case.name());
        let (hard, spans) = units(&code, Bsid::new(case.params(), seed), case.framing, window, 12, &mut rng);
        compare_apps::<u8>(&case, &format!("{what}, hard bits"), &hard, &spans, 1.0);
        let (llrs, spans) = units(&code, BsidAwgn::new(case.params(), 6.0, code.rate().min(1.0), seed).unwrap(), case.framing, window, 12, &mut rng);
        compare_apps::<f32>(&case, &format!("{what}, f32 LLRs"), &llrs, &spans, 1.0);
    }
}

#[test]
fn bad_input_gets_the_references_errors() {
    if !common::have_gpu("bad_input_gets_the_references_errors") {
        return;
    }
    let code = SyncCode::random(16, 8, 30, 1).unwrap();
    let cfg = DecoderConfig { framing: Framing::Stream, ..DecoderConfig::default() };
    let p = BsidParams::new(1e-2, 1e-2, 0.0).unwrap();
    let mut gpu = GpuSync::<f32>::new(code, p, cfg, 1.0, false, &PipelineOptions::default()).unwrap();
    let window = gpu.shapes()[0].items;
    let mut items = vec![3.0f32; window];
    items[17] = f32::NAN;
    let e = gpu.submit(&Batch::uniform(&items, window).unwrap()).unwrap_err();
    assert!(e.to_string().contains("index 17"), "{e}");
    let short = vec![3.0f32; 100];
    let e = gpu.submit(&Batch::uniform(&short, 100).unwrap()).unwrap_err();
    assert!(e.to_string().contains("shorter than"), "{e}");
    let e = GpuSync::<u8>::new(SyncCode::random(16, 8, 30, 1).unwrap(), p, cfg, f32::NAN, false, &PipelineOptions::default()).err().unwrap();
    assert!(format!("{e:#}").contains("input scale"), "{e:#}");
    // Still decoding after the refusals.
    let mut out = Decoded::default();
    gpu.decode(&Batch::uniform(&vec![3.0f32; 2 * window], window).unwrap(), &mut out).unwrap();
    assert_eq!(out.reports.len(), 2);
}

/// Every case's kernel compiles (NVRTC only, no GPU), with and without soft
/// output and the APPs, for frames and windows, γ global and local.
#[test]
fn kernels_compile() {
    if !common::have_nvrtc("kernels_compile") {
        return;
    }
    for case in cases() {
        for (soft, apps) in [(false, false), (true, false), (false, true)] {
            compile_sync_kernel(&case.code(), case.params(), case.cfg(), soft, apps, "sm_90")
                .unwrap_or_else(|e| panic!("{} (soft {soft}, apps {apps}): {e:#}", case.name()));
        }
    }
}
