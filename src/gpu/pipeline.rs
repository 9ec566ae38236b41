//! The N-slot stream pipeline every GPU decoder uses: per slot, pinned host
//! staging in and out, device buffers (input, output, the family's own
//! auxiliary buffers and per-unit status words read back with the output),
//! one stream and its events. While slot i runs its kernel, slot i+1 copies in
//! and slot i−1 copies out; results are collected in submission order. A
//! batch is staged and copied in a few chunks, so that its copy in starts while
//! the host still stages the rest. The host's copies run on the process's
//! shared host pool, sized so that staging outruns the copy engine without
//! taking the host memory bandwidth the copy engine needs. Every buffer of a
//! slot is freed only after the slot's stream is synchronised.

use super::device::cuda;
use super::host_pool::host_pool;
use super::memory::{DeviceBuf, Event, PinnedBuf};
use super::registered::Registered;
use crate::codes::packed::unpack_units;
use cudarc::driver::{CudaContext, CudaStream, result, sys};
use rayon::prelude::*;
use std::sync::Arc;

/// Most pipeline slots (batches in flight) a decoder may ask for.
pub const MAX_SLOTS: usize = 16;

/// Pipeline slots unless told: one batch computes while the next copies
/// in, and a third lets the host stage and unpack while the device holds
/// two (on the lent H200: polar end to end 11.6 → 12.4 Gb/s, turbo code
/// blocks 7.3 → 8.1, transport blocks 4.3 → 4.5–4.9; the Viterbi decoder
/// the same; BENCHMARKS.md).
pub const DEFAULT_SLOTS: usize = 3;

/// Largest buffer one pipeline slot holds, bytes: a bound on what a user's
/// batch size can make a decoder allocate (the default Viterbi batch of i8
/// LLRs is about 170 MB, of f32 LLRs about 690 MB).
pub const MAX_BATCH_BYTES: usize = 4 << 30;

/// Waves of the device's resident threads a default batch holds: enough
/// that the last, partial wave costs little.
const WAVES: usize = 4;

/// Work units in a default batch of a kernel whose device holds `resident`
/// threads at once and that runs `per_unit` threads on each unit.
pub(crate) fn default_batch_units(resident: usize, per_unit: usize) -> usize {
    (WAVES * resident).div_ceil(per_unit.max(1)).max(1)
}

/// How a GPU decoder moves batches, whatever its code family.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PipelineOptions {
    /// CUDA device index.
    pub device: usize,
    /// Several devices instead of `device` alone: a decoder per device,
    /// batches dealt to the least busy ([`super::MultiDevice`]).
    pub devices: Option<super::DeviceList>,
    /// With several devices, keep each batch's input until its results are
    /// collected (a host copy of it), so that a device that fails is taken
    /// out and its batches decoded again by the others; without (the
    /// default: the copy is a host pass, which costs several GPUs their
    /// speed-up where the host's memory sets the pace), batches go to the
    /// devices as they lie and a device failure fails the decoder, naming it.
    pub take_out: bool,
    /// Pipeline slots, 1 ..= [`MAX_SLOTS`] (≥ 2 overlaps copies with compute).
    pub slots: usize,
    /// Work units per batch (0 = chosen by the family from the device size).
    pub batch_units: usize,
    /// Host threads that stage input into pinned memory and unpack output
    /// (0: three quarters of the cores; see [`super::default_host_threads`]);
    /// decoders asking for the same count share one pool.
    pub host_threads: usize,
    /// Fill output buffers with this byte before every kernel, so that a bit
    /// the kernel failed to write shows (tests).
    pub poison: Option<u8>,
    /// Give up on a batch still on the GPU after this long, failing with a
    /// message that says so (none: wait as long as it takes).
    pub watchdog: Option<std::time::Duration>,
    /// A fault to inject, for the fault tests (else the one the environment
    /// variable [`super::FAULT_VARIABLE`] names, if any and if it strikes this device).
    pub fault: Option<super::Fault>,
}

/// Longest watchdog a decoder may be given, ms (an hour).
pub const MAX_WATCHDOG_MS: u64 = 3_600_000;

