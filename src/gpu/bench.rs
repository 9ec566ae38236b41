//! Benchmarks every GPU decoder shares: kernel-only and end-to-end throughput
//! with the time split of a batch, the host-memory floor and the copy
//! engine's ceiling under the end-to-end figures. A family's bench prepares
//! noisy work units at a stated Eb/N0 (an early-stopping decoder's speed
//! depends on it) and calls these with its decoder.

use super::device::cuda;
use super::memory::{DeviceBuf, Event, PinnedBuf};
use super::pipeline::{BatchSplit, par_chunks, par_unpack};
use super::stream_copy::stream_copy;
use crate::codes::decode::{Batch, BatchDecoder, Decoded};
use cudarc::driver::result;
use rand::{RngCore, SeedableRng, rngs::SmallRng};
use std::time::Instant;

/// What the shared benchmarks need of a GPU decoder besides the decoder
/// contract.
pub trait GpuBench<T: Copy + Send + Sync>: BatchDecoder<T> {
    /// Mean kernel milliseconds of decoding `batch` (at most one batch)
    /// already resident on the device, over `reps` launches; needs nothing in
    /// flight.
    fn time_kernel(&mut self, batch: &Batch<'_, T>, reps: usize) -> anyhow::Result<f64>;

    /// Where the batch collected last spent its time.
    fn last_split(&self) -> BatchSplit;
}

/// Kernel-only Gb/s of information bits on one full batch of the uniform
/// `units` (which must hold at least one batch), device-resident.
pub fn kernel_only<T: Copy + Send + Sync>(dec: &mut dyn GpuBench<T>, units: &[T], reps: usize) -> anyhow::Result<f64> {
    let shape = dec.shapes()[0];
    let per_batch = dec.limit().units;
    anyhow::ensure!(units.len() >= per_batch * shape.items, "a kernel-only figure needs a full batch of units");
    let ms = dec.time_kernel(&Batch::uniform(&units[..per_batch * shape.items], shape.items)?, reps)?;
    Ok((shape.bits * per_batch) as f64 / (ms * 1e-3) / 1e9)
}

/// End-to-end figures: pageable host memory in, through the pipeline, host
/// memory out.
#[derive(Debug, Clone, Copy)]
pub struct EndToEnd {
    /// Information Gb/s.
    pub gbps: f64,
    /// Per-batch mean milliseconds of the host→device copy, the kernel and the
    /// device→host copy.
    pub h2d_ms: f64,
    /// See `h2d_ms`.
    pub kernel_ms: f64,
    /// See `h2d_ms`.
    pub d2h_ms: f64,
    /// Wall milliseconds per batch.
    pub wall_ms: f64,
    /// Host milliseconds per batch spent staging the input into pinned memory
    /// (submit).
    pub stage_ms: f64,
    /// Host milliseconds per batch spent unpacking the results out of pinned
    /// memory (collect, without the wait).
    pub unpack_ms: f64,
}

impl EndToEnd {
    /// Share of the shorter of host work and device work (copies and kernel of
    /// one batch) that ran hidden behind the longer, percent.
    pub fn overlap_percent(&self) -> f64 {
        let (gpu, host) = (self.h2d_ms + self.kernel_ms + self.d2h_ms, self.stage_ms + self.unpack_ms);
        (100.0 * (gpu + host - self.wall_ms) / gpu.min(host)).clamp(0.0, 100.0)
    }

    /// The time split of one batch as table cells: H2D, kernel, D2H,
    /// staging, unpacking and wall milliseconds, and the overlap
    /// ([`Self::SPLIT_HEADER`] names them).
    pub fn split_cells(&self) -> String {
        format!(
            "{:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.0}%",
            self.h2d_ms,
            self.kernel_ms,
            self.d2h_ms,
            self.stage_ms,
            self.unpack_ms,
            self.wall_ms,
            self.overlap_percent()
        )
    }

