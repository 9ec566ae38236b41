//! Host-side launcher of the GPU turbo decoder (`kernels/turbo.cu`): the
//! code and decoder configuration become compile-time constants, code blocks
//! travel through the N-slot [`Pipeline`], and each batch is decoded by one
//! launch of the fused kernel (one CTA per code block, one thread per
//! sub-block, every iteration and the stop inside) where a CTA can hold a
//! code block, else by a load kernel, two half-iteration kernels per
//! iteration (S threads per sub-block, one per trellis state) and a stop
//! kernel per iteration; and the family's choice between it and the CPU.

mod kernel;

pub use kernel::compile_turbo_kernel;

use super::backend::{BackendOptions, Choice, select};
use super::bench::GpuBench;
use super::compile::kernels;
use super::device::{DeviceInfo, context, cuda, info_of};
use super::memory::DeviceBuf;
use super::pipeline::{BatchSplit, Pipeline, PipelineOptions, SlotSize, par_unpack};
use super::viterbi::{MAX_BATCH_BYTES, device_error, stage_units};
use crate::codes::decode::{Batch, BatchDecoder, BatchLimit, Decoded, UnitReport, UnitShape, check_batch};
use crate::codes::error::CodeResult;
use crate::codes::llr::{Llr, LlrType};
use crate::codes::turbo::decoder::Precision;
use crate::codes::turbo::{CpuTurbo, DecoderConfig, EarlyStop, TurboCode};
use cudarc::driver::{CudaFunction, result, sys};
use kernel::{ENTRIES, Geometry, Launcher, SISO_THREADS};

/// Indices into [`ENTRIES`] (each `_I8` entry has its `f32` twin next to it).
const ENTRY_LOAD_I8: usize = 0;
const ENTRY_SISO0: usize = 2;
const ENTRY_STOP: usize = 4;
const ENTRY_FUSED_I8: usize = 5;

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
}

