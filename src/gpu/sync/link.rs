//! The sync link simulated on the device: counter-based information bits,
//! the encoder, the BSID channel and the receiver metric's weights
//! (`kernels/sync_link.cu`), the GPU MAP decoder on those units, and the
//! error count; only each frame's counts come back (four words a frame).
//!
//! Frame f holds information bits f·K .. (f+1)·K and channel inputs
//! f·τ .. (f+1)·τ, and its received bits go whole to one unit of the
//! decoder, as the host link of whole frames (`framing = "frames"`) hands
//! them: so the link is the device twin of
//! [`SyncLink::with_counter_bits`](crate::codes::sync::SyncLink::with_counter_bits):
//! the same bits, channel events and weights, the same decisions (the GPU
//! decoder's are the CPU reference's) and counts.
//!
//! With `ebn0_db` the received bits go on as BPSK over AWGN and arrive as
//! LLRs (`DeviceSyncLink<i8>` or `<f32>`), as
//! [`BsidAwgn`](crate::codes::sync::BsidAwgn) sends them: received bit p of
//! the point's stream is noise sample p of the AWGN's own key (link.cuh's
//! generator, the host's `GaussianNoise`), so each frame needs the number
//! of bits received before it: a batch's frames' lengths are counted first
//! (`sync_link_lens`), then summed onto a running total kept on the device
//! (`sync_link_starts`, one CTA; the batches' sums are ordered across the
//! slots' streams by an event each), then the frames are received as
//! LLRs. `i8` LLRs are quantized by the matched quantizer and their weights
//! looked up in a table of the 255 values made on the host by
//! `receiver_weights` (exact); `f32` weights are computed on the device as
//! `receiver_weights` computes them, the same f64 operations, whose `exp`
//! is CUDA's (at most 1 ulp from the host's libm): a weight can then differ
//! in its last bit only where the f64 value lies within an ulp of an f32
//! rounding boundary, about once in 2^29 samples.
//!
//! A stream's windows (`framing = "stream"`, the default) are refused and
//! run on the host (see [`refuse`]). Why, and what they would take:
//! - The host model is one received stream per point, cut by a
//!   `WindowCutter`: frame k's window starts where the decoding of frame
//!   k − 1 said that frame ended (`cutter.learn(report.consumed)`), so the
//!   windows form one chain through the decoder. Ported as it is, the device
//!   would decode one unit per launch, one CTA on a GPU of over a hundred
//!   SMs, with a launch and a dependent step per frame: no faster than the
//!   CPU decoder, so not worth a port.
//! - Exact and fast needs a different host model: S independent streams
//!   side by side (stream s carrying frames s, s + S, s + 2S, …, each with
//!   its own cutter and its own received positions, so its own AWGN sample
//!   numbers, e.g. sample p of stream s under a key of (seed, s)), decoded
//!   in lockstep, one window per stream a step, counted in frame order so
//!   the tally's stop rule falls where the host's does, and one spare frame
//!   a stream after the last counted (each last window as full as any
//!   other). That is an additive `SyncLink` mode (`streams: S`) in
//!   `codes/sync/link.rs`, statistically the same curve as one stream but
//!   not the same counts.
//! - Its device twin: the BSID events stay keyed by frame (input j of frame
//!   f is Philox block f·τ + j, as here), each frame's received length
//!   comes from `sync_link_lens`, a stream's received positions are the
//!   running sums of its own frames' lengths, and a step writes for each
//!   stream the received bits [start, start + window) of its current frame
//!   and the next ones, regenerated from their events (no ring buffer),
//!   decodes the S windows as one batch (`GpuSync::resident`), then a small
//!   kernel moves each stream's start on by the unit's consumed word (on
//!   the device, no round trip) and counts the S frames. Host work per step
//!   is a few launches; S would be the decoder's batch (waves of resident
//!   CTAs), so a step costs about what a batch of whole frames does.

