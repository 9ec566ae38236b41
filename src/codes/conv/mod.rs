//! Convolutional codes: definition and trellis, encoder, puncturing, the
//! Viterbi decoders, and the family's link simulation.

mod code;
mod encoder;
pub mod link;
mod pair_sync;
mod puncture;
mod settings;
pub mod tile_loss;
pub mod decoder;

pub use code::{ConvCode, MAX_K, MAX_N, MIN_K, Trellis};
pub use encoder::{ConvEncoder, EncoderMode};
pub use link::{ConvLink, ConvSetup, NoisyLlrs};
pub use pair_sync::{MAX_PAIR_SYNC_STAGES, MIN_PAIR_SYNC_STAGES, PairOffset, PairSync, rotate_pairs};
pub use puncture::{Depuncturer, MAX_PERIOD, PuncturePattern, Punctured, Puncturer};
pub use settings::{ConvChain, ConvSettings, DEFAULT_FRAME, Depuncturing, Mode, OutputOrder};
pub use decoder::{
    CpuViterbi, DEFAULT_GROUP, DepuncturedUnits, FrameConfig, MAX_FRAME_BITS, TileConfig, TileField, Tiler, Traceback, ViterbiLlr, ViterbiMode, default_tile,
};
