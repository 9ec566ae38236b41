//! Whole 5G control messages decoded around any decoder of their polar code
//! blocks: rate recovery, the blocks, and the message from their payloads.

use super::chain::NrPolar;
use crate::codes::llr::Llr;
use crate::codes::decode::{Batch, BatchDecoder, BatchLimit, Decoded, UnitReport, UnitShape, check_batch};
use crate::codes::error::{CodeResult, invalid};
use crate::codes::polar::finished::Finished;
use crate::codes::polar::spec::PolarSpec;

/// Default messages per batch.
pub const DEFAULT_BATCH_MESSAGES: usize = 256;

/// A [`BatchDecoder`] of units of E received LLRs to the A bits of a
/// message: every block's LLRs recovered to N (§5.4.1), the blocks of a batch
/// decoded together by the inner decoder, the payloads joined. A unit's
/// report sums its blocks' iterations, and its check passes when every
/// block's CRC does.
///
/// # Example
/// ```
/// use gpufec::codes::BatchDecoder;
/// use gpufec::codes::polar::nr::{NrDecoder, NrPolar};
/// use gpufec::codes::polar::{Algorithm, CpuPolar};
/// let chain = NrPolar::uci(30, 100).unwrap();
/// let mut sent = Vec::new();
/// chain.encode(&[1; 30], &mut sent).unwrap();
/// let llrs: Vec<f32> = sent.iter().map(|&b| 4.0 - 8.0 * f32::from(b)).collect();
/// let mut dec = NrDecoder::new(chain, |spec| Ok(Box::new(CpuPolar::<f32>::new(spec.clone(), Algorithm::Scl { list: 8 }, 1)?))).unwrap();
/// let mut bits = Vec::new();
/// dec.decode_all(&llrs, &mut bits).unwrap();
/// assert_eq!(bits, vec![1; 30]);
/// ```
pub struct NrDecoder<T: Llr> {
    chain: NrPolar,
    inner: Box<dyn BatchDecoder<T>>,
    shape: [UnitShape; 1],
    batch_units: usize,
    recovered: Vec<T>,
    blocks: Decoded,
    done: Finished,
}

impl<T: Llr> NrDecoder<T> {
    /// Messages of `chain`, their blocks decoded by the decoder `inner`
    /// makes of the blocks' spec (it must take N LLRs to the blocks' payload).
    pub fn new(chain: NrPolar, inner: impl FnOnce(&PolarSpec) -> CodeResult<Box<dyn BatchDecoder<T>>>) -> CodeResult<Self> {
        let spec = chain.block_spec();
        let inner = inner(spec)?;
        let takes = inner.shapes()[0];
        if !takes.accepts(spec.n()) || takes.bits != spec.payload_len() {
            return Err(invalid!("the block decoder takes {} LLRs to {} bits; the blocks are {} LLRs carrying {}", takes.items, takes.bits, spec.n(), spec.payload_len()));
        }
        let shape = [UnitShape::exact(chain.e(), chain.a())];
        Ok(Self { chain, inner, shape, batch_units: DEFAULT_BATCH_MESSAGES, recovered: Vec::new(), blocks: Decoded::default(), done: Finished::default() })
    }

    /// Set the messages per batch (at least 1).
    pub fn with_batch_units(mut self, units: usize) -> Self {
        self.batch_units = units.max(1);
        self
    }

    /// The chain decoded.
    pub fn chain(&self) -> &NrPolar {
        &self.chain
    }

    fn decode_batch(&mut self, batch: &Batch<'_, T>) -> CodeResult<Decoded> {
        let units = check_batch(batch, &self.shape, self.limit())?;
        batch.check_finite(0..units)?;
        self.recovered.clear();
        for u in 0..units {
            self.chain.recover(batch.unit(u), &mut self.recovered)?;
        }
        self.blocks.clear();
        self.inner.decode(&Batch::uniform(&self.recovered, self.chain.block_spec().n())?, &mut self.blocks)?;
        let c = self.chain.blocks();
        let per_unit = c * self.chain.block_spec().payload_len();
        let mut out = Decoded::default();
        for (payloads, reports) in self.blocks.bits.chunks(per_unit).zip(self.blocks.reports.chunks(c)) {
            out.bits.extend_from_slice(self.chain.message_of(payloads));
            let check = reports.iter().try_fold(true, |all, r| r.check.map(|ok| all && ok));
            let iterations = reports.iter().map(|r| r.iterations).sum();
            out.reports.push(UnitReport { bits: self.chain.a(), iterations, blocks: c as u32, check, consumed: self.chain.e() });
        }
        Ok(out)
    }
}

impl<T: Llr> BatchDecoder<T> for NrDecoder<T> {
    fn shapes(&self) -> &[UnitShape] {
        &self.shape
    }

    fn limit(&self) -> BatchLimit {
        BatchLimit { units: self.batch_units, items: self.batch_units * self.chain.e() }
    }

    fn depth(&self) -> usize {
        1
    }

    fn submit(&mut self, batch: &Batch<'_, T>) -> CodeResult<()> {
        let out = self.decode_batch(batch)?;
        self.done.push(out);
        Ok(())
    }

    fn collect(&mut self, out: &mut Decoded) -> CodeResult<bool> {
        Ok(self.done.collect(out))
    }

    fn in_flight(&self) -> usize {
        self.done.len()
    }

    fn describe(&self) -> String {
        format!("{}; blocks: {}", self.chain.describe(), self.inner.describe())
    }
}
