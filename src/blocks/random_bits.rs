//! Seeded random information bits.

use crate::codes::bits::BitSource;
use super::stream;
use futuresdr::runtime::dev::prelude::*;

/// Random information bits from a seed, endless or a given number.
///
/// The bits are those of [`BitSource`], the source of the link simulator
/// (`codes::sim`), so the same seed gives the same bits in both.
///
/// # Stream Inputs
///
/// None.
///
/// # Stream Outputs
///
/// `output`: unpacked bits (`u8` 0/1); after `total` bits, if given, the block finishes.
///
/// # Usage
/// ```
/// use futuresdr::blocks::VectorSink;
/// use futuresdr::prelude::*;
/// use gpufec::blocks::{RandomBits, runtime};
///
/// let mut fg = Flowgraph::new();
/// let snk = fg.add(VectorSink::<u8>::new(1000)); // readers first: see the module docs
/// let src = fg.add(RandomBits::new(7, Some(1000)));
/// fg.stream(&src, |b| b.output(), &snk, |b| b.input())?;
/// let fg = runtime().run(fg)?;
/// assert_eq!(snk.get(&fg)?.items().len(), 1000);
/// # Ok::<(), anyhow::Error>(())
/// ```
#[derive(Block)]
pub struct RandomBits {
    source: BitSource,
    left: Option<u64>,
    emitted: u64,
    #[output]
    output: DefaultCpuWriter<u8>,
}

impl RandomBits {
    /// Bits drawn from `seed`; `total` bits and then finish, or endless with `None`.
    pub fn new(seed: u64, total: Option<u64>) -> Self {
        Self { source: BitSource::new(seed), left: total, emitted: 0, output: stream::output() }
    }
}

impl super::Counted for RandomBits {
    fn items(&self) -> u64 {
        self.emitted
    }
}

#[doc(hidden)]
impl Kernel for RandomBits {
    async fn work(&mut self, io: &mut WorkIo, _mo: &mut MessageOutputs, _meta: &mut BlockMeta) -> Result<()> {
        let o = self.output.slice();
        let n = self.left.map_or(o.len(), |left| o.len().min(left.try_into().unwrap_or(usize::MAX)));
        self.source.fill(&mut o[..n]);
        self.output.produce(n);
        self.emitted += n as u64;
        if let Some(left) = &mut self.left {
            *left -= n as u64;
            io.finished = *left == 0;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::testing::collect_from;

    #[test]
    fn emits_the_seeded_bits_and_stops() {
        let bits: Vec<u8> = collect_from(|fg| fg.add(RandomBits::new(3, Some(100_001))).into());
        let mut want = vec![0u8; 100_001];
        BitSource::new(3).fill(&mut want);
        assert_eq!(bits, want);
        let none: Vec<u8> = collect_from(|fg| fg.add(RandomBits::new(3, Some(0))).into());
        assert!(none.is_empty());
    }
}
