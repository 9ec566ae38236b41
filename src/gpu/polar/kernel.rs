//! The polar BP kernel (`kernels/polar.cu`) as the host sees it: where a
//! codeword's messages live and how many codewords a CTA decodes (from the
//! device's shared memory), the compile-time constants, the code's tables,
//! and the launch of one batch.

use crate::codes::llr::LlrType;
use crate::codes::polar::{BitKind, BpConfig, EarlyStop, I8_MODEL_F32_SCALE, PolarSpec};
use crate::gpu::device::cuda;
use crate::gpu::pipeline::SlotBuffers;
use cudarc::driver::{CudaFunction, result, sys};
use std::ffi::c_void;

/// The kernel's entry point.
pub(super) const ENTRY: &str = "polar_bp";
/// Most threads of a CTA.
const MAX_CTA_THREADS: usize = 1024;
/// Threads a CTA of short codewords is filled to: several codewords share
/// it, so that a CTA of N = 8 still runs whole warps. No more than one
/// codeword of N = 1024: a CTA's shared memory and thread slots are given
/// back only when its last codeword stops, so a CTA of one codeword frees
/// them as soon as that codeword does.
const CTA_THREADS: usize = 128;
/// Most threads an SM holds (every architecture from Volta to Hopper).
const MAX_SM_THREADS: usize = 2048;
/// 32-bit registers of an SM (every architecture from Volta to Hopper).
const SM_REGISTERS: usize = 1 << 16;
/// Registers a thread is left at least: at N = 1024 the kernel at 32
/// registers (13 CTAs an SM, as the shared memory holds) spills and ran
/// 19.7 Gb/s on the H200; at 40 (12 CTAs) it spills nothing and ran 20.5,
/// at 48 (10 CTAs) 20.6.
const MIN_THREAD_REGISTERS: usize = 40;
/// The longest code the GPU decodes: 2^15, whose messages take 1 MiB of
/// global scratch per codeword.
pub const GPU_MAX_N: usize = 1 << 15;

/// Where a code's messages live and how the threads are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Geometry {
    pub n: usize,
    pub m: usize,
    /// Threads per codeword: one per quad of processing elements (N/8),
    /// at most a CTA's.
    pub tpc: usize,
    /// Codewords per CTA.
    pub per_cta: usize,
    /// Messages in global scratch (else in shared memory).
    pub global: bool,
    /// Whether the messages include L[0], for soft output.
    pub soft: bool,
    /// CTAs an SM should hold at once (the kernel's `PMINB`): as many as
    /// its shared memory and thread slots allow, but no more than leave each
    /// thread [`MIN_THREAD_REGISTERS`], so that the compiler keeps the
    /// registers under what they leave without spilling (the N = 1024
    /// kernel takes 40: 12 CTAs where the shared memory holds 13). 1 for
    /// messages in global memory, whose quads per thread would spill.
    pub min_ctas: usize,
    /// ⌈N/32⌉: words of N bits.
    pub uw: usize,
}

impl Geometry {
    /// The layout of codes of N = `n` (with soft output or not) on a
    /// device that gives a CTA up to `smem_optin` bytes of shared memory:
    /// the messages in shared memory where one codeword's fit (the
    /// full-parallel decoder), else in global scratch (the partial-parallel
    /// one).
    pub fn new(n: usize, smem_optin: usize, soft: bool) -> Self {
        let m = n.trailing_zeros() as usize;
        let tpc = (n / 8).min(MAX_CTA_THREADS);
        let uw = n.div_ceil(32);
        let bytes = Self::msg_bytes_of(n, soft) + Self::tail_bytes_of(uw, tpc);
        let global = bytes > smem_optin;
        let per_cta = if global { 1 } else { (CTA_THREADS / tpc).max(1).min(smem_optin / bytes).max(1) };
        Self { n, m, tpc, per_cta, global, soft, uw, min_ctas: 1 }
    }

    /// The layout on an SM of `smem_per_sm` bytes of shared memory, of
    /// which `reserved` go to each resident CTA: sets [`Self::min_ctas`].
    pub fn on_sm(mut self, smem_per_sm: usize, reserved: usize) -> Self {
        if !self.global {
            let threads = self.threads();
            self.min_ctas = (smem_per_sm / (self.smem() + reserved))
                .min(MAX_SM_THREADS / threads)
                .min(SM_REGISTERS / (threads * MIN_THREAD_REGISTERS))
                .max(1);
        }
        self
    }

