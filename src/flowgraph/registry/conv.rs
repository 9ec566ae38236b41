//! The convolutional family's block kinds: encoder, puncturer, depuncturer,
//! the framer of Viterbi tiles (or frames), and the Viterbi decoder.

use super::super::assembly::{Assembly, Node};
use super::super::params::{Args, Literal, Param, ParamType};
use super::groups::{BACKEND, DECODER_BLOCK, LLR, backend_options, build_decoder, by_llr, decoder_options, decoder_ports, llr_type, same_llr_in_out};
use super::{Kind, StreamType, io};
use crate::blocks::{ConvEncoder, Depuncture, Framer, Puncture, Reporting, ViterbiDecoder};
use crate::codes::conv::{self, ConvCode, EncoderMode, FrameConfig, MAX_K, MAX_N, MIN_K, PuncturePattern, TileConfig, Tiler, Trellis, ViterbiLlr, ViterbiMode};
use crate::codes::framing::{BlockCutter, Cutter, MAX_UNIT_ITEMS};
use crate::codes::llr::Llr;
use crate::gpu::{ViterbiTuning, viterbi_decoder};
use std::sync::Arc;

/// The kinds of this module.
pub(super) const KINDS: &[Kind] = &[
    Kind {
        name: "ConvEncoder",
        summary: "rate-1/n convolutional encoder, streaming or terminated frames",
        groups: &[CODE, FRAMING],
        ports: |_| Ok(io(Some(StreamType::U8), Some(StreamType::U8))),
        add: |a, asm| {
            let mode = match frame(a)? {
                None => EncoderMode::Streaming,
                Some(f) => EncoderMode::Terminated { frame: f.frame },
            };
            let encoder = a.about("frame", conv::ConvEncoder::new(trellis(a)?, mode))?;
            asm.add(ConvEncoder::new(encoder).report_to(&asm.errors))
        },
    },
    Kind {
        name: "Puncture",
        summary: "deletes the coded bits a puncturing pattern does not keep",
        groups: &[&[N, RATE_NAME, PATTERN]],
        ports: |_| Ok(io(Some(StreamType::U8), Some(StreamType::U8))),
        add: |a, asm| {
            let p = pattern(a)?;
            let n = n(a)?;
            let block = a.about("pattern", Puncture::new(p.clone(), n))?;
            if p.is_identity() { asm.wire::<Puncture>() } else { asm.add(block) }
        },
    },
    Kind {
        name: "Depuncture",
        summary: "puts erasures (LLR 0) back where the puncturer deleted bits",
        groups: &[LLR, &[N, RATE_NAME, PATTERN, DEPUNCTURE, TILE]],
        ports: same_llr_in_out,
        add: |a, asm| {
            fn add<T: Llr>(a: &Args, asm: &mut Assembly) -> anyhow::Result<Node> {
                let n = n(a)?;
                // With depuncture = "decoder" the stream passes unchanged.
                let p = punctured(a, "block", n)?.unwrap_or_else(|| PuncturePattern::none(n));
                let block = a.about("pattern", Depuncture::<T>::new(p.clone(), n))?.report_to(&asm.errors);
                // A stream that ends inside a stage is still refused, by the
                // cutter of the framer or decoder that reads it.
                if p.is_identity() { asm.wire::<Depuncture<T>>() } else { asm.add(block) }
            }
            by_llr(a, asm, add::<i8>, add::<f32>)
        },
    },
    Kind {
        name: "Framer",
        summary: "cuts an LLR stream into decoder work units (Viterbi tiles or code blocks)",
        groups: &[
            LLR,
            &[
                Param::with_default(
                    "units",
                    ParamType::Choice(&["tiles", "blocks"]),
                    Literal::Text("tiles"),
                    "overlapping Viterbi tiles of a stream, or whole code blocks",
                ),
                N,
                TILE,
                GROUP,
                RATE_NAME,
                PATTERN,
                DEPUNCTURE,
                Param::optional(
                    "block_llrs",
                    ParamType::Count,
                    "LLRs per code block (blocks), e.g. (frame + K − 1)·n for terminated frames",
                ),
            ],
        ],
        ports: same_llr_in_out,
        add: |a, asm| {
            fn add<T: Llr>(a: &Args, asm: &mut Assembly) -> anyhow::Result<Node> {
                let cutter: Box<dyn Cutter<T>> = if a.text("units")? == "tiles" {
                    tiler(a, tile(a)?, n(a)?)?
                } else {
                    if !a.has("block_llrs") {
                        return Err(a.missing("block_llrs", "it is required when units = \"blocks\""));
                    }
                    Box::new(a.about("block_llrs", BlockCutter::fixed(a.size_in("block_llrs", 1..=MAX_UNIT_ITEMS)?))?)
                };
                asm.add(a.about("units", Framer::<T>::new(cutter))?.report_to(&asm.errors))
            }
            by_llr(a, asm, add::<i8>, add::<f32>)
        },
    },
    Kind {
        name: "ViterbiDecoder",
        summary: "Viterbi decoder of tiles or terminated frames, on the CPU or the GPU",
        groups: &[
            LLR,
            CODE,
            FRAMING,
            &[TILE, GROUP, RATE_NAME, PATTERN, DEPUNCTURE, TRACEBACK],
            BACKEND,
            DECODER_BLOCK,
        ],
        ports: |a| decoder_ports(a, llr_type(a)?),
        add: |a, asm| by_llr(a, asm, add_viterbi::<i8>, add_viterbi::<f32>),
    },
];

