//! Soft demapping block: samples to LLRs.

use super::stream::{self, map_finite};
use super::{FirstError, Reporting};
use crate::codes::channel::{Sample, noise_variance};
use futuresdr::runtime::dev::prelude::*;

/// Turns received BPSK samples y into LLRs 2y/σ² (of the in-phase component
/// of complex samples), with σ² the noise variance per real dimension of the
/// channel at the given Eb/N0 and effective rate.
///
/// A NaN or infinite sample fails the flowgraph.
///
/// # Stream Inputs
///
/// `input`: received samples (`f32` or `Complex32`).
///
/// # Stream Outputs
///
/// `output`: LLRs (`f32`), positive meaning bit 0.
///
/// # Usage
/// ```
/// use gpufec::blocks::LlrDemapper;
/// let demapper = LlrDemapper::<f32>::new(4.0, 0.5)?;
/// assert!((demapper.gain() - 2.0 * 0.5 * 2.0 * 10f32.powf(0.4)).abs() < 1e-5);
/// # Ok::<(), anyhow::Error>(())
/// ```
#[derive(Block)]
#[type_name(LlrDemapper)]
pub struct LlrDemapper<S: Sample> {
    gain: f32,
    position: u64,
    errors: FirstError,
    #[input]
    input: DefaultCpuReader<S>,
    #[output]
    output: DefaultCpuWriter<f32>,
}

impl<S: Sample> LlrDemapper<S> {
    /// Demapper matched to a channel at `ebn0_db` and effective rate `rate`.
    pub fn new(ebn0_db: f64, rate: f64) -> anyhow::Result<Self> {
        Ok(Self {
            gain: (2.0 / noise_variance(ebn0_db, rate)?) as f32,
            position: 0,
            errors: FirstError::default(),
            input: DefaultCpuReader::default(),
            output: stream::output(),
        })
    }

    /// The gain 2/σ².
    pub fn gain(&self) -> f32 {
        self.gain
    }
}

impl<S: Sample> Reporting for LlrDemapper<S> {
    fn first_error(&mut self) -> &mut FirstError {
        &mut self.errors
    }
}

impl<S: Sample> super::Counted for LlrDemapper<S> {
    fn items(&self) -> u64 {
        self.position
    }
}

#[doc(hidden)]
impl<S: Sample> Kernel for LlrDemapper<S> {
    async fn work(&mut self, io: &mut WorkIo, _mo: &mut MessageOutputs, meta: &mut BlockMeta) -> Result<()> {
        let gain = self.gain;
        let r = map_finite(&mut self.input, &mut self.output, io, &mut self.position, |y: S| gain * y.real());
        self.errors.keep(meta, r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::testing::run_through;
    use crate::codes::channel::Awgn;

    #[test]
    fn scales_by_the_channel_llr_gain() {
        let y: Vec<f32> = (0..50_000).map(|i| (i as f32 * 0.37).sin()).collect();
        let errors = FirstError::default();
        let got: Vec<f32> =
            run_through(y.clone(), &errors, |fg| fg.add(LlrDemapper::<f32>::new(3.0, 0.75).unwrap()).into()).unwrap();
        let gain = Awgn::new(3.0, 0.75, 0).unwrap().llr_gain();
        assert_eq!(got, y.iter().map(|&v| gain * v).collect::<Vec<_>>());
    }

    #[test]
    fn a_nan_sample_fails_with_its_position() {
        let mut y = vec![1.0f32; 40_000];
        y[33_333] = f32::NAN;
        let errors = FirstError::default();
        let err = run_through::<f32, f32>(y, &errors, |fg| {
            fg.add(LlrDemapper::<f32>::new(3.0, 0.5).unwrap().report_to(&errors)).into()
        })
        .unwrap_err();
        assert!(err.contains("value 33333 of the stream is NaN"), "{err}");
    }
}
