//! Throughput of the CPU reference MAP decoder of the sync family: decoded
//! information bits and frames per second on one core and on all cores,
//! with the arithmetic per symbol it does and the rate it reaches.
//!
//! ```text
//! cargo run --release --example sync_throughput -- [p ...] [--n-list 10,100] [--q-list 4,32] [--seconds 0.5]
//! ```
//! Defaults: Pi = Pd = 1e-3 and 1e-2, Ps = 0; N in {10, 100, 210, 840};
//! q in {4, ..., 256} with n = 2·log2 q; whole received frames (hard bits)
//! from the BSID channel; each figure decodes frames for at least
//! `--seconds` (and at least one frame per thread). One core's speed is
//! given per second of the process's CPU time too: on a machine shared with
//! other work, wall-clock rates fall with the share of the cores it gets,
//! CPU-time rates do not.

use gpufec::codes::channel::Channel;
use gpufec::codes::encode::Encoder;
use gpufec::codes::sync::{Bsid, BsidParams, DecoderConfig, SyncCode, SyncEncoder, SyncMapDecoder};
use gpufec::codes::threads::cores;
use gpufec::codes::{Batch, BatchDecoder, Decoded, UnitSpan};
use std::time::Instant;

fn list(args: &[String], name: &str, default: &[usize]) -> Vec<usize> {
    match args.iter().position(|a| a == name) {
        Some(i) => args[i + 1].split(',').map(|v| v.parse().expect("a number")).collect(),
        None => default.to_vec(),
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let ns = list(&args, "--n-list", &[10, 100, 210, 840]);
    let qs = list(&args, "--q-list", &[4, 8, 16, 32, 64, 128, 256]);
    let seconds: f64 = args.iter().position(|a| a == "--seconds").map_or(0.5, |i| args[i + 1].parse().expect("seconds"));
    let mut ps: Vec<f64> = args.iter().take_while(|a| !a.starts_with("--")).map(|a| a.parse().expect("a probability")).collect();
    if ps.is_empty() {
        ps = vec![1e-3, 1e-2];
    }
    println!("cores: {}", cores());
    println!("| Pi=Pd | N | q | n | M_tau | M_n | storage | gamma KiB/frame | flops/symbol | 1 core frames/CPU-s | 1 core kb/CPU-s | 1 core GFLOP/CPU-s | 1 core frames/s (wall) | all cores frames/s (wall) | all cores kb/s (wall) |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for &p in &ps {
        let params = BsidParams::new(p, p, 0.0)?;
        for &symbols in &ns {
            for &q in &qs {
                let n = 2 * q.trailing_zeros() as usize;
                let code = SyncCode::random(q, n, symbols, 1)?;
                let frames = received_frames(&code, params, 2 * cores().max(2))?;
                let mut row = Vec::new();
                let mut cpu_fps = 0.0;
                let mut describe = None;
                for threads in [1, 0] {
                    let mut dec = SyncMapDecoder::<u8>::new(code.clone(), params, DecoderConfig::default(), threads)?;
                    let (fps, per_cpu) = measure(&mut dec, &frames, seconds, if threads == 1 { 1 } else { cores() })?;
                    if threads == 1 {
                        cpu_fps = per_cpu;
                    }
                    if describe.is_none() {
                        let ops = dec.ops_per_symbol();
                        let l = dec.limits();
                        describe = Some((l.frame.states(), l.codeword.states(), dec.global_storage(), dec.gamma_bytes(), ops.flops()));
                    }
                    row.push(fps);
                }
                let (m, mn, global, bytes, flops) = describe.unwrap_or_default();
                let kbps = |fps: f64| fps * code.info_bits() as f64 / 1e3;
                let gflops = cpu_fps * symbols as f64 * flops / 1e9;
                println!(
                    "| {p:e} | {symbols} | {q} | {n} | {m} | {mn} | {} | {} | {:.3e} | {:.3} | {:.2} | {:.2} | {:.3} | {:.3} | {:.2} |",
                    if global { "global" } else { "local" },
                    bytes / 1024,
                    flops,
                    cpu_fps,
                    kbps(cpu_fps),
                    gflops,
                    row[0],
                    row[1],
                    kbps(row[1])
                );
            }
        }
    }
    Ok(())
}

/// `count` random frames of `code` through the channel, each received block whole.
fn received_frames(code: &SyncCode, params: BsidParams, count: usize) -> Result<Vec<Vec<u8>>, Box<dyn std::error::Error>> {
    let mut enc = SyncEncoder::new(code.clone());
    let mut ch = Bsid::new(params, 7);
    let mut source = gpufec::codes::bits::BitSource::new(3);
    let mut frames = Vec::new();
    for _ in 0..count {
        let mut info = vec![0u8; code.info_bits()];
        source.fill(&mut info);
        let (mut sent, mut rx) = (Vec::new(), Vec::new());
        enc.encode(&info, &mut sent)?;
        ch.transmit(&sent, &mut rx)?;
        frames.push(rx);
    }
    Ok(frames)
}

/// Frames per second of wall-clock time and per second of the process's
/// CPU time, decoding `frames` in batches of `per_batch` for at least `seconds`.
fn measure(dec: &mut SyncMapDecoder<u8>, frames: &[Vec<u8>], seconds: f64, per_batch: usize) -> Result<(f64, f64), Box<dyn std::error::Error>> {
    let batch_frames = &frames[..per_batch.min(frames.len())];
    let items: Vec<u8> = batch_frames.concat();
    let mut spans = Vec::new();
    let mut at = 0;
    for f in batch_frames {
        spans.push(UnitSpan { start: at, len: f.len(), format: 0 });
        at += f.len();
    }
    let batch = Batch::spans(&items, &spans)?;
    let mut out = Decoded::default();
    // One batch untimed: scratch memory is allocated once.
    dec.decode(&batch, &mut out)?;
    let (start, cpu) = (Instant::now(), cpu_seconds());
    let mut done = 0;
    while done == 0 || start.elapsed().as_secs_f64() < seconds {
        out.clear();
        dec.decode(&batch, &mut out)?;
        done += batch.units();
    }
    Ok((done as f64 / start.elapsed().as_secs_f64(), done as f64 / (cpu_seconds() - cpu)))
}

/// CPU time of the whole process so far, all its threads.
fn cpu_seconds() -> f64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `t` is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}
