//! The polar device link simulator (`gpufec ber polar` with the channel on
//! the GPU): counter-based bits, the polar encoder (CRC, parity-check bits,
//! the 5G chain's interleavers and rate matching), BPSK over AWGN, the
//! quantizer and the rate recovery on the device, then the GPU BP decoder,
//! the messages read back and the error count. It
//! counts exactly what its host model counts — the host link drawing
//! `BitSource::counter` bits through the CPU's `i8` BP model — bits, frames,
//! units, iterations and detected errors, and ends where the host ends under
//! both stop rules; and it agrees with the host link of sequential bits
//! within statistical bounds.
//!
//! The GPU tests need a GPU. Without one they say `SKIPPED <name>` and pass,
//! unless `GPUFEC_REQUIRE_GPU=1`. The compile check needs only NVRTC; the
//! refusals need nothing.

use gpufec::codes::llr::Llr;
use gpufec::codes::crc::CRC11;
use gpufec::codes::decode::BatchDecoder;
use gpufec::codes::polar::nr::NrDecoder;
use gpufec::codes::polar::{Algorithm, BpConfig, BpPrecision, Construction, CpuPolar, InfoCheck, PolarChain, PolarFrames, PolarLink, PolarSettings, PolarSpec};
use gpufec::codes::settings::{Chain, Settings};
use gpufec::codes::sim::{Ended, Link, Point, StopRule, run_point};
use gpufec::gpu::{DevicePolarLink, compile_polar_link_kernel};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

mod common;

fn chain(settings: serde_json::Value) -> PolarChain {
    serde_json::from_value::<PolarSettings>(settings).unwrap().resolve().unwrap_or_else(|e| panic!("{e}"))
}

/// Bare (N, K) codewords of `construction`, BP stopping as `stop` says.
fn bare(n: u64, k: u64, construction: &str, stop: &str) -> PolarChain {
    chain(serde_json::json!({ "n": n, "k": k, "construction": construction, "early_stop": stop }))
}

fn point(link: &mut dyn Link, ebn0: f64, seed: u64, stop: StopRule) -> Point {
    run_point(link, ebn0, seed, stop, &AtomicBool::new(false), Duration::from_secs(3600), |_| {}).unwrap()
}

type Key = (u64, u64, u64, u64, u64, u64, u64, u64, Ended);

fn key(p: &Point) -> Key {
    (p.bits, p.bit_errors, p.frames, p.frame_errors, p.partial_bits, p.units, p.iterations, p.detected, p.ended)
}

/// The host model: counter bits, the CPU's `i8` BP model (of every block,
/// through `NrDecoder`, for 5G messages).
fn host_model<T: Llr>(frames: &PolarFrames, cfg: BpConfig, counter: bool) -> PolarLink<T> {
    let inner = |spec: &PolarSpec| CpuPolar::<T>::new(spec.clone(), Algorithm::Bp(cfg), 0).unwrap();
    let decoder: Box<dyn BatchDecoder<T>> = match frames {
        PolarFrames::Codewords(spec) => Box::new(inner(spec)),
        PolarFrames::Nr(nr) => Box::new(NrDecoder::new(nr.clone(), |spec| Ok(Box::new(inner(spec)))).unwrap()),
    };
    let link = PolarLink::new(frames.clone(), decoder, None).unwrap();
    if counter { link.with_counter_bits() } else { link }
}

fn spec_and_config(chain: &PolarChain) -> (PolarSpec, BpConfig) {
    let Algorithm::Bp(cfg) = chain.algorithm() else { unreachable!() };
    (chain.spec().clone(), cfg)
}

/// Device and host model over `ebn0s`, each under a stop at a bit count
/// inside a frame and under an error stop.
fn same_counts<T: Llr>(name: &str, spec: &PolarSpec, cfg: BpConfig, ebn0s: &[f64], bits: u64) {
    same_frame_counts::<T>(name, &PolarFrames::Codewords(spec.clone()), cfg, ebn0s, bits);
}

fn same_frame_counts<T: Llr>(name: &str, frames: &PolarFrames, cfg: BpConfig, ebn0s: &[f64], bits: u64) {
    let mut device = DevicePolarLink::<T>::of_frames(frames, cfg, 0).unwrap();
    let mut host = host_model::<T>(frames, cfg, true);
    for &ebn0 in ebn0s {
        for stop in [StopRule { max_bits: bits + 17, max_errors: u64::MAX }, StopRule { max_bits: 2 * bits, max_errors: 200 }] {
            let d = point(&mut device, ebn0, 3, stop);
            let h = point(&mut host, ebn0, 3, stop);
            assert_eq!(key(&d), key(&h), "{name}, {} LLRs, Eb/N0 {ebn0}, {stop:?}", T::NAME);
            common::say(&format!("{name} {} Eb/N0 {ebn0}: {} bits, {} errors, {} frame errors ({} detected), {} iterations", T::NAME, d.bits, d.bit_errors, d.frame_errors, d.detected, d.iterations));
        }
    }
}