use super::GpuSync;
use crate::codes::decode::{BatchDecoder, UnitReport};
use crate::codes::error::{CodeResult, invalid};
use crate::codes::sim::{HOST_CHUNK_LIMIT, Link, Tally, UnitCounts, noise_seed};
use crate::codes::channel::{Quantizer, noise_variance};
use crate::codes::sync::channel::{awgn_seed, event_thresholds};
use crate::codes::sync::decoder::{Received, receiver_weights};
use crate::codes::sync::{BsidParams, DecoderConfig, Framing, Sweep, SyncChain, SyncCode, SyncMapDecoder};
use crate::gpu::compile::{compile_cubin, kernels};
use crate::gpu::device::{context, cuda, device_error};
use crate::gpu::link::{CountSlot, LinkKernels, PointChannel, key, launch};
use crate::gpu::memory::{DeviceBuf, Event, PinnedBuf};
use crate::gpu::pipeline::PipelineOptions;
use cudarc::driver::{CudaContext, CudaFunction, result, sys};
use std::collections::VecDeque;
use std::ffi::c_void;
use std::sync::Arc;

/// Threads of the link kernels' CTAs, one CTA a frame (`SL_NT` there).
const CTA: u64 = 256;
/// Words of a frame's counts: bits compared, errors, symbol errors, flags.
const COUNT_WORDS: usize = 4;

/// The count kernel's flags of a frame.
#[derive(Debug, Clone, Copy)]
enum Flag {
    /// The decoder's check failed (the frame left the limits).
    CheckFailed = 1,
    /// The channel deleted the whole frame.
    NothingReceived = 2,
    /// More arrived than a unit holds.
    TooLong = 4,
    /// The decoder did not mark the unit done.
    NotDecoded = 8,
}

impl Flag {
    fn in_word(self, flags: u32) -> bool {
        flags & self as u32 != 0
    }
}

/// The code's shape as the kernels take it (`SyncShape`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct SyncShape {
    n: u32,
    kb: u32,
    symbols: u32,
    q: u32,
    books: u32,
}

/// The channel's event thresholds (`BsidEvents`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct BsidEvents {
    insert: [u64; 32],
    delete: u64,
    flip: u64,
}

/// The weights of a received 0 and 1 (`HardWeights`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct HardWeights {
    w0_zero: f32,
    dw_zero: f32,
    w0_one: f32,
    dw_one: f32,
}

/// The AWGN after the BSID events as the kernels take it (`SoftChannel`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct SoftChannel {
    mode: u32,
    nk0: u32,
    nk1: u32,
    sigma: f32,
    gain: f32,
    scale: f32,
    pt: f64,
    ps: f64,
    w0: [f32; 255],
    dw: [f32; 255],
}

// The kernels' layout of it (sync_link.cu asserts the same).
const _: () = assert!(
    std::mem::size_of::<SoftChannel>() == 2080 && std::mem::offset_of!(SoftChannel, pt) == 24 && std::mem::offset_of!(SoftChannel, w0) == 40
);

/// What the decoder receives: hard bits (`u8`, the BSID channel alone) or
/// LLRs after BPSK over AWGN (`i8` quantized, `f32`).
pub trait DeviceReceived: Received {
    /// The kernels' `SoftChannel::mode`.
    const MODE: u32;
}

impl DeviceReceived for u8 {
    const MODE: u32 = 0;
}

impl DeviceReceived for i8 {
    const MODE: u32 = 1;
}

impl DeviceReceived for f32 {
    const MODE: u32 = 2;
}

/// The link's kernels on one device.
struct Kernels {
    lens: CudaFunction,
    starts: CudaFunction,
    frames: CudaFunction,
    count: CudaFunction,
    common: LinkKernels,
}

