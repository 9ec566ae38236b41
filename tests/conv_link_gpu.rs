//! The device link simulator (`gpufec ber conv` with the channel on the GPU):
//! its noise is the host's `GaussianNoise` bit for bit, and its whole chain
//! (counter-based bits, encoder, puncturer, BPSK over AWGN, quantizer, Viterbi
//! tiles, error count) counts exactly what its host model counts — the host
//! link drawing `BitSource::counter` bits through the CPU tiled model — under
//! every stop rule, for punctured and unpunctured codes, i8 and f32 LLRs,
//! frames that are no multiple of the tile.
//!
//! These tests need a GPU. Without one they say `SKIPPED <name>` and pass,
//! unless `GPUFEC_REQUIRE_GPU=1`. The compile check needs only NVRTC.

use gpufec::codes::channel::GaussianNoise;
use gpufec::codes::conv::{ConvChain, ConvLink, ConvSettings, ViterbiLlr};
use gpufec::codes::settings::Settings;
use gpufec::codes::sim::{Ended, Link, Point, StopRule, run_point};
use gpufec::gpu::{Backend, BackendOptions, DeviceConvLink, ViterbiTuning, compile_conv_link_kernels, device_normals, viterbi_decoder};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

mod common;

fn chain(s: ConvSettings) -> ConvChain {
    s.resolve().unwrap()
}

/// The chains compared: rate 1/2 with the default tiles, 3/4 punctured
/// (f = 255, the kernel depunctures on load), parallel traceback, a K = 5
/// code with counted frames of 1000 bits (no multiple of f).
fn chains() -> Vec<(&'static str, ConvChain)> {
    vec![
        ("1/2 default", chain(ConvSettings::default())),
        ("3/4 punctured", chain(ConvSettings { rate: Some("3/4".into()), ..Default::default() })),
        ("1/2 parallel traceback", chain(ConvSettings { tile: Some("256,20,45".into()), traceback: Some("parallel:32".into()), ..Default::default() })),
        ("K=5 frames of 1000", chain(ConvSettings { k: Some(5), polys: Some("23,35".into()), frame: Some(1000), tile: Some("128,16,16".into()), ..Default::default() })),
    ]
}

fn point(link: &mut dyn Link, ebn0: f64, seed: u64, stop: StopRule) -> Point {
    run_point(link, ebn0, seed, stop, &AtomicBool::new(false), Duration::from_secs(3600), |_| {}).unwrap()
}

fn key(p: &Point) -> (u64, u64, u64, u64, u64, Ended) {
    (p.bits, p.bit_errors, p.frames, p.frame_errors, p.partial_bits, p.ended)
}

fn host_model<T: ViterbiLlr>(chain: &ConvChain) -> ConvLink<T> {
    let options = BackendOptions { backend: Backend::Cpu, ..Default::default() };
    let (decoder, _) = viterbi_decoder::<T>(chain.trellis().clone(), chain.mode(), chain.decoder_pattern(), &options, ViterbiTuning::default()).unwrap();
    ConvLink::of(chain, decoder).unwrap().with_counter_bits()
}

fn same_counts<T: ViterbiLlr>(name: &str, chain: &ConvChain) {
    let stops = [
        (3.0, StopRule { max_bits: 3_000_017, max_errors: u64::MAX }),
        (2.5, StopRule { max_bits: 1 << 40, max_errors: 1_500 }),
        (4.0, StopRule { max_bits: 6_000_000, max_errors: 40 }),
    ];
    let mut device = DeviceConvLink::<T>::new(chain, 0).unwrap();
    let mut host = host_model::<T>(chain);
    for (ebn0, stop) in stops {
        for seed in [1u64, 0xdead_beef_0000_0001] {
            let d = point(&mut device, ebn0, seed, stop);
            let h = point(&mut host, ebn0, seed, stop);
            assert_eq!(key(&d), key(&h), "{name}, {} LLRs, Eb/N0 {ebn0}, seed {seed}, {stop:?}", T::NAME);
            assert!(d.bit_errors > 0 || ebn0 >= 4.0, "{name}: errors at {ebn0} dB");
        }
    }
}

#[test]
fn the_device_link_counts_what_its_host_model_counts() {
    if !common::have_gpu("the_device_link_counts_what_its_host_model_counts") {
        return;
    }
    for (name, chain) in chains() {
        same_counts::<i8>(name, &chain);
    }
    same_counts::<f32>("1/2 default", &chain(ConvSettings::default()));
}

#[test]
fn the_device_noise_is_the_host_noise_bit_for_bit() {
    if !common::have_gpu("the_device_noise_is_the_host_noise_bit_for_bit") {
        return;
    }
    for (seed, first, n) in [(0u64, 0u64, 100_000usize), (42, 13, 4_099), (u64::MAX, (1 << 38) - 37, 70_000), (7, u64::MAX - 200, 100)] {
        let dev = device_normals(0, seed, first, n).unwrap();
        let mut host = vec![0f32; n];
        GaussianNoise::new(seed).fill(first, &mut host);
        let bad = dev.iter().zip(&host).position(|(d, h)| d.to_bits() != h.to_bits());
        assert_eq!(bad, None, "seed {seed}, sample {} differs: device {:?}, host {:?}", first.wrapping_add(bad.unwrap_or(0) as u64), bad.map(|i| dev[i]), bad.map(|i| host[i]));
    }
}

/// The device link against the host link of today's sequential bits: not
/// the same bits, so the same error rate only within statistical bounds.
/// Bit errors come in bursts (one error event, many bits), so the test
/// holds frame errors, nearly one per event, to a binomial bound.
#[test]
fn the_device_curve_agrees_with_the_host_curve() {
    if !common::have_gpu("the_device_curve_agrees_with_the_host_curve") {
        return;
    }
    let chain = chain(ConvSettings::default());
    let stop = StopRule { max_bits: 1 << 40, max_errors: 20_000 };
    for ebn0 in [2.0, 3.0, 4.0] {
        let d = point(&mut DeviceConvLink::<i8>::new(&chain, 0).unwrap(), ebn0, 5, stop);
        let options = BackendOptions { backend: Backend::Cpu, ..Default::default() };
        let (decoder, _) = viterbi_decoder::<i8>(chain.trellis().clone(), chain.mode(), chain.decoder_pattern(), &options, ViterbiTuning::default()).unwrap();
        let h = point(&mut ConvLink::of(&chain, decoder).unwrap(), ebn0, 5, stop);
        let (pd, ph) = (d.frame_errors as f64 / d.frames as f64, h.frame_errors as f64 / h.frames as f64);
        let pool = (d.frame_errors + h.frame_errors) as f64 / (d.frames + h.frames) as f64;
        let sigma = (pool * (1.0 - pool) * (1.0 / d.frames as f64 + 1.0 / h.frames as f64)).sqrt();
        assert!((pd - ph).abs() < 5.0 * sigma, "Eb/N0 {ebn0}: device FER {pd:.3e} ({} frames), host {ph:.3e} ({} frames)", d.frames, h.frames);
    }
}

#[test]
fn the_device_link_kernels_compile_for_sm_90() {
    if !common::have_nvrtc("the_device_link_kernels_compile_for_sm_90") {
        return;
    }
    for (name, chain) in chains() {
        compile_conv_link_kernels::<i8>(&chain, "sm_90").unwrap_or_else(|e| panic!("{name}: {e:#}"));
    }
    compile_conv_link_kernels::<f32>(&chain(ConvSettings::default()), "sm_90").unwrap();
}
