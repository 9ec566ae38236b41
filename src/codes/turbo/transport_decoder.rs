//! Transport blocks decoded as work units of a [`BatchDecoder`]: G LLRs in,
//! A bits out, the code blocks of a whole batch of transport blocks handed
//! to inner code-block decoders (one per code block size) in batches.

use super::code::TurboCode;
use crate::codes::crc::CRC24A;
use super::rate_match::RateMatch;
use super::transport::TransportBlock;
use crate::codes::decode::{Batch, BatchDecoder, BatchLimit, Decoded, UnitReport, UnitShape, UnitSpan, check_batch};
use crate::codes::error::{CodeError, CodeResult, invalid};
use crate::codes::llr::{Llr, check_finite};
use rayon::prelude::*;
use std::collections::VecDeque;
use std::marker::PhantomData;

/// Decodes transport blocks of one [`TransportBlock`] chain: each unit is a
/// transport block's G LLRs (of `T`), de-rate-matched with soft combining
/// and known-zero filler into its code blocks' layouts of `T` (`i8` sums
/// saturated, as [`Llr::plus`] adds); the code blocks of every transport
/// block of a batch go to the inner decoder of their size (CPU or GPU, LLRs
/// of `T`) as one batch, and come back desegmented to A bits with the
/// transport block's CRC24A checked. De-rate-matching, desegmentation and
/// the CRCs run on all cores, a code block or a transport block per task. A
/// unit's report holds its code blocks' iterations, summed, and whether the
/// CRC24A checked.
///
/// [`Self::rate_matched`] makes the other kind: inner decoders that take a
/// code block's E rate-matched LLRs as they came (of `T`, one unit format
/// per rate matching) and de-rate-match them themselves, as the GPU decoder
/// does on load ([`crate::gpu::GpuTurboOptions::rate_matching`]); the host
/// then only names where each code block lies in the batch.
///
/// # Example
/// ```
/// use gpufec::codes::BatchDecoder;
/// use gpufec::codes::encode::Encoder;
/// use gpufec::codes::turbo::{CpuTurbo, DecoderConfig, TransportBlock, TransportDecoder, TransportEncoder};
/// let tb = TransportBlock::new(1000, 3100, 0)?;
/// let mut dec = TransportDecoder::<i8>::new(tb.clone(), |code| {
///     CpuTurbo::<i8>::new(code, DecoderConfig::default(), 1.0, 1).map(|d| Box::new(d) as _)
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
    inner: Inner<T>,
    /// Code blocks of each size in one transport block.
    per_size: Vec<usize>,
    /// K and 3K + 12 of each size.
    lens: Vec<(usize, usize)>,
    /// Each code block's place among the transport block's code blocks of its size.
    ordinal: Vec<usize>,
    shape: [UnitShape; 1],
    limit: BatchLimit,
    depth: usize,
    /// Code blocks collected from the inner decoders and not yet assembled
    /// into transport blocks, per size, oldest first.
    done: Vec<Decoded>,
    /// Transport blocks of each batch in flight, oldest first.
    flights: VecDeque<usize>,
    _llr: PhantomData<fn(T)>,
}

/// The inner decoders, one per code block size, and what they are handed.
enum Inner<T: Llr> {
    /// Units of 3K + 12 LLRs, de-rate-matched here.
    Layouts {
        decoders: Vec<Box<dyn BatchDecoder<T>>>,
        /// The de-rate-matched code blocks of the batch being submitted, per size.
        units: Vec<Vec<T>>,
    },
    /// Units of 3K + 12 `f32` LLRs, de-rate-matched here from LLRs of
    /// `T` ([`TransportBlock::wide_layouts`]).
    Wide {
        decoders: Vec<Box<dyn BatchDecoder<f32>>>,
        units: Vec<Vec<f32>>,
    },
    /// The code blocks' rate-matched LLRs where they lie in the batch.
    RateMatched {
        decoders: Vec<Box<dyn BatchDecoder<T>>>,
        /// The code blocks of the batch being submitted, per size.
        spans: Vec<Vec<UnitSpan>>,
    },
}

