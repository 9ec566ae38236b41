//! The decoder block on the decoder contract, with test decoders: units of
//! different lengths, soft output, reports as tags, tags passed through, a
//! partial batch flushed when the input stalls, a cutter that learns from
//! the decoder, and every failure as one message. (With a family's own
//! decoder and cutter: that family's block tests, `blocks/conv/tests.rs`.)

use super::*;
use crate::blocks::testing::{BlockOutput, Stall, run_decoder_block, run_through};
use crate::blocks::{FirstError, Reporting, UNIT_FORMAT_TAG, UNIT_LLRS_TAG, UNIT_REPORT_TAG};
use crate::codes::decode::{Batch, BatchLimit, Decoded, UnitReport, UnitShape, check_batch};
use crate::codes::error::{CodeError, CodeResult};
use crate::codes::decode::tests::Repetition;
use crate::codes::framing::WindowCutter;
use futuresdr::runtime::dev::Tag;
use std::collections::VecDeque;
use std::time::Duration;

decoder_block! {
    /// The decoder block around the test decoders.
    TestDecoder
}

/// Run `items` through `block`; the bits and tags out, and the soft output.
fn run_block<T: CpuSample + Copy>(items: Vec<T>, tags: Vec<(usize, Tag)>, stall: Option<Stall>, block: TestDecoder<T>) -> Result<BlockOutput, String> {
    let errors = FirstError::default();
    let soft = block.soft.len() == 1;
    run_decoder_block(items, tags, stall, soft, &errors, |fg| fg.add(block.report_to(&errors)).into())
}

/// Decodes every unit to its first LLR's sign, like a GPU keeping batches in
/// flight, and fails with a CUDA-like message at its `fail_at`-th call of
/// `collect` (`on_collect`) or of `submit`.
struct Failing {
    shape: [UnitShape; 1],
    queue: VecDeque<Vec<u8>>,
    calls: usize,
    fail_at: usize,
    on_collect: bool,
}

impl Failing {
    fn new(fail_at: usize, on_collect: bool) -> Self {
        Self { shape: [UnitShape::exact(4, 1)], queue: VecDeque::new(), calls: 0, fail_at, on_collect }
    }
}

impl BatchDecoder<f32> for Failing {
    fn shapes(&self) -> &[UnitShape] {
        &self.shape
    }
    fn limit(&self) -> BatchLimit {
        BatchLimit { units: 8, items: 32 }
    }
    fn depth(&self) -> usize {
        2
    }
    fn submit(&mut self, batch: &Batch<'_, f32>) -> CodeResult<()> {
        check_batch(batch, &self.shape, self.limit())?;
        self.calls += usize::from(!self.on_collect);
        if !self.on_collect && self.calls == self.fail_at {
            return Err(CodeError::Device("host→device copy: CUDA_ERROR_ILLEGAL_ADDRESS".into()));
        }
        self.queue.push_back((0..batch.units()).map(|u| u8::from(batch.unit(u)[0] < 0.0)).collect());
        Ok(())
    }
    fn collect(&mut self, out: &mut Decoded) -> CodeResult<bool> {
        let Some(bits) = self.queue.pop_front() else { return Ok(false) };
        self.calls += usize::from(self.on_collect);
        if self.on_collect && self.calls == self.fail_at {
            return Err(CodeError::Device("cuEventSynchronize: CUDA_ERROR_LAUNCH_FAILED".into()));
        }
        out.reports.extend(bits.iter().map(|_| UnitReport { bits: 1, iterations: 0, blocks: 1, check: None, consumed: 4 }));
        out.bits.extend(bits);
        Ok(true)
    }
    fn in_flight(&self) -> usize {
        self.queue.len()
    }
    fn describe(&self) -> String {
        "failing test decoder".into()
    }
}

