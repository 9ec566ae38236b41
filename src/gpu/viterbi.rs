//! Host-side launcher of the GPU Viterbi decoder (`kernels/viterbi.cu`): the
//! code and tile geometry become compile-time constants of the kernel, work
//! units travel through the N-slot [`Pipeline`], one GPU thread decodes one tile.

use super::compile::kernel;
use super::device::{DeviceInfo, context, cuda, info_of};
use super::memory::DeviceBuf;
use super::pipeline::{BatchSplit, Pipeline, SlotSize, par_chunks, par_unpack, par_units};
use super::stream_copy::stream_copy;
use crate::codes::conv::{PuncturePattern, TileConfig, Tiler, Trellis, ViterbiMode};
use crate::codes::llr::{Llr, all_finite, check_finite};
use crate::codes::{BatchDecoder, CodeError, UnitShape};
use cudarc::driver::{CudaFunction, result, sys};
use std::ffi::c_void;
use std::sync::Arc;

/// LLR types the GPU kernels accept.
pub trait GpuLlr: Llr {
    /// Whether the kernel reads 32-bit floats (else signed bytes).
    const F32: bool;
}
impl GpuLlr for i8 {
    const F32: bool = false;
}
impl GpuLlr for f32 {
    const F32: bool = true;
}

/// Where the kernel keeps each tile's survivor decisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RingPlace {
    /// Shared memory when it leaves room for at least eight warps per SM,
    /// otherwise global memory.
    #[default]
    Auto,
    /// Shared memory (the paper's choice).
    Shared,
    /// Global memory (L2-cached), for long tracebacks.
    Global,
}

impl std::str::FromStr for RingPlace {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> anyhow::Result<Self> {
        match s.trim() {
            "auto" => Ok(Self::Auto),
            "shared" => Ok(Self::Shared),
            "global" => Ok(Self::Global),
            other => anyhow::bail!("survivor memory '{other}' is not one of auto, shared, global"),
        }
    }
}

/// Options of a GPU decoder.
#[derive(Debug, Clone)]
pub struct GpuOptions {
    /// CUDA device index.
    pub device: usize,
    /// Pipeline slots (≥ 2 overlaps copies with compute).
    pub slots: usize,
    /// Work units per batch (0 = chosen from the device size).
    pub batch_units: usize,
    /// Where survivor decisions live.
    pub ring: RingPlace,
    /// Fill output buffers with this byte before every kernel, so that a bit the
    /// kernel failed to write shows (tests).
    pub poison: Option<u8>,
    /// Blocks per SM the kernel's register allocation must leave room for
    /// (0: chosen here, see [`DEFAULT_MIN_BLOCKS_GLOBAL_I8`]). More blocks hide
    /// more latency; too many spill registers. A tuning knob for benchmarks.
    pub min_blocks_per_sm: u32,
    /// Host threads that stage input into pinned memory and unpack output
    /// (0: three quarters of the cores; see the pipeline for why not all).
    pub host_threads: usize,
}

impl Default for GpuOptions {
    fn default() -> Self {
        Self { device: 0, slots: 2, batch_units: 0, ring: RingPlace::Auto, poison: None, min_blocks_per_sm: 0, host_threads: 0 }
    }
}

/// Blocks per SM asked of the register allocator for i8 LLRs with survivors in
/// global memory (64-thread blocks: 96 registers instead of the compiler's 128).
/// Measured on an H100 (BENCHMARKS.md): f=256 serial v2=20 rises from 52.3 to
/// 56.8 Gb/s; more blocks spill, f32 LLRs and shared rings gain nothing.
pub const DEFAULT_MIN_BLOCKS_GLOBAL_I8: u32 = 10;

/// Shared memory an SM offers a kernel on the GPUs we target (Hopper: 227 KB).
const SMEM_PER_SM: usize = 227 * 1024;
/// Tiles per batch, in multiples of what the device holds at once: enough that
/// the last, partial wave costs little.
const WAVES: usize = 4;