/// Code blocks per batch, in multiples of the sub-blocks the device runs at
/// once: enough that the last, partial wave costs little.
const WAVES: usize = 4;

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
    shape: [UnitShape; 1],
    geometry: Geometry,
    /// Every entry point of the compilation, in [`ENTRIES`] order.
    functions: Vec<CudaFunction>,
    /// The fused kernel's dynamic shared memory, when it runs.
    fused: Option<u32>,
    inv_scale: f32,
    /// The a-posteriori LLRs are given ([`GpuTurboOptions::soft_output`]).
    soft: bool,
    registers: i32,
    resident_subblocks: usize,
    batch_units: usize,
    /// Dropped before `tables`: its drop waits for every kernel that reads them.
    pipe: Pipeline<T, u32>,
    /// Π then Π⁻¹ on the device.
    tables: DeviceBuf,
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

    /// [`Self::new`] with `options` (soft output).
    pub fn with_options(code: TurboCode, cfg: DecoderConfig, input_scale: f32, pipeline: &PipelineOptions, options: &GpuTurboOptions) -> anyhow::Result<Self> {
        cfg.validate(code.k())?;
        anyhow::ensure!(input_scale.is_finite() && input_scale > 0.0, "LLR scale {input_scale}: give a finite factor > 0");
        pipeline.validate()?;
        let ctx = context(pipeline.device)?;
        ctx.bind_to_thread().map_err(cuda("cuCtxSetCurrent"))?;
        let device = info_of(&ctx)?;
        let geometry = Geometry::new(&code, &cfg)?;
        let soft = options.soft_output;
        let defines = kernel::defines(&code, &cfg, &geometry, soft)?;
        let functions = kernels(&ctx, "turbo.cu", &ENTRIES, &defines)?;
        let i8s = T::TYPE == LlrType::I8;
        // The fused kernel when a CTA can hold a code block's sub-blocks and
        // their stages; GPUFEC_TURBO_SPLIT=1 forces the per-half-iteration
        // kernels (to compare the two on one machine).
        let split_forced = std::env::var("GPUFEC_TURBO_SPLIT").is_ok_and(|v| v == "1");
        let fused_fn = &functions[if i8s { ENTRY_FUSED_I8 } else { ENTRY_FUSED_I8 + 1 }];
        // The i8 fused kernel computes par/2 as v · (inv_scale / 2), which is
        // the model's 0.5 · (v · inv_scale) bit for bit only while every such
        // product is a normal float: 2^−118 ≤ inv_scale ≤ 2^120 (turbo.cu,
        // `half_par`). Outside (no real LLR scale is) the split kernels run.
        let inv = 1.0 / input_scale;
        let halves_exactly = !i8s || (2f32.powi(-118)..=2f32.powi(120)).contains(&inv);
        let fused_smem = geometry.fused_smem(size_of::<T>()).filter(|&b| !split_forced && halves_exactly && b <= device.smem_per_block_optin);
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

        let (k, n) = (code.k(), code.coded_len());
        let shape = UnitShape::exact(n, k);
        // Output words per block: the packed bits, then the soft output's K.
        let out_words = geometry.words + if soft { k } else { 0 };
        let per_block: usize = geometry.aux_bytes(1, fused, size_of::<T>()).iter().sum::<usize>() + n * size_of::<T>() + 4 * out_words;
        let batch_units = match pipeline.batch_units {
            0 => (WAVES * resident_subblocks).div_ceil(cfg.subblocks).min(DEFAULT_SLOT_BYTES / per_block).max(1),
            b => b,
        };
        let aux_bytes = batch_units.checked_mul(per_block).map(|_| geometry.aux_bytes(batch_units, fused, size_of::<T>()));
        let fits = aux_bytes
            .as_ref()
            .is_some_and(|a| a.iter().all(|&b| b <= MAX_BATCH_BYTES) && batch_units * n * size_of::<T>() <= MAX_BATCH_BYTES && batch_units * out_words * 4 <= MAX_BATCH_BYTES);
        anyhow::ensure!(
            fits && batch_units * cfg.subblocks <= u32::MAX as usize,
            "a batch of {batch_units} code blocks ({per_block} bytes of device memory each) exceeds the limit of {MAX_BATCH_BYTES} bytes per buffer and slot"
        );
        let size = SlotSize {
            in_items: batch_units * n,
            dev_in_bytes: batch_units * n * size_of::<T>(),
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
        ctx.synchronize().map_err(cuda("cuCtxSynchronize"))?;

        Ok(Self {
            shape: [shape],
            code,
            cfg,
            geometry,
            functions,
            fused: fused_smem.map(|b| b as u32),
            inv_scale: 1.0 / input_scale,
            soft,
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
        let n = self.shape[0].items;
        let launcher = launcher::<T>(&self.functions, &self.geometry, &self.cfg, self.inv_scale, &self.tables, self.fused);
        self.pipe.time_launches(units, n, |host, r| stage_units(host, batch, n, n, r), reps, |s, slot| launcher.run(s, slot, n, units))
    }
}

/// The launches of a decoder's batches of `T`; a function of the fields it
/// reads, so that the pipeline can be borrowed mutably beside it.
fn launcher<'a, T: Llr>(
    functions: &'a [CudaFunction],
    geometry: &'a Geometry,
    cfg: &DecoderConfig,
    inv_scale: f32,
    tables: &DeviceBuf,
    fused: Option<u32>,
) -> Launcher<'a> {
    let i8s = T::TYPE == LlrType::I8;
    Launcher {
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
        BatchLimit { units: self.batch_units, items: self.batch_units * self.shape[0].items }
    }

    fn depth(&self) -> usize {
        self.pipe.depth()
    }

    fn submit(&mut self, batch: &Batch<'_, T>) -> CodeResult<()> {
        let units = check_batch(batch, &self.shape, self.limit())?;
        let n = self.shape[0].items;
        let words = self.geometry.words + if self.soft { self.geometry.k } else { 0 };
        let launcher = launcher::<T>(&self.functions, &self.geometry, &self.cfg, self.inv_scale, &self.tables, self.fused);
        self.pipe
            .submit(units, n, |host, r| stage_units(host, batch, n, n, r), units * words, units, |s, slot| launcher.run(s, slot, n, units))
            .map_err(device_error)?;
        Ok(())
    }

    fn collect(&mut self, out: &mut Decoded) -> CodeResult<bool> {
        let (k, n, words) = (self.geometry.k, self.shape[0].items, self.geometry.words);
        let (iterations, crc) = (self.cfg.iterations as u32, matches!(self.cfg.early_stop, EarlyStop::Crc24A | EarlyStop::Crc24B));
        let mut reports = Vec::new();
        let (bits, soft) = (&mut out.bits, &mut out.soft);
        let collected = self.pipe.collect(|packed, status| {
            for (i, &st) in status.iter().enumerate() {
                let it = st & 0xffff;
                // Every block stops by the last iteration, so a status word
                // left at zero means a kernel did not run to its end.
                anyhow::ensure!((1..=iterations).contains(&it), "code block {i} of the batch was not decoded (status word {st:#x})");
                reports.push(UnitReport { bits: k, iterations: it, check: crc.then_some((st >> 17) & 1 == 1), consumed: n });
            }
            // The packed bits of every block, then (TSOFT) the soft outputs.
            let (packed, llrs) = packed.split_at(status.len() * words);
            par_unpack(bits, packed, k, words);
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

impl<T: Llr> GpuBench<T> for GpuTurbo<T> {
    fn time_kernel(&mut self, batch: &Batch<'_, T>, reps: usize) -> anyhow::Result<f64> {
        GpuTurbo::time_kernel(self, batch, reps)
    }

    fn last_split(&self) -> BatchSplit {
        GpuTurbo::last_split(self)
    }
}

/// A turbo decoder of `code` computing `cfg` on the backend `options` asks
/// for (through [`select`]: with `auto`, the GPU when one is usable, else the
/// CPU with the reason): [`GpuTurbo`] on the pipeline of `options`, or
/// [`CpuTurbo`] on `options.cpu_threads` threads with `precision`'s metrics
/// (16-bit metrics are the CPU's: `gpu` then fails, `auto` says why). LLRs
/// are divided by `input_scale` either way. With `auto_split`, the GPU
/// decodes `cfg` split as [`DecoderConfig::with_gpu_split`] says, the CPU
/// `cfg` as it is. With `soft`, either also gives the a-posteriori LLRs.
///
/// # Example
/// ```
/// use gpufec::codes::turbo::{DecoderConfig, TurboCode, decoder::Precision};
/// use gpufec::gpu::{Backend, BackendOptions, turbo_decoder};
/// let options = BackendOptions { backend: Backend::Cpu, cpu_threads: 1, ..Default::default() };
/// let (dec, choice) = turbo_decoder::<f32>(TurboCode::lte(40)?, DecoderConfig::default(), 1.0, Precision::I16, false, true, &options)?;
/// assert!(dec.describe().starts_with("cpu") && dec.gives_soft() && !choice.gpu);
/// # anyhow::Ok(())
/// ```
pub fn turbo_decoder<T: Llr>(
    code: TurboCode,
    cfg: DecoderConfig,
    input_scale: f32,
    precision: Precision,
    auto_split: bool,
    soft: bool,
    options: &BackendOptions,
) -> anyhow::Result<(Box<dyn BatchDecoder<T>>, Choice)> {
    let gpu = || -> anyhow::Result<Box<dyn BatchDecoder<T>>> {
        anyhow::ensure!(precision == Precision::F32, "16-bit metrics are the CPU decoder's; the GPU decodes in f32");
        let cfg = if auto_split { cfg.with_gpu_split(code.k()) } else { cfg };
        Ok(Box::new(GpuTurbo::<T>::with_options(code.clone(), cfg, input_scale, &options.pipeline, &GpuTurboOptions { soft_output: soft })?))
    };
    let cpu = || -> anyhow::Result<Box<dyn BatchDecoder<T>>> {
        let dec = CpuTurbo::<T>::new(code.clone(), cfg, input_scale, options.cpu_threads)?.with_precision(precision)?;
        Ok(Box::new(if soft { dec.with_soft_output() } else { dec }))
    };
    select(options.backend, gpu, cpu)
}
