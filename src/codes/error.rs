//! Typed errors of the pure-Rust code layer.

use std::fmt;

/// Everything that can go wrong when defining a code or decoding with it.
///
/// Each variant carries enough context for a one-line message that tells a
/// radio engineer what to change.
#[derive(Debug, Clone, PartialEq)]
pub enum CodeError {
    /// A code or decoder parameter is out of range or inconsistent.
    InvalidParameter(String),
    /// An LLR is NaN or infinite; `index` counts from the start of the call.
    NonFiniteLlr {
        /// Position of the offending value in the slice handed to the call.
        index: usize,
    },
    /// An input ended in the middle of a unit that needs to be whole.
    Truncated(String),
    /// Input and output slices do not have the lengths the call needs.
    LengthMismatch(String),
    /// The device a decoder runs on failed (a CUDA call, a kernel); the
    /// message names the call and the driver's error.
    Device(String),
    /// The decoder does not do what was asked (soft output from a hard-decision
    /// decoder, a mode it has no kernel for).
    Unsupported(String),
}

impl fmt::Display for CodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CodeError::InvalidParameter(m) => write!(f, "invalid parameter: {m}"),
            CodeError::NonFiniteLlr { index } => {
                write!(f, "LLR at index {index} is NaN or infinite")
            }
            CodeError::Truncated(m) => write!(f, "truncated stream: {m}"),
            CodeError::LengthMismatch(m) => write!(f, "length mismatch: {m}"),
            CodeError::Device(m) => write!(f, "device failure: {m}"),
            CodeError::Unsupported(m) => write!(f, "not supported: {m}"),
        }
    }
}

impl std::error::Error for CodeError {}

/// Shorthand for results of the code layer.
pub type CodeResult<T> = Result<T, CodeError>;

/// Build an [`CodeError::InvalidParameter`] from format arguments.
macro_rules! invalid {
    ($($arg:tt)*) => { $crate::codes::error::CodeError::InvalidParameter(format!($($arg)*)) };
}
pub(crate) use invalid;
