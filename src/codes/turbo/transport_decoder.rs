//! Transport blocks decoded as work units of a [`BatchDecoder`]: G LLRs in,
//! A bits out, the code blocks of a whole batch of transport blocks handed
//! to inner code-block decoders (one per code block size) in batches.

use super::code::TurboCode;
use super::crc::CRC24A;
use super::transport::TransportBlock;
use crate::codes::decode::{Batch, BatchDecoder, BatchLimit, Decoded, UnitReport, UnitShape, check_batch};
use crate::codes::error::{CodeError, CodeResult, invalid};
use crate::codes::llr::Llr;
use std::collections::VecDeque;
use std::marker::PhantomData;

/// Decodes transport blocks of one [`TransportBlock`] chain: each unit is a
/// transport block's G LLRs (of `T`), de-rate-matched with soft combining
/// and known-zero filler into its code blocks; the code blocks of every
/// transport block of a batch go to the inner decoder of their size (CPU or
/// GPU, `f32` LLRs) as one batch, and come back desegmented to A bits with
/// the transport block's CRC24A checked. A unit's report holds its code
/// blocks' iterations, summed, and whether the CRC24A checked.
///
/// # Example
/// ```
/// use gpufec::codes::BatchDecoder;
/// use gpufec::codes::encode::Encoder;
/// use gpufec::codes::turbo::{CpuTurbo, DecoderConfig, TransportBlock, TransportDecoder, TransportEncoder};
/// let tb = TransportBlock::new(1000, 3100, 0)?;
/// let mut dec = TransportDecoder::<i8>::new(tb.clone(), |code| {
///     CpuTurbo::<f32>::new(code, DecoderConfig::default(), 1.0, 1).map(|d| Box::new(d) as _)
/// })?;
/// let mut sent = Vec::new();
/// TransportEncoder::new(tb).encode(&[1; 2000], &mut sent)?;
/// let llrs: Vec<i8> = sent.iter().map(|&b| if b == 0 { 20 } else { -20 }).collect();
/// let mut bits = Vec::new();
/// dec.decode_all(&llrs, &mut bits)?;
/// assert_eq!(bits, vec![1; 2000]);
/// # anyhow::Ok(())
/// ```
pub struct TransportDecoder<T: Llr> {
    tb: TransportBlock,
    /// One decoder per code block size, in [`TransportBlock::block_sizes`]' order.
    inner: Vec<Box<dyn BatchDecoder<f32>>>,
    /// Code blocks of each size in one transport block.
    per_size: Vec<usize>,
    /// K and 3K + 12 of each size.
    lens: Vec<(usize, usize)>,
    shape: [UnitShape; 1],
    limit: BatchLimit,
    depth: usize,
    /// The de-rate-matched code blocks of the batch being submitted, per size.
    units: Vec<Vec<f32>>,
    /// Code blocks collected from the inner decoders and not yet assembled
    /// into transport blocks, per size, oldest first.
    done: Vec<Decoded>,
    /// Transport blocks of each batch in flight, oldest first.
    flights: VecDeque<usize>,
    _llr: PhantomData<fn(T)>,
}

impl<T: Llr> TransportDecoder<T> {
    /// A decoder of `tb`'s transport blocks; `make` builds the inner decoder
    /// of each code block size, which must take that code's 3K + 12 LLRs to
    /// K bits.
    pub fn new<E: From<CodeError>>(tb: TransportBlock, mut make: impl FnMut(TurboCode) -> Result<Box<dyn BatchDecoder<f32>>, E>) -> Result<Self, E> {
        let mut inner = Vec::new();
        for code in tb.codes() {
            let dec = make(code.clone())?;
            let takes = dec.shapes()[0];
            if !takes.accepts(code.coded_len()) || takes.bits != code.k() {
                let why = format!("the decoder of K = {} takes units of {} LLRs to {} bits, not {} to {}", code.k(), takes.items, takes.bits, code.coded_len(), code.k());
                return Err(CodeError::InvalidParameter(why).into());
            }
            inner.push(dec);
        }
        let per_size = tb.blocks_per_size();
        // As many transport blocks as one inner batch of every size holds (at least one).
        let units = inner
            .iter()
            .zip(tb.codes())
            .zip(&per_size)
            .map(|((d, code), &n)| (d.limit().units / n).min(d.limit().items / (n * code.coded_len())))
            .min()
            .unwrap_or(1)
            .max(1);
        let limit = BatchLimit { units, items: units * tb.g() };
        let depth = inner.iter().map(|d| d.depth()).min().unwrap_or(1).max(1);
        let shape = [UnitShape::exact(tb.g(), tb.a())];
        let sizes = inner.len();
        let lens = tb.codes().iter().map(|c| (c.k(), c.coded_len())).collect();
        Ok(Self { tb, inner, per_size, lens, shape, limit, depth, units: vec![Vec::new(); sizes], done: vec![Decoded::default(); sizes], flights: VecDeque::new(), _llr: PhantomData })
    }

    /// The chain decoded.
    pub fn transport_block(&self) -> &TransportBlock {
        &self.tb
    }

