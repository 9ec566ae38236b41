//! AWGN channel block.

use super::stream::{self, map_each};
use crate::codes::channel::{self, Sample};
use crate::codes::sim::noise_seed;
use futuresdr::runtime::dev::prelude::*;

/// Adds white Gaussian noise for a given Eb/N0 per information bit at the
/// effective code rate R (information bits over channel bits actually sent):
/// σ² = 1 / (2·R·Eb/N0) per real dimension ([`channel::Awgn`]), to real
/// samples or to both axes of complex ones.
///
/// The noise is drawn from [`noise_seed`]`(seed)` by stream position, as in
/// the link simulator, so a flowgraph whose bit source and channel share the
/// seed of a `gpufec ber` run sees the same bits and the same noise (real
/// samples; a complex stream's in-phase axis takes every other draw), and
/// bits and noise never come from one random sequence.
///
/// # Stream Inputs
///
/// `input`: BPSK symbols (`f32` or `Complex32`).
///
/// # Stream Outputs
///
/// `output`: noisy samples of the same type, one per symbol.
///
/// # Usage
/// ```
/// use gpufec::blocks::Awgn;
/// let ch = Awgn::<f32>::new(4.0, 0.5, 1)?;
/// # Ok::<(), anyhow::Error>(())
/// ```
#[derive(Block)]
#[type_name(Awgn)]
pub struct Awgn<S: Sample> {
    channel: channel::Awgn,
    taken: u64,
    #[input]
    input: DefaultCpuReader<S>,
    #[output]
    output: DefaultCpuWriter<S>,
}

impl<S: Sample> Awgn<S> {
    /// Noise for `ebn0_db` at effective rate `rate`, drawn from `seed`.
    pub fn new(ebn0_db: f64, rate: f64, seed: u64) -> anyhow::Result<Self> {
        Ok(Self {
            channel: channel::Awgn::new(ebn0_db, rate, noise_seed(seed))?,
            taken: 0,
            input: DefaultCpuReader::default(),
            output: stream::output(),
        })
    }
}

impl<S: Sample> super::Counted for Awgn<S> {
    fn items(&self) -> u64 {
        self.taken
    }
}

#[doc(hidden)]
impl<S: Sample> Kernel for Awgn<S> {
    async fn work(&mut self, io: &mut WorkIo, _mo: &mut MessageOutputs, _meta: &mut BlockMeta) -> Result<()> {
        let channel = &mut self.channel;
        map_each(&mut self.input, &mut self.output, io, &mut self.taken, |x, y| {
            y.copy_from_slice(x);
            channel.add_noise(S::reals_mut(y));
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::FirstError;
    use crate::blocks::testing::run_through;
    use num_complex::Complex32;

    #[test]
    fn adds_the_seeded_noise_of_the_link_simulator() {
        let x: Vec<f32> = (0..100_000).map(|i| if i % 2 == 0 { 1.0 } else { -1.0 }).collect();
        let got: Vec<f32> =
            run_through(x.clone(), &FirstError::default(), |fg| fg.add(Awgn::<f32>::new(2.0, 0.75, 9).unwrap()).into())
                .unwrap();
        let mut want = x;
        channel::Awgn::new(2.0, 0.75, noise_seed(9)).unwrap().add_noise(&mut want);
        assert_eq!(got, want);
        assert!(Awgn::<f32>::new(f64::NAN, 0.5, 1).is_err());
    }

    #[test]
    fn complex_samples_get_noise_on_both_axes() {
        let x = vec![Complex32::new(1.0, 0.0); 50_000];
        let got: Vec<Complex32> =
            run_through(x, &FirstError::default(), |fg| fg.add(Awgn::<Complex32>::new(0.0, 0.5, 3).unwrap()).into()).unwrap();
        // σ² = 1 per axis at 0 dB and rate 1/2.
        let var = |f: &dyn Fn(&Complex32) -> f64| got.iter().map(|c| f(c).powi(2)).sum::<f64>() / got.len() as f64;
        let (vi, vq) = (var(&|c| c.re as f64 - 1.0), var(&|c| c.im as f64));
        assert!((vi - 1.0).abs() < 0.03 && (vq - 1.0).abs() < 0.03, "{vi} {vq}");
    }
}