#[test]
fn the_polar_device_link_counts_what_its_host_model_counts() {
    if !common::have_gpu("the_polar_device_link_counts_what_its_host_model_counts") {
        return;
    }
    for (n, k, construction, stop, ebn0s, bits) in [
        (64, 32, "5g", "g", &[2.0, 4.0][..], 400_000),
        (64, 40, "5g", "never", &[3.0][..], 200_000),
        (1024, 512, "5g", "g", &[2.0, 3.0][..], 1_000_000),
        (1024, 700, "ga:2", "never", &[3.0][..], 500_000),
        (4096, 2048, "ga:2", "g", &[2.0][..], 1_000_000),
        (16384, 8192, "ga:2", "g", &[1.75][..], 400_000),
    ] {
        let (spec, cfg) = spec_and_config(&bare(n, k, construction, stop));
        same_counts::<i8>(&format!("({n}, {k}) {construction} stop {stop}"), &spec, cfg, ebn0s, bits);
    }
    let (spec, cfg) = spec_and_config(&bare(1024, 512, "5g", "g"));
    same_counts::<f32>("(1024, 512) 5g", &spec, cfg, &[2.5], 500_000);
    // Short codes (several codewords in a 64-sample group of the noise) and N of one word.
    let (spec, cfg) = spec_and_config(&bare(8, 4, "5g", "g"));
    same_counts::<i8>("(8, 4)", &spec, cfg, &[3.0], 40_000);
}

#[test]
fn the_polar_device_link_encodes_systematic_codes() {
    if !common::have_gpu("the_polar_device_link_encodes_systematic_codes") {
        return;
    }
    for (n, k) in [(256, 128), (2048, 1000)] {
        let code = Arc::new(Construction::Ga { design_ebn0_db: 2.0 }.build(n, k).unwrap());
        let spec = PolarSpec::new(code, true, None).unwrap();
        let cfg = BpConfig { precision: BpPrecision::I8, ..BpConfig::default() };
        same_counts::<i8>(&format!("({n}, {k}) systematic"), &spec, cfg, &[2.5], 300_000);
    }
}

#[test]
fn the_polar_device_curve_agrees_with_the_host_curve() {
    if !common::have_gpu("the_polar_device_curve_agrees_with_the_host_curve") {
        return;
    }
    let (spec, cfg) = spec_and_config(&bare(1024, 512, "5g", "g"));
    let stop = StopRule { max_bits: 4_000_000, max_errors: 20_000 };
    for ebn0 in [2.0, 2.5] {
        let d = point(&mut DevicePolarLink::<i8>::of_spec(spec.clone(), cfg, 0).unwrap(), ebn0, 5, stop);
        let h = point(&mut host_model::<i8>(&PolarFrames::Codewords(spec.clone()), cfg, false), ebn0, 5, stop);
        let (pd, ph) = (d.frame_errors as f64 / d.frames as f64, h.frame_errors as f64 / h.frames as f64);
        let pool = (d.frame_errors + h.frame_errors) as f64 / (d.frames + h.frames) as f64;
        let sigma = (pool * (1.0 - pool) * (1.0 / d.frames as f64 + 1.0 / h.frames as f64)).sqrt();
        assert!((pd - ph).abs() < 5.0 * sigma + 1e-12, "Eb/N0 {ebn0}: device FER {pd:.3e} ({} frames), host {ph:.3e} ({} frames)", d.frames, h.frames);
    }
}

/// Bare codewords with a CRC, BP stopping as `stop` says.
fn with_crc(n: u64, k: u64, crc: &str, stop: &str) -> PolarChain {
    chain(serde_json::json!({ "n": n, "k": k, "crc": crc, "early_stop": stop }))
}

/// A 5G message of `a` bits in `e`: `uci`, or `dci` with an RNTI.
fn nr(message: &str, a: u64, e: u64, stop: &str) -> PolarChain {
    let mut s = serde_json::json!({ "k": a, "e": e, "message": message, "early_stop": stop });
    if message == "dci" {
        s["rnti"] = serde_json::json!(0x4601);
    }
    chain(s)
}

fn frames_and_config(chain: &PolarChain) -> (PolarFrames, BpConfig) {
    let Algorithm::Bp(cfg) = chain.algorithm() else { unreachable!() };
    (chain.frames().clone(), cfg)
}

