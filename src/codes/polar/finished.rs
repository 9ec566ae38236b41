//! Decoded batches waiting to be collected: what the family's CPU decoders,
//! which decode on submit, keep between `submit` and `collect`.

use crate::codes::decode::Decoded;
use std::collections::VecDeque;

/// Batches decoded and not yet collected, oldest first.
#[derive(Debug, Default)]
pub(super) struct Finished(VecDeque<Decoded>);

impl Finished {
    /// Keep a decoded batch.
    pub(super) fn push(&mut self, batch: Decoded) {
        self.0.push_back(batch);
    }

    /// Append the oldest batch to `out`; `false` when there is none.
    pub(super) fn collect(&mut self, out: &mut Decoded) -> bool {
        let Some(d) = self.0.pop_front() else { return false };
        out.bits.extend_from_slice(&d.bits);
        out.soft.extend_from_slice(&d.soft);
        out.reports.extend_from_slice(&d.reports);
        true
    }

    /// Batches waiting.
    pub(super) fn len(&self) -> usize {
        self.0.len()
    }
}
