//! The turbo family's block kinds: the encoder of LTE code blocks, or of
//! transport blocks through the whole chain (`tbs`, `coded`, `rv`), and the
//! turbo decoder of either (its units come from a `Framer` with `units =
//! "blocks"` and `block_llrs` = 3K + 12 or G, or from the stream itself).

use super::super::assembly::{Assembly, Node};
use super::super::params::{Args, Literal, Param, ParamType};
use super::groups::{BACKEND, DECODER_BLOCK, LLR, backend_options, build_decoder, by_llr, decoder_options, decoder_ports, llr_type};
use super::{Kind, StreamType, io};
use crate::blocks::{Reporting, TransportEncoder, TurboDecoder, TurboEncoder};
use crate::codes::decode::BatchDecoder;
use crate::codes::framing::{BlockCutter, Cutter};
use crate::codes::llr::Llr;
use crate::codes::turbo::decoder::{MAX_ITERATIONS, Precision};
use crate::codes::turbo::{self, DecoderConfig, EarlyStop, MAX_A, MAX_G, MaxStar, TransportBlock, TurboCode};
use crate::gpu::{Choice, Dematching, transport_decoder, turbo_decoder};

/// The kinds of this module.
pub(super) const KINDS: &[Kind] = &[
    Kind {
        name: "TurboEncoder",
        summary: "LTE turbo encoder: blocks of K bits to 3K + 12 coded bits, or transport blocks of A bits (tbs) to G coded bits (coded) with redundancy version rv",
        groups: &[&[BLOCK], TRANSPORT],
        ports: |_| Ok(io(Some(StreamType::U8), Some(StreamType::U8))),
        add: |a, asm| match transport(a)? {
            Some(tb) => asm.add(TransportEncoder::new(turbo::TransportEncoder::new(tb)).report_to(&asm.errors)),
            None => asm.add(TurboEncoder::new(turbo::TurboEncoder::new(code(a)?)).report_to(&asm.errors)),
        },
    },
    Kind {
        name: "TurboDecoder",
        summary: "LTE turbo decoder of code blocks or transport blocks (max-log-MAP or log-MAP, P sub-blocks with a guard), on the CPU or the GPU",
        groups: &[LLR, &[BLOCK], TRANSPORT, &[DEMATCH], DECODER, BACKEND, DECODER_BLOCK],
        ports: |a| {
            // Checked here, before the connections name a port it would not have.
            if a.has("tbs") && a.flag("soft_output")? {
                return Err(a.invalid("soft_output", "transport blocks are decoded to hard decisions only"));
            }
            decoder_ports(a, llr_type(a)?)
        },
        add: |a, asm| by_llr(a, asm, add_decoder::<i8>, add_decoder::<f32>),
    },
];

const BLOCK: Param = Param::optional("block", ParamType::Count, "code block size K, one of the 188 LTE sizes 40..=6144 (default 6144; not with tbs)");

/// A transport block through the LTE chain instead of bare code blocks.
const TRANSPORT: &[Param] = &[
    Param::optional("tbs", ParamType::Count, "transport block size A (1..=1048552): the whole LTE chain, CRC24A, segmentation with CRC24B, rate matching"),
    Param::optional("coded", ParamType::Count, "coded bits G a transport block is sent in (with tbs; at most 2^26, code rate A/G at most 1)"),
    Param::optional("rv", ParamType::Count, "redundancy version 0..=3 (with tbs; default 0)"),
];

/// Where the GPU decoder's code blocks are de-rate-matched.
const DEMATCH: Param = Param::optional(
    "dematch",
    ParamType::Choice(&["on-load", "host"]),
    "where the GPU decoder de-rate-matches a transport block's code blocks (with tbs): on-load (default: the received LLRs go to the GPU, which puts them in place) or host (3K + 12 f32 LLRs per code block go); the CPU decoder's are always de-rate-matched on the host",
);