#[test]
fn the_polar_device_link_attaches_crcs() {
    if !common::have_gpu("the_polar_device_link_attaches_crcs") {
        return;
    }
    for (c, ebn0s, bits) in [
        (with_crc(256, 128, "crc11", "crc"), &[2.0, 3.0][..], 300_000),
        (with_crc(512, 200, "crc24c", "g"), &[2.5][..], 300_000),
        (with_crc(128, 40, "crc6", "never"), &[3.0][..], 100_000),
        (with_crc(4096, 2048, "crc16", "crc"), &[2.0][..], 600_000),
    ] {
        let (frames, cfg) = frames_and_config(&c);
        same_frame_counts::<i8>(&c.describe(), &frames, cfg, ebn0s, bits);
    }
    let (frames, cfg) = frames_and_config(&with_crc(1024, 512, "crc24c", "crc"));
    same_frame_counts::<f32>("(1024, 512) + CRC24C", &frames, cfg, &[2.5], 300_000);
    // Systematic, the CRC among x's information bits (the G-matrix stop: the CRC stop of a systematic code is the CPU's).
    let code = Arc::new(Construction::Ga { design_ebn0_db: 2.0 }.build(256, 128).unwrap());
    let spec = PolarSpec::new(code, true, Some(InfoCheck::new(&CRC11, 128).unwrap())).unwrap();
    let cfg = BpConfig { precision: BpPrecision::I8, ..BpConfig::default() };
    same_counts::<i8>("(256, 128) systematic + CRC11", &spec, cfg, &[2.5], 200_000);
}

#[test]
fn the_polar_device_link_sends_5g_messages() {
    if !common::have_gpu("the_polar_device_link_sends_5g_messages") {
        return;
    }
    for (c, ebn0s, bits) in [
        // DCI: CRC24C over the ones and the RNTI, the input interleaver; shortening, puncturing, repetition.
        (nr("dci", 39, 432, "crc"), &[1.0, 2.0][..], 200_000),
        (nr("dci", 39, 100, "g"), &[3.0][..], 100_000),
        (nr("dci", 64, 160, "crc"), &[3.0][..], 150_000),
        (nr("dci", 8, 1728, "crc"), &[-2.0][..], 50_000),
        // UCI: CRC11, the channel interleaver; parity-check bits (A ≤ 19, CRC6), one at the minimum row weight.
        (nr("uci", 200, 300, "crc"), &[2.5][..], 300_000),
        (nr("uci", 60, 100, "g"), &[3.0][..], 150_000),
        (nr("uci", 16, 60, "crc"), &[3.0][..], 50_000),
        (nr("uci", 16, 300, "never"), &[0.0][..], 50_000),
        (nr("uci", 30, 1000, "crc"), &[-1.0][..], 60_000),
        // Two code blocks, a filler bit in front of the first, an odd E_UCI.
        (nr("uci", 401, 1201, "crc"), &[2.0][..], 400_000),
    ] {
        let (frames, cfg) = frames_and_config(&c);
        same_frame_counts::<i8>(&c.describe(), &frames, cfg, ebn0s, bits);
    }
    for c in [nr("dci", 39, 100, "crc"), nr("uci", 16, 300, "crc"), nr("uci", 401, 1201, "g")] {
        let (frames, cfg) = frames_and_config(&c);
        same_frame_counts::<f32>(&c.describe(), &frames, cfg, &[1.5], 100_000);
    }
}

#[test]
fn the_polar_device_5g_curve_agrees_with_the_host_curve() {
    if !common::have_gpu("the_polar_device_5g_curve_agrees_with_the_host_curve") {
        return;
    }
    let (frames, cfg) = frames_and_config(&nr("dci", 39, 216, "crc"));
    let stop = StopRule { max_bits: 3_000_000, max_errors: 20_000 };
    for ebn0 in [2.0, 3.0] {
        let d = point(&mut DevicePolarLink::<i8>::of_frames(&frames, cfg, 0).unwrap(), ebn0, 5, stop);
        let h = point(&mut host_model::<i8>(&frames, cfg, false), ebn0, 5, stop);
        let (pd, ph) = (d.frame_errors as f64 / d.frames as f64, h.frame_errors as f64 / h.frames as f64);
        let pool = (d.frame_errors + h.frame_errors) as f64 / (d.frames + h.frames) as f64;
        let sigma = (pool * (1.0 - pool) * (1.0 / d.frames as f64 + 1.0 / h.frames as f64)).sqrt();
        common::say(&format!("DCI 39/216 Eb/N0 {ebn0}: device BLER {pd:.3e} ({} frames), host {ph:.3e} ({} frames)", d.frames, h.frames));
        assert!(d.frame_errors > 20, "Eb/N0 {ebn0}: too few errors to compare");
        assert!((pd - ph).abs() < 5.0 * sigma + 1e-12, "Eb/N0 {ebn0}: device BLER {pd:.3e} ({} frames), host {ph:.3e} ({} frames)", d.frames, h.frames);
    }
}

