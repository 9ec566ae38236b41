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
/// it, so that a CTA of N = 8 still runs whole warps.
const CTA_THREADS: usize = 256;
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
    /// ⌈N/32⌉: words of N bits.
    pub uw: usize,
}

impl Geometry {
    /// The layout of codes of N = `n` on a device that gives a CTA up to
    /// `smem_optin` bytes of shared memory: the messages in shared memory
    /// where one codeword's fit (the full-parallel decoder), else in global
    /// scratch (the partial-parallel one).
    pub fn new(n: usize, smem_optin: usize) -> Self {
        let m = n.trailing_zeros() as usize;
        let tpc = (n / 8).min(MAX_CTA_THREADS);
        let uw = n.div_ceil(32);
        let global = Self::msg_bytes_of(n) + Self::tail_bytes_of(uw) > smem_optin;
        let per_cta = if global {
            1
        } else {
            let by_threads = (CTA_THREADS / tpc).max(1);
            let by_smem = smem_optin / (Self::msg_bytes_of(n) + Self::tail_bytes_of(uw));
            by_threads.min(by_smem).max(1)
        };
        Self { n, m, tpc, per_cta, global, uw }
    }

    /// L and R of every column: 2·(m + 1)·N bytes (`MSG_BYTES`).
    fn msg_bytes_of(n: usize) -> usize {
        2 * (n.trailing_zeros() as usize + 1) * n
    }

    /// û, x̂ and four control words (`TAIL_WORDS`).
    fn tail_bytes_of(uw: usize) -> usize {
        4 * (2 * uw + 4)
    }

    /// Message bytes of one codeword.
    pub fn msg_bytes(&self) -> usize {
        Self::msg_bytes_of(self.n)
    }

    /// Dynamic shared memory of a CTA.
    pub fn smem(&self) -> usize {
        self.per_cta * (Self::tail_bytes_of(self.uw) + if self.global { 0 } else { self.msg_bytes() })
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
        ("PGLOBAL", usize::from(g.global)),
        ("PIMAX", cfg.iterations as usize),
        ("PSTOP", usize::from(cfg.early_stop == EarlyStop::GMatrix)),
        ("PSYS", usize::from(spec.systematic())),
        ("PSOFT", usize::from(soft)),
        ("PF32", usize::from(llr == LlrType::F32)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    // The scale as a float literal that parses back to the same f32.
    d.push(("PQSCALE".to_string(), format!("{:?}f", I8_MODEL_F32_SCALE)));
    d
}

/// The code's tables on the device (the kernel's `tables`): u's frozen
/// bits packed 32 to a word, then the information positions, ascending.
pub(super) fn tables(spec: &PolarSpec, g: &Geometry) -> Vec<u32> {
    let code = spec.code();
    let mut t = vec![0u32; g.uw];
    for (i, kind) in code.kinds().iter().enumerate() {
        if *kind == BitKind::Frozen {
            t[i / 32] |= 1 << (i % 32);
        }
    }
    t.extend_from_slice(code.info());
    t
}

/// Compile the BP kernel for `spec` decoded as `cfg` says (its `i8` model)
/// from `llr` LLRs, with soft output or not, for architecture `arch` (e.g.
/// `sm_90`) on a device giving a CTA `smem_optin` bytes of shared memory,
/// with NVRTC alone, no GPU needed; returns the CUBIN image, so that a
/// machine without a GPU can check that every configuration compiles.
pub fn compile_polar_kernel(spec: &PolarSpec, cfg: &BpConfig, llr: LlrType, soft: bool, arch: &str, smem_optin: usize) -> anyhow::Result<Vec<u8>> {
    super::check_gpu_decodes(spec, cfg)?;
    let g = Geometry::new(spec.n(), smem_optin);
    crate::gpu::compile::compile_cubin("polar.cu", arch, &defines(spec, cfg, llr, soft, &g))
}

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
        let g = Geometry::new(8192, H100_OPTIN);
        assert!(!g.global && g.per_cta == 1 && g.tpc == 1024 && g.smem() <= H100_OPTIN, "{g:?}");
        let g = Geometry::new(16384, H100_OPTIN);
        assert!(g.global && g.per_cta == 1 && g.smem() < 8 << 10, "{g:?}");
        let g = Geometry::new(8, H100_OPTIN);
        assert_eq!((g.tpc, g.per_cta, g.threads()), (1, 256, 256));
        let g = Geometry::new(1024, H100_OPTIN);
        assert_eq!((g.tpc, g.per_cta, g.msg_bytes()), (128, 2, 22528));
        // A device of 48 KiB per block: 2048 no longer fits.
        assert!(Geometry::new(2048, 48 << 10).global);
    }
}
