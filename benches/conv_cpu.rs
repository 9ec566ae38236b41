//! CPU Viterbi throughput, in information bits per second, for K=7 (171,133)
//! r=1/2 soft decoding: tiled (serial and parallel traceback) and terminated
//! frames, f32 and i8 LLRs, every SIMD level this CPU runs, one thread and all.
//!
//! `cargo bench --bench viterbi_cpu [-- SECONDS_PER_POINT] [FILTER...]`
//!
//! A FILTER keeps the rows whose label (configuration, LLR, level) contains it.
//!
//! Each point decodes the same 2^20 noisy bits (Eb/N0 3 dB) repeatedly for
//! about the given time (default 1 s) and reports the best repetition, which
//! is the least disturbed by other work on the machine. Every level's bits are
//! checked against the scalar reference's.

use gpufec::codes::{Batch, BatchDecoder};
use gpufec::codes::channel::{BpskAwgn, Channel, Quantizer, noise_variance};
use gpufec::codes::simd::SimdLevel;
use gpufec::codes::conv::*;
use rand::{Rng, SeedableRng, rngs::SmallRng};
use std::sync::Arc;
use std::time::{Duration, Instant};

const INFO_BITS: usize = 1 << 20;
const FRAME_BITS: usize = 2048;
const EBN0_DB: f64 = 3.0;

/// Noisy LLRs of `coded` bits sent at rate 1/2, as f32 and quantized to i8.
fn channel(coded: &[u8], seed: u64) -> anyhow::Result<(Vec<f32>, Vec<i8>)> {
    let mut f = Vec::new();
    BpskAwgn::new(EBN0_DB, 0.5, seed)?.transmit(coded, &mut f)?;
    let mut q = Vec::new();
    Quantizer::matched(noise_variance(EBN0_DB, 0.5)?)?.quantize(&f, &mut q)?;
    Ok((f, q))
}

/// Work units of one decoder mode, in both LLR types.
struct Workload {
    name: String,
    mode: ViterbiMode,
    f32: Vec<f32>,
    i8: Vec<i8>,
}

fn workloads(trellis: &Arc<Trellis>) -> anyhow::Result<Vec<Workload>> {
    let mut r = SmallRng::seed_from_u64(2026);
    let info: Vec<u8> = (0..INFO_BITS).map(|_| r.random_range(0..2u8)).collect();
    let mut stream = Vec::new();
    ConvEncoder::new(trellis.clone(), EncoderMode::Streaming)?.encode(&info, &mut stream)?;
    let (sf, sq) = channel(&stream, 1)?;
    let mut out = Vec::new();
    for (name, tile) in [
        ("tiled f=256 v1=20 v2=20 serial", TileConfig::new(256, 20, 20, Traceback::Serial)?),
        ("tiled f=256 v1=20 v2=35 parallel f0=32", TileConfig::new(256, 20, 35, Traceback::Parallel { f0: 32 })?),
    ] {
        let (mut f, mut q) = (Vec::new(), Vec::new());
        let mut tf = Tiler::new(tile, 2);
        tf.push(&sf, &mut f);
        tf.finish(&mut f)?;
        let mut tq = Tiler::new(tile, 2);
        tq.push(&sq, &mut q);
        tq.finish(&mut q)?;
        out.push(Workload { name: name.into(), mode: ViterbiMode::Tiled(tile), f32: f, i8: q });
    }
    let mut frames = Vec::new();
    for chunk in info.chunks(FRAME_BITS) {
        ConvEncoder::new(trellis.clone(), EncoderMode::Terminated { frame: FRAME_BITS })?.encode(chunk, &mut frames)?;
    }
    let (f, q) = channel(&frames, 2)?;
    let mode = ViterbiMode::Frame(FrameConfig::new(FRAME_BITS, true)?);
    out.push(Workload { name: format!("frames of {FRAME_BITS}, terminated"), mode, f32: f, i8: q });
    Ok(out)
}

/// Best rate (Mb/s) over repetitions filling about `budget`, and the bits.
fn measure<T: ViterbiLlr>(dec: &mut CpuViterbi<T>, llrs: &[T], bits: usize, budget: Duration) -> anyhow::Result<(f64, Vec<u8>)> {
    let mut out = vec![0u8; bits];
    let batch = Batch::uniform(llrs, dec.shapes()[0].items)?;
    let (start, mut best, mut reps) = (Instant::now(), f64::INFINITY, 0);
    while reps < 3 || start.elapsed() < budget {
        let t = Instant::now();
        dec.decode_units(&batch, &mut out)?;
        best = best.min(t.elapsed().as_secs_f64());
        reps += 1;
    }
    Ok((bits as f64 / best / 1e6, out))
}

fn row<T: ViterbiLlr>(trellis: &Arc<Trellis>, w: &Workload, llrs: &[T], budget: Duration, filters: &[String]) -> anyhow::Result<()> {
    let threads_all = std::thread::available_parallelism().map_or(1, |n| n.get());
    let decoder = |level, threads| CpuViterbi::<T>::new(trellis.clone(), w.mode, threads)?.with_simd(level);
    let unit = decoder(SimdLevel::Scalar, 1)?.shapes()[0];
    let mut reference = vec![0u8; llrs.len() / unit.items * unit.bits];
    decoder(SimdLevel::Scalar, 0)?.decode_units(&Batch::uniform(llrs, unit.items)?, &mut reference)?;
    for level in SimdLevel::supported() {
        let label = format!("{} | {} | {level}", w.name, T::NAME);
        if !filters.iter().all(|f| label.contains(f.as_str())) {
            continue;
        }
        for threads in [1, threads_all] {
            let (mbps, out) = measure(&mut decoder(level, threads)?, llrs, reference.len(), budget)?;
            anyhow::ensure!(out == reference, "{label}: other bits than the scalar reference's");
            println!("| {label} | {threads} | {mbps:.1} |");
        }
    }
    Ok(())
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let budget = args.iter().find_map(|a| a.parse::<f64>().ok()).map_or(Duration::from_secs(1), Duration::from_secs_f64);
    let filters: Vec<String> = args.into_iter().filter(|a| a.parse::<f64>().is_err()).collect();
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("model name")).map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string()))
        .unwrap_or_else(|| "unknown".into());
    println!("CPU: {cpu}, {} hardware threads", std::thread::available_parallelism().map_or(1, |n| n.get()));
    #[cfg(target_arch = "x86_64")]
    println!(
        "features: avx2={} avx512f={} avx512bw={}",
        is_x86_feature_detected!("avx2"),
        is_x86_feature_detected!("avx512f"),
        is_x86_feature_detected!("avx512bw")
    );
    println!("SIMD levels run: {:?}; default {}", SimdLevel::supported(), SimdLevel::detect());
    println!("K=7 (171,133) r=1/2, {INFO_BITS} information bits per repetition, Eb/N0 {EBN0_DB} dB, best of ≥3 repetitions over {budget:?}\n");
    println!("| configuration | LLR | SIMD | threads | Mb/s |\n|---|---|---|---|---|");
    let trellis = Arc::new(Trellis::new(&ConvCode::k7_171_133()));
    for w in workloads(&trellis)? {
        row(&trellis, &w, &w.f32, budget, &filters)?;
        row(&trellis, &w, &w.i8, budget, &filters)?;
    }
    Ok(())
}
