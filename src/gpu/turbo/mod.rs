//! Host-side launcher of the GPU turbo decoder (`kernels/turbo.cu`): the
//! code and decoder configuration become compile-time constants, code blocks
//! travel through the N-slot [`Pipeline`], and each batch is decoded by one
//! launch of the fused kernel (one CTA per code block, one thread per
//! sub-block, every iteration and the stop inside) where a CTA can hold a
//! code block, else by a load kernel, two half-iteration kernels per
//! iteration (S threads per sub-block, one per trellis state) and a stop
//! kernel per iteration; and the family's choice between it and the CPU.

mod bench;
mod kernel;
mod link;

pub use bench::bench_turbo;
pub use kernel::{TurboTuning, compile_turbo_kernel};
pub use link::{DeviceTurboLink, compile_turbo_link_kernel};

use super::multi::on_devices;
use super::backend::{BackendOptions, Choice, select};
use super::compile::kernels;
use super::device::{DeviceInfo, context, cuda, device_error, info_of};
use super::memory::DeviceBuf;
use super::pipeline::{BatchSplit, MAX_BATCH_BYTES, Pipeline, PipelineOptions, SlotBuffers, SlotSize, default_batch_units, par_unpack};
use super::staging::{in_place_region, stage_each, stage_units};
use crate::codes::decode::{Batch, BatchDecoder, BatchLimit, Decoded, UnitReport, UnitShape, check_batch};
use crate::codes::error::CodeResult;
use crate::codes::llr::{Llr, LlrType};
use crate::codes::packed::units_to_msb_bytes;
use crate::codes::turbo::decoder::Precision;
use crate::codes::turbo::rate_match::{KNOWN_ZERO, NOT_SENT, RateMatch};
use crate::codes::turbo::{CpuTurbo, DecoderConfig, Dematching, EarlyStop, KNOWN_ZERO_LLR, Sent, TransportDecoder, TurboChain, TurboCode, known_zero};
use cudarc::driver::{CudaFunction, result, sys};
use kernel::{Dematch, ENTRIES, Geometry, Launcher, SISO_THREADS};

/// Indices into [`ENTRIES`] (each `_I8` entry has its `f32` twin next to it).
const ENTRY_LOAD_I8: usize = 0;
const ENTRY_SISO0: usize = 2;
const ENTRY_STOP: usize = 4;
const ENTRY_FUSED_I8: usize = 5;
const ENTRY_DEMATCH_I8: usize = 7;
/// i8 LLRs into i8 layouts (`ENTRY_DEMATCH_I8`: into f32 ones).
const ENTRY_DEMATCH_I8_I8: usize = 9;

/// Most rate matchings (unit formats) a decoder de-rate-matches on load: a
/// transport block needs at most four per code block size (E or E + 1
/// bits, with filler or not); each takes 3K + 12 words of device memory.
pub const MAX_RATE_MATCHINGS: usize = 64;

const _: () = assert!(NOT_SENT == 0xffff_ffff && KNOWN_ZERO == 0xffff_fffe, "RM_NONE and RM_KNOWN in turbo.cu");

/// What a [`GpuTurbo`] gives beyond the hard decisions; `Default` is the
/// plain decoder.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GpuTurboOptions {
    /// Also give the a-posteriori LLR of every decoded bit, as
    /// [`CpuTurbo::with_soft_output`] does: f32, natural order, the last
    /// iteration's, in [`Decoded::soft`]. The kernels are then compiled with
    /// `TSOFT` (the plain ones are unchanged) and write K more words per
    /// block, copied back with the bits.
    pub soft_output: bool,
    /// De-rate-match on load: units are rate-matched code blocks, unit
    /// format i the E LLRs of `rate_matching[i]` (of the decoder's K, at
    /// most [`MAX_RATE_MATCHINGS`]) as received, which a kernel on the
    /// device de-rate-matches into the 3K + 12 layout of `T` (repeats summed
    /// in the order they were sent, punctured bits 0, the filler's known
    /// zeros at [`known_zero`]; `i8` LLRs into an `f32` layout where a rate
    /// matching repeats bits, as `TransportBlock::wide_layouts` says) before
    /// the decoder (the `i8` or `f32` kernel) runs on it: what [`CpuTurbo`] or a plain
    /// `GpuTurbo<T>` computes from [`RateMatch::combine`]'s layout, bit
    /// for bit, with fewer bytes over PCIe at code rates above 1/3 and no
    /// host pass.
    /// Empty: units are 3K + 12 LLRs.
    pub rate_matching: Vec<RateMatch>,
    /// The kernels' tuning (its environment overrides applied when the
    /// decoder is built).
    pub tuning: TurboTuning,
}