/// Kernel geometry derived from the code and tile exactly as the kernel derives it.
#[derive(Debug, Clone, Copy)]
struct Geometry {
    /// Survivor ring bytes per tile.
    ring_bytes: usize,
    /// Tiles start on vector-load boundaries.
    vec_load: bool,
    /// Bytes the kernel may read past the last tile.
    overread: usize,
}

impl Geometry {
    fn new(trellis: &Trellis, tile: &TileConfig, llr_bytes: usize, input: &Input) -> Self {
        let period = input.pattern.period();
        let period_bytes = input.pattern.kept_per_period() * llr_bytes;
        let b = trellis.k() as usize - 1;
        let load_bytes = if lcm(period_bytes, 16) / period_bytes <= 8 { 16 } else { 4 };
        let vec_load = (tile.f / period * period_bytes).is_multiple_of(load_bytes);
        let chunk = period * if vec_load { lcm(period_bytes, load_bytes) / period_bytes } else { 1 };
        let unroll = lcm(b, chunk);
        let win = (tile.subframe() + tile.v2).div_ceil(unroll) * unroll;
        let words = (trellis.states() / 32).max(1);
        Self { ring_bytes: win * words * 4, vec_load, overread: 2 * unroll / period * period_bytes + 64 }
    }
}

/// Least common multiple.
pub(crate) fn lcm(a: usize, b: usize) -> usize {
    let (mut x, mut y) = (a, b);
    while y != 0 {
        (x, y) = (y, x % y);
    }
    a / x * b
}

/// What a work unit's LLRs are: every LLR of its stages, or those a puncturing
/// pattern sent, which the kernel depunctures as it loads them.
#[derive(Debug, Clone)]
struct Input {
    pattern: PuncturePattern,
    /// Period stage of every tile's first stage.
    phase: usize,
    /// LLRs per work unit.
    unit_llrs: usize,
}

impl Input {
    fn new(trellis: &Trellis, tile: &TileConfig, punctured: Option<&PuncturePattern>) -> anyhow::Result<Self> {
        let pattern = punctured.cloned().unwrap_or_else(|| PuncturePattern::none(trellis.n()));
        pattern.check_fits(trellis.n())?;
        anyhow::ensure!(
            pattern.period() * pattern.n() <= 64,
            "puncture pattern '{pattern}' spans {} positions; the GPU kernel takes at most 64",
            pattern.period() * pattern.n()
        );
        let tiler = Tiler::<i8>::punctured(*tile, pattern.clone())?;
        Ok(Self { phase: tiler.first_phase(), unit_llrs: tiler.unit_len(), pattern })
    }

    /// Bit c·n + j set: the pattern sends output j at period stage c.
    fn mask(&self) -> u64 {
        let (n, period) = (self.pattern.n(), self.pattern.period());
        (0..period).flat_map(|c| (0..n).map(move |j| (c, j))).filter(|&(c, j)| self.pattern.keeps(j, c)).fold(0, |m, (c, j)| m | 1 << (c * n + j))
    }
}

