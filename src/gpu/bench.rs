//! `gpufec bench viterbi --backend gpu`: kernel-only and end-to-end throughput
//! of the GPU Viterbi decoder, the paper's Table IV and V layouts, the time
//! split of one batch, end to end against the pipeline's host threads,
//! punctured rates depunctured on the host or in the kernel, and the
//! host-memory and copy-engine ceilings under the end-to-end figures. Prints
//! markdown, ready for BENCHMARKS.md.

use super::device::cuda;
use super::memory::{DeviceBuf, Event, PinnedBuf};
use super::pipeline::{default_host_threads, par_chunks, par_unpack};
use super::stream_copy::stream_copy;
use super::viterbi::{GpuLlr, GpuOptions, GpuViterbi, RingPlace, lcm};
use crate::codes::BatchDecoder;
use crate::codes::conv::{ConvCode, Depuncturer, PuncturePattern, TileConfig, Traceback, Trellis, ViterbiMode};
use cudarc::driver::result;
use rand::{RngCore, SeedableRng, rngs::SmallRng};
use std::sync::Arc;
use std::time::Instant;

/// What to measure.
#[derive(Debug, Clone)]
pub struct GpuBenchOptions {
    /// CUDA device.
    pub device: usize,
    /// Pipeline slots for the end-to-end figures.
    pub slots: usize,
    /// Kernel launches averaged per kernel-only figure.
    pub reps: usize,
    /// Batches decoded per end-to-end figure: enough that filling and draining
    /// the pipeline (about one batch's time, not overlapped, which a long
    /// stream pays once) costs about 2 % of the figure, not 8 % as with 12.
    pub batches: usize,
    /// Also measure the Table IV and V grids.
    pub tables: bool,
    /// Tiles per work unit.
    pub group: usize,
}

impl Default for GpuBenchOptions {
    fn default() -> Self {
        Self { device: 0, slots: 2, reps: 20, batches: 48, tables: true, group: 64 }
    }
}

/// Random LLRs: the kernel's work does not depend on their values.
fn random<T: BenchLlr>(len: usize, seed: u64) -> Vec<T> {
    let mut r = SmallRng::seed_from_u64(seed);
    let mut bytes = vec![0u8; len];
    r.fill_bytes(&mut bytes);
    bytes.into_iter().map(T::from_byte).collect()
}

/// LLR types as the bench fills them from random bytes.
trait BenchLlr: GpuLlr {
    fn from_byte(b: u8) -> Self;
}
impl BenchLlr for i8 {
    fn from_byte(b: u8) -> Self {
        b as i8
    }
}
impl BenchLlr for f32 {
    fn from_byte(b: u8) -> Self {
        (b as i8) as f32 * 0.25
    }
}
fn k7() -> Arc<Trellis> {
    Arc::new(Trellis::new(&ConvCode::k7_171_133()))
}

fn decoder<T: GpuLlr>(tile: TileConfig, ring: RingPlace, o: &GpuBenchOptions) -> anyhow::Result<GpuViterbi<T>> {
    let opts = GpuOptions { device: o.device, slots: o.slots, ring, ..Default::default() };
    GpuViterbi::<T>::new(k7(), ViterbiMode::Tiled(tile), opts)
}

/// Kernel-only Gb/s of information bits on one full, device-resident batch.
fn kernel_gbps<T: GpuLlr + BenchLlr>(dec: &mut GpuViterbi<T>, reps: usize) -> anyhow::Result<f64> {
    let unit = dec.unit();
    let llrs: Vec<T> = random(unit.llrs_in * dec.batch_units(), 1);
    let ms = dec.time_kernel(&llrs, reps)?;
    Ok((unit.bits_out * dec.batch_units()) as f64 / (ms * 1e-3) / 1e9)
}

