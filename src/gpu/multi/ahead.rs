//! Results a device's thread collects ahead of the caller. The caller
//! collects the devices' batches in their order and waits on one device at
//! a time; a device whose batch is finished meanwhile has its own thread
//! unpack it (bits, reports: on polar's 64-core host about as long as the
//! kernel), so that the devices' host parts run side by side rather than
//! one after the other on the caller's turn.

use super::worker::Worker;
use crate::codes::decode::Decoded;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

/// The tag of a probe's answer (no batch's sequence number reaches it).
pub(super) const PROBE: u64 = u64::MAX;

/// What a device's thread and the caller share.
#[derive(Default)]
struct Held {
    /// Results collected ahead, oldest first.
    done: VecDeque<Decoded>,
    /// Emptied results, whose allocations serve the next batches.
    spare: Vec<Decoded>,
}

/// One device's results collected ahead of the caller: the oldest of the
/// batches the device holds, in order.
#[derive(Default)]
pub(super) struct Ahead {
    held: Arc<Mutex<Held>>,
    /// A probe is posted and its answer not read.
    probing: bool,
}

/// `held`, locked: a thread that panicked holding it left it whole (each
/// change is one push or pop).
fn lock(held: &Mutex<Held>) -> MutexGuard<'_, Held> {
    held.lock().unwrap_or_else(|p| p.into_inner())
}

impl Ahead {
    fn held(&self) -> MutexGuard<'_, Held> {
        lock(&self.held)
    }

    /// Post a probe to the device's `worker` unless one is out or each of
    /// its `in_flight` batches is collected already: the thread collects
    /// the decoder's oldest batch if the device has finished it
    /// ([`BatchDecoder::oldest_ready`](crate::codes::decode::BatchDecoder::oldest_ready)),
    /// never waiting for the device, so that what the caller posts next (a
    /// batch, `reused_read`) waits at most for one batch's unpacking.
    /// Whether one was posted (answered with [`PROBE`]).
    pub(super) fn probe<T: Copy + Send + Sync + 'static>(&mut self, worker: &Worker<T>, in_flight: usize) -> bool {
        if self.probing || self.held().done.len() >= in_flight {
            return false;
        }
        let held = self.held.clone();
        let posted = worker.post(PROBE, move |d| {
            if !d.oldest_ready() {
                return Ok(());
            }
            let mut got = lock(&held).spare.pop().unwrap_or_default();
            // A failed collection is the device's: its partial results are dropped.
            if d.collect(&mut got)? {
                lock(&held).done.push_back(got);
            }
            Ok(())
        });
        self.probing = posted.is_ok();
        self.probing
    }

    /// The probe's answer was read.
    pub(super) fn answered(&mut self) {
        self.probing = false;
    }

    /// Append the oldest result collected ahead to `out`; whether there was
    /// one. Only with no probe out (its answer read): it might be adding one.
    pub(super) fn take(&mut self, out: &mut Decoded) -> bool {
        let mut held = self.held();
        let Some(mut got) = held.done.pop_front() else { return false };
        hand_over(&mut got, out);
        held.spare.push(got);
        true
    }

    /// Drop every result collected ahead, after every answer was read (the
    /// device is taken out, or its batches abandoned); how many there were.
    pub(super) fn forget(&mut self) -> usize {
        self.probing = false;
        let mut held = self.held();
        let dropped: Vec<Decoded> = held.done.drain(..).collect();
        let n = dropped.len();
        for mut d in dropped {
            d.clear();
            held.spare.push(d);
        }
        n
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