const DECODER: &[Param] = &[
    Param::with_default("iterations", ParamType::Count, Literal::Count(8), "iterations at most, 1..=64"),
    Param::with_default(
        "algorithm",
        ParamType::Choice(&["max-log", "log-map", "log-map-linear"]),
        Literal::Text("max-log"),
        "max-log-MAP, or log-MAP with the exact or the linear correction",
    ),
    Param::optional("scaling", ParamType::Real, "extrinsic scaling in (0, 1]; default 0.75 with max-log, 1 with log-MAP"),
    Param::optional(
        "subblocks",
        ParamType::Count,
        "sub-blocks P decoded independently (1: the serial decoder); without subblocks, guard and window: serial on the CPU, P = K/48 (at most 128) with PIVIDSTW g = 8 on the GPU",
    ),
    Param::optional("guard", ParamType::Choice(&["none", "pivi", "dstw", "pividstw"]), "how sub-block edges are estimated (P > 1; default none)"),
    Param::optional("window", ParamType::Count, "training window g in stages (dstw, pividstw)"),
    Param::with_default(
        "early_stop",
        ParamType::Choice(&["never", "stable", "crc"]),
        Literal::Text("never"),
        "stop a block when an iteration's decisions equal the previous one's (stable), or when its CRC checks (crc: CRC24B, or CRC24A for a transport block of one code block; with tbs)",
    ),
    Param::with_default(
        "precision",
        ParamType::Choice(&["f32", "i16"]),
        Literal::Text("f32"),
        "the CPU decoder's metrics: f32, or i16 with saturation (twice the blocks per instruction; max-log only)",
    ),
    Param::optional(
        "input_scale",
        ParamType::Real,
        "i8 LLRs are divided by this as they are loaded (the channel's quantizer scale); log-MAP needs it with i8, max-log-MAP does not",
    ),
];

fn code(a: &Args) -> anyhow::Result<TurboCode> {
    a.about("block", TurboCode::lte(if a.has("block") { a.size("block")? } else { 6144 }))
}

/// The transport block the [`TRANSPORT`] fields describe, `None` for bare
/// code blocks; every error names its field.
fn transport(a: &Args) -> anyhow::Result<Option<TransportBlock>> {
    if !a.has("tbs") {
        for field in ["coded", "rv"] {
            if a.has(field) {
                return Err(a.invalid(field, "applies to transport blocks: give tbs too"));
            }
        }
        return Ok(None);
    }
    if a.has("block") {
        return Err(a.invalid("block", "a transport block (tbs) is cut into code blocks of its own sizes: give block or tbs"));
    }
    let tbs = a.size_in("tbs", 1..=MAX_A)?;
    if !a.has("coded") {
        return Err(a.missing("coded", "G, the coded bits each transport block is sent in; 3·(A + 24) is a code rate of about 1/3"));
    }
    let g = a.size_in("coded", 1..=MAX_G)?;
    let rv = if a.has("rv") { a.size_in("rv", 0..=3)? as u8 } else { 0 };
    // What is left (a code rate above 1) is G's fault.
    a.about("coded", TransportBlock::new(tbs, g, rv)).map(Some)
}

