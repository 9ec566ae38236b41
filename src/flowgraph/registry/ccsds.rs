//! The CCSDS framing kinds: frames onto a bit stream before the channel
//! code, and after its decoder the marker search, derandomizing and
//! Reed–Solomon, and the frames as hex lines. Frames travel as packed bytes.
//! The marker alone frames another code's blocks: inserted before them, and
//! found in the receiver's soft bits before their decoder.

use super::super::params::{Access, Args, Literal, Param, ParamType};
use super::{Kind, StreamType, io};
use crate::blocks::{AsmSync, CcsdsDecoder, CcsdsEncoder, HexFrameSink, MarkerInserter, Reporting, SoftAsmSync};
use crate::codes::ccsds::{ASM, AsmFramer, AsmInserter, AsmSearch, Basis, FrameCodec, FrameFile, MAX_FRAME_BYTES, MAX_INTERLEAVE, MAX_MARKER_ERRORS, MAX_SOFT_FRAME, RS_N, RS_PARITY, ReedSolomon};

/// The kinds of this module.
pub(super) const KINDS: &[Kind] = &[
    Kind {
        name: "CcsdsEncoder",
        summary: "CCSDS frames onto a bit stream: each frame's data bits, Reed–Solomon parity, randomized, after the marker 0x1ACFFC1D",
        groups: &[FRAME],
        ports: |_| Ok(io(Some(StreamType::U8), Some(StreamType::U8))),
        add: |a, asm| {
            let codec = codec(a)?;
            asm.note_unit(8 * codec.data_len() as u64);
            asm.add(CcsdsEncoder::new(AsmFramer::new(codec)).report_to(&asm.errors))
        },
    },
    Kind {
        name: "AsmSync",
        summary: "finds the attached sync marker in hard bits (errors allowed, the stream inverted or not) and passes on the frame after each, as bytes",
        groups: &[&[Param::required("frame_bytes", ParamType::Count, "bytes of a frame after its marker, 1..=2040 (146 for (146,114) at depth 1)")], SEARCH],
        ports: |_| Ok(io(Some(StreamType::U8), Some(StreamType::Packed))),
        add: |a, asm| {
            let block = a.about("frame_bytes", AsmSync::new(search(a)?, a.size_in("frame_bytes", 1..=MAX_FRAME_BYTES)?))?;
            asm.frames.push((asm.name.clone(), block.counts()));
            asm.add(block.report_to(&asm.errors))
        },
    },
    Kind {
        name: "MarkerInserter",
        summary: "puts the attached sync marker before every frame_bits bits of another code's channel bits (an LTE transport block's G)",
        groups: &[&[FRAME_BITS, MARKER]],
        ports: |_| Ok(io(Some(StreamType::U8), Some(StreamType::U8))),
        add: |a, asm| {
            let frame_bits = a.size_in("frame_bits", 1..=MAX_SOFT_FRAME)?;
            let inserter = a.about("frame_bits", AsmInserter::new(marker(a)?, frame_bits))?;
            asm.add(MarkerInserter::new(inserter).report_to(&asm.errors))
        },
    },
    Kind {
        name: "SoftAsmSync",
        summary: "finds the attached sync marker in the hard decisions of f32 LLRs (errors allowed, 180° turned back) and passes on the frame_bits LLRs after each",
        groups: &[&[FRAME_BITS], SEARCH],
        ports: |_| Ok(io(Some(StreamType::F32), Some(StreamType::F32))),
        add: |a, asm| {
            let block = a.about("frame_bits", SoftAsmSync::new(search(a)?, a.size_in("frame_bits", 1..=MAX_SOFT_FRAME)?))?;
            asm.frames.push((asm.name.clone(), block.counts()));
            asm.add(block.report_to(&asm.errors))
        },
    },
    Kind {
        name: "CcsdsDecoder",
        summary: "derandomizes each frame and corrects it with Reed–Solomon: the data bytes of frames that pass go on, the others are counted and dropped",
        groups: &[FRAME],
        ports: |_| Ok(io(Some(StreamType::Packed), Some(StreamType::Packed))),
        add: |a, asm| {
            let block = CcsdsDecoder::new(codec(a)?);
            asm.frames.push((asm.name.clone(), block.counts()));
            asm.add(block.report_to(&asm.errors))
        },
    },
    Kind {
        name: "HexFrameSink",
        summary: "writes frames as hex lines, one frame a line (or as KISS, or binary), the file whole when the stream ends",
        groups: &[&[
            Param::required("path", ParamType::Path(Access::Writes), "the file, relative to the working directory; never one of the run's inputs"),
            Param::required("frame_bytes", ParamType::Count, "bytes of a frame (a line), 1..=2040"),
            Param::with_default("file", ParamType::Choice(&["hex", "kiss", "binary"]), Literal::Text("hex"), "hex lines; KISS (data frames on port 0, FEND/FESC escaped); or the bytes back to back"),
        ]],
        ports: |_| Ok(io(Some(StreamType::Packed), None)),
        add: |a, asm| {
            let path = a.text("path")?.to_string();
            let file = FrameFile::named(a.text("file")?).expect("the choices are the FrameFile names");
            let block = a.about("path", HexFrameSink::new(&path, a.size_in("frame_bytes", 1..=MAX_FRAME_BYTES)?))?.file(file);
            asm.note_file(&path, StreamType::Packed, block.written());
            asm.add(block.report_to(&asm.errors))
        },
    },
];