/// Most device memory the default batch size gives a slot's own buffers;
/// a batch size asked for explicitly may use up to [`MAX_BATCH_BYTES`].
const DEFAULT_SLOT_BYTES: usize = 1 << 30;

/// GPU turbo decoder, computing what the CPU sub-block model ([`CpuTurbo`](crate::codes::turbo::CpuTurbo))
/// computes: the same bits, iteration counts and checks for max-log-MAP and
/// the linear log-MAP (every floating-point operation in the model's order,
/// none fused); for exact log-MAP the device's `expf`/`log1pf` round
/// differently from the CPU's, so a few decisions may differ.
///
/// A unit is one sent block in the family's [`Layout`](crate::codes::turbo::Layout)
/// (3K + 4m LLRs); it decodes to K bits. `i8` LLRs are multiplied by
/// 1 / `input_scale` as they are loaded, as the CPU decoder does. Where a
/// CTA can hold a code block, each sub-block is run by one GPU thread with
/// the state metrics in registers and the whole decoding of the block is one
/// CTA's; otherwise each sub-block is run by S GPU threads, one per trellis
/// state, exchanging metrics by warp shuffles. Blocks stop on their own
/// criterion, and a stopped block is skipped by the later iterations.
///
/// # Example
/// ```no_run
/// use gpufec::codes::BatchDecoder;
/// use gpufec::codes::turbo::{DecoderConfig, Guard, TurboCode};
/// use gpufec::gpu::{GpuTurbo, PipelineOptions};
/// let code = TurboCode::lte(6144)?;
/// let cfg = DecoderConfig { subblocks: 96, guard: Guard::Pivi, ..DecoderConfig::default() };
/// let mut dec = GpuTurbo::<f32>::new(code, cfg, 1.0, &PipelineOptions::default())?;
/// let mut bits = Vec::new();
/// dec.decode_all(&vec![4.0; 3 * 6144 + 12], &mut bits)?; // the all-zero block
/// assert_eq!(bits, vec![0; 6144]);
/// # anyhow::Ok(())
/// ```
pub struct GpuTurbo<T: Llr> {
    code: TurboCode,
    cfg: DecoderConfig,
    /// One format, the 3K + 12 layout, or one per rate matching.
    shape: Vec<UnitShape>,
    /// Items of `T` a unit is staged in: the layout, or (rate-matched) a
    /// u32 format word and the longest E.
    pitch: usize,
    /// The decoding kernels take i8 LLRs (`T` = i8; units de-rate-matched
    /// on load too, into i8 layouts, unless a rate matching repeats bits).
    kernel_i8: bool,
    geometry: Geometry,
    /// Every entry point of the compilation, in [`ENTRIES`] order.
    functions: Vec<CudaFunction>,
    /// The fused kernel's dynamic shared memory, when it runs.
    fused: Option<u32>,
    inv_scale: f32,
    /// The a-posteriori LLRs are given ([`GpuTurboOptions::soft_output`]).
    soft: bool,
    /// Hard decisions handed packed ([`BatchDecoder::pack_bits`]).
    packed_out: bool,
    /// Per batch in flight, what each unit consumed when units are
    /// rate-matched (their E); empty: the layout's 3K + 12.
    consumed: std::collections::VecDeque<Vec<usize>>,
    registers: i32,
    resident_subblocks: usize,
    batch_units: usize,
    /// Dropped before `tables`: its drop waits for every kernel that reads them.
    pipe: Pipeline<T, u32>,
    /// Π then Π⁻¹ on the device.
    tables: DeviceBuf,
    /// The de-rate-matching table on the device and its formats, when
    /// units are rate-matched; dropped after `pipe` too.
    dematch: Option<(DeviceBuf, u32)>,
    device: DeviceInfo,
}

impl<T: Llr> GpuTurbo<T> {
    /// A decoder of `code` computing `cfg` (checked as the CPU decoder checks
    /// it) on the device `pipeline` names; LLRs are divided by `input_scale`
    /// (finite, > 0). Compiles the kernels for the device and allocates the
    /// pipeline.
    pub fn new(code: TurboCode, cfg: DecoderConfig, input_scale: f32, pipeline: &PipelineOptions) -> anyhow::Result<Self> {
        Self::with_options(code, cfg, input_scale, pipeline, &GpuTurboOptions::default())
    }

