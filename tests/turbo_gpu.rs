//! The GPU turbo decoder gives the CPU sub-block model's results: the same
//! hard bits, iteration counts and CRC verdicts, bit for bit, for max-log-MAP
//! (scaled and not) and the linear log-MAP, over K ∈ {40 … 6144}, constituent
//! codes of memory 2, 3 and 4, P ∈ {1, 8, 96, 128}, every guard with g ∈ {4, 8},
//! 1 to 8 iterations, early stop never / stable / CRC24A / CRC24B, i8 and f32
//! LLRs, noisy blocks at low Eb/N0 (where iterations and early stops differ
//! from block to block) and partial batches; output buffers are poisoned
//! before every kernel. Exact log-MAP rounds differently on the device
//! (`expf`, `log1pf`), so there only a tiny fraction of bits may differ.
//! The soft output (the a-posteriori LLRs) is the CPU model's bit for bit
//! too, with its iterations and bits, on the fused and the per-half-iteration
//! kernels. Bad input and bad configurations fail with clear errors.
//!
//! These tests need a GPU. Without one they say `SKIPPED <name>` and pass,
//! unless `GPUFEC_REQUIRE_GPU=1`, which makes a missing GPU a failure. The
//! compile check needs only NVRTC and is skipped the same way without it.
//! `timing_k6144` prints kernel-only and end-to-end throughput; run it alone
//! (`gpu_turbo timing --nocapture`) for figures not shared with other tests.

use gpufec::codes::channel::{BpskAwgn, Channel, Quantizer, noise_variance};
use gpufec::codes::encode::Encoder;
use gpufec::codes::crc::{CRC24A, CRC24B};
use gpufec::codes::turbo::qpp::{Interleaver, Qpp};
use gpufec::codes::turbo::decoder::Precision;
use gpufec::codes::settings::Settings;
use gpufec::codes::turbo::{CpuTurbo, DecoderConfig, EarlyStop, Guard, MaxStar, Rsc, TurboCode, TurboEncoder, TurboSettings};
use gpufec::codes::{Batch, BatchDecoder, Decoded, Llr, UnitSpan};
use gpufec::gpu::{Backend, BackendOptions, GpuTurbo, GpuTurboOptions, PipelineOptions, compile_turbo_kernel, turbo_decoder};
use rand::{Rng, SeedableRng, rngs::SmallRng};

mod common;


/// One configuration of the matrix.
#[derive(Debug, Clone)]
struct Case {
    k: usize,
    /// Constituent code: feedback, feedforward (octal).
    rsc: (&'static str, &'static str),
    cfg: DecoderConfig,
    ebn0_db: f64,
    blocks: usize,
    batch_units: usize,
}

impl Case {
    fn code(&self) -> TurboCode {
        let rsc = Rsc::from_octal(self.rsc.0, self.rsc.1).unwrap();
        TurboCode::new(rsc, &Interleaver::Qpp(Qpp::lte(self.k).unwrap())).unwrap()
    }

    fn name(&self) -> String {
        format!("K={} rsc {}/{} [{}] at {} dB, {} blocks in batches of {}", self.k, self.rsc.0, self.rsc.1, self.cfg.describe(), self.ebn0_db, self.blocks, self.batch_units)
    }
}

const LTE: (&str, &str) = ("13", "15");

