//! The decoder block on the decoder contract: units in order, units of
//! different lengths, soft output, reports as tags, tags passed through,
//! a partial batch flushed when the input stalls, a cutter that learns from
//! the decoder, and every failure as one message.

use super::*;
use crate::blocks::testing::{RecordingSink, TaggedSource, run_through};
use crate::blocks::{FirstError, Framer, UNIT_LLRS_TAG, UNIT_FORMAT_TAG, UNIT_REPORT_TAG, VALID_BITS_TAG, runtime};
use crate::codes::conv::{ConvCode, CpuViterbi, FrameConfig, TileConfig, Tiler, Traceback, Trellis, ViterbiMode};
use crate::codes::decode::{Batch, BatchLimit, Decoded, UnitReport, UnitShape, check_batch};
use crate::codes::error::{CodeError, CodeResult};
use crate::codes::framing::WindowCutter;
use futuresdr::runtime::Flowgraph;
use futuresdr::runtime::dev::Tag;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

decoder_block! {
    /// The decoder block around the test decoders.
    TestDecoder
}

fn k7() -> Arc<Trellis> {
    Arc::new(Trellis::new(&ConvCode::k7_171_133()))
}

fn cpu(mode: ViterbiMode, batch: usize) -> Box<dyn BatchDecoder<f32>> {
    Box::new(CpuViterbi::<f32>::new(k7(), mode, 2).unwrap().with_batch_units(batch))
}

#[test]
fn decodes_units_in_order_like_the_decoder_alone() {
    let tile = TileConfig::new(32, 8, 12, Traceback::Serial).unwrap().with_group(2).unwrap();
    let mode = ViterbiMode::Tiled(tile);
    let llrs: Vec<f32> = (0..2 * 64 * 37).map(|i| ((i * 7919 % 200) as f32 - 100.0) * 0.05).collect();
    let mut units = Vec::new();
    Tiler::new(tile, 2).push(&llrs, &mut units);
    let mut want = Vec::new();
    cpu(mode, 3).decode_all(&units, &mut want).unwrap();
    let errors = FirstError::default();
    let got: Vec<u8> = run_through(units, &errors, |fg| fg.add(ViterbiDecoder::new(cpu(mode, 3)).unwrap()).into()).unwrap();
    assert_eq!(got, want);
    // The same stream cut by the block itself.
    let mut tiler = Tiler::new(tile, 2);
    let mut units = Vec::new();
    tiler.push(&llrs, &mut units);
    tiler.finish(&mut units).unwrap();
    let mut want = Vec::new();
    cpu(mode, 3).decode_all(&units, &mut want).unwrap();
    want.truncate(64 * 37);
    let got: Vec<u8> = run_through(llrs, &errors, |fg| {
        fg.add(TestDecoder::build(cpu(mode, 3), Some(Box::new(Tiler::new(tile, 2))), DecoderOptions::default()).unwrap()).into()
    })
    .unwrap();
    assert_eq!(got, want);
}

#[test]
fn nan_and_partial_units_fail_the_flowgraph() {
    let mode = ViterbiMode::Frame(FrameConfig::new(10, true).unwrap());
    let mut llrs = vec![1.0f32; 32 * 5];
    llrs[40] = f32::NAN;
    let errors = FirstError::default();
    let err = run_through::<f32, u8>(llrs, &errors, |fg| fg.add(ViterbiDecoder::new(cpu(mode, 2)).unwrap().report_to(&errors)).into())
        .unwrap_err();
    assert!(err.contains("NaN or infinite"), "{err}");
    let errors = FirstError::default();
    let err = run_through::<f32, u8>(vec![1.0; 32 * 2 + 5], &errors, |fg| {
        fg.add(ViterbiDecoder::new(cpu(mode, 2)).unwrap().report_to(&errors)).into()
    })
    .unwrap_err();
    assert!(err.contains("inside a code block (5 of 32 LLRs present)"), "{err}");
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
        out.reports.extend(bits.iter().map(|_| UnitReport { bits: 1, iterations: 0, check: None, consumed: 4 }));
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
        let err = run_through::<f32, u8>(llrs.clone(), &errors, |fg| fg.add(ViterbiDecoder::new(Box::new(dec)).unwrap().report_to(&errors)).into())
            .unwrap_err();
        assert!(err.contains(want), "{err}");
    }
    // The same decoder without a failure passes every bit.
    let errors = FirstError::default();
    let dec = Failing::new(usize::MAX, true);
    let got: Vec<u8> = run_through(llrs, &errors, |fg| fg.add(ViterbiDecoder::new(Box::new(dec)).unwrap().report_to(&errors)).into()).unwrap();
    assert_eq!(got, vec![0u8; 8 * 40]);
}

