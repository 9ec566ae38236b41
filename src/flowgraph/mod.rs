//! Layer 4: prebuilt flowgraphs described in TOML files (`flowgraphs/*.toml`),
//! built into FutureSDR flowgraphs of the [`blocks`](crate::blocks) and run
//! with live figures.
//!
//! # File format
//!
//! ```toml
//! description = "one line shown when the flowgraph runs"   # optional
//! connections = [                                            # chains joined by '>'
//!     "source > encoder > puncture > channel > decoder > ber.decoded",
//!     "source > ber.reference",
//! ]
//!
//! [vars]                # optional: values that fields use by writing "$name"
//! ebn0_db = 4.0
//!
//! [codes.conv]          # a code, named once; the key is its name
//! family = "conv"       # the code family
//! rate = "3/4"          # its settings (as `gpufec ber conv --rate 3/4`)
//!
//! [blocks.source]       # one table per block; the key is the block's name
//! type = "RandomBits"   # the block kind
//! seed = 1              # its parameters
//! total = 1e6
//!
//! [blocks.channel]
//! type = "BpskAwgn"
//! ebn0_db = "$ebn0_db"  # its rate is the code's
//! # ...
//! ```
//!
//! - `codes`: one `[codes.NAME]` table per code. `family` names the family
//!   (see [`family::families`]); every other field is one of the family's
//!   settings, checked against its fields and then by its own rules. The
//!   blocks of a chain take what they need from their code: the encoder its
//!   code, the puncturer its pattern, the channel its rate, the framer and the
//!   decoder their units, the BER sink its frame. A block's `code` field names
//!   its code; it may be left out when the file has one code (of the block's
//!   family). Code and block names share one namespace.
//! - `blocks`: one `[blocks.NAME]` table per block. `type` names the kind (see
//!   [`kinds`]); every other field is a parameter of that kind. Unknown kinds,
//!   unknown fields, values of the wrong type and missing required parameters
//!   are errors; absent optional ones take their default.
//! - Parameter types: *count* (a whole number ≥ 0; `1e7` is accepted), *number*,
//!   *string*, *rate* (a number in (0, 1] or a fraction `"3/4"`), *choice* (one
//!   of the listed strings), *flag* (`true` or `false`).
//! - `vars`: a field whose value is the string `"$name"` takes the value of
//!   variable `name`, with that value's own type, so that one value can be
//!   changed in one place (`--set vars.ebn0_db=3`).
//! - `connections`: each string is a chain `a > b > c`. A block in a chain uses
//!   its only output (towards the right) and its only input (from the left);
//!   the first block of a chain may name its output port (`a.output > b`) and
//!   the last its input port (`a > ber.decoded`). An output may feed several
//!   inputs; every input takes exactly one stream; every port must be
//!   connected; the item types at both ends (`u8` bits, `f32`, `i8`, `cf32`)
//!   must agree.
//! - Overrides: [`Override`] (`--set block.param=value`, `--set
//!   code.setting=value`, or `--set vars.name=value`) replaces a field before
//!   the checks, which treat it like one written in the file.
//!
//! Every complaint names the file, the code or block, and the field (or the
//! connection and the port).

mod assembly;
mod builder;
pub mod family;
mod file;
mod params;
pub(crate) mod registry;
mod runner;

pub use assembly::{Built, DecoderNote, FileNote, RecordingNote};
pub use builder::{BuildOptions, build};
pub use file::{BlockEntry, FlowgraphFile, MAX_FILE_BYTES, Override};
pub use params::{Args, Literal, Need, Param, ParamType};
pub use registry::{Kind, Ports, StreamType, kind, kinds};
pub use runner::{Progress, Summary, run, run_on};