/// One batch slot: its information bits, received lengths, the noise
/// sample of each frame's first received bit, counts.
struct Slot {
    info: CountSlot,
    lens: DeviceBuf,
    starts: DeviceBuf,
    counts: DeviceBuf,
    host: PinnedBuf<u32>,
    done: Event,
    /// Recorded after the batch's running sum (`sync_link_starts`): the
    /// next batch's sum waits for it.
    summed: Order,
    frames: usize,
}

/// The decoder of one channel and its slots.
struct Built<T: DeviceReceived> {
    params: BsidParams,
    decoder: GpuSync<T>,
    slots: Vec<Slot>,
    /// The bits received so far in the point (soft input), summed by the
    /// batches in turn.
    received: DeviceBuf,
}

/// The keys and channel of the point being run, and how far it got.
#[derive(Debug, Clone, Copy)]
struct PointState {
    bits_key: [u32; 2],
    channel_key: [u32; 2],
    events: BsidEvents,
    weights: HardWeights,
    soft: SoftChannel,
    /// Frames sent so far.
    frames: i64,
    /// Frames whose lengths the device's running sum holds, and the slot
    /// whose batch summed them last (soft input).
    summed: i64,
    last: Option<usize>,
}

/// A CUDA event that orders work across streams (no timing).
struct Order {
    ev: sys::CUevent,
}

// SAFETY: CUDA events may be used from any thread of the process.
unsafe impl Send for Order {}

impl Order {
    fn new(ctx: &Arc<CudaContext>) -> anyhow::Result<Self> {
        ctx.bind_to_thread().map_err(cuda("cuCtxSetCurrent"))?;
        let ev = result::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING).map_err(cuda("cuEventCreate"))?;
        Ok(Self { ev })
    }

    /// Record on `stream`.
    fn record(&self, stream: sys::CUstream) -> anyhow::Result<()> {
        // SAFETY: live event and stream.
        unsafe { result::event::record(self.ev, stream) }.map_err(cuda("cuEventRecord"))
    }
}

impl Drop for Order {
    fn drop(&mut self) {
        // SAFETY: created by event::create, destroyed once.
        let _ = unsafe { result::event::destroy(self.ev) };
    }
}

/// The sync link of whole frames on a GPU, receiving `T`: hard bits (`u8`)
/// or LLRs (`i8`, `f32`) after AWGN (see the module documentation).
pub struct DeviceSyncLink<T: DeviceReceived = u8> {
    code: SyncCode,
    base: BsidParams,
    sweep: Sweep,
    cfg: DecoderConfig,
    /// Eb/N0 of the AWGN (soft input) and the decoder's input scale.
    ebn0_db: Option<f64>,
    scale: f32,
    device: usize,
    ctx: Arc<CudaContext>,
    kernels: Kernels,
    /// The decoder of the last point's channel (none while the next is built:
    /// each takes a share of the free device memory).
    built: Option<Built<T>>,
    point: Option<PointState>,
}

impl<T: DeviceReceived> DeviceSyncLink<T> {
    /// The device link of `chain` on GPU `device`, whole frames: hard bits
    /// (`u8`) when the chain has no `ebn0_db`, LLRs of `T` when it has.
    pub fn new(chain: &SyncChain, device: usize) -> anyhow::Result<Self> {
        refuse(chain)?;
        let (ebn0_db, scale) = match (chain.ebn0_db(), T::MODE) {
            (None, 0) => (None, 1.0),
            (Some(e), 1) => (Some(e), Quantizer::matched(noise_variance(e, chain.code().rate().min(1.0))?)?.scale()),
            (Some(e), 2) => (Some(e), 1.0),
            (None, _) => anyhow::bail!("the sync device link receives {} only after AWGN: the settings give no ebn0_db", T::NAME),
            (Some(_), _) => anyhow::bail!("the sync device link receives LLRs (i8 or f32) after AWGN at ebn0_db, not {}", T::NAME),
        };
        let ctx = context(device)?;
        let names = ["sync_link_lens", "sync_link_starts", "sync_link_frames", "sync_link_count"];
        let mut f = kernels(&ctx, "sync_link.cu", &names, &[])?.into_iter();
        let mut next = || f.next().expect("four kernels");
        let kernels = Kernels { lens: next(), starts: next(), frames: next(), count: next(), common: LinkKernels::new(&ctx)? };
        let (code, cfg) = (chain.code().clone(), chain.config());
        let built = Some(build::<T>(&ctx, &code, chain.params(), cfg, scale, device)?);
        Ok(Self { code, base: chain.params(), sweep: chain.sweep(), cfg, ebn0_db, scale, device, ctx, kernels, built, point: None })
    }

