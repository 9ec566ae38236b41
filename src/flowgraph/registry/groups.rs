//! Parameter groups several block kinds take, and what they build: where a
//! decoder runs (backend, CPU threads, GPU pipeline), what the decoder block
//! does besides decoding, and the LLR type of a stream.

use super::super::assembly::{Assembly, Node};
use super::super::params::{Args, Literal, Param, ParamType};
use super::{Ports, StreamType, io};
use crate::blocks::{DEFAULT_MAX_LATENCY, DecoderOptions};
use crate::codes::threads::MAX_THREADS;
use crate::gpu::{Backend, BackendOptions, DEFAULT_SLOTS, DeviceList, MAX_HOST_THREADS, MAX_SLOTS, MAX_WATCHDOG_MS, PipelineOptions};
use std::time::Duration;
use super::super::family::{Code, cutter};
use crate::codes::framing::{BlockCutter, Cutter};
use crate::codes::llr::Llr;

/// Most work units a GPU batch may be asked to hold (the pipeline also bounds
/// the bytes of a batch).
pub const MAX_BATCH_UNITS: usize = 1 << 24;
/// Longest latency bound a decoder block accepts, ms.
pub const MAX_LATENCY_MS: usize = 3_600_000;

/// The code a block works on.
pub(super) const CODE: Param = Param::optional("code", ParamType::Text, "the [codes.NAME] table of the code; may be left out when the file has one code (of the block's family)");

/// The random seed.
pub(super) const SEED: Param = Param::with_default("seed", ParamType::Count, Literal::Count(0), "random seed");

/// The LLR type of a stream.
pub(super) const LLR: &[Param] =
    &[Param::with_default("llr", ParamType::Choice(&["i8", "f32"]), Literal::Text("i8"), "LLR item type")];

/// Where a decoder runs.
pub(super) const BACKEND: &[Param] = &[
    Param::with_default(
        "backend",
        ParamType::Choice(&["auto", "cpu", "gpu"]),
        Literal::Text("auto"),
        "where it decodes; auto takes the GPU when one is usable",
    ),
    Param::with_default("threads", ParamType::Count, Literal::Count(0), "CPU decoder threads (0 = all cores; at most 1024)"),
    Param::with_default("gpu_device", ParamType::Count, Literal::Count(0), "CUDA device index"),
    Param::with_default(
        "gpu_devices",
        ParamType::Text,
        Literal::Text(""),
        "several CUDA devices instead of gpu_device: indices (\"0,1\") or \"all\"; a decoder per device, batches to the least busy (default: gpu_device alone)",
    ),
    Param::with_default(
        "gpu_take_out",
        ParamType::Flag,
        Literal::Flag(false),
        "with several gpu_devices, keep a copy of each batch so that a failed device is taken out and the others decode its batches (a host pass over the input: slower); false: no copy, a device failure fails the run naming the device",
    ),
    Param::with_default("gpu_slots", ParamType::Count, Literal::Count(DEFAULT_SLOTS as u64), "GPU pipeline slots (batches in flight), 1..=16"),
    Param::with_default(
        "gpu_batch_units",
        ParamType::Count,
        Literal::Count(0),
        "work units per GPU batch (0 = sized to the device; at most 2^24, and 4 GiB of input)",
    ),
    Param::with_default(
        "gpu_host_threads",
        ParamType::Count,
        Literal::Count(0),
        "host threads staging input for the GPU (0 = three quarters of the cores; at most 1024)",
    ),
    Param::with_default(
        "gpu_watchdog_ms",
        ParamType::Count,
        Literal::Count(0),
        "fail the run when a GPU batch is not done after this many milliseconds, naming the device (0 = no watchdog; at most 3600000)",
    ),
];

/// What the decoder block does besides decoding.
pub(super) const DECODER_BLOCK: &[Param] = &[
    Param::with_default(
        "max_latency_ms",
        ParamType::Count,
        Literal::Count(DEFAULT_MAX_LATENCY.as_millis() as u64),
        "when the input stalls, decode a partial batch after this many milliseconds (at most 3600000)",
    ),
    Param::with_default("report_tags", ParamType::Flag, Literal::Flag(false), "tag each unit's first bit with its decoding report"),
    Param::with_default(
        "soft_output",
        ParamType::Flag,
        Literal::Flag(false),
        "write a-posteriori LLRs to a second output, 'soft' (decoders that give them)",
    ),
    Param::with_default(
        "output",
        ParamType::Choice(&["bits", "packed"]),
        Literal::Text("bits"),
        "bits: one u8 0/1 per bit; packed: 8 bits per byte, first bit most significant (for a FileSink with stream = \"packed\")",
    ),
    Param::with_default(
        "partial_end",
        ParamType::Choice(&["fail", "drop"]),
        Literal::Text("fail"),
        "a stream that ends inside a unit: fail the run after the whole units (a file cut short), or drop the tail with a note (a receiver's last symbols)",
    ),
    Param::with_default(
        "input",
        ParamType::Choice(&["units", "stream"]),
        Literal::Text("units"),
        "a framer's units, or the stream itself, cut by the decoder block with the framer's settings",
    ),
];

/// The LLR stream type the `llr` field names.
pub(super) fn llr_type(a: &Args) -> anyhow::Result<StreamType> {
    Ok(if a.text("llr")? == "i8" { StreamType::I8 } else { StreamType::F32 })
}