/// End-to-end figures: pageable host memory in, through the pipeline, host
/// memory out.
struct EndToEnd {
    gbps: f64,
    /// Per-batch means over the run, milliseconds.
    h2d_ms: f64,
    kernel_ms: f64,
    d2h_ms: f64,
    /// Wall milliseconds per batch.
    wall_ms: f64,
    /// Host milliseconds per batch spent staging the input into pinned memory
    /// (submit).
    stage_ms: f64,
    /// Host milliseconds per batch spent unpacking the bits out of pinned
    /// memory (collect, without the wait).
    unpack_ms: f64,
}

fn end_to_end<T: GpuLlr + BenchLlr>(dec: &mut GpuViterbi<T>, batches: usize) -> anyhow::Result<EndToEnd> {
    let unit = dec.unit();
    let per_batch = unit.llrs_in * dec.batch_units();
    // Two distinct batches of input reused round robin keep host memory modest.
    let input: Vec<T> = random(per_batch * 2, 2);
    let mut out = Vec::with_capacity(unit.bits_out * dec.batch_units() * dec.depth());
    // One batch first, so that no first-touch cost lands in the figure.
    dec.submit(&input[..per_batch])?;
    dec.collect(&mut out)?;
    let mut sink = 0usize;
    let (mut h2d, mut ker, mut d2h) = (0.0, 0.0, 0.0);
    let (mut stage, mut unpack) = (0.0, 0.0);
    let mut collect = |dec: &mut GpuViterbi<T>, out: &mut Vec<u8>| -> anyhow::Result<()> {
        out.clear();
        dec.collect(out)?;
        sink += out.len();
        let s = dec.last_split();
        (h2d, ker, d2h, unpack) = (h2d + s.h2d_ms, ker + s.kernel_ms, d2h + s.d2h_ms, unpack + s.host_out_ms);
        Ok(())
    };
    let start = Instant::now();
    for b in 0..batches {
        if dec.in_flight() >= dec.depth() {
            collect(dec, &mut out)?;
        }
        let at = (b % 2) * per_batch;
        let t = Instant::now();
        dec.submit(&input[at..at + per_batch])?;
        stage += t.elapsed().as_secs_f64() * 1e3;
    }
    while dec.in_flight() > 0 {
        collect(dec, &mut out)?;
    }
    let secs = start.elapsed().as_secs_f64();
    let n = batches as f64;
    Ok(EndToEnd { gbps: sink as f64 / secs / 1e9, h2d_ms: h2d / n, kernel_ms: ker / n, d2h_ms: d2h / n, wall_ms: secs * 1e3 / n, stage_ms: stage / n, unpack_ms: unpack / n })
}

/// The fewest wall-clock seconds `f` took in `runs` runs after `warmups`
/// untimed ones.
fn best_secs(warmups: usize, runs: usize, mut f: impl FnMut() -> anyhow::Result<()>) -> anyhow::Result<f64> {
    for _ in 0..warmups {
        f()?;
    }
    let mut best = f64::INFINITY;
    for _ in 0..runs {
        let t = Instant::now();
        f()?;
        best = best.min(t.elapsed().as_secs_f64());
    }
    Ok(best)
}

