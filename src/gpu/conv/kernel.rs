//! The Viterbi kernel as the host sees it: the geometry the kernel derives
//! from the code and tile, its compile-time constants, its launch, and how a
//! batch's units are staged for it.

use crate::codes::conv::{PuncturePattern, TileConfig, Tiler, Trellis};
use crate::codes::llr::LlrType;
use super::{SurvivorMemory, ViterbiTuning};
use crate::gpu::compile::kernel;
use crate::gpu::device::{DeviceInfo, cuda, info_of};
use crate::gpu::pipeline::SlotBuffers;
use cudarc::driver::{CudaContext, CudaFunction, result, sys};
use std::sync::Arc;
use std::ffi::c_void;

/// Kernel geometry derived from the code and tile exactly as the kernel derives it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Geometry {
    /// Survivor ring bytes per tile.
    pub ring_bytes: usize,
    /// Tiles start on vector-load boundaries.
    pub vec_load: bool,
    /// Bytes the kernel may read past the last tile.
    pub overread: usize,
}

impl Geometry {
    pub fn new(trellis: &Trellis, tile: &TileConfig, llr_bytes: usize, input: &Input) -> Self {
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
pub(super) struct Input {
    pub pattern: PuncturePattern,
    /// Period stage of every tile's first stage.
    pub phase: usize,
    /// LLRs per work unit.
    pub unit_llrs: usize,
}

impl Input {
    pub fn new(trellis: &Trellis, tile: &TileConfig, punctured: Option<&PuncturePattern>) -> anyhow::Result<Self> {
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

/// Blocks per SM asked of the register allocator for i8 LLRs with survivors in
/// global memory (64-thread blocks: 96 registers instead of the compiler's 128).
/// Measured on an H100 (BENCHMARKS.md): f=256 serial v2=20 rises from 52.3 to
/// 56.8 Gb/s; more blocks spill, f32 LLRs and shared rings gain nothing.
pub const DEFAULT_MIN_BLOCKS_GLOBAL_I8: u32 = 10;

/// How the kernel is launched, as far as its compilation depends on it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Launch {
    pub threads: u32,
    pub ring_global: bool,
    pub min_blocks: u32,
}

impl Launch {
    /// The launch shape for a ring placement and LLR type; `min_blocks` 0 picks
    /// the measured default. One warp per block packs shared-memory rings
    /// tightly; global rings are indifferent, and 64 threads keep the block
    /// count low.
    pub fn new(ring_global: bool, llr: LlrType, min_blocks: u32) -> Self {
        let min_blocks = match min_blocks {
            0 if ring_global && llr == LlrType::I8 => DEFAULT_MIN_BLOCKS_GLOBAL_I8,
            n => n,
        };
        Self { threads: if ring_global { 64 } else { 32 }, ring_global, min_blocks }
    }
}

/// The kernel's compile-time constants.
pub(super) fn defines(trellis: &Trellis, tile: &TileConfig, llr: LlrType, l: Launch, g: &Geometry, input: &Input) -> Vec<(String, String)> {
    let f0 = tile.subframe();
    let mut d: Vec<(String, String)> = [
        ("VK", trellis.k() as usize),
        ("VN", trellis.n()),
        ("VINV", usize::from(trellis.code().inverted())),
        ("VF", tile.f),
        ("VV1", tile.v1),
        ("VV2", tile.v2),
        ("VF0", f0),
        ("VGROUP", tile.group),
        ("VNT", l.threads as usize),
        ("VMINB", l.min_blocks as usize),
        ("LLR_F32", usize::from(llr == LlrType::F32)),
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

/// Compile the Viterbi kernel for `tile` of `trellis` (`llr` LLRs, survivors
/// in shared or global memory, units punctured with `punctured` or whole) for
/// architecture `arch` (e.g. `sm_90`) with NVRTC alone, no GPU needed, and
/// return the CUBIN image: lets a machine without a GPU check that every
/// configuration compiles.
pub fn compile_viterbi_kernel(
    trellis: &Trellis,
    tile: &TileConfig,
    punctured: Option<&PuncturePattern>,
    llr: LlrType,
    ring_global: bool,
    arch: &str,
) -> anyhow::Result<Vec<u8>> {
    let input = Input::new(trellis, tile, punctured)?;
    let g = Geometry::new(trellis, tile, llr.bytes(), &input);
    crate::gpu::compile::compile_cubin("conv.cu", arch, &defines(trellis, tile, llr, Launch::new(ring_global, llr, 0), &g, &input))
}

/// The compiled Viterbi kernel of one code, tile, LLR type and tuning, with
/// the launch shape and placement of survivors chosen for its device: what
/// the decoder and the device link simulator both launch.
pub(super) struct ViterbiKernel {
    pub function: CudaFunction,
    pub threads: u32,
    pub smem: u32,
    pub ring_global: bool,
    pub geometry: Geometry,
    pub input: Input,
    /// Tiles the device runs at once (one per resident thread).
    pub resident_tiles: usize,
    pub registers: i32,
    pub device: DeviceInfo,
    pub group: usize,
}

impl ViterbiKernel {
    /// Compile (or load from the cache) the kernel for `tile` of `trellis`
    /// on the device of `ctx`, survivors where `tuning` says (`Auto`: shared
    /// memory when eight blocks of rings fit an SM).
    pub fn new(ctx: &Arc<CudaContext>, trellis: &Trellis, tile: &TileConfig, punctured: Option<&PuncturePattern>, llr: LlrType, tuning: ViterbiTuning) -> anyhow::Result<Self> {
        let input = Input::new(trellis, tile, punctured)?;
        let device = info_of(ctx)?;
        let geometry = Geometry::new(trellis, tile, llr.bytes(), &input);
        // The rings of a shared-ring block must fit the opt-in size of one
        // block (the driver's reservation is not part of that limit), and
        // Auto wants eight such blocks, each with the driver's reservation,
        // on an SM.
        let block_rings = Launch::new(false, llr, tuning.min_blocks_per_sm).threads as usize * geometry.ring_bytes;
        let ring_global = match tuning.survivors {
            SurvivorMemory::Global => true,
            SurvivorMemory::Shared => {
                anyhow::ensure!(
                    block_rings <= device.smem_per_block_optin,
                    "the survivor rings of a block, {block_rings} bytes ({} per tile), do not fit the {} bytes of shared memory a block of {} may have; use global memory",
                    geometry.ring_bytes,
                    device.smem_per_block_optin,
                    device.name
                );
                false
            }
            SurvivorMemory::Auto => 8 * (block_rings + device.smem_reserved_per_block) > device.smem_per_sm,
        };
        let launch = Launch::new(ring_global, llr, tuning.min_blocks_per_sm);
        let threads = launch.threads;
        let smem = if ring_global { 0 } else { threads as usize * geometry.ring_bytes } as u32;
        let function = kernel(ctx, "conv.cu", "viterbi_tiles", &defines(trellis, tile, llr, launch, &geometry, &input))?;
        // Beyond the default per-block size a kernel must opt in.
        if smem as usize > device.smem_per_block {
            function
                .set_attribute(sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem as i32)
                .map_err(cuda("cuFuncSetAttribute"))?;
        }
        let blocks_per_sm =
            function.occupancy_max_active_blocks_per_multiprocessor(threads, smem as usize, None).map_err(cuda("occupancy query"))?;
        anyhow::ensure!(blocks_per_sm > 0, "the Viterbi kernel for this code and tile does not fit on {}", device.name);
        let resident_tiles = blocks_per_sm as usize * threads as usize * device.sms as usize;
        let registers = function.num_regs().map_err(cuda("cuFuncGetAttribute"))?;
        Ok(Self { function, threads, smem, ring_global, geometry, input, resident_tiles, registers, device, group: tile.group })
    }

    /// Bytes of global survivor rings a launch of `tiles` tiles needs (a
    /// ring per thread of every block launched; none with shared rings).
    pub fn ring_bytes(&self, tiles: usize) -> usize {
        if self.ring_global { tiles.div_ceil(self.threads as usize) * self.threads as usize * self.geometry.ring_bytes } else { 0 }
    }

    /// Launch over `tiles` tiles on `stream`: tile t of unit u = t / group
    /// reads its LLRs from `llr` + u · `pitch_bytes` + (t mod group) · the
    /// tile's bytes and writes ⌈f/32⌉ words at `out` + t · those words;
    /// `ring` holds [`Self::ring_bytes`] of `tiles`.
    pub fn launch(&self, stream: sys::CUstream, llr: sys::CUdeviceptr, pitch_bytes: usize, tiles: usize, out: sys::CUdeviceptr, ring: sys::CUdeviceptr) -> anyhow::Result<()> {
        let tiles = u32::try_from(tiles).map_err(|_| anyhow::anyhow!("{tiles} tiles in one launch; at most {}", u32::MAX))?;
        let blocks = tiles.div_ceil(self.threads);
        let (mut llr, mut pitch, mut count, mut out, mut ring) = (llr, pitch_bytes as u64, tiles, out, ring);
        let mut params: [*mut c_void; 5] = [
            (&mut llr as *mut sys::CUdeviceptr).cast(),
            (&mut pitch as *mut u64).cast(),
            (&mut count as *mut u32).cast(),
            (&mut out as *mut sys::CUdeviceptr).cast(),
            (&mut ring as *mut sys::CUdeviceptr).cast(),
        ];
        // SAFETY: the parameters match the kernel's signature; the caller's
        // buffers hold the tiles' LLRs plus the kernel's over-read, ⌈f/32⌉
        // output words per tile, and (global rings) `ring_bytes(tiles)`.
        unsafe { result::launch_kernel(self.function.cu_function(), (blocks.max(1), 1, 1), (self.threads, 1, 1), self.smem, stream, &mut params) }
            .map_err(cuda("Viterbi kernel launch"))
    }

    /// [`Self::launch`] over the `units` units of a pipeline slot.
    pub fn run_slot(&self, stream: sys::CUstream, slot: &SlotBuffers, pitch_bytes: usize, units: usize) -> anyhow::Result<()> {
        let ring = slot.aux.first().map_or(0, |r| r.ptr());
        self.launch(stream, slot.input.ptr(), pitch_bytes, units * self.group, slot.output.ptr(), ring)
    }
}
