//! Host-side launcher of the GPU polar BP decoder (`kernels/polar.cu`): the
//! code, the iterations and the stop become compile-time constants,
//! codewords travel through the N-slot [`Pipeline`], and each batch is one
//! launch (a group of threads per codeword, several codewords per CTA for
//! short codes); and the family's choice between it and the CPU decoders.

mod bench;
mod kernel;
mod link;

pub use bench::bench_polar;
pub use kernel::{GPU_MAX_N, compile_polar_kernel};
pub use link::{DevicePolarLink, compile_polar_link_kernel};

use super::multi::on_devices;
use super::backend::{BackendOptions, Choice, select};
use super::compile::kernel;
use super::device::{DeviceInfo, context, cuda, device_error, info_of};
use super::memory::DeviceBuf;
use super::pipeline::{BatchSplit, MAX_BATCH_BYTES, Pipeline, PipelineOptions, SlotBuffers, SlotSize, default_batch_units, par_unpack};
use super::staging::{in_place_region, stage_units};
use crate::codes::decode::{Batch, BatchDecoder, BatchLimit, Decoded, UnitReport, UnitShape, check_batch};
use crate::codes::error::CodeResult;
use crate::codes::llr::Llr;
use crate::codes::packed::units_to_msb_bytes;
use crate::codes::polar::nr::NrDecoder;
use crate::codes::polar::{Algorithm, BpConfig, BpPrecision, CpuPolar, EarlyStop, PolarChain, PolarFrames, PolarSpec};
use cudarc::driver::{CudaFunction, result, sys};
use kernel::{ENTRY, Geometry, Launcher, out_words};
use rayon::prelude::*;

/// Most device memory the default batch size gives a slot's own buffers;
/// a batch size asked for explicitly may use up to [`MAX_BATCH_BYTES`].
const DEFAULT_SLOT_BYTES: usize = 1 << 30;
/// LLR bytes a default batch holds at least, so that a batch of short
/// codewords is not over before its copies and launch have paid off (lent
/// 2 × H200, (1024, 512) at 5 dB, each GPU alone in place: 16 MiB batches
/// 13.7 Gb/s, 64 MiB 19.3, 128 MiB 20.0; both GPUs 1.16×, 1.95×, 1.97× one),
/// and that over several GPUs the caller's turn per batch is not what sets
/// the pace (lent 4 × H200, all four in place, two runs each: 64 MiB 2.59×
/// and 2.54× one GPU, 128 MiB 3.00× and 3.06×, 256 MiB 2.83× and 2.95×).
const MIN_BATCH_LLR_BYTES: usize = 128 << 20;
/// Codewords' status words a host thread checks and reports on at least,
/// per part of a collected batch.
const WORDS_PER_TASK: usize = 1 << 14;

/// Whether the GPU decodes `cfg` on `spec`: the `i8` model (the GPU's
/// arithmetic), any stop (the CRC's on codes that are not systematic), N
/// up to [`GPU_MAX_N`].
pub(super) fn check_gpu_decodes(spec: &PolarSpec, cfg: &BpConfig) -> anyhow::Result<()> {
    anyhow::ensure!(cfg.precision == BpPrecision::I8, "the GPU decodes BP in the i8 model (precision i8); f32 BP is the CPU's");
    anyhow::ensure!(
        cfg.early_stop != EarlyStop::Crc || !spec.systematic(),
        "the GPU's CRC stop reads u's information bits; a systematic code's (in x) is the CPU's"
    );
    anyhow::ensure!(spec.n() <= GPU_MAX_N, "N = {}: the GPU decodes codes up to N = {GPU_MAX_N}", spec.n());
    Algorithm::Bp(*cfg).validate(spec)?;
    Ok(())
}