/// Host memory speeds that bound the end-to-end figure, for `bits` decoded bits
/// per batch with i8 LLRs at rate 1/2 (2 bytes in, one packed bit back, one
/// byte out per bit): GB/s of staging pageable LLRs into pinned memory (with
/// the pipeline's streaming stores), of unpacking bits to bytes, and of a plain
/// pageable copy for reference, each the best of five on every core rayon has.
fn host_floor(device: usize, bits: usize) -> anyhow::Result<()> {
    let ctx = super::device::context(device)?;
    let src: Vec<i8> = random(2 * bits, 3);
    let mut pinned = PinnedBuf::<i8>::new(&ctx, 2 * bits, true)?;
    let mut plain = vec![0i8; 2 * bits];
    let words: Vec<u32> = random::<i8>(bits / 8, 4).chunks(4).map(|b| u32::from_le_bytes([b[0] as u8, b[1] as u8, b[2] as u8, b[3] as u8])).collect();
    let mut out = Vec::with_capacity(bits);
    let stage = best_secs(1, 5, || {
        par_chunks(pinned.as_mut_slice(), &src, stream_copy);
        Ok(())
    })?;
    let copy = best_secs(1, 5, || {
        par_chunks(&mut plain, &src, |d, c| d.copy_from_slice(c));
        Ok(())
    })?;
    let unpack = best_secs(1, 5, || {
        out.clear();
        par_unpack(&mut out, &words, 256, 8);
        Ok(())
    })?;
    let gb = |bytes: usize, s: f64| bytes as f64 / s / 1e9;
    let (stage_gb, unpack_gb) = (gb(2 * bits, stage), gb(bits, unpack));
    println!(
        "\nHost memory, {} Mbit per batch on {} threads: stage pageable→pinned {stage_gb:.1} GB/s, unpack bits→bytes {unpack_gb:.1} GB/s (output), \
         pageable copy {:.1} GB/s. Done one after the other, as one host thread does, they cap end-to-end at {:.1} Gb/s.",
        bits / 1_000_000,
        rayon::current_num_threads(),
        gb(2 * bits, copy),
        1.0 / (2.0 / stage_gb + 1.0 / unpack_gb)
    );
    Ok(())
}

/// The copy engine's host→device rate for `bytes` bytes with the host idle,
/// the ceiling under every end-to-end figure: from write-combined pinned memory
/// (the pipeline's staging), from cached pinned memory, 2 MiB at a time from one
/// cached buffer (so from the CPU's cache), and straight from pageable memory
/// (the driver stages it through its own pinned buffers) on 1, 4 and 16 host
/// threads with a stream each.
fn copy_engine(device: usize, bytes: usize) -> anyhow::Result<()> {
    let ctx = super::device::context(device)?;
    let src: Vec<i8> = random(bytes, 6);
    let dev = DeviceBuf::new(&ctx, bytes)?;
    let mut pinned = PinnedBuf::<i8>::new(&ctx, bytes, true)?;
    pinned.as_mut_slice().copy_from_slice(&src);
    let gb = |s: f64| bytes as f64 / s / 1e9;
    let mut cached = PinnedBuf::<i8>::new(&ctx, bytes, false)?;
    let stream = ctx.new_stream().map_err(cuda("cuStreamCreate"))?;
    let (a, b) = (Event::new(&ctx)?, Event::new(&ctx)?);
    let h2d = |src: &[i8], piece: usize| -> anyhow::Result<f64> {
        let s = stream.cu_stream();
        let mut best = f64::INFINITY;
        for _ in 0..5 {
            a.record(s)?;
            for at in (0..bytes).step_by(piece) {
                let n = piece.min(bytes - at);
                // SAFETY: both buffers outlive the copy, which is waited for below.
                unsafe { result::memcpy_htod_async(dev.ptr() + at as u64, &src[at % src.len()..][..n], s) }
                    .map_err(cuda("host→device copy"))?;
            }
            b.record(s)?;
            b.wait()?;
            best = best.min(a.ms_to(&b)? as f64 * 1e-3);
        }
        Ok(gb(best))
    };
    let (wc, big) = (h2d(pinned.as_slice(), bytes)?, h2d(cached.as_slice(), bytes)?);
    cached.as_mut_slice()[..2 << 20].fill(1); // into the cache
    let small = h2d(&cached.as_slice()[..2 << 20], 2 << 20)?;
    // Pageable memory straight to cuMemcpyHtoDAsync: the driver stages it
    // through its own pinned buffers, from as many host threads and streams.
    let pageable = |threads: usize| -> anyhow::Result<f64> {
        let streams = (0..threads).map(|_| ctx.new_stream().map_err(cuda("cuStreamCreate"))).collect::<anyhow::Result<Vec<_>>>()?;
        let per = bytes.div_ceil(threads);
        let secs = best_secs(0, 3, || {
            std::thread::scope(|sc| -> anyhow::Result<()> {
                let jobs: Vec<_> = streams
                    .iter()
                    .enumerate()
                    .map(|(i, st)| {
                        let (src, dev, ctx) = (&src, &dev, &ctx);
                        sc.spawn(move || -> anyhow::Result<()> {
                            ctx.bind_to_thread().map_err(cuda("cuCtxSetCurrent"))?;
                            let lo = (i * per).min(bytes);
                            let hi = (lo + per).min(bytes);
                            for at in (lo..hi).step_by(8 << 20) {
                                let n = (8 << 20).min(hi - at);
                                // SAFETY: pageable source, copied before the call returns or staged by the driver; synchronised below.
                                unsafe { result::memcpy_htod_async(dev.ptr() + at as u64, &src[at..at + n], st.cu_stream()) }
                                    .map_err(cuda("host→device copy"))?;
                            }
                            st.synchronize().map_err(cuda("cuStreamSynchronize"))
                        })
                    })
                    .collect();
                jobs.into_iter().try_for_each(|j| j.join().expect("copy thread"))
            })
        })?;
        Ok(gb(secs))
    };
    let direct = [1, 4, 16].map(|t| pageable(t).map(|g| format!("{g:.1} GB/s on {t} thread{}", if t > 1 { "s" } else { "" })));
    let direct = direct.into_iter().collect::<anyhow::Result<Vec<_>>>()?.join(", ");
    println!(
        "\nCopy engine alone, host→device: write-combined {wc:.1} GB/s, cached {big:.1} GB/s, one cached 2 MiB buffer again and again {small:.1} GB/s; \
         straight from pageable memory {direct}."
    );
    Ok(())
}

