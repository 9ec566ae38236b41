//! The family-independent half of the device link simulators: the kernels of
//! `kernels/link.cu` (information bits by counter, decoded bits compared with
//! them as error counts per frame, the sum of those counts) and the batch
//! slots that carry a batch's counts back to a [`Tally`]. A family's device
//! link adds its encoder and channel kernel and its decoder between
//! [`CountSlot::bits`] and [`CountSlot::count`].
//!
//! Only the sums cross PCIe: four numbers a batch, and every frame's count
//! only for the batch in which a stop rule falls ([`Tally::add_summary`]).
//!
//! A family whose counted frames are its decoder's units (turbo code blocks,
//! polar codewords) gives its batches as [`UnitBatches`], and [`UnitLink`]
//! makes them a [`Link`].

use super::compile::kernels;
use super::device::cuda;
use super::memory::{DeviceBuf, Event, PinnedBuf};
use super::device::device_error;
use crate::codes::channel::{Awgn, Quantizer, noise_variance};
use crate::codes::error::{CodeResult, invalid};
use crate::codes::sim::{FrameSummary, Link, Tally, noise_seed};
use cudarc::driver::{CudaContext, CudaFunction, result, sys};
use std::ffi::c_void;
use std::sync::Arc;

/// Threads per block of the link kernels.
const THREADS: u32 = 256;

/// The Philox key of a 64-bit seed, as `GaussianNoise::new` takes it.
pub(crate) fn key(seed: u64) -> [u32; 2] {
    [seed as u32, (seed >> 32) as u32]
}

/// The seeds and channel constants of one point, as every family's channel
/// kernel takes them: the bits' and the noise's Philox keys, σ, the LLR
/// gain 2/σ² and the quantizer's scale, computed as the host channel
/// computes them (`Awgn`), so that both send the same LLRs.
#[derive(Debug, Clone, Copy)]
pub struct PointChannel {
    pub bits_key: [u32; 2],
    pub noise_key: [u32; 2],
    pub sigma: f32,
    pub gain: f32,
    pub scale: f32,
}

impl PointChannel {
    /// The point at `ebn0_db` for code rate `rate`, bits and noise from
    /// `seed` (noise from its `noise_seed`), `i8` LLRs quantized by `scale`.
    pub(crate) fn new(ebn0_db: f64, rate: f64, seed: u64, scale: f32) -> CodeResult<Self> {
        Ok(Self { bits_key: key(seed), ..Self::with_noise_seed(ebn0_db, rate, noise_seed(seed), scale)? })
    }

    /// The channel of `Awgn::new(ebn0_db, rate, noise_seed)`, noise from
    /// that seed itself (a channel block's); no bits are drawn.
    pub(crate) fn with_noise_seed(ebn0_db: f64, rate: f64, noise_seed: u64, scale: f32) -> CodeResult<Self> {
        let awgn = Awgn::new(ebn0_db, rate, noise_seed)?;
        Ok(Self { bits_key: [0; 2], noise_key: key(noise_seed), sigma: awgn.sigma(), gain: awgn.llr_gain(), scale })
    }
}

/// Launch `f` over `items` threads (256 a block) on `stream` with `params`.
///
/// # Safety
/// `params` must point at values matching `f`'s signature, and every buffer
/// they name must be large enough for `items` threads.
pub(crate) unsafe fn launch(f: &CudaFunction, items: u64, stream: sys::CUstream, params: &mut [*mut c_void], what: &'static str) -> anyhow::Result<()> {
    let blocks = u32::try_from(items.div_ceil(u64::from(THREADS))).map_err(|_| anyhow::anyhow!("{items} threads in one launch of {what}"))?;
    // SAFETY: as the caller promises.
    unsafe { result::launch_kernel(f.cu_function(), (blocks.max(1), 1, 1), (THREADS, 1, 1), 0, stream, params) }.map_err(cuda(what))
}

/// The kernels of `link.cu` on one device.
pub(crate) struct LinkKernels {
    bits: CudaFunction,
    count: CudaFunction,
    summary: CudaFunction,
    normals: CudaFunction,
}

impl LinkKernels {
    pub(crate) fn new(ctx: &Arc<CudaContext>) -> anyhow::Result<Self> {
        let mut f = kernels(ctx, "link.cu", &["link_bits", "link_count", "link_summary", "link_normals"], &[])?.into_iter();
        let mut next = || f.next().expect("four kernels");
        Ok(Self { bits: next(), count: next(), summary: next(), normals: next() })
    }
}

/// Where a batch's decoded bits lie, for [`CountSlot::count`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct DecodedTiles {
    /// Decoded words: `tiles` runs of `f` bits in `words` words each.
    pub ptr: sys::CUdeviceptr,
    pub tiles: usize,
    pub f: usize,
    pub words: usize,
    /// Stream position of the first decoded bit.
    pub first_bit: i64,
}

