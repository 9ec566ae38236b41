//! Host-side launcher of the GPU MAP decoder of insertion/deletion codes
//! (`kernels/sync.cu`): the code and its state-space limits become
//! compile-time constants, received units travel through the N-slot
//! [`Pipeline`] as the receiver metric's weights, and each batch is decoded
//! by one launch, one CTA per unit, its size from the kernel's and the
//! device's limits; and the family's choice between it and the CPU.

mod bench;
mod link;

pub use bench::bench_sync;
pub use link::{DeviceSyncLink, compile_sync_link_kernels};

use super::multi::on_devices;
use super::backend::{BackendOptions, Choice, select};
use super::compile::{compile_cubin, kernel};
use super::device::{DeviceInfo, context, cuda, device_error, info_of};
use super::memory::DeviceBuf;
use super::pipeline::{BatchSplit, MAX_BATCH_BYTES, Pipeline, PipelineOptions, SlotBuffers, SlotSize, default_batch_units};
use crate::codes::decode::{Batch, BatchDecoder, BatchLimit, Decoded, UnitReport, UnitShape};
use crate::codes::error::CodeResult;
use crate::codes::sync::decoder::{FLUSH, Received, receiver_weights};
use crate::codes::sync::{BsidParams, DecoderConfig, Framing, Storage, SyncCode, SyncMapDecoder};
use cudarc::driver::{CudaFunction, result, sys};
use rayon::prelude::*;
use std::ffi::c_void;

/// The kernel's entry point.
const ENTRY: &str = "sync_map";

/// Words of a unit's header in the staged input: its length, one spare
/// word (so that the weights start 8-byte aligned).
const HEAD: usize = 2;

/// Smallest CTA the decoder launches (unless an index has fewer lattices).
const MIN_CTA: usize = 128;

/// Largest CTA the decoder launches: more threads than a frame's lattices
/// of one index idle at every synchronisation.
const MAX_CTA: u32 = 1024;

/// Share of the device's free memory the slots' buffers may take together.
const FREE_SHARE: f64 = 0.75;

/// The mark of a unit the kernel wrote, in the top byte of its flags word
/// (the kernel's `DONE`): neither zeros nor a poisoned buffer's byte.
const DONE: u32 = 0x5A << 24;

/// The sizes the kernel is compiled for: the code's and the limits'.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Shape {
    n: usize,
    q: usize,
    symbol_bits: usize,
    symbols: usize,
    states: usize,
    lo: i32,
    corridor: usize,
    corridor_lo: i32,
    books: usize,
    /// Received items a unit holds at most.
    window: usize,
    global: bool,
    /// γ of the index made in shared memory (with global storage, copied
    /// to the frame's in global memory).
    gsmem: bool,
    soft: bool,
    /// The symbol APPs are written out too.
    apps: bool,
    stream: bool,
}

impl Shape {
    /// γ values of one index.
    fn gamma_len(&self) -> usize {
        self.states * self.corridor * self.q
    }

    /// Staged `f32` words per unit.
    fn pitch(&self) -> usize {
        HEAD + 2 * self.window
    }

    /// Output words per unit: consumed, flags, the decisions, the soft
    /// output, the APPs (two words each).
    fn out_words(&self) -> usize {
        self.apps_at() + 2 * self.symbols * self.q * usize::from(self.apps)
    }

    /// Where a unit's APPs start in its output words.
    fn apps_at(&self) -> usize {
        2 + self.symbols * self.symbol_bits * (1 + usize::from(self.soft))
    }

    /// Device bytes of each of a unit's scratch arrays: γ, Σ_D γ, α.
    fn scratch_bytes(&self) -> [usize; 3] {
        let gamma = match (self.global, self.gsmem) {
            (true, _) => self.symbols * self.gamma_len() * 4,
            (false, true) => 0,
            (false, false) => self.gamma_len() * 4,
        };
        let sums = self.symbols * self.states * self.corridor * 8;
        [gamma, sums, (self.symbols + 1) * self.states * 8]
    }

