//! The sync device link simulator (`gpufec ber sync` with the channel on the
//! GPU): counter-based bits, the encoder, the BSID channel and the receiver
//! weights on the device, then the GPU MAP decoder and the error count. It
//! counts exactly what its host model counts — the host link of whole
//! frames drawing `BitSource::counter` bits through the CPU decoder —
//! bits, symbols, frames, detected errors and units, and ends where it does
//! under either stop rule; and its curve agrees with the host link of
//! sequential bits within statistical bounds. The same with LLRs (`ebn0_db`:
//! the received bits as BPSK over AWGN, `i8` quantized or `f32`).
//!
//! The GPU tests need a GPU. Without one they say `SKIPPED <name>` and
//! pass, unless `GPUFEC_REQUIRE_GPU=1`. The compile check needs only NVRTC;
//! the refusals and the host model need neither.

use gpufec::codes::decode::{Batch, BatchDecoder, Decoded, UnitSpan};
use gpufec::codes::bits::BitSource;
use gpufec::codes::channel::{Channel, Quantizer, noise_variance};
use gpufec::codes::llr::{Llr, LlrType};
use gpufec::codes::encode::Encoder;
use gpufec::codes::settings::Settings;
use gpufec::codes::sim::{Ended, Link, Point, StopRule, Tally, noise_seed, run_point};
use gpufec::codes::sync::settings::FramingChoice;
use gpufec::codes::CodeError;
use gpufec::codes::sync::decoder::Received;
use gpufec::codes::sync::{Bsid, BsidAwgn, BsidParams, MakeDecoder, SyncChain, SyncEncoder, SyncLink, SyncMapDecoder, SyncSettings};
use gpufec::gpu::{DeviceSyncLink, GpuSync, PipelineOptions, compile_sync_link_kernels};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

mod common;

/// Whole frames of hard bits of a code of q symbols in n bits, N a frame, Ps = ps.
fn chain(q: u64, n: u64, symbols: u64, ps: f64) -> SyncChain {
    let s = SyncSettings { q: Some(q), n: Some(n), symbols: Some(symbols), ps: Some(ps), framing: Some(FramingChoice::Frames), ..Default::default() };
    s.resolve().unwrap()
}