impl<T: Llr> Inner<T> {
    /// The decoder of size `s`, as far as collecting goes.
    fn collect(&mut self, s: usize, done: &mut Decoded) -> CodeResult<bool> {
        match self {
            Inner::Layouts { decoders, .. } => decoders[s].collect(done),
            Inner::Wide { decoders, .. } => decoders[s].collect(done),
            Inner::RateMatched { decoders, .. } => decoders[s].collect(done),
        }
    }

    /// Each decoder's limit and depth.
    fn limits(&self) -> Vec<(BatchLimit, usize)> {
        match self {
            Inner::Layouts { decoders, .. } => decoders.iter().map(|d| (d.limit(), d.depth())).collect(),
            Inner::Wide { decoders, .. } => decoders.iter().map(|d| (d.limit(), d.depth())).collect(),
            Inner::RateMatched { decoders, .. } => decoders.iter().map(|d| (d.limit(), d.depth())).collect(),
        }
    }

    fn describe_last(&self) -> String {
        match self {
            Inner::Layouts { decoders, .. } => decoders.last().map_or(String::new(), |d| d.describe()),
            Inner::Wide { decoders, .. } => decoders.last().map_or(String::new(), |d| d.describe()),
            Inner::RateMatched { decoders, .. } => decoders.last().map_or(String::new(), |d| d.describe()),
        }
    }
}

/// Hand `batch` to `dec` within its limit and depth, collecting into `done`
/// where a batch must leave first.
fn submit_within<U: Copy + Send + Sync>(dec: &mut dyn BatchDecoder<U>, batch: Batch<'_, U>, done: &mut Decoded) -> CodeResult<()> {
    let mut rest = batch;
    while rest.units() > 0 {
        let (part, later) = rest.split_within(dec.limit())?;
        if dec.in_flight() >= dec.depth() {
            dec.collect(done)?;
        }
        dec.submit(&part)?;
        rest = later;
    }
    Ok(())
}

/// Hand the code blocks of the `units` transport blocks of `batch` (LLRs of
/// `T`) to `decoders` (per size; `per_size` code blocks of (K, 3K + 12)
/// `lens` in each transport block), de-rate-matched into `layouts` of `L`
/// (each LLR converted by `to`) a code block per task, collecting into
/// `done` where a batch must leave first. The first NaN or infinite LLR of
/// the batch is named by its index there, and nothing is handed over.
#[allow(clippy::too_many_arguments)]
fn submit_layouts<T: Llr, L: Llr>(
    tb: &TransportBlock,
    batch: &Batch<'_, T>,
    units: usize,
    (per_size, lens): (&[usize], &[(usize, usize)]),
    decoders: &mut [Box<dyn BatchDecoder<L>>],
    layouts: &mut [Vec<L>],
    done: &mut [Decoded],
    to: impl Fn(T) -> L + Sync,
) -> CodeResult<()> {
    let bad = (0..units).into_par_iter().find_map_first(|i| check_finite(batch.unit(i)).err().map(|e| (i, e)));
    if let Some((i, e)) = bad {
        return Err(match e {
            CodeError::NonFiniteLlr { index } => CodeError::NonFiniteLlr { index: batch.span(i).start + index },
            other => other,
        });
    }
    // Every entry is written: the layouts are only resized.
    for (layout, (&n, &(_, len))) in layouts.iter_mut().zip(per_size.iter().zip(lens)) {
        layout.resize(units * n * len, L::default());
    }
    let mut outs: Vec<_> = layouts.iter_mut().zip(lens).map(|(l, &(_, len))| l.chunks_mut(len)).collect();
    let mut jobs = Vec::with_capacity(units * tb.code_blocks().len());
    for i in 0..units {
        for (r, b) in tb.code_blocks().iter().enumerate() {
            jobs.push((batch.unit(i), r, outs[b.size].next().expect("a layout per code block")));
        }
    }
    jobs.into_par_iter().for_each(|(llrs, r, out)| tb.dematch_block(r, llrs, out, &to));
    for ((dec, layout), (done, &(_, n))) in decoders.iter_mut().zip(layouts.iter()).zip(done.iter_mut().zip(lens)) {
        submit_within(dec.as_mut(), Batch::uniform(layout, n)?, done)?;
    }
    Ok(())
}