    /// Dynamic shared memory of a CTA of `threads`: β of two indices, the
    /// weights α·β, the APPs' partials of `threads / q` groups and the APPs
    /// (f64), the received samples of two indices' lattices (f32 pairs),
    /// then γ of the index when it is made there (f32).
    fn smem_bytes(&self, threads: usize) -> usize {
        let doubles = 2 * self.states + self.states * self.corridor + (threads / self.q).max(1) * self.q + self.q;
        let samples = 2 * (self.states + self.n + self.corridor - 2);
        8 * (doubles + samples) + if self.gsmem { 4 * self.gamma_len() } else { 0 }
    }

    /// Every device byte of one unit in a slot.
    fn unit_bytes(&self) -> usize {
        self.scratch_bytes().iter().sum::<usize>() + 4 * (self.pitch() + self.out_words())
    }

    fn defines(&self) -> Vec<(String, String)> {
        let d = |k: &str, v: String| (k.to_string(), v);
        vec![
            d("SN", self.n.to_string()),
            d("SQ", self.q.to_string()),
            d("SK", self.symbol_bits.to_string()),
            d("SNS", self.symbols.to_string()),
            d("SM", self.states.to_string()),
            d("SLO", format!("({})", self.lo)),
            d("SW", self.corridor.to_string()),
            d("SCLO", format!("({})", self.corridor_lo)),
            d("SBOOKS", self.books.to_string()),
            d("SWIN", self.window.to_string()),
            d("SGLOBAL", u8::from(self.global).to_string()),
            d("SGSMEM", u8::from(self.gsmem).to_string()),
            d("SSOFT", u8::from(self.soft).to_string()),
            d("SAPP", u8::from(self.apps).to_string()),
            d("SSTREAM", u8::from(self.stream).to_string()),
        ]
    }
}

/// The shape of `reference`'s decoding with γ global or not, the soft
/// output and the APPs written out or not, on a device giving a CTA up to
/// `smem_optin` bytes of shared memory (the index's γ is made there when
/// it fits beside the rest for the largest CTA).
fn shape_of<T: Received>(reference: &SyncMapDecoder<T>, global: bool, soft: bool, apps: bool, smem_optin: usize) -> Shape {
    let (code, limits) = (reference.code(), reference.limits());
    let shape = Shape {
        n: code.n(),
        q: code.q(),
        symbol_bits: code.symbol_bits(),
        symbols: code.symbols(),
        states: limits.frame.states(),
        lo: limits.frame.lo,
        corridor: limits.codeword.states(),
        corridor_lo: limits.codeword.lo,
        books: code.codebooks(),
        window: reference.shapes()[0].items,
        global,
        gsmem: false,
        soft,
        apps,
        stream: reference.framing() == Framing::Stream,
    };
    let held = Shape { gsmem: true, ..shape };
    Shape { gsmem: held.smem_bytes(MAX_CTA as usize) <= smem_optin, ..shape }
}

/// The CTA size of the most lattices in work on an SM at once: whole
/// warps, at most `most`,
/// each weighed by the CTAs an SM holds (`per_sm` of a size) and by the
/// share of its threads busy over an index's lattices (the last pass over
/// them may be partial); and how many of those CTAs an SM holds.
fn cta_size(shape: &Shape, most: usize, per_sm: impl Fn(usize) -> usize) -> (usize, usize) {
    let lattices = shape.states * shape.q;
    // Tiny CTAs would spend their time at the per-index steps only a
    // warp or a few threads take.
    let least = MIN_CTA.min(lattices).next_multiple_of(32).min(most);
    (least..=most)
        .step_by(32)
        .map(|t| (t, per_sm(t)))
        .max_by(|&(a, ca), &(b, cb)| {
            let busy = |t: usize, c: usize| c as f64 * lattices as f64 / lattices.div_ceil(t) as f64;
            busy(a, ca).total_cmp(&busy(b, cb)).then(ca.cmp(&cb))
        })
        .unwrap_or((most, 1))
}