impl Default for PipelineOptions {
    fn default() -> Self {
        Self { device: 0, devices: None, take_out: false, slots: DEFAULT_SLOTS, batch_units: 0, host_threads: 0, poison: None, watchdog: None, fault: None }
    }
}

impl PipelineOptions {
    /// Check the sizes against their limits before anything is allocated.
    pub fn validate(&self) -> anyhow::Result<()> {
        anyhow::ensure!((1..=MAX_SLOTS).contains(&self.slots), "{} pipeline slots; give 1..={MAX_SLOTS}", self.slots);
        anyhow::ensure!(
            self.host_threads <= super::host_pool::MAX_HOST_THREADS,
            "{} host threads; at most {}",
            self.host_threads,
            super::host_pool::MAX_HOST_THREADS
        );
        if let Some(w) = self.watchdog {
            anyhow::ensure!(!w.is_zero() && w.as_millis() <= u128::from(MAX_WATCHDOG_MS), "a watchdog of {w:?}; give 1 ms to {MAX_WATCHDOG_MS} ms");
        }
        Ok(())
    }
}

/// The device buffers of one slot, as a family's kernel launch sees them.
pub(crate) struct SlotBuffers<'a> {
    /// The staged input.
    pub input: &'a DeviceBuf,
    /// The output the pipeline copies back.
    pub output: &'a DeviceBuf,
    /// The family's own buffers (survivor memory, α of a sub-block, ...),
    /// as [`SlotSize::aux_bytes`] asked.
    pub aux: &'a [DeviceBuf],
    /// Per-unit status words the kernel writes (iterations, checks), read
    /// back with the output; zeroed before every launch.
    pub status: Option<&'a DeviceBuf>,
}

/// Where one batch spent its time on the device, in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BatchSplit {
    /// Host→device copy.
    pub h2d_ms: f64,
    /// Kernel.
    pub kernel_ms: f64,
    /// Device→host copy.
    pub d2h_ms: f64,
    /// Host copy of the results out of pinned staging (wall clock).
    pub host_out_ms: f64,
}

struct Slot<I: Copy, O: Copy> {
    stream: Arc<CudaStream>,
    host_in: PinnedBuf<I>,
    dev_in: DeviceBuf,
    dev_out: DeviceBuf,
    host_out: PinnedBuf<O>,
    aux: Vec<DeviceBuf>,
    status: Option<(DeviceBuf, PinnedBuf<u32>)>,
    status_len: usize,
    /// Before and after the copy in of each chunk.
    h2d: Vec<[Event; 2]>,
    /// Chunks the last batch was copied in.
    chunks: usize,
    /// After the kernel, after the copy out.
    done: [Event; 2],
    out_len: usize,
}

/// Most chunks a batch is staged and copied in.
const STAGE_CHUNKS: usize = 4;
/// Fewest bytes worth a chunk of their own.
const CHUNK_MIN_BYTES: usize = 8 << 20;

impl<I: Copy + Send, O: Copy> Slot<I, O> {
    /// Stage `parts` parts of `part_len` items with `fill` in up to
    /// [`STAGE_CHUNKS`] chunks, queueing each chunk's copy in on the slot's
    /// stream as soon as it is staged.
    fn copy_in(
        &mut self,
        host: &rayon::ThreadPool,
        parts: usize,
        part_len: usize,
        mut fill: impl FnMut(&mut [I], std::ops::Range<usize>) -> anyhow::Result<()> + Send,
    ) -> anyhow::Result<()> {
        anyhow::ensure!(parts * part_len <= self.host_in.as_slice().len(), "batch input larger than the slot");
        let s = self.stream.cu_stream();
        let bytes = parts * part_len * std::mem::size_of::<I>();
        let chunks = (bytes / CHUNK_MIN_BYTES).clamp(1, STAGE_CHUNKS).min(parts.max(1));
        let per = parts.div_ceil(chunks).max(1);
        self.chunks = 0;
        for (c, lo) in (0..parts.max(1)).step_by(per).enumerate() {
            let hi = (lo + per).min(parts);
            let items = lo * part_len..hi * part_len;
            let staging = &mut self.host_in.as_mut_slice()[items.clone()];
            if let Err(e) = host.install(|| fill(staging, lo..hi)) {
                // Chunks already queued still read the staging: let them finish.
                let _ = self.stream.synchronize();
                return Err(e);
            }
            self.h2d[c][0].record(s)?;
            // SAFETY: pinned source and device destination are owned by the slot
            // and sized above; neither is touched again until the slot's last event.
            unsafe { result::memcpy_htod_async(self.dev_in.ptr() + (items.start * std::mem::size_of::<I>()) as u64, &self.host_in.as_slice()[items], s) }
                .map_err(cuda("host→device copy"))?;
            self.h2d[c][1].record(s)?;
            self.chunks = c + 1;
        }
        Ok(())
    }
}

