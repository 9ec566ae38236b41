//! The code families and the block kinds a flowgraph file may name: their
//! parameters, their stream ports, and how each one is added to a FutureSDR
//! flowgraph. One module per code family (its [`Family`]: settings, kinds,
//! and its [`Code`](super::family::Code)), one for the blocks every chain
//! shares (`common`), one for the CCSDS framing blocks (`ccsds`), one for the ZeroMQ blocks
//! between flowgraphs (`zmq`), one for the radio blocks (`radio`: WAV source, receive chain,
//! transmit side),
//! and the parameter groups several kinds take (`groups`:
//! the code, backend and GPU options, LLR type, decoder block options).

mod ccsds;
mod common;
pub(crate) mod conv;
mod groups;
pub(crate) mod sync;
pub(crate) mod polar;
mod radio;
pub(crate) mod turbo;
mod zmq;

use super::assembly::{Assembly, Node};
use super::family::Family;
use super::params::{Args, Param};

/// The item type of a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamType {
    /// Bits, `u8` 0/1.
    U8,
    /// Real samples or LLRs, `f32`.
    F32,
    /// Quantized LLRs, `i8`.
    I8,
    /// Complex baseband samples, `Complex32` (`cf32`).
    Cf32,
    /// Bits packed eight to a `u8`, the first in the most significant place.
    Packed,
}

impl std::fmt::Display for StreamType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            StreamType::U8 => "u8",
            StreamType::F32 => "f32",
            StreamType::I8 => "i8",
            StreamType::Cf32 => "cf32",
            StreamType::Packed => "packed bits",
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
    /// Ports a file names otherwise than the block does (file name, block's
    /// name): the decoder's optional soft output is `soft` in a file and
    /// `soft[0]` on the block.
    pub renamed: Vec<(&'static str, &'static str)>,
}

impl Ports {
    /// The block's own name of the port a file calls `name`.
    pub fn block_port(&self, name: &'static str) -> &'static str {
        self.renamed.iter().find(|(f, _)| *f == name).map_or(name, |(_, b)| b)
    }
}

/// One block kind.
pub struct Kind {
    /// The `type` that names it in a file.
    pub name: &'static str,
    /// One line saying what it does.
    pub summary: &'static str,
    /// Its parameters, in groups (a kind's own, and shared ones).
    pub groups: &'static [&'static [Param]],
    /// Its ports, which may depend on its parameters.
    pub(crate) ports: fn(&Args) -> anyhow::Result<Ports>,
    /// Add the block to the flowgraph being assembled.
    pub(crate) add: fn(&Args, &mut Assembly) -> anyhow::Result<Node>,
}

impl Kind {
    /// Every parameter of the kind.
    pub fn params(&self) -> impl Iterator<Item = &'static Param> {
        self.groups.iter().flat_map(|g| g.iter())
    }
}

/// Every code family, one line each.
pub(super) const FAMILIES: &[&Family] = &[&conv::FAMILY, &turbo::FAMILY, &polar::FAMILY, &sync::FAMILY];

/// Every block kind a file may name: the shared ones, then each family's.
pub fn kinds() -> impl Iterator<Item = &'static Kind> {
    common::KINDS.iter().chain(ccsds::KINDS).chain(zmq::KINDS).chain(radio::KINDS).chain(FAMILIES.iter().flat_map(|f| f.kinds.iter()))
}

/// The kinds a build may lack, each with the cargo feature that brings it.
const FEATURE_KINDS: &[(&str, &str)] = &[("SdrSource", "seify")];

/// The cargo feature that brings the kind named `name`, where this build lacks it.
pub(crate) fn feature_of(name: &str) -> Option<&'static str> {
    FEATURE_KINDS.iter().find(|(k, _)| *k == name && kind(k).is_none()).map(|(_, f)| *f)
}

/// The kind named `name`.
pub fn kind(name: &str) -> Option<&'static Kind> {
    kinds().find(|k| k.name == name)
}

/// Ports of a block with at most one input and one output.
fn io(input: Option<StreamType>, output: Option<StreamType>) -> Ports {
    Ports {
        inputs: input.map(|t| ("input", t)).into_iter().collect(),
        outputs: output.map(|t| ("output", t)).into_iter().collect(),
        renamed: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_unique_and_every_parameter_has_one_name_per_kind() {
        let names: Vec<&str> = kinds().map(|k| k.name).collect();
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(names.len(), unique.len(), "{names:?}");
        for k in kinds() {
            let mut params: Vec<&str> = k.params().map(|p| p.name).collect();
            let n = params.len();
            params.sort_unstable();
            params.dedup();
            assert_eq!(n, params.len(), "{}: a parameter appears twice", k.name);
        }
    }
}