/// Shared memory a Hopper CTA may opt in to (227 KiB): what the compile
/// check without a device assumes.
const HOPPER_OPTIN: usize = 227 << 10;

/// Compile the kernel for `code` over a channel of `params` with `cfg`
/// (γ global unless `cfg.storage` is local), with the soft output and the
/// APPs when asked, for `arch` (e.g. `sm_90`), without a device: a check
/// that it compiles.
pub fn compile_sync_kernel(code: &SyncCode, params: BsidParams, cfg: DecoderConfig, soft: bool, apps: bool, arch: &str) -> anyhow::Result<Vec<u8>> {
    let reference = SyncMapDecoder::<u8>::new(code.clone(), params, cfg, 1)?;
    compile_cubin("sync.cu", arch, &shape_of(&reference, cfg.storage != Storage::Local, soft, apps, HOPPER_OPTIN).defines())
}

/// GPU MAP decoder of a [`SyncCode`] over the BSID channel: what the CPU
/// reference ([`SyncMapDecoder`]) computes: γ bit for bit (the same fused
/// operations in the same order), α, β and the APPs with their sums in
/// another order (trees across a warp, not one chain), so within a few
/// units in the last place, and the same decisions and reports unless two
/// symbol values are that close. Units,
/// their checks and reports are the reference's: whole frames or windows of
/// a stream, hard bits (`u8`) or LLRs (`f32`, `i8` divided by the input
/// scale). γ of a whole frame stays on the device (global storage) when a
/// batch of it fits the device's free memory, or when asked; otherwise one
/// index's at a time, computed again for the backward pass (local).
pub struct GpuSync<T: Received> {
    /// The CPU decoder of the same code, channel and units: its shapes,
    /// checks and limits are this decoder's.
    reference: SyncMapDecoder<T>,
    shape: Shape,
    function: CudaFunction,
    /// The CTA of batches that fill the device, and of batches of at most
    /// one unit per SM (as wide as the kernel allows: such a batch's time is
    /// one frame's, which more threads per frame shorten).
    packed: Cta,
    wide: Cta,
    registers: i32,
    /// Dropped before `books`: its drop waits for every kernel that reads them.
    pipe: Pipeline<f32, u32>,
    /// Every codebook's codewords on the device.
    books: DeviceBuf,
    device: DeviceInfo,
    /// The symbol APPs of the units collected so far (N rows of q per
    /// unit), when the decoder was built to give them.
    apps: Vec<f64>,
}

impl<T: Received> GpuSync<T> {
    /// A decoder of `code` over a channel of `params` with `cfg` (its
    /// limits, storage and framing), LLRs divided by `input_scale`, with
    /// bit LLRs when `soft`, on the device `pipeline` names. Compiles the
    /// kernel for the code and allocates the pipeline.
    pub fn new(code: SyncCode, params: BsidParams, cfg: DecoderConfig, input_scale: f32, soft: bool, pipeline: &PipelineOptions) -> anyhow::Result<Self> {
        Self::build(code, params, cfg, input_scale, soft, false, pipeline)
    }

    /// [`Self::new`] (without soft output) that also gives every collected
    /// unit's symbol APPs ([`Self::take_apps`]): what a test compares with
    /// [`SyncMapDecoder::decode_frame`]'s.
    pub fn with_apps(code: SyncCode, params: BsidParams, cfg: DecoderConfig, input_scale: f32, pipeline: &PipelineOptions) -> anyhow::Result<Self> {
        Self::build(code, params, cfg, input_scale, false, true, pipeline)
    }

