//! Convolutional codes: definition and trellis, encoder, puncturing, the
//! Viterbi decoders, and the family's link simulation.

mod code;
mod encoder;
pub mod link;
mod puncture;
pub mod tile_loss;
pub mod viterbi;

pub use code::{ConvCode, MAX_K, MAX_N, MIN_K, Trellis};
pub use encoder::{ConvEncoder, EncoderMode};
pub use link::{ConvLink, ConvSetup, NoisyLlrs};
pub use puncture::{Depuncturer, MAX_PERIOD, PuncturePattern, Punctured, Puncturer};
pub use viterbi::{
    CpuViterbi, DEFAULT_GROUP, DepuncturedUnits, default_tile, FrameConfig, TileConfig, TileField, Tiler, Traceback, ViterbiLlr, ViterbiMode,
};
