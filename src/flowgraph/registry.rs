//! The block kinds a flowgraph file may name: their parameters, their stream
//! ports, and how each one is added to a FutureSDR flowgraph.

use super::assembly::Assembly;
use super::params::{Args, Literal, Param, ParamType};
use crate::blocks::{
    Awgn, BerSink, BerStop, BpskMapper, ConvEncoder, Depuncture, Framer, Framing, LlrDemapper, Puncture, Quantize,
    RandomBits, Reporting, ThroughputProbe, ViterbiDecoder,
};
use crate::codes::Llr;
use crate::codes::conv::{
    ConvCode, EncoderMode, FrameConfig, MAX_K, MIN_K, PuncturePattern, TileConfig, Tiler, Traceback, Trellis, ViterbiMode,
};
use crate::gpu::{Backend, GpuLlr, GpuOptions, viterbi_decoder};
use futuresdr::runtime::BlockId;
use std::sync::Arc;

/// The item type of a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamType {
    /// Bits, `u8` 0/1.
    U8,
    /// Samples or LLRs, `f32`.
    F32,
    /// Quantized LLRs, `i8`.
    I8,
}

impl std::fmt::Display for StreamType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            StreamType::U8 => "u8",
            StreamType::F32 => "f32",
            StreamType::I8 => "i8",
        })
    }
}

