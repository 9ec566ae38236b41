//! Host-side launcher of the GPU Viterbi decoder.

use crate::codes::conv::{Trellis, ViterbiMode};
use crate::codes::llr::Llr;
use crate::codes::{BatchDecoder, UnitShape};
use std::sync::Arc;

/// LLR types the GPU kernels accept.
pub trait GpuLlr: Llr {}
impl GpuLlr for i8 {}
impl GpuLlr for f32 {}

/// Options of a GPU decoder.
#[derive(Debug, Clone)]
pub struct GpuOptions {
    /// CUDA device index.
    pub device: usize,
    /// Pipeline slots (≥ 2 overlaps copies with compute).
    pub slots: usize,
    /// Work units per batch (0 = chosen from the device size).
    pub batch_units: usize,
}

impl Default for GpuOptions {
    fn default() -> Self {
        Self { device: 0, slots: 2, batch_units: 0 }
    }
}

/// GPU Viterbi decoder, bit-exact with the CPU tiled model.
pub struct GpuViterbi<T: GpuLlr> {
    _t: std::marker::PhantomData<T>,
}

impl<T: GpuLlr> GpuViterbi<T> {
    /// Build the decoder on the device named in `opts`.
    pub fn new(_trellis: Arc<Trellis>, _mode: ViterbiMode, _opts: GpuOptions) -> anyhow::Result<Self> {
        super::available()?;
        anyhow::bail!("GPU Viterbi decoder is not built into this version of gpufec")
    }
}

impl<T: GpuLlr> BatchDecoder<T> for GpuViterbi<T> {
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
