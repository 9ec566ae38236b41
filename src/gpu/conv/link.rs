//! The convolutional link simulated on the device: counter-based information
//! bits, the encoder and puncturer, BPSK over AWGN and the quantizer
//! (`kernels/conv_link.cu`), the Viterbi kernel over the tiles, and the error
//! count (`kernels/link.cu`); only the counts come back.
//!
//! Every sent LLR is a function of its stream position alone, and so is
//! every tile's decoding, so a batch is any run of tiles: no state crosses
//! from one to the next. The link is the device twin of
//! [`ConvLink::with_counter_bits`](crate::codes::conv::ConvLink::with_counter_bits)
//! with the same tiles: the same bits, noise and LLRs, and, the Viterbi
//! kernel being the CPU tiled model bit for bit, the same decoded bits and
//! counts. Like the host tiler, it counts a tile's bits only once the stream
//! reaches the end of the tile's window (or has ended), so that a tile is
//! decoded from the LLRs the host link would decode it from.

use super::kernel::ViterbiKernel;
use super::ViterbiTuning;
use crate::codes::conv::{ConvChain, ConvEncoder, ConvSetup, EncoderMode, TileConfig, ViterbiLlr, ViterbiMode};
use crate::codes::llr::LlrType;
use crate::codes::error::{CodeResult, invalid};
use crate::codes::sim::{Link, Tally};
use crate::gpu::compile::kernel;
use crate::gpu::device::{context, cuda, device_error};
use crate::gpu::link::{CountSlot, DecodedTiles, LinkKernels, PointChannel, launch};
use crate::gpu::memory::DeviceBuf;
use cudarc::driver::{CudaContext, CudaFunction, CudaStream, sys};
use std::ffi::c_void;
use std::marker::PhantomData;
use std::sync::Arc;

/// Most bytes of LLRs a batch holds on the device.
const BATCH_LLR_BYTES: usize = 256 << 20;
/// Most tiles a batch holds.
const MAX_BATCH_TILES: usize = 1 << 20;
/// Most frame counts a batch holds (frames of fewer bits than a batch's
/// tiles make smaller batches).
const MAX_BATCH_FRAMES: usize = 1 << 22;
/// Batches in flight: the next is queued while the host adds up the last.
const SLOTS: usize = 2;

/// One batch's device buffers.
struct Slot {
    llr: DeviceBuf,
    ring: DeviceBuf,
    dec: DeviceBuf,
    count: CountSlot,
}

/// The seeds and channel of the point being run, and how far it got.
#[derive(Debug, Clone, Copy)]
struct PointState {
    ch: PointChannel,
    /// Information bits sent so far.
    sent: i64,
    /// Information bits counted so far.
    counted: i64,
}

/// The convolutional link of a tiled chain on a GPU, `T` LLRs at the
/// decoder (see the module documentation).
///
/// # Example
/// ```no_run
/// use gpufec::codes::conv::ConvSettings;
/// use gpufec::codes::settings::Settings;
/// use gpufec::codes::sim::{Link, StopRule, run_point};
/// use gpufec::gpu::DeviceConvLink;
/// use std::sync::atomic::AtomicBool;
/// let chain = ConvSettings::default().resolve().unwrap();
/// let mut link = DeviceConvLink::<i8>::new(&chain, 0).unwrap();
/// let stop = StopRule { max_bits: 1 << 30, max_errors: 1000 };
/// let p = run_point(&mut link, 4.0, 1, stop, &AtomicBool::new(false), std::time::Duration::from_secs(1), |_| {}).unwrap();
/// assert!(p.bits > 0);
/// ```
pub struct DeviceConvLink<T: ViterbiLlr> {
    setup: ConvSetup,
    tile: TileConfig,
    viterbi: ViterbiKernel,
    llrs: CudaFunction,
    common: LinkKernels,
    _ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    slots: Vec<Slot>,
    /// Tiles per batch.
    batch_tiles: usize,
    /// Sent LLRs per tile.
    tile_llrs: usize,
    point: Option<PointState>,
    _llr: PhantomData<T>,
}

