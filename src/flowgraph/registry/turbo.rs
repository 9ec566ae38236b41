//! The turbo family's block kinds: the encoder of LTE code blocks and the
//! turbo decoder (its units come from a `Framer` with `units = "blocks"`
//! and `block_llrs = 3K + 12`, or from the stream itself).

use super::super::assembly::Assembly;
use super::super::params::{Args, Literal, Param, ParamType};
use super::groups::{BACKEND, DECODER_BLOCK, LLR, backend_options, build_decoder, by_llr, decoder_options, decoder_ports, llr_type};
use super::{Kind, StreamType, io};
use crate::blocks::{Reporting, TurboDecoder, TurboEncoder};
use crate::codes::decode::BatchDecoder;
use crate::codes::framing::{BlockCutter, Cutter};
use crate::codes::llr::Llr;
use crate::codes::turbo::decoder::{MAX_ITERATIONS, Precision};
use crate::codes::turbo::{self, CpuTurbo, DecoderConfig, EarlyStop, MaxStar, TurboCode};
use crate::gpu::{Backend, Choice, turbo_decoder};
use futuresdr::runtime::BlockId;

/// The kinds of this module.
pub(super) const KINDS: &[Kind] = &[
    Kind {
        name: "TurboEncoder",
        summary: "LTE turbo encoder: blocks of K bits to 3K + 12 coded bits",
        groups: &[&[BLOCK]],
        ports: |_| Ok(io(Some(StreamType::U8), Some(StreamType::U8))),
        add: |a, asm| asm.add(TurboEncoder::new(turbo::TurboEncoder::new(code(a)?)).report_to(&asm.errors)),
    },
    Kind {
        name: "TurboDecoder",
        summary: "LTE turbo decoder of code blocks (max-log-MAP or log-MAP, P sub-blocks with a guard), on the CPU or the GPU",
        groups: &[LLR, &[BLOCK], DECODER, BACKEND, DECODER_BLOCK],
        ports: |a| decoder_ports(a, llr_type(a)?),
        add: |a, asm| by_llr(a, asm, add_decoder::<i8>, add_decoder::<f32>),
    },
];

const BLOCK: Param = Param::with_default("block", ParamType::Count, Literal::Count(6144), "code block size K, one of the 188 LTE sizes 40..=6144");

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
        ParamType::Choice(&["never", "stable"]),
        Literal::Text("never"),
        "stop a block when an iteration's decisions equal the previous one's",
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
    a.about("block", TurboCode::lte(a.size("block")?))
}

/// The decoder configuration of the [`DECODER`] fields, checked for `k`.
fn config(a: &Args, k: usize) -> anyhow::Result<DecoderConfig> {
    let max_star: MaxStar = a.about("algorithm", a.text("algorithm")?.parse())?;
    let cfg = DecoderConfig {
        max_star,
        scaling: a.real_opt("scaling")?.map_or(if max_star == MaxStar::Max { 0.75 } else { 1.0 }, |s| s as f32),
        iterations: a.size_in("iterations", 1..=MAX_ITERATIONS)?,
        early_stop: if a.text("early_stop")? == "stable" { EarlyStop::Stable } else { EarlyStop::Never },
        subblocks: if a.has("subblocks") { a.size_in("subblocks", 1..=k)? } else { 1 },
        guard: a.about("guard", a.text_opt("guard")?.unwrap_or("none").parse())?,
        window: if a.has("window") { a.size_in("window", 0..=k)? } else { 0 },
    };
    // The one check of every field's combination, named by the field it blames.
    cfg.validate(k).map_err(|e| {
        let field = if e.to_string().contains("scaling") { "scaling" } else if cfg.guard.trains() || cfg.window > 0 { "window" } else { "guard" };
        a.invalid(field, e)
    })?;
    if cfg.subblocks == 1 && cfg.guard != turbo::Guard::None {
        return Err(a.invalid("guard", "a guard needs subblocks > 1"));
    }
    Ok(cfg)
}

fn add_decoder<T: Llr>(a: &Args, asm: &mut Assembly) -> anyhow::Result<BlockId> {
    let code = code(a)?;
    let cfg = config(a, code.k())?;
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
    let cutter: Option<Box<dyn Cutter<T>>> = match a.text("input")? {
        "stream" => Some(Box::new(a.about("block", BlockCutter::fixed(code.coded_len()))?)),
        _ => None,
    };
    let build = || -> anyhow::Result<(Box<dyn BatchDecoder<T>>, Choice)> {
        if !block_options.soft {
            let auto_split = !(a.has("subblocks") || a.has("guard") || a.has("window"));
            return turbo_decoder::<T>(code.clone(), cfg, scale, precision, auto_split, &options);
        }
        // Soft output is the CPU decoder's so far.
        anyhow::ensure!(options.backend != Backend::Gpu, "soft output comes from the CPU turbo decoder only so far");
        let why = (options.backend == Backend::Auto).then(|| "soft output comes from the CPU turbo decoder only so far".to_string());
        let decoder = CpuTurbo::<T>::new(code.clone(), cfg, scale, options.cpu_threads)?.with_precision(precision)?.with_soft_output();
        Ok((Box::new(decoder), Choice { gpu: false, why_not_gpu: why }))
    };
    let (decoder, choice) = build_decoder(a, asm, &options, build)?;
    let block = a.whole(TurboDecoder::build(decoder, cutter, block_options))?.report_to(&asm.errors);
    asm.note_decoder(choice, block.describe(), block.stats());
    asm.add(block)
}