/// Add the block with `i8` or `f32` LLRs, as its `llr` parameter says.
pub(super) fn by_llr(
    a: &Args,
    asm: &mut Assembly,
    i8: impl FnOnce(&Args, &mut Assembly) -> anyhow::Result<Node>,
    f32: impl FnOnce(&Args, &mut Assembly) -> anyhow::Result<Node>,
) -> anyhow::Result<Node> {
    match llr_type(a)? {
        StreamType::I8 => i8(a, asm),
        _ => f32(a, asm),
    }
}

/// Ports of a block that passes LLRs of one type on.
pub(super) fn same_llr_in_out(a: &Args) -> anyhow::Result<Ports> {
    let t = llr_type(a)?;
    Ok(io(Some(t), Some(t)))
}

/// Ports of a decoder block taking `input` items: bits out, and soft output
/// when asked.
pub(super) fn decoder_ports(a: &Args, input: StreamType) -> anyhow::Result<Ports> {
    let bits = if a.text("output")? == "packed" { StreamType::Packed } else { StreamType::U8 };
    let mut ports = io(Some(input), Some(bits));
    if a.flag("soft_output")? {
        ports.outputs.push(("soft", StreamType::F32));
        ports.renamed.push(("soft", "soft[0]"));
    }
    Ok(ports)
}

/// The backend options of the [`BACKEND`] group, every size checked against
/// its limit and named by its own field; the command line's `--backend` and
/// `--gpu-devices` (in `asm`) override the block's.
pub(super) fn backend_options(a: &Args, asm: &Assembly) -> anyhow::Result<BackendOptions> {
    Ok(BackendOptions {
        backend: backend(a, asm)?,
        cpu_threads: a.size_in("threads", 0..=MAX_THREADS)?,
        pipeline: PipelineOptions {
            device: a.size_in("gpu_device", 0..=1023)?,
            devices: match (&asm.gpu_devices, a.text("gpu_devices")?.trim()) {
                (Some(forced), _) => Some(forced.clone()),
                (None, "") => None,
                (None, list) => Some(a.about("gpu_devices", DeviceList::parse(list))?),
            },
            take_out: a.flag("gpu_take_out")?,
            slots: a.size_in("gpu_slots", 1..=MAX_SLOTS)?,
            batch_units: a.size_in("gpu_batch_units", 0..=MAX_BATCH_UNITS)?,
            host_threads: a.size_in("gpu_host_threads", 0..=MAX_HOST_THREADS)?,
            poison: None,
            watchdog: match a.size_in("gpu_watchdog_ms", 0..=MAX_WATCHDOG_MS as usize)? {
                0 => None,
                ms => Some(Duration::from_millis(ms as u64)),
            },
            fault: None,
        },
    })
}

/// The decoder block options of the [`DECODER_BLOCK`] group.
pub(super) fn decoder_options(a: &Args) -> anyhow::Result<DecoderOptions> {
    Ok(DecoderOptions {
        max_latency: Duration::from_millis(a.size_in("max_latency_ms", 0..=MAX_LATENCY_MS)? as u64),
        report_tags: a.flag("report_tags")?,
        soft: a.flag("soft_output")?,
        packed: a.text("output")? == "packed",
        drop_partial_end: a.text("partial_end")? == "drop",
    })
}

/// The block's `backend` field, unless the command line's `--backend` forces one.
fn backend(a: &Args, asm: &Assembly) -> anyhow::Result<Backend> {
    match asm.backend {
        Some(b) => Ok(b),
        None => a.about("backend", a.text("backend")?.parse::<Backend>()),
    }
}

/// Build a block that runs on `backend` (a decoder, a channel) with `build`; when it
/// fails, blame the command line if it forced the backend, else the block's
/// `backend` field (the other fields were checked before).
pub(super) fn build_on_backend<D>(a: &Args, asm: &Assembly, backend: Backend, build: impl FnOnce() -> anyhow::Result<D>) -> anyhow::Result<D> {
    build().map_err(|e| match asm.backend {
        Some(b) => anyhow::anyhow!("--backend {b}: {e:#}"),
        None => a.invalid("backend", format!("{backend}: {e:#}")),
    })
}

/// Where a channel block runs: `backend` as a decoder's (the command line's
/// `--backend` too) and the GPU's index.
pub(super) const CHANNEL_BACKEND: &[Param] = &[
    Param::with_default(
        "backend",
        ParamType::Choice(&["auto", "cpu", "gpu"]),
        Literal::Text("auto"),
        "where the noise is drawn; auto takes the GPU when one is usable (the same LLRs on either)",
    ),
    Param::with_default("gpu_device", ParamType::Count, Literal::Count(0), "CUDA device index"),
];

/// The backend and device of the [`CHANNEL_BACKEND`] group.
pub(super) fn channel_backend(a: &Args, asm: &Assembly) -> anyhow::Result<(Backend, usize)> {
    Ok((backend(a, asm)?, a.size_in("gpu_device", 0..=1023)?))
}

/// The cutter of a decoder block's input, as its `input` field says: with
/// "stream" the code's own (the block cuts as a framer would); with "units"
/// none when the code's units are the stream itself (fixed blocks: the block
/// reads a plain stream as units), otherwise one that takes only a framer's
/// marked units, so that a plain stream is refused rather than decoded as
/// tiles it is not.
pub(super) fn input_cutter<T: Llr>(a: &Args, code: &dyn Code) -> anyhow::Result<Option<Box<dyn Cutter<T>>>> {
    let own = a.about("code", cutter::<T>(code))?;
    Ok(match a.text("input")? {
        "stream" => Some(own),
        _ if own.plain() => None,
        _ => Some(Box::new(a.about("code", BlockCutter::marked(None, own.max_unit_items()))?)),
    })
}
