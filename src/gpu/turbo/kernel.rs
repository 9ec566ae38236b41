//! The turbo kernels (`kernels/turbo.cu`) as the host sees them: the geometry
//! derived from the code and the decoder configuration, the compile-time
//! constants (trellis tables included), the per-slot buffers and the
//! launches of one batch.

use crate::codes::turbo::{DecoderConfig, EarlyStop, Guard, MaxStar, TurboCode};
use crate::gpu::device::cuda;
use crate::gpu::pipeline::SlotBuffers;
use cudarc::driver::{CudaFunction, result, sys};
use std::ffi::c_void;

/// Threads of a half-iteration CTA: S per sub-block, so 64 / S sub-blocks
/// (of any code blocks) per CTA; two warps, which share nothing.
pub(super) const SISO_THREADS: usize = 64;
/// Threads of the load kernel's CTA (one CTA per code block).
const LOAD_THREADS: u32 = 256;
/// Threads of the stop kernel's CTA (one per code block); `STOP_NT` in the kernel.
const STOP_THREADS: u32 = 256;
/// α of a CTA is kept in shared memory up to this size: what a CTA may have
/// without opting in, and small enough for several CTAs per SM.
const SHARED_ALPHA_BYTES: usize = 48 << 10;

/// The entry points of one compilation, in this order.
pub(super) const ENTRIES: [&str; 10] =
    ["turbo_load_i8", "turbo_load_f32", "turbo_siso0", "turbo_siso1", "turbo_stop", "turbo_fused_i8", "turbo_fused_f32", "turbo_dematch_i8", "turbo_dematch_f32", "turbo_dematch_i8_i8"];

/// Threads of the de-rate-matching kernel's CTA (one CTA per code block).
const DEMATCH_THREADS: u32 = 256;

/// Most threads of a CTA: the fused kernel runs a code block's sub-blocks in one.
const MAX_CTA_THREADS: usize = 1024;

/// The auxiliary buffers of a slot, by index.
pub(super) mod aux {
    /// Channel LLRs per decoder and stage: `float2 sp[2][B][K + m]`.
    pub const SP: usize = 0;
    /// A-priori LLRs per decoder: `float la[2][B][K]`.
    pub const LA: usize = 1;
    /// α of every stage of every sub-block, when not in shared memory.
    pub const ALPHA: usize = 2;
    /// Edge metrics carried between iterations (PIVI, PIVIDSTW).
    pub const EDGES: usize = 3;
    /// Hard decisions, `u8 hard[B][K]`.
    pub const HARD: usize = 4;
    /// `u32 flags[2][B]`: done, changed.
    pub const FLAGS: usize = 5;
    /// The layouts de-rate-matched on load, `float[B][3K + 12]`, which the
    /// decoder then reads as its input.
    pub const LAYOUTS: usize = 6;
}

/// The turbo kernels' own tuning, beside the [`PipelineOptions`](crate::gpu::PipelineOptions)
/// every GPU decoder shares: variants of the fused kernel that were measured
/// against each other (BENCHMARKS.md, "GPU turbo"); the defaults are the
/// fastest measured. Each can be overridden for a whole process by an
/// environment variable, to compare variants on one machine without a
/// rebuild ([`Self::with_env_overrides`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TurboTuning {
    /// The fused kernel keeps its stage rows (both decoders' parity LLRs) in
    /// a global scratch buffer rather than in shared memory
    /// (`GPUFEC_TURBO_ROWS=global|shared`; default shared).
    pub rows_global: bool,
    /// The fused kernel keeps its α checkpoints (each written once per
    /// segment in the forward pass, read once in the backward pass) in a
    /// global scratch buffer (`GPUFEC_TURBO_CK=global|shared`). Global by
    /// default: the shared memory it frees gives a fourth CTA per SM at K =
    /// 6144, P = 96 (6.80 against 5.92 Gb/s kernel-only on the H200).
    pub checkpoints_global: bool,
    /// Stages between α checkpoints, 1..=32 (`GPUFEC_TURBO_SEG=n`): the
    /// trade of registers (S · SEG of recomputed α) against checkpoints.
    /// `None`: 32/S; at S = 8, 4 stages (127 registers) ran at 7.85 Gb/s
    /// kernel-only against 6.80 with 8 (168 registers) on the H200.
    pub checkpoint_stages: Option<usize>,
    /// The fused kernel converts i8 LLRs to float by integer arithmetic
    /// rather than the conversion unit (`GPUFEC_TURBO_CVT=magic|i2f`;
    /// default i2f, measured faster on the H200: 3.64 against 3.30 Gb/s).
    pub convert_by_integers: bool,
    /// Run the per-half-iteration kernels even where a CTA can hold a code
    /// block (`GPUFEC_TURBO_SPLIT=1`), to compare them with the fused kernel.
    pub force_split: bool,
}

