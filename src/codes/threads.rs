//! How many threads a CPU decoder runs its tasks on: the one rule every
//! family's CPU decoder and every thread option follows.

use crate::codes::error::{CodeResult, invalid};

/// Most decoder threads one CPU decoder takes (and a `threads` option accepts).
pub const MAX_THREADS: usize = 1024;

/// The cores this process may run on (at least 1).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The threads a decoder asked for `threads` runs: 0 means every core;
/// more than [`MAX_THREADS`] is refused.
///
/// # Example
/// ```
/// use gpufec::codes::threads::{MAX_THREADS, cores, decoder_threads};
/// assert_eq!(decoder_threads(0).unwrap(), cores());
/// assert_eq!(decoder_threads(3).unwrap(), 3);
/// assert!(decoder_threads(MAX_THREADS + 1).is_err());
/// ```
pub fn decoder_threads(threads: usize) -> CodeResult<usize> {
    match threads {
        0 => Ok(cores()),
        n if n > MAX_THREADS => Err(invalid!("{n} decoder threads is more than {MAX_THREADS}")),
        n => Ok(n),
    }
}