/// GPU Viterbi decoder over tiles, bit-exact with the CPU tiled model
/// ([`crate::codes::conv::CpuViterbi`] in [`ViterbiMode::Tiled`]).
///
/// A work unit is `group` consecutive tiles (as the [`crate::codes::conv::Tiler`]
/// cuts them); each GPU thread decodes one tile from the unit's LLRs in device
/// memory, keeps its survivor decisions bit-packed in shared (or global) memory
/// and traces back in the same kernel. Batches go through a pipeline of
/// [`GpuOptions::slots`] slots, so that copies overlap compute.
///
/// Terminated frames ([`ViterbiMode::Frame`]) are not decoded on the GPU: the
/// constructor says so, and [`super::Backend::Auto`] then picks the CPU.
///
/// # Example
/// ```no_run
/// use gpufec::codes::conv::{ConvCode, TileConfig, Traceback, Trellis, ViterbiMode};
/// use gpufec::codes::BatchDecoder;
/// use gpufec::gpu::{GpuOptions, GpuViterbi};
/// use std::sync::Arc;
/// let t = Arc::new(Trellis::new(&ConvCode::k7_171_133()));
/// let tile = TileConfig::new(256, 20, 32, Traceback::Serial)?.with_group(64)?;
/// let mut dec = GpuViterbi::<i8>::new(t, ViterbiMode::Tiled(tile), GpuOptions::default())?;
/// let llrs = vec![100i8; dec.unit().llrs_in * 4];     // the all-zero codeword
/// let mut bits = Vec::new();
/// dec.decode_all(&llrs, &mut bits)?;
/// assert!(bits.iter().all(|&b| b == 0));
/// # anyhow::Ok(())
/// ```
pub struct GpuViterbi<T: GpuLlr> {
    tile: TileConfig,
    shape: UnitShape,
    function: CudaFunction,
    threads: u32,
    smem: u32,
    ring_global: bool,
    resident_tiles: usize,
    registers: i32,
    /// Per slot: survivor rings in global memory (empty with shared rings).
    rings: Vec<Option<DeviceBuf>>,
    /// Output: each tile's bits packed in `out_words` words.
    pipe: Pipeline<T, u32>,
    out_words: usize,
    pitch: usize,
    batch_units: usize,
    device: DeviceInfo,
    input: Input,
}

impl<T: GpuLlr> GpuViterbi<T> {
    /// Build the decoder on the device named in `opts`: compile the kernel for it
    /// and allocate the pipeline.
    pub fn new(trellis: Arc<Trellis>, mode: ViterbiMode, opts: GpuOptions) -> anyhow::Result<Self> {
        Self::with_input(trellis, mode, None, opts)
    }

    /// A decoder of units as a punctured [`Tiler`] cuts them (the LLRs that
    /// `pattern` sent); the kernel puts the erasures back as it loads, so that
    /// only the sent LLRs cross PCIe. Its bits are those of
    /// [`crate::codes::conv::DepuncturedUnits`] around the CPU tiled model.
    pub fn punctured(trellis: Arc<Trellis>, tile: TileConfig, pattern: &PuncturePattern, opts: GpuOptions) -> anyhow::Result<Self> {
        Self::with_input(trellis, ViterbiMode::Tiled(tile), Some(pattern), opts)
    }