impl Default for TurboTuning {
    fn default() -> Self {
        Self { rows_global: false, checkpoints_global: true, checkpoint_stages: None, convert_by_integers: false, force_split: false }
    }
}

impl TurboTuning {
    /// This tuning with each `GPUFEC_TURBO_*` variable that is set taking
    /// the place of its field; a value it does not know is an error.
    pub fn with_env_overrides(self) -> anyhow::Result<Self> {
        let var = |name: &str| std::env::var(name).ok();
        let choice = |name: &str, yes: &str, no: &str, current: bool| -> anyhow::Result<bool> {
            match var(name).as_deref() {
                None => Ok(current),
                Some(v) if v == yes => Ok(true),
                Some(v) if v == no => Ok(false),
                Some(other) => anyhow::bail!("{name}={other}: give {yes} or {no}"),
            }
        };
        let checkpoint_stages = match var("GPUFEC_TURBO_SEG") {
            None => self.checkpoint_stages,
            Some(v) => match v.parse::<usize>() {
                Ok(n) if (1..=32).contains(&n) => Some(n),
                _ => anyhow::bail!("GPUFEC_TURBO_SEG={v}: give 1..=32 stages"),
            },
        };
        Ok(Self {
            rows_global: choice("GPUFEC_TURBO_ROWS", "global", "shared", self.rows_global)?,
            checkpoints_global: choice("GPUFEC_TURBO_CK", "global", "shared", self.checkpoints_global)?,
            checkpoint_stages,
            convert_by_integers: choice("GPUFEC_TURBO_CVT", "magic", "i2f", self.convert_by_integers)?,
            force_split: choice("GPUFEC_TURBO_SPLIT", "1", "0", self.force_split)?,
        })
    }
}

/// What the kernels' sizes and launches follow from.
#[derive(Debug, Clone)]
pub(super) struct Geometry {
    pub k: usize,
    pub m: usize,
    pub states: usize,
    pub subblocks: usize,
    /// Stages of the longest sub-block (the last one holds the tail).
    pub lmax: usize,
    /// α kept in shared memory (else in [`aux::ALPHA`]).
    pub alpha_shared: bool,
    /// Packed output words per block.
    pub words: usize,
    /// Edge metrics are carried between iterations.
    pub carries: bool,
    /// Threads of a fused CTA: one per sub-block, in whole warps.
    pub fnt: usize,
    /// Stages between the fused kernel's α checkpoints (`SEG` stages of α
    /// are recomputed into registers, so S · SEG registers).
    pub seg: usize,
    /// The fused kernel keeps its stage rows in a global scratch buffer
    /// ([`aux::SP`]) rather than in shared memory.
    pub rows_global: bool,
    /// The fused kernel keeps its α checkpoints in a global scratch buffer
    /// ([`aux::LA`]) rather than in shared memory.
    pub ck_global: bool,
    /// The fused kernel converts i8 LLRs to float by integer arithmetic
    /// rather than the conversion unit.
    pub cvt_magic: bool,
}