impl<T: ViterbiLlr> DeviceConvLink<T> {
    /// The device link of `chain` (tiles of a stream; its decoder
    /// depunctures on load) on GPU `device`.
    pub fn new(chain: &ConvChain, device: usize) -> anyhow::Result<Self> {
        let setup = chain.setup().clone();
        setup.validate()?;
        let ViterbiMode::Tiled(tile) = setup.mode else {
            anyhow::bail!("the device link simulates streams decoded in tiles; terminated frames run on the host");
        };
        let ctx = context(device)?;
        ctx.bind_to_thread().map_err(cuda("cuCtxSetCurrent"))?;
        let pattern = (!setup.puncture.is_identity()).then_some(&setup.puncture);
        let viterbi = ViterbiKernel::new(&ctx, &setup.trellis, &tile, pattern, T::TYPE, ViterbiTuning::default())?;
        let llrs = kernel(&ctx, "conv_link.cu", "conv_link_llrs", &llr_defines::<T>(&setup)?)?;
        let common = LinkKernels::new(&ctx)?;
        let stream = ctx.new_stream().map_err(cuda("cuStreamCreate"))?;
        let p = &setup.puncture;
        let tile_llrs = tile.f / p.period() * p.kept_per_period();
        let tile_bytes = tile_llrs * size_of::<T>();
        let batch_tiles = (BATCH_LLR_BYTES / tile_bytes).min(MAX_BATCH_TILES).min((MAX_BATCH_FRAMES - 2) * setup.frame_bits / tile.f).max(1);
        let margin = p.kept_before((tile.v1 + tile.v2) as isize) as usize + 2 * p.kept_per_period();
        let llr_bytes = (batch_tiles * tile_llrs + margin) * size_of::<T>() + viterbi.geometry.overread;
        let info_words = (batch_tiles * tile.f + tile.v1 + tile.v2 + 512) / 32;
        let frames = batch_tiles * tile.f / setup.frame_bits + 2;
        let words = tile.f.div_ceil(32);
        let slots = (0..SLOTS)
            .map(|_| {
                Ok(Slot {
                    llr: DeviceBuf::new(&ctx, llr_bytes)?,
                    ring: DeviceBuf::new(&ctx, viterbi.ring_bytes(batch_tiles))?,
                    dec: DeviceBuf::new(&ctx, batch_tiles * words * 4)?,
                    count: CountSlot::new(&ctx, info_words, frames)?,
                })
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        Ok(Self { setup, tile, viterbi, llrs, common, _ctx: ctx, stream, slots, batch_tiles, tile_llrs, point: None, _llr: PhantomData })
    }

    /// Queue batch `[k0, k1)` of tiles, counting positions `a .. b`, into
    /// slot `i`.
    fn queue(&mut self, i: usize, st: &PointState, k0: i64, k1: i64, a: i64, b: i64) -> anyhow::Result<()> {
        let (t, p) = (self.tile, &self.setup.puncture);
        let s = self.stream.cu_stream();
        let slot = &mut self.slots[i];
        let (first_stage, last_stage) = (k0 * t.f as i64 - t.v1 as i64, k1 * t.f as i64 + t.v2 as i64);
        let info_first = slot.count.bits(&self.common, s, first_stage, last_stage.max(b), st.ch.bits_key)?;
        // The sent LLRs of the tiles' windows, laid end to end: tile j starts j tiles' LLRs in.
        let g0 = p.kept_before(first_stage as isize) as i64;
        let len = p.kept_before(last_stage as isize) as i64 - g0;
        let (mut out, mut g0v, mut lenv, mut info, mut info_firstv, mut end) = (slot.llr.ptr(), g0, len as u32, slot.count.info_ptr(), info_first, st.sent);
        let ([mut k0n, mut k1n], mut sigma, mut gain, mut scale) = (st.ch.noise_key, st.ch.sigma, st.ch.gain, st.ch.scale);
        let mut params: [*mut c_void; 11] = [
            (&mut out as *mut sys::CUdeviceptr).cast(),
            (&mut g0v as *mut i64).cast(),
            (&mut lenv as *mut u32).cast(),
            (&mut info as *mut sys::CUdeviceptr).cast(),
            (&mut info_firstv as *mut i64).cast(),
            (&mut end as *mut i64).cast(),
            (&mut k0n as *mut u32).cast(),
            (&mut k1n as *mut u32).cast(),
            (&mut sigma as *mut f32).cast(),
            (&mut gain as *mut f32).cast(),
            (&mut scale as *mut f32).cast(),
        ];
        let threads = ((g0 + len - 1).div_euclid(64) - g0.div_euclid(64) + 1) as u64 * 16;
        // SAFETY: conv_link_llrs' signature; `len` LLRs fit the slot (sized
        // for a batch's tiles and their overlap) and the information words
        // cover every stage read.
        unsafe { launch(&self.llrs, threads, s, &mut params, "channel kernel") }?;
        let tiles = (k1 - k0) as usize;
        let pitch = t.group * self.tile_llrs * size_of::<T>();
        self.viterbi.launch(s, slot.llr.ptr(), pitch, tiles, slot.dec.ptr(), slot.ring.ptr())?;
        let dec = DecodedTiles { ptr: slot.dec.ptr(), tiles, f: t.f, words: t.f.div_ceil(32), first_bit: k0 * t.f as i64 };
        slot.count.count(&self.common, s, dec, a, b, self.setup.frame_bits)
    }
}

/// Compile the device link's channel kernel for `chain` with `T` LLRs and
/// the shared link kernels for architecture `arch` (e.g. `sm_90`) with NVRTC
/// alone, no GPU needed: lets a machine without a GPU check that they build.
pub fn compile_conv_link_kernels<T: ViterbiLlr>(chain: &ConvChain, arch: &str) -> anyhow::Result<()> {
    crate::gpu::compile::compile_cubin("conv_link.cu", arch, &llr_defines::<T>(chain.setup())?)?;
    crate::gpu::compile::compile_cubin("link.cu", arch, &[])?;
    Ok(())
}

/// The channel kernel's constants: the code's reversed taps and inverted outputs, the puncturing
/// pattern as (stage, output) per sent LLR of a period, the LLR type.
fn llr_defines<T: ViterbiLlr>(setup: &ConvSetup) -> anyhow::Result<Vec<(String, String)>> {
    let k = setup.trellis.k() as usize;
    let p = &setup.puncture;
    let taps = ConvEncoder::new(setup.trellis.clone(), EncoderMode::Streaming)?.taps().to_vec();
    let reversed = |t: u64| (0..k).filter(|d| (t >> d) & 1 == 1).fold(0u32, |r, d| r | 1 << (k - 1 - d));
    let kept: Vec<(usize, usize)> = (0..p.period()).flat_map(|c| (0..p.n()).filter(move |&j| p.keeps(j, c)).map(move |j| (c, j))).collect();
    let list = |f: &dyn Fn(&(usize, usize)) -> usize| kept.iter().map(f).map(|v| v.to_string()).collect::<Vec<_>>().join(",");
    let mut d: Vec<(String, String)> = vec![
        ("CK".into(), k.to_string()),
        ("CN".into(), setup.trellis.n().to_string()),
        ("CP".into(), p.period().to_string()),
        ("CKPP".into(), kept.len().to_string()),
        ("CPAT_STAGE".into(), list(&|&(c, _)| c)),
        ("CPAT_OUT".into(), list(&|&(_, j)| j)),
        ("CINV".into(), setup.trellis.code().inverted().to_string()),
        ("LLR_F32".into(), usize::from(T::TYPE == LlrType::F32).to_string()),
    ];
    for j in 0..4 {
        d.push((format!("CT{j}"), taps.get(j).map_or(0, |&t| reversed(t)).to_string()));
    }
    Ok(d)
}

impl<T: ViterbiLlr> Link for DeviceConvLink<T> {
    fn start(&mut self, ebn0_db: f64, seed: u64) -> CodeResult<()> {
        let ch = PointChannel::new(ebn0_db, self.setup.effective_rate()?, seed, self.setup.quantizer(ebn0_db)?.scale())?;
        self.point = Some(PointState { ch, sent: 0, counted: 0 });
        Ok(())
    }

    fn check(&self, ebn0_db: f64) -> CodeResult<()> {
        crate::codes::channel::noise_variance(ebn0_db, self.setup.effective_rate()?).map(drop)
    }

    fn frame_bits(&self) -> usize {
        self.setup.frame_bits
    }

    fn run(&mut self, bits: u64, last: bool, tally: &mut Tally) -> CodeResult<()> {
        let mut st = self.point.ok_or_else(|| invalid!("a link runs only after start"))?;
        st.sent = st.sent.checked_add(i64::try_from(bits).map_err(|_| invalid!("{bits} bits in one chunk"))?).ok_or_else(|| invalid!("a stream of more than 2^63 bits"))?;
        let (f, v2) = (self.tile.f as i64, self.tile.v2 as i64);
        // Count up to the last tile whose window the stream has reached.
        let b = if last { st.sent } else { ((st.sent - v2).max(0) / f * f).max(st.counted) };
        let a = st.counted;
        st.counted = b;
        self.point = Some(st);
        self.count(&st, a, b, tally).map_err(device_error)
    }

    fn describe(&self) -> String {
        let k = &self.viterbi;
        let (major, minor) = k.device.compute_capability;
        format!(
            "gpu {} ({}, sm_{major}{minor}): the whole link on the device (counter-based bits, encoder{}, BPSK over AWGN, {} LLRs, Viterbi tiles with survivors in {} memory, error counts), {} tiles per batch",
            k.device.index,
            k.device.name,
            if self.setup.puncture.is_identity() { String::new() } else { format!(", puncturing '{}'", self.setup.puncture) },
            T::NAME,
            if k.ring_global { "global" } else { "shared" },
            self.batch_tiles,
        )
    }

    fn chunk_limit(&self) -> u64 {
        (self.batch_tiles * self.tile.f * 64) as u64
    }
}

impl<T: ViterbiLlr> DeviceConvLink<T> {
    /// Decode and count stream positions `a .. b` batch by batch, two in
    /// flight, until they are counted or the tally's stop rule ends.
    fn count(&mut self, st: &PointState, a: i64, b: i64, tally: &mut Tally) -> anyhow::Result<()> {
        if b <= a {
            return Ok(());
        }
        let f = self.tile.f as i64;
        let (mut k, k_end) = (a / f, (b + f - 1) / f);
        let mut queued = std::collections::VecDeque::new();
        let mut next = 0;
        while (k < k_end || !queued.is_empty()) && !tally.done() {
            if k < k_end && queued.len() < SLOTS {
                let k1 = (k + self.batch_tiles as i64).min(k_end);
                self.queue(next, st, k, k1, (k * f).max(a), (k1 * f).min(b))?;
                queued.push_back(next);
                next = (next + 1) % SLOTS;
                k = k1;
                continue;
            }
            let i = queued.pop_front().expect("a batch in flight");
            self.slots[i].count.collect(tally)?;
        }
        // A stop leaves at most one batch queued: let it finish before its buffers are reused.
        self.stream.synchronize().map_err(cuda("cuStreamSynchronize"))
    }
}