/// A covering matrix rather than the full product: every value of every
/// parameter appears several times, in changing company, plus the headline
/// configurations. `exact` picks the exact log-MAP cases instead.
fn cases(exact: bool) -> Vec<Case> {
    let codes: [(usize, (&str, &str)); 8] = [(40, LTE), (104, LTE), (512, LTE), (1024, LTE), (6144, LTE), (256, ("7", "5")), (1024, ("23", "35")), (2048, LTE)];
    let algos = [(MaxStar::Max, 0.75), (MaxStar::Max, 1.0), (MaxStar::Linear, 1.0), (MaxStar::Linear, 0.75)];
    let guards = [Guard::None, Guard::Pivi, Guard::Dstw, Guard::PiviDstw];
    let stops = [EarlyStop::Never, EarlyStop::Stable, EarlyStop::Crc24B, EarlyStop::Stable, EarlyStop::Crc24A];
    let ps = [1, 8, 96];
    let case = |k: usize, rsc, cfg: DecoderConfig, ebn0_db| {
        cfg.validate(k).unwrap();
        // About 60 kb per case, batches cut so that the last one is partial.
        let blocks = (60_000 / k).clamp(4, 40);
        Case { k, rsc, cfg, ebn0_db, blocks, batch_units: blocks / 3 + 1 }
    };
    let mut out = Vec::new();
    if exact {
        let e = |p, guard, window, iterations| DecoderConfig { max_star: MaxStar::Exact, scaling: 1.0, iterations, subblocks: p, guard, window, ..Default::default() };
        out.push(case(40, LTE, e(1, Guard::None, 0, 8), 2.0));
        out.push(case(1024, LTE, e(8, Guard::PiviDstw, 4, 6), 0.6));
        out.push(case(6144, LTE, e(96, Guard::Pivi, 0, 4), 0.4));
        out.push(case(512, ("23", "35"), e(8, Guard::Dstw, 8, 5), 0.8));
        return out;
    }
    for i in 0..44 {
        let (k, rsc) = codes[i % codes.len()];
        let mut p = ps[(i / 2) % 3];
        while p > 1 && k / p < 8 {
            p /= 4;
        }
        let guard = if p == 1 { Guard::None } else { guards[(i / 3) % 4] };
        let window = if guard.trains() { [4, 8][(i / 5) % 2].min(k / p - 1) } else { 0 };
        let (max_star, scaling) = algos[(i / 4) % 4];
        let cfg = DecoderConfig { max_star, scaling, iterations: 1 + (i * 5) % 8, early_stop: stops[(i / 7) % 5], subblocks: p.max(1), guard, window };
        // Low Eb/N0 where the blocks converge after different numbers of
        // iterations (short blocks need more).
        let ebn0 = if k <= 256 { [1.5, 2.5, 3.5][i % 3] } else { [0.2, 0.6, 1.0][i % 3] };
        out.push(case(k, rsc, cfg, ebn0));
    }
    let d = |iterations, early_stop, p, guard, window| DecoderConfig { iterations, early_stop, subblocks: p, guard, window, ..Default::default() };
    out.push(case(6144, LTE, d(8, EarlyStop::Stable, 96, Guard::PiviDstw, 8), 0.6));
    // The GPU's default split at K = 6144.
    out.push(case(6144, LTE, DecoderConfig { iterations: 6, ..DecoderConfig::default() }.with_gpu_split(6144), 0.6));
    out.push(case(6144, LTE, d(6, EarlyStop::Crc24B, 96, Guard::Pivi, 0), 0.7));
    out.push(case(6144, LTE, d(5, EarlyStop::Never, 1, Guard::None, 0), 0.5));
    out.push(case(1024, LTE, d(8, EarlyStop::Crc24B, 96, Guard::Dstw, 8), 0.8));
    out.push(case(40, LTE, d(8, EarlyStop::Stable, 8, Guard::PiviDstw, 4), 2.0));
    out
}

/// Random blocks, each K − 24 random bits and their CRC (the one the case
/// stops on, else CRC24B), encoded and sent over AWGN: the LLRs as f32 and
/// quantized to i8 with the scale to divide them by.
fn channel(case: &Case, code: &TurboCode, seed: u64) -> (Vec<f32>, Vec<i8>, f32) {
    let mut r = SmallRng::seed_from_u64(seed);
    let crc = if case.cfg.early_stop == EarlyStop::Crc24A { &CRC24A } else { &CRC24B };
    let mut bits = Vec::with_capacity(case.blocks * case.k);
    for _ in 0..case.blocks {
        let info: Vec<u8> = (0..case.k - 24).map(|_| r.random_range(0..2u8)).collect();
        crc.attach(&info, &mut bits);
    }
    let mut enc = TurboEncoder::new(code.clone());
    let mut coded = Vec::new();
    enc.encode(&bits, &mut coded).unwrap();
    let mut f = Vec::new();
    BpskAwgn::new(case.ebn0_db, enc.rate(), r.random()).unwrap().transmit(&coded, &mut f).unwrap();
    let q = Quantizer::matched(noise_variance(case.ebn0_db, enc.rate()).unwrap()).unwrap();
    let mut i8s = Vec::new();
    q.quantize(&f, &mut i8s).unwrap();
    (f, i8s, q.scale())
}

fn gpu_decoder<T: Llr>(case: &Case, scale: f32) -> anyhow::Result<GpuTurbo<T>> {
    let pipeline = PipelineOptions { batch_units: case.batch_units, poison: Some(0xa5), ..Default::default() };
    GpuTurbo::<T>::new(case.code(), case.cfg, scale, &pipeline)
}

