//! Puncturing block.

use crate::blocks::stream::{self, Backlog, Relay, Transform};
use crate::codes::conv::{PuncturePattern, Puncturer};
use futuresdr::runtime::dev::prelude::*;

/// Deletes the coded bits a [`PuncturePattern`] does not keep ([`Puncturer`]).
///
/// # Stream Inputs
///
/// `input`: coded bits (`u8`), n per trellis stage, the pattern's period repeating.
///
/// # Stream Outputs
///
/// `output`: the kept bits (`u8`), in order.
///
/// # Usage
/// ```
/// use gpufec::blocks::Puncture;
/// use gpufec::codes::conv::PuncturePattern;
///
/// let p = Puncture::new(PuncturePattern::standard("3/4")?, 2)?;
/// assert!(Puncture::new(PuncturePattern::parse("110,101,011")?, 2).is_err());
/// # Ok::<(), anyhow::Error>(())
/// ```
#[derive(Block)]
pub struct Puncture {
    puncturer: Puncturing,
    relay: Relay<u8>,
    #[input]
    input: DefaultCpuReader<u8>,
    #[output]
    output: DefaultCpuWriter<u8>,
}

struct Puncturing(Puncturer);

impl Transform<u8, u8> for Puncturing {
    fn process(&mut self, input: &[u8], _tags: &[ItemTag], out: &mut Backlog<u8>) -> anyhow::Result<()> {
        self.0.puncture(input, &mut out.items);
        Ok(())
    }

    fn direct(&mut self, input: &[u8], out: &mut [u8]) -> anyhow::Result<Option<(usize, usize)>> {
        Ok(stream::copy_if(|n| self.0.pass_through(n), input, out))
    }
}

impl Puncture {
    /// Puncture the output of a code of `n` outputs with `pattern` (one row
    /// per output), starting at its first position.
    pub fn new(pattern: PuncturePattern, n: usize) -> anyhow::Result<Self> {
        pattern.check_fits(n)?;
        Ok(Self {
            puncturer: Puncturing(Puncturer::new(pattern)),
            relay: Relay::default(),
            input: DefaultCpuReader::default(),
            output: stream::output(),
        })
    }
}

impl crate::blocks::Counted for Puncture {
    fn items(&self) -> u64 {
        self.relay.taken()
    }
}

#[doc(hidden)]
impl Kernel for Puncture {
    async fn work(&mut self, io: &mut WorkIo, _mo: &mut MessageOutputs, _meta: &mut BlockMeta) -> Result<()> {
        self.relay.work(&mut self.puncturer, &mut self.input, &mut self.output, io)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::FirstError;
    use crate::blocks::testing::run_through;

    #[test]
    fn keeps_the_pattern_positions() {
        let p = PuncturePattern::standard("3/4").unwrap();
        let coded: Vec<u8> = (0..300_000u32).map(|i| (i % 7 % 2) as u8).collect();
        let mut want = Vec::new();
        Puncturer::new(p.clone()).puncture(&coded, &mut want);
        let got: Vec<u8> = run_through(coded, &FirstError::default(), |fg| fg.add(Puncture::new(p, 2).unwrap()).into()).unwrap();
        assert_eq!(got, want);
        assert_eq!(got.len(), 200_000);
    }
}
