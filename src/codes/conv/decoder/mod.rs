//! Soft-decision Viterbi decoding: the scalar reference model, its SIMD
//! forward passes, the tiled geometry of the paper, the stream tiler and the
//! multi-threaded CPU decoder, and its wrapper for punctured units.

mod config;
mod cpu;
mod depunctured;
mod llr;
pub mod scalar;
mod simd;
mod tiler;

pub use config::{default_tile, DEFAULT_GROUP, FrameConfig, MAX_FRAME_BITS, MAX_TILE_STAGES, MAX_UNIT_STAGES, TileConfig, TileField, Traceback, ViterbiMode};
pub use cpu::{CpuViterbi, DEFAULT_BATCH_UNITS, MAX_BATCH_LLRS};
pub use depunctured::DepuncturedUnits;
pub use llr::ViterbiLlr;
pub use tiler::Tiler;