/// A block's stream ports and their item types.
#[derive(Debug, Clone, Default)]
pub struct Ports {
    /// Input ports.
    pub inputs: Vec<(&'static str, StreamType)>,
    /// Output ports.
    pub outputs: Vec<(&'static str, StreamType)>,
}

/// One block kind.
pub struct Kind {
    /// The `type` that names it in a file.
    pub name: &'static str,
    /// One line saying what it does.
    pub summary: &'static str,
    /// Its parameters.
    pub params: &'static [Param],
    /// Its ports, which may depend on its parameters.
    pub(crate) ports: fn(&Args) -> anyhow::Result<Ports>,
    /// Add the block to the flowgraph being assembled.
    pub(crate) add: fn(&Args, &mut Assembly) -> anyhow::Result<BlockId>,
}

/// Every block kind a file may name.
pub const KINDS: &[Kind] = &[
    Kind {
        name: "RandomBits",
        summary: "seeded random information bits",
        params: &[
            SEED,
            Param::optional("total", ParamType::Count, "bits to emit (endless if absent)"),
        ],
        ports: |_| Ok(io(None, Some(StreamType::U8))),
        add: |a, asm| asm.add(RandomBits::new(a.count("seed")?, a.count_opt("total")?)),
    },
    Kind {
        name: "ConvEncoder",
        summary: "rate-1/n convolutional encoder, streaming or terminated frames",
        params: &[K, POLYS, MODE, FRAME],
        ports: |_| Ok(io(Some(StreamType::U8), Some(StreamType::U8))),
        add: |a, asm| {
            let mode = match frame(a)? {
                None => EncoderMode::Streaming,
                Some(f) => EncoderMode::Terminated { frame: f.frame },
            };
            let block = ConvEncoder::new(trellis(a)?, mode).map_err(|e| a.invalid("frame", e))?;
            asm.add(block.report_to(&asm.errors))
        },
    },
    Kind {
        name: "Puncture",
        summary: "deletes the coded bits a puncturing pattern does not keep",
        params: &[RATE_NAME, PATTERN],
        ports: |_| Ok(io(Some(StreamType::U8), Some(StreamType::U8))),
        add: |a, asm| asm.add(Puncture::new(pattern(a)?)),
    },
    Kind {
        name: "BpskMapper",
        summary: "BPSK symbols: bit 0 → +1, bit 1 → −1",
        params: &[],
        ports: |_| Ok(io(Some(StreamType::U8), Some(StreamType::F32))),
        add: |_, asm| asm.add(BpskMapper::new()),
    },
    Kind {
        name: "Awgn",
        summary: "white Gaussian noise at an Eb/N0 per information bit",
        params: &[
            EBN0,
            EFFECTIVE_RATE,
            SEED,
        ],
        ports: |_| Ok(io(Some(StreamType::F32), Some(StreamType::F32))),
        add: |a, asm| {
            let block = Awgn::new(a.real("ebn0_db")?, a.real("rate")?, a.count("seed")?);
            asm.add(a.about("ebn0_db", block)?)
        },
    },
    Kind {
        name: "LlrDemapper",
        summary: "LLRs 2y/σ² of received samples, σ² from Eb/N0 and rate",
        params: &[EBN0, EFFECTIVE_RATE],
        ports: |_| Ok(io(Some(StreamType::F32), Some(StreamType::F32))),
        add: |a, asm| {
            let block = a.about("ebn0_db", LlrDemapper::new(a.real("ebn0_db")?, a.real("rate")?))?;
            asm.add(block.report_to(&asm.errors))
        },
    },
    Kind {
        name: "Quantize",
        summary: "f32 → i8 LLRs, round(llr·scale) saturated to ±127",
        params: &[Param::required(
            "scale",
            ParamType::Real,
            "multiplier before rounding (16·σ² maps a noiseless sample to ±32)",
        )],
        ports: |_| Ok(io(Some(StreamType::F32), Some(StreamType::I8))),
        add: |a, asm| {
            let block = a.about("scale", Quantize::new(a.real("scale")? as f32))?;
            asm.add(block.report_to(&asm.errors))
        },
    },
    Kind {
        name: "Depuncture",
        summary: "puts erasures (LLR 0) back where the puncturer deleted bits",
        params: &[LLR, RATE_NAME, PATTERN, DEPUNCTURE, TILE],
        ports: |a| same_llr_in_out(a),
        add: |a, asm| {
            fn add<T: Llr>(a: &Args, asm: &mut Assembly) -> anyhow::Result<BlockId> {
                // With depuncture = "decoder" the stream passes unchanged.
                let p = punctured(a, "block")?.unwrap_or_else(|| PuncturePattern::none(1));
                asm.add(Depuncture::<T>::new(p).report_to(&asm.errors))
            }
            by_llr(a, asm, add::<i8>, add::<f32>)
        },
    },
    Kind {
        name: "Framer",
        summary: "cuts an LLR stream into decoder work units (Viterbi tiles or code blocks)",
        params: &[
            LLR,
            Param::with_default(
                "units",
                ParamType::Choice(&["tiles", "blocks"]),
                Literal::Text("tiles"),
                "overlapping Viterbi tiles of a stream, or whole code blocks",
            ),
            Param::with_default("n", ParamType::Count, Literal::Count(2), "LLRs per trellis stage (tiles)"),
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
        ports: |a| same_llr_in_out(a),
        add: |a, asm| {
            let framing = if a.text("units")? == "tiles" {
                let (tile, n) = (tile(a, Traceback::Serial)?, a.size("n")?);
                match punctured(a, "decoder")? {
                    Some(pattern) => {
                        a.about("rate", pattern.check_fits(n))?;
                        Framing::PuncturedTiles { tile, pattern }
                    }
                    None => Framing::Tiles { tile, n },
                }
            } else {
                let llrs = a.size("block_llrs").map_err(|_| a.invalid("block_llrs", "is required when units = \"blocks\""))?;
                Framing::Blocks { llrs }
            };
            fn add<T: Llr>(framing: Framing, a: &Args, asm: &mut Assembly) -> anyhow::Result<BlockId> {
                let block = a.about("units", Framer::<T>::new(framing))?;
                asm.add(block.report_to(&asm.errors))
            }
            let f = framing.clone();
            by_llr(a, asm, |a, asm| add::<i8>(framing, a, asm), |a, asm| add::<f32>(f, a, asm))
        },
    },
    Kind {
        name: "ViterbiDecoder",
        summary: "Viterbi decoder of tiles or terminated frames, on the CPU or the GPU",
        params: &[
            LLR,
            K,
            POLYS,
            MODE,
            FRAME,
            TILE,
            GROUP,
            RATE_NAME,
            PATTERN,
            DEPUNCTURE,
            Param::with_default(
                "traceback",
                ParamType::Text,
                Literal::Text("serial"),
                "serial, or parallel:F0 (subframes of F0 stages)",
            ),
            Param::with_default(
                "backend",
                ParamType::Choice(&["auto", "cpu", "gpu"]),
                Literal::Text("auto"),
                "where it decodes; auto takes the GPU when one is usable",
            ),
            Param::with_default("threads", ParamType::Count, Literal::Count(0), "CPU decoder threads (0 = all cores)"),
            Param::with_default("gpu_device", ParamType::Count, Literal::Count(0), "CUDA device index"),
            Param::with_default(
                "gpu_slots",
                ParamType::Count,
                Literal::Count(2),
                "GPU pipeline slots (batches in flight)",
            ),
            Param::with_default(
                "gpu_batch_units",
                ParamType::Count,
                Literal::Count(0),
                "work units per GPU batch (0 = sized to the device)",
            ),
            Param::with_default(
                "gpu_host_threads",
                ParamType::Count,
                Literal::Count(0),
                "host threads staging LLRs for the GPU (0 = three quarters of the cores)",
            ),
        ],
        ports: |a| Ok(io(Some(llr_type(a)?), Some(StreamType::U8))),
        add: |a, asm| by_llr(a, asm, add_viterbi::<i8>, add_viterbi::<f32>),
    },
    Kind {
        name: "BerSink",
        summary: "counts bit and frame errors of decoded against reference bits",
        params: &[
            Param::with_default("frame_bits", ParamType::Count, Literal::Count(256), "bits per counted frame (FER)"),
            Param::optional("max_bits", ParamType::Count, "stop the run after this many compared bits"),
            Param::optional("max_errors", ParamType::Count, "stop the run once this many bit errors are counted"),
        ],
        ports: |_| {
            Ok(Ports { inputs: vec![("reference", StreamType::U8), ("decoded", StreamType::U8)], outputs: vec![] })
        },
        add: |a, asm| {
            let stop = BerStop { max_bits: a.count_opt("max_bits")?, max_errors: a.count_opt("max_errors")? };
            let frame_bits = a.size("frame_bits")?;
            if frame_bits == 0 {
                return Err(a.invalid("frame_bits", "a frame of 0 bits; it must be at least 1"));
            }
            let sink = BerSink::new(frame_bits, stop).report_to(&asm.errors);
            let counters = sink.counters();
            let id = asm.add(sink)?;
            asm.ber_sinks.push((asm.name.clone(), counters));
            Ok(id)
        },
    },
    Kind {
        name: "ThroughputProbe",
        summary: "passes bits through and measures information bits per second",
        params: &[],
        ports: |_| Ok(io(Some(StreamType::U8), Some(StreamType::U8))),
        add: |_, asm| {
            let probe = ThroughputProbe::new();
            let meter = probe.meter();
            let id = asm.add(probe)?;
            asm.probes.push((asm.name.clone(), meter));
            Ok(id)
        },
    },
];

/// The kind named `name`.
pub fn kind(name: &str) -> Option<&'static Kind> {
    KINDS.iter().find(|k| k.name == name)
}

const SEED: Param = Param::with_default("seed", ParamType::Count, Literal::Count(0), "random seed");
const LLR: Param = Param::with_default("llr", ParamType::Choice(&["i8", "f32"]), Literal::Text("i8"), "LLR item type");
const K: Param = Param::with_default("k", ParamType::Count, Literal::Count(7), "constraint length K");
const POLYS: Param = Param::with_default(
    "polys",
    ParamType::Text,
    Literal::Text("171,133"),
    "generator polynomials in octal, comma-separated",
);
const MODE: Param = Param::with_default(
    "mode",
    ParamType::Choice(&["streaming", "terminated"]),
    Literal::Text("streaming"),
    "one endless stream (tiled decoding), or frames with K−1 tail bits",
);
const FRAME: Param = Param::optional("frame", ParamType::Count, "information bits per frame (terminated)");
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
const EBN0: Param = Param::required("ebn0_db", ParamType::Real, "Eb/N0 per information bit, dB");
const EFFECTIVE_RATE: Param = Param::required(
    "rate",
    ParamType::Rate,
    "information bits over channel bits sent (puncturing and tails counted)",
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
    Param::with_default("tile", ParamType::Text, Literal::Text("256,20,20"), "Viterbi tile f,v1,v2 in stages");
const GROUP: Param = Param::with_default("group", ParamType::Count, Literal::Count(64), "tiles per work unit");

fn io(input: Option<StreamType>, output: Option<StreamType>) -> Ports {
    Ports { inputs: input.map(|t| ("input", t)).into_iter().collect(), outputs: output.map(|t| ("output", t)).into_iter().collect() }
}

fn llr_type(a: &Args) -> anyhow::Result<StreamType> {
    Ok(if a.text("llr")? == "i8" { StreamType::I8 } else { StreamType::F32 })
}

fn same_llr_in_out(a: &Args) -> anyhow::Result<Ports> {
    let t = llr_type(a)?;
    Ok(io(Some(t), Some(t)))
}

/// Add the block with `i8` or `f32` LLRs, as its `llr` parameter says.
fn by_llr(
    a: &Args,
    asm: &mut Assembly,
    i8: impl FnOnce(&Args, &mut Assembly) -> anyhow::Result<BlockId>,
    f32: impl FnOnce(&Args, &mut Assembly) -> anyhow::Result<BlockId>,
) -> anyhow::Result<BlockId> {
    match llr_type(a)? {
        StreamType::I8 => i8(a, asm),
        _ => f32(a, asm),
    }
}

fn trellis(a: &Args) -> anyhow::Result<Arc<Trellis>> {
    let k = a.count("k")?;
    let k = u32::try_from(k).ok().filter(|k| (MIN_K..=MAX_K).contains(k));
    let k = k.ok_or_else(|| a.invalid("k", format!("constraint length must be in {MIN_K}..={MAX_K}")))?;
    let polys: Vec<&str> = a.text("polys")?.split(',').collect();
    let code = a.about("polys", ConvCode::from_octal(k, &polys))?;
    Ok(Arc::new(Trellis::new(&code)))
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
/// passes on (Depuncture) or arrives depunctured (framer, decoder).
fn punctured(a: &Args, role: &str) -> anyhow::Result<Option<PuncturePattern>> {
    let p = pattern(a)?;
    if p.is_identity() {
        return Ok(None);
    }
    let at = match a.text("depuncture")? {
        // Measured faster where it applies (BENCHMARKS.md): fewer bytes cross
        // PCIe and the Depuncture block's thread drops out of the chain.
        "auto" => {
            let tile = a.about("tile", TileConfig::parse(a.text("tile")?, Traceback::Serial))?;
            // One definition of where the decoder can depuncture: the punctured tiler's.
            if Tiler::<i8>::punctured(tile, p.clone()).is_ok() { "decoder" } else { "block" }
        }
        at => at,
    };
    Ok((at == role).then_some(p))
}

fn tile(a: &Args, traceback: Traceback) -> anyhow::Result<TileConfig> {
    let t = a.about("tile", TileConfig::parse(a.text("tile")?, Traceback::Serial))?;
    let t = a.about("traceback", TileConfig::new(t.f, t.v1, t.v2, traceback))?;
    a.about("group", t.with_group(a.size("group")?))
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

fn add_viterbi<T: GpuLlr>(a: &Args, asm: &mut Assembly) -> anyhow::Result<BlockId> {
    let trellis = trellis(a)?;
    let mode = match frame(a)? {
        Some(f) => ViterbiMode::Frame(f),
        None => {
            let tb = a.about("traceback", Traceback::parse(a.text("traceback")?))?;
            ViterbiMode::Tiled(tile(a, tb)?)
        }
    };
    if frame(a)?.is_some() && a.text("depuncture")? != "block" && !pattern(a)?.is_identity() {
        return Err(a.invalid("depuncture", "terminated frames take depunctured LLRs; use depuncture = \"block\""));
    }
    let punctured = punctured(a, "decoder")?;
    let gpu = GpuOptions {
        device: a.size("gpu_device")?,
        slots: a.size("gpu_slots")?,
        batch_units: a.size("gpu_batch_units")?,
        host_threads: a.size("gpu_host_threads")?,
        ..Default::default()
    };
    let threads = a.size("threads")?;
    // A backend forced from the command line is blamed on the command line.
    let (backend, decoder) = match asm.backend {
        Some(b) => (b, viterbi_decoder::<T>(trellis, mode, punctured.as_ref(), b, threads, &gpu).map_err(|e| anyhow::anyhow!("--backend {b}: {e:#}"))),
        None => {
            let b = a.about("backend", a.text("backend")?.parse::<Backend>())?;
            (b, a.about("backend", viterbi_decoder::<T>(trellis, mode, punctured.as_ref(), b, threads, &gpu)))
        }
    };
    let (decoder, not_gpu) = decoder?;
    let block = ViterbiDecoder::new(decoder).report_to(&asm.errors);
    asm.note_decoder(backend, block.describe(), not_gpu);
    asm.add(block)
}
