//! CCSDS TM synchronization and channel coding (131.0-B) pieces shared by
//! any chain, outside every code family: the attached sync marker and its
//! search in a stream of hard or soft bits (`marker`), the pseudo-randomizer
//! (`randomizer`),
//! Reed–Solomon (255,223) in both bases, shortened and interleaved (`rs`,
//! over the field of `gf`), the frame of the three together (`frame`), its
//! transmit side as an encoder, and the marker alone before frames of
//! another code (`encoder`), and the files decoded frames
//! are written to: hex lines, KISS, binary (`frame_file`).

mod encoder;
mod frame;
mod frame_file;
pub mod gf;
mod randomizer;
mod rs;
mod marker;

pub use encoder::{AsmFramer, AsmInserter};
pub use frame::{FrameCodec, FrameOutcome, MAX_FRAME_BYTES};
pub use frame_file::{FEND, FESC, FrameFile, TFEND, TFESC, kiss_frames};
pub use randomizer::{PERIOD as RANDOMIZER_PERIOD, randomize};
pub use rs::{Basis, MAX_INTERLEAVE, N as RS_N, PARITY as RS_PARITY, ReedSolomon, T as RS_T, Uncorrectable, from_dual, to_dual};
pub use marker::{ASM, AsmSearch, Found, FrameSync, MAX_MARKER_ERRORS, MAX_SOFT_FRAME, MarkedItem, MarkerSync, SyncedFrame};

#[cfg(test)]
mod tests;
