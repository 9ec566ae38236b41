//! The sync link simulated on the device: counter-based information bits,
//! the encoder, the BSID channel and the receiver metric's weights
//! (`kernels/sync_link.cu`), the GPU MAP decoder on those units, and the
//! error count; only each frame's counts come back (four words a frame).
//!
//! Frame f holds information bits f·K .. (f+1)·K and channel inputs
//! f·τ .. (f+1)·τ, and its received bits go whole to one unit of the
//! decoder, as the host link of whole frames (`framing = "frames"`) hands
//! them: so the link is the device twin of
//! [`SyncLink::with_counter_bits`](crate::codes::sync::SyncLink::with_counter_bits)
//! with hard bits: the same bits, channel events and weights, the same
//! decisions (the GPU decoder's are the CPU reference's) and counts. A
//! stream's windows (`framing = "stream"`) start where the decoder found the
//! last frame's end, one frame after another; LLRs after AWGN (`ebn0_db`)
//! are not ported: both run on the host.

use super::GpuSync;
use crate::codes::decode::{BatchDecoder, UnitReport};
use crate::codes::error::{CodeResult, invalid};
use crate::codes::sim::{HOST_CHUNK_LIMIT, Link, Tally, UnitCounts, noise_seed};
use crate::codes::sync::channel::event_thresholds;
use crate::codes::sync::decoder::receiver_weights;
use crate::codes::sync::{BsidParams, DecoderConfig, Framing, Sweep, SyncChain, SyncCode, SyncMapDecoder};
use crate::gpu::compile::{compile_cubin, kernels};
use crate::gpu::device::{context, cuda, device_error};
use crate::gpu::link::{CountSlot, LinkKernels, key, launch};
use crate::gpu::memory::{DeviceBuf, Event, PinnedBuf};
use crate::gpu::pipeline::PipelineOptions;
use cudarc::driver::{CudaContext, CudaFunction, result};
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

/// The link's kernels on one device.
struct Kernels {
    frames: CudaFunction,
    count: CudaFunction,
    common: LinkKernels,
}

/// One batch slot: its information bits, received lengths, counts.
struct Slot {
    info: CountSlot,
    lens: DeviceBuf,
    counts: DeviceBuf,
    host: PinnedBuf<u32>,
    done: Event,
    frames: usize,
}

/// The decoder of one channel and its slots.
struct Built {
    params: BsidParams,
    decoder: GpuSync<u8>,
    slots: Vec<Slot>,
}

/// The keys and channel of the point being run, and how far it got.
#[derive(Debug, Clone, Copy)]
struct PointState {
    bits_key: [u32; 2],
    channel_key: [u32; 2],
    events: BsidEvents,
    weights: HardWeights,
    /// Frames sent so far.
    frames: i64,
}

/// The sync link of whole frames of hard bits on a GPU (see the module
/// documentation).
pub struct DeviceSyncLink {
    code: SyncCode,
    base: BsidParams,
    sweep: Sweep,
    cfg: DecoderConfig,
    device: usize,
    ctx: Arc<CudaContext>,
    kernels: Kernels,
    /// The decoder of the last point's channel (none while the next is built:
    /// each takes a share of the free device memory).
    built: Option<Built>,
    point: Option<PointState>,
}

impl DeviceSyncLink {
    /// The device link of `chain` on GPU `device`: hard bits, whole frames.
    pub fn new(chain: &SyncChain, device: usize) -> anyhow::Result<Self> {
        refuse(chain)?;
        let ctx = context(device)?;
        let mut f = kernels(&ctx, "sync_link.cu", &["sync_link_frames", "sync_link_count"], &[])?.into_iter();
        let mut next = || f.next().expect("two kernels");
        let kernels = Kernels { frames: next(), count: next(), common: LinkKernels::new(&ctx)? };
        let (code, cfg) = (chain.code().clone(), chain.config());
        let built = Some(build(&ctx, &code, chain.params(), cfg, device)?);
        Ok(Self { code, base: chain.params(), sweep: chain.sweep(), cfg, device, ctx, kernels, built, point: None })
    }

