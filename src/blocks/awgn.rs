//! AWGN channel block.

use super::stream::{self, map_each};
use crate::codes::channel;
use crate::codes::sim::noise_seed;
use futuresdr::runtime::dev::prelude::*;

/// Adds white Gaussian noise for a given Eb/N0 per information bit at the
/// effective code rate R (information bits over channel bits actually sent):
/// σ² = 1 / (2·R·Eb/N0) ([`channel::Awgn`]).
///
/// The noise is drawn from [`noise_seed`]`(seed)`, as in the link simulator,
/// so a flowgraph whose bit source and channel share the seed of a
/// `gpufec ber` run sees the same bits and the same noise, and bits and noise
/// never come from one random sequence.
///
/// # Stream Inputs
///
/// `input`: BPSK symbols (`f32`).
///
/// # Stream Outputs
///
/// `output`: noisy samples (`f32`), one per symbol.
///
/// # Usage
/// ```
/// use gpufec::blocks::Awgn;
/// let ch = Awgn::new(4.0, 0.5, 1)?;
/// # Ok::<(), anyhow::Error>(())
/// ```
#[derive(Block)]
pub struct Awgn {
    channel: channel::Awgn,
    #[input]
    input: DefaultCpuReader<f32>,
    #[output]
    output: DefaultCpuWriter<f32>,
}

impl Awgn {
    /// Noise for `ebn0_db` at effective rate `rate`, drawn from `seed`.
    pub fn new(ebn0_db: f64, rate: f64, seed: u64) -> anyhow::Result<Self> {
        Ok(Self {
            channel: channel::Awgn::new(ebn0_db, rate, noise_seed(seed))?,
            input: DefaultCpuReader::default(),
            output: stream::output(),
        })
    }
}

#[doc(hidden)]
impl Kernel for Awgn {
    async fn work(&mut self, io: &mut WorkIo, _mo: &mut MessageOutputs, _meta: &mut BlockMeta) -> Result<()> {
        let channel = &mut self.channel;
        map_each(&mut self.input, &mut self.output, io, |x, y| {
            y.copy_from_slice(x);
            channel.add_noise(y);
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::FirstError;
    use crate::blocks::testing::run_through;

    #[test]
    fn adds_the_seeded_noise_of_the_link_simulator() {
        let x: Vec<f32> = (0..100_000).map(|i| if i % 2 == 0 { 1.0 } else { -1.0 }).collect();
        let got: Vec<f32> =
            run_through(x.clone(), &FirstError::default(), |fg| fg.add(Awgn::new(2.0, 0.75, 9).unwrap()).into())
                .unwrap();
        let mut want = x;
        channel::Awgn::new(2.0, 0.75, noise_seed(9)).unwrap().add_noise(&mut want);
        assert_eq!(got, want);
        assert!(Awgn::new(f64::NAN, 0.5, 1).is_err());
    }
}
