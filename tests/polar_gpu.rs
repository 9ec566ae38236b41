//! The GPU polar BP decoder against the CPU's `i8` model: the same bits,
//! iteration counts, checks and soft output on fresh random inputs (a new
//! seed every run, named on failure), from output buffers poisoned before
//! every kernel, over N from 8 to 2^15 (messages in shared memory, and in
//! global scratch beyond what a CTA holds), the 5G, Gaussian-approximation
//! and file constructions, systematic codes, 5G messages whose code blocks
//! are punctured, shortened or repeated, with the G-matrix stop and without,
//! from `i8` and `f32` LLRs, staged and copied where they lie. Without a GPU these say SKIPPED; the kernel's
//! compilation is checked wherever NVRTC is (no GPU needed).

use gpufec::codes::decode::{Batch, BatchDecoder, Decoded};
use gpufec::codes::llr::{Llr, LlrType};
use gpufec::codes::crc::CRC11;
use gpufec::codes::polar::{Algorithm, BpConfig, BpPrecision, Construction, EarlyStop, InfoCheck, PolarChain, PolarFrames, PolarSettings, PolarSpec};
use gpufec::codes::settings::{Chain, Settings};
use gpufec::gpu::{Backend, BackendOptions, PipelineOptions, compile_polar_kernel, polar_decoder};
use std::sync::Arc;

mod common;

/// A seed that differs from run to run.
fn fresh_seed() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64)
}

fn chain(settings: PolarSettings) -> PolarChain {
    settings.resolve().unwrap_or_else(|e| panic!("{e}"))
}

/// Bare (N, K) codewords; with the CRC stop, their information bits end
/// with a CRC11.
fn bare(n: u64, k: u64, construction: &str, iterations: u64, stop: &str) -> PolarChain {
    let mut s = serde_json::json!({
        "n": n, "k": k, "construction": construction, "iterations": iterations, "early_stop": stop,
    });
    if stop == "crc" {
        s["crc"] = "crc11".into();
    }
    chain(serde_json::from_value(s).unwrap())
}

/// Decode `chain`'s noisy units at `ebn0` on the CPU (the i8 model) and
/// the GPU (small batches, poisoned outputs) and require the same results.
fn same<T: Llr>(chain: &PolarChain, ebn0: f64, bits: u64, soft: bool, seed: u64) {
    let what = format!("{} ({} LLRs, {ebn0} dB, soft {soft}, seed {seed})", chain.describe(), T::NAME);
    let input = chain.noisy::<T>(bits, ebn0, seed).unwrap();
    let pipeline = PipelineOptions { batch_units: 37, poison: Some(0xA5), ..Default::default() };
    let cpu = BackendOptions { backend: Backend::Cpu, cpu_threads: 0, ..Default::default() };
    let gpu = BackendOptions { backend: Backend::Gpu, cpu_threads: 0, pipeline };
    let (mut c, _) = polar_decoder::<T>(chain, soft, &cpu).unwrap();
    let (mut g, choice) = polar_decoder::<T>(chain, soft, &gpu).unwrap_or_else(|e| panic!("{what}: {e:#}"));
    assert!(choice.gpu, "{what}");
    let decode = |d: &mut dyn BatchDecoder<T>| {
        let mut out = Decoded::default();
        d.decode(&Batch::uniform(&input.llrs, chain.unit_llrs()).unwrap(), &mut out).unwrap();
        out
    };
    let (want, got) = (decode(c.as_mut()), decode(g.as_mut()));
    // 5G messages are rate-recovered on the host: only bare codewords go as they lie.
    let bare = matches!(chain.frames(), PolarFrames::Codewords(_));
    let in_place = common::decode_in_place(g.as_mut(), &input.llrs, chain.unit_llrs(), bare);
    assert!(in_place.bits == got.bits && in_place.reports == got.reports && in_place.soft == got.soft, "{what}: decoded in place, not as staged");
    if g.pack_bits() {
        let packed = common::decode_in_place(g.as_mut(), &input.llrs, chain.unit_llrs(), bare);
        assert!(packed.bits.is_empty() && packed.packed == common::packed(&got.bits) && packed.reports == got.reports, "{what}: packed bits differ from the bits");
    }
    assert_eq!(got.bits.len() as u64, input.info_bits, "{what}");
    assert!(got.bits == want.bits, "{what}: the GPU's bits differ from the CPU model's");
    assert_eq!(got.reports, want.reports, "{what}");
    assert!(got.soft == want.soft, "{what}: the GPU's soft output differs");
    let iterations: Vec<u32> = want.reports.iter().map(|r| r.iterations).collect();
    assert!(want.bits.contains(&1) && iterations.iter().any(|&i| i > 1), "{what}: the input proves little");
}