    /// The columns 3..m of L and of R, and L[0] with soft output (the
    /// columns 0..2 stay in registers): (2·(m − 2) + soft)·N bytes
    /// (`MSG_BYTES`).
    fn msg_bytes_of(n: usize, soft: bool) -> usize {
        (2 * (n.trailing_zeros() as usize - 2) + usize::from(soft)) * n
    }

    /// û, x̂, two control words and a word per warp of `tpc` threads
    /// (`TAIL_WORDS`).
    fn tail_bytes_of(uw: usize, tpc: usize) -> usize {
        4 * (2 * uw + 2 + tpc.div_ceil(32))
    }

    /// Message bytes of one codeword.
    pub fn msg_bytes(&self) -> usize {
        Self::msg_bytes_of(self.n, self.soft)
    }

    /// Quads (four processing elements of a stage) each thread updates.
    pub fn quads_per_thread(&self) -> usize {
        self.n / 8 / self.tpc
    }

    /// Dynamic shared memory of a CTA.
    pub fn smem(&self) -> usize {
        self.per_cta * (Self::tail_bytes_of(self.uw, self.tpc) + if self.global { 0 } else { self.msg_bytes() })
    }

    /// Threads of a CTA.
    pub fn threads(&self) -> usize {
        self.tpc * self.per_cta
    }
}

/// Output words per codeword: the K information bits packed, then with
/// soft output ⌈K/2⌉ words of i16 sums (`POW`).
pub(super) fn out_words(k: usize, soft: bool) -> usize {
    k.div_ceil(32) + if soft { k.div_ceil(2) } else { 0 }
}

