//! The block kinds every chain shares, whatever the code: bits, BPSK over AWGN,
//! LLRs and their quantizer, the error count and the throughput probe.

use super::super::assembly::{Assembly, Node};
use super::super::params::{Access, Args, Literal, Param, ParamType};
use super::groups::{CHANNEL_BACKEND, CODE, LLR, SEED, build_on_backend, by_llr, channel_backend, llr_type, same_llr_in_out};
use super::{Kind, Ports, StreamType, io};
use super::super::family::cutter;
use crate::blocks::{Awgn, BerSink, BerStop, BpskAwgn, BpskMapper, FileFormat, FileSink, FileSource, Framer, LlrDemapper, Pod, Quantize, RandomBits, Reporting, ThroughputProbe};
use crate::codes::framing::{BlockCutter, Cutter, MAX_UNIT_ITEMS};
use crate::codes::channel::{Quantizer, Sample, noise_variance};
use crate::codes::llr::Llr;
use futuresdr::runtime::dev::CpuSample;
use num_complex::Complex32;

/// The kinds of this module.
pub(super) const KINDS: &[Kind] = &[
    Kind {
        name: "RandomBits",
        summary: "seeded random information bits",
        groups: &[&[SEED, Param::optional("total", ParamType::Count, "bits to emit (endless if absent)")]],
        ports: |_| Ok(io(None, Some(StreamType::U8))),
        add: |a, asm| {
            asm.add(RandomBits::new(a.count("seed")?, a.count_opt("total")?))
        },
    },
    Kind {
        name: "FileSource",
        summary: "items of a raw file (GNU Radio's layout): bits, packed bits, i8 or f32 LLRs, cf32 or ci16 samples",
        groups: &[&[
            READ_PATH,
            FORMAT,
            Param::with_default("repeat", ParamType::Flag, Literal::Flag(false), "start again at the end of the file"),
            STREAM,
        ]],
        ports: |a| Ok(io(None, Some(file_stream(a)?))),
        add: |a, asm| {
            let (path, format, repeat) = (a.text("path")?.to_string(), file_format(a)?, a.flag("repeat")?);
            match file_stream(a)? {
                StreamType::U8 => add_source::<u8>(a, asm, &path, format, repeat),
                StreamType::Packed => {
                    let block = a.about("stream", a.about("path", FileSource::<u8>::new(&path, format, repeat))?.packed_stream())?;
                    asm.add(block.report_to(&asm.errors))
                }
                StreamType::I8 => add_source::<i8>(a, asm, &path, format, repeat),
                StreamType::F32 => add_source::<f32>(a, asm, &path, format, repeat),
                StreamType::Cf32 => add_source::<Complex32>(a, asm, &path, format, repeat),
            }
        },
    },
    Kind {
        name: "FileSink",
        summary: "writes its input to a raw file (GNU Radio's layout), created or truncated when the flowgraph starts",
        groups: &[&[WRITE_PATH, FORMAT, STREAM]],
        ports: |a| Ok(io(Some(file_stream(a)?), None)),
        add: |a, asm| {
            let (path, format) = (a.text("path")?.to_string(), file_format(a)?);
            match file_stream(a)? {
                StreamType::U8 => add_sink::<u8>(a, asm, &path, format),
                StreamType::Packed => {
                    let block = a.about("stream", a.about("path", FileSink::<u8>::new(&path, format))?.packed_stream())?;
                    asm.note_file(&path, StreamType::Packed, block.written());
                    asm.add(block.report_to(&asm.errors))
                }
                StreamType::I8 => add_sink::<i8>(a, asm, &path, format),
                StreamType::F32 => add_sink::<f32>(a, asm, &path, format),
                StreamType::Cf32 => add_sink::<Complex32>(a, asm, &path, format),
            }
        },
    },
    Kind {
        name: "BpskMapper",
        summary: "BPSK symbols: bit 0 → +1, bit 1 → −1, real or on the in-phase axis of complex samples",
        groups: &[SAMPLES],
        ports: |a| Ok(io(Some(StreamType::U8), Some(sample_type(a)?))),
        add: |a, asm| by_sample(a, asm, |_, asm| asm.add(BpskMapper::<f32>::new()), |_, asm| asm.add(BpskMapper::<Complex32>::new())),
    },
    Kind {
        name: "Awgn",
        summary: "white Gaussian noise at an Eb/N0 per information bit (both axes of complex samples)",
        groups: &[&[EBN0, EFFECTIVE_RATE, CODE, SEED], SAMPLES],
        ports: |a| {
            let t = sample_type(a)?;
            Ok(io(Some(t), Some(t)))
        },
        add: |a, asm| {
            fn add<S: Sample>(a: &Args, asm: &mut Assembly) -> anyhow::Result<Node> {
                let block = Awgn::<S>::new(a.real("ebn0_db")?, effective_rate(a, asm)?, a.count("seed")?);
                asm.add(a.about("ebn0_db", block)?)
            }
            by_sample(a, asm, add::<f32>, add::<Complex32>)
        },
    },
    Kind {
        name: "BpskAwgn",
        summary: "bits to the LLRs of BPSK over AWGN in one pass on all cores or on a GPU: BpskMapper → Awgn → LlrDemapper (→ Quantize), bit for bit",
        groups: &[
            &[
                EBN0,
                EFFECTIVE_RATE,
                CODE,
                SEED,
                Param::optional("scale", ParamType::Real, "i8 LLRs: quantizer scale; without it, the matched scale of ebn0_db and rate (16·σ² up to σ = 3/4, then less: ±127 at 1 + 4σ)"),
            ],
            LLR,
            CHANNEL_BACKEND,
        ],
        ports: |a| Ok(io(Some(StreamType::U8), Some(llr_type(a)?))),
        add: |a, asm| {
            fn add<T: Llr + CpuSample>(a: &Args, asm: &mut Assembly) -> anyhow::Result<Node> {
                let (ebn0, rate) = (a.real("ebn0_db")?, effective_rate(a, asm)?);
                let variance = a.about("ebn0_db", noise_variance(ebn0, rate))?;
                let quantizer = match a.real_opt("scale")? {
                    Some(_) if T::NAME == "f32" => return Err(a.invalid("scale", "only i8 LLRs are quantized; drop scale or set llr = \"i8\"")),
                    Some(s) => a.about("scale", Quantizer::new(s as f32))?,
                    None => a.about("ebn0_db", Quantizer::matched(variance))?,
                };
                let ((backend, device), seed) = (channel_backend(a, asm)?, a.count("seed")?);
                let (block, choice) = build_on_backend(a, asm, backend, || BpskAwgn::<T>::on(backend, device, ebn0, rate, seed, quantizer))?;
                asm.note_placement(format!("channel '{}': backend {choice}", asm.name));
                asm.add(block.report_to(&asm.errors))
            }
            by_llr(a, asm, add::<i8>, add::<f32>)
        },
    },
    Kind {
        name: "LlrDemapper",
        summary: "LLRs 2y/σ² of received samples (their in-phase axis), σ² from Eb/N0 and rate",
        groups: &[&[EBN0, EFFECTIVE_RATE, CODE], SAMPLES],
        ports: |a| Ok(io(Some(sample_type(a)?), Some(StreamType::F32))),
        add: |a, asm| {
            fn add<S: Sample>(a: &Args, asm: &mut Assembly) -> anyhow::Result<Node> {
                let block = a.about("ebn0_db", LlrDemapper::<S>::new(a.real("ebn0_db")?, effective_rate(a, asm)?))?;
                asm.add(block.report_to(&asm.errors))
            }
            by_sample(a, asm, add::<f32>, add::<Complex32>)
        },
    },
    Kind {
        name: "Quantize",
        summary: "f32 → i8 LLRs, round(llr·scale) saturated to ±127",
        groups: &[&[
            Param::optional("scale", ParamType::Real, "multiplier before rounding; without it, the matched scale of ebn0_db and rate (16·σ² up to σ = 3/4, then less: ±127 at 1 + 4σ)"),
            Param::optional("ebn0_db", ParamType::Real, "Eb/N0 of the channel, dB, for the matched scale"),
            Param::optional("rate", ParamType::Rate, "effective rate of the channel, for the matched scale (default the code's)"),
            CODE,
        ]],
        ports: |_| Ok(io(Some(StreamType::F32), Some(StreamType::I8))),
        add: |a, asm| {
            let quantizer = match (a.real_opt("scale")?, a.real_opt("ebn0_db")?) {
                (Some(s), None) if !a.has("rate") => a.about("scale", Quantizer::new(s as f32))?,
                (None, Some(ebn0)) => {
                    let variance = a.about("ebn0_db", noise_variance(ebn0, effective_rate(a, asm)?))?;
                    a.about("ebn0_db", Quantizer::matched(variance))?
                }
                (None, None) => return Err(a.missing("scale", "or give ebn0_db (and rate, or the code) for the matched scale (16·σ² up to σ = 3/4)")),
                _ => return Err(a.invalid("scale", "give either scale, or ebn0_db and rate (the matched scale, 16·σ² up to σ = 3/4)")),
            };
            asm.add(Quantize::new(quantizer).report_to(&asm.errors))
        },
    },
    Kind {
        name: "BerSink",
        summary: "counts bit and frame errors of decoded against reference bits",
        groups: &[&[
            Param::optional("frame_bits", ParamType::Count, "bits per counted frame (FER), at least 1 (default the code's frame: a code block, a transport block, a tile's f; 256 without a code)"),
            CODE,
            Param::optional("max_bits", ParamType::Count, "stop the run after this many compared bits (at least 1)"),
            Param::optional("max_errors", ParamType::Count, "stop the run at the end of the frame with this many bit errors (at least 1)"),
        ]],
        ports: |_| {
            Ok(Ports { inputs: vec![("reference", StreamType::U8), ("decoded", StreamType::U8)], outputs: vec![], renamed: vec![] })
        },
        add: |a, asm| {
            let stop = BerStop { max_bits: a.count_opt("max_bits")?, max_errors: a.count_opt("max_errors")? };
            stop.validate().map_err(|(field, why)| a.invalid(field, why))?;
            let frame_bits = match (a.has("frame_bits"), asm.code_opt(a, None)?) {
                (true, _) => a.size("frame_bits")?,
                (false, Some(code)) => code.frame_bits(),
                (false, None) => DEFAULT_FRAME_BITS,
            };
            let sink = a.about("frame_bits", BerSink::new(frame_bits, stop))?.report_to(&asm.errors);
            let counters = sink.counters();
            let id = asm.add(sink)?;
            asm.ber_sinks.push((asm.name.clone(), counters));
            Ok(id)
        },
    },
    Kind {
        name: "Framer",
        summary: "cuts an LLR stream into its code's decoder work units (Viterbi tiles, code blocks, transport blocks), or into blocks of block_llrs",
        groups: &[LLR, &[CODE, Param::optional("block_llrs", ParamType::Count, "LLRs per unit, for fixed blocks without a code (at most 2^26)")]],
        ports: same_llr_in_out,
        add: |a, asm| {
            fn add<T: Llr>(a: &Args, asm: &mut Assembly) -> anyhow::Result<Node> {
                let cutter: Box<dyn Cutter<T>> = match (a.has("block_llrs"), asm.code_opt(a, None)?) {
                    (true, _) if a.has("code") => return Err(a.invalid("block_llrs", "give block_llrs or code, not both")),
                    (true, _) => Box::new(a.about("block_llrs", BlockCutter::fixed(a.size_in("block_llrs", 1..=MAX_UNIT_ITEMS)?))?),
                    (false, Some(code)) => a.about("code", cutter::<T>(code.as_ref()))?,
                    (false, None) => return Err(a.missing("block_llrs", "or a code to cut the units of: the file has no [codes.NAME] table")),
                };
                asm.add(a.about("code", Framer::<T>::new(cutter))?.report_to(&asm.errors))
            }
            by_llr(a, asm, add::<i8>, add::<f32>)
        },
    },
    Kind {
        name: "ThroughputProbe",
        summary: "passes bits through and measures information bits per second",
        groups: &[&[Param::with_default(
            "stream",
            ParamType::Choice(&["bits", "packed"]),
            Literal::Text("bits"),
            "bits: one u8 0/1 per bit; packed: 8 bits per byte (after a decoder with output = \"packed\")",
        )]],
        ports: |a| {
            let t = if a.text("stream")? == "packed" { StreamType::Packed } else { StreamType::U8 };
            Ok(io(Some(t), Some(t)))
        },
        add: |a, asm| {
            let probe = if a.text("stream")? == "packed" { ThroughputProbe::packed() } else { ThroughputProbe::new() };
            let meter = probe.meter();
            let id = asm.add(probe)?;
            asm.probes.push((asm.name.clone(), meter));
            Ok(id)
        },
    },
];