/// One batch in flight: its information bits, its per-frame error counts and
/// their sum, and the event that says they are ready.
pub(crate) struct CountSlot {
    info: DeviceBuf,
    counts: DeviceBuf,
    summary: DeviceBuf,
    host: PinnedBuf<u64>,
    done: Event,
    /// Stream position of the first information bit held (a multiple of 128).
    info_first: i64,
    /// The counted range and its frames.
    range: (i64, i64),
    frames: u64,
}

impl CountSlot {
    /// Room for `info_words` information words and `frames` frame counts.
    pub(crate) fn new(ctx: &Arc<CudaContext>, info_words: usize, frames: usize) -> anyhow::Result<Self> {
        Ok(Self {
            info: DeviceBuf::new(ctx, info_words * 4)?,
            counts: DeviceBuf::new(ctx, frames * 4)?,
            summary: DeviceBuf::new(ctx, 4 * 8)?,
            host: PinnedBuf::new(ctx, 4, false)?,
            done: Event::new(ctx)?,
            info_first: 0,
            range: (0, 0),
            frames: 0,
        })
    }

    /// Frame counts the slot holds.
    pub(crate) fn frame_room(&self) -> usize {
        self.counts.bytes() / 4
    }

    /// Information words the slot holds.
    pub(crate) fn info_room(&self) -> usize {
        self.info.bytes() / 4
    }

    /// Generate the information bits of stream positions `from .. to` (and
    /// the rest of their words) under `bits_key`, on `stream`: `from` is
    /// rounded down to a multiple of 128 and 64 more before, so that an
    /// encoder reading back K ≤ 64 bits and the comparison's funnel shifts
    /// stay inside. Returns the position of the first bit held.
    pub(crate) fn bits(&mut self, k: &LinkKernels, stream: sys::CUstream, from: i64, to: i64, bits_key: [u32; 2]) -> anyhow::Result<i64> {
        let first = (from - 64).div_euclid(128) * 128;
        let words = (to + 64 - first + 31) as usize / 32;
        anyhow::ensure!(words <= self.info_room(), "{words} information words in a slot of {}", self.info_room());
        self.info_first = first;
        let (mut ptr, mut first_word, mut n, [mut k0, mut k1]) = (self.info.ptr(), first / 32, words as u32, bits_key);
        let mut p: [*mut c_void; 5] = [
            (&mut ptr as *mut sys::CUdeviceptr).cast(),
            (&mut first_word as *mut i64).cast(),
            (&mut n as *mut u32).cast(),
            (&mut k0 as *mut u32).cast(),
            (&mut k1 as *mut u32).cast(),
        ];
        // SAFETY: link_bits(u32*, long long, u32, u32, u32); `words` words fit.
        unsafe { launch(&k.bits, words as u64, stream, &mut p, "information bits kernel") }?;
        Ok(first)
    }

    /// Device address of the information words (bit 0 at [`Self::bits`]'s position).
    pub(crate) fn info_ptr(&self) -> sys::CUdeviceptr {
        self.info.ptr()
    }

    /// Device address of the per-frame error counts of [`Self::count`],
    /// the first frame of its range first.
    pub(crate) fn counts_ptr(&self) -> sys::CUdeviceptr {
        self.counts.ptr()
    }

