//! gpufec: FutureSDR blocks that decode channel codes on NVIDIA GPUs, with an
//! exact CPU reference decoder beside every GPU one.
//!
//! Layers (each imports only the ones above it): [`codes`] (pure Rust codes,
//! channels, cutters, CPU decoders and link simulation), [`gpu`] (CUDA
//! backend), [`blocks`] (FutureSDR blocks), [`flowgraph`] (flowgraph files and
//! runs) and [`cli`] (the `gpufec` command). `docs/ARCHITECTURE.md` is the map.

#![warn(missing_docs)]

pub mod codes;
pub mod dsp;
pub mod gpu;
pub mod blocks;
pub mod flowgraph;
pub mod files;
pub mod figures;
pub mod cli;