/// Run `items` (with `tags`, stalling as `pause` says) through `block`; the
/// bits and tags out, the soft output when asked, and when the first bit came.
#[allow(clippy::type_complexity)]
fn run_block<T: CpuSample + Copy>(
    items: Vec<T>,
    tags: Vec<(usize, Tag)>,
    pause: Option<(usize, Duration)>,
    block: TestDecoder<T>,
) -> Result<(Vec<u8>, Vec<(usize, Tag)>, Vec<f32>, Duration), String> {
    let errors = FirstError::default();
    let soft = block.soft.len() == 1;
    let mut fg = Flowgraph::new();
    let (bits_sink, bits) = RecordingSink::<u8>::new();
    let (soft_sink, soft_record) = RecordingSink::<f32>::new();
    let b = fg.add(bits_sink);
    let s = soft.then(|| fg.add(soft_sink));
    let dec = fg.add(block.report_to(&errors));
    let src = fg.add(TaggedSource::new(items, tags, pause));
    fg.stream_dyn(src, "output", dec, "input").map_err(|e| e.to_string())?;
    fg.stream_dyn(dec, "output", b, "input").map_err(|e| e.to_string())?;
    if let Some(s) = s {
        fg.stream_dyn(dec, "soft[0]", s, "input").map_err(|e| e.to_string())?;
    }
    let started = Instant::now();
    runtime().run(fg).map_err(|e| errors.message().unwrap_or_else(|| e.to_string()))?;
    let r = bits.lock().unwrap();
    let first = r.first_at.map_or(Duration::MAX, |t| t - started);
    Ok((r.items.clone(), r.tags.clone(), soft_record.lock().unwrap().items.clone(), first))
}

#[test]
fn units_of_different_lengths_decode_with_soft_output_and_reports() {
    use crate::codes::decode::tests::{Repetition, sent};
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
    let (bits, out_tags, soft, _) = run_block(items, tags, None, block).unwrap();
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
    assert_eq!(reports[5].1, UnitReport { bits: 2, iterations: 1, check: Some(true), consumed: 10 });
    // The tag on item 50 (unit 4, which starts at item 48 and bit 16) goes to that unit's first bit.
    assert!(out_tags.contains(&(16, Tag::String("passes".into()))), "{out_tags:?}");
    // A unit the decoder does not take fails with both lengths named.
    let block = TestDecoder::new(Box::new(Repetition::new())).unwrap();
    let e = run_block(vec![1.0; 14], vec![(0, Tag::NamedUsize(UNIT_LLRS_TAG.into(), 7))], None, block).unwrap_err();
    assert!(e.contains("the framer cuts units of 7 LLRs but the decoder takes units of 12"), "{e}");
    // Soft output from a decoder without it is refused when the block is built.
    let e = TestDecoder::build(cpu(ViterbiMode::Frame(FrameConfig::new(10, true).unwrap()), 1), None, options).err().unwrap();
    assert!(e.to_string().contains("hard decisions only"), "{e}");
}

#[test]
fn tags_follow_their_items_to_the_bits_decoded_from_them() {
    // The block cuts tiles itself: LLR 2s is stage s, whose bit is bit s.
    let tile = TileConfig::new(32, 8, 12, Traceback::Serial).unwrap().with_group(2).unwrap();
    let mode = ViterbiMode::Tiled(tile);
    let llrs = vec![1.0f32; 2 * 1000];
    let tags: Vec<(usize, Tag)> = [0usize, 1, 127, 128, 1333, 1998, 1999].iter().map(|&i| (i, Tag::Id(i as u64))).collect();
    let block = TestDecoder::build(cpu(mode, 2), Some(Box::new(Tiler::new(tile, 2))), DecoderOptions::default()).unwrap();
    let (bits, out_tags, _, _) = run_block(llrs.clone(), tags, None, block).unwrap();
    assert_eq!(bits.len(), 1000);
    let want: Vec<(usize, Tag)> = [0usize, 1, 127, 128, 1333, 1998, 1999].iter().map(|&i| (i / 2, Tag::Id(i as u64))).collect();
    assert_eq!(out_tags, want);
    // Through a framer, a tag goes to the first bit of its unit (64 bits each).
    let errors = FirstError::default();
    let mut fg = Flowgraph::new();
    let (sink, record) = RecordingSink::<u8>::new();
    let snk = fg.add(sink);
    let dec = fg.add(ViterbiDecoder::new(cpu(mode, 2)).unwrap().report_to(&errors));
    let fra = fg.add(Framer::<f32>::new(Box::new(Tiler::new(tile, 2))).unwrap());
    let src = fg.add(TaggedSource::new(llrs, vec![(1333, Tag::Id(7))], None));
    fg.stream_dyn(src, "output", fra, "input").unwrap();
    fg.stream_dyn(fra, "output", dec, "input").unwrap();
    fg.stream_dyn(dec, "output", snk, "input").unwrap();
    runtime().run(fg).unwrap();
    let r = record.lock().unwrap();
    assert_eq!(r.items.len(), 1000);
    assert_eq!(r.tags, vec![(1333 / 2 / 64 * 64, Tag::Id(7))]);
}