/// Decode `llrs` on the CPU model and the GPU and compare: bits and reports
/// exactly, or (exact log-MAP) bits up to a tiny fraction. Returns the
/// differing bits.
fn compare<T: Llr>(case: &Case, llrs: &[T], scale: f32) -> Result<usize, String> {
    let code = case.code();
    let name = format!("{} {}", case.name(), T::NAME);
    let mut cpu = CpuTurbo::<T>::new(code.clone(), case.cfg, scale, 0).unwrap();
    let mut gpu = gpu_decoder::<T>(case, scale).map_err(|e| format!("{name}: {e:#}"))?;
    let batch = Batch::uniform(llrs, code.coded_len()).unwrap();
    let (mut want, mut got) = (Decoded::default(), Decoded::default());
    cpu.decode(&batch, &mut want).unwrap();
    gpu.decode(&batch, &mut got).map_err(|e| format!("{name}: {e:#}"))?;
    if got.bits.len() != want.bits.len() || got.reports.len() != want.reports.len() {
        return Err(format!("{name}: {} bits and {} reports from the GPU, {} and {} from the CPU", got.bits.len(), got.reports.len(), want.bits.len(), want.reports.len()));
    }
    // As a stream's decoder block submits: each batch where it lies, then the bits packed.
    let in_place = common::decode_in_place(&mut gpu, llrs, code.coded_len(), true);
    if in_place.bits != got.bits || in_place.reports != got.reports {
        return Err(format!("{name}: decoded in place, not as staged"));
    }
    if gpu.pack_bits() {
        let packed = common::decode_in_place(&mut gpu, llrs, code.coded_len(), true);
        if !packed.bits.is_empty() || packed.packed != common::packed(&got.bits) || packed.reports != got.reports {
            return Err(format!("{name}: the packed bits are not the bits"));
        }
    }
    let differ = got.bits.iter().zip(&want.bits).filter(|(a, b)| a != b).count();
    if case.cfg.max_star == MaxStar::Exact {
        // expf / log1pf round differently from the CPU's: allow one bit in a thousand.
        return if differ * 1000 <= got.bits.len() { Ok(differ) } else { Err(format!("{name}: {differ} of {} bits differ", got.bits.len())) };
    }
    if let Some(i) = (0..got.bits.len()).find(|&i| got.bits[i] != want.bits[i]) {
        return Err(format!(
            "{name} ({}): bit {i} (block {}) is {} on the GPU, {} on the CPU; {differ} bits differ; reports GPU {:?} CPU {:?}",
            gpu.describe(),
            i / case.k,
            got.bits[i],
            want.bits[i],
            got.reports[i / case.k],
            want.reports[i / case.k]
        ));
    }
    if let Some(u) = (0..got.reports.len()).find(|&u| got.reports[u] != want.reports[u]) {
        return Err(format!("{name}: block {u} reports {:?} on the GPU, {:?} on the CPU", got.reports[u], want.reports[u]));
    }
    Ok(0)
}

/// Run `job` on every case in parallel (NVRTC takes seconds per
/// configuration), given the case's code and its channel's f32 and i8 LLRs
/// (seeded from `seed` and the case's place) with the i8 scale; each job's
/// failures and its line of statistics, all together.
fn each_case(cases: &[Case], seed: u64, job: impl Fn(&Case, &TurboCode, &[f32], &[i8], f32) -> (Vec<String>, String) + Sync) -> (Vec<String>, Vec<String>) {
    let job = &job;
    std::thread::scope(|s| {
        let jobs: Vec<_> = cases
            .iter()
            .enumerate()
            .map(|(i, case)| {
                s.spawn(move || {
                    let code = case.code();
                    let (f, q, scale) = channel(case, &code, seed + i as u64);
                    job(case, &code, &f, &q, scale)
                })
            })
            .collect();
        let (mut errs, mut stats) = (Vec::new(), Vec::new());
        for j in jobs {
            let (e, s) = j.join().unwrap();
            errs.extend(e);
            stats.push(s);
        }
        (errs, stats)
    })
}

/// Compare every case's bits, f32 and i8 LLRs each; the failures, and a
/// line of statistics per case.
fn run_cases(cases: &[Case]) -> (Vec<String>, Vec<String>) {
    each_case(cases, 7000, |case, code, f, q, scale| {
        let mut errs = Vec::new();
        let mut differ = [0; 2];
        match compare::<f32>(case, f, 1.0) {
            Ok(d) => differ[0] = d,
            Err(e) => errs.push(e),
        }
        match compare::<i8>(case, q, scale) {
            Ok(d) => differ[1] = d,
            Err(e) => errs.push(e),
        }
        // How varied the case was: iterations the CPU spent per block.
        let mut cpu = CpuTurbo::<f32>::new(code.clone(), case.cfg, 1.0, 0).unwrap();
        let mut d = Decoded::default();
        cpu.decode(&Batch::uniform(f, code.coded_len()).unwrap(), &mut d).unwrap();
        let (lo, hi) = d.reports.iter().fold((u32::MAX, 0), |(lo, hi), r| (lo.min(r.iterations), hi.max(r.iterations)));
        let fails = d.reports.iter().filter(|r| r.check == Some(false)).count();
        (errs, format!("{}: iterations {lo}..{hi}, {fails} CRC failures, differing bits f32 {} i8 {}", case.name(), differ[0], differ[1]))
    })
}

