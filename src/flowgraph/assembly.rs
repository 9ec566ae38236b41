//! The flowgraph being assembled from checked blocks, and what the caller
//! gets back to watch it run.

use super::family::Code;
use super::file::list;
use super::params::Args;
use super::registry::StreamType;
use crate::blocks::{BerCounters, BlockLoad, Counted, DecoderStats, FileWritten, FirstError, FrameCounts, Profiled, ThroughputMeter};
use crate::gpu::{Backend, Choice};
use futuresdr::runtime::__private::KernelInterface;
use futuresdr::runtime::dev::Kernel;
use futuresdr::runtime::{BlockId, Flowgraph};
use std::collections::HashMap;
use std::sync::Arc;

/// Which backend a decoder block runs on, and why, with its live counts.
#[derive(Debug, Clone)]
pub struct DecoderNote {
    /// The block's name.
    pub block: String,
    /// `cpu` or `gpu`.
    pub backend: &'static str,
    /// The decoder's own description (resources, LLR type).
    pub describe: String,
    /// Why the GPU was not used when `auto` fell back to the CPU.
    pub not_gpu: Option<String>,
    /// Units, iterations and checks decoded so far.
    pub stats: Arc<DecoderStats>,
}

impl std::fmt::Display for DecoderNote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.not_gpu {
            Some(why) => write!(f, "{} (no GPU: {why})", self.backend),
            None => f.write_str(self.backend),
        }
    }
}

/// A file sink: where it writes, and what it wrote so far.
#[derive(Debug, Clone)]
pub struct FileNote {
    /// The block's name.
    pub block: String,
    /// The path it writes.
    pub path: String,
    /// The stream it takes (what its items are).
    pub stream: StreamType,
    /// Items and bytes written so far.
    pub written: Arc<FileWritten>,
}

/// A recording a source reads: what its metadata says.
#[derive(Debug, Clone)]
pub struct RecordingNote {
    /// The block's name.
    pub block: String,
    /// The path as the file gave it.
    pub path: String,
    /// Its datatype, sample rate, frequency and recorder.
    pub meta: crate::dsp::SigmfMeta,
    /// Samples it holds (`None`: a FIFO, read to its end).
    pub samples: Option<u64>,
}

impl std::fmt::Display for RecordingNote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let m = &self.meta;
        let length = self.samples.map_or("read from a FIFO".to_string(), |n| crate::codes::words::count_of(n, "sample"));
        write!(f, "{}, {} samples/s, {length}", m.datatype.name(), m.sample_rate)?;
        if let Some(hz) = m.frequency {
            write!(f, ", centre {hz} Hz")?;
        }
        if let Some(r) = &m.recorder {
            write!(f, ", recorded by {r}")?;
        }
        write!(f, " ({})", self.path)
    }
}

/// The load handle of one block of a profiled flowgraph.
#[derive(Debug, Clone)]
pub struct LoadNote {
    /// The block's name.
    pub block: String,
    /// Its type.
    pub kind: &'static str,
    /// Its busy time, calls and items so far; `None` for a block that is a
    /// wire in this flowgraph ([`Node::Wire`]).
    pub load: Option<Arc<BlockLoad>>,
}

/// What a block of the file became in the flowgraph.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Node {
    /// A FutureSDR block.
    Block(BlockId),
    /// Nothing: the block would pass its one input to its one output
    /// unchanged (a puncturer whose pattern keeps every bit), so the
    /// builder connects what feeds it straight to what reads it, saving a
    /// stream buffer, a copy of every item and the block's work calls.
    Wire,
}

/// A built flowgraph, ready to run, with handles on its live figures.
pub struct Built {
    /// The FutureSDR flowgraph.
    pub flowgraph: Flowgraph,
    /// Where its blocks record the first error.
    pub errors: FirstError,
    /// Its BER sinks, by block name.
    pub ber_sinks: Vec<(String, Arc<BerCounters>)>,
    /// Its throughput probes, by block name.
    pub probes: Vec<(String, Arc<ThroughputMeter>)>,
    /// Its decoders and their backends.
    pub decoders: Vec<DecoderNote>,
    /// Where its other blocks with a backend run, one line each.
    pub placements: Vec<String>,
    /// Its file sinks.
    pub files: Vec<FileNote>,
    /// The recordings its sources read.
    pub recordings: Vec<RecordingNote>,
    /// The counts of its framing blocks, by block name.
    pub frames: Vec<(String, Arc<FrameCounts>)>,
    /// Every block's load, sources first, when it was built to be profiled.
    pub loads: Vec<LoadNote>,
    /// The file's codes, resolved, by name.
    pub codes: Vec<(String, Arc<dyn Code>)>,
}

/// The state of a build: the flowgraph so far and the handles collected.
pub(crate) struct Assembly {
    pub fg: Flowgraph,
    pub errors: FirstError,
    /// Backend every decoder block must use (the CLI's `--backend`).
    pub backend: Option<Backend>,
    /// GPUs every decoder block must use (the CLI's `--gpu-devices`).
    pub gpu_devices: Option<crate::gpu::DeviceList>,
    /// Name of the block being added.
    pub name: String,
    pub ber_sinks: Vec<(String, Arc<BerCounters>)>,
    pub probes: Vec<(String, Arc<ThroughputMeter>)>,
    pub decoders: Vec<DecoderNote>,
    pub placements: Vec<String>,
    pub files: Vec<FileNote>,
    pub recordings: Vec<RecordingNote>,
    pub frames: Vec<(String, Arc<FrameCounts>)>,
    /// Whether every block is timed ([`Profiled`]).
    profile: bool,
    pub loads: Vec<LoadNote>,
    /// The file's codes, resolved, by name.
    codes: Vec<(String, Arc<dyn Code>)>,
    /// Items each block's input must hold a whole number of, by block name.
    pub units: HashMap<String, u64>,
}