#[test]
fn gpu_bp_equals_the_cpu_i8_model_over_every_length() {
    if !common::have_gpu("gpu_bp_equals_the_cpu_i8_model_over_every_length") {
        return;
    }
    let seed = fresh_seed();
    for (n, construction, ebn0) in [
        (8, "5g", 1.0),
        (16, "ga:1", 1.0),
        (32, "5g", 2.5),
        (64, "5g", 2.5),
        (128, "ga:2", 2.5),
        (256, "5g", 2.5),
        (512, "5g", 2.5),
        (1024, "5g", 2.5),
        (2048, "ga:2", 2.5),
        (4096, "ga:2", 2.5),
        (8192, "ga:2", 2.5),
        (16384, "ga:2", 2.5),
        (32768, "ga:2", 2.5),
    ] {
        let bits = (40 * n / 2).max(20_000);
        let crc = if n >= 64 { &[(30, "crc")][..] } else { &[] };
        for &(iterations, stop) in [(30, "g"), (7, "never")].iter().chain(crc) {
            let c = bare(n, n / 2, construction, iterations, stop);
            same::<i8>(&c, ebn0, bits, n <= 1024, seed);
        }
    }
}

#[test]
fn gpu_bp_equals_the_cpu_i8_model_on_f32_llrs_files_and_systematic_codes() {
    if !common::have_gpu("gpu_bp_equals_the_cpu_i8_model_on_f32_llrs_files_and_systematic_codes") {
        return;
    }
    let seed = fresh_seed();
    same::<f32>(&bare(1024, 512, "5g", 40, "g"), 2.5, 50_000, true, seed);
    same::<f32>(&bare(16384, 8192, "ga:2", 10, "never"), 2.5, 40_000, false, seed);
    // A frozen set from a file: the GA code's, written out.
    let code = Construction::Ga { design_ebn0_db: 1.5 }.build(512, 300).unwrap();
    let frozen: Vec<String> = (0..512).filter(|&i| !code.info().contains(&(i as u32))).map(|i: usize| i.to_string()).collect();
    let path = std::env::temp_dir().join(format!("gpufec-polar-gpu-{}.txt", std::process::id()));
    std::fs::write(&path, frozen.join("\n")).unwrap();
    same::<i8>(&bare(512, 300, &path.display().to_string(), 25, "g"), 2.0, 30_000, true, seed);
    let _ = std::fs::remove_file(&path);
    // A systematic code, decoded by the GPU decoder as the CPU model does.
    let spec = PolarSpec::new(Arc::new(Construction::Ga { design_ebn0_db: 2.0 }.build(256, 128).unwrap()), true, None).unwrap();
    let cfg = BpConfig { iterations: 30, early_stop: EarlyStop::GMatrix, precision: BpPrecision::I8 };
    let mut cpu = gpufec::codes::polar::CpuPolar::<i8>::new(spec.clone(), Algorithm::Bp(cfg), 0).unwrap().with_soft_output().unwrap();
    let mut gpu = gpufec::gpu::GpuPolar::<i8>::new(spec.clone(), cfg, true, &PipelineOptions { poison: Some(0x5A), ..Default::default() }).unwrap();
    let input = bare(256, 128, "ga:2", 30, "g").noisy::<i8>(30_000, 2.0, seed).unwrap();
    let (mut want, mut got) = (Decoded::default(), Decoded::default());
    cpu.decode(&Batch::uniform(&input.llrs, 256).unwrap(), &mut want).unwrap();
    gpu.decode(&Batch::uniform(&input.llrs, 256).unwrap(), &mut got).unwrap();
    assert!(got.bits == want.bits && got.reports == want.reports && got.soft == want.soft, "systematic (256, 128), seed {seed}");
}