#[test]
fn gpu_decodes_the_cpu_models_bits() {
    if !common::have_gpu("gpu_decodes_the_cpu_models_bits") {
        return;
    }
    let cases = cases(false);
    let t = std::time::Instant::now();
    let (errs, stats) = run_cases(&cases);
    for s in &stats {
        common::say(s);
    }
    common::say(&format!("{} cases, f32 and i8, in {:.1} s", cases.len(), t.elapsed().as_secs_f64()));
    assert!(errs.is_empty(), "{} of {} decoders differ from the CPU model:\n{}", errs.len(), 2 * cases.len(), errs.join("\n"));
}

#[test]
fn gpu_exact_log_map_is_close_to_the_cpus() {
    if !common::have_gpu("gpu_exact_log_map_is_close_to_the_cpus") {
        return;
    }
    let cases = cases(true);
    let (errs, stats) = run_cases(&cases);
    for s in &stats {
        common::say(s);
    }
    assert!(errs.is_empty(), "{}", errs.join("\n"));
}

#[test]
fn gpu_refuses_bad_input_with_clear_errors() {
    if !common::have_gpu("gpu_refuses_bad_input_with_clear_errors") {
        return;
    }
    let code = TurboCode::lte(40).unwrap();
    let opts = PipelineOptions { batch_units: 2, poison: Some(0xa5), ..Default::default() };
    let bad = |cfg: DecoderConfig, scale: f32, opts: &PipelineOptions| format!("{:#}", GpuTurbo::<f32>::new(code.clone(), cfg, scale, opts).err().unwrap());
    let e = bad(DecoderConfig { subblocks: 4, guard: Guard::Dstw, window: 11, ..Default::default() }, 1.0, &opts);
    assert!(e.contains("shortest sub-block"), "{e}");
    let e = bad(DecoderConfig { iterations: 0, ..Default::default() }, 1.0, &opts);
    assert!(e.contains("iterations"), "{e}");
    let e = bad(DecoderConfig::default(), f32::NAN, &opts);
    assert!(e.contains("LLR scale"), "{e}");
    let e = bad(DecoderConfig::default(), 1.0, &PipelineOptions { device: 99, ..Default::default() });
    assert!(e.contains("device 99 does not exist"), "{e}");
    let e = bad(DecoderConfig::default(), 1.0, &PipelineOptions { batch_units: 1 << 40, ..Default::default() });
    assert!(e.contains("exceeds the limit"), "{e}");

    let mut d = GpuTurbo::<f32>::new(code.clone(), DecoderConfig::default(), 1.0, &opts).unwrap();
    let unit = d.shapes()[0].items;
    assert_eq!(unit, 132);
    let mut out = Decoded::default();
    let mut nan = vec![1.0f32; 2 * unit];
    nan[unit + 17] = f32::NAN;
    let e = d.submit(&Batch::uniform(&nan, unit).unwrap()).unwrap_err().to_string();
    assert!(e.contains(&format!("LLR at index {} ", unit + 17)), "{e}");
    let short = vec![1.0f32; unit - 1];
    let e = d.submit(&Batch::uniform(&short, unit - 1).unwrap()).unwrap_err().to_string();
    assert!(e.contains("131 items") && e.contains("132 items"), "{e}");
    let partial = vec![1.0f32; unit + 1];
    let long_unit = [UnitSpan { start: 0, len: unit + 1, format: 0 }];
    assert!(d.submit(&Batch::spans(&partial, &long_unit).unwrap()).is_err(), "a unit of the wrong length must be refused");
    let three = vec![1.0f32; 3 * unit];
    assert!(d.submit(&Batch::uniform(&three, unit).unwrap()).is_err(), "more units than a batch must be refused");
    assert!(!d.collect(&mut out).unwrap());
    // The decoder still works after refusals, on spans with gaps too.
    let mut bits = Vec::new();
    d.decode_all(&vec![1.0f32; 3 * unit], &mut bits).unwrap();
    assert_eq!(bits, vec![0; 3 * 40]);
    let gapped = vec![-1.0f32; 2 * unit + 5];
    let spans = [UnitSpan { start: 0, len: unit, format: 0 }, UnitSpan { start: unit + 5, len: unit, format: 0 }];
    d.decode(&Batch::spans(&gapped, &spans).unwrap(), &mut out).unwrap();
    assert_eq!((out.bits.len(), out.reports.len()), (2 * 40, 2));
    assert!(out.reports.iter().all(|r| r.iterations == 8 && r.check.is_none() && r.consumed == unit && r.bits == 40));
    assert!(d.describe().starts_with("gpu 0 ("), "{}", d.describe());
}

