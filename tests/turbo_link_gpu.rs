//! The turbo device link simulator (`gpufec ber turbo` with the channel on
//! the GPU): counter-based bits, the turbo encoder, BPSK over AWGN and the
//! quantizer on the device, then the GPU decoder and the error count. It
//! counts exactly what its host model counts — the host link drawing
//! `BitSource::counter` bits through the CPU decoder in the GPU's sub-block
//! configuration — and agrees with the host link of sequential bits within
//! statistical bounds.
//!
//! These tests need a GPU. Without one they say `SKIPPED <name>` and pass,
//! unless `GPUFEC_REQUIRE_GPU=1`. The compile check needs only NVRTC.

use gpufec::codes::llr::Llr;
use gpufec::codes::settings::Settings;
use gpufec::codes::sim::{Ended, Link, Point, StopRule, run_point};
use gpufec::codes::turbo::{CpuTurbo, MaxStar, Sent, TurboChain, TurboLink, TurboSettings};
use gpufec::gpu::{DeviceTurboLink, compile_turbo_link_kernel};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

mod common;

fn chain(block: u64, algorithm: Option<MaxStar>) -> TurboChain {
    TurboSettings { block: Some(block), algorithm, ..Default::default() }.resolve().unwrap()
}

fn point(link: &mut dyn Link, ebn0: f64, seed: u64, stop: StopRule) -> Point {
    run_point(link, ebn0, seed, stop, &AtomicBool::new(false), Duration::from_secs(3600), |_| {}).unwrap()
}

fn key(p: &Point) -> (u64, u64, u64, u64, u64, u64, u64, Ended) {
    (p.bits, p.bit_errors, p.frames, p.frame_errors, p.partial_bits, p.units, p.iterations, p.ended)
}

/// The host model: counter bits, the CPU decoder in the configuration the GPU takes.
fn host_model<T: Llr>(chain: &TurboChain, counter: bool) -> TurboLink<T> {
    let Sent::Blocks(code) = chain.sent() else { unreachable!() };
    let decoder = CpuTurbo::<T>::new(code.clone(), chain.config_for(code.k(), true), 1.0, 0).unwrap();
    let link = TurboLink::new(chain, Box::new(decoder)).unwrap();
    if counter { link.with_counter_bits() } else { link }
}

fn same_counts<T: Llr>(name: &str, chain: &TurboChain, ebn0s: &[f64], bits: u64) {
    let mut device = DeviceTurboLink::<T>::new(chain, 0).unwrap();
    let mut host = host_model::<T>(chain, true);
    for &ebn0 in ebn0s {
        for stop in [StopRule { max_bits: bits + 17, max_errors: u64::MAX }, StopRule { max_bits: 2 * bits, max_errors: 300 }] {
            let d = point(&mut device, ebn0, 3, stop);
            let h = point(&mut host, ebn0, 3, stop);
            assert_eq!(key(&d), key(&h), "{name}, {} LLRs, Eb/N0 {ebn0}, {stop:?}", T::NAME);
        }
    }
}

#[test]
fn the_turbo_device_link_counts_what_its_host_model_counts() {
    if !common::have_gpu("the_turbo_device_link_counts_what_its_host_model_counts") {
        return;
    }
    same_counts::<f32>("K=6144", &chain(6144, None), &[0.3, 0.6], 600_000);
    same_counts::<i8>("K=6144 max-log", &chain(6144, Some(MaxStar::Max)), &[0.6], 600_000);
    same_counts::<f32>("K=40", &chain(40, None), &[1.0, 2.0], 200_000);
}

#[test]
fn the_turbo_device_curve_agrees_with_the_host_curve() {
    if !common::have_gpu("the_turbo_device_curve_agrees_with_the_host_curve") {
        return;
    }
    let c = chain(6144, None);
    // The host decodes on the CPU: points where 3000 errors come within 2·10^7 bits.
    let stop = StopRule { max_bits: 20_000_000, max_errors: 3_000 };
    for ebn0 in [0.3, 0.5] {
        let d = point(&mut DeviceTurboLink::<f32>::new(&c, 0).unwrap(), ebn0, 5, stop);
        let h = point(&mut host_model::<f32>(&c, false), ebn0, 5, stop);
        let (pd, ph) = (d.frame_errors as f64 / d.frames as f64, h.frame_errors as f64 / h.frames as f64);
        let pool = (d.frame_errors + h.frame_errors) as f64 / (d.frames + h.frames) as f64;
        let sigma = (pool * (1.0 - pool) * (1.0 / d.frames as f64 + 1.0 / h.frames as f64)).sqrt();
        assert!((pd - ph).abs() < 5.0 * sigma + 1e-12, "Eb/N0 {ebn0}: device FER {pd:.3e} ({} frames), host {ph:.3e} ({} frames)", d.frames, h.frames);
    }
}

#[test]
fn the_turbo_device_link_kernel_compiles_for_sm_90() {
    if !common::have_nvrtc("the_turbo_device_link_kernel_compiles_for_sm_90") {
        return;
    }
    compile_turbo_link_kernel::<f32>(&chain(6144, None), "sm_90").unwrap();
    compile_turbo_link_kernel::<i8>(&chain(40, Some(MaxStar::Max)), "sm_90").unwrap();
}