    /// [`Self::new`] with `options` (soft output, de-rate-matching on load).
    pub fn with_options(code: TurboCode, cfg: DecoderConfig, input_scale: f32, pipeline: &PipelineOptions, options: &GpuTurboOptions) -> anyhow::Result<Self> {
        cfg.validate(code.k())?;
        anyhow::ensure!(input_scale.is_finite() && input_scale > 0.0, "LLR scale {input_scale}: give a finite factor > 0");
        pipeline.validate()?;
        let (k, n) = (code.k(), code.coded_len());
        let matches = &options.rate_matching;
        anyhow::ensure!(
            matches.len() <= MAX_RATE_MATCHINGS,
            "{} rate matchings: a decoder de-rate-matches at most {MAX_RATE_MATCHINGS} on load",
            matches.len()
        );
        for (i, rm) in matches.iter().enumerate() {
            anyhow::ensure!(
                rm.k() == k && rm.coded_len() == n,
                "rate matching {i} is of K = {} ({} coded bits); the decoder's code is K = {k} with {n}",
                rm.k(),
                rm.coded_len()
            );
        }
        let rate_matched = !matches.is_empty();
        // Repeated i8 LLRs are summed into f32 layouts, whose sums an i8 would saturate.
        let kernel_i8 = T::TYPE == LlrType::I8 && !matches.iter().any(RateMatch::repeats);
        let llr_bytes = if kernel_i8 { 1 } else { 4 };
        // A rate-matched unit: its format word, then its E LLRs, in whole
        // words so that every unit's format word is aligned.
        let head = 4 / size_of::<T>();
        let pitch = match matches.iter().map(RateMatch::e).max() {
            Some(e) => (head + e).next_multiple_of(head),
            None => n,
        };
        let ctx = context(pipeline.device)?;
        ctx.bind_to_thread().map_err(cuda("cuCtxSetCurrent"))?;
        let device = info_of(&ctx)?;
        let tuning = options.tuning.with_env_overrides()?;
        let geometry = Geometry::new(&code, &cfg, &tuning)?;
        let soft = options.soft_output;
        let defines = kernel::defines(&code, &cfg, &geometry, soft)?;
        let functions = kernels(&ctx, "turbo.cu", &ENTRIES, &defines)?;
        let i8s = kernel_i8;
        // The fused kernel when a CTA can hold a code block's sub-blocks and
        // their stages, unless the tuning forces the per-half-iteration kernels.
        let split_forced = tuning.force_split;
        let fused_fn = &functions[if i8s { ENTRY_FUSED_I8 } else { ENTRY_FUSED_I8 + 1 }];
        // The i8 fused kernel computes par/2 as v · (inv_scale / 2), which is
        // the model's 0.5 · (v · inv_scale) bit for bit only while every such
        // product is a normal float: 2^−118 ≤ inv_scale ≤ 2^120 (turbo.cu,
        // `half_par`). Outside (no real LLR scale is) the split kernels run.
        let inv = 1.0 / input_scale;
        let halves_exactly = !i8s || (2f32.powi(-118)..=2f32.powi(120)).contains(&inv);
        let fused_smem = geometry.fused_smem(llr_bytes).filter(|&b| !split_forced && halves_exactly && b <= device.smem_per_block_optin);
        let mut fused_per_sm = 0;
        if let Some(bytes) = fused_smem {
            // Beyond the default per-block size a kernel must opt in.
            if bytes > device.smem_per_block {
                fused_fn
                    .set_attribute(sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes as i32)
                    .map_err(cuda("cuFuncSetAttribute"))?;
            }
            fused_per_sm =
                fused_fn.occupancy_max_active_blocks_per_multiprocessor(geometry.fnt as u32, bytes, None).map_err(cuda("occupancy query"))? as usize;
        }
        let fused_smem = fused_smem.filter(|_| fused_per_sm > 0);
        let fused = fused_smem.is_some();
        let (kernel_fn, threads, smem) = match fused_smem {
            Some(b) => (fused_fn, geometry.fnt as u32, b),
            None => (&functions[ENTRY_SISO0], SISO_THREADS as u32, geometry.smem() as usize),
        };
        let registers = kernel_fn.num_regs().map_err(cuda("cuFuncGetAttribute"))?;
        let per_sm = kernel_fn.occupancy_max_active_blocks_per_multiprocessor(threads, smem, None).map_err(cuda("occupancy query"))?;
        anyhow::ensure!(per_sm > 0, "the turbo kernel for this code and configuration does not fit on {}", device.name);
        // Sub-blocks the device runs at once (the fused kernel: whole code blocks).
        let per_cta = if fused { cfg.subblocks } else { geometry.tasks_per_cta() };
        let resident_subblocks = per_sm as usize * per_cta * device.sms as usize;

        let shape: Vec<UnitShape> = if rate_matched { matches.iter().map(|rm| UnitShape::exact(rm.e(), k)).collect() } else { vec![UnitShape::exact(n, k)] };
        // Output words per block: the packed bits, then the soft output's K.
        let out_words = geometry.words + if soft { k } else { 0 };
        // The slot's buffers: the decoder's, then (rate-matched) the layouts
        // the de-rate-matching writes.
        let aux_of = |blocks: usize| {
            let mut v = geometry.aux_bytes(blocks, fused, llr_bytes);
            v.push(if rate_matched { blocks * n * llr_bytes } else { 4 });
            v
        };
        let per_block: usize = aux_of(1).iter().sum::<usize>() + pitch * size_of::<T>() + 4 * out_words;
        let batch_units = match pipeline.batch_units {
            0 => default_batch_units(resident_subblocks, cfg.subblocks).min(DEFAULT_SLOT_BYTES / per_block).max(1),
            b => b,
        };
        let aux_bytes = batch_units.checked_mul(per_block).map(|_| aux_of(batch_units));
        let fits = aux_bytes
            .as_ref()
            .is_some_and(|a| a.iter().all(|&b| b <= MAX_BATCH_BYTES) && batch_units * pitch * size_of::<T>() <= MAX_BATCH_BYTES && batch_units * out_words * 4 <= MAX_BATCH_BYTES);
        anyhow::ensure!(
            fits && batch_units * cfg.subblocks <= u32::MAX as usize,
            "a batch of {batch_units} code blocks ({per_block} bytes of device memory each) exceeds the limit of {MAX_BATCH_BYTES} bytes per buffer and slot"
        );
        let size = SlotSize {
            in_items: batch_units * pitch,
            dev_in_bytes: batch_units * pitch * size_of::<T>(),
            out_items: batch_units * out_words,
            aux_bytes: aux_bytes.unwrap_or_default(),
            status_words: batch_units,
        };
        let pipe = Pipeline::new(&ctx, pipeline, size)?;

        let perm = code.permutation();
        let mut inv = vec![0u32; k];
        for (i, &p) in perm.iter().enumerate() {
            inv[p as usize] = i as u32;
        }
        let rows = geometry.stage_rows(perm, &cfg);
        let tables = DeviceBuf::new(&ctx, 4 * (2 * k + rows.len()))?;
        let both: Vec<u32> = perm.iter().copied().chain(inv).chain(rows).collect();
        // SAFETY: the buffer holds 2K words and the rows; the copy is waited for below,
        // before any kernel can read it.
        unsafe { result::memcpy_htod_sync(tables.ptr(), &both) }.map_err(cuda("interleaver table copy"))?;
        let dematch = match rate_matched {
            true => {
                let table = dematch_table(matches);
                let buf = DeviceBuf::new(&ctx, 4 * table.len())?;
                // SAFETY: the buffer holds the table; the copy is waited for below.
                unsafe { result::memcpy_htod_sync(buf.ptr(), &table) }.map_err(cuda("rate matching table copy"))?;
                Some((buf, matches.len() as u32))
            }
            false => None,
        };
        ctx.synchronize().map_err(cuda("cuCtxSynchronize"))?;

        Ok(Self {
            shape,
            pitch,
            kernel_i8,
            dematch,
            code,
            cfg,
            geometry,
            functions,
            fused: fused_smem.map(|b| b as u32),
            inv_scale: 1.0 / input_scale,
            soft,
            packed_out: false,
            consumed: Default::default(),
            registers,
            resident_subblocks,
            batch_units,
            pipe,
            tables,
            device,
        })
    }

