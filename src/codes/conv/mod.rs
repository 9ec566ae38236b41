//! Convolutional codes: definition and trellis, encoder, puncturing, and the
//! Viterbi decoders.

mod code;
mod encoder;
mod puncture;
pub mod viterbi;

pub use code::{ConvCode, MAX_K, MAX_N, MIN_K, Trellis, parse_octal};
pub use encoder::{ConvEncoder, EncoderMode};
pub use puncture::{Depuncturer, PuncturePattern, Puncturer};
pub use viterbi::{CpuViterbi, DepuncturedUnits, FrameConfig, SimdLevel, TileConfig, Tiler, Traceback, ViterbiMode};