#[test]
fn a_decoder_error_mid_stream_fails_the_flowgraph_with_its_message() {
    // 40 batches; the failure comes with batches in flight and more input waiting.
    let llrs = vec![1.0f32; 4 * 8 * 40];
    for (on_collect, fail_at, want) in [(false, 7, "CUDA_ERROR_ILLEGAL_ADDRESS"), (true, 5, "CUDA_ERROR_LAUNCH_FAILED"), (false, 1, "ILLEGAL_ADDRESS")] {
        let errors = FirstError::default();
        let dec = Failing::new(fail_at, on_collect);
        let err = run_through::<f32, u8>(llrs.clone(), &errors, |fg| fg.add(TestDecoder::new(Box::new(dec)).unwrap().report_to(&errors)).into())
            .unwrap_err();
        assert!(err.contains(want), "{err}");
    }
    // The same decoder without a failure passes every bit.
    let errors = FirstError::default();
    let dec = Failing::new(usize::MAX, true);
    let got: Vec<u8> = run_through(llrs, &errors, |fg| fg.add(TestDecoder::new(Box::new(dec)).unwrap().report_to(&errors)).into()).unwrap();
    assert_eq!(got, vec![0u8; 8 * 40]);
}

#[test]
fn units_of_different_lengths_decode_with_soft_output_and_reports() {
    use crate::codes::decode::tests::sent;
    // A framer's stream: four 3-copy units, then two 5-copy units (format 1).
    let mut items = Vec::new();
    let mut want = Vec::new();
    for u in 0..6u8 {
        let (bits, copies): (Vec<u8>, usize) = if u < 4 { (vec![u & 1, 1, 0, u >> 1 & 1], 3) } else { (vec![1, u & 1], 5) };
        items.extend(sent(&bits, copies, None));
        want.extend(bits);
    }
    let tags = vec![
        (0, Tag::NamedUsize(UNIT_LLRS_TAG.into(), 12)),
        (48, Tag::NamedUsize(UNIT_LLRS_TAG.into(), 10)),
        (48, Tag::NamedUsize(UNIT_FORMAT_TAG.into(), 1)),
        (50, Tag::String("passes".into())),
    ];
    let options = DecoderOptions { report_tags: true, soft: true, ..Default::default() };
    let block = TestDecoder::build(Box::new(Repetition::new()), None, options).unwrap();
    assert_eq!(block.describe(), "repetition test decoder");
    let stats = block.stats();
    let (bits, out_tags, soft) = run_block(items, tags, None, block).unwrap();
    let c = stats.counts();
    assert_eq!((c.units, c.bits, c.iterations, c.checked, c.failed), (6, 20, 6, 6, 0));
    assert!(c.batches >= 1 && c.submit_s > 0.0 && c.collect_s > 0.0, "{c:?}");
    assert_eq!(bits, want);
    assert_eq!(soft.len(), bits.len());
    assert!(soft.iter().zip(&bits).all(|(s, b)| (*s < 0.0) == (*b == 1)));
    let reports: Vec<(usize, UnitReport)> = out_tags
        .iter()
        .filter_map(|(i, t)| match t {
            Tag::NamedAny(name, r) if name == UNIT_REPORT_TAG => r.downcast_ref::<UnitReport>().map(|r| (*i, *r)),
            _ => None,
        })
        .collect();
    let at: Vec<usize> = reports.iter().map(|(i, _)| *i).collect();
    assert_eq!(at, [0, 4, 8, 12, 16, 18], "one report on the first bit of each unit");
    assert_eq!(reports[5].1, UnitReport { bits: 2, iterations: 1, blocks: 1, check: Some(true), consumed: 10 });
    // The tag on item 50 (unit 4, which starts at item 48 and bit 16) goes to that unit's first bit.
    assert!(out_tags.contains(&(16, Tag::String("passes".into()))), "{out_tags:?}");
    // A unit the decoder does not take fails with both lengths named.
    let block = TestDecoder::new(Box::new(Repetition::new())).unwrap();
    let e = run_block(vec![1.0; 14], vec![(0, Tag::NamedUsize(UNIT_LLRS_TAG.into(), 7))], None, block).unwrap_err();
    assert!(e.contains("the framer cuts units of 7 LLRs but the decoder takes units of 12"), "{e}");
    // Soft output from a decoder without it is refused when the block is built.
    let e = TestDecoder::build(Box::new(Failing::new(usize::MAX, false)), None, options).err().unwrap();
    assert!(e.to_string().contains("hard decisions only"), "{e}");
}