/// Run the GPU Viterbi benchmark and print its report.
pub fn bench_viterbi(o: &GpuBenchOptions) -> anyhow::Result<()> {
    let info = super::devices()?.into_iter().nth(o.device).ok_or_else(|| anyhow::anyhow!("CUDA device {} does not exist", o.device))?;
    println!(
        "# GPU Viterbi, K=7 (171,133) r=1/2, on {} ({} SMs, sm_{}{}), {} tiles per work unit",
        info.name, info.sms, info.compute_capability.0, info.compute_capability.1, o.group
    );
    let tile = |f, v2, tb| -> anyhow::Result<TileConfig> { Ok(TileConfig::new(f, 20, v2, tb)?.with_group(o.group)?) };

    println!("\n## Headline: f=256, v1=20 (kernel-only = device-resident LLRs; end-to-end = pageable host memory in and out, {} slots)\n", o.slots);
    println!("| traceback | v2 | LLR | survivors | tiles/batch | kernel-only Gb/s | end-to-end Gb/s | H2D ms | kernel ms | D2H ms | stage ms | unpack ms | wall ms/batch | overlap |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    // Serial v2=20 and parallel f0=32 v2=30 lose ≤ 0.05 dB against the full-frame
    // decoder (BENCHMARKS.md, Tables II and III); f0=32 v2=45 is the paper's pick.
    for (tb, v2) in [(Traceback::Serial, 20), (Traceback::Parallel { f0: 32 }, 30), (Traceback::Parallel { f0: 32 }, 45)] {
        for ring in [RingPlace::Auto, RingPlace::Shared, RingPlace::Global] {
            headline::<i8>(tile(256, v2, tb)?, ring, o)?;
        }
        headline::<f32>(tile(256, v2, tb)?, RingPlace::Auto, o)?;
    }
    host_threads(tile(256, 20, Traceback::Serial)?, o)?;
    host_floor(o.device, 337_920 * 256)?;
    copy_engine(o.device, 2 * 337_920 * 256)?;
    punctured(o)?;
    if o.tables {
        table(o, "Table IV layout: serial traceback, f × v2, i8, kernel-only Gb/s", "v2 \\ f", &[10, 20, 30, 40], &[32, 64, 128, 256, 512], |v2, f| {
            tile(f, v2, Traceback::Serial)
        })?;
        table(o, "Table V layout: parallel traceback, f=256, f0 × v2, i8, kernel-only Gb/s", "v2 \\ f0", &[25, 30, 35, 40, 45], &[8, 16, 24, 32, 40, 48, 56], |v2, f0| {
            tile(256, v2, Traceback::Parallel { f0 })
        })?;
    }
    Ok(())
}

/// End to end against the pipeline's host threads, for `tile` with i8 LLRs
/// and survivors in global memory: staging must outrun the copy engine, and
/// every thread more takes host memory bandwidth from it.
fn host_threads(tile: TileConfig, o: &GpuBenchOptions) -> anyhow::Result<()> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "\n## Host threads: {} v2={}, i8, global survivors, end to end ({} slots; the default is {} of the {cores} cores)\n",
        tile.traceback,
        tile.v2,
        o.slots,
        default_host_threads()
    );
    println!("| host threads | end-to-end Gb/s | H2D ms | stage ms | unpack ms | wall ms/batch |");
    println!("|---|---|---|---|---|---|");
    let mut counts = vec![4, 6, 8, 12, 16, cores];
    counts.retain(|&n| n <= cores);
    counts.sort_unstable();
    counts.dedup();
    for n in counts {
        let opts = GpuOptions { device: o.device, slots: o.slots, ring: RingPlace::Global, host_threads: n, ..Default::default() };
        let e = end_to_end(&mut GpuViterbi::<i8>::new(k7(), ViterbiMode::Tiled(tile), opts)?, o.batches)?;
        println!("| {n} | {:.1} | {:.2} | {:.2} | {:.2} | {:.2} |", e.gbps, e.h2d_ms, e.stage_ms, e.unpack_ms, e.wall_ms);
    }
    Ok(())
}

