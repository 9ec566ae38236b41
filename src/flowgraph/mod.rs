//! Layer 4: prebuilt flowgraphs described in TOML files (`flowgraphs/*.toml`),
//! built into FutureSDR flowgraphs of the [`blocks`](crate::blocks) and run
//! with live figures.
//!
//! # File format
//!
//! ```toml
//! description = "one line shown when the flowgraph runs"   # optional
//! connections = [                                            # chains joined by '>'
//!     "source > encoder > bpsk > awgn > llr > framer > decoder > ber.decoded",
//!     "source > ber.reference",
//! ]
//!
//! [vars]                # optional: values that fields use by writing "$name"
//! ebn0_db = 4.0
//!
//! [blocks.source]       # one table per block; the key is the block's name
//! type = "RandomBits"   # the block kind
//! seed = 1              # its parameters
//! total = 1e6
//!
//! [blocks.awgn]
//! type = "Awgn"
//! ebn0_db = "$ebn0_db"
//! rate = "1/2"
//! # ...
//! ```
//!
//! - `blocks`: one `[blocks.NAME]` table per block. `type` names the kind (see
//!   [`kinds`]); every other field is a parameter of that kind. Unknown kinds,
//!   unknown fields, values of the wrong type and missing required parameters
//!   are errors; absent optional ones take their default.
//! - Parameter types: *count* (a whole number ≥ 0; `1e7` is accepted), *number*,
//!   *string*, *rate* (a number in (0, 1] or a fraction `"3/4"`), *choice* (one
//!   of the listed strings), *flag* (`true` or `false`).
//! - `vars`: a field whose value is the string `"$name"` takes the value of
//!   variable `name`, with that value's own type, so that blocks that must
//!   agree (the channel and the demapper on Eb/N0, the framer and the decoder on
//!   the tile) share one value.
//! - `connections`: each string is a chain `a > b > c`. A block in a chain uses
//!   its only output (towards the right) and its only input (from the left);
//!   the first block of a chain may name its output port (`a.output > b`) and
//!   the last its input port (`a > ber.decoded`). An output may feed several
//!   inputs; every input takes exactly one stream; every port must be
//!   connected; the item types at both ends (`u8` bits, `f32`, `i8`, `cf32`)
//!   must agree.
//! - Overrides: [`Override`] (`--set block.param=value`, or
//!   `--set vars.name=value`) replaces a field before the checks, which treat it
//!   like one written in the file.
//!
//! Every complaint names the file, the block and the field (or the connection
//! and the port).

mod assembly;
mod builder;
mod file;
mod params;
mod registry;
mod runner;

pub use assembly::{Built, DecoderNote};
pub use builder::{BuildOptions, build};
pub use file::{BlockEntry, FlowgraphFile, MAX_FILE_BYTES, Override};
pub use params::{Args, Literal, Need, Param, ParamType};
pub use registry::{Kind, Ports, StreamType, kind, kinds};
pub use runner::{Progress, Summary, run, run_on};
