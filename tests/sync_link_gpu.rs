//! The sync device link simulator (`gpufec ber sync` with the channel on the
//! GPU): counter-based bits, the encoder, the BSID channel and the receiver
//! weights on the device, then the GPU MAP decoder and the error count. It
//! counts exactly what its host model counts — the host link of whole
//! frames drawing `BitSource::counter` bits through the CPU decoder —
//! bits, symbols, frames, detected errors and units, and ends where it does
//! under either stop rule; and its curve agrees with the host link of
//! sequential bits within statistical bounds.
//!
//! The GPU tests need a GPU. Without one they say `SKIPPED <name>` and
//! pass, unless `GPUFEC_REQUIRE_GPU=1`. The compile check needs only NVRTC;
//! the refusals and the host model need neither.

use gpufec::codes::decode::{Batch, BatchDecoder, Decoded, UnitSpan};
use gpufec::codes::bits::BitSource;
use gpufec::codes::channel::Channel;
use gpufec::codes::encode::Encoder;
use gpufec::codes::settings::Settings;
use gpufec::codes::sim::{Ended, Link, Point, StopRule, Tally, noise_seed, run_point};
use gpufec::codes::sync::settings::FramingChoice;
use gpufec::codes::CodeError;
use gpufec::codes::sync::{Bsid, BsidParams, MakeDecoder, SyncChain, SyncEncoder, SyncLink, SyncMapDecoder, SyncSettings};
use gpufec::gpu::{DeviceSyncLink, GpuSync, PipelineOptions, compile_sync_link_kernels};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

mod common;

/// Whole frames of hard bits of a code of q symbols in n bits, N a frame, Ps = ps.
fn chain(q: u64, n: u64, symbols: u64, ps: f64) -> SyncChain {
    let s = SyncSettings { q: Some(q), n: Some(n), symbols: Some(symbols), ps: Some(ps), framing: Some(FramingChoice::Frames), ..Default::default() };
    s.resolve().unwrap()
}

fn point(link: &mut dyn Link, p: f64, seed: u64, stop: StopRule) -> Point {
    run_point(link, p, seed, stop, &AtomicBool::new(false), Duration::from_secs(3600), |_| {}).unwrap()
}

fn key(p: &Point) -> [u64; 10] {
    [p.bits, p.bit_errors, p.frames, p.frame_errors, p.partial_bits, p.symbols, p.symbol_errors, p.detected, p.units, p.ended as u64]
}

/// The host model: counter bits, whole frames, the CPU decoder.
fn host_model(c: &SyncChain) -> SyncLink<Bsid> {
    SyncLink::hard(c.code().clone(), c.params(), c.sweep(), c.config(), 0).with_counter_bits()
}

/// The host model with the GPU decoder: the device link's port alone
/// (bits, encoder, channel, weights, count) against the host's.
fn host_channel_gpu_decoder(c: &SyncChain) -> SyncLink<Bsid> {
    let (code, cfg) = (c.code().clone(), c.config());
    let decoders: MakeDecoder<u8> = Box::new(move |p| {
        let d = GpuSync::<u8>::new(code.clone(), p, cfg, 1.0, false, &PipelineOptions::default()).map_err(|e| CodeError::InvalidParameter(format!("{e:#}")))?;
        Ok(Box::new(d) as Box<dyn BatchDecoder<u8>>)
    });
    SyncLink::new(c.code().clone(), c.params(), c.sweep(), cfg.framing, Box::new(|p, seed| Ok(Bsid::new(p, seed))), decoders).with_counter_bits()
}

#[test]
fn the_sync_device_link_counts_what_its_host_model_counts() {
    if !common::have_gpu("the_sync_device_link_counts_what_its_host_model_counts") {
        return;
    }
    // (q, n, N, Ps, Pi = Pd points, bits): the default shape, a small
    // alphabet in long frames, a wide one with substitutions; the CPU
    // decoder of the host model takes seconds at the noisiest points.
    let cases: [(u64, u64, u64, f64, &[f64], u64); 3] =
        [(32, 10, 210, 0.0, &[0.01, 0.03, 0.05], 100_000), (4, 5, 400, 0.0, &[0.01, 0.03], 100_000), (64, 12, 50, 0.01, &[0.02, 0.05], 60_000)];
    for (q, n, symbols, ps, points, bits) in cases {
        let c = chain(q, n, symbols, ps);
        let mut device = DeviceSyncLink::new(&c, 0).unwrap();
        let (mut host, mut port) = (host_model(&c), host_channel_gpu_decoder(&c));
        for &p in points {
            // Counting cut inside a frame, and ended by errors.
            for stop in [StopRule { max_bits: bits + 17, max_errors: u64::MAX }, StopRule { max_bits: 4 * bits, max_errors: 200 }] {
                let d = point(&mut device, p, 3, stop);
                let what = format!("q={q} n={n} N={symbols} Ps={ps}, Pi=Pd={p}, {stop:?}");
                assert_eq!(key(&d), key(&point(&mut port, p, 3, stop)), "{what}: against the host channel and the GPU decoder");
                assert_eq!(key(&d), key(&point(&mut host, p, 3, stop)), "{what}: against the host model (CPU decoder)");
                assert!(d.bit_errors > 0 || p < 0.02, "no error at Pi=Pd={p}: the point shows nothing");
            }
        }
    }
}

