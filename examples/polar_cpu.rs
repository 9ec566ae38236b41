//! The CPU polar decoders' figures for `docs/studies/polar_cpu.md`: error
//! rates over Eb/N0 and speed per core.
//!
//! ```text
//! cargo run --release --example polar_cpu -- curves N K [max_bits] [max_errors] [sys]
//! cargo run --release --example polar_cpu -- speed N K [seconds]
//! cargo run --release --example polar_cpu -- scales N K [max_bits]
//! ```
//!
//! `curves` runs, at Eb/N0 = 1, 1.5, …, 4 dB on all cores: BP (Imax 40
//! with the G-matrix stop; a fixed 20 iterations), the i8 BP model (Imax
//! 40, G-matrix stop, matched quantizer), SC, and CA-SCL with L = 8 over
//! CRC11 and over CRC24C (the CRC inside the K information bits: a payload
//! of K − 11 or K − 24 bits). Codes of the 5G sequence; Eb/N0 per payload
//! bit. A point stops at `max_bits` payload bits (default 10^7; SC, some
//! forty times faster than the others, at 50 times as many) or at the end
//! of the frame with the `max_errors`-th bit error (default 1000). With
//! `sys` the codes are systematic (as AFF3CT's are by default: the same
//! frame errors, fewer bit errors) and only SC and CA-SCL run, the
//! decoders compared with AFF3CT's.
//! `speed` decodes noisy codewords at 3 dB with one thread for about
//! `seconds` (default 3) per decoder and prints payload Mb/s per second of
//! the thread's CPU time and of wall time. `scales` runs the i8 BP model
//! (Imax 40, G-matrix stop) at 2.5, 3 and 3.5 dB with the quantizer's scale
//! at 2, 4, 8 and 16 σ² (16 σ² is the matched quantizer the links use),
//! `max_bits` payload bits a point (default 10^7).

use gpufec::codes::channel::{BpskAwgn, Channel, Quantizer, noise_variance};
use gpufec::codes::crc::{CRC11, CRC24C, Crc};
use gpufec::codes::polar::{Algorithm, BpConfig, BpPrecision, Construction, CpuPolar, EarlyStop, InfoCheck, PolarFrames, PolarLink, PolarSpec};
use gpufec::codes::sim::{Link, StopRule, run_point};
use gpufec::codes::{Batch, BatchDecoder, Decoded, Llr};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let num = |i: usize, default: f64| args.get(i).map_or(default, |s| s.parse().unwrap_or_else(|_| panic!("'{s}' is not a number")));
    let (n, k) = (num(1, 1024.0) as usize, num(2, 512.0) as usize);
    match args.first().map(String::as_str) {
        Some("curves") => curves(n, k, num(3, 1e7) as u64, num(4, 1000.0) as u64, args.get(5).is_some_and(|a| a == "sys")),
        Some("speed") => speed(n, k, num(3, 3.0)),
        Some("scales") => scales(n, k, num(3, 1e7) as u64),
        _ => eprintln!("usage: polar_cpu curves N K [max_bits] [max_errors] [sys] | speed N K [seconds] | scales N K [max_bits]"),
    }
}

/// The code of the 5G sequence carrying `crc` (or nothing) among its K
/// bits, systematic or not.
fn spec(n: usize, k: usize, crc: Option<&'static Crc>, systematic: bool) -> PolarSpec {
    let code = Arc::new(Construction::Nr.build(n, k).expect("a code of the 5G sequence"));
    PolarSpec::new(code, systematic, crc.map(|c| InfoCheck::new(c, k).expect("room for the CRC"))).expect("a spec")
}

fn bp(iterations: u32, early_stop: EarlyStop, precision: BpPrecision) -> Algorithm {
    Algorithm::Bp(BpConfig { iterations, early_stop, precision })
}

/// A link of `spec` decoded by `algorithm` from `T` LLRs on all cores.
fn link<T: Llr>(spec: &PolarSpec, algorithm: Algorithm) -> PolarLink<T> {
    let dec = CpuPolar::<T>::new(spec.clone(), algorithm, 0).expect("a decoder");
    PolarLink::new(PolarFrames::Codewords(spec.clone()), Box::new(dec), None).expect("a link")
}

fn curves(n: usize, k: usize, max_bits: u64, max_errors: u64, sys: bool) {
    let f32bp = BpPrecision::F32 { alpha: 0.9375 };
    type Make = Box<dyn Fn() -> Box<dyn Link>>;
    let decoders: Vec<(&str, u64, Make)> = vec![
        ("BP Imax 40, G-matrix stop", 1, Box::new(move || Box::new(link::<f32>(&spec(n, k, None, sys), bp(40, EarlyStop::GMatrix, f32bp))))),
        ("BP fixed 20", 1, Box::new(move || Box::new(link::<f32>(&spec(n, k, None, sys), bp(20, EarlyStop::Never, f32bp))))),
        ("BP i8 model, Imax 40, G-matrix stop", 1, Box::new(move || Box::new(link::<i8>(&spec(n, k, None, sys), bp(40, EarlyStop::GMatrix, BpPrecision::I8))))),
        ("SC", 50, Box::new(move || Box::new(link::<f32>(&spec(n, k, None, sys), Algorithm::Sc)))),
        ("CA-SCL L=8, CRC11", 1, Box::new(move || Box::new(link::<f32>(&spec(n, k, Some(&CRC11), sys), Algorithm::Scl { list: 8 })))),
        ("CA-SCL L=8, CRC24C", 1, Box::new(move || Box::new(link::<f32>(&spec(n, k, Some(&CRC24C), sys), Algorithm::Scl { list: 8 })))),
    ];
    println!("({n}, {k}), 5G sequence{}; points stop with the frame of the {max_errors}th bit error or at the payload bits given\n", if sys { ", systematic" } else { "" });
    for (name, factor, make) in decoders.iter().filter(|(name, _, _)| !sys || !name.starts_with("BP")) {
        let stop = StopRule { max_bits: max_bits * factor, max_errors };
        let mut link = make();
        println!("{name} — {}; at most {} payload bits a point\n", link.describe(), stop.max_bits);
        println!("| Eb/N0 (dB) | frames | frame errors | BER | FER | mean iterations | seconds |");
        println!("|---|---|---|---|---|---|---|");
        for tenth in (10..=40).step_by(5) {
            let ebn0 = f64::from(tenth) / 10.0;
            let p = run_point(link.as_mut(), ebn0, 1, stop, &AtomicBool::new(false), Duration::from_secs(3600), |_| {}).expect("a point");
            let it = if p.mean_iterations().is_nan() { "–".to_string() } else { format!("{:.2}", p.mean_iterations()) };
            println!("| {ebn0:.1} | {} | {} | {:.3e} | {:.3e} | {it} | {:.1} |", p.frames, p.frame_errors, p.ber(), p.fer(), p.seconds);
        }
        println!();
    }
}