    /// The code decoded.
    pub fn code(&self) -> &TurboCode {
        &self.code
    }

    /// Sub-blocks the device runs at once.
    pub fn resident_subblocks(&self) -> usize {
        self.resident_subblocks
    }

    /// Time split of the batch collected last.
    pub fn last_split(&self) -> BatchSplit {
        self.pipe.last_split()
    }

    /// Mean kernel time in milliseconds of decoding `batch` (at most one
    /// batch) already resident on the device, load and every iteration
    /// included, over `reps` launches. Needs nothing in flight.
    pub fn time_kernel(&mut self, batch: &Batch<'_, T>, reps: usize) -> anyhow::Result<f64> {
        let units = check_batch(batch, &self.shape, self.limit())?;
        let (n, pitch, rate_matched) = (self.code.coded_len(), self.pitch, self.dematch.is_some());
        let launcher = launcher::<T>(&self.functions, &self.geometry, &self.cfg, self.inv_scale, &self.tables, self.fused, self.kernel_i8, self.dematch.as_ref(), pitch);
        self.pipe.time_launches(units, pitch, |host, r| stage(host, batch, n, pitch, rate_matched, r), reps, |s, slot| launcher.run(s, slot, n, units))
    }
}

impl<T: Llr> GpuTurbo<T> {
    /// Blocks in one batch.
    pub(crate) fn batch_units(&self) -> usize {
        self.batch_units
    }

