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
//! refuses, the caller stages as before.
//!
//! The registrations are the process's: the driver locks a page for one
//! registration only, and a stream buffer between two GPU blocks (the
//! channel writing LLRs into it, the decoder reading them out, or the
//! decoders of several devices) is used by both. So every registration lives
//! in one table, counted by its users, and is made portable (pinned for every
//! device's context); the last user to let go unlocks it. Only users that
//! both say their memory is a stream buffer (`shared`: mapped until they let
//! go) share a registration: memory a caller frees while it is locked may
//! come back at the same address with other pages, which a lock made for the
//! old pages must not serve; a user that does not say so stages what another
//! locked, as the driver would have it.

use cudarc::driver::{CudaContext, sys};
use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::{Arc, Mutex};

/// Most bytes registered at once: a FutureSDR double-mapped stream buffer in
/// front of a decoder block (three batches of 32 MiB, seen through both of
/// its mappings) many times over; a caller whose regions keep moving past
/// this is not reusing its memory, and stages instead.
pub(crate) const MAX_REGISTERED_BYTES: usize = 2 << 30;

/// One registration of the process: its end, its users, and whether the
/// device may write into it (a read-only one serves copies to the device only).
struct Lock {
    end: usize,
    users: usize,
    writable: bool,
    /// Made by a user of a stream buffer, which others of one may share.
    shared: bool,
}

/// Every registration of the process, by start: page aligned, disjoint.
static LOCKS: Mutex<BTreeMap<usize, Lock>> = Mutex::new(BTreeMap::new());

/// A user's share of the process's page-locked ranges of host memory,
/// given back on drop.
pub(crate) struct Registered {
    ctx: Arc<CudaContext>,
    /// Start → end of each registration this user holds.
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
    /// one registration, registering what is not yet (and, for a stream
    /// buffer, `shared`, taking a share of what another user of one
    /// registered); `None` when the driver refuses, the region would take
    /// this user's registrations past [`MAX_REGISTERED_BYTES`], part of it is
    /// locked by another user it may not share with, or the device is to
    /// write into it (`writable`) and part of it is locked read-only (the
    /// caller then stages the region itself).
    ///
    /// The caller must keep the region's pages mapped until [`Self::clear`] or
    /// drop.
    pub(crate) fn pieces(&mut self, addr: usize, len: usize, writable: bool, shared: bool) -> Option<Vec<Range<usize>>> {
        if self.refused || len == 0 {
            return None;
        }
        let page = page_size();
        let (end, mut at) = (addr + len, addr);
        let mut pieces = Vec::new();
        let mut locks = LOCKS.lock().unwrap_or_else(|e| e.into_inner());
        while at < end {
            let covering = locks.range(..=at).next_back().filter(|(_, l)| l.end > at).map(|(&lo, l)| (lo, l.end, l.writable, l.shared));
            let stop = match covering {
                Some((lo, hi, can_write, stream)) => {
                    let mine = self.ranges.contains_key(&lo);
                    if (writable && !can_write) || (!mine && (!shared || !stream)) {
                        return None;
                    }
                    if !mine {
                        if self.bytes + (hi - lo) > MAX_REGISTERED_BYTES {
                            return None;
                        }
                        locks.get_mut(&lo).expect("the lock just found").users += 1;
                        self.ranges.insert(lo, hi);
                        self.bytes += hi - lo;
                    }
                    hi
                }
                None => {
                    let next = locks.range(at + 1..).next().map_or(usize::MAX, |(s, _)| *s);
                    let lo = at / page * page;
                    // Never into the next registration, whose first page may be this range's last.
                    let hi = (end.div_ceil(page) * page).min(next);
                    // Registrations end on page boundaries, so `lo` lies past the one before.
                    if self.bytes + (hi - lo) > MAX_REGISTERED_BYTES {
                        return None;
                    }
                    let can_write = self.register(lo, hi, writable)?;
                    locks.insert(lo, Lock { end: hi, users: 1, writable: can_write, shared });
                    self.ranges.insert(lo, hi);
                    self.bytes += hi - lo;
                    hi
                }
            };
            let piece_end = stop.min(end);
            pieces.push(at..piece_end);
            at = piece_end;
        }
        Some(pieces)
    }

    /// Lock `lo..hi` for every device: `Some(whether the device may write
    /// into it)`, `None` when the driver refuses.
    fn register(&mut self, lo: usize, hi: usize, writable: bool) -> Option<bool> {
        self.ctx.bind_to_thread().ok()?;
        // A read-only pin suits mappings the kernel will not pin for
        // writing, where only the copy engine's reads are needed.
        let portable = sys::CU_MEMHOSTREGISTER_PORTABLE;
        let flag_sets: &[u32] = if writable { &[portable] } else { &[portable, portable | sys::CU_MEMHOSTREGISTER_READ_ONLY] };
        let mut last = None;
        for &flags in flag_sets {
            // SAFETY: lo..hi are whole pages of memory the caller keeps mapped
            // until the registration is removed (clear, drop).
            match unsafe { sys::cuMemHostRegister_v2(lo as *mut _, hi - lo, flags) } {
                sys::CUresult::CUDA_SUCCESS => return Some(flags & sys::CU_MEMHOSTREGISTER_READ_ONLY == 0),
                // Locked outside this table: staged.
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

    /// Give back this user's share of every registration it holds (its
    /// memory is about to go, or it is done with it); the last user of one
    /// unlocks it.
    pub(crate) fn clear(&mut self) {
        let _ = self.ctx.bind_to_thread();
        // A wedged device's queued copies may still read the pages (and
        // unregistering waits for it): they stay locked until the process ends.
        if !super::fault::wedged(self.ctx.ordinal()) {
            let mut locks = LOCKS.lock().unwrap_or_else(|e| e.into_inner());
            for &lo in self.ranges.keys() {
                let Some(lock) = locks.get_mut(&lo) else { continue };
                lock.users -= 1;
                if lock.users == 0 {
                    locks.remove(&lo);
                    // SAFETY: registered by `register` at exactly this address; copies
                    // from it were waited for by every user before it let go.
                    let _ = unsafe { sys::cuMemHostUnregister(lo as *mut _) };
                }
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