const READ_PATH: Param = Param::required("path", ParamType::Path(Access::Reads), "the file, relative to the working directory");
const WRITE_PATH: Param = Param::required("path", ParamType::Path(Access::Writes), "the file, relative to the working directory; never one of the run's inputs");
const FORMAT: Param = Param::required(
    "format",
    ParamType::Choice(&["bits", "packed", "i8", "f32", "cf32", "ci16"]),
    "bits: one u8 0/1 per bit; packed: 8 bits per byte, first bit most significant; i8, f32: LLRs or samples; cf32, ci16: complex samples",
);

fn file_format(a: &Args) -> anyhow::Result<FileFormat> {
    let name = a.text("format")?;
    FileFormat::named(name).ok_or_else(|| a.invalid("format", format!("'{name}' is not a file format")))
}

const STREAM: Param = Param::with_default(
    "stream",
    ParamType::Choice(&["items", "packed"]),
    Literal::Text("items"),
    "items: the format's items (bits one per u8 for bits and packed); packed: bytes of packed bits, as a decoder with output = \"packed\" writes them (format packed only)",
);

/// The stream type of a file block's `format` and `stream`.
fn file_stream(a: &Args) -> anyhow::Result<StreamType> {
    if a.text("stream")? == "packed" {
        return match file_format(a)? {
            FileFormat::Packed => Ok(StreamType::Packed),
            other => Err(a.invalid("stream", format!("a packed stream needs format packed, not {}", other.name()))),
        };
    }
    Ok(match file_format(a)? {
        FileFormat::Bits | FileFormat::Packed => StreamType::U8,
        FileFormat::I8 => StreamType::I8,
        FileFormat::F32 => StreamType::F32,
        FileFormat::Cf32 | FileFormat::Ci16 => StreamType::Cf32,
    })
}