impl Geometry {
    /// The geometry of `code` and `cfg` with the fused kernel's `tuning`.
    pub fn new(code: &TurboCode, cfg: &DecoderConfig, tuning: &TurboTuning) -> anyhow::Result<Self> {
        let states = code.trellis().states();
        let seg = match tuning.checkpoint_stages {
            Some(n) if (1..=32).contains(&n) => n,
            Some(n) => anyhow::bail!("{n} stages between α checkpoints: give 1..=32"),
            None => (32 / states).max(1),
        };
        let (rows_global, ck_global, cvt_magic) = (tuning.rows_global, tuning.checkpoints_global, tuning.convert_by_integers);
        let (k, m) = (code.k(), code.trellis().memory());
        let p = cfg.subblocks;
        let end = |i: usize| if i + 1 == p { k + m } else { cfg.subblock_start(k, i + 1) };
        let lmax = (0..p).map(|i| end(i) - cfg.subblock_start(k, i)).max().unwrap_or(k + m);
        Ok(Self {
            k,
            m,
            states: code.trellis().states(),
            subblocks: p,
            lmax,
            alpha_shared: (lmax + 1) * SISO_THREADS * 4 <= SHARED_ALPHA_BYTES,
            words: k.div_ceil(32),
            carries: cfg.guard.carries(),
            fnt: p.div_ceil(32) * 32,
            seg,
            rows_global,
            ck_global,
            cvt_magic,
        })
    }

    /// Dynamic shared memory of a fused CTA whose LLRs take `llr_bytes`
    /// each, bytes (the layout at the top of the fused kernel, `HEAD` words,
    /// the systematic LLRs, then the stage rows); `None` when a CTA cannot hold the sub-blocks.
    pub fn fused_smem(&self, llr_bytes: usize) -> Option<usize> {
        if self.fnt > MAX_CTA_THREADS {
            return None;
        }
        // X covers the tail's indices, K + 2m of them, one word padded every 64.
        let last = self.k + 2 * self.m - 1;
        let xlen = last + (last >> 6) + 1;
        let misc = 4 + self.fnt / 32;
        let ck = if self.ck_global { 0 } else { self.ck_words() };
        let head = xlen + ck + self.words + 1 + misc;
        let sys = (self.k + 2 * self.m) * llr_bytes;
        Some(head * 4 + sys + if self.rows_global { 0 } else { self.rows_bytes(llr_bytes) })
    }

    /// α checkpoints of one code block, words: S − 1 per segment and sub-block.
    pub fn ck_words(&self) -> usize {
        self.lmax.div_ceil(self.seg) * (self.states - 1) * self.fnt
    }

    /// Bytes of one code block's stage rows (both decoders' parity LLRs)
    /// for LLRs of `llr_bytes`.
    pub fn rows_bytes(&self, llr_bytes: usize) -> usize {
        2 * self.lmax * self.fnt * llr_bytes
    }

    /// Rows of each decoder's stage-index table ([`Geometry::stage_rows`]):
    /// the longest sub-block and one checkpoint segment more (`PROWS` in the kernel).
    pub fn index_rows(&self) -> usize {
        self.lmax + self.seg
    }

    /// Each decoder's index of the systematic and a-priori LLRs of each
    /// sub-block's stages, in the fused kernel's row layout:
    /// `prow[c][i][q]` for stage kk = start of q + i is kk for decoder 0 and
    /// Π(kk) for decoder 1, the tail's kk (decoder 0) and kk + m (decoder
    /// 1), 0 past the sub-block (never used).
    pub fn stage_rows(&self, perm: &[u32], cfg: &DecoderConfig) -> Vec<u32> {
        let rows = self.index_rows();
        let mut t = vec![0u32; 2 * rows * self.fnt];
        for q in 0..self.subblocks {
            let start = cfg.subblock_start(self.k, q);
            let end = if q + 1 == self.subblocks { self.k + self.m } else { cfg.subblock_start(self.k, q + 1) };
            for (r, kk) in (start..end).enumerate() {
                let at = r * self.fnt + q;
                t[at] = kk as u32;
                t[rows * self.fnt + at] = perm.get(kk).copied().unwrap_or((kk + self.m) as u32);
            }
        }
        t
    }

    /// Sub-blocks per half-iteration CTA.
    pub fn tasks_per_cta(&self) -> usize {
        SISO_THREADS / self.states
    }

    /// Half-iteration CTAs for `blocks` code blocks.
    pub fn siso_ctas(&self, blocks: usize) -> usize {
        (blocks * self.subblocks).div_ceil(self.tasks_per_cta())
    }

    /// Dynamic shared memory of a half-iteration CTA, bytes.
    pub fn smem(&self) -> u32 {
        if self.alpha_shared { ((self.lmax + 1) * SISO_THREADS * 4) as u32 } else { 0 }
    }

