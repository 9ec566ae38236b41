//! Raw files of bits, LLRs and complex samples: the [`FileSource`] and
//! [`FileSink`] blocks and the item formats they read and write.
//!
//! FutureSDR 0.0.40 has file blocks, but its source panics on a missing file,
//! silently drops a trailing partial item and spins on an empty file with
//! `repeat`, and neither converts packed bits or `ci16`; these check all of
//! that and say so.

mod format;
#[cfg(test)]
mod tests;
mod sink;
mod source;

pub use format::{FileFormat, Pod};
pub(crate) use format::{bytes_of, bytes_of_mut};
pub use sink::{FileSink, FileWritten};
pub use source::FileSource;