    fn build(code: SyncCode, params: BsidParams, cfg: DecoderConfig, input_scale: f32, soft: bool, apps: bool, pipeline: &PipelineOptions) -> anyhow::Result<Self> {
        pipeline.validate()?;
        let reference = SyncMapDecoder::<T>::new(code, params, cfg, 1)?.with_input_scale(input_scale)?;
        let ctx = context(pipeline.device)?;
        ctx.bind_to_thread().map_err(cuda("cuCtxSetCurrent"))?;
        let device = info_of(&ctx)?;
        let (free, _) = result::mem_get_info().map_err(cuda("cuMemGetInfo"))?;
        let budget = (free as f64 * FREE_SHARE) as usize / pipeline.slots.max(1);
        let global_shape = shape_of(&reference, true, soft, apps, device.smem_per_block_optin);
        // Global storage when each index's γ is made in shared memory and a
        // wave of units (about four per SM) fits the budget and one buffer:
        // else local storage is the faster (its γ never leaves the SM, and
        // its batches are not cut short by memory).
        let wave = device.sms as usize * 4;
        let global = match cfg.storage {
            Storage::Global => true,
            Storage::Local => false,
            Storage::Auto => {
                global_shape.gsmem
                    && global_shape.unit_bytes().saturating_mul(wave) <= budget
                    && global_shape.scratch_bytes()[0].saturating_mul(wave) <= MAX_BATCH_BYTES
            }
        };
        let shape = shape_of(&reference, global, soft, apps, device.smem_per_block_optin);
        let function = kernel(&ctx, "sync.cu", ENTRY, &shape.defines())?;
        let registers = function.num_regs().map_err(cuda("cuFuncGetAttribute"))?;
        let most = function.max_threads_per_block().map_err(cuda("cuFuncGetAttribute"))?.max(32) as u32;
        // Every CTA size tried below may take the largest's shared memory.
        let smem_most = shape.smem_bytes(MAX_CTA as usize);
        anyhow::ensure!(
            smem_most <= device.smem_per_block_optin,
            "the sync kernel for {} needs {smem_most} bytes of shared memory per CTA; {} gives {}",
            reference.code().describe(),
            device.name,
            device.smem_per_block_optin
        );
        if smem_most > device.smem_per_block {
            function
                .set_attribute(sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem_most as i32)
                .map_err(cuda("cuFuncSetAttribute"))?;
        }
        let (threads, per_sm) = cta_size(&shape, most.min(MAX_CTA) as usize, |t| {
            function.occupancy_max_active_blocks_per_multiprocessor(t as u32, shape.smem_bytes(t), None).map_or(0, |b| b as usize)
        });
        anyhow::ensure!(per_sm > 0, "the sync kernel for {} does not fit on {}", reference.code().describe(), device.name);
        let packed = Cta { threads: threads as u32, smem: shape.smem_bytes(threads) as u32, sms: device.sms as usize };
        let wide_threads = (shape.states * shape.q).next_multiple_of(32).min(most.min(MAX_CTA) as usize / 32 * 32).max(32);
        let wide = Cta { threads: wide_threads as u32, smem: shape.smem_bytes(wide_threads) as u32, sms: 0 };
        let resident = per_sm * device.sms as usize;
        let unit_bytes = shape.unit_bytes();
        // Units a slot holds: within its share of free memory, and each
        // buffer within the pipeline's limit.
        let largest = shape.scratch_bytes().into_iter().chain([4 * shape.pitch(), 4 * shape.out_words()]).max().unwrap_or(1);
        let by_memory = (budget / unit_bytes.max(1)).min(MAX_BATCH_BYTES / largest.max(1));
        let batch_units = match pipeline.batch_units {
            // Whole waves of resident CTAs where memory allows.
            0 => match default_batch_units(resident, 1).min(by_memory) {
                b if b >= resident => b / resident * resident,
                b => b.max(1),
            },
            b => b,
        };
        anyhow::ensure!(
            batch_units <= by_memory && batch_units <= u32::MAX as usize,
            "a batch of {batch_units} units ({unit_bytes} bytes of device memory each, {} storage) exceeds the device's free memory or {MAX_BATCH_BYTES} bytes per buffer",
            if global { "global" } else { "local" }
        );
        let reference = reference.with_batch_units(batch_units);
        let scratch = shape.scratch_bytes().map(|b| b * batch_units);
        let size = SlotSize {
            in_items: batch_units * shape.pitch(),
            dev_in_bytes: batch_units * shape.pitch() * 4,
            out_items: batch_units * shape.out_words(),
            aux_bytes: scratch.to_vec(),
            status_words: 0,
        };
        let pipe = Pipeline::new(&ctx, pipeline, size)?;
        let code = reference.code();
        let words: Vec<u32> = (0..code.codebooks()).flat_map(|b| code.codebook(b).words().to_vec()).collect();
        let books = DeviceBuf::new(&ctx, 4 * words.len())?;
        // SAFETY: the buffer holds every codeword; the copy is waited for below.
        unsafe { result::memcpy_htod_sync(books.ptr(), &words) }.map_err(cuda("codebook copy"))?;
        ctx.synchronize().map_err(cuda("cuCtxSynchronize"))?;
        Ok(Self { reference, shape, function, packed, wide, registers, pipe, books, device, apps: Vec::new() })
    }

