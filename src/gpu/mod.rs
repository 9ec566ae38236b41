//! Layer 2: the GPU backend (cudarc, NVRTC, the pinned stream pipeline and one
//! launcher per code family). The CUDA driver and NVRTC are loaded at run time,
//! so the crate builds and its CPU paths run where no CUDA exists; every GPU
//! entry point then answers with one plain sentence saying why there is no GPU.

mod backend;
mod sources;
mod device;
mod viterbi;

pub use backend::{Backend, viterbi_decoder};
pub use device::{DeviceInfo, available, devices};
pub use sources::{SOURCES, source};
pub use viterbi::{GpuLlr, GpuOptions, GpuViterbi};