    /// Compare `dec` with the information bits over stream positions `a ..
    /// b` in frames of `frame_bits`, sum the counts and start their copy
    /// home; [`Self::collect`] waits for them.
    pub(crate) fn count(&mut self, k: &LinkKernels, stream: sys::CUstream, dec: DecodedTiles, a: i64, b: i64, frame_bits: usize) -> anyhow::Result<()> {
        let fb = frame_bits as i64;
        let frames = ((b - 1).div_euclid(fb) - a.div_euclid(fb) + 1) as usize;
        anyhow::ensure!(frames <= self.frame_room(), "{frames} frames in a slot of {}", self.frame_room());
        self.range = (a, b);
        self.frames = frames as u64;
        // SAFETY: device buffers of at least these sizes, owned by self.
        unsafe {
            result::memset_d8_async(self.counts.ptr(), 0, frames * 4, stream).map_err(cuda("cuMemsetD8Async"))?;
            result::memset_d8_async(self.summary.ptr(), 0, 32, stream).map_err(cuda("cuMemsetD8Async"))?;
        }
        let (mut dp, mut tiles, mut f, mut words, mut first_bit) = (dec.ptr, dec.tiles as u32, dec.f as u32, dec.words as u32, dec.first_bit);
        let (mut info, mut info_first, mut a, mut b, mut fb, mut counts) = (self.info.ptr(), self.info_first, a, b, fb, self.counts.ptr());
        let mut p: [*mut c_void; 11] = [
            (&mut dp as *mut sys::CUdeviceptr).cast(),
            (&mut tiles as *mut u32).cast(),
            (&mut f as *mut u32).cast(),
            (&mut words as *mut u32).cast(),
            (&mut first_bit as *mut i64).cast(),
            (&mut info as *mut sys::CUdeviceptr).cast(),
            (&mut info_first as *mut i64).cast(),
            (&mut a as *mut i64).cast(),
            (&mut b as *mut i64).cast(),
            (&mut fb as *mut i64).cast(),
            (&mut counts as *mut sys::CUdeviceptr).cast(),
        ];
        // SAFETY: link_count's signature; the caller's tiles and this slot's
        // information words cover the range, the counts its frames.
        unsafe { launch(&k.count, (dec.tiles * dec.words) as u64, stream, &mut p, "error count kernel") }?;
        let (mut counts, mut n, mut out) = (self.counts.ptr(), frames as u32, self.summary.ptr());
        let mut p: [*mut c_void; 3] = [(&mut counts as *mut sys::CUdeviceptr).cast(), (&mut n as *mut u32).cast(), (&mut out as *mut sys::CUdeviceptr).cast()];
        // SAFETY: link_summary(const u32*, u32, u64*): `frames` counts, four sums.
        unsafe { launch(&k.summary, frames as u64, stream, &mut p, "error sum kernel") }?;
        // SAFETY: four u64 into pinned memory this slot owns; read only after `done`.
        unsafe { result::memcpy_dtoh_async(self.host.as_mut_slice(), self.summary.ptr(), stream) }.map_err(cuda("cuMemcpyDtoHAsync"))?;
        self.done.record(stream)
    }

    /// Wait for the batch queued by [`Self::count`] without counting it.
    pub(crate) fn wait(&self) -> anyhow::Result<()> {
        self.done.wait()
    }

    /// Wait for the counts of [`Self::count`] and add them to `tally`
    /// (every frame's count is fetched only if a stop rule falls inside).
    pub(crate) fn collect(&mut self, tally: &mut Tally) -> anyhow::Result<()> {
        self.done.wait()?;
        let h = self.host.as_slice();
        let summary = FrameSummary { frames: self.frames, first: h[2] as u32, last: h[3] as u32, inner_errors: h[0], inner_error_frames: h[1] };
        let (a, b) = self.range;
        let counts = &self.counts;
        let frames = self.frames as usize;
        tally.add_summary((b - a) as u64, &summary, || -> anyhow::Result<Vec<u32>> {
            let mut all = vec![0u32; frames];
            // SAFETY: `frames` counts written by the finished batch.
            unsafe { result::memcpy_dtoh_sync(&mut all, counts.ptr()) }.map_err(cuda("cuMemcpyDtoH"))?;
            Ok(all)
        })?;
        Ok(())
    }
}

/// A family's device link of whole units, each a counted frame, as
/// [`UnitLink`] drives it: unit u holds information bits u·K .. (u+1)·K of
/// the stream, and batches of units are queued on the slots in turn and
/// collected in order.
pub trait UnitBatches: Send {
    /// K, the information bits of a unit.
    fn unit_bits(&self) -> usize;
    /// Information bits over channel bits: the rate of Eb/N0.
    fn rate(&self) -> f64;
    /// Units in a batch.
    fn batch_units(&self) -> usize;
    /// Batch slots.
    fn slots(&self) -> usize;
    /// Queue units `first .. first + units` into slot `i`, sent over the
    /// point's channel `ch`, counting stream positions `a .. b` of them
    /// (`a` at the first unit's start).
    fn queue(&mut self, i: usize, ch: &PointChannel, first: i64, units: usize, a: i64, b: i64) -> anyhow::Result<()>;
    /// Add slot `i`'s counts to `tally`.
    fn collect(&mut self, i: usize, tally: &mut Tally) -> anyhow::Result<()>;
    /// Wait for slot `i`'s batch without counting it.
    fn wait(&self, i: usize) -> anyhow::Result<()>;
    /// The decoder and what runs where.
    fn describe(&self) -> String;
}

/// The line a device link describes itself by: its decoder's, and what runs
/// on the device, the family's `encoder` and LLRs of type `llr` among them.
pub(crate) fn device_link_line(decoder: &str, encoder: &str, llr: &str) -> String {
    format!("{decoder}; the whole link on the device (counter-based bits, {encoder}, BPSK over AWGN, {llr} LLRs, error counts)")
}

/// The [`Link`] of a family's [`UnitBatches`]: whole units, as the host
/// links send them, `i8` LLRs quantized with the matched scale of each point.
pub struct UnitLink<B> {
    batches: B,
    /// The point's channel and the units sent so far.
    point: Option<(PointChannel, i64)>,
}

