//! Layer 1: pure Rust code definitions, encoders, channels and CPU reference
//! decoders. No FutureSDR, no CUDA.

pub mod bits;
pub mod channel;
pub mod conv;
mod decoder;
pub mod error;
pub mod llr;
pub mod packed;
pub mod sim;

pub use decoder::{BatchDecoder, UnitShape};
pub use error::{CodeError, CodeResult};
pub use llr::{Llr, LlrSlice};