/// Every kind of frame the device link sends, as the compile check and the refusals see them.
fn every_shape() -> Vec<PolarChain> {
    vec![
        bare(8, 4, "5g", "g"),
        bare(1024, 512, "5g", "g"),
        bare(32768, 20000, "ga:2", "never"),
        with_crc(256, 128, "crc11", "crc"),
        with_crc(512, 200, "crc24c", "g"),
        with_crc(128, 40, "crc6", "never"),
        nr("dci", 39, 432, "crc"),
        nr("dci", 39, 100, "g"),
        nr("dci", 8, 1728, "crc"),
        nr("uci", 200, 300, "crc"),
        nr("uci", 16, 60, "crc"),
        nr("uci", 16, 300, "never"),
        nr("uci", 401, 1201, "crc"),
        nr("uci", 1706, 8000, "crc"),
    ]
}

#[test]
fn the_polar_device_link_kernels_compile_for_sm_90() {
    if !common::have_nvrtc("the_polar_device_link_kernels_compile_for_sm_90") {
        return;
    }
    for c in every_shape() {
        compile_polar_link_kernel::<i8>(c.frames(), "sm_90").unwrap_or_else(|e| panic!("{}: {e:#}", c.describe()));
        compile_polar_link_kernel::<f32>(c.frames(), "sm_90").unwrap_or_else(|e| panic!("{}: {e:#}", c.describe()));
    }
    let systematic = PolarSpec::new(Arc::new(Construction::Ga { design_ebn0_db: 2.0 }.build(2048, 1000).unwrap()), true, None).unwrap();
    compile_polar_link_kernel::<i8>(&PolarFrames::Codewords(systematic), "sm_90").unwrap();
    let code = Arc::new(Construction::Ga { design_ebn0_db: 2.0 }.build(256, 128).unwrap());
    let spec = PolarSpec::new(code, true, Some(InfoCheck::new(&CRC11, 128).unwrap())).unwrap();
    compile_polar_link_kernel::<i8>(&PolarFrames::Codewords(spec), "sm_90").unwrap();
    compile_polar_link_kernel::<i8>(&PolarFrames::Codewords(parity_code()), "sm_90").unwrap();
}

/// A code with a parity-check bit (u_3 from the 5G register) and no CRC.
fn parity_code() -> PolarSpec {
    use gpufec::codes::polar::{BitKind::*, PolarCode};
    let code = PolarCode::new(vec![Frozen, Frozen, Info, Parity, Frozen, Info, Info, Info, Frozen, Frozen, Info, Parity, Frozen, Info, Info, Info]).unwrap();
    PolarSpec::plain(Arc::new(code))
}

#[test]
fn the_polar_device_link_makes_parity_check_bits_of_bare_codes() {
    if !common::have_gpu("the_polar_device_link_makes_parity_check_bits_of_bare_codes") {
        return;
    }
    let cfg = BpConfig { precision: BpPrecision::I8, ..BpConfig::default() };
    same_counts::<i8>("(16, 9) with 2 parity-check bits", &parity_code(), cfg, &[3.0], 40_000);
}

#[test]
fn what_the_device_link_does_not_simulate_is_refused_before_any_device() {
    let refused = |c: PolarChain, want: &str| {
        let e = DevicePolarLink::<i8>::new(&c, 0).err().expect("refused").to_string();
        assert!(e.contains(want), "{e}");
    };
    refused(chain(serde_json::json!({ "n": 256, "algorithm": "sc" })), "SC runs on the host");
    refused(chain(serde_json::json!({ "k": 40, "e": 100, "algorithm": "scl:8" })), "SCL L=8 runs on the host");
    refused(chain(serde_json::json!({ "n": 256, "precision": "f32" })), "i8 model");
    refused(chain(serde_json::json!({ "k": 40, "e": 100, "precision": "f32" })), "i8 model");
    let code = Arc::new(Construction::Ga { design_ebn0_db: 2.0 }.build(256, 128).unwrap());
    let spec = PolarSpec::new(code, true, Some(InfoCheck::new(&CRC11, 128).unwrap())).unwrap();
    let cfg = BpConfig { precision: BpPrecision::I8, early_stop: gpufec::codes::polar::EarlyStop::Crc, ..BpConfig::default() };
    let e = DevicePolarLink::<i8>::of_spec(spec, cfg, 0).err().expect("refused").to_string();
    assert!(e.contains("systematic"), "{e}");
}