fn scales(n: usize, k: usize, max_bits: u64) {
    let spec = spec(n, k, None, false);
    let stop = StopRule { max_bits, max_errors: u64::MAX };
    println!("({n}, {k}), 5G sequence, i8 BP model (Imax 40, G-matrix stop), {max_bits} payload bits a point\n");
    println!("| Eb/N0 (dB) | quantizer scale | frames | frame errors | FER | mean iterations |");
    println!("|---|---|---|---|---|---|");
    for ebn0 in [2.5, 3.0, 3.5] {
        let variance = noise_variance(ebn0, spec.rate()).expect("a variance");
        for factor in [2.0, 4.0, 8.0, 16.0] {
            let dec = CpuPolar::<i8>::new(spec.clone(), bp(40, EarlyStop::GMatrix, BpPrecision::I8), 0).expect("a decoder");
            let mut link = PolarLink::new(PolarFrames::Codewords(spec.clone()), Box::new(dec), Some((factor * variance) as f32)).expect("a link");
            let p = run_point(&mut link, ebn0, 1, stop, &AtomicBool::new(false), Duration::from_secs(3600), |_| {}).expect("a point");
            println!("| {ebn0:.1} | {factor} σ² | {} | {} | {:.3e} | {:.2} |", p.frames, p.frame_errors, p.fer(), p.mean_iterations());
        }
    }
}

/// Seconds of CPU time of the calling thread.
fn thread_cpu() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

fn speed(n: usize, k: usize, seconds: f64) {
    let ebn0 = 3.0;
    let cases: Vec<(&str, PolarSpec, Algorithm)> = vec![
        ("SC", spec(n, k, None, false), Algorithm::Sc),
        ("CA-SCL L=8, CRC11", spec(n, k, Some(&CRC11), false), Algorithm::Scl { list: 8 }),
        ("SCL L=8, no CRC", spec(n, k, None, false), Algorithm::Scl { list: 8 }),
        ("BP Imax 40, G-matrix stop", spec(n, k, None, false), bp(40, EarlyStop::GMatrix, BpPrecision::F32 { alpha: 0.9375 })),
        ("BP i8 model, Imax 40, G-matrix stop", spec(n, k, None, false), bp(40, EarlyStop::GMatrix, BpPrecision::I8)),
        ("BP fixed 20", spec(n, k, None, false), bp(20, EarlyStop::Never, BpPrecision::F32 { alpha: 0.9375 })),
    ];
    println!("({n}, {k}), 5G sequence, Eb/N0 {ebn0} dB, one decoder thread\n");
    println!("| decoder | codewords | payload Mb/s per CPU-second | payload Mb/s wall |");
    println!("|---|---|---|---|");
    for (name, spec, alg) in cases {
        let frames = 4096;
        let p = spec.payload_len();
        let mut x = vec![0u8; frames * n];
        let payload = vec![1u8; frames * p];
        for (pl, c) in payload.chunks(p).zip(x.chunks_mut(n)) {
            spec.encode(pl, c).expect("a codeword");
        }
        let mut llrs = Vec::new();
        BpskAwgn::new(ebn0, spec.rate(), 5).expect("a channel").transmit(&x, &mut llrs).expect("LLRs");
        let q = Quantizer::matched(noise_variance(ebn0, spec.rate()).expect("a variance")).expect("a quantizer");
        let mut l8 = Vec::new();
        q.quantize(&llrs, &mut l8).expect("i8 LLRs");
        let (mut done, mut cpu, started) = (0usize, 0.0, Instant::now());
        while started.elapsed().as_secs_f64() < seconds {
            let mut out = Decoded::default();
            let c0 = thread_cpu();
            if matches!(alg, Algorithm::Bp(BpConfig { precision: BpPrecision::I8, .. })) {
                let mut dec = CpuPolar::<i8>::new(spec.clone(), alg, 1).expect("a decoder");
                dec.decode(&Batch::uniform(&l8, n).expect("units"), &mut out).expect("decoded");
            } else {
                let mut dec = CpuPolar::<f32>::new(spec.clone(), alg, 1).expect("a decoder");
                dec.decode(&Batch::uniform(&llrs, n).expect("units"), &mut out).expect("decoded");
            }
            cpu += thread_cpu() - c0;
            done += frames;
        }
        let wall = started.elapsed().as_secs_f64();
        let bits = (done * p) as f64;
        println!("| {name} | {done} | {:.2} | {:.2} |", bits / cpu / 1e6, bits / wall / 1e6);
    }
}