/// Check that `dec`, the inner decoder of `code`, takes `formats` (items of
/// each) to K bits.
fn check_inner<U: Copy + Send + Sync>(dec: &dyn BatchDecoder<U>, code: &TurboCode, formats: &[usize]) -> CodeResult<()> {
    let takes = dec.shapes();
    for (f, &items) in formats.iter().enumerate() {
        match takes.get(f) {
            Some(t) if t.accepts(items) && t.bits == code.k() => {}
            other => {
                let has = other.map_or("none".to_string(), |t| format!("{} LLRs to {} bits", t.items, t.bits));
                return Err(invalid!("the decoder of K = {} takes units of format {f} of {has}, not {items} to {}", code.k(), code.k()));
            }
        }
    }
    Ok(())
}

/// The inner decoder of each code block size of `tb`, made by `make` and
/// checked to take the code's 3K + 12 LLRs to K bits.
fn layout_decoders<L: Llr, E: From<CodeError>>(tb: &TransportBlock, mut make: impl FnMut(TurboCode) -> Result<Box<dyn BatchDecoder<L>>, E>) -> Result<Vec<Box<dyn BatchDecoder<L>>>, E> {
    let mut decoders = Vec::new();
    for code in tb.codes() {
        let dec = make(code.clone())?;
        check_inner(dec.as_ref(), &code, &[code.coded_len()])?;
        decoders.push(dec);
    }
    Ok(decoders)
}

/// LLRs of the layouts of each size in one transport block.
fn layout_items(tb: &TransportBlock) -> Vec<usize> {
    tb.codes().iter().zip(tb.blocks_per_size()).map(|(c, n)| n * c.coded_len()).collect()
}

impl<T: Llr> TransportDecoder<T> {
    /// A decoder of `tb`'s transport blocks; `make` builds the inner decoder
    /// of each code block size, which must take that code's 3K + 12 LLRs
    /// (of `T`) to K bits.
    pub fn new<E: From<CodeError>>(tb: TransportBlock, make: impl FnMut(TurboCode) -> Result<Box<dyn BatchDecoder<T>>, E>) -> Result<Self, E> {
        let decoders = layout_decoders(&tb, make)?;
        let units = vec![Vec::new(); decoders.len()];
        let items = layout_items(&tb);
        Ok(Self::with_inner(tb, Inner::Layouts { decoders, units }, &items))
    }

    /// [`Self::new`] with `f32` layouts and inner decoders of `f32` LLRs,
    /// which hold the sums of repeated `i8` LLRs whole (the choice of
    /// [`TransportBlock::wide_layouts`]).
    pub fn wide<E: From<CodeError>>(tb: TransportBlock, make: impl FnMut(TurboCode) -> Result<Box<dyn BatchDecoder<f32>>, E>) -> Result<Self, E> {
        let decoders = layout_decoders(&tb, make)?;
        let units = vec![Vec::new(); decoders.len()];
        let items = layout_items(&tb);
        Ok(Self::with_inner(tb, Inner::Wide { decoders, units }, &items))
    }