#[test]
fn gpu_bp_equals_the_cpu_i8_model_through_the_5g_chain() {
    if !common::have_gpu("gpu_bp_equals_the_cpu_i8_model_through_the_5g_chain") {
        return;
    }
    let seed = fresh_seed();
    // UCI punctured, shortened and repeated, two code blocks, parity-check
    // bits (12..19 bits), and a DCI; with the stop and without.
    for (k, e, message, stop) in [
        (100, 300, "uci", "g"),
        (200, 432, "uci", "g"),
        (30, 1000, "uci", "never"),
        (1100, 2600, "uci", "g"),
        (15, 200, "uci", "g"),
        (40, 200, "dci", "never"),
        (200, 432, "uci", "crc"),
        (40, 200, "dci", "crc"),
    ] {
        let s: PolarSettings = serde_json::from_value(serde_json::json!({ "k": k, "e": e, "message": message, "algorithm": "bp", "iterations": 25, "early_stop": stop })).unwrap();
        let c = chain(s);
        let PolarFrames::Nr(nr) = c.frames() else { unreachable!() };
        let ebn0 = if nr.rate() < 0.2 { 0.0 } else { 1.5 };
        same::<i8>(&c, ebn0, (200 * k) as u64, false, seed);
        same::<f32>(&c, ebn0, (100 * k) as u64, false, seed);
    }
}

#[test]
fn the_bp_kernel_compiles_for_hopper() {
    if !common::have_nvrtc("the_bp_kernel_compiles_for_hopper") {
        return;
    }
    const OPTIN: usize = 227 << 10;
    let cases: Vec<(usize, usize, bool, EarlyStop, LlrType, bool, usize)> = vec![
        (8, 4, false, EarlyStop::GMatrix, LlrType::I8, false, OPTIN),
        (64, 32, true, EarlyStop::Never, LlrType::F32, true, OPTIN),
        (1024, 512, false, EarlyStop::GMatrix, LlrType::I8, true, OPTIN),
        (8192, 4096, false, EarlyStop::GMatrix, LlrType::I8, false, OPTIN),
        (32768, 16384, false, EarlyStop::Never, LlrType::I8, false, OPTIN),
        (4096, 2048, false, EarlyStop::GMatrix, LlrType::F32, false, 48 << 10),
    ];
    let errs: Vec<String> = std::thread::scope(|s| {
        let jobs: Vec<_> = cases
            .iter()
            .map(|&(n, k, systematic, early_stop, llr, soft, optin)| {
                s.spawn(move || {
                    let code = Arc::new(Construction::Ga { design_ebn0_db: 2.0 }.build(n, k).unwrap());
                    let spec = PolarSpec::new(code, systematic, None).unwrap();
                    let cfg = BpConfig { iterations: 20, early_stop, precision: BpPrecision::I8 };
                    compile_polar_kernel(&spec, &cfg, llr, soft, "sm_90", optin).err().map(|e| format!("N={n} {early_stop:?} {llr}: {e:#}"))
                })
            })
            .collect();
        jobs.into_iter().filter_map(|j| j.join().unwrap()).collect()
    });
    assert!(errs.is_empty(), "{}", errs.join("\n"));
    // The CRC stop, on a code with a CRC.
    let code = Arc::new(Construction::Nr.build(1024, 512).unwrap());
    let spec = PolarSpec::new(code, false, Some(InfoCheck::new(&CRC11, 512).unwrap())).unwrap();
    let cfg = BpConfig { iterations: 20, early_stop: EarlyStop::Crc, precision: BpPrecision::I8 };
    compile_polar_kernel(&spec, &cfg, LlrType::I8, false, "sm_90", OPTIN).unwrap();
    // The f32 BP reference is the CPU's.
    let spec = PolarSpec::plain(Arc::new(Construction::Nr.build(64, 32).unwrap()));
    let f32bp = BpConfig { precision: BpPrecision::F32 { alpha: 0.9 }, ..BpConfig::default() };
    let e = compile_polar_kernel(&spec, &f32bp, LlrType::I8, false, "sm_90", OPTIN).unwrap_err().to_string();
    assert!(e.contains("i8 model"), "{e}");
}
