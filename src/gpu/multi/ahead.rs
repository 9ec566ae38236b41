//! Results a device's thread collects ahead of the caller. The caller
//! collects the devices' batches in their order and waits on one device at
//! a time; each device's thread, between the jobs it is sent, collects
//! every batch its device has finished (bits, reports: on polar's 64-core
//! host about as long as the kernel), so that the devices' host parts run
//! side by side, each as soon as its device is done, rather than one after
//! the other on the caller's turn.

use crate::codes::decode::{BatchDecoder, Decoded};
use crate::codes::error::{CodeError, CodeResult};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

/// What a device's thread and the caller share.
#[derive(Default)]
struct Held {
    /// Results collected ahead, oldest first.
    done: VecDeque<Decoded>,
    /// Emptied results, whose allocations serve the next batches.
    spare: Vec<Decoded>,
    /// The error of a collection ahead, for the caller's collection of
    /// that batch; none is collected ahead until it is read.
    failed: Option<CodeError>,
    /// The device is taken out: nothing more is collected ahead.
    stopped: bool,
}

/// One device's results collected ahead of the caller: the oldest of the
/// batches the device holds, in order. Clones share them: one for the
/// device's thread, one for the caller.
#[derive(Clone, Default)]
pub(super) struct Ahead {
    held: Arc<Mutex<Held>>,
}

impl Ahead {
    /// The shared results, locked: a thread that panicked holding them left
    /// them whole (each change is one push, pop or assignment).
    fn held(&self) -> MutexGuard<'_, Held> {
        self.held.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether `d` holds a batch its thread may collect ahead once its
    /// device has finished it, so that the thread should look again soon.
    pub(super) fn pending<T: Copy + Send + Sync>(&self, d: &dyn BatchDecoder<T>) -> bool {
        let held = self.held();
        d.in_flight() > 0 && !held.stopped && held.failed.is_none()
    }

    /// On the device's thread, between its jobs: collect `d`'s oldest
    /// batch if the device has finished it
    /// ([`BatchDecoder::oldest_ready`]), never waiting for the device; one
    /// batch a turn, so that a job posted meanwhile (a batch, the caller's
    /// collect, `reused_read`) waits at most for one batch's unpacking.
    /// Whether one was collected (and another may be ready).
    pub(super) fn collect_one<T: Copy + Send + Sync>(&self, d: &mut dyn BatchDecoder<T>) -> bool {
        if !self.pending(d) || !d.oldest_ready() {
            return false;
        }
        let mut got = self.held().spare.pop().unwrap_or_default();
        let collected = d.collect(&mut got);
        // Checked under the lock that keeps the result: a device taken out
        // meanwhile keeps nothing.
        let mut held = self.held();
        match collected {
            Ok(true) if !held.stopped => {
                held.done.push_back(got);
                return true;
            }
            // A failed collection is the device's: its partial results are dropped.
            Err(e) if !held.stopped => held.failed = Some(e),
            _ => {}
        }
        got.clear();
        held.spare.push(got);
        false
    }

    /// Append the oldest result collected ahead to `out`; whether there was one.
    pub(super) fn take(&self, out: &mut Decoded) -> bool {
        let mut held = self.held();
        let Some(mut got) = held.done.pop_front() else { return false };
        hand_over(&mut got, out);
        held.spare.push(got);
        true
    }

    /// On the device's thread, in the caller's turn: the oldest batch's
    /// results into `out`, as collected ahead, or failed so, or collected
    /// now, waiting for the device.
    pub(super) fn collect<T: Copy + Send + Sync>(&self, d: &mut dyn BatchDecoder<T>, out: &mut Decoded) -> CodeResult<bool> {
        if self.take(out) {
            return Ok(true);
        }
        if let Some(e) = self.held().failed.take() {
            return Err(e);
        }
        d.collect(out)
    }

    /// Drop every result (and failure) collected ahead, after every answer
    /// was read (the device is taken out, or its batches abandoned); how
    /// many results there were.
    pub(super) fn forget(&self) -> usize {
        let mut held = self.held();
        held.failed = None;
        let n = held.done.len();
        while let Some(mut d) = held.done.pop_front() {
            d.clear();
            held.spare.push(d);
        }
        n
    }

    /// The device is taken out: its thread collects nothing more ahead.
    pub(super) fn stop(&self) {
        self.held().stopped = true;
    }
}

/// Append `from`'s results to `out`, leaving `from` empty: moved where `out`
/// holds none of a kind (no copy; `from` gets `out`'s empty allocation).
pub(super) fn hand_over(from: &mut Decoded, out: &mut Decoded) {
    fn one<X>(from: &mut Vec<X>, out: &mut Vec<X>) {
        if out.is_empty() {
            std::mem::swap(from, out);
        } else {
            out.append(from);
        }
    }
    one(&mut from.bits, &mut out.bits);
    one(&mut from.packed, &mut out.packed);
    one(&mut from.soft, &mut out.soft);
    one(&mut from.reports, &mut out.reports);
}
