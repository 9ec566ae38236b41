//! The CPU's SIMD instruction-set level, detected at run time: every CPU
//! decoder (the Viterbi forward passes, the turbo decoder's lane loops)
//! picks its kernels by it, and `gpufec info` reports it.

use crate::codes::error::{CodeResult, invalid};

/// Instruction-set level of the CPU decoders' vector loops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SimdLevel {
    /// Plain scalar code (the reference models); runs everywhere.
    Scalar,
    /// 256-bit AVX2: 8 `f32` or 16 `i16` metrics per register.
    Avx2,
    /// 512-bit AVX-512F and AVX-512BW: 16 `f32` or 32 `i16` metrics per register.
    Avx512,
}

impl SimdLevel {
    /// Every level, slowest first.
    pub const ALL: [SimdLevel; 3] = [SimdLevel::Scalar, SimdLevel::Avx2, SimdLevel::Avx512];

    /// Whether this CPU can run the level.
    pub fn is_supported(self) -> bool {
        match self {
            SimdLevel::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            SimdLevel::Avx2 => is_x86_feature_detected!("avx2"),
            #[cfg(target_arch = "x86_64")]
            SimdLevel::Avx512 => is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bw"),
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// The levels this CPU can run, slowest first.
    pub fn supported() -> Vec<SimdLevel> {
        Self::ALL.into_iter().filter(|l| l.is_supported()).collect()
    }

    /// The level decoders use by default: the fastest one this CPU runs.
    ///
    /// AVX-512 is preferred to AVX2 where both run (measured on a 2-core AMD
    /// EPYC, see BENCHMARKS.md).
    pub fn detect() -> SimdLevel {
        Self::supported().last().copied().unwrap_or(SimdLevel::Scalar)
    }

    /// The vector levels this CPU runs, for a test that compares each with
    /// the scalar code; where there is none, it says on stderr (where a test
    /// harness shows it) that `test` compared nothing, rather than pass as
    /// if it had.
    pub fn to_compare(test: &str) -> Vec<SimdLevel> {
        let levels: Vec<SimdLevel> = Self::supported().into_iter().filter(|&l| l != SimdLevel::Scalar).collect();
        if levels.is_empty() {
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "SKIPPED {test}: this CPU runs no SIMD level beyond scalar, so nothing was compared");
        }
        levels
    }

    /// Parse `scalar`, `avx2` or `avx512`.
    pub fn parse(s: &str) -> CodeResult<Self> {
        Self::ALL
            .into_iter()
            .find(|l| l.to_string() == s.trim())
            .ok_or_else(|| invalid!("SIMD level '{s}' is none of scalar, avx2, avx512"))
    }
}

impl std::fmt::Display for SimdLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SimdLevel::Scalar => "scalar",
            SimdLevel::Avx2 => "avx2",
            SimdLevel::Avx512 => "avx512",
        })
    }
}