#[test]
fn a_stalled_input_gets_its_partial_batch_decoded_after_the_latency_bound() {
    // 10 units of a decoder that takes 256 per batch, then the input stalls for 1.5 s.
    let mode = ViterbiMode::Frame(FrameConfig::new(10, true).unwrap());
    let llrs = vec![1.0f32; 32 * 12];
    for (latency, early) in [(Duration::from_millis(50), true), (Duration::from_secs(600), false)] {
        let options = DecoderOptions { max_latency: latency, ..Default::default() };
        let block = TestDecoder::build(cpu(mode, 256), None, options).unwrap();
        let (bits, _, _, first) = run_block(llrs.clone(), vec![], Some((32 * 10, Duration::from_millis(1500))), block).unwrap();
        assert_eq!(bits, vec![0u8; 120]);
        // With the bound, bits come long before the input resumes; without it, only at its end.
        assert_eq!(first < Duration::from_millis(1000), early, "latency {latency:?}: first bits after {first:?}");
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
            d.reports.push(UnitReport { bits: 4, iterations: 0, check: None, consumed: (5 + fill).min(w.len()) });
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
    let (bits, _, _, _) = run_block(stream, vec![], None, block).unwrap();
    assert_eq!(bits, want);
}

/// Packed output is the bit output packed, its tags on the bytes of their
/// bits and the last byte's real bits named, whether the input stalls or not.
#[test]
fn packed_output_is_the_bits_packed_with_their_tags() {
    let tile = TileConfig::new(32, 8, 12, Traceback::Serial).unwrap().with_group(2).unwrap();
    let mode = ViterbiMode::Tiled(tile);
    // 1003 stages: the last byte holds 3 real bits.
    let llrs: Vec<f32> = (0..2 * 1003).map(|i| ((i * 7919 % 200) as f32 - 100.0) * 0.05).collect();
    let marks = [0usize, 17, 640, 1333, 2005];
    let tags = || marks.iter().map(|&i| (i, Tag::Id(i as u64))).collect::<Vec<_>>();
    let block = |packed| TestDecoder::build(cpu(mode, 3), Some(Box::new(Tiler::new(tile, 2))), DecoderOptions { packed, ..Default::default() }).unwrap();
    let (bits, _, _, _) = run_block(llrs.clone(), tags(), None, block(false)).unwrap();
    assert_eq!(bits.len(), 1003);
    let mut want = vec![0u8; bits.len().div_ceil(8)];
    crate::codes::packed::par_pack_msb(&bits, &mut want);
    // A decoder that hands its bits packed itself gives the same bytes and tags.
    let packing = || TestDecoder::build(Box::new(Packing(cpu(mode, 3), false)), Some(Box::new(Tiler::new(tile, 2))), DecoderOptions { packed: true, ..Default::default() }).unwrap();
    for pause in [None, Some((700, Duration::from_millis(150)))] {
        for (name, block) in [("packed by the block", block(true)), ("packed by the decoder", packing())] {
            let (bytes, out_tags, _, _) = run_block(llrs.clone(), tags(), pause, block).unwrap();
            assert_eq!(bytes, want, "{name}, pause {pause:?}");
            let mut want_tags: Vec<(usize, Tag)> = marks.iter().map(|&i| (i / 2 / 8, Tag::Id(i as u64))).collect();
            want_tags.push((125, Tag::NamedUsize(VALID_BITS_TAG.to_string(), 3)));
            assert_eq!(out_tags, want_tags, "{name}, pause {pause:?}");
        }
    }
}

/// A decoder that packs its bits when asked (as a GPU decoder does): the
/// inner decoder's bits of each unit, packed MSB first.
struct Packing(Box<dyn BatchDecoder<f32>>, bool);

impl BatchDecoder<f32> for Packing {
    fn shapes(&self) -> &[UnitShape] {
        self.0.shapes()
    }
    fn limit(&self) -> BatchLimit {
        self.0.limit()
    }
    fn depth(&self) -> usize {
        self.0.depth()
    }
    fn submit(&mut self, batch: &Batch<'_, f32>) -> CodeResult<()> {
        self.0.submit(batch)
    }
    fn collect(&mut self, out: &mut Decoded) -> CodeResult<bool> {
        let mut d = Decoded::default();
        let got = self.0.collect(&mut d)?;
        assert!(d.bits.len().is_multiple_of(8), "test units are whole bytes");
        if self.1 {
            let at = out.packed.len();
            out.packed.resize(at + d.bits.len() / 8, 0);
            crate::codes::packed::par_pack_msb(&d.bits, &mut out.packed[at..]);
        } else {
            out.bits.extend_from_slice(&d.bits);
        }
        out.reports.extend_from_slice(&d.reports);
        Ok(got)
    }
    fn in_flight(&self) -> usize {
        self.0.in_flight()
    }
    fn describe(&self) -> String {
        self.0.describe()
    }
    fn pack_bits(&mut self) -> bool {
        self.1 = true;
        true
    }
}