    /// Whether γ of a whole frame is kept on the device.
    pub fn global_storage(&self) -> bool {
        self.shape.global
    }

    /// Device bytes one unit of a batch takes (its input, scratch and output).
    pub fn unit_bytes(&self) -> usize {
        self.shape.unit_bytes()
    }

    /// The symbol APPs of the units collected since the last call (N rows
    /// of q per unit, in order); empty unless built [`with_apps`](Self::with_apps).
    pub fn take_apps(&mut self) -> Vec<f64> {
        std::mem::take(&mut self.apps)
    }

    /// Time split of the batch collected last.
    pub fn last_split(&self) -> BatchSplit {
        self.pipe.last_split()
    }

    /// Mean kernel milliseconds of decoding `batch` (at most one batch)
    /// already resident on the device, over `reps` launches. Needs nothing
    /// in flight.
    pub fn time_kernel(&mut self, batch: &Batch<'_, T>, reps: usize) -> anyhow::Result<f64> {
        let units = self.reference.check(batch)?;
        let (shape, params, scale) = (self.shape, *self.reference.params(), self.reference.input_scale());
        let launch = Launch::new(&self.function, self.packed, self.wide, &self.books, &self.reference);
        self.pipe.time_launches(units, shape.pitch(), |host, r| stage(host, batch, &shape, &params, scale, r), reps, |s, slot| launch.run(s, slot, units))
    }


    /// Units in one batch.
    pub(crate) fn batch_units(&self) -> usize {
        self.reference.limit().units
    }

    /// Slots of the pipeline.
    pub(crate) fn slots(&self) -> usize {
        self.pipe.depth()
    }

    /// Where a unit lies in a slot: its staged input's pitch and window
    /// (`f32` words: its length, a spare word, then the weights Q(y|0) and
    /// Q(y|1) − Q(y|0) of up to `window` items each), and its output words
    /// (consumed items, flags, then one word per decoded bit).
    pub(crate) fn unit_layout(&self) -> (usize, usize, usize) {
        (self.shape.pitch(), self.shape.window, self.shape.out_words())
    }

    /// Every codebook's codewords on the device (codebook b's at b·q).
    pub(crate) fn books_ptr(&self) -> sys::CUdeviceptr {
        self.books.ptr()
    }