    /// Hand every code block in `self.units` to the decoder of its size,
    /// within that decoder's limit and depth.
    fn submit_code_blocks(&mut self) -> CodeResult<()> {
        for (s, dec) in self.inner.iter_mut().enumerate() {
            let mut rest = Batch::uniform(&self.units[s], self.lens[s].1)?;
            while rest.units() > 0 {
                let (part, later) = rest.split_within(dec.limit())?;
                if dec.in_flight() >= dec.depth() {
                    dec.collect(&mut self.done[s])?;
                }
                dec.submit(&part)?;
                rest = later;
            }
        }
        Ok(())
    }

    /// Assemble `count` transport blocks from the oldest collected code blocks.
    fn assemble(&mut self, count: usize, out: &mut Decoded) -> CodeResult<()> {
        let seg = self.tb.segmentation();
        let mut next = vec![0usize; self.inner.len()];
        let mut blocks: Vec<&[u8]> = Vec::with_capacity(seg.c);
        let mut with_crc = Vec::with_capacity(seg.b);
        for _ in 0..count {
            blocks.clear();
            let mut iterations = 0;
            for b in self.tb.code_blocks() {
                let (s, k) = (b.size, b.code.k());
                blocks.push(&self.done[s].bits[next[s] * k..][..k]);
                iterations += self.done[s].reports[next[s]].iterations;
                next[s] += 1;
            }
            with_crc.clear();
            seg.desegment(&blocks, &mut with_crc)?;
            let crc_ok = CRC24A.check(&with_crc);
            out.bits.extend_from_slice(&with_crc[..self.tb.a()]);
            out.reports.push(UnitReport { bits: self.tb.a(), iterations, check: Some(crc_ok), consumed: self.tb.g() });
        }
        for (done, (used, &(k, _))) in self.done.iter_mut().zip(next.into_iter().zip(&self.lens)) {
            done.bits.drain(..used * k);
            done.reports.drain(..used);
        }
        Ok(())
    }
}

impl<T: Llr> BatchDecoder<T> for TransportDecoder<T> {
    fn shapes(&self) -> &[UnitShape] {
        &self.shape
    }

    fn limit(&self) -> BatchLimit {
        self.limit
    }

    fn depth(&self) -> usize {
        self.depth
    }

    fn submit(&mut self, batch: &Batch<'_, T>) -> CodeResult<()> {
        let units = check_batch(batch, &self.shape, self.limit)?;
        self.units.iter_mut().for_each(Vec::clear);
        for i in 0..units {
            let start = batch.span(i).start;
            self.tb.dematch(batch.unit(i), &mut self.units).map_err(|e| match e {
                CodeError::NonFiniteLlr { index } => CodeError::NonFiniteLlr { index: start + index },
                other => other,
            })?;
        }
        self.submit_code_blocks()?;
        self.flights.push_back(units);
        Ok(())
    }

    fn collect(&mut self, out: &mut Decoded) -> CodeResult<bool> {
        let Some(count) = self.flights.pop_front() else { return Ok(false) };
        for ((dec, done), &n) in self.inner.iter_mut().zip(&mut self.done).zip(&self.per_size) {
            while done.reports.len() < count * n {
                if !dec.collect(done)? {
                    return Err(invalid!("a code block decoder returned {} of the {} code blocks submitted", done.reports.len(), count * n));
                }
            }
        }
        self.assemble(count, out)?;
        Ok(true)
    }

    fn in_flight(&self) -> usize {
        self.flights.len()
    }