    /// Output words per block (the packed bits, least significant first).
    pub(crate) fn out_words(&self) -> usize {
        self.geometry.words
    }

    /// Slots of the pipeline.
    pub(crate) fn slots(&self) -> usize {
        self.pipe.depth()
    }

    /// Device Π, the interleaver (K words).
    pub(crate) fn permutation_ptr(&self) -> sys::CUdeviceptr {
        self.tables.ptr()
    }

    /// Queue work on slot `i` with input made on the device (a device
    /// link): `work(stream, slot, decode)` writes units of the 3K + 4m
    /// layout at that pitch into `slot.input`, calls `decode(blocks)` to
    /// queue their decoding (hard bits into `slot.output`, iterations into
    /// `slot.status`, which it zeroes), and reads them. Not for rate-matched
    /// units; needs no batch in flight.
    pub(crate) fn resident<R>(&mut self, i: usize, work: impl FnOnce(sys::CUstream, &SlotBuffers, &dyn Fn(usize) -> anyhow::Result<()>) -> anyhow::Result<R>) -> anyhow::Result<R> {
        anyhow::ensure!(self.dematch.is_none() && !self.soft, "device-made input is the plain layout, decoded to hard bits");
        let n = self.code.coded_len();
        let launcher = launcher::<T>(&self.functions, &self.geometry, &self.cfg, self.inv_scale, &self.tables, self.fused, self.kernel_i8, None, n);
        let limit = self.batch_units;
        self.pipe.resident(i, |s, slot| {
            let decode = |blocks: usize| -> anyhow::Result<()> {
                anyhow::ensure!(blocks <= limit, "{blocks} blocks in a batch of {limit}");
                let status = slot.status.ok_or_else(|| anyhow::anyhow!("turbo slot without status words"))?;
                // SAFETY: the slot's status words, one per block of a batch.
                unsafe { result::memset_d8_async(status.ptr(), 0, 4 * blocks, s) }.map_err(cuda("cuMemsetD8Async"))?;
                launcher.run(s, slot, n, blocks)
            };
            work(s, slot, &decode)
        })
    }
}

/// Stage units `range` of `batch` into `host`, `pitch` items each: units of
/// the n-LLR layout as they are, or rate-matched units behind their format
/// word (the dematch kernel's header: a u32, native byte order, which the
/// device shares with every x86-64 or Arm host); every LLR checked finite
/// on the way.
fn stage<T: Llr>(host: &mut [T], batch: &Batch<'_, T>, n: usize, pitch: usize, rate_matched: bool, range: std::ops::Range<usize>) -> anyhow::Result<()> {
    if !rate_matched {
        return stage_units(host, batch, n, pitch, range);
    }
    let head = 4 / size_of::<T>();
    stage_each(
        host,
        batch,
        pitch,
        head,
        |unit, h| {
            let format = u32::from(batch.format(unit)).to_ne_bytes();
            // SAFETY: `h` is `head` items, 4 bytes, and T (i8 or f32) is
            // plain data that any bytes are a value of.
            unsafe { std::ptr::copy_nonoverlapping(format.as_ptr(), h.as_mut_ptr().cast::<u8>(), 4) };
        },
        range,
    )
}

/// The on-load de-rate-matching table of `matches` (the kernel's `table`):
/// (E, period) of each, then each one's [`RateMatch::gather_table`].
fn dematch_table(matches: &[RateMatch]) -> Vec<u32> {
    let mut t: Vec<u32> = matches.iter().flat_map(|rm| [rm.e() as u32, rm.carried() as u32]).collect();
    for rm in matches {
        t.extend(rm.gather_table());
    }
    t
}

