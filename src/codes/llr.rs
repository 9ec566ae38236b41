//! The two LLR sample types that travel between blocks.
//!
//! LLR = ln P(b=0)/P(b=1): positive means bit 0. `f32` LLRs are 2y/σ²; `i8`
//! LLRs are those quantized by [`Quantizer`] (saturated to ±127, scale given
//! explicitly). What a decoder does with them (the Viterbi path metrics, say)
//! belongs to the decoder's family, not here.

use crate::codes::channel::Quantizer;
use crate::codes::error::{CodeError, CodeResult, invalid};

/// A soft-bit sample type accepted by the decoders.
pub trait Llr: Copy + Default + Send + Sync + PartialEq + std::fmt::Debug + 'static {
    /// Which of the two types this is.
    const TYPE: LlrType;
    /// Name used in messages and flowgraph files (`f32`, `i8`).
    const NAME: &'static str = Self::TYPE.name();
    /// A confident "bit 0": a stream's framer fills the stages before its
    /// start with it, because every encoder starts from the all-zero state.
    const CERTAIN_ZERO: Self;
    /// A confident "bit 1": the same framer's fill for an output the code
    /// sends inverted.
    const CERTAIN_ONE: Self;
    /// Whether the value is a usable LLR (not NaN, not infinite).
    fn is_finite(self) -> bool;
    /// Append channel LLRs `llrs` as this type: `f32` keeps them, `i8`
    /// quantizes them with `quantizer`. NaN or infinite input is an error and
    /// nothing is appended.
    fn from_llrs(llrs: &[f32], quantizer: &Quantizer, out: &mut Vec<Self>) -> CodeResult<()>;
    /// One finite channel LLR as this type (`from_llrs` for one value).
    fn from_llr(llr: f32, quantizer: &Quantizer) -> Self;
    /// The slice as its concrete sample type, for kernels written per type.
    fn typed(llrs: &[Self]) -> LlrSlice<'_>;
    /// The value as an `f32` (an `i8` in its quantized units, unscaled).
    fn to_f32(self) -> f32;
    /// The LLR of a bit received twice (soft combining in rate recovery):
    /// `f32` adds, `i8` adds with saturation to ±127 (the quantizer's
    /// range), so a sum depends on the order it is added in.
    fn plus(self, other: Self) -> Self;
}

/// The LLR type of a stream, as the command line and flowgraph files name it.
///
/// # Example
/// ```
/// use gpufec::codes::LlrType;
/// assert_eq!("i8".parse::<LlrType>().unwrap(), LlrType::I8);
/// assert_eq!(LlrType::F32.to_string(), "f32");
/// assert!("i16".parse::<LlrType>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LlrType {
    /// Quantized `i8` LLRs.
    I8,
    /// `f32` LLRs.
    F32,
}

impl LlrType {
    /// Both types, the compact one first.
    pub const ALL: [LlrType; 2] = [LlrType::I8, LlrType::F32];

    /// `i8` or `f32`.
    pub const fn name(self) -> &'static str {
        match self {
            LlrType::I8 => "i8",
            LlrType::F32 => "f32",
        }
    }

    /// Bytes per LLR.
    pub const fn bytes(self) -> usize {
        match self {
            LlrType::I8 => 1,
            LlrType::F32 => 4,
        }
    }
}

impl std::fmt::Display for LlrType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for LlrType {
    type Err = CodeError;
    fn from_str(s: &str) -> CodeResult<Self> {
        LlrType::ALL.into_iter().find(|t| t.name() == s.trim()).ok_or_else(|| invalid!("LLR type '{s}' is neither i8 nor f32"))
    }
}

/// A slice of LLRs seen as its concrete sample type.
#[derive(Debug, Clone, Copy)]
pub enum LlrSlice<'a> {
    /// `f32` LLRs.
    F32(&'a [f32]),
    /// `i8` LLRs.
    I8(&'a [i8]),
}

impl Llr for f32 {
    const TYPE: LlrType = LlrType::F32;
    // Far above any channel LLR (2y/σ² stays below ~200 up to 20 dB Eb/N0), yet
    // small enough that a few hundred such stages leave f32 metrics precise.
    const CERTAIN_ZERO: f32 = 1000.0;
    const CERTAIN_ONE: f32 = -1000.0;
    #[inline(always)]
    fn is_finite(self) -> bool {
        f32::is_finite(self)
    }
    fn from_llrs(llrs: &[f32], _quantizer: &Quantizer, out: &mut Vec<f32>) -> CodeResult<()> {
        check_finite(llrs)?;
        out.extend_from_slice(llrs);
        Ok(())
    }
    #[inline(always)]
    fn from_llr(llr: f32, _quantizer: &Quantizer) -> f32 {
        llr
    }
    fn typed(llrs: &[f32]) -> LlrSlice<'_> {
        LlrSlice::F32(llrs)
    }
    #[inline(always)]
    fn to_f32(self) -> f32 {
        self
    }
    #[inline(always)]
    fn plus(self, other: f32) -> f32 {
        self + other
    }
}

impl Llr for i8 {
    const TYPE: LlrType = LlrType::I8;
    const CERTAIN_ZERO: i8 = 127;
    const CERTAIN_ONE: i8 = -127;
    #[inline(always)]
    fn is_finite(self) -> bool {
        true
    }
    fn from_llrs(llrs: &[f32], quantizer: &Quantizer, out: &mut Vec<i8>) -> CodeResult<()> {
        quantizer.quantize(llrs, out)
    }
    #[inline(always)]
    fn from_llr(llr: f32, quantizer: &Quantizer) -> i8 {
        quantizer.one(llr)
    }
    fn typed(llrs: &[i8]) -> LlrSlice<'_> {
        LlrSlice::I8(llrs)
    }
    #[inline(always)]
    fn to_f32(self) -> f32 {
        f32::from(self)
    }
    #[inline(always)]
    fn plus(self, other: i8) -> i8 {
        (i16::from(self) + i16::from(other)).clamp(-127, 127) as i8
    }
}

/// Reject NaN or infinite LLRs with the index of the first one.
pub fn check_finite<T: Llr>(llrs: &[T]) -> CodeResult<()> {
    if all_finite(llrs) {
        return Ok(());
    }
    let index = llrs.iter().position(|v| !v.is_finite()).unwrap_or_default();
    Err(CodeError::NonFiniteLlr { index })
}

/// Whether every LLR is finite, as fast as memory allows: a fold without early
/// exit vectorises, a search for the first bad value does not.
pub fn all_finite<T: Llr>(llrs: &[T]) -> bool {
    llrs.chunks(4096).all(|c| c.iter().fold(true, |ok, v| ok & v.is_finite()))
}