    /// A decoder of `tb`'s transport blocks whose inner decoders take the
    /// code blocks' rate-matched LLRs: `make` builds the one of each code
    /// block size from its code and its rate matchings
    /// ([`TransportBlock::rate_matchings`]), and unit format i of it must
    /// take rate matching i's E LLRs (of `T`, as received) to K bits,
    /// de-rate-matched as [`RateMatch::combine`] does with the known zeros
    /// at [`super::KNOWN_ZERO_LLR`].
    pub fn rate_matched<E: From<CodeError>>(tb: TransportBlock, mut make: impl FnMut(TurboCode, &[RateMatch]) -> Result<Box<dyn BatchDecoder<T>>, E>) -> Result<Self, E> {
        let mut decoders = Vec::new();
        for (code, formats) in tb.codes().into_iter().zip(tb.rate_matchings()) {
            let dec = make(code.clone(), formats)?;
            check_inner(dec.as_ref(), &code, &formats.iter().map(RateMatch::e).collect::<Vec<_>>())?;
            decoders.push(dec);
        }
        let mut items = vec![0; decoders.len()];
        for b in tb.code_blocks() {
            items[b.size] += b.rm.e();
        }
        let spans = vec![Vec::new(); decoders.len()];
        Ok(Self::with_inner(tb, Inner::RateMatched { decoders, spans }, &items))
    }

    /// The decoder around `inner`, whose decoder of size s takes `items[s]`
    /// items per transport block.
    fn with_inner(tb: TransportBlock, inner: Inner<T>, items: &[usize]) -> Self {
        let per_size = tb.blocks_per_size();
        let limits = inner.limits();
        // As many transport blocks as one inner batch of every size holds (at least one).
        let units = limits.iter().zip(&per_size).zip(items).map(|(((l, _), &n), &i)| (l.units / n).min(l.items / i.max(1))).min().unwrap_or(1).max(1);
        let limit = BatchLimit { units, items: units * tb.g() };
        let depth = limits.iter().map(|&(_, d)| d).min().unwrap_or(1).max(1);
        let shape = [UnitShape::exact(tb.g(), tb.a())];
        let sizes = per_size.len();
        let lens = tb.codes().iter().map(|c| (c.k(), c.coded_len())).collect();
        let mut seen = vec![0; sizes];
        let ordinal = tb
            .code_blocks()
            .iter()
            .map(|b| {
                seen[b.size] += 1;
                seen[b.size] - 1
            })
            .collect();
        Self { tb, inner, per_size, lens, ordinal, shape, limit, depth, done: vec![Decoded::default(); sizes], flights: VecDeque::new(), _llr: PhantomData }
    }

    /// The chain decoded.
    pub fn transport_block(&self) -> &TransportBlock {
        &self.tb
    }

    /// Whether the inner decoders take rate-matched LLRs ([`Self::rate_matched`]).
    pub fn is_rate_matched(&self) -> bool {
        matches!(self.inner, Inner::RateMatched { .. })
    }

    /// Hand the code blocks of the `units` transport blocks of `batch` to
    /// the decoders of their sizes, within each decoder's limit and depth:
    /// de-rate-matched here, or where they lie in the batch.
    fn submit_code_blocks(&mut self, batch: &Batch<'_, T>, units: usize) -> CodeResult<()> {
        let tb = &self.tb;
        match &mut self.inner {
            Inner::Layouts { decoders, units: layouts } => submit_layouts(tb, batch, units, (&self.per_size, &self.lens), decoders, layouts, &mut self.done, |l| l)?,
            Inner::Wide { decoders, units: layouts } => submit_layouts(tb, batch, units, (&self.per_size, &self.lens), decoders, layouts, &mut self.done, |l: T| l.to_f32())?,
            Inner::RateMatched { decoders, spans } => {
                spans.iter_mut().for_each(Vec::clear);
                for i in 0..units {
                    let mut at = batch.span(i).start;
                    for b in tb.code_blocks() {
                        spans[b.size].push(UnitSpan { start: at, len: b.rm.e(), format: b.format });
                        at += b.rm.e();
                    }
                }
                for ((dec, spans), done) in decoders.iter_mut().zip(spans.iter()).zip(self.done.iter_mut()) {
                    submit_within(dec.as_mut(), Batch::spans(batch.items(), spans)?, done)?;
                }
            }
        }
        Ok(())
    }

