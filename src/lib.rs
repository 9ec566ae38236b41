//! gpufec: FutureSDR blocks that decode channel codes on NVIDIA GPUs, with an
//! exact CPU reference decoder beside every GPU one.
//!
//! Layers (each imports only the ones above it): [`codes`] (pure Rust codes,
//! channels and CPU decoders), [`gpu`] (CUDA backend), [`blocks`] (FutureSDR
//! blocks), [`flowgraph`] (flowgraph files and runs).

#![warn(missing_docs)]

pub mod codes;
pub mod gpu;
pub mod blocks;
pub mod flowgraph;
pub mod ber;
pub mod bench;
pub mod count;