/// [`chain`] with LLRs after AWGN at `ebn0_db`.
fn soft_chain(q: u64, n: u64, symbols: u64, ps: f64, ebn0_db: f64) -> SyncChain {
    let s = SyncSettings {
        q: Some(q),
        n: Some(n),
        symbols: Some(symbols),
        ps: Some(ps),
        ebn0_db: Some(ebn0_db),
        framing: Some(FramingChoice::Frames),
        ..Default::default()
    };
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

/// The soft host link of `c` (whole frames): its bits counter-based when
/// `counter` (the device link's host model), BPSK over AWGN after the BSID
/// events as `BsidAwgn<T>` sends them (`i8` by the matched quantizer), the
/// CPU decoder, or the GPU decoder when `gpu`, taking LLRs divided by the
/// quantizer's scale: as `gpufec ber sync` builds its host link.
fn soft_host<T: Llr + Received>(c: &SyncChain, counter: bool, gpu: bool) -> SyncLink<BsidAwgn<T>> {
    let (code, cfg, ebn0) = (c.code().clone(), c.config(), c.ebn0_db().unwrap());
    let rate = code.rate().min(1.0);
    let quantizer = Quantizer::matched(noise_variance(ebn0, rate).unwrap()).unwrap();
    let scale = if T::TYPE == LlrType::I8 { quantizer.scale() } else { 1.0 };
    let decoders: MakeDecoder<T> = Box::new(move |p| {
        Ok(match gpu {
            true => Box::new(GpuSync::<T>::new(code.clone(), p, cfg, scale, false, &PipelineOptions::default()).map_err(|e| CodeError::InvalidParameter(format!("{e:#}")))?),
            false => Box::new(SyncMapDecoder::<T>::new(code.clone(), p, cfg, 0)?.with_input_scale(scale)?) as Box<dyn BatchDecoder<T>>,
        })
    });
    let make = Box::new(move |p, seed| BsidAwgn::<T>::with_quantizer(p, ebn0, rate, seed, quantizer));
    let link = SyncLink::new(c.code().clone(), c.params(), c.sweep(), cfg.framing, make, decoders);
    if counter { link.with_counter_bits() } else { link }
}

/// A soft case: q, n, N, Ps, Eb/N0 dB, Pi = Pd points, bits.
type SoftCase = (u64, u64, u64, f64, f64, &'static [f64], u64);

/// The device link of LLRs of `T` against its host model (CPU decoder) and
/// the host model with the GPU decoder, count for count, over code shapes,
/// Eb/N0 values and Pi = Pd points, under both stop rules.
fn soft_counts<T: Llr + Received>(device: impl Fn(&SyncChain) -> Box<dyn Link>) {
    let cases: [SoftCase; 4] = [
        (32, 10, 210, 0.0, 4.0, &[0.005, 0.02], 40_000),
        (32, 10, 210, 0.0, 10.0, &[0.001, 0.003], 40_000),
        (4, 5, 400, 0.0, 5.0, &[0.01], 40_000),
        (64, 12, 50, 0.01, 3.0, &[0.02], 30_000),
    ];
    for (q, n, symbols, ps, ebn0, points, bits) in cases {
        let c = soft_chain(q, n, symbols, ps, ebn0);
        let mut device = device(&c);
        let (mut host, mut port) = (soft_host::<T>(&c, true, false), soft_host::<T>(&c, true, true));
        let mut errors = 0;
        for &p in points {
            for stop in [StopRule { max_bits: bits + 17, max_errors: u64::MAX }, StopRule { max_bits: 4 * bits, max_errors: 100 }] {
                let d = point(device.as_mut(), p, 3, stop);
                let what = format!("{}, q={q} n={n} N={symbols} Ps={ps}, {ebn0} dB, Pi=Pd={p}, {stop:?}", <T as Received>::NAME);
                assert_eq!(key(&d), key(&point(&mut port, p, 3, stop)), "{what}: against the host channel and the GPU decoder");
                assert_eq!(key(&d), key(&point(&mut host, p, 3, stop)), "{what}: against the host model (CPU decoder)");
                errors += d.bit_errors;
            }
        }
        assert!(errors > 0, "q={q} n={n} N={symbols} at {ebn0} dB: no error at any point, the case shows nothing");
    }
}

#[test]
fn the_sync_device_link_of_i8_llrs_counts_what_its_host_model_counts() {
    if !common::have_gpu("the_sync_device_link_of_i8_llrs_counts_what_its_host_model_counts") {
        return;
    }
    soft_counts::<i8>(|c| Box::new(DeviceSyncLink::<i8>::new(c, 0).unwrap()));
}

#[test]
fn the_sync_device_link_of_f32_llrs_counts_what_its_host_model_counts() {
    if !common::have_gpu("the_sync_device_link_of_f32_llrs_counts_what_its_host_model_counts") {
        return;
    }
    soft_counts::<f32>(|c| Box::new(DeviceSyncLink::<f32>::new(c, 0).unwrap()));
}

#[test]
fn the_sync_device_curve_of_i8_llrs_agrees_with_the_host_curve() {
    if !common::have_gpu("the_sync_device_curve_of_i8_llrs_agrees_with_the_host_curve") {
        return;
    }
    // The host link of sequential bits, its CPU decoder: 1000 frames a point
    // (FER about 0.3 and 0.65 at these points).
    let c = soft_chain(32, 10, 210, 0.0, 10.0);
    let stop = StopRule { max_bits: 1000 * c.code().info_bits() as u64, max_errors: u64::MAX };
    let mut device = DeviceSyncLink::<i8>::new(&c, 0).unwrap();
    for p in [0.001, 0.003] {
        let d = point(&mut device, p, 5, stop);
        let h = point(&mut soft_host::<i8>(&c, false, false), p, 5, stop);
        fer_agrees(&d, &h, p);
    }
}

/// A device link receives what its chain sends: LLRs need `ebn0_db`, and
/// hard bits its absence; either mismatch is one line, before any GPU.
#[test]
fn a_device_link_of_the_wrong_items_is_refused() {
    let hard = chain(16, 8, 40, 0.0);
    let e = DeviceSyncLink::<i8>::new(&hard, 0).err().expect("i8 LLRs without ebn0_db").to_string();
    assert!(e.contains("ebn0_db"), "{e}");
    let soft = soft_chain(16, 8, 40, 0.0, 5.0);
    let e = DeviceSyncLink::<u8>::new(&soft, 0).err().expect("hard bits with ebn0_db").to_string();
    assert!(e.contains("LLRs") && e.contains("hard bits"), "{e}");
}

/// The soft host model's frames are the counter bits through the encoder,
/// the BSID events of the noise seed and BPSK over AWGN whose samples run
/// on over the whole received stream, frame after frame: the stream the
/// device link's noise indices follow.
#[test]
fn the_soft_host_model_numbers_its_noise_over_the_whole_received_stream() {
    let c = soft_chain(16, 8, 40, 0.0, 4.0);
    let (p, seed, frames) = (0.04, 7, 20);
    let params = BsidParams::new(p, p, 0.0).unwrap();
    let k = c.code().info_bits();
    let rate = c.code().rate().min(1.0);
    let quantizer = Quantizer::matched(noise_variance(4.0, rate).unwrap()).unwrap();
    let mut info = vec![0u8; frames * k];
    BitSource::counter(seed).fill(&mut info);
    let mut coded = Vec::new();
    SyncEncoder::new(c.code().clone()).encode(&info, &mut coded).unwrap();
    // The whole stream through one channel at once, cut into frames after.
    let mut lens = Vec::new();
    let mut channel = BsidAwgn::<i8>::with_quantizer(params, 4.0, rate, noise_seed(seed), quantizer).unwrap();
    let mut all = Vec::new();
    for frame in coded.chunks(coded.len() / frames) {
        let at = all.len();
        channel.transmit(frame, &mut all).unwrap();
        lens.push(all.len() - at);
    }
    let mut whole = Vec::new();
    BsidAwgn::<i8>::with_quantizer(params, 4.0, rate, noise_seed(seed), quantizer).unwrap().transmit(&coded, &mut whole).unwrap();
    assert_eq!(all, whole);
    let mut decoder = SyncMapDecoder::<i8>::new(c.code().clone(), params, c.config(), 1).unwrap().with_input_scale(quantizer.scale()).unwrap();
    let mut tally = Tally::new(p, k).counting_symbols(c.code().symbol_bits());
    let mut at = 0;
    for (sent, len) in info.chunks(k).zip(lens) {
        let mut out = Decoded::default();
        decoder.decode(&Batch::spans(&whole[at..at + len], &[UnitSpan { start: 0, len, format: 0 }]).unwrap(), &mut out).unwrap();
        tally.add_unit(&out.bits, sent, &out.reports[0]);
        at += len;
    }
    let want = tally.finish(Ended::MaxBits, 0.0);
    let got = point(&mut soft_host::<i8>(&c, true, false), p, seed, StopRule { max_bits: (frames * k) as u64, max_errors: u64::MAX });
    assert_eq!(key(&got), key(&want));
}

/// The device point `d` and the host point `h` at Pi = Pd = `p` agree in
/// FER within 5σ, and both show frame errors.
fn fer_agrees(d: &Point, h: &Point, p: f64) {
    let (pd, ph) = (d.frame_errors as f64 / d.frames as f64, h.frame_errors as f64 / h.frames as f64);
    let pool = (d.frame_errors + h.frame_errors) as f64 / (d.frames + h.frames) as f64;
    let sigma = (pool * (1.0 - pool) * (1.0 / d.frames as f64 + 1.0 / h.frames as f64)).sqrt();
    assert!((pd - ph).abs() < 5.0 * sigma + 1e-12, "Pi=Pd={p}: device FER {pd:.3e} ({} frames), host {ph:.3e} ({} frames)", d.frames, h.frames);
    assert!(d.frame_errors > 0 && h.frame_errors > 0, "Pi=Pd={p}: no frame error");
}

#[test]
fn the_sync_device_link_counts_what_its_host_model_counts() {
    if !common::have_gpu("the_sync_device_link_counts_what_its_host_model_counts") {
        return;
    }
    // (q, n, N, Ps, Pi = Pd points, bits): the default shape, a small
    // alphabet in long frames, a wide one with substitutions; the CPU
    // decoder of the host model takes seconds at the noisiest points.
    type Case<'a> = (u64, u64, u64, f64, &'a [f64], u64);
    let cases: [Case; 3] =
        [(32, 10, 210, 0.0, &[0.01, 0.03, 0.05], 100_000), (4, 5, 400, 0.0, &[0.01, 0.03], 100_000), (64, 12, 50, 0.01, &[0.02, 0.05], 60_000)];
    for (q, n, symbols, ps, points, bits) in cases {
        let c = chain(q, n, symbols, ps);
        let mut device = DeviceSyncLink::<u8>::new(&c, 0).unwrap();
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
    let mut device = DeviceSyncLink::<u8>::new(&c, 0).unwrap();
    for p in [0.001, 0.002] {
        let d = point(&mut device, p, 5, stop);
        let h = point(&mut SyncLink::hard(c.code().clone(), c.params(), c.sweep(), c.config(), 0), p, 5, stop);
        fer_agrees(&d, &h, p);
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
    // LLRs are simulated on the device, but not a stream's windows.
    common::refused(&common::gpufec(&ber(&["--ebn0-db", "6"])), &["--channel device", "framing = \"frames\"", "stream"]);
    common::refused(&common::gpufec(&ber(&["--framing", "frames", "--gpu-devices", "0,1"])), &["--channel device", "one GPU"]);
}