    /// Bytes of each auxiliary buffer for batches of up to `blocks` blocks
    /// of LLRs of `llr_bytes`; the fused kernel needs only the edge metrics
    /// (and its stage rows and α checkpoints when they are global).
    pub fn aux_bytes(&self, blocks: usize, fused: bool, llr_bytes: usize) -> Vec<usize> {
        let stages = self.k + self.m;
        if fused {
            let mut v = vec![4; 6];
            if self.rows_global {
                v[aux::SP] = blocks * self.rows_bytes(llr_bytes);
            }
            if self.ck_global {
                v[aux::LA] = blocks * self.ck_words() * 4;
            }
            v[aux::EDGES] = if self.carries { 8 * blocks * self.subblocks * self.states * 4 } else { 4 };
            return v;
        }
        let mut v = vec![0; 6];
        v[aux::SP] = 2 * blocks * stages * 8;
        v[aux::LA] = 2 * blocks * self.k * 4;
        v[aux::ALPHA] = if self.alpha_shared { 4 } else { self.siso_ctas(blocks) * (self.lmax + 1) * SISO_THREADS * 4 };
        v[aux::EDGES] = if self.carries { 8 * blocks * self.subblocks * self.states * 4 } else { 4 };
        v[aux::HARD] = blocks * self.k;
        v[aux::FLAGS] = 2 * blocks * 4;
        v
    }
}

/// `{a,b,c}`: a C initialiser list.
fn list(v: impl IntoIterator<Item = usize>) -> String {
    format!("{{{}}}", v.into_iter().map(|x| x.to_string()).collect::<Vec<_>>().join(","))
}