/// The decoder configuration of the [`DECODER`] fields, checked for every
/// code block size of `codes` (`tb`'s, when it decodes transport blocks).
fn config(a: &Args, tb: Option<&TransportBlock>, codes: &[TurboCode]) -> anyhow::Result<DecoderConfig> {
    let max_star: MaxStar = a.about("algorithm", a.text("algorithm")?.parse())?;
    let k = codes.iter().map(TurboCode::k).min().unwrap_or(0);
    let early_stop = match (a.text("early_stop")?, tb) {
        ("stable", _) => EarlyStop::Stable,
        ("crc", Some(tb)) if tb.segmentation().c == 1 => EarlyStop::Crc24A,
        ("crc", Some(_)) => EarlyStop::Crc24B,
        ("crc", None) => return Err(a.invalid("early_stop", "bare code blocks carry no CRC: decode transport blocks (tbs)")),
        _ => EarlyStop::Never,
    };
    let cfg = DecoderConfig {
        max_star,
        scaling: a.real_opt("scaling")?.map_or(if max_star == MaxStar::Max { 0.75 } else { 1.0 }, |s| s as f32),
        iterations: a.size_in("iterations", 1..=MAX_ITERATIONS)?,
        early_stop,
        subblocks: if a.has("subblocks") { a.size_in("subblocks", 1..=k)? } else { 1 },
        guard: a.about("guard", a.text_opt("guard")?.unwrap_or("none").parse())?,
        window: if a.has("window") { a.size_in("window", 0..=k)? } else { 0 },
    };
    for code in codes {
        cfg.check(code.k()).map_err(|(field, e)| a.invalid(field, e))?;
    }
    if cfg.subblocks == 1 && cfg.guard != turbo::Guard::None {
        return Err(a.invalid("guard", "a guard needs subblocks > 1"));
    }
    Ok(cfg)
}

fn add_decoder<T: Llr>(a: &Args, asm: &mut Assembly) -> anyhow::Result<Node> {
    let tb = transport(a)?;
    let codes = match &tb {
        Some(tb) => tb.codes(),
        None => vec![code(a)?],
    };
    let cfg = config(a, tb.as_ref(), &codes)?;
    let scale = match (a.real_opt("input_scale")?, T::NAME, cfg.max_star) {
        (Some(s), _, _) if s.is_finite() && s > 0.0 => s as f32,
        (Some(_), _, _) => return Err(a.invalid("input_scale", "give a finite factor > 0")),
        (None, "i8", MaxStar::Exact | MaxStar::Linear) => {
            return Err(a.missing("input_scale", "log-MAP on i8 LLRs needs the quantizer's scale (max-log-MAP does not)"));
        }
        (None, _, _) => 1.0,
    };
    let precision = if a.text("precision")? == "i16" { Precision::I16 } else { Precision::F32 };
    if precision == Precision::I16 && cfg.max_star != MaxStar::Max {
        return Err(a.invalid("precision", "i16 metrics decode with max-log-MAP only"));
    }
    let options = backend_options(a, asm.backend)?;
    let block_options = decoder_options(a)?;
    let cutter: Option<Box<dyn Cutter<T>>> = match (a.text("input")?, &tb) {
        ("stream", Some(tb)) => Some(Box::new(a.about("coded", BlockCutter::fixed(tb.g()))?.naming("transport block"))),
        ("stream", None) => Some(Box::new(a.about("block", BlockCutter::fixed(codes[0].coded_len()))?)),
        _ => None,
    };
    let auto_split = !(a.has("subblocks") || a.has("guard") || a.has("window"));
    let dematching: Dematching = match (a.text_opt("dematch")?, &tb) {
        (Some(_), None) => return Err(a.invalid("dematch", "applies to transport blocks: give tbs too")),
        (Some(d), Some(_)) => a.about("dematch", d.parse::<Dematching>())?,
        (None, _) => Dematching::default(),
    };
    let build = || -> anyhow::Result<(Box<dyn BatchDecoder<T>>, Choice)> {
        if let Some(tb) = &tb {
            let (decoder, choice) = transport_decoder::<T>(tb, cfg, scale, precision, auto_split, dematching, &options)?;
            return Ok((Box::new(decoder), choice));
        }
        turbo_decoder::<T>(codes[0].clone(), cfg, scale, precision, auto_split, block_options.soft, &options)
    };
    let (decoder, choice) = build_decoder(a, asm, &options, build)?;
    let block = a.whole(TurboDecoder::build(decoder, cutter, block_options))?.report_to(&asm.errors);
    asm.note_decoder(choice, block.describe(), block.stats());
    asm.add(block)
}