const CODE: &[Param] = &[
    Param::with_default("k", ParamType::Count, Literal::Count(7), "constraint length K, 3..=9"),
    Param::with_default("polys", ParamType::Text, Literal::Text("171,133"), "generator polynomials in octal, comma-separated"),
];
const FRAMING: &[Param] = &[
    Param::with_default(
        "mode",
        ParamType::Choice(&["streaming", "terminated"]),
        Literal::Text("streaming"),
        "one endless stream (tiled decoding), or frames with K−1 tail bits",
    ),
    Param::optional("frame", ParamType::Count, "information bits per frame (terminated), at most 2^26"),
];
const N: Param = Param::with_default("n", ParamType::Count, Literal::Count(2), "coded bits (LLRs) per trellis stage: the code's n, 2..=4");
const RATE_NAME: Param = Param::optional(
    "rate",
    ParamType::Text,
    "standard pattern 1/2, 2/3, 3/4, 5/6 or 7/8 (1/2 if neither rate nor pattern is given)",
);
const PATTERN: Param = Param::optional(
    "pattern",
    ParamType::Text,
    "a pattern of your own, one row of 0/1 per encoder output, e.g. \"110,101\"",
);
const DEPUNCTURE: Param = Param::with_default(
    "depuncture",
    ParamType::Choice(&["block", "decoder", "auto"]),
    Literal::Text("block"),
    "where erasures go back: in the Depuncture block, or in the decoder as it loads each unit \
     (the Depuncture block then passes the stream on, and the framer cuts it punctured; \
     tile f must be a multiple of the puncturing period); auto: the decoder when f is such a \
     multiple, else the block (tiled streams only). Give all three blocks the same value, rate and tile",
);
const TILE: Param =
    Param::with_default("tile", ParamType::Text, Literal::Text("auto"), "Viterbi tile f,v1,v2 in stages, or auto: the default of the puncturing rate (256,20,20 at 1/2)");
const GROUP: Param = Param::with_default("group", ParamType::Count, Literal::Count(conv::DEFAULT_GROUP as u64), "tiles per work unit");
const TRACEBACK: Param = Param::with_default(
    "traceback",
    ParamType::Text,
    Literal::Text("serial"),
    "serial, or parallel:F0 (subframes of F0 stages)",
);

fn trellis(a: &Args) -> anyhow::Result<Arc<Trellis>> {
    let k = a.count("k")?;
    let k = u32::try_from(k).ok().filter(|k| (MIN_K..=MAX_K).contains(k));
    let k = k.ok_or_else(|| a.invalid("k", format!("constraint length must be in {MIN_K}..={MAX_K}")))?;
    let polys: Vec<&str> = a.text("polys")?.split(',').collect();
    let code = a.about("polys", ConvCode::from_octal(k, &polys))?;
    Ok(Arc::new(Trellis::new(&code)))
}

fn n(a: &Args) -> anyhow::Result<usize> {
    a.size_in("n", 2..=MAX_N)
}

fn pattern(a: &Args) -> anyhow::Result<PuncturePattern> {
    match (a.text_opt("rate")?, a.text_opt("pattern")?) {
        (Some(_), Some(_)) => Err(a.invalid("pattern", "give either rate or pattern, not both")),
        (None, Some(p)) => a.about("pattern", PuncturePattern::parse(p)),
        (rate, None) => a.about("rate", PuncturePattern::standard(rate.unwrap_or("1/2"))),
    }
}

