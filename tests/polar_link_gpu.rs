//! The polar device link simulator (`gpufec ber polar` with the channel on
//! the GPU): counter-based bits, the polar encoder, BPSK over AWGN and the
//! quantizer on the device, then the GPU BP decoder and the error count. It
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
use gpufec::codes::polar::{Algorithm, BpConfig, BpPrecision, Construction, CpuPolar, PolarChain, PolarFrames, PolarLink, PolarSettings, PolarSpec};
use gpufec::codes::settings::Settings;
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

/// The host model: counter bits, the CPU's `i8` BP model.
fn host_model<T: Llr>(spec: &PolarSpec, cfg: BpConfig, counter: bool) -> PolarLink<T> {
    let decoder = CpuPolar::<T>::new(spec.clone(), Algorithm::Bp(cfg), 0).unwrap();
    let link = PolarLink::new(PolarFrames::Codewords(spec.clone()), Box::new(decoder), None).unwrap();
    if counter { link.with_counter_bits() } else { link }
}

fn spec_and_config(chain: &PolarChain) -> (PolarSpec, BpConfig) {
    let Algorithm::Bp(cfg) = chain.algorithm() else { unreachable!() };
    (chain.spec().clone(), cfg)
}

/// Device and host model over `ebn0s`, each under a stop at a bit count
/// inside a codeword and under an error stop.
fn same_counts<T: Llr>(name: &str, spec: &PolarSpec, cfg: BpConfig, ebn0s: &[f64], bits: u64) {
    let mut device = DevicePolarLink::<T>::of_spec(spec.clone(), cfg, 0).unwrap();
    let mut host = host_model::<T>(spec, cfg, true);
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
        let h = point(&mut host_model::<i8>(&spec, cfg, false), ebn0, 5, stop);
        let (pd, ph) = (d.frame_errors as f64 / d.frames as f64, h.frame_errors as f64 / h.frames as f64);
        let pool = (d.frame_errors + h.frame_errors) as f64 / (d.frames + h.frames) as f64;
        let sigma = (pool * (1.0 - pool) * (1.0 / d.frames as f64 + 1.0 / h.frames as f64)).sqrt();
        assert!((pd - ph).abs() < 5.0 * sigma + 1e-12, "Eb/N0 {ebn0}: device FER {pd:.3e} ({} frames), host {ph:.3e} ({} frames)", d.frames, h.frames);
    }
}

#[test]
fn the_polar_device_link_kernels_compile_for_sm_90() {
    if !common::have_nvrtc("the_polar_device_link_kernels_compile_for_sm_90") {
        return;
    }
    compile_polar_link_kernel::<i8>(bare(8, 4, "5g", "g").spec(), "sm_90").unwrap();
    compile_polar_link_kernel::<i8>(bare(1024, 512, "5g", "g").spec(), "sm_90").unwrap();
    compile_polar_link_kernel::<f32>(bare(32768, 20000, "ga:2", "never").spec(), "sm_90").unwrap();
    let systematic = PolarSpec::new(Arc::new(Construction::Ga { design_ebn0_db: 2.0 }.build(2048, 1000).unwrap()), true, None).unwrap();
    compile_polar_link_kernel::<i8>(&systematic, "sm_90").unwrap();
}

#[test]
fn what_the_device_link_does_not_simulate_is_refused_before_any_device() {
    let refused = |c: PolarChain, want: &str| {
        let e = DevicePolarLink::<i8>::new(&c, 0).err().expect("refused").to_string();
        assert!(e.contains(want), "{e}");
    };
    refused(chain(serde_json::json!({ "k": 40, "e": 100 })), "5G messages");
    refused(chain(serde_json::json!({ "n": 256, "algorithm": "sc" })), "SC runs on the host");
    refused(chain(serde_json::json!({ "n": 256, "crc": "crc11", "early_stop": "crc" })), "CRC");
    // A code with a parity-check bit (u_3 from the 5G register), through the spec.
    use gpufec::codes::polar::{BitKind::*, PolarCode};
    let code = PolarCode::new(vec![Frozen, Frozen, Info, Parity, Frozen, Info, Info, Info]).unwrap();
    let cfg = BpConfig { precision: BpPrecision::I8, ..BpConfig::default() };
    let e = DevicePolarLink::<i8>::of_spec(PolarSpec::plain(Arc::new(code)), cfg, 0).err().expect("refused").to_string();
    assert!(e.contains("parity-check bits"), "{e}");
}