    /// Queue frames `first .. first + frames` into slot `i`, counting their
    /// bits before stream position `end`.
    fn queue(&mut self, i: usize, st: &mut PointState, first: i64, frames: usize, end: i64) -> anyhow::Result<()> {
        let code = &self.code;
        let k = code.info_bits() as i64;
        let shape = SyncShape {
            n: code.n() as u32,
            kb: code.symbol_bits() as u32,
            symbols: code.symbols() as u32,
            q: code.q() as u32,
            books: code.codebooks() as u32,
        };
        let ks = &self.kernels;
        let Some(Built { decoder, slots, received, .. }) = self.built.as_mut() else { anyhow::bail!("a link runs only after start") };
        let (pitch, window, out_words) = decoder.unit_layout();
        let books = decoder.books_ptr();
        let soft = st.soft.mode != 0;
        // The running sum holds exactly the frames before this batch's.
        anyhow::ensure!(!soft || st.summed == first, "frames from {first} queued after {} summed: a point's frames go in order", st.summed);
        let last = st.last.map(|l| slots[l].summed.ev);
        let slot = &mut slots[i];
        slot.frames = frames;
        let received = received.ptr();
        decoder.resident(i, |s, buffers, decode| {
            let info_first = slot.info.bits(&ks.common, s, first * k, (first + frames as i64) * k, st.bits_key)?;
            if soft {
                let (mut count, mut first_frame, mut tau, [mut k0, mut k1], mut events, mut lens) =
                    (frames as u32, first, (code.n() * code.symbols()) as u32, st.channel_key, st.events, slot.lens.ptr());
                let mut p: [*mut c_void; 7] =
                    [arg(&mut count), arg(&mut first_frame), arg(&mut tau), arg(&mut k0), arg(&mut k1), arg(&mut events), arg(&mut lens)];
                // SAFETY: sync_link_lens' signature; `lens` a word a frame.
                unsafe { launch(&ks.lens, frames as u64 * CTA, s, &mut p, "sync received length kernel") }?;
                if let Some(ev) = last {
                    // SAFETY: live event (the slots outlive every batch) and stream.
                    unsafe { result::stream::wait_event(s, ev, sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT) }.map_err(cuda("cuStreamWaitEvent"))?;
                }
                let (mut lens, mut base, mut reset, mut starts) = (slot.lens.ptr(), received, u32::from(first == 0), slot.starts.ptr());
                let mut p: [*mut c_void; 5] = [arg(&mut lens), arg(&mut count), arg(&mut base), arg(&mut reset), arg(&mut starts)];
                // SAFETY: sync_link_starts' signature; `starts` a u64 a frame, `base` one u64.
                unsafe { launch(&ks.starts, CTA, s, &mut p, "sync received sum kernel") }?;
                slot.summed.record(s)?;
            }
            let (mut units, mut pitch, mut window, mut count, mut first_frame) = (buffers.input.ptr(), pitch as u64, window as u32, frames as u32, first);
            let (mut info, mut info_firstv, mut books, mut shape) = (slot.info.info_ptr(), info_first, books, shape);
            let ([mut k0, mut k1], mut events, mut weights, mut lens) = (st.channel_key, st.events, st.weights, slot.lens.ptr());
            let (mut starts, mut sc) = (slot.starts.ptr(), st.soft);
            let mut p: [*mut c_void; 16] = [
                arg(&mut units),
                arg(&mut pitch),
                arg(&mut window),
                arg(&mut count),
                arg(&mut first_frame),
                arg(&mut info),
                arg(&mut info_firstv),
                arg(&mut books),
                arg(&mut shape),
                arg(&mut k0),
                arg(&mut k1),
                arg(&mut events),
                arg(&mut weights),
                arg(&mut lens),
                arg(&mut starts),
                arg(&mut sc),
            ];
            // SAFETY: sync_link_frames' signature; the slot's input holds a
            // batch of units at this pitch, the information words cover the
            // frames, the codebooks are the decoder's, `lens` a word a frame,
            // `starts` (read with soft input) a u64 a frame, summed above.
            unsafe { launch(&ks.frames, frames as u64 * CTA, s, &mut p, "sync channel kernel") }?;
            decode(frames)?;
            let (mut decoded, mut out_words, mut kb, mut kk, mut end, mut counts) =
                (buffers.output.ptr(), out_words as u32, shape.kb, k as u32, end, slot.counts.ptr());
            let mut p: [*mut c_void; 12] = [
                arg(&mut decoded),
                arg(&mut out_words),
                arg(&mut lens),
                arg(&mut window),
                arg(&mut count),
                arg(&mut first_frame),
                arg(&mut info),
                arg(&mut info_firstv),
                arg(&mut kb),
                arg(&mut kk),
                arg(&mut end),
                arg(&mut counts),
            ];
            // SAFETY: sync_link_count's signature; the decoder's output holds
            // the frames' units, `counts` four words a frame.
            unsafe { launch(&ks.count, frames as u64 * CTA, s, &mut p, "sync error count kernel") }?;
            // SAFETY: the frames' counts into this slot's pinned buffer, read after `done`.
            unsafe { result::memcpy_dtoh_async(&mut slot.host.as_mut_slice()[..COUNT_WORDS * frames], slot.counts.ptr(), s) }.map_err(cuda("cuMemcpyDtoHAsync"))?;
            slot.done.record(s)
        })?;
        if soft {
            st.summed = first + frames as i64;
            st.last = Some(i);
        }
        Ok(())
    }

