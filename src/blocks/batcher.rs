//! Feeds a [`BatchDecoder`] from a stream of work units: the engine of every
//! decoder block, whatever the code family and backend.

use super::framer::{UNIT_LLRS_TAG, VALID_BITS_TAG};
use crate::codes::{BatchDecoder, Llr, UnitShape};
use anyhow::Context;
use futuresdr::runtime::dev::prelude::*;
use std::collections::VecDeque;

/// Gathers whole work units into batches of up to `batch_units()`, keeps up to
/// `depth()` batches in flight before collecting the oldest (so that a GPU
/// copies one batch while it computes another), emits the bits in order and
/// drains at the end of the stream.
///
/// A batch is submitted when it is full, or at the end of the stream with
/// whatever whole units remain. Tags from the framer are honoured: the unit
/// length is checked, and the padding bits of a last unit are dropped.
pub(crate) struct Batcher<T: Llr> {
    decoder: Box<dyn BatchDecoder<T>>,
    unit: UnitShape,
    batch_units: usize,
    /// Per batch in flight: the padded unit it holds, if any, as
    /// (unit index in the batch, valid bits of that unit).
    padded: VecDeque<Option<(usize, usize)>>,
    /// Decoded bits not yet written, from `sent` on.
    bits: Vec<u8>,
    sent: usize,
    /// LLRs taken from the stream so far.
    position: u64,
}

impl<T: Llr> Batcher<T> {
    pub fn new(decoder: Box<dyn BatchDecoder<T>>) -> Self {
        let unit = decoder.unit();
        let batch_units = decoder.batch_units().max(1);
        Self { decoder, unit, batch_units, padded: VecDeque::new(), bits: Vec::new(), sent: 0, position: 0 }
    }

    /// Input items a full batch needs; the input buffer must hold at least this many.
    pub fn batch_llrs(&self) -> usize {
        self.batch_units * self.unit.llrs_in
    }

    /// The decoder's one-line description.
    pub fn describe(&self) -> String {
        self.decoder.describe()
    }

    /// One `work` call of the decoder block.
    pub fn work(
        &mut self,
        input: &mut DefaultCpuReader<T>,
        output: &mut DefaultCpuWriter<u8>,
        io: &mut WorkIo,
    ) -> anyhow::Result<()> {
        loop {
            self.drain(output);
            if self.submit(input)? {
                continue;
            }
            let in_flight = self.decoder.in_flight();
            if self.sent == self.bits.len() && in_flight > 0 && (in_flight >= self.decoder.depth() || input.finished())
            {
                self.collect()?;
                continue;
            }
            if input.finished() && in_flight == 0 && self.sent == self.bits.len() {
                let rest = input.slice().len();
                anyhow::ensure!(
                    rest == 0,
                    "the LLR stream ended inside a work unit ({rest} of {} LLRs present)",
                    self.unit.llrs_in
                );
                io.finished = true;
            }
            return Ok(());
        }
    }

    /// Submit the next batch if one is ready and the decoder takes it.
    fn submit(&mut self, input: &mut DefaultCpuReader<T>) -> anyhow::Result<bool> {
        if self.decoder.in_flight() >= self.decoder.depth() {
            return Ok(false);
        }
        let finished = input.finished();
        let (llrs, tags) = input.slice_with_tags();
        let whole = llrs.len() / self.unit.llrs_in;
        let units = if whole >= self.batch_units {
            self.batch_units
        } else if finished {
            whole
        } else {
            0
        };
        if units == 0 {
            return Ok(false);
        }
        let n = units * self.unit.llrs_in;
        let mut padded = None;
        for t in tags.iter().filter(|t| t.index < n) {
            match &t.tag {
                Tag::NamedUsize(name, len) if name == UNIT_LLRS_TAG => anyhow::ensure!(
                    *len == self.unit.llrs_in,
                    "the framer cuts units of {len} LLRs but the decoder takes units of {}: give both the same geometry",
                    self.unit.llrs_in
                ),
                Tag::NamedUsize(name, valid) if name == VALID_BITS_TAG => {
                    anyhow::ensure!(
                        t.index % self.unit.llrs_in == 0 && *valid <= self.unit.bits_out,
                        "a '{VALID_BITS_TAG}' tag of {valid} bits at LLR {} does not mark a unit",
                        t.index
                    );
                    padded = Some((t.index / self.unit.llrs_in, *valid));
                }
                _ => {}
            }
        }
        let at = self.position;
        self.decoder
            .submit(&llrs[..n])
            .with_context(|| format!("decoding LLRs {at}..{} of the stream", at + n as u64))?;
        input.consume(n);
        self.position += n as u64;
        self.padded.push_back(padded);
        Ok(true)
    }

    /// Collect the oldest batch into the (drained) bit buffer.
    fn collect(&mut self) -> anyhow::Result<()> {
        self.bits.clear();
        self.sent = 0;
        anyhow::ensure!(
            self.decoder.collect(&mut self.bits)?,
            "the decoder returned no batch although one was in flight"
        );
        if let Some((unit, valid)) = self.padded.pop_front().flatten() {
            let bits_out = self.unit.bits_out;
            let end = ((unit + 1) * bits_out).min(self.bits.len());
            self.bits.drain((unit * bits_out + valid).min(end)..end);
        }
        Ok(())
    }

    fn drain(&mut self, output: &mut DefaultCpuWriter<u8>) {
        let o = output.slice();
        let n = o.len().min(self.bits.len() - self.sent);
        o[..n].copy_from_slice(&self.bits[self.sent..self.sent + n]);
        output.produce(n);
        self.sent += n;
    }
}