    /// Queue work on slot `i` with input made on the device (a device
    /// link): `work(stream, slot, decode)` writes units in the staged
    /// layout ([`Self::unit_layout`]) into `slot.input`, calls
    /// `decode(units)` to queue their decoding into `slot.output`, and reads
    /// it. Needs no batch in flight.
    pub(crate) fn resident<R>(&mut self, i: usize, work: impl FnOnce(sys::CUstream, &SlotBuffers, &dyn Fn(usize) -> anyhow::Result<()>) -> anyhow::Result<R>) -> anyhow::Result<R> {
        let launch = Launch::new(&self.function, self.packed, self.wide, &self.books, &self.reference);
        let limit = self.batch_units();
        self.pipe.resident(i, |s, slot| {
            let decode = |units: usize| -> anyhow::Result<()> {
                anyhow::ensure!(units <= limit, "{units} units in a batch of {limit}");
                launch.run(s, slot, units)
            };
            work(s, slot, &decode)
        })
    }
}

/// Stage units `range` of `batch` into `host`: each unit's length, then the
/// receiver metric's weights of its items (zeros after them).
fn stage<T: Received>(host: &mut [f32], batch: &Batch<'_, T>, shape: &Shape, params: &BsidParams, scale: f32, range: std::ops::Range<usize>) -> anyhow::Result<()> {
    let (pitch, window) = (shape.pitch(), shape.window);
    host.par_chunks_exact_mut(pitch).zip(range.into_par_iter()).for_each(|(dst, u)| {
        let items = batch.unit(u);
        dst[0] = f32::from_bits(items.len() as u32);
        dst[1] = 0.0;
        let (w0, dw) = dst[HEAD..].split_at_mut(window);
        receiver_weights(items, params, scale, w0, dw);
        w0[items.len()..].fill(0.0);
        dw[items.len()..].fill(0.0);
    });
    Ok(())
}

/// One batch's launch; a value of its own so that the pipeline can be
/// borrowed mutably beside it.
struct Launch<'a> {
    f: &'a CudaFunction,
    packed: Cta,
    wide: Cta,
    books: sys::CUdeviceptr,
    insert: f32,
    delete: f32,
}

impl<'a> Launch<'a> {
    /// The launch of `f` in `packed` CTAs, or `wide` ones for a batch of at
    /// most one unit per SM, on `books`, for `reference`'s channel.
    fn new<T: Received>(f: &'a CudaFunction, packed: Cta, wide: Cta, books: &DeviceBuf, reference: &SyncMapDecoder<T>) -> Self {
        let (insert, delete) = reference.lattice_moves();
        Self { f, packed, wide, books: books.ptr(), insert, delete }
    }

    fn run(&self, stream: sys::CUstream, slot: &SlotBuffers, units: usize) -> anyhow::Result<()> {
        let cta = if units <= self.packed.sms { self.wide } else { self.packed };
        let grid = u32::try_from(units.max(1)).map_err(|_| anyhow::anyhow!("a grid of {units} CTAs is too large"))?;
        let [gamma, sums, alpha] = [0, 1, 2].map(|i| slot.aux[i].ptr());
        let (mut input, mut books, mut out) = (slot.input.ptr(), self.books, slot.output.ptr());
        let (mut insert, mut delete, mut flush) = (self.insert, self.delete, FLUSH);
        let (mut gamma, mut sums, mut alpha) = (gamma, sums, alpha);
        let mut units = units as u32;
        let mut params: Vec<*mut c_void> = vec![
            arg(&mut input),
            arg(&mut books),
            arg(&mut insert),
            arg(&mut delete),
            arg(&mut flush),
            arg(&mut gamma),
            arg(&mut sums),
            arg(&mut alpha),
            arg(&mut out),
            arg(&mut units),
        ];
        // SAFETY: the parameters are the kernel's, in its order; every buffer
        // was sized for the slot's batch, which holds `units` units.
        unsafe { result::launch_kernel(self.f.cu_function(), (grid, 1, 1), (cta.threads, 1, 1), cta.smem, stream, &mut params) }.map_err(cuda("sync_map launch"))
    }
}