    /// The figures of an end-to-end row, for [`crate::figures::row`]: the
    /// throughput and the time split of [`Self::split_cells`].
    pub fn figures(&self) -> Vec<(&'static str, f64, &'static str)> {
        vec![
            ("end-to-end", self.gbps, "Gb/s"),
            ("H2D", self.h2d_ms, "ms"),
            ("kernel", self.kernel_ms, "ms"),
            ("D2H", self.d2h_ms, "ms"),
            ("stage", self.stage_ms, "ms"),
            ("unpack", self.unpack_ms, "ms"),
            ("wall per batch", self.wall_ms, "ms"),
            ("overlap", self.overlap_percent(), "%"),
        ]
    }

    /// The heads of [`Self::split_cells`].
    pub const SPLIT_HEADER: &str = "H2D ms | kernel ms | D2H ms | stage ms | unpack ms | wall ms/batch | overlap";
}

/// Decode `batches` full batches through `dec`, taken round robin from the
/// uniform `units` (two distinct batches, reused, keep host memory modest),
/// keeping the decoder's depth in flight. Each distinct batch once first,
/// so that no first-touch cost lands in the figure.
pub fn end_to_end<T: Copy + Send + Sync>(dec: &mut dyn GpuBench<T>, units: &[T], batches: usize) -> anyhow::Result<EndToEnd> {
    streamed(dec, units, batches, false, |d| d.last_split())
}

/// [`end_to_end`] with the batches submitted where they lie in `units`
/// ([`BatchDecoder::submit_reused`]), as a stream's decoder block submits
/// the units of its input buffer: a decoder that page-locks the caller's
/// reused memory copies it to the device without staging (`stage ms` is
/// then the submit call alone). The locks are released before it returns.
pub fn end_to_end_in_place<T: Copy + Send + Sync>(dec: &mut dyn GpuBench<T>, units: &[T], batches: usize) -> anyhow::Result<EndToEnd> {
    in_place(dec, units, batches, |d| d.last_split())
}

/// [`end_to_end_in_place`]'s throughput, Gb/s, through any decoder (one
/// spread over several devices, which has no time split of its own).
pub fn end_to_end_in_place_gbps<T: Copy + Send + Sync>(dec: &mut dyn BatchDecoder<T>, units: &[T], batches: usize) -> anyhow::Result<f64> {
    Ok(in_place(dec, units, batches, |_| BatchSplit::default())?.gbps)
}

/// [`streamed`] in place, the loan of `units` ended before it returns.
fn in_place<T: Copy + Send + Sync, D: BatchDecoder<T> + ?Sized>(dec: &mut D, units: &[T], batches: usize, split: impl Fn(&D) -> BatchSplit) -> anyhow::Result<EndToEnd> {
    let figure = streamed(dec, units, batches, true, split);
    // `units` is the caller's: nothing of it stays locked past this call.
    let read = dec.reused_read();
    dec.forget_reused();
    let figure = figure?;
    read?;
    Ok(figure)
}

/// [`end_to_end`]'s throughput, Gb/s, through any decoder (one spread over
/// several devices, which has no time split of its own).
pub fn end_to_end_gbps<T: Copy + Send + Sync>(dec: &mut dyn BatchDecoder<T>, units: &[T], batches: usize) -> anyhow::Result<f64> {
    Ok(streamed(dec, units, batches, false, |_| BatchSplit::default())?.gbps)
}

/// [`end_to_end`] with `split` telling where each batch collected spent its
/// time; `in_place`: submitted with [`BatchDecoder::submit_reused`] (the
/// caller then releases `units` with `reused_read` and `forget_reused`).
fn streamed<T: Copy + Send + Sync, D: BatchDecoder<T> + ?Sized>(dec: &mut D, units: &[T], batches: usize, in_place: bool, split: impl Fn(&D) -> BatchSplit) -> anyhow::Result<EndToEnd> {
    let shape = dec.shapes()[0];
    let per_batch = dec.limit().units * shape.items;
    let distinct = (units.len() / per_batch.max(1)).clamp(1, 2);
    anyhow::ensure!(units.len() >= per_batch, "an end-to-end figure needs a full batch of units");
    let submit = |dec: &mut D, b: usize| -> anyhow::Result<()> {
        let batch = Batch::uniform(&units[(b % distinct) * per_batch..][..per_batch], shape.items)?;
        if in_place {
            // SAFETY: `units` is never written and outlives this call; the
            // caller ends the loan (`reused_read`, `forget_reused`) before
            // giving it back.
            unsafe { dec.submit_reused(&batch) }?;
        } else {
            dec.submit(&batch)?;
        }
        Ok(())
    };
    let mut out = Decoded::default();
    // Each distinct batch once first: no first touch, and no first page-lock in place, in the figure.
    for b in 0..distinct {
        submit(dec, b)?;
        dec.collect(&mut out)?;
    }
    // Then twice the decoder's depth, streamed as below, so that every
    // pipeline (each device's, with several) has filled once and what it
    // touches per batch in flight is touched before the figure too.
    for b in 0..2 * dec.depth() {
        if dec.in_flight() >= dec.depth() {
            out.clear();
            dec.collect(&mut out)?;
        }
        submit(dec, b)?;
    }
    while dec.in_flight() > 0 {
        out.clear();
        dec.collect(&mut out)?;
    }
    let mut sink = 0usize;
    let (mut h2d, mut ker, mut d2h) = (0.0, 0.0, 0.0);
    let (mut stage, mut unpack) = (0.0, 0.0);
    let mut collect = |dec: &mut D, out: &mut Decoded| -> anyhow::Result<()> {
        out.clear();
        dec.collect(out)?;
        // A decoder asked to pack hands whole bytes per unit.
        sink += out.bits.len() + 8 * out.packed.len();
        let s = split(dec);
        (h2d, ker, d2h, unpack) = (h2d + s.h2d_ms, ker + s.kernel_ms, d2h + s.d2h_ms, unpack + s.host_out_ms);
        Ok(())
    };
    let start = Instant::now();
    for b in 0..batches {
        if dec.in_flight() >= dec.depth() {
            collect(dec, &mut out)?;
        }
        let t = Instant::now();
        submit(dec, b)?;
        stage += t.elapsed().as_secs_f64() * 1e3;
    }
    while dec.in_flight() > 0 {
        collect(dec, &mut out)?;
    }
    let secs = start.elapsed().as_secs_f64();
    let n = batches as f64;
    Ok(EndToEnd { gbps: sink as f64 / secs / 1e9, h2d_ms: h2d / n, kernel_ms: ker / n, d2h_ms: d2h / n, wall_ms: secs * 1e3 / n, stage_ms: stage / n, unpack_ms: unpack / n })
}

/// Random bytes: what the host-memory and copy-engine lines move.
fn random_bytes(len: usize, seed: u64) -> Vec<i8> {
    let mut bytes = vec![0u8; len];
    SmallRng::seed_from_u64(seed).fill_bytes(&mut bytes);
    bytes.into_iter().map(|b| b as i8).collect()
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
/// per batch and `in_bytes` input bytes per bit (2 for i8 LLRs at rate 1/2;
/// one packed bit back, one byte out per bit): GB/s of staging pageable input
/// into pinned memory (with the pipeline's streaming stores), of unpacking bits
/// to bytes, and of a plain pageable copy for reference, each the best of five
/// on the pipeline's own host threads.
pub fn host_floor(device: usize, in_bytes: usize, bits: usize) -> anyhow::Result<HostFloor> {
    crate::figures::measuring("host memory floor");
    let pool = super::host_pool::host_pool(0)?;
    pool.install(|| host_floor_here(device, in_bytes, bits))
}

/// What [`host_floor`] measured.
#[derive(Debug, Clone, Copy)]
pub struct HostFloor {
    /// GB/s of staging pageable input into pinned memory.
    pub stage_gb: f64,
    /// GB/s (output bytes) of unpacking bits to bytes.
    pub unpack_gb: f64,
    /// GB/s of a plain pageable copy.
    pub copy_gb: f64,
    /// Gb/s of information bits that staging and unpacking one after the other allow.
    pub cap_gbps: f64,
    /// Host threads they ran on.
    pub threads: usize,
}

/// [`host_floor`] on the current rayon pool.
fn host_floor_here(device: usize, in_bytes: usize, bits: usize) -> anyhow::Result<HostFloor> {
    // Whole units of the 256-bit unpacking below (a batch of a few frames of an odd size is not).
    let bits = bits.div_ceil(256).max(1) * 256;
    let ctx = super::device::context(device)?;
    let src: Vec<i8> = random_bytes(in_bytes * bits, 3);
    let mut pinned = PinnedBuf::<i8>::new(&ctx, in_bytes * bits, true)?;
    let mut plain = vec![0i8; in_bytes * bits];
    let words: Vec<u32> = random_bytes(bits / 8, 4).chunks(4).map(|b| u32::from_le_bytes([b[0] as u8, b[1] as u8, b[2] as u8, b[3] as u8])).collect();
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
    let (stage_gb, unpack_gb) = (gb(in_bytes * bits, stage), gb(bits, unpack));
    let cap = 1.0 / (in_bytes as f64 / stage_gb + 1.0 / unpack_gb);
    let threads = rayon::current_num_threads();
    crate::figures::row(
        "host memory",
        format!("{} Mbit per batch, {}", bits / 1_000_000, crate::codes::words::count_of(threads as u64, "thread")),
        &[("stage pageable→pinned", stage_gb, "GB/s"), ("unpack bits→bytes", unpack_gb, "GB/s"), ("pageable copy", gb(in_bytes * bits, copy), "GB/s"), ("end-to-end cap, one host thread", cap, "Gb/s")],
    )?;
    println!(
        "\nHost memory, {} Mbit per batch on {} threads: stage pageable→pinned {stage_gb:.1} GB/s, unpack bits→bytes {unpack_gb:.1} GB/s (output), \
         pageable copy {:.1} GB/s. Done one after the other, as one host thread does, they cap end-to-end at {:.1} Gb/s.",
        bits / 1_000_000,
        threads,
        gb(in_bytes * bits, copy),
        cap
    );
    Ok(HostFloor { stage_gb, unpack_gb, copy_gb: gb(in_bytes * bits, copy), cap_gbps: cap, threads })
}

/// GB/s of copying `dev`'s bytes from `src` (repeated when shorter), in
/// pieces of `piece` bytes on one stream: the best of five.
fn h2d_gbps(ctx: &std::sync::Arc<cudarc::driver::CudaContext>, dev: &DeviceBuf, src: &[i8], piece: usize) -> anyhow::Result<f64> {
    let bytes = dev.bytes();
    let stream = ctx.new_stream().map_err(cuda("cuStreamCreate"))?;
    let (a, b) = (Event::new(ctx)?, Event::new(ctx)?);
    let s = stream.cu_stream();
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        a.record(s)?;
        for at in (0..bytes).step_by(piece) {
            let n = piece.min(bytes - at);
            // SAFETY: both buffers outlive the copy, which is waited for below.
            unsafe { result::memcpy_htod_async(dev.ptr() + at as u64, &src[at % src.len()..][..n], s) }.map_err(cuda("host→device copy"))?;
        }
        b.record(s)?;
        b.wait()?;
        best = best.min(a.ms_to(&b)? as f64 * 1e-3);
    }
    Ok(bytes as f64 / best / 1e9)
}

/// The host→device copy rate of `device` from write-combined pinned memory,
/// GB/s over `bytes` bytes: its PCIe link's ceiling, per device for `gpufec info`.
pub fn pinned_h2d_gbps(device: usize, bytes: usize) -> anyhow::Result<f64> {
    let ctx = super::device::context(device)?;
    let dev = DeviceBuf::new(&ctx, bytes)?;
    let mut pinned = PinnedBuf::<i8>::new(&ctx, bytes, true)?;
    pinned.as_mut_slice().fill(1);
    h2d_gbps(&ctx, &dev, pinned.as_slice(), bytes)
}

/// The host→device copy rate of every device in `devices` at once, GB/s in
/// all: each copies `bytes` bytes from cached pinned memory (as from a
/// page-locked stream buffer) four times over, all starting together; what
/// the host's memory and PCIe root give several GPUs, where one link's
/// ceiling no longer adds up.
pub fn pinned_h2d_together_gbps(devices: &[usize], bytes: usize) -> anyhow::Result<f64> {
    const ROUNDS: usize = 4;
    let start = std::sync::Barrier::new(devices.len());
    let secs = std::thread::scope(|scope| {
        let each: Vec<_> = devices
            .iter()
            .map(|&device| {
                let start = &start;
                scope.spawn(move || -> anyhow::Result<f64> {
                    let ready = (|| {
                        let ctx = super::device::context(device)?;
                        ctx.bind_to_thread().map_err(cuda("cuCtxSetCurrent"))?;
                        let dev = DeviceBuf::new(&ctx, bytes)?;
                        let mut pinned = PinnedBuf::<i8>::new(&ctx, bytes, false)?;
                        pinned.as_mut_slice().fill(1);
                        let stream = ctx.new_stream().map_err(cuda("cuStreamCreate"))?;
                        let events = (Event::new(&ctx)?, Event::new(&ctx)?);
                        anyhow::Ok((dev, pinned, stream, events))
                    })();
                    // At the barrier even after a failure, so that no other thread waits forever.
                    start.wait();
                    let (dev, pinned, stream, (a, b)) = ready?;
                    let s = stream.cu_stream();
                    let t = Instant::now();
                    a.record(s)?;
                    for _ in 0..ROUNDS {
                        // SAFETY: both buffers outlive the copy, which is waited for below.
                        unsafe { result::memcpy_htod_async(dev.ptr(), pinned.as_slice(), s) }.map_err(cuda("host→device copy"))?;
                    }
                    b.record(s)?;
                    b.wait()?;
                    Ok(t.elapsed().as_secs_f64())
                })
            })
            .collect();
        each.into_iter().map(|h| h.join().map_err(|_| anyhow::anyhow!("a copy thread panicked"))?).collect::<anyhow::Result<Vec<f64>>>()
    })?;
    let slowest = secs.iter().copied().fold(0.0, f64::max);
    Ok((devices.len() * ROUNDS * bytes) as f64 / slowest / 1e9)
}

/// The copy engine's host→device rate for `bytes` bytes with the host idle,
/// the ceiling under every end-to-end figure: from write-combined pinned memory
/// (the pipeline's staging), from cached pinned memory, 2 MiB at a time from one
/// cached buffer (so from the CPU's cache), and straight from pageable memory
/// (the driver stages it through its own pinned buffers) on 1, 4 and 16 host
/// threads with a stream each.
pub fn copy_engine(device: usize, bytes: usize) -> anyhow::Result<()> {
    crate::figures::measuring("copy engine");
    let ctx = super::device::context(device)?;
    let src: Vec<i8> = random_bytes(bytes, 6);
    let dev = DeviceBuf::new(&ctx, bytes)?;
    let mut pinned = PinnedBuf::<i8>::new(&ctx, bytes, true)?;
    pinned.as_mut_slice().copy_from_slice(&src);
    let gb = |s: f64| bytes as f64 / s / 1e9;
    let mut cached = PinnedBuf::<i8>::new(&ctx, bytes, false)?;
    let h2d = |src: &[i8], piece: usize| h2d_gbps(&ctx, &dev, src, piece);
    let (wc, big) = (h2d(pinned.as_slice(), bytes)?, h2d(cached.as_slice(), bytes)?);
    // A batch smaller than the cache-sized buffer (short codes) is its own.
    let piece = (2usize << 20).min(bytes);
    cached.as_mut_slice()[..piece].fill(1); // into the cache
    let small = h2d(&cached.as_slice()[..piece], piece)?;
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
    let mut direct = Vec::new();
    for t in [1, 4, 16] {
        direct.push((crate::codes::words::count_of(t as u64, "thread"), pageable(t)?));
    }
    let mut figures = vec![("write-combined pinned", wc, "GB/s"), ("cached pinned", big, "GB/s"), ("one cached buffer again and again", small, "GB/s")];
    let names: Vec<String> = direct.iter().map(|(on, _)| format!("from pageable memory on {on}")).collect();
    figures.extend(names.iter().zip(&direct).map(|(n, &(_, g))| (n.as_str(), g, "GB/s")));
    crate::figures::row("copy engine, host→device", format!("{} MiB", bytes >> 20), &figures)?;
    let direct = direct.iter().map(|(on, g)| format!("{g:.1} GB/s on {on}")).collect::<Vec<_>>().join(", ");
    println!(
        "\nCopy engine alone, host→device: write-combined {wc:.1} GB/s, cached {big:.1} GB/s, one cached {} KiB buffer again and again {small:.1} GB/s; \
         straight from pageable memory {direct}.",
        piece >> 10
    );
    Ok(())
}