    /// Queue frames `first .. first + frames` into slot `i`, counting their
    /// bits before stream position `end`.
    fn queue(&mut self, i: usize, st: &PointState, first: i64, frames: usize, end: i64) -> anyhow::Result<()> {
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
        let Some(Built { decoder, slots, .. }) = self.built.as_mut() else { anyhow::bail!("a link runs only after start") };
        let (pitch, window, out_words) = decoder.unit_layout();
        let books = decoder.books_ptr();
        let slot = &mut slots[i];
        slot.frames = frames;
        decoder.resident(i, |s, buffers, decode| {
            let info_first = slot.info.bits(&ks.common, s, first * k, (first + frames as i64) * k, st.bits_key)?;
            let (mut units, mut pitch, mut window, mut count, mut first_frame) = (buffers.input.ptr(), pitch as u64, window as u32, frames as u32, first);
            let (mut info, mut info_firstv, mut books, mut shape) = (slot.info.info_ptr(), info_first, books, shape);
            let ([mut k0, mut k1], mut events, mut weights, mut lens) = (st.channel_key, st.events, st.weights, slot.lens.ptr());
            let mut p: [*mut c_void; 14] = [
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
            ];
            // SAFETY: sync_link_frames' signature; the slot's input holds a
            // batch of units at this pitch, the information words cover the
            // frames, the codebooks are the decoder's, `lens` a word a frame.
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
        })
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
    fn count(&mut self, st: &PointState, first: i64, frames: i64, end: i64, tally: &mut Tally) -> anyhow::Result<()> {
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
        chain.ebn0_db().is_none(),
        "the sync device link sends hard bits (the BSID channel alone); LLRs after AWGN (ebn0_db) run on the host"
    );
    anyhow::ensure!(
        chain.config().framing == Framing::Frames,
        "the sync device link hands the decoder whole frames (framing = \"frames\"); a stream's windows wait for each frame's decoding and run on the host"
    );
    Ok(())
}

/// The GPU decoder of `code` for a channel of `params` on `device`, and
/// its slots' buffers.
fn build(ctx: &Arc<CudaContext>, code: &SyncCode, params: BsidParams, cfg: DecoderConfig, device: usize) -> anyhow::Result<Built> {
    let pipeline = PipelineOptions { device, ..Default::default() };
    let decoder = GpuSync::<u8>::new(code.clone(), params, cfg, 1.0, false, &pipeline)?;
    let frames = decoder.batch_units();
    // CountSlot::bits reaches up to 192 bits before and 64 after the batch's.
    let info_words = (frames * code.info_bits() + 512) / 32 + 2;
    let slots = (0..decoder.slots())
        .map(|_| {
            Ok(Slot {
                info: CountSlot::new(ctx, info_words, 1)?,
                lens: DeviceBuf::new(ctx, 4 * frames)?,
                counts: DeviceBuf::new(ctx, 4 * COUNT_WORDS * frames)?,
                host: PinnedBuf::new(ctx, COUNT_WORDS * frames, false)?,
                done: Event::new(ctx)?,
                frames: 0,
            })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok(Built { params, decoder, slots })
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

impl Link for DeviceSyncLink {
    fn start(&mut self, x: f64, seed: u64) -> CodeResult<()> {
        let params = self.sweep.at(&self.base, x)?;
        if self.built.as_ref().is_none_or(|b| b.params != params) {
            self.built = None;
            self.built = Some(build(&self.ctx, &self.code, params, self.cfg, self.device).map_err(device_error)?);
        }
        let (insert, delete, flip) = event_thresholds(&params);
        let (mut w0, mut dw) = ([0f32; 2], [0f32; 2]);
        receiver_weights::<u8>(&[0, 1], &params, 1.0, &mut w0, &mut dw);
        self.point = Some(PointState {
            bits_key: key(seed),
            channel_key: key(noise_seed(seed)),
            events: BsidEvents { insert, delete, flip },
            weights: HardWeights { w0_zero: w0[0], dw_zero: dw[0], w0_one: w0[1], dw_one: dw[1] },
            frames: 0,
        });
        Ok(())
    }

    fn check(&self, x: f64) -> CodeResult<()> {
        SyncMapDecoder::<u8>::new(self.code.clone(), self.sweep.at(&self.base, x)?, self.cfg, 1).map(drop)
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
        self.count(&st, first, counted, end, tally).map_err(device_error)
    }

    fn describe(&self) -> String {
        let decoder = self.built.as_ref().map_or_else(|| self.code.describe(), |b| b.decoder.describe());
        format!("{decoder}; the whole link on the device (counter-based bits, sync encoder, BSID channel, whole frames, error counts)")
    }

    fn chunk_limit(&self) -> u64 {
        self.built.as_ref().map_or(HOST_CHUNK_LIMIT, |b| (b.decoder.batch_units() * b.slots.len() * self.code.info_bits() * 4) as u64)
    }
}
