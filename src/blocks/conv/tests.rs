//! The Viterbi decoder block with the family's own decoder and cutter: units
//! in order, as the decoder alone decodes them, whether a framer cuts the
//! tiles or the block itself; NaN and partial units fail the flowgraph; tags
//! follow their items; packed output is the bits packed.

use super::ViterbiDecoder;
use crate::blocks::testing::{BlockOutput, Stall, run_decoder_block, run_through};
use crate::blocks::{DecoderOptions, FirstError, Framer, Reporting, VALID_BITS_TAG, runtime};
use crate::blocks::testing::{RecordingSink, TaggedSource};
use crate::codes::conv::{ConvCode, CpuViterbi, FrameConfig, TileConfig, Tiler, Traceback, Trellis, ViterbiMode};
use crate::codes::decode::{Batch, BatchDecoder, BatchLimit, Decoded, UnitShape};
use crate::codes::error::CodeResult;
use futuresdr::runtime::Flowgraph;
use futuresdr::runtime::dev::Tag;
use std::sync::Arc;
use std::time::Duration;

/// Run `items` through `block`; the bits and tags out, and the soft output.
fn run_block(items: Vec<f32>, tags: Vec<(usize, Tag)>, stall: Option<Stall>, block: ViterbiDecoder<f32>) -> Result<BlockOutput, String> {
    let errors = FirstError::default();
    run_decoder_block(items, tags, stall, false, &errors, |fg| fg.add(block.report_to(&errors)).into())
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
        fg.add(ViterbiDecoder::build(cpu(mode, 3), Some(Box::new(Tiler::new(tile, 2))), DecoderOptions::default()).unwrap()).into()
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

#[test]
fn tags_follow_their_items_to_the_bits_decoded_from_them() {
    // The block cuts tiles itself: LLR 2s is stage s, whose bit is bit s.
    let tile = TileConfig::new(32, 8, 12, Traceback::Serial).unwrap().with_group(2).unwrap();
    let mode = ViterbiMode::Tiled(tile);
    let llrs = vec![1.0f32; 2 * 1000];
    let tags: Vec<(usize, Tag)> = [0usize, 1, 127, 128, 1333, 1998, 1999].iter().map(|&i| (i, Tag::Id(i as u64))).collect();
    let block = ViterbiDecoder::build(cpu(mode, 2), Some(Box::new(Tiler::new(tile, 2))), DecoderOptions::default()).unwrap();
    let (bits, out_tags, _) = run_block(llrs.clone(), tags, None, block).unwrap();
    assert_eq!(bits.len(), 1000);
    let want: Vec<(usize, Tag)> = [0usize, 1, 127, 128, 1333, 1998, 1999].iter().map(|&i| (i / 2, Tag::Id(i as u64))).collect();
    assert_eq!(out_tags, want);
    // Through a framer, a tag goes to the first bit of its unit (64 bits each).
    let errors = FirstError::default();
    let mut fg = Flowgraph::new();
    let (sink, record) = RecordingSink::<u8>::new(None);
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
    let block = |packed| ViterbiDecoder::build(cpu(mode, 3), Some(Box::new(Tiler::new(tile, 2))), DecoderOptions { packed, ..Default::default() }).unwrap();
    let (bits, _, _) = run_block(llrs.clone(), tags(), None, block(false)).unwrap();
    assert_eq!(bits.len(), 1003);
    let mut want = vec![0u8; bits.len().div_ceil(8)];
    crate::codes::packed::par_pack_msb(&bits, &mut want);
    // A decoder that hands its bits packed itself gives the same bytes and tags.
    let packing = || ViterbiDecoder::build(Box::new(Packing(cpu(mode, 3), false)), Some(Box::new(Tiler::new(tile, 2))), DecoderOptions { packed: true, ..Default::default() }).unwrap();
    for pause in [None, Some(Stall::new(700, Duration::from_millis(150)))] {
        for (name, block) in [("packed by the block", block(true)), ("packed by the decoder", packing())] {
            let (bytes, out_tags, _) = run_block(llrs.clone(), tags(), pause.clone(), block).unwrap();
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

#[test]
fn a_framer_cuts_the_units_of_the_tiler() {
    let tile = TileConfig::new(16, 4, 6, Traceback::Serial).unwrap().with_group(3).unwrap();
    let llrs: Vec<f32> = (0..2 * 1000).map(|i| i as f32).collect();
    let mut want = Vec::new();
    let mut tiler = Tiler::new(tile, 2);
    tiler.push(&llrs, &mut want);
    assert_eq!(tiler.finish(&mut want).unwrap(), Some(1000 % 48));
    let errors = FirstError::default();
    let got: Vec<f32> =
        run_through(llrs, &errors, |fg| fg.add(Framer::<f32>::new(Box::new(Tiler::new(tile, 2))).unwrap()).into())
            .unwrap();
    assert_eq!(got, want);
}
