//! Host-side launcher of the GPU Viterbi decoder (`kernels/conv.cu`): the
//! code and tile geometry become compile-time constants of the kernel, work
//! units travel through the N-slot [`Pipeline`], one GPU thread decodes one
//! tile; and the family's choice between it and the CPU decoder.

mod bench;
mod kernel;
mod link;

pub use bench::{BENCH_EBN0_DB, GpuBenchOptions, bench_viterbi};
pub use kernel::{DEFAULT_MIN_BLOCKS_GLOBAL_I8, compile_viterbi_kernel};
pub use link::{DeviceConvLink, compile_conv_link_kernels};

use super::backend::{BackendOptions, Choice, select};
use super::multi::on_devices;
use super::staging::{in_place_region, stage_units};
use super::device::{context, cuda, device_error};
use super::pipeline::{BatchSplit, MAX_BATCH_BYTES, Pipeline, PipelineOptions, SlotSize, default_batch_units, par_unpack};
use crate::codes::conv::{CpuViterbi, DepuncturedUnits, PuncturePattern, TileConfig, Trellis, ViterbiLlr, ViterbiMode};
use crate::codes::decode::{Batch, BatchDecoder, BatchLimit, Decoded, UnitReport, UnitShape, check_batch};
use crate::codes::error::CodeResult;
use crate::codes::llr::Llr;
use crate::codes::packed::units_to_msb_bytes;
use kernel::ViterbiKernel;
use std::sync::Arc;

/// Where the kernel keeps each tile's survivor decisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SurvivorMemory {
    /// Shared memory when it leaves room for at least eight warps per SM,
    /// otherwise global memory.
    #[default]
    Auto,
    /// Shared memory (the paper's choice).
    Shared,
    /// Global memory (L2-cached), for long tracebacks.
    Global,
}

/// The Viterbi kernel's own tuning, beside the [`PipelineOptions`] every GPU
/// decoder shares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ViterbiTuning {
    /// Where survivor decisions live.
    pub survivors: SurvivorMemory,
    /// Blocks per SM the kernel's register allocation must leave room for
    /// (0: chosen here, see [`DEFAULT_MIN_BLOCKS_GLOBAL_I8`]). More blocks hide
    /// more latency; too many spill registers.
    pub min_blocks_per_sm: u32,
}

/// GPU Viterbi decoder over tiles, bit-exact with the CPU tiled model
/// ([`CpuViterbi`] in [`ViterbiMode::Tiled`]).
///
/// A work unit is `group` consecutive tiles (as the
/// [`Tiler`](crate::codes::conv::Tiler) cuts them); each GPU thread decodes one
/// tile from the unit's LLRs in device memory, keeps its survivor decisions
/// bit-packed in shared (or global) memory and traces back in the same kernel.
/// Batches go through a pipeline of [`PipelineOptions::slots`] slots, so that
/// copies overlap compute. With a puncturing pattern the units are those of a
/// punctured tiler (the LLRs that were sent) and the kernel puts the erasures
/// back as it loads, so that only the sent LLRs cross PCIe; its bits are then
/// those of [`DepuncturedUnits`] around the CPU model.
///
/// Terminated frames are not decoded on the GPU: [`viterbi_decoder`] picks the
/// CPU for them.
///
/// # Example
/// ```no_run
/// use gpufec::codes::conv::{ConvCode, TileConfig, Traceback, Trellis};
/// use gpufec::codes::BatchDecoder;
/// use gpufec::gpu::{GpuViterbi, PipelineOptions, ViterbiTuning};
/// use std::sync::Arc;
/// let t = Arc::new(Trellis::new(&ConvCode::k7_171_133()));
/// let tile = TileConfig::new(256, 20, 32, Traceback::Serial)?.with_group(64)?;
/// let mut dec = GpuViterbi::<i8>::new(t, tile, None, &PipelineOptions::default(), ViterbiTuning::default())?;
/// let llrs = vec![100i8; dec.shapes()[0].items * 4];     // the all-zero codeword
/// let mut bits = Vec::new();
/// dec.decode_all(&llrs, &mut bits)?;
/// assert!(bits.iter().all(|&b| b == 0));
/// # anyhow::Ok(())
/// ```
pub struct GpuViterbi<T: Llr> {
    tile: TileConfig,
    shape: [UnitShape; 1],
    kernel: ViterbiKernel,
    /// Survivor rings in global memory live in the pipeline's first auxiliary buffer.
    pipe: Pipeline<T, u32>,
    /// Output: each tile's bits packed in `out_words` words.
    out_words: usize,
    pitch: usize,
    batch_units: usize,
    /// Units of each batch in flight.
    units: std::collections::VecDeque<usize>,
    /// Hand bits packed ([`BatchDecoder::pack_bits`]).
    packed_out: bool,
}

