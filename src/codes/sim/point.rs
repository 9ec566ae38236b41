//! One point of an error-rate curve, and when it stops.

use crate::codes::error::{CodeError, invalid};

/// When a point stops: at the first frame boundary after either limit is
/// reached, never later.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StopRule {
    /// Information bits to count at most (the last frame may be cut short).
    pub max_bits: u64,
    /// Bit errors after which the point ends with the frame they fell in.
    pub max_errors: u64,
}

impl StopRule {
    /// Check that the rule can stop after counting something; an error names
    /// the limit at fault (`max_bits`, `max_errors`).
    pub fn validate(&self) -> Result<(), (&'static str, CodeError)> {
        if self.max_bits == 0 {
            return Err(("max_bits", invalid!("a point of at most 0 bits simulates nothing")));
        }
        if self.max_errors == 0 {
            return Err(("max_errors", invalid!("a point that stops at 0 errors stops before the first bit")));
        }
        Ok(())
    }
}

/// Why a point ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Ended {
    /// Still running.
    #[default]
    No,
    /// `max_bits` were counted.
    MaxBits,
    /// `max_errors` were reached (with the frame they fell in).
    MaxErrors,
    /// The user interrupted it; the counts are what it had.
    Interrupted,
}

impl Ended {
    /// How reports name it.
    pub fn name(self) -> &'static str {
        match self {
            Ended::No => "running",
            Ended::MaxBits => "max_bits",
            Ended::MaxErrors => "max_errors",
            Ended::Interrupted => "interrupted",
        }
    }
}

/// The counts of one point of an error-rate curve.
///
/// `x` is the point's place on the curve's axis (Eb/N0 in dB, or an
/// insertion/deletion probability); which axis is the curve's business.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Point {
    /// Value on the curve's axis.
    pub x: f64,
    /// Information bits compared.
    pub bits: u64,
    /// Of which in error.
    pub bit_errors: u64,
    /// Frames compared.
    pub frames: u64,
    /// Frames with at least one bit error.
    pub frame_errors: u64,
    /// Bits of a last frame cut short (by `max_bits`, an interruption or
    /// the stream's end): counted in `bits`, never as a frame.
    pub partial_bits: u64,
    /// Frames in error that the decoder's own check flagged (a failed CRC):
    /// errors a receiver knows of. The rest are undetected.
    pub detected: u64,
    /// Code blocks whose iterations were counted (a transport block's each).
    pub units: u64,
    /// Decoder iterations over those units.
    pub iterations: u64,
    /// Symbols compared, for codes over larger alphabets (0 when not counted).
    pub symbols: u64,
    /// Of which in error.
    pub symbol_errors: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Why it ended.
    pub ended: Ended,
}

/// `num / den`, or NaN when nothing was counted: a rate of nothing is no result.
fn rate(num: u64, den: u64) -> f64 {
    if den == 0 { f64::NAN } else { num as f64 / den as f64 }
}

impl Point {
    /// Bit error rate; NaN when no bit was compared.
    pub fn ber(&self) -> f64 {
        rate(self.bit_errors, self.bits)
    }

    /// Frame error rate; NaN when no frame was compared.
    pub fn fer(&self) -> f64 {
        rate(self.frame_errors, self.frames)
    }

    /// Symbol error rate; NaN when symbols were not counted.
    pub fn ser(&self) -> f64 {
        rate(self.symbol_errors, self.symbols)
    }

    /// Frames in error that the decoder's check passed.
    pub fn undetected(&self) -> u64 {
        self.frame_errors - self.detected
    }

    /// Mean decoder iterations per unit; NaN for a decoder that does not
    /// iterate (it reports 0 iterations).
    pub fn mean_iterations(&self) -> f64 {
        if self.iterations == 0 { f64::NAN } else { rate(self.iterations, self.units) }
    }
}