/// GPU polar BP decoder, computing what the CPU's `i8` model
/// ([`CpuPolar`] with [`BpPrecision::I8`]) computes: the same bits,
/// iteration counts, checks and soft output.
///
/// A unit is a codeword's N LLRs (`i8`, or `f32` quantized on load as the
/// model quantizes them); it decodes to the spec's payload bits. Where a
/// codeword's messages (2·(m − 2)·N bytes: the columns next to u stay in
/// registers) fit a CTA's shared memory they live there, N/8 threads to a
/// codeword, each updating four processing elements per instruction; longer
/// codes keep them in global scratch.
/// Every codeword stops on its own when û·G = x̂ (or, with the CRC stop,
/// when its information bits pass the CRC).
///
/// # Example
/// ```no_run
/// use gpufec::codes::BatchDecoder;
/// use gpufec::codes::polar::{BpConfig, BpPrecision, Construction, PolarSpec};
/// use gpufec::gpu::{GpuPolar, PipelineOptions};
/// use std::sync::Arc;
/// let spec = PolarSpec::plain(Arc::new(Construction::Nr.build(1024, 512)?));
/// let cfg = BpConfig { precision: BpPrecision::I8, ..BpConfig::default() };
/// let mut dec = GpuPolar::<i8>::new(spec, cfg, false, &PipelineOptions::default())?;
/// let mut bits = Vec::new();
/// dec.decode_all(&vec![20i8; 1024], &mut bits)?; // the all-zero codeword
/// assert_eq!(bits, vec![0; 512]);
/// # anyhow::Ok(())
/// ```
pub struct GpuPolar<T: Llr> {
    spec: PolarSpec,
    cfg: BpConfig,
    shape: [UnitShape; 1],
    geometry: Geometry,
    function: CudaFunction,
    soft: bool,
    /// Hard decisions handed packed ([`BatchDecoder::pack_bits`]).
    packed_out: bool,
    registers: i32,
    resident: usize,
    batch_units: usize,
    /// The information bits of a collected batch of a code with a CRC,
    /// kept from batch to batch so that their pages are not faulted in anew.
    info: Vec<u8>,
    /// Dropped before `tables`: its drop waits for every kernel that reads them.
    pipe: Pipeline<T, u32>,
    tables: DeviceBuf,
    device: DeviceInfo,
}

