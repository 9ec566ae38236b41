//! The input of a batch in flight on one of several devices, kept until its
//! results are collected, so that another device can decode it again when
//! its own fails: a copy, or the caller's items while the caller promises
//! to keep them.

use crate::codes::decode::{Batch, UnitSpan};
use std::mem::MaybeUninit;
use std::ops::Range;

/// One batch's units, rebased to the region of the caller's buffer they cover.
pub(super) struct Kept<T> {
    /// The copy; its allocation serves batch after batch.
    copy: Vec<T>,
    /// The caller's items (start, length) while they may be read where they lie.
    lent: Option<(*const T, usize)>,
    /// The unit length of a uniform batch; else `spans` say where units lie.
    uniform: Option<usize>,
    spans: Vec<UnitSpan>,
}

// SAFETY: the lent pointer is read only while the caller keeps the items
// (see `lend`), from one thread at a time; the rest is owned data.
unsafe impl<T: Send + Sync> Send for Kept<T> {}

impl<T: Copy + Send + Sync> Kept<T> {
    /// Nothing kept yet.
    pub(super) fn new() -> Self {
        Self { copy: Vec::new(), lent: None, uniform: None, spans: Vec::new() }
    }

    /// Take `batch`'s layout; the range of its buffer that its units cover.
    fn layout_of(&mut self, batch: &Batch<'_, T>) -> Range<usize> {
        self.spans.clear();
        if let Some(len) = batch.uniform_len() {
            self.uniform = Some(len);
            return 0..batch.items().len();
        }
        self.uniform = None;
        let start = batch.spans_iter().map(|s| s.start).min().unwrap_or(0);
        let end = batch.spans_iter().map(|s| s.start + s.len).max().unwrap_or(0);
        self.spans.extend(batch.spans_iter().map(|s| UnitSpan { start: s.start - start, ..s }));
        start..end
    }

    /// Keep a copy of `batch`'s units, made by the current rayon pool.
    pub(super) fn copy_of(&mut self, batch: &Batch<'_, T>) {
        let region = self.layout_of(batch);
        self.lent = None;
        self.fill(&batch.items()[region]);
    }

    /// Point at `batch`'s units where they lie, copied later by [`Self::copy_lent`].
    ///
    /// # Safety
    /// The caller keeps `batch`'s items unchanged and mapped until
    /// [`Self::end_loan`], and no [`Self::batch`] outlives them.
    pub(super) unsafe fn lend(&mut self, batch: &Batch<'_, T>) {
        let region = self.layout_of(batch);
        let items = &batch.items()[region];
        self.lent = Some((items.as_ptr(), items.len()));
        self.copy.clear();
    }

    /// The lent items.
    fn lent_items(&self) -> Option<&[T]> {
        // SAFETY: `lend`'s caller keeps them until `end_loan`.
        self.lent.map(|(p, n)| unsafe { std::slice::from_raw_parts(p, n) })
    }

    /// Copy the lent items, so that the loan may end.
    pub(super) fn copy_lent(&mut self) {
        if let Some((p, n)) = self.lent {
            // SAFETY: as in `lent_items`; the copy is another allocation.
            self.fill(unsafe { std::slice::from_raw_parts(p, n) });
        }
    }

    /// The caller takes its items back: copy them now if that was not done.
    pub(super) fn end_loan(&mut self) {
        if let Some((_, n)) = self.lent {
            if self.copy.len() != n {
                self.copy_lent();
            }
            self.lent = None;
        }
    }

    /// Whether no copy of a batch was made.
    #[cfg(test)]
    pub(super) fn copied_nothing(&self) -> bool {
        self.copy.is_empty()
    }

    /// The caller takes its items back, and nothing of them is kept.
    pub(super) fn forget_loan(&mut self) {
        self.lent = None;
    }

    /// Replace the copy with `src`, split over the pool's threads when large.
    fn fill(&mut self, src: &[T]) {
        self.copy.clear();
        self.copy.reserve_exact(src.len());
        let spare: &mut [MaybeUninit<T>] = &mut self.copy.spare_capacity_mut()[..src.len()];
        crate::gpu::pipeline::par_chunks(spare, src, |d, s| {
            d.write_copy_of_slice(s);
        });
        // SAFETY: every one of the first src.len() items was written above.
        unsafe { self.copy.set_len(src.len()) };
    }

    /// The kept batch: the lent items while lent, else the copy.
    pub(super) fn batch(&self) -> Batch<'_, T> {
        let items = self.lent_items().unwrap_or(&self.copy);
        // The layout came from a valid batch over these very items.
        match self.uniform {
            Some(len) => Batch::uniform(items, len),
            None => Batch::spans(items, &self.spans),
        }
        .expect("a kept batch has its own layout")
    }
}