impl<T: Llr> GpuViterbi<T> {
    /// Build the decoder of `tile` units (punctured with `punctured`, or
    /// whole) on the device `pipeline` names: compile the kernel for it and
    /// allocate the pipeline.
    pub fn new(trellis: Arc<Trellis>, tile: TileConfig, punctured: Option<&PuncturePattern>, pipeline: &PipelineOptions, tuning: ViterbiTuning) -> anyhow::Result<Self> {
        pipeline.validate()?;
        let ctx = context(pipeline.device)?;
        ctx.bind_to_thread().map_err(cuda("cuCtxSetCurrent"))?;
        let llr_bytes = size_of::<T>();
        let k = ViterbiKernel::new(&ctx, &trellis, &tile, punctured, T::TYPE, tuning)?;
        let shape = UnitShape::exact(k.input.unit_llrs, tile.unit_bits());
        // Units start on 16-byte boundaries so that the kernel's vector loads line up.
        let pitch = (shape.items * llr_bytes).div_ceil(16) * 16 / llr_bytes;
        let batch_units = match pipeline.batch_units {
            0 => default_batch_units(k.resident_tiles, tile.group),
            n => n,
        };
        let in_bytes = batch_units.checked_mul(pitch * llr_bytes).filter(|&b| b <= MAX_BATCH_BYTES);
        anyhow::ensure!(
            in_bytes.is_some() && batch_units * tile.group <= u32::MAX as usize,
            "a batch of {batch_units} work units of {} bytes exceeds the limit of {MAX_BATCH_BYTES} bytes per slot",
            pitch * llr_bytes
        );
        let tiles = batch_units * tile.group;
        let size = SlotSize {
            in_items: batch_units * pitch,
            dev_in_bytes: batch_units * pitch * llr_bytes + k.geometry.overread,
            out_items: tiles * tile.f.div_ceil(32),
            aux_bytes: if k.ring_global { vec![k.ring_bytes(tiles)] } else { Vec::new() },
            status_words: 0,
        };
        let pipe = Pipeline::new(&ctx, pipeline, size)?;
        Ok(Self { tile, shape: [shape], kernel: k, pipe, out_words: tile.f.div_ceil(32), pitch, batch_units, units: Default::default(), packed_out: false })
    }

    /// Tiles the device runs at once (one per resident thread).
    pub fn resident_tiles(&self) -> usize {
        self.kernel.resident_tiles
    }

    /// Whether survivor decisions live in global memory.
    pub fn ring_global(&self) -> bool {
        self.kernel.ring_global
    }

    /// Time split of the batch collected last.
    pub fn last_split(&self) -> BatchSplit {
        self.pipe.last_split()
    }

    /// Mean kernel time in milliseconds of decoding `batch` (at most one
    /// batch) already resident on the device, over `reps` launches. Needs
    /// nothing in flight.
    pub fn time_kernel(&mut self, batch: &Batch<'_, T>, reps: usize) -> anyhow::Result<f64> {
        let units = check_batch(batch, &self.shape, self.limit())?;
        let (pitch, unit_len) = (self.pitch, self.shape[0].items);
        let k = &self.kernel;
        self.pipe.time_launches(units, pitch, |host, r| stage_units(host, batch, unit_len, pitch, r), reps, |s, slot| {
            k.run_slot(s, slot, pitch * size_of::<T>(), units)
        })
    }
}