/// Sizes of one pipeline slot.
#[derive(Debug, Clone)]
pub(crate) struct SlotSize {
    /// Input items staged per batch.
    pub in_items: usize,
    /// Device input bytes (≥ in_items · size of I; kernels may read past the end).
    pub dev_in_bytes: usize,
    /// Output items per batch.
    pub out_items: usize,
    /// Bytes of each of the family's own device buffers.
    pub aux_bytes: Vec<usize>,
    /// Status words per batch (0: none).
    pub status_words: usize,
}

impl<I: Copy, O: Copy> Slot<I, O> {
    fn buffers(&self) -> SlotBuffers<'_> {
        SlotBuffers { input: &self.dev_in, output: &self.dev_out, aux: &self.aux, status: self.status.as_ref().map(|(d, _)| d) }
    }

    /// Queue, after the copies in: the poison, the zeroed status, the kernel
    /// (`launch`), and the copies of `out_len` items and `status_len` status
    /// words back, with the events that time them.
    fn launch_and_copy_out(
        &mut self,
        poison: Option<u8>,
        out_len: usize,
        status_len: usize,
        launch: impl FnOnce(sys::CUstream, &SlotBuffers) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        let s = self.stream.cu_stream();
        if let Some(b) = poison {
            // SAFETY: the slot's own device buffer, on its stream.
            unsafe { result::memset_d8_async(self.dev_out.ptr(), b, self.dev_out.bytes(), s) }.map_err(cuda("cuMemsetD8Async"))?;
        }
        if let Some((dev, _)) = &self.status {
            // SAFETY: as above.
            unsafe { result::memset_d8_async(dev.ptr(), 0, dev.bytes(), s) }.map_err(cuda("cuMemsetD8Async"))?;
        }
        launch(s, &self.buffers())?;
        self.done[0].record(s)?;
        // SAFETY: pinned destination and device source are owned by the slot
        // and sized by the caller's checks; neither is touched again until the
        // slot's last event.
        unsafe { result::memcpy_dtoh_async(&mut self.host_out.as_mut_slice()[..out_len], self.dev_out.ptr(), s) }
            .map_err(cuda("device→host copy"))?;
        if let (Some((dev, host)), true) = (&mut self.status, status_len > 0) {
            // SAFETY: as above.
            unsafe { result::memcpy_dtoh_async(&mut host.as_mut_slice()[..status_len], dev.ptr(), s) }
                .map_err(cuda("device→host status copy"))?;
        }
        self.done[1].record(s)
    }
}

/// N slots, used round robin.
pub(crate) struct Pipeline<I: Copy, O: Copy> {
    ctx: Arc<CudaContext>,
    slots: Vec<Slot<I, O>>,
    head: usize,
    in_flight: usize,
    poison: Option<u8>,
    last: BatchSplit,
    /// Runs the host's staging and unpacking copies.
    host: Arc<rayon::ThreadPool>,
    /// The caller's memory page-locked for [`Self::submit_registered`];
    /// dropped after the slots, whose streams are synchronised first.
    registered: Registered,
    /// Slots whose copies in may still read the caller's registered memory.
    unread: Vec<usize>,
    /// How long a batch may stay on the GPU.
    watchdog: Option<std::time::Duration>,
    /// The fault a test asked for.
    injector: Option<super::fault::Injector>,
}

impl<I: Copy + Default + Send + Sync, O: Copy + Default + Send + Sync> Pipeline<I, O> {
    /// The slots `options` asks for, of `size`, on the device of `ctx`, the
    /// host's copies on the process's shared pool of `options.host_threads`.
    pub(crate) fn new(ctx: &Arc<CudaContext>, options: &PipelineOptions, size: SlotSize) -> anyhow::Result<Self> {
        options.validate()?;
        Self::allocate(ctx, options, size).map_err(|e| e.context(format!("GPU {}", ctx.ordinal())))
    }