/// Kernel-only and end-to-end throughput of the headline configuration:
/// K = 6144, max-log-MAP ×0.75, 6 iterations, P = 96 with PIVI, i8 LLRs at
/// 1.5 dB, the default batch; a sample of its bits checked against the CPU.
#[test]
fn timing_k6144() {
    if !common::have_gpu("timing_k6144") {
        return;
    }
    let cfg = DecoderConfig { iterations: 6, subblocks: 96, guard: Guard::Pivi, ..Default::default() };
    for (name, cfg) in [("P=96 pivi", cfg), ("P=96 pividstw g=8", DecoderConfig { guard: Guard::PiviDstw, window: 8, ..cfg })] {
        let mut dec = GpuTurbo::<i8>::new(TurboCode::lte(6144).unwrap(), cfg, 1.0, &PipelineOptions::default()).unwrap();
        let per_batch = dec.limit().units;
        let case = Case { k: 6144, rsc: LTE, cfg, ebn0_db: 1.5, blocks: 4 * per_batch, batch_units: per_batch };
        let code = case.code();
        let (_, q, scale) = channel(&case, &code, 99);
        let n = code.coded_len();
        let first = Batch::uniform(&q[..per_batch * n], n).unwrap();
        let kernel_ms = dec.time_kernel(&first, 5).unwrap();
        let mut out = Decoded::default();
        let t = std::time::Instant::now();
        dec.decode(&Batch::uniform(&q, n).unwrap(), &mut out).unwrap();
        let e2e = t.elapsed().as_secs_f64();
        let bits = (case.blocks * 6144) as f64;
        common::say(&format!(
            "TIMING K=6144 {name} max-log x0.75 6 it i8, {per_batch} blocks/batch: kernel-only {:.1} ms/batch = {:.0} blocks/s = {:.1} Mb/s; end to end {} blocks in {:.3} s = {:.0} blocks/s = {:.1} Mb/s; split of the last batch {:?}; {}",
            kernel_ms,
            per_batch as f64 / (kernel_ms / 1e3),
            per_batch as f64 * 6144.0 / (kernel_ms / 1e3) / 1e6,
            case.blocks,
            e2e,
            case.blocks as f64 / e2e,
            bits / e2e / 1e6,
            dec.last_split(),
            dec.describe()
        ));
        // A sample against the CPU model.
        let mut cpu = CpuTurbo::<i8>::new(code.clone(), cfg, scale, 0).unwrap();
        let mut want = Decoded::default();
        cpu.decode(&Batch::uniform(&q[..32 * n], n).unwrap(), &mut want).unwrap();
        assert!(want.bits == out.bits[..32 * 6144], "{name}: the GPU's bits differ from the CPU's");
    }
}

#[test]
fn every_kernel_configuration_compiles_for_sm_90() {
    if !common::have_nvrtc("every_kernel_configuration_compiles_for_sm_90") {
        return;
    }
    // Every configuration the GPU tests decode with, and the default.
    let mut cfgs: Vec<(usize, (&str, &str), DecoderConfig)> = cases(false).into_iter().chain(cases(true)).map(|c| (c.k, c.rsc, c.cfg)).collect();
    cfgs.push((6144, LTE, DecoderConfig::default()));
    let errs: Vec<String> = std::thread::scope(|s| {
        let jobs: Vec<_> = cfgs
            .iter()
            .map(|(k, rsc, cfg)| {
                s.spawn(move || {
                    let code = TurboCode::new(Rsc::from_octal(rsc.0, rsc.1).unwrap(), &Interleaver::Qpp(Qpp::lte(*k).unwrap())).unwrap();
                    compile_turbo_kernel(&code, cfg, false, "sm_90").err().map(|e| format!("K={k} {rsc:?} {}: {e:#}", cfg.describe()))
                })
            })
            .collect();
        jobs.into_iter().filter_map(|j| j.join().unwrap()).collect()
    });
    assert!(errs.is_empty(), "{}", errs.join("\n"));
}