/// Punctured rates both ways: depunctured on the host (the Depuncture block,
/// one thread, then the decoder takes n LLRs per stage) and by the kernel as it
/// loads (only the sent LLRs cross PCIe). i8 LLRs, serial traceback v2=20, f
/// the multiple of both the period and 32 nearest 256 (tiles start on the
/// period, and whole output words keep the host's unpacking on its fast path).
fn punctured(o: &GpuBenchOptions) -> anyhow::Result<()> {
    println!("\n## Punctured K=7, i8, serial v2=20: depunctured on the host or by the kernel ({} slots)\n", o.slots);
    println!("| rate | f | depunctured by | LLR bytes/bit | kernel-only Gb/s | end-to-end Gb/s | H2D ms | kernel ms | stage ms | host depuncture Gb/s (1 thread) |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for rate in ["2/3", "3/4", "7/8"] {
        let pattern = PuncturePattern::standard(rate)?;
        let step = lcm(32, pattern.period());
        let f = (256 + step / 2) / step * step;
        let tile = TileConfig::new(f, 20, 20, Traceback::Serial)?.with_group(o.group)?;
        let opts = GpuOptions { device: o.device, slots: o.slots, ..Default::default() };
        // What the Depuncture block costs per information bit, on one thread.
        let bits = 64 << 20;
        let sent: Vec<i8> = random(bits * pattern.kept_per_period() / pattern.period(), 5);
        let mut full = Vec::with_capacity(2 * bits);
        let t = Instant::now();
        Depuncturer::new(pattern.clone()).depuncture(&sent, &mut full);
        let host = bits as f64 / t.elapsed().as_secs_f64() / 1e9;
        let decoders = [
            ("host", GpuViterbi::<i8>::new(k7(), ViterbiMode::Tiled(tile), opts.clone())?),
            ("kernel", GpuViterbi::<i8>::punctured(k7(), tile, &pattern, opts)?),
        ];
        for (by, mut dec) in decoders {
            let k = kernel_gbps(&mut dec, o.reps)?;
            let e = end_to_end(&mut dec, o.batches)?;
            let bytes = dec.unit().llrs_in as f64 / dec.unit().bits_out as f64;
            let host_col = if by == "host" { format!("{host:.2}") } else { "—".to_string() };
            println!(
                "| {rate} | {f} | {by} | {bytes:.2} | {k:.1} | {:.1} | {:.2} | {:.2} | {:.2} | {host_col} |",
                e.gbps, e.h2d_ms, e.kernel_ms, e.stage_ms
            );
        }
    }
    Ok(())
}