/// The launches of a decoder's batches of `T`; a function of the fields it
/// reads, so that the pipeline can be borrowed mutably beside it. `pitch`:
/// the items of `T` a unit is staged in.
#[allow(clippy::too_many_arguments)]
fn launcher<'a, T: Llr>(
    functions: &'a [CudaFunction],
    geometry: &'a Geometry,
    cfg: &DecoderConfig,
    inv_scale: f32,
    tables: &DeviceBuf,
    fused: Option<u32>,
    kernel_i8: bool,
    dematch: Option<&(DeviceBuf, u32)>,
    pitch: usize,
) -> Launcher<'a> {
    let i8s = kernel_i8;
    Launcher {
        dematch: dematch.map(|(table, formats)| Dematch {
            f: &functions[match (T::TYPE, kernel_i8) {
                (LlrType::I8, true) => ENTRY_DEMATCH_I8_I8,
                (LlrType::I8, false) => ENTRY_DEMATCH_I8,
                (LlrType::F32, _) => ENTRY_DEMATCH_I8 + 1,
            }],
            table: table.ptr(),
            formats: *formats,
            known: if kernel_i8 { known_zero::<i8>().to_f32() } else { KNOWN_ZERO_LLR },
            pitch_bytes: (pitch * size_of::<T>()) as u64,
        }),
        load: &functions[if i8s { ENTRY_LOAD_I8 } else { ENTRY_LOAD_I8 + 1 }],
        siso: [&functions[ENTRY_SISO0], &functions[ENTRY_SISO0 + 1]],
        stop: &functions[ENTRY_STOP],
        geometry,
        iterations: cfg.iterations,
        scale: cfg.scaling,
        inv_scale,
        tables: tables.ptr(),
        fused: fused.map(|smem| (&functions[if i8s { ENTRY_FUSED_I8 } else { ENTRY_FUSED_I8 + 1 }], smem)),
    }
}

impl<T: Llr> BatchDecoder<T> for GpuTurbo<T> {
    fn shapes(&self) -> &[UnitShape] {
        &self.shape
    }

    fn limit(&self) -> BatchLimit {
        // Every unit fits its pitch, so only the units count.
        BatchLimit { units: self.batch_units, items: self.batch_units * self.shape.iter().map(|s| s.items).max().unwrap_or(0) }
    }

    fn depth(&self) -> usize {
        self.pipe.depth()
    }

    fn submit(&mut self, batch: &Batch<'_, T>) -> CodeResult<()> {
        let units = check_batch(batch, &self.shape, self.limit())?;
        let (n, pitch, rate_matched) = (self.code.coded_len(), self.pitch, self.dematch.is_some());
        let words = self.geometry.words + if self.soft { self.geometry.k } else { 0 };
        let launcher = launcher::<T>(&self.functions, &self.geometry, &self.cfg, self.inv_scale, &self.tables, self.fused, self.kernel_i8, self.dematch.as_ref(), pitch);
        self.pipe
            .submit(units, pitch, |host, r| stage(host, batch, n, pitch, rate_matched, r), units * words, units, |s, slot| launcher.run(s, slot, n, units))
            .map_err(device_error)?;
        // What each unit consumed, for its report: its own length when rate-matched.
        self.consumed.push_back(if rate_matched { batch.spans_iter().map(|s| s.len).collect() } else { Vec::new() });
        Ok(())
    }

    /// Code blocks of the 3K + 12 layout that follow each other (a stream's,
    /// cut in place, or a caller's buffer of whole blocks) go to the device
    /// as they lie, page-locked, where the kernels read them as from staging
    /// (the layout is the pitch): no host copy. Rate-matched units (each
    /// behind its format word), other batches, and memory the driver will
    /// not lock, are staged.
    unsafe fn submit_reused(&mut self, batch: &Batch<'_, T>) -> CodeResult<bool> {
        let units = check_batch(batch, &self.shape, self.limit())?;
        let n = self.code.coded_len();
        let region = match self.dematch {
            None => in_place_region(batch, units, n, |stride| stride == n || units == 1)?,
            Some(_) => None,
        };
        let Some((region, _)) = region else {
            return self.submit(batch).map(|()| false);
        };
        let words = self.geometry.words + if self.soft { self.geometry.k } else { 0 };
        let launcher = launcher::<T>(&self.functions, &self.geometry, &self.cfg, self.inv_scale, &self.tables, self.fused, self.kernel_i8, None, self.pitch);
        let sent = self.pipe.submit_registered(region, units * words, units, |s, slot| launcher.run(s, slot, n, units)).map_err(device_error)?;
        if !sent {
            return self.submit(batch).map(|()| false);
        }
        self.consumed.push_back(Vec::new());
        Ok(true)
    }

    fn reused_read(&mut self) -> CodeResult<()> {
        self.pipe.registered_read().map_err(device_error)
    }

    fn forget_reused(&mut self) {
        self.pipe.forget_registered();
    }

