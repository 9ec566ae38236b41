//! Framing block: an LLR stream into the work units of a block decoder.

use super::stream::{self, Backlog, Relay, Transform};
use super::{FirstError, Reporting};
use crate::codes::Llr;
use crate::codes::conv::{PuncturePattern, TileConfig, Tiler};
use futuresdr::runtime::dev::prelude::*;

/// Name of the `NamedUsize` tag on the first item of the framed stream: LLRs
/// per work unit, so that the decoder can check that it expects the same.
pub const UNIT_LLRS_TAG: &str = "gpufec.unit_llrs";

/// Name of the `NamedUsize` tag on the first item of the last work unit when
/// that unit is padded: how many of its decoded bits are real. The decoder
/// drops the rest, so that no bit is lost or invented at the end of a stream.
pub const VALID_BITS_TAG: &str = "gpufec.valid_bits";

/// How a [`Framer`] cuts its stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Framing {
    /// Overlapping Viterbi work units (v1 / group·f / v2 stages) of a
    /// continuous stream with `n` LLRs per trellis stage ([`Tiler`]).
    Tiles {
        /// Tile geometry and tiles per unit.
        tile: TileConfig,
        /// LLRs per trellis stage (the n of rate 1/n).
        n: usize,
    },
    /// Overlapping Viterbi work units of a stream as the puncturer left it:
    /// each unit holds only the sent LLRs of its stages, for a decoder that
    /// depunctures as it loads ([`Tiler::punctured`]).
    PuncturedTiles {
        /// Tile geometry and tiles per unit; f a multiple of the period.
        tile: TileConfig,
        /// The pattern the stream was punctured with, from its first stage.
        pattern: PuncturePattern,
    },
    /// Consecutive code blocks of a fixed number of LLRs (terminated
    /// convolutional frames, and the block codes).
    Blocks {
        /// LLRs per block.
        llrs: usize,
    },
}

/// Cuts a continuous LLR stream into the work units a decoder takes.
///
/// With [`Framing::Tiles`] the last unit is padded with erasures and carries a
/// [`VALID_BITS_TAG`] saying how many of its bits are real; with
/// [`Framing::Blocks`] a stream that ends inside a block fails the flowgraph,
/// as does a tiled stream that ends inside a trellis stage. The first item
/// carries a [`UNIT_LLRS_TAG`].
///
/// # Stream Inputs
///
/// `input`: LLRs (`f32` or `i8`), n per trellis stage, depunctured; or, with
/// [`Framing::PuncturedTiles`], as the puncturer left them.
///
/// # Stream Outputs
///
/// `output`: whole work units of LLRs (same type), back to back.
///
/// # Usage
/// ```
/// use gpufec::blocks::{Framer, Framing};
/// use gpufec::codes::conv::{TileConfig, Traceback};
///
/// let tile = TileConfig::new(256, 20, 20, Traceback::Serial)?.with_group(64)?;
/// let framer = Framer::<i8>::new(Framing::Tiles { tile, n: 2 })?;
/// # Ok::<(), anyhow::Error>(())
/// ```
#[derive(Block)]
pub struct Framer<T: Llr> {
    cutter: Cutter<T>,
    relay: Relay<T>,
    errors: FirstError,
    #[input]
    input: DefaultCpuReader<T>,
    #[output]
    output: DefaultCpuWriter<T>,
}

struct Cutter<T> {
    kind: Cut<T>,
    unit_llrs: usize,
    announced: bool,
}

enum Cut<T> {
    Tiles(Tiler<T>),
    Blocks { received: u64 },
}

impl<T> Cutter<T> {
    /// Tag the first unit, which starts at `start` if anything was appended.
    fn announce(&mut self, out: &mut Backlog<T>, start: usize) {
        if !self.announced && out.items.len() > start {
            out.tag(start, Tag::NamedUsize(UNIT_LLRS_TAG.to_string(), self.unit_llrs));
            self.announced = true;
        }
    }
}

impl<T: Llr> Transform<T, T> for Cutter<T> {
    fn process(&mut self, input: &[T], out: &mut Backlog<T>) -> anyhow::Result<()> {
        let start = out.items.len();
        match &mut self.kind {
            Cut::Tiles(tiler) => {
                tiler.push(input, &mut out.items);
            }
            Cut::Blocks { received } => {
                out.items.extend_from_slice(input);
                *received += input.len() as u64;
            }
        }
        self.announce(out, start);
        Ok(())
    }