/// A launch's CTA: its threads and dynamic shared memory; `sms`, the
/// device's SMs, on the packed one (batches up to that many units take the
/// wide one).
#[derive(Debug, Clone, Copy)]
struct Cta {
    threads: u32,
    smem: u32,
    sms: usize,
}

/// A kernel argument as the driver takes it.
fn arg<X>(x: &mut X) -> *mut c_void {
    (x as *mut X).cast()
}

impl<T: Received> BatchDecoder<T> for GpuSync<T> {
    fn shapes(&self) -> &[UnitShape] {
        self.reference.shapes()
    }

    fn limit(&self) -> BatchLimit {
        self.reference.limit()
    }

    fn depth(&self) -> usize {
        self.pipe.depth()
    }

    fn submit(&mut self, batch: &Batch<'_, T>) -> CodeResult<()> {
        let units = self.reference.check(batch)?;
        let (shape, params, scale) = (self.shape, *self.reference.params(), self.reference.input_scale());
        let launch = Launch::new(&self.function, self.packed, self.wide, &self.books, &self.reference);
        self.pipe
            .submit(units, shape.pitch(), |host, r| stage(host, batch, &shape, &params, scale, r), units * shape.out_words(), 0, |s, slot| launch.run(s, slot, units))
            .map_err(device_error)
    }