impl<B: UnitBatches> UnitLink<B> {
    pub(crate) fn of(batches: B) -> Self {
        Self { batches, point: None }
    }

    /// Decode and count units `first .. first + units` (positions `a .. b`
    /// of them) batch by batch, a batch per slot in flight, until counted
    /// or the tally's stop rule ends.
    fn count(&mut self, ch: &PointChannel, first: i64, units: i64, a: i64, b: i64, tally: &mut Tally) -> anyhow::Result<()> {
        if b <= a {
            return Ok(());
        }
        let k = self.batches.unit_bits() as i64;
        let (per, slots) = (self.batches.batch_units() as i64, self.batches.slots());
        let (mut next, end) = (first, first + units.min((b - a + k - 1) / k));
        let mut queued = std::collections::VecDeque::new();
        let mut slot = 0;
        while (next < end || !queued.is_empty()) && !tally.done() {
            if next < end && queued.len() < slots {
                let n = per.min(end - next);
                self.batches.queue(slot, ch, next, n as usize, (next * k).max(a), ((next + n) * k).min(b))?;
                queued.push_back(slot);
                slot = (slot + 1) % slots;
                next += n;
                continue;
            }
            let i = queued.pop_front().expect("a batch in flight");
            self.batches.collect(i, tally)?;
        }
        // A stop leaves batches queued: let them finish before their buffers are reused.
        for i in queued {
            self.batches.wait(i)?;
        }
        Ok(())
    }
}

impl<B: UnitBatches> Link for UnitLink<B> {
    fn start(&mut self, ebn0_db: f64, seed: u64) -> CodeResult<()> {
        let rate = self.batches.rate();
        let scale = Quantizer::matched(noise_variance(ebn0_db, rate)?)?.scale();
        self.point = Some((PointChannel::new(ebn0_db, rate, seed, scale)?, 0));
        Ok(())
    }

    fn check(&self, ebn0_db: f64) -> CodeResult<()> {
        noise_variance(ebn0_db, self.batches.rate()).map(drop)
    }

    fn frame_bits(&self) -> usize {
        self.batches.unit_bits()
    }

    fn run(&mut self, bits: u64, _last: bool, tally: &mut Tally) -> CodeResult<()> {
        let (ch, first) = self.point.ok_or_else(|| invalid!("a link runs only after start"))?;
        let k = self.batches.unit_bits() as i64;
        // Whole units, as the host links send; counted up to the tally's max_bits.
        let units = i64::try_from(bits.div_ceil(k as u64)).map_err(|_| invalid!("{bits} bits in one chunk"))?;
        self.point = Some((ch, first + units));
        let room = i64::try_from(tally.room()).unwrap_or(i64::MAX);
        let (a, b) = (first * k, (first + units) * k);
        self.count(&ch, first, units, a, b.min(a.saturating_add(room)), tally).map_err(device_error)
    }

    fn describe(&self) -> String {
        self.batches.describe()
    }

    fn chunk_limit(&self) -> u64 {
        (self.batches.batch_units() * self.batches.unit_bits() * 16) as u64
    }
}

/// The device's standard normals of samples `first .. first + n` of the
/// noise of `seed` (the `GaussianNoise` recipe), on GPU `device`: what the
/// tests hold against the host's noise bit for bit.
pub fn device_normals(device: usize, seed: u64, first: u64, n: usize) -> anyhow::Result<Vec<f32>> {
    let ctx = super::device::context(device)?;
    let k = LinkKernels::new(&ctx)?;
    let buf = DeviceBuf::new(&ctx, n * 4)?;
    let stream = ctx.default_stream();
    let (mut z, mut first, mut count, [mut k0, mut k1]) = (buf.ptr(), first, n as u32, key(seed));
    let mut p: [*mut c_void; 5] = [
        (&mut z as *mut sys::CUdeviceptr).cast(),
        (&mut first as *mut u64).cast(),
        (&mut count as *mut u32).cast(),
        (&mut k0 as *mut u32).cast(),
        (&mut k1 as *mut u32).cast(),
    ];
    // SAFETY: link_normals(float*, u64, u32, u32, u32) over `n` floats.
    unsafe { launch(&k.normals, n as u64, stream.cu_stream(), &mut p, "normals kernel") }?;
    let mut out = vec![0f32; n];
    stream.synchronize().map_err(cuda("cuStreamSynchronize"))?;
    // SAFETY: `n` floats written above.
    unsafe { result::memcpy_dtoh_sync(&mut out, buf.ptr()) }.map_err(cuda("cuMemcpyDtoH"))?;
    Ok(out)
}