    fn finish(&mut self, out: &mut Backlog<T>) -> anyhow::Result<()> {
        match &mut self.kind {
            Cut::Tiles(tiler) => {
                let start = out.items.len();
                let valid = tiler.finish(&mut out.items)?;
                self.announce(out, start);
                if let Some(valid) = valid {
                    out.tag(out.items.len() - self.unit_llrs, Tag::NamedUsize(VALID_BITS_TAG.to_string(), valid));
                }
            }
            Cut::Blocks { received } => {
                let rem = *received % self.unit_llrs as u64;
                anyhow::ensure!(
                    rem == 0,
                    "the LLR stream ended inside a code block ({rem} of {} LLRs present)",
                    self.unit_llrs
                );
            }
        }
        Ok(())
    }
}

impl<T: Llr> Framer<T> {
    /// Framer cutting units as `framing` says.
    pub fn new(framing: Framing) -> anyhow::Result<Self> {
        let tiles = |tiler: Tiler<T>| (tiler.unit_len(), Cut::Tiles(tiler));
        let (unit_llrs, kind) = match framing {
            Framing::Tiles { tile, n } => {
                anyhow::ensure!(n >= 1, "a trellis stage of 0 LLRs; n must be at least 1");
                tiles(Tiler::new(tile, n))
            }
            Framing::PuncturedTiles { tile, pattern } => tiles(Tiler::punctured(tile, pattern)?),
            Framing::Blocks { llrs } => {
                anyhow::ensure!(llrs >= 1, "a code block of 0 LLRs; the block length must be at least 1");
                (llrs, Cut::Blocks { received: 0 })
            }
        };
        Ok(Self {
            cutter: Cutter { kind, unit_llrs, announced: false },
            relay: Relay::default(),
            errors: FirstError::default(),
            input: DefaultCpuReader::default(),
            output: stream::output(),
        })
    }
}

impl<T: Llr> Reporting for Framer<T> {
    fn first_error(&mut self) -> &mut FirstError {
        &mut self.errors
    }
}

#[doc(hidden)]
impl<T: Llr> Kernel for Framer<T> {
    async fn work(&mut self, io: &mut WorkIo, _mo: &mut MessageOutputs, meta: &mut BlockMeta) -> Result<()> {
        let r = self.relay.work(&mut self.cutter, &mut self.input, &mut self.output, io);
        self.errors.keep(meta, r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::testing::run_through;
    use crate::codes::conv::Traceback;

    #[test]
    fn cuts_the_units_of_the_tiler() {
        let tile = TileConfig::new(16, 4, 6, Traceback::Serial).unwrap().with_group(3).unwrap();
        let llrs: Vec<f32> = (0..2 * 1000).map(|i| i as f32).collect();
        let mut want = Vec::new();
        let mut tiler = Tiler::new(tile, 2);
        tiler.push(&llrs, &mut want);
        assert_eq!(tiler.finish(&mut want).unwrap(), Some(1000 % 48));
        let errors = FirstError::default();
        let got: Vec<f32> =
            run_through(llrs, &errors, |fg| fg.add(Framer::<f32>::new(Framing::Tiles { tile, n: 2 }).unwrap()).into())
                .unwrap();
        assert_eq!(got, want);
    }

    #[test]
    fn blocks_must_be_whole() {
        let errors = FirstError::default();
        let framing = Framing::Blocks { llrs: 100 };
        let got: Vec<i8> =
            run_through(vec![1i8; 500], &errors, |fg| fg.add(Framer::<i8>::new(framing.clone()).unwrap()).into()).unwrap();
        assert_eq!(got.len(), 500);
        let err = run_through::<i8, i8>(vec![1i8; 550], &errors, |fg| {
            fg.add(Framer::<i8>::new(framing).unwrap().report_to(&errors)).into()
        })
        .unwrap_err();
        assert!(err.contains("inside a code block (50 of 100 LLRs present)"), "{err}");
        assert!(Framer::<i8>::new(Framing::Blocks { llrs: 0 }).is_err());
    }
}