    pub(crate) fn with_input(trellis: Arc<Trellis>, mode: ViterbiMode, punctured: Option<&PuncturePattern>, opts: GpuOptions) -> anyhow::Result<Self> {
        let ViterbiMode::Tiled(tile) = mode else {
            anyhow::bail!("the GPU Viterbi decoder decodes tiles of a stream; terminated frames are decoded on the CPU");
        };
        let input = Input::new(&trellis, &tile, punctured)?;
        let ctx = context(opts.device)?;
        ctx.bind_to_thread().map_err(cuda("cuCtxSetCurrent"))?;
        let device = info_of(&ctx)?;
        let llr_bytes = std::mem::size_of::<T>();
        let geometry = Geometry::new(&trellis, &tile, llr_bytes, &input);
        let ring_global = match opts.ring {
            RingPlace::Global => true,
            RingPlace::Shared => {
                anyhow::ensure!(
                    geometry.ring_bytes * 32 <= SMEM_PER_SM,
                    "a survivor ring of {} bytes per tile does not fit 32 tiles in shared memory; use global memory",
                    geometry.ring_bytes
                );
                false
            }
            RingPlace::Auto => geometry.ring_bytes * 256 > SMEM_PER_SM,
        };
        let launch = Launch::new(ring_global, T::F32, opts.min_blocks_per_sm);
        let threads = launch.threads;
        let smem = if ring_global { 0 } else { threads as usize * geometry.ring_bytes } as u32;
        let defines = defines(&trellis, &tile, T::F32, launch, &geometry, &input);
        let function = kernel(&ctx, "viterbi.cu", "viterbi_tiles", &defines)?;
        if smem > 48 * 1024 {
            function
                .set_attribute(sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem as i32)
                .map_err(cuda("cuFuncSetAttribute"))?;
        }
        let blocks_per_sm =
            function.occupancy_max_active_blocks_per_multiprocessor(threads, smem as usize, None).map_err(cuda("occupancy query"))?;
        anyhow::ensure!(blocks_per_sm > 0, "the Viterbi kernel for this code and tile does not fit on {}", device.name);
        let resident_tiles = blocks_per_sm as usize * threads as usize * device.sms as usize;
        let registers = function.num_regs().map_err(cuda("cuFuncGetAttribute"))?;

        let shape = UnitShape { llrs_in: input.unit_llrs, bits_out: tile.unit_bits() };
        // Units start on 16-byte boundaries so that the kernel's vector loads line up.
        let pitch = (shape.llrs_in * llr_bytes).div_ceil(16) * 16 / llr_bytes;
        let batch_units = match opts.batch_units {
            0 => (WAVES * resident_tiles).div_ceil(tile.group).max(1),
            n => n,
        };
        let tiles = batch_units * tile.group;
        let size = SlotSize {
            in_items: batch_units * pitch,
            dev_in_bytes: batch_units * pitch * llr_bytes + geometry.overread,
            out_items: tiles * tile.f.div_ceil(32),
        };
        let pipe = Pipeline::new(&ctx, opts.slots, size, opts.poison, opts.host_threads)?;
        let rings = (0..opts.slots)
            .map(|_| {
                ring_global
                    .then(|| DeviceBuf::new(&ctx, tiles.div_ceil(threads as usize) * threads as usize * geometry.ring_bytes))
                    .transpose()
            })
            .collect::<anyhow::Result<_>>()?;
        Ok(Self {
            tile,
            shape,
            function,
            threads,
            smem,
            ring_global,
            resident_tiles,
            registers,
            rings,
            pipe,
            out_words: tile.f.div_ceil(32),
            pitch,
            batch_units,
            device,
            input,
        })
    }

    /// Tiles the device runs at once (one per resident thread).
    pub fn resident_tiles(&self) -> usize {
        self.resident_tiles
    }

    /// Whether survivor decisions live in global memory.
    pub fn ring_global(&self) -> bool {
        self.ring_global
    }

    /// Time split of the batch collected last.
    pub fn last_split(&self) -> BatchSplit {
        self.pipe.last_split()
    }

    /// Mean kernel time in milliseconds of decoding `llrs` (whole units, at most
    /// one batch) already resident on the device, over `reps` launches. Needs
    /// nothing in flight.
    pub fn time_kernel(&mut self, llrs: &[T], reps: usize) -> anyhow::Result<f64> {
        let units = self.check_batch(llrs)?;
        let (pitch, unit_len) = (self.pitch, self.shape.llrs_in);
        let launch = Launcher { f: &self.function, threads: self.threads, smem: self.smem, rings: &self.rings, tile: &self.tile };
        self.pipe.time_launches(units, pitch, |host, r| stage_units(host, llrs, unit_len, pitch, r), reps, |s, slot, i, o| {
            launch.run(s, slot, i, o, pitch * std::mem::size_of::<T>(), units)
        })
    }

    fn check_batch(&self, llrs: &[T]) -> anyhow::Result<usize> {
        let unit = self.shape.llrs_in;
        anyhow::ensure!(llrs.len().is_multiple_of(unit), "{} LLRs are not a whole number of {unit}-LLR work units", llrs.len());
        let units = llrs.len() / unit;
        anyhow::ensure!(units <= self.batch_units, "{units} work units exceed the batch size of {}", self.batch_units);
        Ok(units)
    }
}

/// How the kernel is launched, as far as its compilation depends on it.
#[derive(Debug, Clone, Copy)]
struct Launch {
    threads: u32,
    ring_global: bool,
    min_blocks: u32,
}

