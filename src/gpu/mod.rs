//! Layer 2: the GPU backend (cudarc, NVRTC, the pinned stream pipeline and one
//! launcher per code family). The CUDA driver and NVRTC are loaded at run time,
//! so the crate builds and its CPU paths run where no CUDA exists; every GPU
//! entry point then answers with one plain sentence saying why there is no GPU.
//!
//! What every family shares: [`select`] (the one choice between GPU and CPU,
//! with the reason), [`PipelineOptions`] and the pipeline with its per-slot
//! buffers, the process's host thread pool, run-time compilation with a disk
//! cache, and the benchmarks of [`mod@bench`]. What a family adds: its launcher
//! module (`conv`, `turbo`, `polar`, `sync`).

mod backend;
mod channel;
pub mod bench;
mod compile;
mod device;
mod fault;
mod host_pool;
mod kernel_cache;
mod link;
mod memory;
mod multi;
mod pipeline;
mod registered;
mod selftest;
mod sources;
mod staging;
mod stream_copy;
mod turbo;
mod conv;
mod sync;
mod polar;

pub use backend::{Backend, BackendOptions, Choice, select};
pub use channel::GpuBpskAwgn;
pub use compile::nvrtc_available;
pub use kernel_cache::kernel_cache_status;
pub use link::device_normals;
pub use multi::{DeviceList, MAX_GPU_DEVICES, MultiDevice};
pub use device::{DeviceInfo, available, devices};
pub use fault::{FAULT_VARIABLE, Fault};
pub use host_pool::{MAX_HOST_THREADS, default_host_threads};
pub use pipeline::{BatchSplit, DEFAULT_SLOTS, MAX_BATCH_BYTES, MAX_SLOTS, MAX_WATCHDOG_MS, PipelineOptions};
pub use selftest::pipeline_selftest;
pub use sources::{SOURCES, source};
pub use polar::{DevicePolarLink, GPU_MAX_N, GpuPolar, bench_polar, compile_polar_kernel, compile_polar_link_kernel, polar_decoder};
pub use turbo::{DeviceTurboLink, GpuTurbo, compile_turbo_link_kernel, GpuTurboOptions, MAX_RATE_MATCHINGS, TurboTuning, bench_turbo, compile_turbo_kernel, turbo_decoder};
pub use conv::{
    BENCH_EBN0_DB, DEFAULT_MIN_BLOCKS_GLOBAL_I8, DeviceConvLink, GpuBenchOptions, compile_conv_link_kernels, GpuViterbi, SurvivorMemory, ViterbiTuning, bench_viterbi,
    compile_viterbi_kernel, viterbi_decoder,
};
pub use sync::{DeviceSyncLink, GpuSync, bench_sync, compile_sync_kernel, compile_sync_link_kernels, sync_decoder};