#[test]
fn a_stalled_input_gets_its_partial_batch_decoded_after_the_latency_bound() {
    // One unit of a decoder that takes three per batch, then the input
    // stalls until the partial batch's bits show (or, failing that, for a while).
    let items: Vec<f32> = crate::codes::decode::tests::sent(&[0, 1, 1, 0, 1, 0, 0, 1, 1, 1, 1, 0], 3, None);
    for (latency, stall_for, output_first) in [(Duration::from_millis(20), Duration::from_secs(600), true), (Duration::from_secs(3600), Duration::from_millis(100), false)] {
        let options = DecoderOptions { max_latency: latency, ..Default::default() };
        let block = TestDecoder::build(Box::new(Repetition::new()), None, options).unwrap();
        let stall = Stall::new(12, stall_for);
        let (bits, _, _) = run_block(items.clone(), vec![], Some(stall.clone()), block).unwrap();
        assert_eq!(bits, [0, 1, 1, 0, 1, 0, 0, 1, 1, 1, 1, 0]);
        // With a bound the partial batch's bits come while the input still
        // stalls; without one, only once it goes on.
        assert_eq!(stall.output_first.load(std::sync::atomic::Ordering::Acquire), output_first, "latency {latency:?}");
    }
}

/// Frames of 4 bits with a variable tail: symbol 0 says how many filler
/// symbols follow the 4 bits. Decoding one consumes 5 + that many symbols,
/// which only the decoder knows: a stand-in for an insertion/deletion code.
struct Drifting {
    shape: [UnitShape; 1],
    queue: VecDeque<Decoded>,
}

impl BatchDecoder<u8> for Drifting {
    fn shapes(&self) -> &[UnitShape] {
        &self.shape
    }
    fn limit(&self) -> BatchLimit {
        BatchLimit { units: 4, items: 64 }
    }
    fn depth(&self) -> usize {
        1
    }
    fn submit(&mut self, batch: &Batch<'_, u8>) -> CodeResult<()> {
        check_batch(batch, &self.shape, self.limit())?;
        let mut d = Decoded::default();
        for u in 0..batch.units() {
            let w = batch.unit(u);
            let fill = w[0] as usize;
            d.bits.extend(&w[1..5]);
            d.reports.push(UnitReport { bits: 4, iterations: 0, blocks: 1, check: None, consumed: (5 + fill).min(w.len()) });
        }
        self.queue.push_back(d);
        Ok(())
    }
    fn collect(&mut self, out: &mut Decoded) -> CodeResult<bool> {
        let Some(d) = self.queue.pop_front() else { return Ok(false) };
        out.bits.extend(d.bits);
        out.reports.extend(d.reports);
        Ok(true)
    }
    fn in_flight(&self) -> usize {
        self.queue.len()
    }
    fn describe(&self) -> String {
        "drifting test decoder".into()
    }
}

#[test]
fn a_cutter_that_learns_where_each_unit_ended_follows_the_decoder() {
    let mut stream = Vec::new();
    let mut want = Vec::new();
    for f in 0..50u8 {
        let fill = f % 4;
        let bits = [f & 1, f >> 1 & 1, f >> 2 & 1, 1];
        stream.push(fill);
        stream.extend(bits);
        stream.extend(std::iter::repeat_n(9, fill as usize));
        want.extend(bits);
    }
    let decoder = Drifting { shape: [UnitShape { items: 8, bits: 4, input: crate::codes::decode::UnitInput::UpTo }], queue: VecDeque::new() };
    let block = TestDecoder::build(Box::new(decoder), Some(Box::new(WindowCutter::new(8).unwrap())), DecoderOptions::default()).unwrap();
    let (bits, _, _) = run_block(stream, vec![], None, block).unwrap();
    assert_eq!(bits, want);
}

