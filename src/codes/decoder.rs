//! The one decoder interface every block decoder implements, CPU reference and
//! GPU launcher alike, for every code family.
//!
//! A decoder turns whole *work units* (a Viterbi tile, a code block) of LLRs
//! into bits. Work is submitted in batches and collected in order, so that a GPU
//! implementation can keep several batches in flight (copy in, compute, copy out)
//! while a CPU implementation simply decodes on submit.

use crate::codes::llr::Llr;

/// Size of one work unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnitShape {
    /// LLRs consumed per unit.
    pub llrs_in: usize,
    /// Bits produced per unit.
    pub bits_out: usize,
}

/// A batch decoder for LLRs of type `T`.
pub trait BatchDecoder<T: Llr>: Send {
    /// Shape of one work unit.
    fn unit(&self) -> UnitShape;

    /// Units per batch this decoder works best with.
    fn batch_units(&self) -> usize;

    /// Batches that may be in flight before the oldest must be collected.
    fn depth(&self) -> usize;

    /// Start decoding `llrs`, a whole number of units (at most `batch_units`).
    fn submit(&mut self, llrs: &[T]) -> anyhow::Result<()>;

    /// Append the bits of the oldest submitted batch to `out`, waiting for them.
    /// Returns `false` when nothing is in flight.
    fn collect(&mut self, out: &mut Vec<u8>) -> anyhow::Result<bool>;

    /// Batches submitted and not yet collected.
    fn in_flight(&self) -> usize;

    /// One line naming the backend and its resources, e.g. `cpu (2 threads, avx2)`.
    fn describe(&self) -> String;

    /// Decode `llrs` (whole units) to `out`, keeping up to `depth` batches in flight.
    fn decode_all(&mut self, llrs: &[T], out: &mut Vec<u8>) -> anyhow::Result<()> {
        let unit = self.unit();
        anyhow::ensure!(
            llrs.len().is_multiple_of(unit.llrs_in),
            "{} LLRs are not a whole number of {}-LLR units",
            llrs.len(),
            unit.llrs_in
        );
        for batch in llrs.chunks(unit.llrs_in * self.batch_units().max(1)) {
            if self.in_flight() >= self.depth() {
                self.collect(out)?;
            }
            self.submit(batch)?;
        }
        while self.collect(out)? {}
        Ok(())
    }
}
