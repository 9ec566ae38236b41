//! Framing block: a stream into the work units of a block decoder.

use super::stream::{self, Backlog, Relay, Transform};
use super::unit_tags::{UNIT_FORMAT_TAG, UNIT_LLRS_TAG, VALID_BITS_TAG, split_tags};
use super::{FirstError, Reporting};
use crate::codes::framing::{Cut, Cutter};
use futuresdr::runtime::dev::prelude::*;
use std::collections::VecDeque;

/// Cuts a stream into the work units a decoder takes, with any family's
/// [`Cutter`] (Viterbi tiles, code blocks of fixed or marked lengths), on its
/// own thread, and emits them back to back for a decoder block
/// ([`super::ViterbiDecoder`], ...).
///
/// Units carry their framing as tags: a [`UNIT_LLRS_TAG`] (and
/// [`UNIT_FORMAT_TAG`] when not 0) on the first unit and wherever the length
/// changes, and a [`VALID_BITS_TAG`] on a padded last unit. Tags of the input
/// go to the first item of the unit whose own items they were on. A stream
/// that ends inside a unit fails the flowgraph with the cutter's message.
///
/// A cutter that must learn from the decoder where a unit ended cannot run
/// here; give it to the decoder block.
///
/// # Stream Inputs
///
/// `input`: the stream to cut (LLRs, or other received symbols).
///
/// # Stream Outputs
///
/// `output`: whole work units, back to back.
///
/// # Usage
/// ```
/// use gpufec::blocks::Framer;
/// use gpufec::codes::framing::BlockCutter;
///
/// // LTE turbo code blocks of K = 6144: 3K + 12 LLRs each.
/// let framer = Framer::<i8>::new(Box::new(BlockCutter::fixed(18444)?))?;
/// # Ok::<(), anyhow::Error>(())
/// ```
#[derive(Block)]
pub struct Framer<T: CpuSample + Copy> {
    cutting: Cutting<T>,
    relay: Relay<T>,
    errors: FirstError,
    #[input]
    input: DefaultCpuReader<T>,
    #[output]
    output: DefaultCpuWriter<T>,
}

struct Cutting<T> {
    cutter: Box<dyn Cutter<T>>,
    cut: Cut<T>,
    /// Length and format last announced by a tag.
    announced: Option<(usize, u16)>,
    /// Input tags at stream positions, waiting for their unit.
    tags: VecDeque<(u64, Tag)>,
    taken: u64,
}

impl<T: CpuSample + Copy> Cutting<T> {
    /// Move the units cut so far to `out`, with their tags.
    fn emit(&mut self, out: &mut Backlog<T>) {
        let base = out.items.len();
        if base == 0 {
            // The usual case (the relay hands over an empty backlog): no copy.
            std::mem::swap(&mut out.items, &mut self.cut.items);
        } else {
            out.items.extend_from_slice(&self.cut.items);
        }
        for u in &self.cut.units {
            let at = base + u.span.start;
            if self.announced != Some((u.span.len, u.span.format)) {
                out.tag(at, Tag::NamedUsize(UNIT_LLRS_TAG.to_string(), u.span.len));
                if u.span.format != 0 || self.announced.is_some_and(|(_, f)| f != 0) {
                    out.tag(at, Tag::NamedUsize(UNIT_FORMAT_TAG.to_string(), u.span.format as usize));
                }
                self.announced = Some((u.span.len, u.span.format));
            }
            if let Some(v) = u.valid_bits {
                out.tag(at, Tag::NamedUsize(VALID_BITS_TAG.to_string(), v));
            }
            let end = u.origin + u.own.unwrap_or(u.span.len) as u64;
            while self.tags.front().is_some_and(|(pos, _)| *pos < end) {
                if let Some((_, tag)) = self.tags.pop_front() {
                    out.tag(at, tag);
                }
            }
        }
        self.cut.clear();
    }
}

impl<T: CpuSample + Copy> Transform<T, T> for Cutting<T> {
    fn process(&mut self, input: &[T], tags: &[ItemTag], out: &mut Backlog<T>) -> anyhow::Result<()> {
        let (marks, passing) = split_tags(tags, input.len());
        self.tags.extend(passing.into_iter().map(|(i, t)| (self.taken + i as u64, t)));
        self.cutter.cut(input, &marks, &mut self.cut)?;
        self.taken += input.len() as u64;
        self.emit(out);
        Ok(())
    }

    fn finish(&mut self, out: &mut Backlog<T>) -> anyhow::Result<()> {
        self.cutter.end(&mut self.cut)?;
        self.emit(out);
        // Tags past the last unit stay with the stream's last item.
        if let Some(last) = out.items.len().checked_sub(1) {
            for (_, tag) in self.tags.drain(..) {
                out.tag(last, tag);
            }
        }
        Ok(())
    }
}

impl<T: CpuSample + Copy> Framer<T> {
    /// Framer cutting with `cutter`.
    pub fn new(cutter: Box<dyn Cutter<T>>) -> anyhow::Result<Self> {
        anyhow::ensure!(
            !cutter.learns(),
            "a cutter that learns from the decoder where each unit ended ({}) cannot run in a framer: let the decoder block cut its input",
            cutter.describe()
        );
        Ok(Self {
            cutting: Cutting { cutter, cut: Cut::default(), announced: None, tags: VecDeque::new(), taken: 0 },
            relay: Relay::default(),
            errors: FirstError::default(),
            input: DefaultCpuReader::default(),
            output: stream::output(),
        })
    }
}

impl<T: CpuSample + Copy> Reporting for Framer<T> {
    fn first_error(&mut self) -> &mut FirstError {
        &mut self.errors
    }
}

impl<T: CpuSample + Copy> super::Counted for Framer<T> {
    fn items(&self) -> u64 {
        self.relay.taken()
    }
}

#[doc(hidden)]
impl<T: CpuSample + Copy> Kernel for Framer<T> {
    async fn work(&mut self, io: &mut WorkIo, _mo: &mut MessageOutputs, meta: &mut BlockMeta) -> Result<()> {
        let r = self.relay.work(&mut self.cutting, &mut self.input, &mut self.output, io);
        self.errors.keep(meta, r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::testing::run_through;
    use crate::codes::framing::BlockCutter;

    #[test]
    fn blocks_must_be_whole() {
        let errors = FirstError::default();
        let blocks = || Box::new(BlockCutter::fixed(100).unwrap());
        let got: Vec<i8> = run_through(vec![1i8; 500], &errors, |fg| fg.add(Framer::<i8>::new(blocks()).unwrap()).into()).unwrap();
        assert_eq!(got.len(), 500);
        let err = run_through::<i8, i8>(vec![1i8; 550], &errors, |fg| {
            fg.add(Framer::<i8>::new(blocks()).unwrap().report_to(&errors)).into()
        })
        .unwrap_err();
        assert!(err.contains("inside a code block (50 of 100 LLRs present)"), "{err}");
        assert!(BlockCutter::<i8>::fixed(0).is_err());
    }

    #[test]
    fn a_cutter_that_learns_is_refused() {
        let e = Framer::<u8>::new(Box::new(crate::codes::framing::WindowCutter::new(10).unwrap())).err().unwrap();
        assert!(e.to_string().contains("let the decoder block cut its input"), "{e}");
    }
}
