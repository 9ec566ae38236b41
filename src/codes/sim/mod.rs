//! Direct (no FutureSDR) simulation of error-rate curves for any code family:
//! a family's [`Link`] runs its chain (bits → encoder → channel → cutter →
//! decoder) chunk by chunk, a [`Tally`] counts the errors, and [`run_point`]
//! decides the chunk sizes, stops exactly where the [`StopRule`] says, reports
//! progress and honours a cancel flag (Ctrl-C).

mod point;
mod run;
mod tally;
mod transmit;

pub use point::{Ended, Point, StopRule};
pub use run::{Progress, run_point};
pub use tally::{FrameSummary, Tally, UnitCounts};
pub use transmit::Transmitter;

use crate::codes::error::CodeResult;

/// The seed of the noise that goes with the bits of `seed`: bits and noise
/// drawn from one seed must not come from the same random sequence. The
/// `Awgn` block derives its noise the same way, so that a flowgraph given the
/// seed of a link simulation sees the same noise.
pub fn noise_seed(seed: u64) -> u64 {
    seed ^ 0x9e37_79b9_7f4a_7c15
}

/// Most bits in one chunk of a host chain (see [`Link::chunk_limit`]).
pub const HOST_CHUNK_LIMIT: u64 = 1 << 24;

/// A link's x axis, as curves name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Axis {
    /// The key of its values in JSON (`ebn0_db`).
    pub key: &'static str,
    /// The option that gives its points (`--ebn0`).
    pub flag: &'static str,
    /// How lines name it (`Eb/N0`).
    pub label: &'static str,
    /// Its unit in lines (`dB`; empty for a probability).
    pub unit: &'static str,
}

/// The Eb/N0 axis of the AWGN channel.
pub const EBN0: Axis = Axis { key: "ebn0_db", flag: "--ebn0", label: "Eb/N0", unit: "dB" };

impl Axis {
    /// `Eb/N0   3.00 dB`, or `P 1.00e-3` for a probability (no unit); a
    /// value in dB with as many decimals as it needs (2 to 6): a grid in
    /// steps of 0.001 dB must not print every point as 0.00.
    pub fn at(&self, x: f64) -> String {
        if self.unit.is_empty() {
            return format!("{} {x:.2e}", self.label);
        }
        let d = (2..6).find(|&d| ((x * 10f64.powi(d)).round() / 10f64.powi(d) - x).abs() < 1e-9).unwrap_or(6) as usize;
        format!("{} {x:6.d$} {}", self.label, self.unit)
    }
}

/// A simulated transmission chain of one code family, decoder included.
pub trait Link: Send {
    /// Start a new point at `x` on the family's axis (Eb/N0 in dB, say), with
    /// fresh streams of bits and noise drawn from `seed`.
    fn start(&mut self, x: f64, seed: u64) -> CodeResult<()>;

    /// Whether `x` is a point of the family's axis this link can simulate
    /// (an Eb/N0 the channel takes, say); the error says why not.
    fn check(&self, x: f64) -> CodeResult<()>;

    /// Information bits per counted frame.
    fn frame_bits(&self) -> usize;

    /// Bits per symbol whose errors the tally also counts (a non-binary
    /// code's symbols); 0, the default, counts none.
    fn symbol_bits(&self) -> usize {
        0
    }

    /// Send `bits` more information bits through the chain and count what
    /// comes out in `tally`. With `last`, also flush what the chain holds
    /// back (a tiler's overlap), so that every bit sent is counted.
    fn run(&mut self, bits: u64, last: bool, tally: &mut Tally) -> CodeResult<()>;

    /// One line naming the decoder, its backend and resources.
    fn describe(&self) -> String;

    /// The most bits one [`run`](Self::run) should send: a host chain holds
    /// a few bytes per bit of a chunk; a chain on a GPU holds nothing per
    /// chunk and wants chunks long enough to keep the device busy.
    fn chunk_limit(&self) -> u64 {
        HOST_CHUNK_LIMIT
    }
}
