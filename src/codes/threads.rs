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

/// Items below which [`par_copy`] stays on the calling thread: handing the
/// work to rayon would cost more than the copy.
const PAR_COPY_MIN: usize = 1 << 16;
/// Items per rayon task of [`par_copy`].
const PAR_COPY_CHUNK: usize = 1 << 15;

/// `to.copy_from_slice(from)`, on rayon's threads when it is long: one core
/// copies about 10 GB/s of memory that is not in its caches, which a block
/// moving gigabytes a second (a probe, a decoder's output) cannot wait for.
///
/// # Example
/// ```
/// use gpufec::codes::threads::par_copy;
/// let from: Vec<u32> = (0..1_000_000).collect();
/// let mut to = vec![0; from.len()];
/// par_copy(&from, &mut to);
/// assert_eq!(from, to);
/// ```
pub fn par_copy<T: Copy + Send + Sync>(from: &[T], to: &mut [T]) {
    use rayon::prelude::*;
    assert_eq!(from.len(), to.len(), "a copy between slices of one length");
    if from.len() < PAR_COPY_MIN {
        to.copy_from_slice(from);
        return;
    }
    to.par_chunks_mut(PAR_COPY_CHUNK).zip(from.par_chunks(PAR_COPY_CHUNK)).for_each(|(t, f)| t.copy_from_slice(f));
}