const MARKER: Param = Param::with_default("marker", ParamType::Text, Literal::Text("1acffc1d"), "the 32-bit marker in hex");

const FRAME_BITS: Param = Param::required("frame_bits", ParamType::Count, "bits of a frame after its marker, 1..=1048576 (a transport block's G)");

/// The marker search's parameters.
const SEARCH: &[Param] = &[MARKER, Param::with_default("max_errors", ParamType::Count, Literal::Count(4), "bit errors a marker may have, 0..=8 (false markers per bit position: 1.9e-5 at 4)")];

/// The marker a block's `marker` names.
fn marker(a: &Args) -> anyhow::Result<u32> {
    let marker = a.text("marker")?;
    u32::from_str_radix(marker.trim_start_matches("0x"), 16)
        .ok()
        .filter(|_| marker.trim_start_matches("0x").len() == 8)
        .ok_or_else(|| a.invalid("marker", format!("'{marker}' is not 8 hex digits (e.g. {ASM:08x})")))
}

/// The search of a block's `marker` and `max_errors`.
fn search(a: &Args) -> anyhow::Result<AsmSearch> {
    let errors = a.count("max_errors")?;
    if errors > MAX_MARKER_ERRORS.into() {
        return Err(a.invalid("max_errors", format!("{errors} is above {MAX_MARKER_ERRORS}")));
    }
    a.about("max_errors", AsmSearch::new(marker(a)?, errors as u32))
}

/// The frame's parameters, which the encoder and the decoder share.
const FRAME: &[Param] = &[
    Param::required("data_bytes", ParamType::Count, "data bytes of a frame: a multiple of interleave, at most 223 per codeword (114 for BY70-1's (146,114))"),
    Param::with_default("interleave", ParamType::Count, Literal::Count(1), "Reed–Solomon interleaving depth, 1..=8"),
    Param::with_default("basis", ParamType::Choice(&["dual", "conventional"]), Literal::Text("dual"), "Reed–Solomon symbols in CCSDS's dual basis or the conventional one"),
    Param::with_default("randomize", ParamType::Flag, Literal::Flag(true), "the CCSDS randomizer over each frame (not over the marker)"),
];

fn codec(a: &Args) -> anyhow::Result<FrameCodec> {
    let depth = a.size_in("interleave", 1..=MAX_INTERLEAVE)?;
    let data = a.size_in("data_bytes", 1..=MAX_INTERLEAVE * (RS_N - RS_PARITY))?;
    let basis = a.about("basis", Basis::parse(a.text("basis")?))?;
    let rs = a.about("data_bytes", ReedSolomon::for_data(data, depth, basis))?;
    Ok(FrameCodec::new(rs, a.flag("randomize")?))
}