impl<T: Llr> GpuPolar<T> {
    /// A decoder of `spec`'s codewords by `cfg` (checked: the `i8` model,
    /// the CRC stop only on codes that are not systematic), with soft output or not, on the device
    /// `pipeline` names. Compiles the kernel for the device and allocates
    /// the pipeline.
    pub fn new(spec: PolarSpec, cfg: BpConfig, soft: bool, pipeline: &PipelineOptions) -> anyhow::Result<Self> {
        check_gpu_decodes(&spec, &cfg)?;
        pipeline.validate()?;
        let (n, k) = (spec.n(), spec.code().k());
        let ctx = context(pipeline.device)?;
        ctx.bind_to_thread().map_err(cuda("cuCtxSetCurrent"))?;
        let device = info_of(&ctx)?;
        let geometry = Geometry::new(n, device.smem_per_block_optin, soft).on_sm(device.smem_per_sm, device.smem_reserved_per_block);
        let defines = kernel::defines(&spec, &cfg, T::TYPE, soft, &geometry);
        let function = kernel(&ctx, "polar.cu", ENTRY, &defines)?;
        let smem = geometry.smem();
        // Beyond the default per-block size a kernel must opt in.
        if smem > device.smem_per_block {
            function
                .set_attribute(sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem as i32)
                .map_err(cuda("cuFuncSetAttribute"))?;
        }
        let registers = function.num_regs().map_err(cuda("cuFuncGetAttribute"))?;
        let per_sm = function.occupancy_max_active_blocks_per_multiprocessor(geometry.threads() as u32, smem, None).map_err(cuda("occupancy query"))?;
        anyhow::ensure!(per_sm > 0, "the polar BP kernel for N = {n} does not fit on {}", device.name);
        let resident = per_sm as usize * geometry.per_cta * device.sms as usize;

        let out_words = out_words(k, soft);
        let scratch = if geometry.global { geometry.msg_bytes() } else { 0 };
        let per_unit = n * size_of::<T>() + 4 * out_words + scratch;
        let batch_units = match pipeline.batch_units {
            0 => default_batch_units(resident, 1).max(MIN_BATCH_LLR_BYTES / (n * size_of::<T>())).min(DEFAULT_SLOT_BYTES / per_unit).max(1),
            b => b,
        };
        let fits = batch_units.checked_mul(per_unit).is_some_and(|_| [n * size_of::<T>(), 4 * out_words, scratch].iter().all(|&b| batch_units * b <= MAX_BATCH_BYTES));
        anyhow::ensure!(
            fits && batch_units <= u32::MAX as usize,
            "a batch of {batch_units} codewords ({per_unit} bytes of device memory each) exceeds the limit of {MAX_BATCH_BYTES} bytes per buffer and slot"
        );
        let size = SlotSize {
            in_items: batch_units * n,
            dev_in_bytes: batch_units * n * size_of::<T>(),
            out_items: batch_units * out_words,
            aux_bytes: if geometry.global { vec![batch_units * scratch] } else { Vec::new() },
            status_words: batch_units,
        };
        let pipe = Pipeline::new(&ctx, pipeline, size)?;
        let table = kernel::tables(&spec, &geometry);
        let tables = DeviceBuf::new(&ctx, 4 * table.len())?;
        // SAFETY: the buffer holds the table; the copy is waited for below,
        // before any kernel can read it.
        unsafe { result::memcpy_htod_sync(tables.ptr(), &table) }.map_err(cuda("polar table copy"))?;
        ctx.synchronize().map_err(cuda("cuCtxSynchronize"))?;
        let shape = [UnitShape::exact(n, spec.payload_len())];
        Ok(Self { spec, cfg, shape, geometry, function, soft, packed_out: false, registers, resident, batch_units, info: Vec::new(), pipe, tables, device })
    }

    /// Time split of the batch collected last.
    pub fn last_split(&self) -> BatchSplit {
        self.pipe.last_split()
    }

    /// Codewords the device decodes at once.
    pub fn resident_codewords(&self) -> usize {
        self.resident
    }

    /// Mean kernel time in milliseconds of decoding `batch` (at most one
    /// batch) already resident on the device, over `reps` launches. Needs
    /// nothing in flight.
    pub fn time_kernel(&mut self, batch: &Batch<'_, T>, reps: usize) -> anyhow::Result<f64> {
        let units = check_batch(batch, &self.shape, self.limit())?;
        let n = self.spec.n();
        let launcher = Launcher { f: &self.function, g: self.geometry, tables: self.tables.ptr() };
        self.pipe.time_launches(units, n, |host, r| stage_units(host, batch, n, n, r), reps, |s, slot| launcher.run(s, slot, units))
    }
}

impl<T: Llr> GpuPolar<T> {
    /// Codewords in one batch.
    pub(crate) fn batch_units(&self) -> usize {
        self.batch_units
    }

    /// Slots of the pipeline.
    pub(crate) fn slots(&self) -> usize {
        self.pipe.depth()
    }

    /// Output words per codeword (the K information bits packed, least
    /// significant first).
    pub(crate) fn out_words(&self) -> usize {
        out_words(self.spec.code().k(), self.soft)
    }

    /// The code's tables on the device ([`kernel::tables`]): u's frozen
    /// bits in ⌈N/32⌉ words, then the K information positions, ascending.
    pub(crate) fn tables_ptr(&self) -> sys::CUdeviceptr {
        self.tables.ptr()
    }