    /// Add slot `i`'s frames to `tally`, each a unit as the host link adds it.
    fn collect(&mut self, i: usize, tally: &mut Tally) -> anyhow::Result<()> {
        let k = self.code.info_bits();
        let built = self.built.as_ref().ok_or_else(|| anyhow::anyhow!("a link runs only after start"))?;
        let window = built.decoder.unit_layout().1;
        let slot = &built.slots[i];
        slot.done.wait()?;
        for c in slot.host.as_slice()[..COUNT_WORDS * slot.frames].chunks_exact(COUNT_WORDS) {
            let flags = c[3];
            anyhow::ensure!(!Flag::NotDecoded.in_word(flags), "a frame of the batch was not decoded (the decoder's flags)");
            anyhow::ensure!(!Flag::TooLong.in_word(flags), "a frame arrived longer than the {window} bits the decoder takes");
            if tally.done() {
                break;
            }
            // A frame the channel deleted whole is no unit: all of its bits are lost.
            // (The tally reads no unit's `consumed`.)
            let report = match Flag::NothingReceived.in_word(flags) {
                false => UnitReport { bits: k, iterations: 0, blocks: 1, check: Flag::CheckFailed.in_word(flags).then_some(false), consumed: 0 },
                true => UnitReport::default(),
            };
            let counts = UnitCounts { bits: k, compared: c[0] as usize, errors: u64::from(c[1]), symbol_errors: u64::from(c[2]) };
            tally.add_unit_counts(counts, &report);
        }
        Ok(())
    }