    fn collect(&mut self, out: &mut Decoded) -> CodeResult<bool> {
        let shape = self.shape;
        let (k, words) = (shape.symbols * shape.symbol_bits, shape.out_words());
        let mut reports = Vec::new();
        let (bits, soft, apps) = (&mut out.bits, &mut out.soft, &mut self.apps);
        let collected = self.pipe.collect(|words_out, _| {
            for (u, w) in words_out.chunks_exact(words).enumerate() {
                // Every unit's flags carry DONE once its CTA ran to its end.
                anyhow::ensure!(w[1] & 0xff00_0000 == DONE, "unit {u} of the batch was not decoded (flags {:#x})", w[1]);
                reports.push(UnitReport { bits: k, iterations: 0, blocks: 1, check: (w[1] & 1 != 0).then_some(false), consumed: w[0] as usize });
                bits.extend(w[2..2 + k].iter().map(|&b| b as u8));
                if shape.soft {
                    soft.extend(w[2 + k..2 + 2 * k].iter().map(|&x| f32::from_bits(x)));
                }
                if shape.apps {
                    apps.extend(w[shape.apps_at()..].chunks_exact(2).map(|p| f64::from_bits(u64::from(p[0]) | u64::from(p[1]) << 32)));
                }
            }
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
        self.shape.soft
    }

    fn describe(&self) -> String {
        let (major, minor) = self.device.compute_capability;
        format!(
            "gpu {} ({}, sm_{major}{minor}, {}{}, one CTA of {} threads per unit ({} in batches of at most one unit per SM), {} regs, {} B shared, {} storage ({} KiB of device memory per unit), {} units/batch, {} slots, {} host threads), {}, {}, {}",
            self.device.index,
            self.device.name,
            T::NAME,
            if self.shape.soft { ", soft output" } else { "" },
            self.packed.threads,
            self.wide.threads,
            self.registers,
            self.packed.smem,
            match (self.shape.global, self.shape.gsmem) {
                (true, true) => "global (each index's γ made in shared memory)",
                (true, false) => "global",
                (false, true) => "local (γ in shared memory)",
                (false, false) => "local",
            },
            self.shape.unit_bytes() / 1024,
            self.limit().units,
            self.pipe.depth(),
            self.pipe.host_threads(),
            self.reference.code().describe(),
            self.reference.params().describe(),
            self.reference.limits().describe()
        )
    }
}

/// The MAP decoder of `code` for a channel of `params` with `cfg`, taking
/// items of `T` (hard bits, or LLRs divided by `input_scale`), with bit
/// LLRs from the symbol APPs when `soft`, on the backend `options` asks for
/// (through [`select`]: with `auto`, [`GpuSync`] when a GPU is usable, else
/// the CPU reference [`SyncMapDecoder`] on `options.cpu_threads` threads,
/// with the reason).
///
/// # Example
/// ```
/// use gpufec::codes::sync::{BsidParams, DecoderConfig, SyncCode};
/// use gpufec::gpu::{Backend, BackendOptions, sync_decoder};
/// let options = BackendOptions { backend: Backend::Cpu, cpu_threads: 1, ..Default::default() };
/// let code = SyncCode::random(16, 8, 20, 1)?;
/// let (dec, choice) = sync_decoder::<u8>(&code, BsidParams::new(1e-3, 1e-3, 0.0)?, DecoderConfig::default(), 1.0, true, &options)?;
/// assert!(dec.describe().starts_with("cpu") && dec.gives_soft() && !choice.gpu);
/// # anyhow::Ok(())
/// ```
pub fn sync_decoder<T: Received>(
    code: &SyncCode,
    params: BsidParams,
    cfg: DecoderConfig,
    input_scale: f32,
    soft: bool,
    options: &BackendOptions,
) -> anyhow::Result<(Box<dyn BatchDecoder<T>>, Choice)> {
    let gpu = || on_devices(&options.pipeline, |p| Ok(Box::new(GpuSync::<T>::new(code.clone(), params, cfg, input_scale, soft, p)?)));
    let cpu = || -> anyhow::Result<Box<dyn BatchDecoder<T>>> {
        let dec = SyncMapDecoder::<T>::new(code.clone(), params, cfg, options.cpu_threads)?.with_input_scale(input_scale)?;
        Ok(Box::new(if soft { dec.with_soft_output() } else { dec }))
    };
    select(options.backend, gpu, cpu)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(q: usize, states: usize) -> Shape {
        Shape {
            n: 10,
            q,
            symbol_bits: q.trailing_zeros() as usize,
            symbols: 210,
            states,
            lo: -(states as i32 / 2),
            corridor: 9,
            corridor_lo: -4,
            books: 210,
            window: 2200,
            global: false,
            gsmem: true,
            soft: false,
            apps: false,
            stream: true,
        }
    }

    #[test]
    fn the_cta_size_weighs_passes_against_ctas_per_sm() {
        // Registers allow 1536 threads per SM, in at most 32 CTAs.
        let per_sm = |t: usize| (1536 / t).min(32);
        // 1056 lattices: 128 threads (9 passes, 12 CTAs) and 192 (6 passes,
        // 8 CTAs) keep 1408 in work, 288 (4 passes, 5 CTAs) 1320; the tie
        // goes to more CTAs, and CTAs under 128 threads are not tried.
        let (t, c) = cta_size(&shape(32, 33), 1024, per_sm);
        assert_eq!((t, c), (128, 12), "1056 lattices");
        // At most 5 CTAs (shared memory): 384 threads (3 passes, 4 CTAs)
        // keep 1408 in work, 288 (4 passes, 5 CTAs) 1320.
        assert_eq!(cta_size(&shape(32, 33), 1024, |t| (1536 / t).min(5)), (384, 4));
        // Fewer lattices than the smallest CTA: one pass, in whole warps.
        assert_eq!(cta_size(&shape(4, 17), 1024, per_sm).0, 96);
        // The kernel's own limit bounds it.
        assert!(cta_size(&shape(256, 40), 256, per_sm).0 <= 256);
    }

    #[test]
    fn shared_memory_holds_the_apps_partials_of_every_group() {
        let s = shape(32, 33);
        // 8 groups of 32 partials at 256 threads; one group when q exceeds the CTA.
        assert_eq!(s.smem_bytes(256) - s.smem_bytes(224), 8 * 32);
        let big = Shape { q: 2048, ..s };
        assert_eq!(big.smem_bytes(1024), big.smem_bytes(32));
    }
}