impl Assembly {
    pub fn new(backend: Option<Backend>, profile: bool, codes: Vec<(String, Arc<dyn Code>)>) -> Self {
        Self {
            fg: Flowgraph::new(),
            errors: FirstError::default(),
            backend,
            gpu_devices: None,
            name: String::new(),
            ber_sinks: Vec::new(),
            probes: Vec::new(),
            decoders: Vec::new(),
            placements: Vec::new(),
            files: Vec::new(),
            recordings: Vec::new(),
            frames: Vec::new(),
            profile,
            loads: Vec::new(),
            codes,
            units: HashMap::new(),
        }
    }

    /// The code the block of `a` works on: the one its `code` field names,
    /// else the file's only code (of `family`, when given); `None` when the
    /// block names none and the file has none, for kinds that can do without.
    pub fn code_opt(&self, a: &Args, family: Option<&str>) -> anyhow::Result<Option<Arc<dyn Code>>> {
        let fits = |c: &dyn Code| family.is_none_or(|f| c.family() == f);
        if let Some(name) = a.text_opt("code")? {
            let Some((_, code)) = self.codes.iter().find(|(n, _)| n == name) else {
                let known = if self.codes.is_empty() { "the file has no [codes.NAME] table".to_string() } else { format!("its codes: {}", list(self.codes.iter().map(|(n, _)| n))) };
                return Err(a.invalid("code", format!("no code '{name}' ({known})")));
            };
            if !fits(code.as_ref()) {
                return Err(a.invalid("code", format!("'{name}' is a {} code; this block takes a {} code", code.family(), family.unwrap_or("?"))));
            }
            return Ok(Some(code.clone()));
        }
        let candidates: Vec<&(String, Arc<dyn Code>)> = self.codes.iter().filter(|(_, c)| fits(c.as_ref())).collect();
        match candidates[..] {
            [] => Ok(None),
            [(_, code)] => Ok(Some(code.clone())),
            _ => Err(a.missing("code", &format!("the file has several codes it could mean: {}", list(candidates.iter().map(|(n, _)| n))))),
        }
    }

    /// [`Self::code_opt`] for kinds that need a code of `family`.
    pub fn code(&self, a: &Args, family: &str) -> anyhow::Result<Arc<dyn Code>> {
        self.code_opt(a, Some(family))?
            .ok_or_else(|| a.missing("code", &format!("the file has no {family} code: add a [codes.NAME] table with family = \"{family}\"")))
    }

    /// Add `block` under the name of the block being built, so that FutureSDR
    /// and [`FirstError`] messages use the file's name for it; timed when the
    /// flowgraph is profiled.
    // `fg.add` needs FutureSDR's hidden `KernelInterface`, which the derive implements.
    pub fn add<K: Kernel + KernelInterface + Counted + Send + 'static>(&mut self, block: K) -> anyhow::Result<Node> {
        let id = if self.profile {
            let timed = Profiled::new(block);
            // Added sinks first: the front of the list is the source end.
            self.loads.insert(0, LoadNote { block: self.name.clone(), kind: K::type_name(), load: Some(timed.load()) });
            let r = self.fg.add(timed);
            self.fg.block_mut(&r)?.set_instance_name(&self.name);
            r.id()
        } else {
            let r = self.fg.add(block);
            self.fg.block_mut(&r)?.set_instance_name(&self.name);
            r.id()
        };
        Ok(Node::Block(id))
    }

    /// Make the block being built, a `K`, a [`Node::Wire`]: `K` must have
    /// one input and one output of the same stream type.
    pub fn wire<K: KernelInterface>(&mut self) -> anyhow::Result<Node> {
        if self.profile {
            self.loads.insert(0, LoadNote { block: self.name.clone(), kind: K::type_name(), load: None });
        }
        Ok(Node::Wire)
    }

    /// Remember that the block being built takes its input in whole units of
    /// `items` (an encoder's frames), for [`Self::totals`] to be checked against.
    pub fn note_unit(&mut self, items: u64) {
        if items > 1 {
            self.units.insert(self.name.clone(), items);
        }
    }

    /// Remember the file sink being built: its path, format and counts.
    pub fn note_file(&mut self, path: &str, stream: StreamType, written: Arc<FileWritten>) {
        self.files.push(FileNote { block: self.name.clone(), path: path.to_string(), stream, written });
    }

    /// Remember the recording the source being built reads.
    pub fn note_recording(&mut self, path: &str, meta: &crate::dsp::SigmfMeta, samples: Option<u64>) {
        self.recordings.push(RecordingNote { block: self.name.clone(), path: path.to_string(), meta: meta.clone(), samples });
    }

    /// Remember the decoder of the block being built: where it ended up, its
    /// description and its live counts.
    pub fn note_decoder(&mut self, choice: Choice, describe: String, stats: Arc<DecoderStats>) {
        self.decoders.push(DecoderNote { block: self.name.clone(), backend: choice.name(), describe, not_gpu: choice.why_not_gpu, stats });
    }

    /// Remember where the block being built runs (blocks with a backend that
    /// are not decoders), as a line for the run's header.
    pub fn note_placement(&mut self, line: String) {
        self.placements.push(line);
    }

    pub fn finish(self) -> Built {
        Built {
            flowgraph: self.fg,
            errors: self.errors,
            ber_sinks: self.ber_sinks,
            probes: self.probes,
            decoders: self.decoders,
            placements: self.placements,
            files: self.files,
            recordings: self.recordings,
            frames: self.frames,
            loads: self.loads,
            codes: self.codes,
        }
    }
}