/// The soft-output cases: K = 40, 1024 and 6144; the GPU's default split,
/// PIVI, PIVIDSTW and the serial decoder (at K = 6144 the per-half-iteration
/// kernels: a CTA cannot hold the block); max-log-MAP scaled and not, the
/// linear log-MAP, and exact log-MAP last; every early stop, at low Eb/N0
/// where blocks stop after different numbers of iterations.
fn soft_cases() -> Vec<Case> {
    let c = |k: usize, cfg: DecoderConfig, ebn0_db| {
        cfg.validate(k).unwrap();
        let blocks = (60_000 / k).clamp(4, 40);
        Case { k, rsc: LTE, cfg, ebn0_db, blocks, batch_units: blocks / 3 + 1 }
    };
    let d = |max_star, scaling, iterations, early_stop, subblocks, guard, window| DecoderConfig { max_star, scaling, iterations, early_stop, subblocks, guard, window };
    vec![
        c(40, d(MaxStar::Max, 0.75, 8, EarlyStop::Stable, 1, Guard::None, 0), 2.0),
        c(40, d(MaxStar::Linear, 1.0, 6, EarlyStop::Never, 8, Guard::PiviDstw, 4), 2.5),
        c(1024, DecoderConfig { scaling: 1.0, early_stop: EarlyStop::Crc24B, ..DecoderConfig::default() }.with_gpu_split(1024), 0.8),
        c(1024, d(MaxStar::Linear, 0.75, 8, EarlyStop::Stable, 16, Guard::PiviDstw, 8), 0.8),
        c(6144, DecoderConfig { iterations: 6, ..DecoderConfig::default() }.with_gpu_split(6144), 0.6),
        c(6144, d(MaxStar::Max, 1.0, 8, EarlyStop::Stable, 96, Guard::Pivi, 0), 0.6),
        c(6144, d(MaxStar::Max, 0.75, 4, EarlyStop::Never, 1, Guard::None, 0), 0.5),
        c(6144, d(MaxStar::Linear, 1.0, 6, EarlyStop::Crc24B, 128, Guard::PiviDstw, 6), 0.5),
        c(1024, d(MaxStar::Exact, 1.0, 6, EarlyStop::Never, 8, Guard::PiviDstw, 4), 0.6),
    ]
}

/// Decode `llrs` with soft output on the CPU model (f32 metrics, what the
/// GPU computes) and on the GPU, and compare. For max-log-MAP and the linear
/// log-MAP everything must be equal: bits, reports and every soft output bit
/// for bit (`to_bits`), since the a-posteriori LLR is (sys + la) + le from
/// the very operands whose sign gives the equal decision, with the same two
/// rounded additions; a tolerance would only hide a wrong order of
/// operations. For exact log-MAP (`expf`, `log1pf` round differently on
/// the device) at most one bit in a thousand may differ and 99 % of the soft
/// outputs must agree within 1e-3·max(1, |cpu|): the drift of a few ulps per
/// max* through six iterations, not a different algorithm. Returns the worst
/// relative difference.
fn compare_soft<T: Llr>(case: &Case, llrs: &[T], scale: f32) -> Result<f64, String> {
    let code = case.code();
    let name = format!("soft {} {}", case.name(), T::NAME);
    let mut cpu = CpuTurbo::<T>::new(code.clone(), case.cfg, scale, 0).unwrap().with_precision(Precision::F32).unwrap().with_soft_output();
    let pipeline = PipelineOptions { batch_units: case.batch_units, poison: Some(0xa5), ..Default::default() };
    let mut gpu = GpuTurbo::<T>::with_options(code.clone(), case.cfg, scale, &pipeline, &GpuTurboOptions { soft_output: true, ..Default::default() }).map_err(|e| format!("{name}: {e:#}"))?;
    if !gpu.gives_soft() || !gpu.describe().contains("soft output") {
        return Err(format!("{name}: the decoder does not say it gives soft output: {}", gpu.describe()));
    }
    let batch = Batch::uniform(llrs, code.coded_len()).unwrap();
    let (mut want, mut got) = (Decoded::default(), Decoded::default());
    cpu.decode(&batch, &mut want).unwrap();
    gpu.decode(&batch, &mut got).map_err(|e| format!("{name}: {e:#}"))?;
    let n = case.blocks * case.k;
    if (got.bits.len(), got.soft.len(), got.reports.len()) != (n, n, case.blocks) || want.soft.len() != n {
        return Err(format!("{name}: GPU {} bits, {} soft, {} reports; CPU {} soft; want {n}, {n}, {}", got.bits.len(), got.soft.len(), got.reports.len(), want.soft.len(), case.blocks));
    }
    let rel = |i: usize| f64::from((got.soft[i] - want.soft[i]).abs()) / f64::from(want.soft[i].abs()).max(1.0);
    let worst = (0..n).map(rel).fold(0.0, f64::max);
    if case.cfg.max_star == MaxStar::Exact {
        let bits = got.bits.iter().zip(&want.bits).filter(|(a, b)| a != b).count();
        let far = (0..n).filter(|&i| rel(i) > 1e-3 || rel(i).is_nan()).count();
        return if bits * 1000 <= n && far * 100 <= n { Ok(worst) } else { Err(format!("{name}: {bits} bits differ, {far} of {n} soft outputs beyond 1e-3")) };
    }
    if let Some(i) = (0..n).find(|&i| got.bits[i] != want.bits[i]) {
        return Err(format!("{name} ({}): bit {i} is {} on the GPU, {} on the CPU", gpu.describe(), got.bits[i], want.bits[i]));
    }
    if let Some(u) = (0..case.blocks).find(|&u| got.reports[u] != want.reports[u]) {
        return Err(format!("{name}: block {u} reports {:?} on the GPU, {:?} on the CPU", got.reports[u], want.reports[u]));
    }
    if let Some(i) = (0..n).find(|&i| got.soft[i].to_bits() != want.soft[i].to_bits()) {
        let differ = (0..n).filter(|&i| got.soft[i].to_bits() != want.soft[i].to_bits()).count();
        return Err(format!("{name} ({}): soft output {i} (block {}) is {:e} on the GPU, {:e} on the CPU; {differ} differ, worst relative {worst:e}", gpu.describe(), i / case.k, got.soft[i], want.soft[i]));
    }
    Ok(worst)
}