    /// Queue work on slot `i` with input made on the device (a device
    /// link): `work(stream, slot, decode)` writes codewords of N LLRs into
    /// `slot.input`, calls `decode(codewords)` to queue their decoding
    /// (information bits into `slot.output`, status words into
    /// `slot.status`), and reads them. Hard output only; needs no batch in
    /// flight.
    pub(crate) fn resident<R>(&mut self, i: usize, work: impl FnOnce(sys::CUstream, &SlotBuffers, &dyn Fn(usize) -> anyhow::Result<()>) -> anyhow::Result<R>) -> anyhow::Result<R> {
        anyhow::ensure!(!self.soft, "device-made input is decoded to hard bits");
        let launcher = Launcher { f: &self.function, g: self.geometry, tables: self.tables.ptr() };
        let limit = self.batch_units;
        self.pipe.resident(i, |s, slot| {
            let decode = |units: usize| -> anyhow::Result<()> {
                anyhow::ensure!(units <= limit, "{units} codewords in a batch of {limit}");
                launcher.run(s, slot, units)
            };
            work(s, slot, &decode)
        })
    }
}

impl<T: Llr> BatchDecoder<T> for GpuPolar<T> {
    fn shapes(&self) -> &[UnitShape] {
        &self.shape
    }

    fn limit(&self) -> BatchLimit {
        BatchLimit { units: self.batch_units, items: self.batch_units * self.spec.n() }
    }

    fn depth(&self) -> usize {
        self.pipe.depth()
    }

    fn submit(&mut self, batch: &Batch<'_, T>) -> CodeResult<()> {
        let units = check_batch(batch, &self.shape, self.limit())?;
        let n = self.spec.n();
        let words = out_words(self.spec.code().k(), self.soft);
        let launcher = Launcher { f: &self.function, g: self.geometry, tables: self.tables.ptr() };
        self.pipe.submit(units, n, |host, r| stage_units(host, batch, n, n, r), units * words, units, |s, slot| launcher.run(s, slot, units)).map_err(device_error)
    }

    /// Codewords that follow each other (a stream's, cut in place, or a
    /// caller's buffer of whole codewords) go to the device as they lie,
    /// page-locked, where the kernel reads them as from staging: no host
    /// copy. Other batches, and memory the driver will not lock, are staged.
    unsafe fn submit_reused(&mut self, batch: &Batch<'_, T>) -> CodeResult<bool> {
        let units = check_batch(batch, &self.shape, self.limit())?;
        let n = self.spec.n();
        let Some((region, _)) = in_place_region(batch, units, n, |stride| stride == n || units == 1)? else {
            return self.submit(batch).map(|()| false);
        };
        let words = out_words(self.spec.code().k(), self.soft);
        let launcher = Launcher { f: &self.function, g: self.geometry, tables: self.tables.ptr() };
        let sent = self.pipe.submit_registered(region, units * words, units, |s, slot| launcher.run(s, slot, units)).map_err(device_error)?;
        if !sent {
            return self.submit(batch).map(|()| false);
        }
        Ok(true)
    }

    fn reused_read(&mut self) -> CodeResult<()> {
        self.pipe.registered_read().map_err(device_error)
    }

    fn forget_reused(&mut self) {
        self.pipe.forget_registered();
    }

    /// A codeword's payload goes as bytes when it is a whole number of them
    /// and comes out of the kernel as it is (no CRC, or one after the
    /// payload that the kernel checked), without soft output.
    fn pack_bits(&mut self) -> bool {
        let spec = &self.spec;
        let as_is = match spec.check() {
            None => true,
            Some(c) => self.cfg.early_stop == EarlyStop::Crc && c.in_order(),
        };
        self.packed_out = as_is && !self.soft && spec.payload_len().is_multiple_of(8);
        self.packed_out
    }

