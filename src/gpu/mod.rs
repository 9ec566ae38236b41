//! Layer 2: the GPU backend (cudarc, NVRTC, the pinned stream pipeline and one
//! launcher per code family). The CUDA driver and NVRTC are loaded at run time,
//! so the crate builds and its CPU paths run where no CUDA exists; every GPU
//! entry point then answers with one plain sentence saying why there is no GPU.

mod backend;
mod bench;
mod compile;
mod device;
mod memory;
mod pipeline;
mod sources;
mod stream_copy;
mod viterbi;

pub use backend::{Backend, viterbi_decoder};
pub use bench::{GpuBenchOptions, bench_viterbi};
pub use compile::nvrtc_available;
pub use device::{DeviceInfo, available, devices};
pub use pipeline::BatchSplit;
pub use sources::{SOURCES, source};
pub use viterbi::{DEFAULT_MIN_BLOCKS_GLOBAL_I8, GpuLlr, GpuOptions, GpuViterbi, RingPlace, compile_viterbi_kernel};