    fn describe(&self) -> String {
        let tb = &self.tb;
        let last = self.inner.last().map_or(String::new(), |d| d.describe());
        format!("transport blocks of A = {}, G = {}, code blocks {:?}; {last}", tb.a(), tb.g(), tb.blocks())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes::encode::Encoder;
    use crate::codes::turbo::{CpuTurbo, DecoderConfig, EarlyStop, TransportEncoder, test_bits as bits};

    fn decoder<T: Llr>(tb: &TransportBlock, stop: EarlyStop, batch_blocks: usize) -> TransportDecoder<T> {
        let cfg = DecoderConfig { early_stop: stop, ..Default::default() };
        TransportDecoder::new(tb.clone(), |code| CodeResult::Ok(Box::new(CpuTurbo::<f32>::new(code, cfg, 1.0, 1)?.with_batch_units(batch_blocks)))).unwrap()
    }

    fn decode<T: Llr>(dec: &mut TransportDecoder<T>, llrs: &[T]) -> CodeResult<Decoded> {
        let mut out = Decoded::default();
        dec.decode(&Batch::uniform(llrs, dec.transport_block().g())?, &mut out)?;
        Ok(out)
    }

    #[test]
    fn clean_transport_blocks_come_back_for_every_size_and_rv() {
        // One block, filler below 40, two sizes with filler, several blocks;
        // rates from 1/7 to 0.83. Every rv alone decodes at rates up to
        // about 1/2; above, rv 1..3 puncture systematic bits that only a
        // combination with rv 0 brings back, so rv 0 only.
        for (a, g, rvs) in [(16, 120, 0..4), (100, 400, 0..4), (1000, 1200, 0..1), (6120, 13000, 0..4), (7000, 21000, 0..4), (20000, 45000, 0..4)] {
            let stop = if TransportBlock::new(a, g, 0).unwrap().segmentation().c > 1 { EarlyStop::Crc24B } else { EarlyStop::Crc24A };
            for rv in rvs {
                let tb = TransportBlock::new(a, g, rv).unwrap();
                let sent = bits(2 * a, a as u64 + rv as u64);
                let mut coded = Vec::new();
                TransportEncoder::new(tb.clone()).encode(&sent, &mut coded).unwrap();
                assert_eq!(coded.len(), 2 * g);
                let llrs: Vec<f32> = coded.iter().map(|&b| if b == 0 { 3.0 } else { -3.0 }).collect();
                let got = decode(&mut decoder(&tb, stop, 256), &llrs).unwrap();
                assert_eq!(got.bits, sent, "A {a} G {g} rv {rv}");
                assert!(got.reports.iter().all(|r| r.check == Some(true) && r.bits == a && r.consumed == g), "A {a} G {g} rv {rv}: {:?}", got.reports);
                // Clean input stops on the first iteration's CRC.
                assert!(got.reports.iter().all(|r| r.iterations as usize == tb.blocks().len()), "{:?}", got.reports);
            }
        }
    }

    #[test]
    fn batches_of_any_size_give_the_same_transport_blocks() {
        // Two sizes (4672 once, 4736 twice), i8 LLRs from the channel at an
        // Eb/N0 where some transport blocks fail.
        use crate::codes::channel::{BpskAwgn, Channel, Quantizer, noise_variance};
        let tb = TransportBlock::new(14000, 28000, 0).unwrap();
        let sent = bits(8 * 14000, 5);
        let mut coded = Vec::new();
        TransportEncoder::new(tb.clone()).encode(&sent, &mut coded).unwrap();
        let mut llrs: Vec<i8> = Vec::new();
        let quantizer = Quantizer::matched(noise_variance(EBN0_DB, 0.5).unwrap()).unwrap();
        BpskAwgn::<i8>::with_quantizer(EBN0_DB, 0.5, 3, quantizer).unwrap().transmit(&coded, &mut llrs).unwrap();
        let want = decode(&mut decoder::<i8>(&tb, EarlyStop::Crc24B, 256), &llrs).unwrap();
        let failed = want.reports.iter().filter(|r| r.check == Some(false)).count();
        assert!(failed > 0 && failed < 8, "{:?}", want.reports);
        // Wrong bits where the CRC failed, and only there.
        for ((got, sent), r) in want.bits.chunks(14000).zip(sent.chunks(14000)).zip(&want.reports) {
            assert_eq!(got == sent, r.check == Some(true));
        }
        for batch_blocks in [1, 2, 5] {
            let mut dec = decoder::<i8>(&tb, EarlyStop::Crc24B, batch_blocks);
            // One transport block a batch when an inner batch holds fewer than its two 4736s.
            assert_eq!(dec.limit().units, (batch_blocks / 2).max(1));
            assert_eq!(decode(&mut dec, &llrs).unwrap(), want, "{batch_blocks} code blocks per inner batch");
        }
    }

    const EBN0_DB: f64 = 1.2;

    #[test]
    fn a_wrong_block_fails_its_crc() {
        let tb = TransportBlock::new(500, 1600, 0).unwrap();
        let mut coded = Vec::new();
        tb.encode(&bits(500, 9), &mut coded).unwrap();
        // Send the opposite of every bit: the decoder finds some codeword, not this one.
        let llrs: Vec<f32> = coded.iter().map(|&b| if b == 0 { -3.0 } else { 3.0 }).collect();
        let got = decode(&mut decoder(&tb, EarlyStop::Never, 256), &llrs).unwrap();
        assert_eq!(got.reports[0].check, Some(false));
    }

    #[test]
    fn bad_input_is_refused_whole() {
        let tb = TransportBlock::new(100, 400, 0).unwrap();
        let mut dec = decoder::<f32>(&tb, EarlyStop::Never, 256);
        let e = decode(&mut dec, &[0.0f32; 399]).unwrap_err().to_string();
        assert!(e.contains("399"), "{e}");
        let mut nan = vec![1.0f32; 800];
        nan[555] = f32::NAN;
        let e = decode(&mut dec, &nan).unwrap_err();
        assert_eq!(e, CodeError::NonFiniteLlr { index: 555 }, "the NaN's place in the batch");
        assert_eq!(dec.in_flight(), 0);
        // The decoder goes on after a refused batch (the all-zero block).
        assert_eq!(decode(&mut dec, &vec![2.0f32; 400]).unwrap().bits, vec![0; 100]);
        // An inner decoder of the wrong code is refused.
        let wrong = TransportDecoder::<f32>::new(tb, |_| CodeResult::Ok(Box::new(CpuTurbo::<f32>::new(TurboCode::lte(40).unwrap(), DecoderConfig::default(), 1.0, 1).unwrap())));
        let e = wrong.err().expect("refused").to_string();
        assert!(e.contains("K = 128") && e.contains("132 LLRs"), "{e}");
    }
}
