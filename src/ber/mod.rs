//! BER/FER curves through the direct link simulators of [`codes::sim`]: one
//! point per Eb/N0, for any code family that provides a [`PointSimulator`]
//! (convolutional now; turbo, polar and synchronization codes plug in beside
//! [`ConvSimulator`]).

mod conv;
mod grid;

pub use conv::{ConvOptions, ConvSimulator, LlrChoice};
pub use grid::EbN0Grid;

use crate::codes;
use crate::codes::sim::{BerPoint, StopRule};
use serde_json::{Map, Value, json};

/// Simulates BER points of one code, decoder and channel setup.
pub trait PointSimulator {
    /// The setup, for the JSON output (code, rate, decoder geometry, ...).
    fn parameters(&self) -> Map<String, Value>;

    /// The decoder's backend and resources, with why the GPU is not used when
    /// `auto` fell back to the CPU.
    fn backend(&self) -> String;

    /// One point at `ebn0_db`, with bits and noise from `seed`.
    fn point(&mut self, ebn0_db: f64, stop: StopRule, seed: u64) -> anyhow::Result<BerPoint>;
}

/// A curve: the run's parameters and the points measured so far.
#[derive(Debug, Clone)]
pub struct Curve {
    /// Parameters of the run.
    pub parameters: Map<String, Value>,
    /// Points, in the order run.
    pub points: Vec<BerPoint>,
}

impl Curve {
    /// The JSON object: the parameters, and `points` with `ebn0_db`, `bits`,
    /// `bit_errors`, `frames`, `frame_errors`, `ber`, `fer`, `seconds` each.
    pub fn to_json(&self) -> Value {
        let mut obj = self.parameters.clone();
        let points = self
            .points
            .iter()
            .map(|p| {
                json!({
                    "ebn0_db": p.ebn0_db, "bits": p.bits, "bit_errors": p.bit_errors, "frames": p.frames,
                    "frame_errors": p.frame_errors, "ber": p.ber(), "fer": p.fer(), "seconds": p.seconds,
                })
            })
            .collect();
        obj.insert("points".into(), Value::Array(points));
        Value::Object(obj)
    }
}

/// Run `sim` at every point of `grid`, calling `on_point` with the curve so
/// far after each point.
pub fn run_curve(
    sim: &mut dyn PointSimulator,
    grid: &EbN0Grid,
    stop: StopRule,
    seed: u64,
    mut on_point: impl FnMut(&Curve) -> anyhow::Result<()>,
) -> anyhow::Result<Curve> {
    anyhow::ensure!(stop.max_bits > 0, "--max-bits 0 simulates nothing");
    anyhow::ensure!(stop.max_errors > 0, "--max-errors 0 stops before the first bit");
    let mut parameters = sim.parameters();
    parameters.insert("backend".into(), sim.backend().into());
    parameters.insert("max_bits".into(), stop.max_bits.into());
    parameters.insert("max_errors".into(), stop.max_errors.into());
    parameters.insert("seed".into(), seed.into());
    // Reject an Eb/N0 outside the channel's range before any point runs.
    for &ebn0 in &grid.0 {
        codes::channel::noise_variance(ebn0, 1.0)?;
    }
    let mut curve = Curve { parameters, points: Vec::new() };
    for &ebn0 in &grid.0 {
        curve.points.push(sim.point(ebn0, stop, seed)?);
        on_point(&curve)?;
    }
    Ok(curve)
}