/// The puncture pattern a block must handle: `Some` when the `depuncture`
/// field names `role` ("block" for the Depuncture block, "decoder" for the
/// framer and the decoder) and the stream is punctured; `None` when the stream
/// passes on (Depuncture) or arrives depunctured (framer, decoder). The
/// pattern must fit a code of `n` outputs.
fn punctured(a: &Args, role: &str, n: usize) -> anyhow::Result<Option<PuncturePattern>> {
    let p = pattern(a)?;
    a.about(if a.has("pattern") { "pattern" } else { "rate" }, p.check_fits(n))?;
    if p.is_identity() {
        return Ok(None);
    }
    let at = match a.text("depuncture")? {
        // Measured faster where it applies (BENCHMARKS.md): fewer bytes cross
        // PCIe and the Depuncture block's thread drops out of the chain.
        "auto" => {
            let tile = a.about("tile", TileConfig::parse(&tile_text(a)?, conv::Traceback::Serial))?;
            // One definition of where the decoder can depuncture: the punctured tiler's.
            if Tiler::<i8>::punctured(tile, p.clone()).is_ok() { "decoder" } else { "block" }
        }
        at => at,
    };
    Ok((at == role).then_some(p))
}

/// The tile geometry of the `tile`, `group` and (when the kind has it)
/// `traceback` fields; an error names the field at fault.
fn tile(a: &Args) -> anyhow::Result<TileConfig> {
    let traceback = if a.has("traceback") { a.text("traceback")? } else { "serial" };
    let group = a.size("group")?;
    TileConfig::from_text(&tile_text(a)?, traceback, group).map_err(|(field, e)| a.invalid(field.name(), e))
}

/// The `tile` field, with `auto` resolved to the default of the block's puncturing.
fn tile_text(a: &Args) -> anyhow::Result<String> {
    match a.text("tile")? {
        "auto" => Ok(conv::default_tile(&pattern(a)?)),
        t => Ok(t.to_string()),
    }
}

/// The tiler of a stream of `n` LLRs per stage, punctured when the decoder
/// depunctures.
fn tiler<T: Llr>(a: &Args, tile: TileConfig, n: usize) -> anyhow::Result<Box<dyn Cutter<T>>> {
    Ok(match punctured(a, "decoder", n)? {
        Some(p) => Box::new(a.about("tile", Tiler::punctured(tile, p))?),
        None => Box::new(Tiler::new(tile, n)),
    })
}

/// The frame of a terminated mode, `None` when streaming.
fn frame(a: &Args) -> anyhow::Result<Option<FrameConfig>> {
    match (a.text("mode")?, a.count_opt("frame")?) {
        ("streaming", None) => Ok(None),
        ("streaming", Some(_)) => Err(a.invalid("frame", "applies only to mode = \"terminated\"")),
        (_, None) => Err(a.invalid("frame", "is required when mode = \"terminated\"")),
        (_, Some(f)) => Ok(Some(a.about("frame", FrameConfig::new(a.about("frame", usize::try_from(f))?, true))?)),
    }
}

fn add_viterbi<T: ViterbiLlr>(a: &Args, asm: &mut Assembly) -> anyhow::Result<Node> {
    let trellis = trellis(a)?;
    let n = trellis.n();
    let frame = frame(a)?;
    let mode = match frame {
        Some(f) => ViterbiMode::Frame(f),
        None => ViterbiMode::Tiled(tile(a)?),
    };
    if frame.is_some() && a.text("depuncture")? != "block" && !pattern(a)?.is_identity() {
        return Err(a.invalid("depuncture", "terminated frames take depunctured LLRs; use depuncture = \"block\""));
    }
    let punctured = punctured(a, "decoder", n)?;
    let options = backend_options(a, asm.backend)?;
    let block_options = decoder_options(a)?;
    // With input = "stream" the block cuts as the framer would.
    let cutter: Option<Box<dyn Cutter<T>>> = match (a.text("input")? == "stream", mode) {
        (false, _) => None,
        (true, ViterbiMode::Tiled(t)) => Some(tiler(a, t, n)?),
        (true, ViterbiMode::Frame(f)) => Some(Box::new(a.about("frame", BlockCutter::fixed(f.stages(trellis.k()) * n))?)),
    };
    let (decoder, choice) = build_decoder(a, asm, &options, || viterbi_decoder::<T>(trellis, mode, punctured.as_ref(), &options, ViterbiTuning::default()))?;
    let block = a.whole(ViterbiDecoder::build(decoder, cutter, block_options))?.report_to(&asm.errors);
    asm.note_decoder(choice, block.describe(), block.stats());
    asm.add(block)
}