    /// A block's K bits go as K/8 bytes (every LTE K is a multiple of 8),
    /// unless soft output follows them.
    fn pack_bits(&mut self) -> bool {
        self.packed_out = !self.soft && self.geometry.k.is_multiple_of(8);
        self.packed_out
    }

    fn collect(&mut self, out: &mut Decoded) -> CodeResult<bool> {
        let (k, n, words) = (self.geometry.k, self.code.coded_len(), self.geometry.words);
        // The oldest batch leaves the pipeline whatever its collection says.
        let consumed = if self.pipe.in_flight() > 0 { self.consumed.pop_front().unwrap_or_default() } else { Vec::new() };
        let (iterations, crc) = (self.cfg.iterations as u32, matches!(self.cfg.early_stop, EarlyStop::Crc24A | EarlyStop::Crc24B));
        let mut reports = Vec::new();
        let (bits, soft, packed_out) = (&mut out.bits, &mut out.soft, &mut out.packed);
        let to_bytes = self.packed_out;
        let collected = self.pipe.collect(|packed, status| {
            for (i, &st) in status.iter().enumerate() {
                let it = st & 0xffff;
                // Every block stops by the last iteration, so a status word
                // left at zero means a kernel did not run to its end.
                anyhow::ensure!((1..=iterations).contains(&it), "code block {i} of the batch was not decoded (status word {st:#x})");
                reports.push(UnitReport { bits: k, iterations: it, blocks: 1, check: crc.then_some((st >> 17) & 1 == 1), consumed: consumed.get(i).copied().unwrap_or(n) });
            }
            // The packed bits of every block, then (TSOFT) the soft outputs.
            let (packed, llrs) = packed.split_at(status.len() * words);
            if to_bytes {
                units_to_msb_bytes(packed, words, k / 8, packed_out);
            } else {
                par_unpack(bits, packed, k, words);
            }
            soft.extend(llrs.iter().map(|&w| f32::from_bits(w)));
            Ok(())
        });
        if !collected.map_err(device_error)? {
            return Ok(false);
        }
        out.reports.extend(reports);
        Ok(true)
    }

    fn in_flight(&self) -> usize {
        self.pipe.in_flight()
    }

    fn oldest_ready(&mut self) -> bool {
        self.pipe.oldest_ready()
    }

    fn gives_soft(&self) -> bool {
        self.soft
    }

    fn describe(&self) -> String {
        let (major, minor) = self.device.compute_capability;
        let g = &self.geometry;
        format!(
            "gpu {} ({}, sm_{major}{minor}, {} LLRs{}, {}, {} regs, {} sub-blocks resident, {} blocks/batch, {} slots, {} host threads), {}, {}",
            self.device.index,
            self.device.name,
            T::NAME,
            if self.soft { ", soft output" } else { "" },
            match self.fused {
                Some(smem) => format!(
                    "fused: one CTA of {} threads per code block, one per sub-block, α checkpoints every {} stages in {} memory, stage rows in {} memory, {smem} B shared",
                    g.fnt,
                    g.seg,
                    if g.ck_global { "global" } else { "shared" },
                    if g.rows_global { "global" } else { "shared" }
                ),
                None => format!(
                    "per half-iteration: {} threads per sub-block, {} sub-blocks per CTA, α in {} memory",
                    g.states,
                    g.tasks_per_cta(),
                    if g.alpha_shared { "shared" } else { "global" }
                ),
            },
            self.registers,
            self.resident_subblocks,
            self.batch_units,
            self.pipe.depth(),
            self.pipe.host_threads(),
            self.code.describe(),
            self.cfg.describe()
        )
    }
}