/// The kernels' compile-time constants for `code` and `cfg`, with the
/// a-posteriori LLRs written after the bits when `soft` (`TSOFT`). The trellis
/// tables are built from [`crate::codes::turbo::RscTrellis`] exactly as the
/// CPU model builds its own: a state's two predecessors in the order in which
/// the states are enumerated.
pub(super) fn defines(code: &TurboCode, cfg: &DecoderConfig, g: &Geometry, soft: bool) -> anyhow::Result<Vec<(String, String)>> {
    let t = code.trellis();
    let s = t.states();
    let out: Vec<[(usize, usize); 2]> = (0..s).map(|st| [0, 1].map(|u| (t.next(st, u), (u << 1) | t.parity(st, u) as usize))).collect();
    let mut into = vec![Vec::new(); s];
    for (st, o) in out.iter().enumerate() {
        for &(n, b) in o {
            into[n].push((st, b));
        }
    }
    anyhow::ensure!(into.iter().all(|v| v.len() == 2), "the constituent code's trellis does not enter every state twice");
    let layout = code.layout();
    let guard = match cfg.guard {
        Guard::None => 0,
        Guard::Pivi => 1,
        Guard::Dstw => 2,
        Guard::PiviDstw => 3,
    };
    let max_star = match cfg.max_star {
        MaxStar::Max => 0,
        MaxStar::Exact => 1,
        MaxStar::Linear => 2,
    };
    let stop = match cfg.early_stop {
        EarlyStop::Never => 0,
        EarlyStop::Stable => 1,
        EarlyStop::Crc24A => 2,
        EarlyStop::Crc24B => 3,
    };
    let mut d: Vec<(String, String)> = [
        ("TK", g.k),
        ("TM", g.m),
        ("TP", cfg.subblocks),
        ("TG", cfg.window),
        ("GUARD", guard),
        ("MAXSTAR", max_star),
        ("STOP", stop),
        ("ITERS", cfg.iterations),
        ("LMAX", g.lmax),
        ("NT", SISO_THREADS),
        ("TFNT", g.fnt),
        ("TSEG", g.seg),
        ("FROWS_GLOBAL", usize::from(g.rows_global)),
        ("FCK_GLOBAL", usize::from(g.ck_global)),
        ("FCVT_MAGIC", usize::from(g.cvt_magic)),
        ("ALPHA_SHARED", usize::from(g.alpha_shared)),
        ("TD1", layout.stream_start(1)),
        ("TD2", layout.stream_start(2)),
        ("TSOFT", usize::from(soft)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    d.push(("TTAIL".into(), list((0..4 * g.m).map(|j| layout.tail(j)))));
    d.push(("TINTO".into(), list(into.iter().flat_map(|v| [v[0].0, v[0].1, v[1].0, v[1].1]))));
    d.push(("TOUT".into(), list(out.iter().flat_map(|o| [o[0].0, o[0].1, o[1].0, o[1].1]))));
    Ok(d)
}

/// Compile the turbo kernels for `code` and `cfg` for architecture `arch`
/// (e.g. `sm_90`) with NVRTC alone, no GPU needed, and return the CUBIN
/// image: lets a machine without a GPU check that a configuration compiles.
/// `soft` compiles the variant that also writes a-posteriori LLRs
/// ([`GpuTurboOptions::soft_output`](super::GpuTurboOptions)).
pub fn compile_turbo_kernel(code: &TurboCode, cfg: &DecoderConfig, soft: bool, arch: &str) -> anyhow::Result<Vec<u8>> {
    cfg.validate(code.k())?;
    let g = Geometry::new(code, cfg, &TurboTuning::default().with_env_overrides()?)?;
    crate::gpu::compile::compile_cubin("turbo.cu", arch, &defines(code, cfg, &g, soft)?)
}

/// A kernel argument as the driver takes it.
fn arg<T>(x: &mut T) -> *mut c_void {
    (x as *mut T).cast()
}

/// Launch `f` on `stream`.
///
/// # Safety
/// `params` must match the kernel's signature and every buffer they name
/// must be large enough for the launch.
unsafe fn launch(f: &CudaFunction, grid: usize, block: u32, smem: u32, stream: sys::CUstream, params: &mut [*mut c_void], what: &'static str) -> anyhow::Result<()> {
    let grid = u32::try_from(grid.max(1)).map_err(|_| anyhow::anyhow!("{what}: a grid of {grid} CTAs is too large"))?;
    // SAFETY: the caller's promise.
    unsafe { result::launch_kernel(f.cu_function(), (grid, 1, 1), (block, 1, 1), smem, stream, params) }.map_err(cuda(what))
}

/// The de-rate-matching on load of a batch: its kernel (for the staged LLR
/// type), the table on the device and what the kernel needs besides.
pub(super) struct Dematch<'a> {
    pub f: &'a CudaFunction,
    /// `GpuTurbo`'s `dematch_table`, of `formats` rate matchings.
    pub table: sys::CUdeviceptr,
    pub formats: u32,
    /// The LLR of a known zero.
    pub known: f32,
    /// Bytes a unit is staged in (its format word and its LLRs).
    pub pitch_bytes: u64,
}

/// The kernels of one decoder and what every launch of a batch needs.
pub(super) struct Launcher<'a> {
    /// Run first when units are rate-matched: the decoder then reads the
    /// layouts it writes ([`aux::LAYOUTS`]).
    pub dematch: Option<Dematch<'a>>,
    pub load: &'a CudaFunction,
    pub siso: [&'a CudaFunction; 2],
    pub stop: &'a CudaFunction,
    pub geometry: &'a Geometry,
    pub iterations: usize,
    /// Extrinsic scaling.
    pub scale: f32,
    /// 1 / the LLRs' input scale.
    pub inv_scale: f32,
    /// Π then Π⁻¹, K `u32` each, then the stage-index rows ([`Geometry::stage_rows`]).
    pub tables: sys::CUdeviceptr,
    /// The fused kernel for the LLR type and its dynamic shared memory, when
    /// a CTA holds a code block (else the per-half-iteration kernels run).
    pub fused: Option<(&'a CudaFunction, u32)>,
}

impl Launcher<'_> {
    /// Queue the decoding of `blocks` units (each `pitch` items of the
    /// layout) of the slot: de-rate-matching them first when they are
    /// rate-matched; load, then per iteration both half-iterations and the
    /// stop; blocks that stopped are skipped by the later launches.
    pub fn run(&self, stream: sys::CUstream, slot: &SlotBuffers, pitch: usize, blocks: usize) -> anyhow::Result<()> {
        anyhow::ensure!(slot.aux.len() == 7, "turbo slot without its buffers");
        let g = self.geometry;
        let mut input = slot.input.ptr();
        let mut pitch = pitch as u64;
        let mut count = u32::try_from(blocks).map_err(|_| anyhow::anyhow!("{blocks} blocks in one batch"))?;
        if let Some(d) = &self.dematch {
            let (mut staged, mut bytes, mut table, mut formats, mut known) = (input, d.pitch_bytes, d.table, d.formats, d.known);
            let mut layouts = slot.aux[aux::LAYOUTS].ptr();
            let mut p = [arg(&mut staged), arg(&mut bytes), arg(&mut count), arg(&mut table), arg(&mut formats), arg(&mut known), arg(&mut layouts)];
            // SAFETY: the parameters match turbo_dematch_*; the input holds
            // `blocks` staged units of `pitch_bytes`, each a format below
            // `formats` and its E LLRs; the table holds every format's; the
            // layouts buffer `blocks` layouts of the LLR type (`GpuTurbo` sizes both).
            unsafe { launch(d.f, blocks, DEMATCH_THREADS, 0, stream, &mut p, "turbo de-rate-matching launch") }?;
            input = layouts;
        }
        let mut inv_scale = self.inv_scale;
        let mut scale = self.scale;
        let mut perm = self.tables;
        let mut inv = self.tables + 4 * g.k as u64;
        let [mut sp, mut la, mut alpha, mut edges, mut hard, mut flags] = [aux::SP, aux::LA, aux::ALPHA, aux::EDGES, aux::HARD, aux::FLAGS].map(|i| slot.aux[i].ptr());
        let mut out = slot.output.ptr();
        let mut status = slot.status.map(|s| s.ptr()).ok_or_else(|| anyhow::anyhow!("turbo slot without status words"))?;
        // SAFETY (all launches): the parameters match the kernels' signatures in
        // turbo.cu; the slot's buffers were sized by `Geometry::aux_bytes` for
        // at least `blocks` blocks, the input holds `blocks` units of `pitch`
        // items, the output W words per block (and K more with the soft
        // output: `GpuTurbo` sizes it) and the status one word per block,
        // and `tables` holds Π and Π⁻¹.
        unsafe {
            if let Some((f, smem)) = self.fused {
                let mut prow = self.tables + 8 * g.k as u64;
                let mut p = [
                    arg(&mut input),
                    arg(&mut pitch),
                    arg(&mut count),
                    arg(&mut inv_scale),
                    arg(&mut prow),
                    arg(&mut sp),
                    arg(&mut la),
                    arg(&mut edges),
                    arg(&mut out),
                    arg(&mut status),
                    arg(&mut scale),
                ];
                return launch(f, blocks, g.fnt as u32, smem, stream, &mut p, "turbo fused kernel launch");
            }
            let mut p = [arg(&mut input), arg(&mut pitch), arg(&mut count), arg(&mut inv_scale), arg(&mut perm), arg(&mut sp), arg(&mut la), arg(&mut flags)];
            launch(self.load, blocks, LOAD_THREADS, 0, stream, &mut p, "turbo load kernel launch")?;
            for it in 1..=self.iterations as i32 {
                let mut it = it;
                for (c, f) in self.siso.iter().enumerate() {
                    let mut p = [
                        arg(&mut count),
                        arg(&mut it),
                        arg(&mut sp),
                        arg(&mut la),
                        arg(&mut perm),
                        arg(&mut inv),
                        arg(&mut alpha),
                        arg(&mut edges),
                        arg(&mut hard),
                        arg(&mut flags),
                        arg(&mut scale),
                        arg(&mut out),
                    ];
                    let what = if c == 0 { "turbo half-iteration 1 launch" } else { "turbo half-iteration 2 launch" };
                    launch(f, g.siso_ctas(blocks), SISO_THREADS as u32, g.smem(), stream, &mut p, what)?;
                }
                let mut p = [arg(&mut count), arg(&mut it), arg(&mut hard), arg(&mut flags), arg(&mut out), arg(&mut status)];
                launch(self.stop, blocks, STOP_THREADS, 0, stream, &mut p, "turbo stop kernel launch")?;
            }
        }
        Ok(())
    }
}
