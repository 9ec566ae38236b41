//! The CPU polar decoders: belief propagation (the `f32` reference and the
//! `i8` model of the GPU decoder), successive cancellation and CRC-aided
//! successive-cancellation list decoding, behind one [`BatchDecoder`]
//! ([`CpuPolar`]) that runs them on all cores.
//!
//! [`BatchDecoder`]: crate::codes::decode::BatchDecoder

mod bp;
mod cpu;
mod minsum;
mod plan;
mod sc;
mod scl;

pub use bp::EarlyStop;
pub use cpu::{CpuPolar, DEFAULT_BATCH_CODEWORDS};

use crate::codes::channel::Quantizer;
use crate::codes::error::{CodeResult, invalid};
use crate::codes::polar::spec::PolarSpec;

/// The longest list of the list decoder.
pub const MAX_LIST: usize = 32;
/// The most BP iterations asked for.
pub const MAX_ITERATIONS: u32 = 1000;
/// The scaling of min-sum BP in the seed paper (and Yuan and Parhi's): 15/16.
pub const BP_ALPHA: f32 = 0.9375;

/// The scale at which the `i8` BP model (CPU and GPU) quantizes `f32`
/// LLRs: round(4·llr), 8σ² for σ² = 1/2 (min-sum does not depend on the
/// scale but for rounding and saturation; 8σ² decoded better than the
/// channel's matched 16σ² in the study). For a scale matched to the
/// channel, quantize there and hand the decoder `i8` LLRs.
pub const I8_MODEL_F32_SCALE: f32 = 4.0;

/// The quantizer of `f32` LLRs into the `i8` BP model.
pub fn i8_model_f32_quantizer() -> Quantizer {
    Quantizer::new(I8_MODEL_F32_SCALE).unwrap_or_else(|_| unreachable!("a finite positive constant"))
}

/// The number type of BP's messages.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BpPrecision {
    /// `f32` messages with min-sum scaled by `alpha` (0 < α ≤ 1).
    F32 {
        /// The scaling of every check-node output.
        alpha: f32,
    },
    /// The `i8` model of the GPU decoder (α = 15/16, fixed); `f32` LLRs
    /// are quantized first ([`I8_MODEL_F32_SCALE`]).
    I8,
}

/// How BP runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BpConfig {
    /// Imax: iterations at most (1..=[`MAX_ITERATIONS`]).
    pub iterations: u32,
    /// When it may stop sooner.
    pub early_stop: EarlyStop,
    /// Its arithmetic.
    pub precision: BpPrecision,
}

impl Default for BpConfig {
    /// The seed paper's: Imax = 40, the G-matrix stop, `f32` with α = 0.9375.
    fn default() -> Self {
        Self { iterations: 40, early_stop: EarlyStop::GMatrix, precision: BpPrecision::F32 { alpha: BP_ALPHA } }
    }
}

/// Which decoder.
///
/// # Example
/// ```
/// use gpufec::codes::polar::Algorithm;
/// assert_eq!("scl:8".parse::<Algorithm>().unwrap(), Algorithm::Scl { list: 8 });
/// assert_eq!("sc".parse::<Algorithm>().unwrap(), Algorithm::Sc);
/// assert!("scl:0".parse::<Algorithm>().is_err());
/// assert!("scl:1000000000".parse::<Algorithm>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Algorithm {
    /// Successive cancellation.
    Sc,
    /// Successive-cancellation list decoding with `list` paths (1..=[`MAX_LIST`]),
    /// choosing the best path that passes the CRC when the code has one.
    Scl {
        /// L.
        list: usize,
    },
    /// Belief propagation.
    Bp(BpConfig),
}

impl Algorithm {
    /// Check the algorithm's parameters, and that it can decode `spec`.
    pub fn validate(&self, spec: &PolarSpec) -> CodeResult<()> {
        match *self {
            Algorithm::Sc => Ok(()),
            Algorithm::Scl { list } if (1..=MAX_LIST).contains(&list) => Ok(()),
            Algorithm::Scl { list } => Err(invalid!("a list of {list} paths: the list decoder keeps 1..={MAX_LIST}")),
            Algorithm::Bp(cfg) => {
                if !(1..=MAX_ITERATIONS).contains(&cfg.iterations) {
                    return Err(invalid!("{} BP iterations: give 1..={MAX_ITERATIONS}", cfg.iterations));
                }
                if cfg.early_stop == EarlyStop::Crc && spec.check().is_none() {
                    return Err(invalid!("BP's CRC stop needs a code that carries a CRC"));
                }
                match cfg.precision {
                    BpPrecision::F32 { alpha } if !(alpha > 0.0 && alpha <= 1.0) => Err(invalid!("BP scaling α = {alpha}: give 0 < α ≤ 1")),
                    _ => Ok(()),
                }
            }
        }
    }

    /// e.g. `SCL L=8`, `BP f32 α=0.9375 Imax=40 stop=g`.
    pub fn describe(&self) -> String {
        match self {
            Algorithm::Sc => "SC".into(),
            Algorithm::Scl { list } => format!("SCL L={list}"),
            Algorithm::Bp(c) => {
                let p = match c.precision {
                    BpPrecision::F32 { alpha } => format!("f32 α={alpha}"),
                    BpPrecision::I8 => "i8 model".into(),
                };
                format!("BP {p} Imax={} stop={}", c.iterations, c.early_stop.name())
            }
        }
    }
}

impl std::str::FromStr for Algorithm {
    type Err = crate::codes::error::CodeError;

    /// `sc`, `scl:L` or `bp` (the default [`BpConfig`]).
    fn from_str(s: &str) -> CodeResult<Self> {
        let s = s.trim();
        match s {
            "sc" => return Ok(Algorithm::Sc),
            "bp" => return Ok(Algorithm::Bp(BpConfig::default())),
            _ => {}
        }
        let list = s.strip_prefix("scl:").and_then(|l| l.trim().parse::<usize>().ok()).ok_or_else(|| invalid!("algorithm '{s}': give bp, sc or scl:L"))?;
        if !(1..=MAX_LIST).contains(&list) {
            return Err(invalid!("algorithm '{s}': the list decoder keeps 1..={MAX_LIST} paths"));
        }
        Ok(Algorithm::Scl { list })
    }
}

#[cfg(test)]
mod tests;