    fn collect(&mut self, out: &mut Decoded) -> CodeResult<bool> {
        let spec = &self.spec;
        let (k, p, n) = (spec.code().k(), spec.payload_len(), spec.n());
        let (kw, words, soft) = (k.div_ceil(32), out_words(k, self.soft), self.soft);
        let (iterations, g_stop) = (self.cfg.iterations, self.cfg.early_stop == EarlyStop::GMatrix);
        // With the CRC stop the kernel checked the CRC of the bits it
        // returns: its verdict is the status word's, and a CRC after the
        // payload leaves the payload the first K − L information bits.
        let crc_in_place = self.cfg.early_stop == EarlyStop::Crc && spec.check().is_some_and(|c| c.in_order());
        let (bits, soft_out, reports, info) = (&mut out.bits, &mut out.soft, &mut out.reports, &mut self.info);
        let (packed_out, to_bytes) = (&mut out.packed, self.packed_out);
        let collected = self.pipe.collect(|packed, status| {
            // Every codeword stops by the last iteration, so a status word
            // left at zero means the kernel did not run to its end; checked
            // first, so that a failed batch appends nothing.
            // (On the pool's threads, as the reports below, in parts of
            // WORDS_PER_TASK: a batch holds tens of thousands of codewords, and
            // the host sets the pace; on the lent 64-core host finer parts
            // cost 0.2–0.4 ms a batch in hand-offs alone, as long as the work.)
            let bad = |st: &u32| !(1..=iterations).contains(&(st & 0xffff)) || st >> 17 != 0;
            if let Some((i, st)) = status.par_iter().enumerate().with_min_len(WORDS_PER_TASK).find_first(|(_, st)| bad(st)) {
                anyhow::bail!("codeword {i} of the batch was not decoded (status word {st:#x})");
            }
            let units = status.len();
            let checks = match spec.check() {
                // The payload is the information bits: unpacked straight to
                // the output, with no copy between (and no zero-filled bytes
                // or fresh pages first), so that the host keeps up with the kernel.
                None if to_bytes => {
                    units_to_msb_bytes(packed, words, k / 8, packed_out);
                    Vec::new()
                }
                None => {
                    par_unpack(bits, packed, k, words);
                    Vec::new()
                }
                Some(_) if crc_in_place => {
                    match to_bytes {
                        true => units_to_msb_bytes(packed, words, p / 8, packed_out),
                        false => par_unpack(bits, packed, p, words),
                    }
                    status.iter().map(|st| Some((st >> 16) & 1 == 1)).collect()
                }
                Some(_) => {
                    info.clear();
                    par_unpack(info, packed, k, words);
                    let at = bits.len();
                    bits.resize(at + units * p, 0);
                    bits[at..].par_chunks_mut(p).zip(info.par_chunks(k)).map(|(o, i)| spec.payload_of(i, o)).collect()
                }
            };
            if soft {
                let soft_info: Vec<f32> = packed.par_chunks(words).flat_map_iter(|w| w[kw..].iter().flat_map(|&v| [v as u16 as i16, (v >> 16) as u16 as i16]).take(k).map(f32::from)).collect();
                let at = soft_out.len();
                soft_out.resize(at + units * p, 0.0);
                soft_out[at..].par_chunks_mut(p).zip(soft_info.par_chunks(k)).for_each(|(o, s)| match spec.check() {
                    Some(c) => c.payload(s, o),
                    None => o.copy_from_slice(s),
                });
            }
            reports.par_extend(status.par_iter().enumerate().with_min_len(WORDS_PER_TASK).map(|(i, &st)| {
                // The CPU's report: the CRC's verdict, else the G-matrix check's with that stop.
                let check = checks.get(i).copied().flatten().or(g_stop.then_some((st >> 16) & 1 == 1));
                UnitReport { bits: p, iterations: st & 0xffff, blocks: 1, check, consumed: n }
            }));
            Ok(())
        });
        collected.map_err(device_error)
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
            "gpu {} ({}, sm_{major}{minor}, {} LLRs{}, messages in {} memory, {} threads per codeword, {} codewords per CTA, {} B shared, {} regs, {} codewords resident, {} codewords/batch, {} slots, {} host threads), {}, {}",
            self.device.index,
            self.device.name,
            T::NAME,
            if self.soft { ", soft output" } else { "" },
            if g.global { "global" } else { "shared" },
            g.tpc,
            g.per_cta,
            g.smem(),
            self.registers,
            self.resident,
            self.batch_units,
            self.pipe.depth(),
            self.pipe.host_threads(),
            self.spec.describe(),
            Algorithm::Bp(self.cfg).describe()
        )
    }
}

