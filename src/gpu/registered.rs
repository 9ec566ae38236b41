//! Host memory the caller reuses batch after batch (a FutureSDR stream
//! buffer), page-locked in place with `cuMemHostRegister`, so that the copy
//! engine reads units where they lie and no host copy into pinned staging is
//! needed.
//!
//! Registrations are made lazily, page-aligned, for the parts of each region
//! not yet registered; a region is then copied in pieces that each lie inside
//! one registration (the driver looks a copy's source up by its start). A
//! circular buffer is covered after its first lap and costs nothing after.
//! Registration needs memory the kernel can pin: anonymous or shared memory
//! (`/dev/shm`, where `gpufec` puts FutureSDR's buffers); where the driver
//! refuses, the caller stages as before. Pages another device's decoder
//! locked (several GPUs on one stream buffer) are staged by this one, which
//! goes on locking pages of its own.

use cudarc::driver::{CudaContext, sys};
use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::Arc;

/// Most bytes registered at once: a FutureSDR double-mapped stream buffer in
/// front of a decoder block (three batches of 32 MiB, seen through both of
/// its mappings) many times over; a caller whose regions keep moving past
/// this is not reusing its memory, and stages instead.
pub(crate) const MAX_REGISTERED_BYTES: usize = 2 << 30;

/// Page-locked ranges of host memory, each one registration, unregistered on drop.
pub(crate) struct Registered {
    ctx: Arc<CudaContext>,
    /// Start → end of each registration, page aligned, disjoint.
    ranges: BTreeMap<usize, usize>,
    bytes: usize,
    /// The driver refused a registration (said once on stderr); never tried again.
    refused: bool,
}

impl Registered {
    pub(crate) fn new(ctx: &Arc<CudaContext>) -> Self {
        Self { ctx: ctx.clone(), ranges: BTreeMap::new(), bytes: 0, refused: false }
    }

    /// Split the region `addr .. addr + len` into pieces that each lie inside
    /// one registration, registering what is not yet; `None` when the driver
    /// refuses or the region would take registrations past
    /// [`MAX_REGISTERED_BYTES`] (the caller then stages the region itself).
    ///
    /// The caller must keep the region's pages mapped until [`Self::clear`] or
    /// drop.
    pub(crate) fn pieces(&mut self, addr: usize, len: usize) -> Option<Vec<Range<usize>>> {
        if self.refused || len == 0 {
            return None;
        }
        let page = page_size();
        let (end, mut at) = (addr + len, addr);
        let mut pieces = Vec::new();
        while at < end {
            let covering = self.ranges.range(..=at).next_back().filter(|(_, e)| **e > at).map(|(_, e)| *e);
            let stop = match covering {
                Some(e) => e,
                None => {
                    let next = self.ranges.range(at + 1..).next().map_or(usize::MAX, |(s, _)| *s);
                    let lo = at / page * page;
                    // Never into the next registration, whose first page may be this range's last.
                    let hi = (end.div_ceil(page) * page).min(next);
                    // Registrations end on page boundaries, so `lo` lies past the one before.
                    if self.bytes + (hi - lo) > MAX_REGISTERED_BYTES {
                        return None;
                    }
                    self.register(lo, hi)?;
                    hi
                }
            };
            let piece_end = stop.min(end);
            pieces.push(at..piece_end);
            at = piece_end;
        }
        Some(pieces)
    }

    fn register(&mut self, lo: usize, hi: usize) -> Option<()> {
        self.ctx.bind_to_thread().ok()?;
        // Only the copy engine's reads are needed; a read-only pin also suits
        // mappings the kernel will not pin for writing.
        let flag_sets = [0, sys::CU_MEMHOSTREGISTER_READ_ONLY];
        let mut last = None;
        for flags in flag_sets {
            // SAFETY: lo..hi are whole pages of memory the caller keeps mapped
            // until the registration is removed (clear, drop).
            match unsafe { sys::cuMemHostRegister_v2(lo as *mut _, hi - lo, flags) } {
                sys::CUresult::CUDA_SUCCESS => {
                    self.ranges.insert(lo, hi);
                    self.bytes += hi - lo;
                    return Some(());
                }
                // Another device's decoder locked these pages (several GPUs
                // sharing one stream buffer): this region is staged, and
                // the next may be this device's to lock.
                sys::CUresult::CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED => return None,
                e => last = Some(e),
            }
        }
        let why = format!("cuMemHostRegister of {} bytes at {lo:#x} failed ({last:?})", hi - lo);
        // Once per user (a decoder, a channel): the run goes on, staging, a little slower.
        eprintln!("gpufec: {why}; its GPU copies go through pinned staging instead");
        self.refused = true;
        None
    }

    /// Remove every registration (the memory is about to go).
    pub(crate) fn clear(&mut self) {
        let _ = self.ctx.bind_to_thread();
        // A wedged device's queued copies may still read the pages (and
        // unregistering waits for it): they stay locked until the process ends.
        if !super::fault::wedged(self.ctx.ordinal()) {
            for &lo in self.ranges.keys() {
                // SAFETY: registered by `register` at exactly this address; copies
                // from it were waited for before the caller released the memory.
                let _ = unsafe { sys::cuMemHostUnregister(lo as *mut _) };
            }
        }
        self.ranges.clear();
        self.bytes = 0;
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.clear();
    }
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(p).ok().filter(|&p| p > 0).unwrap_or(4096)
}