#[test]
fn the_sync_device_curve_agrees_with_the_host_curve() {
    if !common::have_gpu("the_sync_device_curve_agrees_with_the_host_curve") {
        return;
    }
    // The host link of sequential bits, its CPU decoder: 2000 frames a point
    // (FER 0.2 to 0.5 at these points).
    let c = chain(32, 10, 210, 0.0);
    let stop = StopRule { max_bits: 2000 * c.code().info_bits() as u64, max_errors: u64::MAX };
    let mut device = DeviceSyncLink::new(&c, 0).unwrap();
    for p in [0.001, 0.002] {
        let d = point(&mut device, p, 5, stop);
        let h = point(&mut SyncLink::hard(c.code().clone(), c.params(), c.sweep(), c.config(), 0), p, 5, stop);
        let (pd, ph) = (d.frame_errors as f64 / d.frames as f64, h.frame_errors as f64 / h.frames as f64);
        let pool = (d.frame_errors + h.frame_errors) as f64 / (d.frames + h.frames) as f64;
        let sigma = (pool * (1.0 - pool) * (1.0 / d.frames as f64 + 1.0 / h.frames as f64)).sqrt();
        assert!((pd - ph).abs() < 5.0 * sigma + 1e-12, "Pi=Pd={p}: device FER {pd:.3e} ({} frames), host {ph:.3e} ({} frames)", d.frames, h.frames);
        assert!(d.frame_errors > 0 && h.frame_errors > 0, "Pi=Pd={p}: no frame error");
    }
}

#[test]
fn the_sync_device_link_kernels_compile_for_sm_90() {
    if !common::have_nvrtc("the_sync_device_link_kernels_compile_for_sm_90") {
        return;
    }
    compile_sync_link_kernels("sm_90").unwrap();
}

/// The host model's frames are the counter bits through the encoder and
/// the channel of the noise seed, each decoded whole: the chain the device
/// link ports, composed here by hand.
#[test]
fn the_host_model_sends_counter_bits_in_whole_frames() {
    let c = chain(16, 8, 40, 0.01);
    let (p, seed, frames) = (0.04, 7, 30);
    let params = BsidParams::new(p, p, 0.01).unwrap();
    let k = c.code().info_bits();
    let mut info = vec![0u8; frames * k];
    BitSource::counter(seed).fill(&mut info);
    let mut channel = Bsid::new(params, noise_seed(seed));
    let mut decoder = SyncMapDecoder::<u8>::new(c.code().clone(), params, c.config(), 1).unwrap();
    let mut tally = Tally::new(p, k).counting_symbols(c.code().symbol_bits());
    for sent in info.chunks(k) {
        let (mut coded, mut received, mut out) = (Vec::new(), Vec::new(), Decoded::default());
        SyncEncoder::new(c.code().clone()).encode(sent, &mut coded).unwrap();
        channel.transmit(&coded, &mut received).unwrap();
        decoder.decode(&Batch::spans(&received, &[UnitSpan { start: 0, len: received.len(), format: 0 }]).unwrap(), &mut out).unwrap();
        tally.add_unit(&out.bits, sent, &out.reports[0]);
    }
    let want = tally.finish(Ended::MaxBits, 0.0);
    let got = point(&mut host_model(&c), p, seed, StopRule { max_bits: (frames * k) as u64, max_errors: u64::MAX });
    assert_eq!(key(&got), key(&want));
    assert!(want.bit_errors > 0, "the point shows no error");
    // Sequential bits are another stream.
    let plain = point(&mut SyncLink::hard(c.code().clone(), c.params(), c.sweep(), c.config(), 0), p, seed, StopRule { max_bits: (frames * k) as u64, max_errors: u64::MAX });
    assert_ne!(key(&plain), key(&want));
}

#[test]
fn what_the_device_link_does_not_simulate_is_refused_in_one_line() {
    let ber = |more: &[&'static str]| [&["ber", "sync", "--p", "0.01", "--channel", "device", "--backend", "gpu"], more].concat();
    common::refused(&common::gpufec(&ber(&[])), &["--channel device", "framing = \"frames\"", "stream"]);
    common::refused(&common::gpufec(&ber(&["--framing", "frames", "--ebn0-db", "6"])), &["--channel device", "ebn0_db", "hard bits"]);
    common::refused(&common::gpufec(&ber(&["--framing", "frames", "--gpu-devices", "0,1"])), &["--channel device", "one GPU"]);
}