/// The kernel's compile-time constants.
pub(super) fn defines(spec: &PolarSpec, cfg: &BpConfig, llr: LlrType, soft: bool, g: &Geometry) -> Vec<(String, String)> {
    let k = spec.code().k();
    let mut d: Vec<(String, String)> = [
        ("PM", g.m),
        ("PN", g.n),
        ("PK", k),
        ("PKW", k.div_ceil(32)),
        ("POW", out_words(k, soft)),
        ("PUW", g.uw),
        ("PTPC", g.tpc),
        ("PCW", g.per_cta),
        ("PQPT", g.quads_per_thread()),
        ("PMINB", g.min_ctas),
        ("PGLOBAL", usize::from(g.global)),
        ("PIMAX", cfg.iterations as usize),
        (
            "PSTOP",
            match cfg.early_stop {
                EarlyStop::Never => 0,
                EarlyStop::GMatrix => 1,
                EarlyStop::Crc => 2,
            },
        ),
        ("PSYS", usize::from(spec.systematic())),
        ("PSOFT", usize::from(soft)),
        ("PF32", usize::from(llr == LlrType::F32)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    // The scale as a float literal that parses back to the same f32.
    d.push(("PQSCALE".to_string(), format!("{:?}f", I8_MODEL_F32_SCALE)));
    if let (EarlyStop::Crc, Some(check)) = (cfg.early_stop, spec.check()) {
        d.push(("PXOR".to_string(), format!("{:#x}u", check.syndrome_columns().1)));
    }
    d
}

/// The code's tables on the device (the kernel's `tables`): u's frozen
/// bits packed 32 to a word, the information positions, ascending, and for
/// a code with a CRC the syndrome column of each information bit (which
/// the CRC stop reads).
pub(super) fn tables(spec: &PolarSpec, g: &Geometry) -> Vec<u32> {
    let code = spec.code();
    let mut t = vec![0u32; g.uw];
    for (i, kind) in code.kinds().iter().enumerate() {
        if *kind == BitKind::Frozen {
            t[i / 32] |= 1 << (i % 32);
        }
    }
    t.extend_from_slice(code.info());
    if let Some(check) = spec.check() {
        t.extend(check.syndrome_columns().0);
    }
    t
}

/// Compile the BP kernel for `spec` decoded as `cfg` says (its `i8` model)
/// from `llr` LLRs, with soft output or not, for architecture `arch` (e.g.
/// `sm_90`) on a device giving a CTA `smem_optin` bytes of shared memory,
/// with NVRTC alone, no GPU needed (an SM's shared memory taken as
/// Hopper's: `smem_optin` and 1 KiB reserved per CTA); returns the CUBIN
/// image, so that a machine without a GPU can check that every
/// configuration compiles.
pub fn compile_polar_kernel(spec: &PolarSpec, cfg: &BpConfig, llr: LlrType, soft: bool, arch: &str, smem_optin: usize) -> anyhow::Result<Vec<u8>> {
    super::check_gpu_decodes(spec, cfg)?;
    let g = Geometry::new(spec.n(), smem_optin, soft).on_sm(smem_optin + HOPPER_RESERVED, HOPPER_RESERVED);
    crate::gpu::compile::compile_cubin("polar.cu", arch, &defines(spec, cfg, llr, soft, &g))
}

/// Shared memory Hopper reserves per resident CTA.
const HOPPER_RESERVED: usize = 1 << 10;

/// A kernel argument as the driver takes it.
fn arg<T>(x: &mut T) -> *mut c_void {
    (x as *mut T).cast()
}

/// The launch of one batch.
pub(super) struct Launcher<'a> {
    pub f: &'a CudaFunction,
    pub g: Geometry,
    pub tables: sys::CUdeviceptr,
}

impl Launcher<'_> {
    /// Decode `units` codewords of the slot's input.
    pub fn run(&self, stream: sys::CUstream, slot: &SlotBuffers, units: usize) -> anyhow::Result<()> {
        let status = slot.status.ok_or_else(|| anyhow::anyhow!("the polar decoder's slot has no status words"))?;
        let (mut llrs, mut count, mut out, mut st, mut tables) = (slot.input.ptr(), units as u32, slot.output.ptr(), status.ptr(), self.tables);
        let mut scratch: sys::CUdeviceptr = slot.aux.first().map_or(0, |b| b.ptr());
        let mut params = [arg(&mut llrs), arg(&mut count), arg(&mut out), arg(&mut st), arg(&mut tables), arg(&mut scratch)];
        let blocks = units.div_ceil(self.g.per_cta) as u32;
        // A grid of one layer: the kernel takes −gridDim.z as its opaque −1
        // (`fsub` in polar.cu).
        // SAFETY: the parameters match `polar_bp`'s signature; the slot holds
        // `units` codewords of N LLRs, their output words and status words,
        // and (global messages) their scratch; `tables` the code's.
        unsafe { result::launch_kernel(self.f.cu_function(), (blocks.max(1), 1, 1), (self.g.threads() as u32, 1, 1), self.g.smem() as u32, stream, &mut params) }
            .map_err(cuda("polar BP kernel launch"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hopper's opt-in shared memory per block.
    const H100_OPTIN: usize = 227 << 10;

    #[test]
    fn codes_up_to_8192_keep_their_messages_in_shared_memory_on_hopper() {
        let g = Geometry::new(8192, H100_OPTIN, true);
        assert!(!g.global && g.per_cta == 1 && g.tpc == 1024 && g.smem() <= H100_OPTIN, "{g:?}");
        let g = Geometry::new(16384, H100_OPTIN, false);
        assert!(g.global && g.per_cta == 1 && g.smem() < 8 << 10 && g.quads_per_thread() == 2, "{g:?}");
        let g = Geometry::new(8, H100_OPTIN, false);
        assert_eq!((g.tpc, g.per_cta, g.threads(), g.msg_bytes()), (1, 128, 128, 16));
        let g = Geometry::new(1024, H100_OPTIN, false).on_sm(H100_OPTIN + HOPPER_RESERVED, HOPPER_RESERVED);
        assert_eq!((g.tpc, g.per_cta, g.msg_bytes(), g.quads_per_thread(), g.min_ctas), (128, 1, 16384, 1, 12));
        assert_eq!(Geometry::new(32768, H100_OPTIN, false).on_sm(H100_OPTIN + HOPPER_RESERVED, HOPPER_RESERVED).min_ctas, 1);
        assert_eq!(Geometry::new(1024, H100_OPTIN, true).msg_bytes(), 17408);
        // A device of 48 KiB per block: 4096 no longer fits.
        assert!(!Geometry::new(2048, 48 << 10, false).global && Geometry::new(4096, 48 << 10, false).global);
    }
}