impl Launch {
    /// The launch shape for a ring placement and LLR type; `min_blocks` 0 picks
    /// the measured default. One warp per block packs shared-memory rings
    /// tightly; global rings are indifferent, and 64 threads keep the block
    /// count low.
    fn new(ring_global: bool, f32: bool, min_blocks: u32) -> Self {
        let min_blocks = match min_blocks {
            0 if ring_global && !f32 => DEFAULT_MIN_BLOCKS_GLOBAL_I8,
            n => n,
        };
        Self { threads: if ring_global { 64 } else { 32 }, ring_global, min_blocks }
    }
}

fn defines(trellis: &Trellis, tile: &TileConfig, f32: bool, l: Launch, g: &Geometry, input: &Input) -> Vec<(String, String)> {
    let f0 = tile.subframe();
    let mut d: Vec<(String, String)> = [
        ("VK", trellis.k() as usize),
        ("VN", trellis.n()),
        ("VF", tile.f),
        ("VV1", tile.v1),
        ("VV2", tile.v2),
        ("VF0", f0),
        ("VGROUP", tile.group),
        ("VNT", l.threads as usize),
        ("VMINB", l.min_blocks as usize),
        ("LLR_F32", usize::from(f32)),
        ("VEC_LOAD", usize::from(g.vec_load)),
        ("DEC_GLOBAL", usize::from(l.ring_global)),
        ("VP", input.pattern.period()),
        ("VPH0", input.phase),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    d.push(("VPMASK".to_string(), format!("{}ull", input.mask())));
    let polys = trellis.code().polys();
    for i in 0..4 {
        d.push((format!("VG{i}"), polys.get(i).copied().unwrap_or(0).to_string()));
    }
    d
}

/// Compile the Viterbi kernel for `tile` of `trellis` (`f32` or `i8` LLRs,
/// survivors in shared or global memory, units punctured with `punctured` or
/// whole) for architecture `arch` (e.g. `sm_90`) with NVRTC alone, no GPU
/// needed, and return the CUBIN image: lets a machine without a GPU check that
/// every configuration compiles.
pub fn compile_viterbi_kernel(
    trellis: &Trellis,
    tile: &TileConfig,
    punctured: Option<&PuncturePattern>,
    f32: bool,
    ring_global: bool,
    arch: &str,
) -> anyhow::Result<Vec<u8>> {
    let input = Input::new(trellis, tile, punctured)?;
    let g = Geometry::new(trellis, tile, if f32 { 4 } else { 1 }, &input);
    super::compile::compile_cubin("viterbi.cu", arch, &defines(trellis, tile, f32, Launch::new(ring_global, f32, 0), &g, &input))
}

/// Copy units `range` of `llrs` into `host` (their place in pinned staging) at
/// `pitch` items each, checking that every LLR is finite on the way (one pass
/// over memory, not two).
fn stage_units<T: GpuLlr>(host: &mut [T], llrs: &[T], unit_len: usize, pitch: usize, range: std::ops::Range<usize>) -> anyhow::Result<()> {
    let llrs = &llrs[range.start * unit_len..range.end * unit_len];
    let finite = std::sync::atomic::AtomicBool::new(true);
    let copy = |d: &mut [T], c: &[T]| {
        stream_copy(d, c);
        if T::F32 && !all_finite(c) {
            finite.store(false, std::sync::atomic::Ordering::Relaxed);
        }
    };
    if pitch == unit_len {
        par_chunks(host, llrs, copy);
    } else {
        par_units(host, pitch, llrs, unit_len, |dst, src| {
            for (d, c) in dst.chunks_mut(pitch).zip(src.chunks(unit_len)) {
                copy(&mut d[..unit_len], c);
            }
        });
    }
    if !finite.into_inner() {
        // Name the LLR by its place in the whole batch, not in this chunk.
        if let Err(CodeError::NonFiniteLlr { index }) = check_finite(llrs) {
            return Err(CodeError::NonFiniteLlr { index: index + range.start * unit_len }.into());
        }
    }
    Ok(())
}

/// One kernel launch over the units of a slot.
struct Launcher<'a> {
    f: &'a CudaFunction,
    threads: u32,
    smem: u32,
    rings: &'a [Option<DeviceBuf>],
    tile: &'a TileConfig,
}

