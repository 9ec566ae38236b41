//! Framer and Viterbi decoder blocks lose and invent no bit at the end of a
//! stream, whatever its length: tiled streams of awkward lengths (shorter than
//! a tile, one off a unit, ...), punctured or not, depunctured by the block or
//! by the decoder, and terminated frames. A
//! stream that ends inside a frame, and a framer and decoder that disagree on
//! the unit, fail with one clear message.

use futuresdr::runtime::Flowgraph;
use gpufec::blocks::*;
use gpufec::codes::BatchDecoder;
use gpufec::codes::conv::{
    self, ConvCode, CpuViterbi, DepuncturedUnits, EncoderMode, FrameConfig, PuncturePattern, TileConfig, Tiler, Traceback, Trellis, ViterbiMode,
};
use gpufec::codes::framing::{BlockCutter, Cutter};
use std::sync::Arc;

/// How the framer cuts: tiles of the depunctured stream, tiles of the
/// punctured stream (the decoder depunctures), or code blocks.
#[derive(Clone)]
enum Framing {
    Tiles { tile: TileConfig, n: usize },
    PuncturedTiles { tile: TileConfig, pattern: PuncturePattern },
    Blocks { llrs: usize },
}

impl Framing {
    fn cutter(&self) -> Box<dyn Cutter<f32>> {
        match self {
            Framing::Tiles { tile, n } => Box::new(Tiler::new(*tile, *n)),
            Framing::PuncturedTiles { tile, pattern } => Box::new(Tiler::punctured(*tile, pattern.clone()).unwrap()),
            Framing::Blocks { llrs } => Box::new(BlockCutter::fixed(*llrs).unwrap()),
        }
    }
}

fn k7() -> Arc<Trellis> {
    Arc::new(Trellis::new(&ConvCode::k7_171_133()))
}

/// Send `bits` random bits through encoder, puncturer, a noiseless channel,
/// depuncturer, framer and decoder, and count them against the source. With
/// [`Framing::PuncturedTiles`] the depuncturer passes the stream on and the
/// decoder depunctures each unit.
fn run(bits: u64, rate: &str, encoder: EncoderMode, framing: Framing, mode: ViterbiMode) -> Result<BerCounts, String> {
    let pattern = PuncturePattern::standard(rate).unwrap();
    let errors = FirstError::default();
    let plain = Box::new(CpuViterbi::<f32>::new(k7(), mode, 2).unwrap().with_batch_units(2));
    let (decoder, depuncture): (Box<dyn BatchDecoder<f32>>, _) = match (&framing, mode) {
        (Framing::PuncturedTiles { pattern, .. }, ViterbiMode::Tiled(tile)) => {
            (Box::new(DepuncturedUnits::new(plain, tile, pattern.clone()).unwrap()), PuncturePattern::none(1))
        }
        _ => (plain, pattern.clone()),
    };
    let sink = BerSink::new(100, BerStop::default()).unwrap().report_to(&errors);
    let counters = sink.counters();
    // Readers before writers (see `gpufec::blocks`).
    let mut fg = Flowgraph::new();
    let ber = fg.add(sink);
    let dec = fg.add(ViterbiDecoder::new(decoder).unwrap().report_to(&errors));
    let fra = fg.add(Framer::<f32>::new(framing.cutter()).unwrap().report_to(&errors));
    let n = depuncture.n();
    let dep = fg.add(Depuncture::<f32>::new(depuncture, n).unwrap().report_to(&errors));
    let llr = fg.add(LlrDemapper::<f32>::new(60.0, pattern.rate()).unwrap().report_to(&errors));
    let map = fg.add(BpskMapper::<f32>::new());
    let pun = fg.add(Puncture::new(pattern, 2).unwrap());
    let enc = fg.add(ConvEncoder::new(conv::ConvEncoder::new(k7(), encoder).unwrap()).report_to(&errors));
    let src = fg.add(RandomBits::new(5, Some(bits)));
    let chain = [src.id(), enc.id(), pun.id(), map.id(), llr.id(), dep.id(), fra.id(), dec.id()];
    for w in chain.windows(2) {
        fg.stream_dyn(w[0], "output", w[1], "input").unwrap();
    }
    fg.stream_dyn(dec, "output", ber, "decoded").unwrap();
    fg.stream_dyn(src, "output", ber, "reference").unwrap();
    match runtime().run(fg) {
        Ok(_) => Ok(counters.counts()),
        Err(e) => Err(errors.message().unwrap_or_else(|| e.to_string())),
    }
}

#[test]
fn tiled_streams_of_any_length() {
    // f = 42 starts every tile on a period boundary of rates 2/3, 3/4 and 7/8.
    let tile = TileConfig::new(42, 8, 12, Traceback::Parallel { f0: 8 }).unwrap().with_group(3).unwrap();
    // Unit = 126 bits, batch = 2 units.
    for bits in [1u64, 7, 41, 42, 43, 125, 126, 127, 251, 252, 253, 1000, 4097] {
        for rate in ["1/2", "2/3", "3/4", "7/8"] {
            let mut framings = vec![("block", Framing::Tiles { tile, n: 2 })];
            if rate != "1/2" {
                framings.push(("decoder", Framing::PuncturedTiles { tile, pattern: PuncturePattern::standard(rate).unwrap() }));
            }
            for (at, framing) in framings {
                let c = run(bits, rate, EncoderMode::Streaming, framing, ViterbiMode::Tiled(tile)).unwrap();
                let what = format!("{bits} bits at rate {rate}, depunctured by the {at}");
                assert_eq!(c.bits, bits, "{what}");
                // Whole frames of 100 only; the rest is counted in bits.
                assert_eq!((c.frames, c.partial_bits), (bits / 100, bits % 100), "{what}");
                // Without a tail, the last bits of a heavily punctured stream are
                // ambiguous even without noise; at rate 1/2 every bit is decided.
                if rate == "1/2" {
                    assert_eq!(c.bit_errors, 0, "{what}");
                }
            }
        }
    }
}

#[test]
fn terminated_frames_and_a_frame_cut_short() {
    let frame = FrameConfig::new(50, true).unwrap();
    let framing = Framing::Blocks { llrs: frame.stages(7) * 2 };
    let c = run(250, "1/2", EncoderMode::Terminated { frame: 50 }, framing.clone(), ViterbiMode::Frame(frame)).unwrap();
    assert_eq!((c.bits, c.bit_errors), (250, 0));
    let e = run(275, "1/2", EncoderMode::Terminated { frame: 50 }, framing, ViterbiMode::Frame(frame)).unwrap_err();
    assert!(e.contains("block 'ConvEncoder-7'") && e.contains("ended inside a terminated frame"), "{e}");
}

#[test]
fn a_framer_and_decoder_that_disagree_fail_clearly() {
    let framer_tile = TileConfig::new(32, 8, 12, Traceback::Serial).unwrap().with_group(3).unwrap();
    let decoder_tile = TileConfig::new(32, 8, 16, Traceback::Serial).unwrap().with_group(3).unwrap();
    let framing = Framing::Tiles { tile: framer_tile, n: 2 };
    let e = run(1000, "1/2", EncoderMode::Streaming, framing, ViterbiMode::Tiled(decoder_tile)).unwrap_err();
    assert!(e.contains("the framer cuts units of 232 LLRs but the decoder takes units of 240"), "{e}");
}