fn headline<T: GpuLlr + BenchLlr>(tile: TileConfig, ring: RingPlace, o: &GpuBenchOptions) -> anyhow::Result<()> {
    let mut dec = match decoder::<T>(tile, ring, o) {
        Ok(d) => d,
        Err(e) => {
            println!("| {} | {} | {} | {ring:?} | — | {e:#} |", tile.traceback, tile.v2, T::NAME);
            return Ok(());
        }
    };
    let k = kernel_gbps(&mut dec, o.reps)?;
    let e = end_to_end(&mut dec, o.batches)?;
    let (gpu, host) = (e.h2d_ms + e.kernel_ms + e.d2h_ms, e.stage_ms + e.unpack_ms);
    println!(
        "| {} | {} | {} | {} | {} | {k:.1} | {:.1} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.0}% |",
        tile.traceback,
        tile.v2,
        T::NAME,
        if dec.ring_global() { "global" } else { "shared" },
        dec.batch_units() * tile.group,
        e.gbps,
        e.h2d_ms,
        e.kernel_ms,
        e.d2h_ms,
        e.stage_ms,
        e.unpack_ms,
        e.wall_ms,
        // Share of the shorter of host work and device work (copies and kernel
        // of one batch) that ran hidden behind the longer.
        (100.0 * (gpu + host - e.wall_ms) / gpu.min(host)).clamp(0.0, 100.0)
    );
    Ok(())
}

fn table(
    o: &GpuBenchOptions,
    title: &str,
    corner: &str,
    rows: &[usize],
    cols: &[usize],
    tile: impl Fn(usize, usize) -> anyhow::Result<TileConfig> + Sync,
) -> anyhow::Result<()> {
    // Compile every cell's kernel in parallel first (NVRTC takes seconds each),
    // with one-unit batches so that little memory is held meanwhile.
    let cells: Vec<TileConfig> = rows.iter().flat_map(|&r| cols.iter().map(move |&c| (r, c))).map(|(r, c)| tile(r, c)).collect::<anyhow::Result<_>>()?;
    std::thread::scope(|s| {
        for chunk in cells.chunks(cells.len().div_ceil(16)) {
            s.spawn(move || {
                for &t in chunk {
                    let opts = GpuOptions { device: o.device, slots: 1, batch_units: 1, ..Default::default() };
                    let _ = GpuViterbi::<i8>::new(k7(), ViterbiMode::Tiled(t), opts);
                }
            });
        }
    });
    println!("\n## {title}\n");
    println!("| {corner} | {} |", cols.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(" | "));
    println!("|---|{}", "---|".repeat(cols.len()));
    for (i, r) in rows.iter().enumerate() {
        let mut line = format!("| {r} |");
        for t in &cells[i * cols.len()..(i + 1) * cols.len()] {
            let mut dec = decoder::<i8>(*t, RingPlace::Auto, o)?;
            let g = kernel_gbps(&mut dec, o.reps)?;
            line += &format!(" {g:.1}{} |", if dec.ring_global() { "ᵍ" } else { "" });
        }
        println!("{line}");
    }
    println!("\nᵍ: survivors in global memory (Auto placement).");
    Ok(())
}