fn add_source<T: Pod + CpuSample>(a: &Args, asm: &mut Assembly, path: &str, format: FileFormat, repeat: bool) -> anyhow::Result<Node> {
    let block = a.about("path", FileSource::<T>::new(path, format, repeat))?;
    asm.add(block.report_to(&asm.errors))
}

fn add_sink<T: Pod + CpuSample>(a: &Args, asm: &mut Assembly, path: &str, format: FileFormat) -> anyhow::Result<Node> {
    let block = a.about("path", FileSink::<T>::new(path, format))?;
    asm.note_file(path, file_stream(a)?, block.written());
    asm.add(block.report_to(&asm.errors))
}

const EBN0: Param = Param::required("ebn0_db", ParamType::Real, "Eb/N0 per information bit, dB");
const EFFECTIVE_RATE: Param = Param::optional(
    "rate",
    ParamType::Rate,
    "information bits over channel bits sent (puncturing and tails counted); default the code's",
);

/// A BER sink's frame without a code to take it from.
const DEFAULT_FRAME_BITS: usize = 256;

/// The channel's rate: its `rate` field, else its code's.
fn effective_rate(a: &Args, asm: &Assembly) -> anyhow::Result<f64> {
    match (a.real_opt("rate")?, asm.code_opt(a, None)?) {
        (Some(r), _) => Ok(r),
        (None, Some(code)) => Ok(code.rate()),
        (None, None) => Err(a.missing("rate", "the file has no code to take it from: give the channel's rate, information bits over channel bits sent")),
    }
}
const SAMPLES: &[Param] = &[Param::with_default(
    "samples",
    ParamType::Choice(&["f32", "cf32"]),
    Literal::Text("f32"),
    "real samples, or complex baseband (BPSK on the in-phase axis)",
)];

fn sample_type(a: &Args) -> anyhow::Result<StreamType> {
    Ok(if a.text("samples")? == "cf32" { StreamType::Cf32 } else { StreamType::F32 })
}

/// Add the block with real or complex samples, as its `samples` field says.
fn by_sample(
    a: &Args,
    asm: &mut Assembly,
    real: impl FnOnce(&Args, &mut Assembly) -> anyhow::Result<Node>,
    complex: impl FnOnce(&Args, &mut Assembly) -> anyhow::Result<Node>,
) -> anyhow::Result<Node> {
    match sample_type(a)? {
        StreamType::Cf32 => complex(a, asm),
        _ => real(a, asm),
    }
}