impl Launcher<'_> {
    fn run(
        &self,
        stream: sys::CUstream,
        slot: usize,
        input: &DeviceBuf,
        output: &DeviceBuf,
        pitch_bytes: usize,
        units: usize,
    ) -> anyhow::Result<()> {
        let tiles = (units * self.tile.group) as u32;
        let blocks = tiles.div_ceil(self.threads);
        let mut llr = input.ptr();
        let mut pitch = pitch_bytes as u64;
        let mut count = tiles;
        let mut out = output.ptr();
        let mut ring: sys::CUdeviceptr = self.rings[slot].as_ref().map_or(0, |r| r.ptr());
        let mut params: [*mut c_void; 5] = [
            (&mut llr as *mut sys::CUdeviceptr).cast(),
            (&mut pitch as *mut u64).cast(),
            (&mut count as *mut u32).cast(),
            (&mut out as *mut sys::CUdeviceptr).cast(),
            (&mut ring as *mut sys::CUdeviceptr).cast(),
        ];
        // SAFETY: the parameters match the kernel's signature; the buffers hold
        // `units` units at `pitch` plus the kernel's over-read, ⌈f/32⌉ output
        // words per tile, and (global rings) a ring per thread of every block launched.
        unsafe { result::launch_kernel(self.f.cu_function(), (blocks.max(1), 1, 1), (self.threads, 1, 1), self.smem, stream, &mut params) }
            .map_err(cuda("Viterbi kernel launch"))
    }
}

impl<T: GpuLlr> BatchDecoder<T> for GpuViterbi<T> {
    fn unit(&self) -> UnitShape {
        self.shape
    }

    fn batch_units(&self) -> usize {
        self.batch_units
    }

    fn depth(&self) -> usize {
        self.pipe.depth()
    }

    fn submit(&mut self, llrs: &[T]) -> anyhow::Result<()> {
        let units = self.check_batch(llrs)?;
        let (pitch, unit_len) = (self.pitch, self.shape.llrs_in);
        let launch = Launcher { f: &self.function, threads: self.threads, smem: self.smem, rings: &self.rings, tile: &self.tile };
        self.pipe.submit(
            units,
            pitch,
            |host, r| stage_units(host, llrs, unit_len, pitch, r),
            units * self.tile.group * self.out_words,
            |s, slot, i, o| launch.run(s, slot, i, o, pitch * std::mem::size_of::<T>(), units),
        )
    }

    fn collect(&mut self, out: &mut Vec<u8>) -> anyhow::Result<bool> {
        let (f, words) = (self.tile.f, self.out_words);
        self.pipe.collect(|packed| {
            par_unpack(out, packed, f, words);
            Ok(())
        })
    }

    fn in_flight(&self) -> usize {
        self.pipe.in_flight()
    }

    fn describe(&self) -> String {
        let (major, minor) = self.device.compute_capability;
        format!(
            "gpu {} ({}, sm_{major}{minor}, {} LLRs{}, survivors in {} memory, {} regs, {} tiles resident, {} tiles/batch, {} slots, {} host threads)",
            self.device.index,
            self.device.name,
            T::NAME,
            if self.input.pattern.is_identity() { String::new() } else { format!(" punctured '{}', depunctured on load", self.input.pattern) },
            if self.ring_global { "global" } else { "shared" },
            self.registers,
            self.resident_tiles,
            self.batch_units * self.tile.group,
            self.pipe.depth(),
            self.pipe.host_threads(),
        )
    }
}