    /// Assemble `count` transport blocks from the oldest collected code
    /// blocks, a transport block per task: its code blocks' data
    /// desegmented straight into `out`, the CRC24A checked over them where
    /// they lie.
    fn assemble(&mut self, count: usize, out: &mut Decoded) -> CodeResult<()> {
        let (seg, a, g) = (self.tb.segmentation(), self.tb.a(), self.tb.g());
        let (blocks, done, ordinal, per_size, lens) = (self.tb.code_blocks(), &self.done, &self.ordinal, &self.per_size, &self.lens);
        // Code block r of transport block i: the oldest of its size, counted on.
        let block = |i: usize, r: usize| {
            let (s, k) = (blocks[r].size, lens[blocks[r].size].0);
            let at = i * per_size[s] + ordinal[r];
            (&done[s].bits[at * k..][..k], done[s].reports[at].iterations)
        };
        let start = out.bits.len();
        // Written straight into the spare capacity, a transport block per
        // task: zero-filling it first would be a serial pass over the whole
        // batch on this thread (it was the TB path's largest host cost).
        out.bits.reserve(count * a);
        let reports: Vec<UnitReport> = out.bits.spare_capacity_mut()[..count * a]
            .par_chunks_mut(a)
            .enumerate()
            .map(|(i, bits)| {
                let data = (0..blocks.len()).map(|r| seg.data(r, block(i, r).0));
                let crc_ok = CRC24A.check_pieces(data.clone());
                let mut at = 0;
                for piece in data {
                    let take = piece.len().min(a - at);
                    bits[at..at + take].write_copy_of_slice(&piece[..take]);
                    at += take;
                }
                // The data of the code blocks is A bits and the CRC24A: every bit is written.
                assert_eq!(at, a, "the code blocks hold fewer than A data bits");
                let iterations = (0..blocks.len()).map(|r| block(i, r).1).sum();
                UnitReport { bits: a, iterations, blocks: blocks.len() as u32, check: Some(crc_ok), consumed: g }
            })
            .collect();
        // SAFETY: each of the count · A spare bytes was written above (asserted per transport block).
        unsafe { out.bits.set_len(start + count * a) };
        out.reports.extend(reports);
        for (done, (&n, &(k, _))) in self.done.iter_mut().zip(per_size.iter().zip(lens)) {
            done.bits.drain(..count * n * k);
            done.reports.drain(..count * n);
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
        self.submit_code_blocks(batch, units)?;
        self.flights.push_back(units);
        Ok(())
    }

    fn collect(&mut self, out: &mut Decoded) -> CodeResult<bool> {
        let Some(count) = self.flights.pop_front() else { return Ok(false) };
        for (s, (done, &n)) in self.done.iter_mut().zip(&self.per_size).enumerate() {
            while done.reports.len() < count * n {
                if !self.inner.collect(s, done)? {
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
        let how = match self.inner {
            Inner::RateMatched { .. } => "rate-matched LLRs to the code block decoders",
            Inner::Wide { .. } => "de-rate-matched on the host into f32",
            Inner::Layouts { .. } => "de-rate-matched on the host",
        };
        format!("transport blocks of A = {}, G = {}, code blocks {}, {how}; {}", tb.a(), tb.g(), crate::codes::words::runs_of(&tb.blocks()), self.inner.describe_last())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes::encode::Encoder;
    use crate::codes::turbo::{CpuTurbo, DecoderConfig, EarlyStop, TransportEncoder, test_bits as bits};

    fn decoder<T: Llr>(tb: &TransportBlock, stop: EarlyStop, batch_blocks: usize) -> TransportDecoder<T> {
        let cfg = DecoderConfig { early_stop: stop, ..Default::default() };
        TransportDecoder::new(tb.clone(), |code| CodeResult::Ok(Box::new(CpuTurbo::<T>::new(code, cfg, 1.0, 1)?.with_batch_units(batch_blocks)))).unwrap()
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

    /// Where some transport blocks of 14000 bits in 28000 fail (i8 LLRs, the matched scale).
    const EBN0_DB: f64 = 1.0;

    /// The i8 model of a transport block is the i8 model of its code block:
    /// one code block of K = 6144 (A = 6120, no filler) sent at G = 3K + 12,
    /// where rate matching sends every coded bit once, so the transport
    /// block's LLRs are the code block's, reordered. Decoded through the
    /// transport path (its layouts of i8, CpuTurbo<i8>) and as a bare code
    /// block (CpuTurbo<i8> on the same quantized LLRs, the same scale), the
    /// bits, iterations and checks agree, at an Eb/N0 where some fail.
    #[test]
    fn the_i8_transport_path_decodes_what_i8_code_blocks_decode() {
        use crate::codes::channel::{BpskAwgn, Channel, Quantizer, noise_variance};
        use crate::codes::crc::CRC24A;
        use crate::codes::turbo::encoder::encode_block;
        let (a, k, count) = (6120, 6144, 12);
        let code = TurboCode::lte(k).unwrap();
        let g = code.coded_len();
        let tb = TransportBlock::new(a, g, 0).unwrap();
        let rm = &tb.code_blocks()[0].rm;
        assert_eq!((tb.blocks(), rm.carried(), tb.segmentation().filler), (vec![k], g, 0));
        let info = bits(count * a, 21);
        let mut layouts = Vec::new();
        for block in info.chunks(a) {
            let mut with_crc = Vec::new();
            CRC24A.attach(block, &mut with_crc);
            let mut coded = vec![0; g];
            encode_block(&code, &with_crc, &mut coded);
            layouts.extend(coded);
        }
        let ebn0 = 0.45;
        let variance = noise_variance(ebn0, a as f64 / g as f64).unwrap();
        let quantizer = Quantizer::matched(variance).unwrap();
        let scale = quantizer.scale();
        let mut llrs: Vec<i8> = Vec::new();
        BpskAwgn::<i8>::with_quantizer(ebn0, a as f64 / g as f64, 8, quantizer).unwrap().transmit(&layouts, &mut llrs).unwrap();
        // The same LLRs in the order rate matching sends them.
        let sent: Vec<i8> = llrs.chunks(g).flat_map(|l| rm.indices().iter().map(|&i| l[i as usize])).collect();
        let cfg = DecoderConfig { early_stop: EarlyStop::Crc24A, ..Default::default() };
        let mut blocks = CpuTurbo::<i8>::new(code, cfg, scale, 1).unwrap();
        let mut want = Decoded::default();
        blocks.decode(&Batch::uniform(&llrs, g).unwrap(), &mut want).unwrap();
        let mut dec = TransportDecoder::<i8>::new(tb, |code| CodeResult::Ok(Box::new(CpuTurbo::<i8>::new(code, cfg, scale, 1)?) as _)).unwrap();
        let got = decode(&mut dec, &sent).unwrap();
        let want_bits: Vec<u8> = want.bits.chunks(k).flat_map(|b| b[..a].to_vec()).collect();
        assert_eq!(got.bits, want_bits);
        for (t, c) in got.reports.iter().zip(&want.reports) {
            assert_eq!((t.iterations, t.check), (c.iterations, c.check));
        }
        let failed = got.reports.iter().filter(|r| r.check == Some(false)).count();
        assert!(failed > 0 && failed < count, "{failed} of {count} failed");
    }

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
        let wrong = TransportDecoder::<f32>::new(tb, |_| CodeResult::Ok(Box::new(CpuTurbo::<f32>::new(TurboCode::lte(40).unwrap(), DecoderConfig::default(), 1.0, 1).unwrap()) as _));
        let e = wrong.err().expect("refused").to_string();
        assert!(e.contains("K = 128") && e.contains("132 LLRs"), "{e}");
    }

    /// A CPU stand-in for a decoder that de-rate-matches on load: it takes
    /// unit format f as rate matching f's E LLRs, gathers each layout
    /// position's LLRs by `first_sent` (the table the GPU loads), sets the
    /// known zeros, and decodes the layouts with `CpuTurbo`.
    struct Gathering {
        formats: Vec<RateMatch>,
        shapes: Vec<UnitShape>,
        inner: CpuTurbo<f32>,
    }

    impl BatchDecoder<f32> for Gathering {
        fn shapes(&self) -> &[UnitShape] {
            &self.shapes
        }
        fn limit(&self) -> BatchLimit {
            BatchLimit { units: 2, items: usize::MAX }
        }
        fn depth(&self) -> usize {
            1
        }
        fn submit(&mut self, batch: &Batch<'_, f32>) -> CodeResult<()> {
            check_batch(batch, &self.shapes, self.limit())?;
            let mut layouts = Vec::new();
            for i in 0..batch.units() {
                let rm = &self.formats[batch.format(i) as usize];
                let llrs = batch.unit(i);
                let mut layout: Vec<f32> = rm.first_sent().iter().map(|&t| (t as usize..rm.e()).step_by(rm.carried()).fold(0.0, |acc, e| acc + llrs[e])).collect();
                for z in rm.known_zeros() {
                    layout[z].fill(crate::codes::turbo::KNOWN_ZERO_LLR);
                }
                layouts.extend(layout);
            }
            self.inner.submit(&Batch::uniform(&layouts, self.formats[0].coded_len())?)
        }
        fn collect(&mut self, out: &mut Decoded) -> CodeResult<bool> {
            self.inner.collect(out)
        }
        fn in_flight(&self) -> usize {
            self.inner.in_flight()
        }
        fn describe(&self) -> String {
            "gathering".into()
        }
    }

    #[test]
    fn rate_matched_inner_decoders_get_each_code_blocks_llrs_and_format() {
        // Filler, two sizes, E and E + 1 (G = 28001: the last block takes one
        // more), repetition (rate 1/5), rv 2; noisy enough that some fail.
        use crate::codes::channel::{BpskAwgn, Channel};
        for (a, g, rv, ebn0) in [(14000, 28001, 0, 1.2), (3000, 15000, 2, 1.5), (100, 300, 1, 4.0)] {
            let tb = TransportBlock::new(a, g, rv).unwrap();
            let mut coded = Vec::new();
            TransportEncoder::new(tb.clone()).encode(&bits(4 * a, 11), &mut coded).unwrap();
            let mut llrs = Vec::new();
            BpskAwgn::<f32>::new(ebn0, a as f64 / g as f64, 5).unwrap().transmit(&coded, &mut llrs).unwrap();
            let cfg = DecoderConfig { early_stop: EarlyStop::Crc24B, ..Default::default() };
            let want = decode(&mut decoder::<f32>(&tb, EarlyStop::Crc24B, 256), &llrs).unwrap();
            let mut dec = TransportDecoder::<f32>::rate_matched(tb.clone(), |code, formats| {
                let shapes = formats.iter().map(|rm| UnitShape::exact(rm.e(), code.k())).collect();
                CodeResult::Ok(Box::new(Gathering { formats: formats.to_vec(), shapes, inner: CpuTurbo::<f32>::new(code, cfg, 1.0, 1)? }) as _)
            })
            .unwrap();
            assert!(dec.is_rate_matched() && dec.describe().contains("rate-matched LLRs"));
            assert_eq!(decode(&mut dec, &llrs).unwrap(), want, "A {a} G {g} rv {rv}");
            assert!(want.reports.iter().any(|r| r.check == Some(true)), "{:?}", want.reports);
        }
        // An inner decoder that does not take the rate matchings is refused.
        let tb = TransportBlock::new(100, 300, 0).unwrap();
        let wrong = TransportDecoder::<f32>::rate_matched(tb, |code, _| CodeResult::Ok(Box::new(CpuTurbo::<f32>::new(code, DecoderConfig::default(), 1.0, 1)?) as _));
        let e = wrong.err().expect("refused").to_string();
        assert!(e.contains("format 0 of 396 LLRs") && e.contains("not 300"), "{e}");
    }
}