    /// Decode and count frames `first .. first + frames` (their bits before
    /// `end`) batch by batch, a batch per pipeline slot in flight, until
    /// counted or the tally's stop rule ends.
    fn count(&mut self, st: &mut PointState, first: i64, frames: i64, end: i64, tally: &mut Tally) -> anyhow::Result<()> {
        let built = self.built.as_ref().ok_or_else(|| anyhow::anyhow!("a link runs only after start"))?;
        let (per, slots) = (built.decoder.batch_units() as i64, built.slots.len());
        let (mut next, last) = (first, first + frames);
        let mut queued = VecDeque::new();
        let mut slot = 0;
        while (next < last || !queued.is_empty()) && !tally.done() {
            if next < last && queued.len() < slots {
                let n = per.min(last - next);
                self.queue(slot, st, next, n as usize, end)?;
                queued.push_back(slot);
                slot = (slot + 1) % slots;
                next += n;
                continue;
            }
            let i = queued.pop_front().expect("a batch in flight");
            self.collect(i, tally)?;
        }
        // A stop leaves batches queued: let them finish before their buffers are reused.
        if let Some(built) = &self.built {
            for i in queued {
                built.slots[i].done.wait()?;
            }
        }
        Ok(())
    }
}

/// Why `chain` cannot run on the device, if it cannot.
fn refuse(chain: &SyncChain) -> anyhow::Result<()> {
    anyhow::ensure!(
        chain.config().framing == Framing::Frames,
        "the sync device link hands the decoder whole frames (framing = \"frames\"); a stream's windows wait for each frame's decoding and run on the host"
    );
    Ok(())
}