    fn allocate(ctx: &Arc<CudaContext>, options: &PipelineOptions, size: SlotSize) -> anyhow::Result<Self> {
        let fault = super::Fault::of(options.fault, ctx.ordinal())?;
        if fault == Some(super::Fault::OutOfMemory) {
            super::fault::allocate_too_much(ctx)?;
        }
        let injector = fault.map(|f| super::fault::Injector::new(ctx, f)).transpose()?.flatten();
        let host = host_pool(options.host_threads)?;
        let slots = (0..options.slots)
            .map(|_| {
                Ok(Slot {
                    stream: ctx.new_stream().map_err(cuda("cuStreamCreate"))?,
                    host_in: PinnedBuf::new(ctx, size.in_items, true)?,
                    dev_in: DeviceBuf::new(ctx, size.dev_in_bytes.max(size.in_items * std::mem::size_of::<I>()))?,
                    dev_out: DeviceBuf::new(ctx, size.out_items * std::mem::size_of::<O>())?,
                    host_out: PinnedBuf::new(ctx, size.out_items, false)?,
                    aux: size.aux_bytes.iter().map(|&b| DeviceBuf::new(ctx, b)).collect::<anyhow::Result<_>>()?,
                    status: match size.status_words {
                        0 => None,
                        n => Some((DeviceBuf::new(ctx, 4 * n)?, PinnedBuf::new(ctx, n, false)?)),
                    },
                    status_len: 0,
                    h2d: (0..STAGE_CHUNKS).map(|_| Ok([Event::new(ctx)?, Event::new(ctx)?])).collect::<anyhow::Result<_>>()?,
                    chunks: 0,
                    done: [Event::new(ctx)?, Event::new(ctx)?],
                    out_len: 0,
                })
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        Ok(Self {
            ctx: ctx.clone(),
            slots,
            head: 0,
            in_flight: 0,
            poison: options.poison,
            last: BatchSplit::default(),
            host,
            registered: Registered::new(ctx),
            unread: Vec::new(),
            watchdog: options.watchdog,
            injector,
        })
    }

    /// `e` with the device it happened on.
    fn on_device(&self, e: anyhow::Error) -> anyhow::Error {
        e.context(format!("GPU {}", self.ctx.ordinal()))
    }

    /// Threads of the host's copies.
    pub(crate) fn host_threads(&self) -> usize {
        self.host.current_num_threads()
    }

    /// Slots in the pipeline.
    pub(crate) fn depth(&self) -> usize {
        self.slots.len()
    }

    /// Batches submitted and not yet collected.
    pub(crate) fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// Whether the oldest batch's work has ended (or failed), so that
    /// [`Self::collect`] waits for nothing on the device.
    pub(crate) fn oldest_ready(&self) -> bool {
        self.in_flight > 0 && !self.slots[self.oldest()].done[1].pending()
    }

    /// The slot of the oldest batch in flight (with one in flight).
    fn oldest(&self) -> usize {
        let n = self.slots.len();
        (self.head + n - self.in_flight) % n
    }

    /// Stage a batch of `parts` parts of `part_len` input items each with `fill`
    /// (which writes the parts of the range it is given to the slot's pinned
    /// input, a chunk at a time) and copy each chunk in as soon as it is staged;
    /// then run `launch(stream, buffers)` and copy `out_len` output items and
    /// `status_len` status words back, all asynchronously on the slot's stream.
    pub(crate) fn submit(
        &mut self,
        parts: usize,
        part_len: usize,
        fill: impl FnMut(&mut [I], std::ops::Range<usize>) -> anyhow::Result<()> + Send,
        out_len: usize,
        status_len: usize,
        launch: impl FnOnce(sys::CUstream, &SlotBuffers) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        self.check_slot(0, out_len, status_len)?;
        let poison = self.poison;
        let slot = &mut self.slots[self.head];
        let queued = slot.copy_in(&self.host, parts, part_len, fill).and_then(|()| {
            let injected = self.injector.as_mut().map_or(Ok(()), |i| i.before_batch(slot.stream.cu_stream()));
            injected.and_then(|()| slot.launch_and_copy_out(poison, out_len, status_len, launch)).inspect_err(|_| {
                // The copies in may still read the staging: wait for them before the slot is reused.
                let _ = slot.stream.synchronize();
            })
        });
        queued.map_err(|e| self.on_device(e))?;
        self.queued(out_len, status_len);
        Ok(())
    }

    /// Check that the next slot is free and holds `in_bytes` of device
    /// input, `out_len` output items and `status_len` status words, and
    /// make the context current.
    fn check_slot(&self, in_bytes: usize, out_len: usize, status_len: usize) -> anyhow::Result<()> {
        anyhow::ensure!(self.in_flight < self.slots.len(), "every pipeline slot is busy; collect a batch first");
        self.ctx.bind_to_thread().map_err(cuda("cuCtxSetCurrent"))?;
        let slot = &self.slots[self.head];
        anyhow::ensure!(in_bytes <= slot.dev_in.bytes(), "batch input larger than the slot");
        anyhow::ensure!(out_len <= slot.host_out.as_slice().len(), "batch output larger than the slot");
        anyhow::ensure!(
            status_len <= slot.status.as_ref().map_or(0, |(_, h)| h.as_slice().len()),
            "batch status larger than the slot"
        );
        Ok(())
    }

    /// The next slot's batch is queued: it is in flight, and the slot after is next.
    fn queued(&mut self, out_len: usize, status_len: usize) {
        let slot = &mut self.slots[self.head];
        slot.out_len = out_len;
        slot.status_len = status_len;
        self.head = (self.head + 1) % self.slots.len();
        self.in_flight += 1;
    }

    /// Like [`Self::submit`] for input in memory the caller reuses batch
    /// after batch: page-lock it where it lies (once; see [`Registered`]) and
    /// copy it to the device from there, in one piece per registration, then
    /// launch and copy out as `submit` does. The copies may still read
    /// `input` after this returns: the caller keeps it unchanged until
    /// [`Self::registered_read`]. `false`, having done nothing, when the
    /// memory cannot be registered (the caller stages).
    pub(crate) fn submit_registered(
        &mut self,
        input: &[I],
        out_len: usize,
        status_len: usize,
        launch: impl FnOnce(sys::CUstream, &SlotBuffers) -> anyhow::Result<()>,
    ) -> anyhow::Result<bool> {
        // Sizes first: nothing is locked for a batch that cannot go.
        self.check_slot(std::mem::size_of_val(input), out_len, status_len)?;
        let item = std::mem::size_of::<I>();
        let Some(pieces) = self.registered.pieces(input.as_ptr() as usize, std::mem::size_of_val(input), false, true) else {
            return Ok(false);
        };
        let base = input.as_ptr() as usize;
        // Registrations start and end on page boundaries, which items of a
        // page-aligned buffer never straddle.
        let pieces: Vec<_> = pieces.into_iter().map(|r| (r.start - base) / item..(r.end - base) / item).collect();
        let poison = self.poison;
        let slot = &mut self.slots[self.head];
        let s = slot.stream.cu_stream();
        slot.h2d[0][0].record(s)?;
        let queued = (|| {
            for piece in pieces {
                // SAFETY: the piece lies inside `input` (checked by the slice
                // index) and inside one registration; the device buffer holds
                // all of `input` (checked above). The caller keeps `input`
                // unchanged until `registered_read` has waited for this copy.
                unsafe { result::memcpy_htod_async(slot.dev_in.ptr() + (piece.start * item) as u64, &input[piece.clone()], s) }
                    .map_err(cuda("host→device copy"))?;
            }
            slot.h2d[0][1].record(s)?;
            slot.chunks = 1;
            if let Some(i) = self.injector.as_mut() {
                i.before_batch(s)?;
            }
            slot.launch_and_copy_out(poison, out_len, status_len, launch)
        })();
        if let Err(e) = queued {
            let _ = slot.stream.synchronize();
            return Err(self.on_device(e));
        }
        self.unread.push(self.head);
        self.queued(out_len, status_len);
        Ok(true)
    }

    /// Wait until the copies of every [`Self::submit_registered`] batch
    /// have read their input. (A slot reused since records its event
    /// later, which waits longer, never too little.)
    pub(crate) fn registered_read(&mut self) -> anyhow::Result<()> {
        // Drained, not taken: the list keeps its allocation for the next batch.
        let mut read = Ok(());
        for slot in self.unread.drain(..) {
            if read.is_ok() {
                read = self.slots[slot].h2d[0][1].wait();
            }
        }
        // A kernel fault shows in any wait: the device is named as everywhere else.
        read.map_err(|e| self.on_device(e))
    }

    /// Unlock the memory [`Self::submit_registered`] locked: the caller is about to free it.
    pub(crate) fn forget_registered(&mut self) {
        // Nothing may be copying from it while it is unlocked. A device whose
        // kernel the watchdog left running never reads it, and waiting would
        // hang: `clear` leaves its pages locked instead.
        if !super::fault::wedged(self.ctx.ordinal()) {
            let _ = self.registered_read();
        }
        self.registered.clear();
    }

    /// Wait for the oldest batch and hand its output and status words to
    /// `consume`; `false` when nothing is in flight. A failure of any CUDA work
    /// of the batch is reported here with CUDA's message.
    pub(crate) fn collect(&mut self, consume: impl FnOnce(&[O], &[u32]) -> anyhow::Result<()> + Send) -> anyhow::Result<bool> {
        if self.in_flight == 0 {
            return Ok(false);
        }
        let slot = &self.slots[self.oldest()];
        let waited = match self.watchdog {
            None => slot.done[1].wait(),
            Some(limit) => slot.done[1].wait_within(limit).inspect_err(|_| {
                if slot.done[1].pending() {
                    // Never waited for again: not by the slots' drop, nor by a free.
                    super::fault::mark_wedged(self.ctx.ordinal());
                }
            }),
        };
        waited.map_err(|e| self.on_device(e))?;
        // The slot is free again whatever `consume` says.
        self.in_flight -= 1;
        let t = std::time::Instant::now();
        let out = &slot.host_out.as_slice()[..slot.out_len];
        let status = slot.status.as_ref().map_or(&[][..], |(_, h)| &h.as_slice()[..slot.status_len]);
        self.host.install(|| consume(out, status))?;
        let mut h2d_ms = 0.0;
        for [a, b] in &slot.h2d[..slot.chunks] {
            h2d_ms += a.ms_to(b)? as f64;
        }
        let last_in = &slot.h2d[slot.chunks - 1][1];
        self.last = BatchSplit {
            h2d_ms,
            kernel_ms: last_in.ms_to(&slot.done[0])? as f64,
            d2h_ms: slot.done[0].ms_to(&slot.done[1])? as f64,
            host_out_ms: t.elapsed().as_secs_f64() * 1e3,
        };
        Ok(true)
    }

    /// Run `launch` `reps` times on slot 0's data, `parts` parts staged (as in
    /// [`Self::submit`]) and copied in first, and return the mean milliseconds
    /// per launch (kernel only, device resident data). Needs an empty pipeline.
    pub(crate) fn time_launches(
        &mut self,
        parts: usize,
        part_len: usize,
        fill: impl FnMut(&mut [I], std::ops::Range<usize>) -> anyhow::Result<()> + Send,
        reps: usize,
        mut launch: impl FnMut(sys::CUstream, &SlotBuffers) -> anyhow::Result<()>,
    ) -> anyhow::Result<f64> {
        anyhow::ensure!(self.in_flight == 0, "kernel timing needs an idle pipeline");
        self.ctx.bind_to_thread().map_err(cuda("cuCtxSetCurrent"))?;
        let slot = &mut self.slots[0];
        slot.copy_in(&self.host, parts, part_len, fill)?;
        let s = slot.stream.cu_stream();
        launch(s, &slot.buffers())?; // warm-up
        slot.done[0].record(s)?;
        for _ in 0..reps.max(1) {
            launch(s, &slot.buffers())?;
        }
        slot.done[1].record(s)?;
        slot.done[1].wait()?;
        Ok(slot.done[0].ms_to(&slot.done[1])? as f64 / reps.max(1) as f64)
    }

    /// Queue `work` on slot `i`'s stream with its buffers, for input made on
    /// the device (a device link): nothing is staged or copied; `work`
    /// writes the input, launches and reads the output itself. Needs an
    /// empty pipeline.
    pub(crate) fn resident<R>(&mut self, i: usize, work: impl FnOnce(sys::CUstream, &SlotBuffers) -> anyhow::Result<R>) -> anyhow::Result<R> {
        anyhow::ensure!(self.in_flight == 0, "device-made input needs an idle pipeline");
        anyhow::ensure!(i < self.slots.len(), "slot {i} of {}", self.slots.len());
        self.ctx.bind_to_thread().map_err(cuda("cuCtxSetCurrent"))?;
        let slot = &self.slots[i];
        work(slot.stream.cu_stream(), &slot.buffers())
    }

    /// Time split of the batch collected last.
    pub(crate) fn last_split(&self) -> BatchSplit {
        self.last
    }
}

impl<I: Copy, O: Copy> Drop for Pipeline<I, O> {
    fn drop(&mut self) {
        if super::fault::wedged(self.ctx.ordinal()) {
            // A kernel that never ends still uses the slots: they, the locked
            // memory and the context stay until the process ends.
            std::mem::forget(std::mem::take(&mut self.slots));
            std::mem::forget(std::mem::replace(&mut self.registered, Registered::new(&self.ctx)));
            std::mem::forget(self.ctx.clone());
            return;
        }
        // Buffers may only go once no copy or kernel can touch them.
        for s in &self.slots {
            let _ = s.stream.synchronize();
        }
    }
}

/// Append `units` units of `unit_bits` bits to `out`, one `u8` per bit, from
/// `words` holding each unit packed in `unit_words` words (see
/// [`unpack_units`]); split over threads when large: one core moves memory at
/// about 10 GB/s, well below PCIe.
pub(crate) fn par_unpack(out: &mut Vec<u8>, words: &[u32], unit_bits: usize, unit_words: usize) {
    let units = words.len() / unit_words;
    out.reserve(units * unit_bits);
    let spare = &mut out.spare_capacity_mut()[..units * unit_bits];
    par_units(spare, unit_bits, words, unit_words, |d, w| unpack_units(w, unit_words, d, unit_bits));
    // SAFETY: unpack_units wrote every one of the first units · unit_bits spare items.
    unsafe { out.set_len(out.len() + units * unit_bits) };
}

/// Run `copy` over matching chunks of `dst` and `src`, split over threads when
/// the data is large.
pub(crate) fn par_chunks<D: Send, T: Sync>(dst: &mut [D], src: &[T], copy: impl Fn(&mut [D], &[T]) + Sync) {
    par_units(dst, 1, src, 1, copy);
}

/// Like [`par_chunks`] for data made of units, `dst_unit` items each in `dst`
/// and `src_unit` in `src` (a padded pitch on one side): every chunk holds
/// whole units.
pub(crate) fn par_units<D: Send, T: Sync>(
    dst: &mut [D],
    dst_unit: usize,
    src: &[T],
    src_unit: usize,
    copy: impl Fn(&mut [D], &[T]) + Sync,
) {
    // Below PAR_BYTES the hand-off costs more than it saves; above it, chunks
    // of about CHUNK_BYTES keep every thread of rayon's pool busy to the end.
    const PAR_BYTES: usize = 4 << 20;
    const CHUNK_BYTES: usize = 1 << 20;
    let total = std::mem::size_of_val(src) + std::mem::size_of_val(dst);
    if total < PAR_BYTES {
        copy(dst, src);
        return;
    }
    let unit_bytes = src_unit * std::mem::size_of::<T>() + dst_unit * std::mem::size_of::<D>();
    let units = (src.len() / src_unit.max(1)).max(1);
    // A whole number of chunks per thread: 16 chunks on 12 threads left 8
    // threads idle for the second round, a third of the copy's time.
    let threads = rayon::current_num_threads().max(1);
    let pieces = (units / (CHUNK_BYTES / unit_bytes.max(1)).max(1)).max(1).div_ceil(threads) * threads;
    let per = units.div_ceil(pieces).max(1);
    dst.par_chunks_mut(per * dst_unit).zip(src.par_chunks(per * src_unit)).for_each(|(d, c)| copy(d, c));
}