#[test]
fn gpu_soft_output_is_the_cpu_models() {
    if !common::have_gpu("gpu_soft_output_is_the_cpu_models") {
        return;
    }
    let cases = soft_cases();
    let t = std::time::Instant::now();
    let (errs, stats) = each_case(&cases, 9100, |case, _, f, q, scale| {
        let (a, b) = (compare_soft::<f32>(case, f, 1.0), compare_soft::<i8>(case, q, scale));
        let stat = format!("{}: worst relative soft difference f32 {:?} i8 {:?}", case.name(), a.as_ref().ok(), b.as_ref().ok());
        ([a.err(), b.err()].into_iter().flatten().collect(), stat)
    });
    for s in &stats {
        common::say(s);
    }
    common::say(&format!("{} soft-output cases, f32 and i8, in {:.1} s", cases.len(), t.elapsed().as_secs_f64()));
    assert!(errs.is_empty(), "{} of {} soft decoders differ from the CPU model:\n{}", errs.len(), 2 * cases.len(), errs.join("\n"));
}

/// Soft output is an option of either backend: `auto` gives it from
/// whichever decoder it chose (the CPU's without a GPU), `gpu` from the GPU
/// or fails saying why there is none; and the kernels with it compile for
/// sm_90 (with NVRTC alone).
#[test]
fn soft_output_from_either_backend() {
    let chain = TurboSettings { block: Some(1024), ..Default::default() }.resolve().unwrap();
    let options = |backend| BackendOptions { backend, cpu_threads: 1, pipeline: PipelineOptions { batch_units: 4, ..Default::default() } };
    let (dec, choice) = turbo_decoder::<f32>(&chain, 1.0, true, &options(Backend::Auto)).unwrap();
    assert!(dec.gives_soft(), "{}", dec.describe());
    let (plain, _) = turbo_decoder::<f32>(&chain, 1.0, false, &options(Backend::Auto)).unwrap();
    assert!(!plain.gives_soft(), "{}", plain.describe());
    match turbo_decoder::<f32>(&chain, 1.0, true, &options(Backend::Gpu)) {
        Ok((dec, _)) => assert!(choice.gpu && dec.gives_soft() && dec.describe().contains("soft output"), "{}", dec.describe()),
        // No GPU: `gpu` fails with the very reason `auto` fell back for.
        Err(e) => assert_eq!(choice.why_not_gpu, Some(format!("{e:#}"))),
    }
    if !common::have_nvrtc("soft_output_from_either_backend (sm_90 compile)") {
        return;
    }
    for case in soft_cases() {
        compile_turbo_kernel(&case.code(), &case.cfg, true, "sm_90").unwrap_or_else(|e| panic!("{}: {e:#}", case.name()));
    }
}