/// The GPU decoder of `code` for a channel of `params` on `device`, its
/// LLRs divided by `scale`, and its slots' buffers.
fn build<T: DeviceReceived>(ctx: &Arc<CudaContext>, code: &SyncCode, params: BsidParams, cfg: DecoderConfig, scale: f32, device: usize) -> anyhow::Result<Built<T>> {
    let pipeline = PipelineOptions { device, ..Default::default() };
    let decoder = GpuSync::<T>::new(code.clone(), params, cfg, scale, false, &pipeline)?;
    let frames = decoder.batch_units();
    // CountSlot::bits reaches up to 192 bits before and 64 after the batch's.
    let info_words = (frames * code.info_bits() + 512) / 32 + 2;
    let slots = (0..decoder.slots())
        .map(|_| {
            Ok(Slot {
                info: CountSlot::new(ctx, info_words, 1)?,
                lens: DeviceBuf::new(ctx, 4 * frames)?,
                starts: DeviceBuf::new(ctx, 8 * frames)?,
                counts: DeviceBuf::new(ctx, 4 * COUNT_WORDS * frames)?,
                host: PinnedBuf::new(ctx, COUNT_WORDS * frames, false)?,
                done: Event::new(ctx)?,
                summed: Order::new(ctx)?,
                frames: 0,
            })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok(Built { params, decoder, slots, received: DeviceBuf::new(ctx, 8)? })
}

/// A kernel argument as the driver takes it.
fn arg<X>(x: &mut X) -> *mut c_void {
    (x as *mut X).cast()
}

/// Compile the device link's kernels for architecture `arch` with NVRTC
/// alone, no GPU needed.
pub fn compile_sync_link_kernels(arch: &str) -> anyhow::Result<()> {
    compile_cubin("sync_link.cu", arch, &[]).map(drop)
}

impl SoftChannel {
    /// The AWGN of the point at `ebn0_db` (none for hard bits) after the
    /// BSID channel of `params`, from the point's `seed`, as the host's
    /// [`BsidAwgn`](crate::codes::sync::BsidAwgn) of rate `rate`, its LLRs
    /// quantized by `scale` (`mode` 1) or not (2).
    fn of(mode: u32, ebn0_db: Option<f64>, rate: f64, params: &BsidParams, seed: u64, scale: f32) -> CodeResult<Self> {
        let mut sc = SoftChannel { mode, nk0: 0, nk1: 0, sigma: 0.0, gain: 0.0, scale, pt: params.pt(), ps: params.ps(), w0: [0.0; 255], dw: [0.0; 255] };
        let Some(ebn0_db) = ebn0_db else { return Ok(SoftChannel { mode: 0, ..sc }) };
        let ch = PointChannel::with_noise_seed(ebn0_db, rate, awgn_seed(noise_seed(seed)), scale)?;
        (sc.nk0, sc.nk1, sc.sigma, sc.gain) = (ch.noise_key[0], ch.noise_key[1], ch.sigma, ch.gain);
        if mode == 1 {
            let values: Vec<i8> = (-127..=127).collect();
            receiver_weights::<i8>(&values, params, scale, &mut sc.w0, &mut sc.dw);
        }
        Ok(sc)
    }
}

impl<T: DeviceReceived> Link for DeviceSyncLink<T> {
    fn start(&mut self, x: f64, seed: u64) -> CodeResult<()> {
        let params = self.sweep.at(&self.base, x)?;
        if self.built.as_ref().is_none_or(|b| b.params != params) {
            self.built = None;
            self.built = Some(build::<T>(&self.ctx, &self.code, params, self.cfg, self.scale, self.device).map_err(device_error)?);
        }
        let (insert, delete, flip) = event_thresholds(&params);
        let (mut w0, mut dw) = ([0f32; 2], [0f32; 2]);
        receiver_weights::<u8>(&[0, 1], &params, 1.0, &mut w0, &mut dw);
        self.point = Some(PointState {
            bits_key: key(seed),
            channel_key: key(noise_seed(seed)),
            events: BsidEvents { insert, delete, flip },
            weights: HardWeights { w0_zero: w0[0], dw_zero: dw[0], w0_one: w0[1], dw_one: dw[1] },
            soft: SoftChannel::of(T::MODE, self.ebn0_db, self.code.rate().min(1.0), &params, seed, self.scale)?,
            frames: 0,
            summed: 0,
            last: None,
        });
        Ok(())
    }

    fn check(&self, x: f64) -> CodeResult<()> {
        SyncMapDecoder::<T>::new(self.code.clone(), self.sweep.at(&self.base, x)?, self.cfg, 1).map(drop)
    }

    fn frame_bits(&self) -> usize {
        self.code.info_bits()
    }

    fn symbol_bits(&self) -> usize {
        self.code.symbol_bits()
    }

    fn run(&mut self, bits: u64, _last: bool, tally: &mut Tally) -> CodeResult<()> {
        let mut st = self.point.ok_or_else(|| invalid!("a link runs only after start"))?;
        let k = self.code.info_bits() as i64;
        // Whole frames, as the host link sends them; counted up to the tally's max_bits.
        let frames = i64::try_from(bits.div_ceil(k as u64).max(1)).map_err(|_| invalid!("{bits} bits in one chunk"))?;
        let first = st.frames;
        st.frames += frames;
        self.point = Some(st);
        let room = i64::try_from(tally.room()).unwrap_or(i64::MAX);
        let a = first * k;
        let end = (a + frames * k).min(a.saturating_add(room));
        if end <= a {
            return Ok(());
        }
        let counted = (end - a + k - 1) / k;
        let r = self.count(&mut st, first, counted, end, tally).map_err(device_error);
        self.point = Some(st);
        r
    }

    fn describe(&self) -> String {
        let decoder = self.built.as_ref().map_or_else(|| self.code.describe(), |b| b.decoder.describe());
        let channel = match self.ebn0_db {
            None => "BSID channel".to_string(),
            Some(e) => format!("BSID channel, BPSK over AWGN at {e} dB, {}", T::NAME),
        };
        format!("{decoder}; the whole link on the device (counter-based bits, sync encoder, {channel}, whole frames, error counts)")
    }

    fn chunk_limit(&self) -> u64 {
        self.built.as_ref().map_or(HOST_CHUNK_LIMIT, |b| (b.decoder.batch_units() * b.slots.len() * self.code.info_bits() * 4) as u64)
    }
}