/// A decoder of `chain`'s units, LLRs of `T` divided by `input_scale`, on
/// the backend `options` asks for (through [`select`]: with `auto`, the GPU
/// when one is usable, else the CPU with the reason): code blocks of 3K + 12
/// LLRs, or transport blocks of G LLRs decoded to A bits. On the GPU,
/// [`GpuTurbo`] on the pipeline of `options` (transport blocks'
/// code blocks de-rate-matched as the chain says); on the CPU, [`CpuTurbo`]
/// on `options.cpu_threads` threads with the chain's metrics (16-bit metrics
/// are the CPU's: `gpu` then fails, `auto` says why). Each decodes what
/// [`TurboChain::config_for`] says for its side. With `soft`, code blocks
/// also give their a-posteriori LLRs (transport blocks are decoded to hard
/// decisions only).
///
/// # Example
/// ```
/// use gpufec::codes::settings::Settings;
/// use gpufec::codes::turbo::{TurboSettings, decoder::Precision};
/// use gpufec::gpu::{Backend, BackendOptions, turbo_decoder};
/// let options = BackendOptions { backend: Backend::Cpu, cpu_threads: 1, ..Default::default() };
/// let chain = TurboSettings { block: Some(40), precision: Some(Precision::I16), ..Default::default() }.resolve()?;
/// let (dec, choice) = turbo_decoder::<f32>(&chain, 1.0, true, &options)?;
/// assert!(dec.describe().starts_with("cpu") && dec.gives_soft() && !choice.gpu);
/// let chain = TurboSettings { tbs: Some(1000), coded: Some(2000), ..Default::default() }.resolve()?;
/// let (dec, _) = turbo_decoder::<i8>(&chain, 1.0, false, &options)?;
/// assert!(dec.describe().contains("de-rate-matched on the host"));
/// # anyhow::Ok(())
/// ```
pub fn turbo_decoder<T: Llr>(chain: &TurboChain, input_scale: f32, soft: bool, options: &BackendOptions) -> anyhow::Result<(Box<dyn BatchDecoder<T>>, Choice)> {
    let precision = chain.precision();
    let gpu_precision = || -> anyhow::Result<()> {
        anyhow::ensure!(precision == Precision::F32, "16-bit metrics are the CPU decoder's; the GPU decodes in f32");
        Ok(())
    };
    let pipeline = &options.pipeline;
    match chain.sent() {
        Sent::Blocks(code) => {
            let gpu = || -> anyhow::Result<Box<dyn BatchDecoder<T>>> {
                gpu_precision()?;
                let cfg = chain.config_for(code.k(), true);
                on_devices(pipeline, |p| Ok(Box::new(GpuTurbo::<T>::with_options(code.clone(), cfg, input_scale, p, &GpuTurboOptions { soft_output: soft, ..Default::default() })?)))
            };
            let cpu = || -> anyhow::Result<Box<dyn BatchDecoder<T>>> {
                let dec = CpuTurbo::<T>::new(code.clone(), chain.config_for(code.k(), false), input_scale, options.cpu_threads)?.with_precision(precision)?;
                Ok(Box::new(if soft { dec.with_soft_output() } else { dec }))
            };
            select(options.backend, gpu, cpu)
        }
        Sent::Transport(tb) => {
            anyhow::ensure!(!soft, "transport blocks are decoded to hard decisions only: no soft output");
            let gpu = || -> anyhow::Result<Box<dyn BatchDecoder<T>>> {
                gpu_precision()?;
                let split = |code: &TurboCode| chain.config_for(code.k(), true);
                Ok(Box::new(match chain.dematching() {
                    Dematching::OnLoad => TransportDecoder::rate_matched(tb.clone(), |code, rate_matching| {
                        let options = GpuTurboOptions { rate_matching: rate_matching.to_vec(), ..Default::default() };
                        anyhow::Ok(Box::new(GpuTurbo::<T>::with_options(code.clone(), split(&code), input_scale, pipeline, &options)?) as Box<dyn BatchDecoder<T>>)
                    })?,
                    Dematching::Host if tb.wide_layouts::<T>() => TransportDecoder::wide(tb.clone(), |code| {
                        anyhow::Ok(Box::new(GpuTurbo::<f32>::new(code.clone(), split(&code), input_scale, pipeline)?) as Box<dyn BatchDecoder<f32>>)
                    })?,
                    Dematching::Host => TransportDecoder::new(tb.clone(), |code| {
                        anyhow::Ok(Box::new(GpuTurbo::<T>::new(code.clone(), split(&code), input_scale, pipeline)?) as Box<dyn BatchDecoder<T>>)
                    })?,
                }))
            };
            let cpu = || -> anyhow::Result<Box<dyn BatchDecoder<T>>> {
                fn inner<L: Llr>(chain: &TurboChain, code: TurboCode, input_scale: f32, threads: usize) -> anyhow::Result<Box<dyn BatchDecoder<L>>> {
                    let cfg = chain.config_for(code.k(), false);
                    Ok(Box::new(CpuTurbo::<L>::new(code, cfg, input_scale, threads)?.with_precision(chain.precision())?))
                }
                let threads = options.cpu_threads;
                Ok(Box::new(match tb.wide_layouts::<T>() {
                    true => TransportDecoder::wide(tb.clone(), |code| inner::<f32>(chain, code, input_scale, threads))?,
                    false => TransportDecoder::new(tb.clone(), |code| inner::<T>(chain, code, input_scale, threads))?,
                }))
            };
            select(options.backend, gpu, cpu)
        }
    }
}
