//! Depuncturing block.

use crate::blocks::stream::{self, Backlog, Relay, Transform};
use crate::blocks::{FirstError, Reporting};
use crate::codes::Llr;
use crate::codes::conv::{Depuncturer, PuncturePattern};
use futuresdr::runtime::dev::prelude::*;

/// Puts an erasure (LLR 0) back at every position a [`PuncturePattern`]
/// deleted ([`Depuncturer`]), so that the decoder sees n LLRs per stage.
///
/// A stream that ends inside a trellis stage fails the flowgraph.
///
/// # Stream Inputs
///
/// `input`: LLRs (`f32` or `i8`) of the kept bits.
///
/// # Stream Outputs
///
/// `output`: LLRs (same type), n per trellis stage.
///
/// # Usage
/// ```
/// use gpufec::blocks::Depuncture;
/// use gpufec::codes::conv::PuncturePattern;
///
/// let d = Depuncture::<i8>::new(PuncturePattern::standard("2/3")?, 2)?;
/// # Ok::<(), anyhow::Error>(())
/// ```
#[derive(Block)]
pub struct Depuncture<T: Llr> {
    depuncturer: Depuncturing,
    relay: Relay<T>,
    errors: FirstError,
    #[input]
    input: DefaultCpuReader<T>,
    #[output]
    output: DefaultCpuWriter<T>,
}

struct Depuncturing(Depuncturer);

impl<T: Llr> Transform<T, T> for Depuncturing {
    fn process(&mut self, input: &[T], _tags: &[ItemTag], out: &mut Backlog<T>) -> anyhow::Result<()> {
        self.0.depuncture(input, &mut out.items);
        Ok(())
    }

    fn direct(&mut self, input: &[T], out: &mut [T]) -> anyhow::Result<Option<(usize, usize)>> {
        Ok(stream::copy_if(|n| self.0.pass_through(n), input, out))
    }

    fn finish(&mut self, _out: &mut Backlog<T>) -> anyhow::Result<()> {
        Ok(self.0.finish()?)
    }
}

impl<T: Llr> Depuncture<T> {
    /// Depuncture the stream of a code of `n` outputs punctured with `pattern`
    /// (one row per output), from its first position.
    pub fn new(pattern: PuncturePattern, n: usize) -> anyhow::Result<Self> {
        pattern.check_fits(n)?;
        Ok(Self {
            depuncturer: Depuncturing(Depuncturer::new(pattern)),
            relay: Relay::default(),
            errors: FirstError::default(),
            input: DefaultCpuReader::default(),
            output: stream::output(),
        })
    }
}

impl<T: Llr> Reporting for Depuncture<T> {
    fn first_error(&mut self) -> &mut FirstError {
        &mut self.errors
    }
}

impl<T: Llr> crate::blocks::Counted for Depuncture<T> {
    fn items(&self) -> u64 {
        self.relay.taken()
    }
}

#[doc(hidden)]
impl<T: Llr> Kernel for Depuncture<T> {
    async fn work(&mut self, io: &mut WorkIo, _mo: &mut MessageOutputs, meta: &mut BlockMeta) -> Result<()> {
        let r = self.relay.work(&mut self.depuncturer, &mut self.input, &mut self.output, io);
        self.errors.keep(meta, r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::testing::run_through;
    use crate::codes::conv::Puncturer;

    #[test]
    fn inverts_the_puncturer() {
        let p = PuncturePattern::standard("5/6").unwrap();
        let coded: Vec<i8> = (0..120_000).map(|i| (i % 100 + 1) as i8).collect();
        let mut sent = Vec::new();
        Puncturer::new(p.clone()).puncture(&coded, &mut sent);
        let errors = FirstError::default();
        let got: Vec<i8> =
            run_through(sent, &errors, |fg| fg.add(Depuncture::<i8>::new(p.clone(), 2).unwrap().report_to(&errors)).into())
                .unwrap();
        assert_eq!(got.len(), coded.len());
        for (i, (&g, &c)) in got.iter().zip(&coded).enumerate() {
            assert_eq!(g, if p.keeps(i % 2, i / 2 % p.period()) { c } else { 0 }, "at {i}");
        }
    }

    #[test]
    fn a_stream_ending_inside_a_stage_fails() {
        let errors = FirstError::default();
        let p = PuncturePattern::standard("1/2").unwrap();
        let err = run_through::<f32, f32>(vec![1.0; 3], &errors, |fg| {
            fg.add(Depuncture::<f32>::new(p, 2).unwrap().report_to(&errors)).into()
        })
        .unwrap_err();
        assert!(err.contains("ended inside a stage"), "{err}");
    }
}