/// A decoder of `chain`'s units from LLRs of `T` on the backend `options`
/// asks for (through [`select`]: with `auto`, the GPU when one is usable,
/// else the CPU with the reason): bare codewords of N LLRs, or 5G messages
/// of E LLRs rate-recovered on the host and decoded block by block
/// ([`NrDecoder`]). On the GPU, [`GpuPolar`] (BP in the `i8` model with the
/// G-matrix stop, the CRC stop or none; SC, SCL, f32 BP and the CRC stop of
/// systematic codes are the CPU's: `gpu` then fails, `auto` says why); on
/// the CPU, [`CpuPolar`] on
/// `options.cpu_threads` threads. With `soft`, BP on bare codewords also
/// gives each payload bit's a-posteriori LLR.
///
/// # Example
/// ```
/// use gpufec::codes::polar::PolarSettings;
/// use gpufec::codes::settings::Settings;
/// use gpufec::gpu::{Backend, BackendOptions, polar_decoder};
/// let options = BackendOptions { backend: Backend::Auto, cpu_threads: 1, ..Default::default() };
/// let chain = PolarSettings { algorithm: Some("scl:8".into()), ..Default::default() }.resolve()?;
/// let (dec, choice) = polar_decoder::<f32>(&chain, false, &options)?;
/// assert!(dec.describe().starts_with("cpu") && !choice.gpu);
/// assert!(choice.why_not_gpu.is_some_and(|why| why.contains("SCL")));
/// # anyhow::Ok(())
/// ```
pub fn polar_decoder<T: Llr>(chain: &PolarChain, soft: bool, options: &BackendOptions) -> anyhow::Result<(Box<dyn BatchDecoder<T>>, Choice)> {
    let algorithm = chain.algorithm();
    if soft {
        anyhow::ensure!(matches!(algorithm, Algorithm::Bp(_)), "soft output from {}: only BP gives it", algorithm.describe());
        anyhow::ensure!(matches!(chain.frames(), PolarFrames::Codewords(_)), "5G messages are decoded to hard decisions only: no soft output");
    }
    let threads = options.cpu_threads;
    let gpu = || -> anyhow::Result<Box<dyn BatchDecoder<T>>> {
        let Algorithm::Bp(cfg) = algorithm else {
            anyhow::bail!("the GPU decodes BP; {} runs on the CPU", algorithm.describe());
        };
        Ok(match chain.frames() {
            PolarFrames::Codewords(spec) => on_devices(&options.pipeline, |p| Ok(Box::new(GpuPolar::<T>::new(spec.clone(), cfg, soft, p)?)))?,
            PolarFrames::Nr(nr) => {
                let inner = GpuPolar::<T>::new(nr.block_spec().clone(), cfg, false, &options.pipeline)?;
                // A batch of messages fills the inner decoder's batch.
                let messages = (inner.limit().units / nr.blocks()).max(1);
                Box::new(NrDecoder::new(nr.clone(), |_| Ok(Box::new(inner)))?.with_batch_units(messages))
            }
        })
    };
    let cpu = || -> anyhow::Result<Box<dyn BatchDecoder<T>>> {
        Ok(match chain.frames() {
            PolarFrames::Codewords(spec) => {
                let dec = CpuPolar::<T>::new(spec.clone(), algorithm, threads)?;
                Box::new(if soft { dec.with_soft_output()? } else { dec })
            }
            PolarFrames::Nr(nr) => Box::new(NrDecoder::new(nr.clone(), |spec| Ok(Box::new(CpuPolar::<T>::new(spec.clone(), algorithm, threads)?)))?),
        })
    };
    select(options.backend, gpu, cpu)
}
