//! Choosing the backend of a decoder: the CPU reference or the GPU launcher,
//! behind the one [`BatchDecoder`] trait.

use super::viterbi::{GpuLlr, GpuOptions, GpuViterbi};
use crate::codes::BatchDecoder;
use crate::codes::conv::{CpuViterbi, DepuncturedUnits, PuncturePattern, Trellis, ViterbiMode};
use std::sync::Arc;

/// Where a decoder runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Backend {
    /// The GPU when one is usable, otherwise the CPU.
    #[default]
    Auto,
    /// The CPU reference decoder on all cores.
    Cpu,
    /// The GPU; an error when none is usable.
    Gpu,
}

impl std::str::FromStr for Backend {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> anyhow::Result<Self> {
        match s.trim() {
            "auto" => Ok(Backend::Auto),
            "cpu" => Ok(Backend::Cpu),
            "gpu" => Ok(Backend::Gpu),
            other => anyhow::bail!("backend '{other}' is not one of auto, cpu, gpu"),
        }
    }
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Backend::Auto => "auto",
            Backend::Cpu => "cpu",
            Backend::Gpu => "gpu",
        })
    }
}

/// A Viterbi decoder on `backend`. With [`Backend::Auto`] the GPU is tried
/// first; when it is unusable the CPU decoder is returned together with the
/// reason, so that the caller can say why it runs on the CPU.
///
/// With `punctured`, the decoder takes the units of a punctured
/// [`crate::codes::conv::Tiler`] and puts the erasures back itself: the GPU
/// kernel as it loads, the CPU through [`DepuncturedUnits`].
///
/// # Example
/// ```
/// use gpufec::codes::conv::{ConvCode, FrameConfig, Trellis, ViterbiMode};
/// use gpufec::gpu::{Backend, GpuOptions, viterbi_decoder};
/// use std::sync::Arc;
/// let t = Arc::new(Trellis::new(&ConvCode::k7_171_133()));
/// let mode = ViterbiMode::Frame(FrameConfig::new(100, true).unwrap());
/// let (dec, _why_not_gpu) = viterbi_decoder::<f32>(t, mode, None, Backend::Cpu, 0, &GpuOptions::default()).unwrap();
/// assert!(dec.describe().starts_with("cpu"));
/// ```
pub fn viterbi_decoder<T: GpuLlr>(
    trellis: Arc<Trellis>,
    mode: ViterbiMode,
    punctured: Option<&PuncturePattern>,
    backend: Backend,
    cpu_threads: usize,
    gpu: &GpuOptions,
) -> anyhow::Result<(Box<dyn BatchDecoder<T>>, Option<String>)> {
    let tile = match (mode, punctured) {
        (ViterbiMode::Frame(_), Some(_)) => {
            anyhow::bail!("terminated frames take depunctured LLRs; put a Depuncture block before the decoder")
        }
        (ViterbiMode::Tiled(tile), _) => Some(tile),
        (ViterbiMode::Frame(_), None) => None,
    };
    let cpu = |trellis| -> anyhow::Result<Box<dyn BatchDecoder<T>>> {
        let plain = Box::new(CpuViterbi::<T>::new(trellis, mode, cpu_threads)?);
        Ok(match (tile, punctured) {
            (Some(tile), Some(p)) => Box::new(DepuncturedUnits::new(plain, tile, p.clone())?),
            _ => plain,
        })
    };
    let gpu_decoder = |trellis| GpuViterbi::<T>::with_input(trellis, mode, punctured, gpu.clone());
    match backend {
        Backend::Cpu => Ok((cpu(trellis)?, None)),
        Backend::Gpu => Ok((Box::new(gpu_decoder(trellis)?), None)),
        Backend::Auto => match gpu_decoder(trellis.clone()) {
            Ok(d) => Ok((Box::new(d), None)),
            Err(e) => Ok((cpu(trellis)?, Some(format!("{e:#}")))),
        },
    }
}