impl<T: Llr> BatchDecoder<T> for GpuViterbi<T> {
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
        let (pitch, unit_len) = (self.pitch, self.shape[0].items);
        let k = &self.kernel;
        self.pipe
            .submit(
                units,
                pitch,
                |host, r| stage_units(host, batch, unit_len, pitch, r),
                units * self.tile.group * self.out_words,
                0,
                |s, slot| k.run_slot(s, slot, pitch * size_of::<T>(), units),
            )
            .map_err(device_error)?;
        self.units.push_back(units);
        Ok(())
    }

    /// Units cut in place from a stream follow each other at one stride
    /// (tile f of every unit): the region they cover goes to the device as it
    /// lies, page-locked, and the kernel reads unit u at u · stride, so that
    /// neither a host copy nor the padding to the pitch remains. Other
    /// batches, and memory the driver will not lock, are staged.
    unsafe fn submit_reused(&mut self, batch: &Batch<'_, T>) -> CodeResult<bool> {
        let units = check_batch(batch, &self.shape, self.limit())?;
        // The kernel's vector loads take whole 16-byte lines; tiles overlap, so the stride is at most a unit.
        let lined = |stride: usize| (stride * size_of::<T>()).is_multiple_of(16) && stride <= self.shape[0].items;
        let Some((region, stride)) = in_place_region(batch, units, self.shape[0].items, lined)? else {
            return self.submit(batch).map(|()| false);
        };
        let k = &self.kernel;
        let out_len = units * self.tile.group * self.out_words;
        let sent = self.pipe.submit_registered(region, out_len, 0, |s, slot| k.run_slot(s, slot, stride * size_of::<T>(), units)).map_err(device_error)?;
        if !sent {
            return self.submit(batch).map(|()| false);
        }
        self.units.push_back(units);
        Ok(true)
    }

    /// Each tile's f bits go as f/8 bytes when f is a multiple of 8.
    fn pack_bits(&mut self) -> bool {
        self.packed_out = self.tile.f.is_multiple_of(8);
        self.packed_out
    }

    fn reused_read(&mut self) -> CodeResult<()> {
        self.pipe.registered_read().map_err(device_error)
    }

    fn forget_reused(&mut self) {
        self.pipe.forget_registered();
    }

    fn collect(&mut self, out: &mut Decoded) -> CodeResult<bool> {
        let (f, words) = (self.tile.f, self.out_words);
        let bits = &mut out.bits;
        let before = self.pipe.in_flight();
        let packed_out = &mut out.packed;
        let to_bytes = self.packed_out;
        let collected = self.pipe.collect(|packed, _| {
            if to_bytes {
                units_to_msb_bytes(packed, words, f / 8, packed_out);
            } else {
                par_unpack(bits, packed, f, words);
            }
            Ok(())
        });
        // A batch leaves the pipeline even when collecting it fails (the
        // unpacking or the event timing); its unit count leaves with it.
        let units = if self.pipe.in_flight() < before { self.units.pop_front() } else { None };
        if !collected.map_err(device_error)? {
            return Ok(false);
        }
        let units = units.unwrap_or_default();
        let shape = self.shape[0];
        out.reports.extend(std::iter::repeat_n(UnitReport { bits: shape.bits, iterations: 0, blocks: 1, check: None, consumed: shape.items }, units));
        Ok(true)
    }

    fn in_flight(&self) -> usize {
        self.pipe.in_flight()
    }

    fn oldest_ready(&mut self) -> bool {
        self.pipe.oldest_ready()
    }

    fn describe(&self) -> String {
        let k = &self.kernel;
        let (major, minor) = k.device.compute_capability;
        format!(
            "gpu {} ({}, sm_{major}{minor}, {} LLRs{}, survivors in {} memory, {} regs, {} tiles resident, {} tiles/batch, {} slots, {} host threads)",
            k.device.index,
            k.device.name,
            T::NAME,
            if k.input.pattern.is_identity() { String::new() } else { format!(" punctured '{}', depunctured on load", k.input.pattern) },
            if k.ring_global { "global" } else { "shared" },
            k.registers,
            k.resident_tiles,
            self.batch_units * self.tile.group,
            self.pipe.depth(),
            self.pipe.host_threads(),
        )
    }
}

/// A Viterbi decoder of `mode` on the backend `options` asks for (through
/// [`select`]: with `auto`, the GPU when one is usable, else the CPU with the
/// reason). With `punctured`, the decoder takes the units of a punctured
/// [`Tiler`](crate::codes::conv::Tiler) and puts the erasures back itself: the
/// GPU kernel as it loads, the CPU through [`DepuncturedUnits`]. Terminated
/// frames always decode on the CPU (`gpu` then fails, `auto` says why).
///
/// # Example
/// ```
/// use gpufec::codes::conv::{ConvCode, FrameConfig, Trellis, ViterbiMode};
/// use gpufec::gpu::{Backend, BackendOptions, ViterbiTuning, viterbi_decoder};
/// use std::sync::Arc;
/// let t = Arc::new(Trellis::new(&ConvCode::k7_171_133()));
/// let mode = ViterbiMode::Frame(FrameConfig::new(100, true).unwrap());
/// let options = BackendOptions { backend: Backend::Cpu, ..Default::default() };
/// let (dec, choice) = viterbi_decoder::<f32>(t, mode, None, &options, ViterbiTuning::default()).unwrap();
/// assert!(dec.describe().starts_with("cpu") && !choice.gpu);
/// ```
pub fn viterbi_decoder<T: ViterbiLlr>(
    trellis: Arc<Trellis>,
    mode: ViterbiMode,
    punctured: Option<&PuncturePattern>,
    options: &BackendOptions,
    tuning: ViterbiTuning,
) -> anyhow::Result<(Box<dyn BatchDecoder<T>>, Choice)> {
    let tile = match (mode, punctured) {
        (ViterbiMode::Frame(_), Some(_)) => {
            anyhow::bail!("terminated frames take depunctured LLRs; put a Depuncture block before the decoder")
        }
        (ViterbiMode::Tiled(tile), _) => Some(tile),
        (ViterbiMode::Frame(_), None) => None,
    };
    let gpu = || -> anyhow::Result<Box<dyn BatchDecoder<T>>> {
        let Some(tile) = tile else {
            anyhow::bail!("the GPU Viterbi decoder decodes tiles of a stream; terminated frames are decoded on the CPU");
        };
        on_devices(&options.pipeline, |p| Ok(Box::new(GpuViterbi::<T>::new(trellis.clone(), tile, punctured, p, tuning)?)))
    };
    let cpu = || -> anyhow::Result<Box<dyn BatchDecoder<T>>> {
        let plain = Box::new(CpuViterbi::<T>::new(trellis.clone(), mode, options.cpu_threads)?);
        Ok(match (tile, punctured) {
            (Some(tile), Some(p)) => Box::new(DepuncturedUnits::new(plain, tile, p.clone())?),
            _ => plain,
        })
    };
    select(options.backend, gpu, cpu)
}