/// Transport blocks decoded on the GPU with their code blocks de-rate-matched
/// on load give what the host's de-rate-matching gives to the GPU and to the
/// CPU model: the same bits and reports (iterations, CRC24A), bit for bit.
/// Rates from 1/5 (repetition) to 3/4, every rv, filler, two code block sizes
/// with E and E + 1 bits, i8 and f32 LLRs at Eb/N0 where some transport blocks
/// fail, inner batches small enough to split, poisoned outputs.
#[test]
fn gpu_dematching_on_load_is_the_hosts() {
    if !common::have_gpu("gpu_dematching_on_load_is_the_hosts") {
        return;
    }
    use gpufec::codes::turbo::{TransportBlock, TransportEncoder};
    let pivi = DecoderConfig { early_stop: EarlyStop::Crc24B, subblocks: 16, guard: Guard::PiviDstw, window: 8, ..Default::default() };
    let linear = DecoderConfig { max_star: MaxStar::Linear, scaling: 1.0, iterations: 6, early_stop: EarlyStop::Stable, subblocks: 8, guard: Guard::Pivi, window: 0 };
    // (A, G, rv, Eb/N0 dB, configuration, transport blocks)
    let cases = [
        // g = 4 < the 8-stage sub-blocks of K = 128, P = 16: with g equal to
        // a sub-block's length the β that PIVIDSTW carries (at stage g of the
        // sub-block) is never written, by the CPU model or the kernels, which
        // then read whatever their edge buffers held (a known gap).
        (100, 400, 1, 2.0, DecoderConfig { early_stop: EarlyStop::Crc24A, window: 4, ..pivi }, 24),
        (6000, 30000, 2, -0.6, linear, 6),
        (20000, 40001, 0, 1.2, pivi, 5),
        (30000, 40000, 0, 2.6, pivi, 5),
        (14000, 28000, 3, 1.4, linear, 5),
    ];
    let errs: Vec<String> = std::thread::scope(|s| {
        let jobs: Vec<_> = cases
            .iter()
            .enumerate()
            .map(|(i, &(a, g, rv, ebn0, cfg, count))| {
                s.spawn(move || {
                    let tb = TransportBlock::new(a, g, rv).unwrap();
                    let mut r = SmallRng::seed_from_u64(500 + i as u64);
                    let bits: Vec<u8> = (0..count * a).map(|_| r.random_range(0..2u8)).collect();
                    let mut coded = Vec::new();
                    TransportEncoder::new(tb.clone()).encode(&bits, &mut coded).unwrap();
                    let rate = a as f64 / g as f64;
                    let mut f = Vec::new();
                    BpskAwgn::new(ebn0, rate, r.random()).unwrap().transmit(&coded, &mut f).unwrap();
                    let q = Quantizer::matched(noise_variance(ebn0, rate).unwrap()).unwrap();
                    let mut i8s = Vec::new();
                    q.quantize(&f, &mut i8s).unwrap();
                    let name = format!("A={a} G={g} rv {rv} [{}] at {ebn0} dB", cfg.describe());
                    let mut errs = compare_dematching(&tb, rv, cfg, &f, 1.0, &name);
                    errs.extend(compare_dematching(&tb, rv, cfg, &i8s, q.scale(), &name));
                    errs
                })
            })
            .collect();
        jobs.into_iter().flat_map(|j| j.join().unwrap()).collect()
    });
    assert!(errs.is_empty(), "{}", errs.join("\n"));
}

/// Decode `llrs` (transport blocks of `tb`) on the CPU, and on the GPU with
/// the host's and the on-load de-rate-matching; the differences.
fn compare_dematching<T: Llr>(tb: &gpufec::codes::turbo::TransportBlock, rv: u8, cfg: DecoderConfig, llrs: &[T], scale: f32, name: &str) -> Vec<String> {
    use gpufec::codes::turbo::{Dematching, StopWhen};
    let options = |backend| BackendOptions { backend, cpu_threads: 0, pipeline: PipelineOptions { batch_units: 3, poison: Some(0xa5), ..Default::default() } };
    let decode = |backend, dematching| {
        let stop = match cfg.early_stop {
            EarlyStop::Never => StopWhen::Never,
            EarlyStop::Stable => StopWhen::Stable,
            EarlyStop::Crc24A | EarlyStop::Crc24B => StopWhen::Crc,
        };
        let settings = TurboSettings {
            tbs: Some(tb.a() as u64),
            coded: Some(tb.g() as u64),
            rv: Some(u64::from(rv)),
            dematch: Some(dematching),
            iterations: Some(cfg.iterations as u64),
            algorithm: Some(cfg.max_star),
            scaling: Some(f64::from(cfg.scaling)),
            subblocks: Some(cfg.subblocks as u64),
            guard: Some(cfg.guard),
            window: Some(cfg.window as u64),
            early_stop: Some(stop),
            ..Default::default()
        };
        let chain = settings.resolve().unwrap();
        assert_eq!(chain.config(), cfg, "{name}: the settings resolve to the configuration under test");
        let (mut dec, _) = turbo_decoder::<T>(&chain, scale, false, &options(backend)).unwrap();
        let mut out = Decoded::default();
        dec.decode(&Batch::uniform(llrs, tb.g()).unwrap(), &mut out).unwrap();
        (out, dec.describe())
    };
    let (want, _) = decode(Backend::Cpu, Dematching::Host);
    let fails = want.reports.iter().filter(|r| r.check == Some(false)).count();
    common::say(&format!("{name} {}: {} of {} transport blocks fail their CRC24A on the CPU", T::NAME, fails, want.reports.len()));
    let mut errs = Vec::new();
    for dematching in [Dematching::Host, Dematching::OnLoad] {
        let (got, describe) = decode(Backend::Gpu, dematching);
        if got.bits != want.bits || got.reports != want.reports {
            let differ = got.bits.iter().zip(&want.bits).filter(|(a, b)| a != b).count();
            errs.push(format!("{name} {} {dematching:?}: {differ} bits differ; reports GPU {:?} CPU {:?} ({describe})", T::NAME, got.reports, want.reports));
        }
    }
    errs
}
