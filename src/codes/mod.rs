//! Layer 1: pure Rust code definitions, encoders, channels, cutters, CPU
//! reference decoders and link simulation. No FutureSDR, no CUDA.
//!
//! The contracts every family implements live here: [`decode::BatchDecoder`]
//! (decoders), [`encode::Encoder`], [`channel::Channel`], [`framing::Cutter`]
//! (how a stream becomes work units) and [`sim::Link`] (a whole chain for
//! error-rate curves).

pub mod bits;
pub mod channel;
pub mod conv;
pub mod ccsds;
pub mod crc;
pub mod decode;
pub mod encode;
pub mod error;
pub mod framing;
pub mod llr;
pub mod octal;
pub mod packed;
pub mod polar;
pub mod settings;
pub mod sim;
pub mod simd;
pub mod sync;
pub mod threads;
pub mod turbo;
pub mod words;

pub use decode::{Batch, BatchDecoder, Decoded, UnitReport, UnitShape, UnitSpan};
pub use error::{CodeError, CodeResult};
pub use llr::{Llr, LlrSlice, LlrType};
