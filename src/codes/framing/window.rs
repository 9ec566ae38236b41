//! Windows of a stream whose units' lengths only the decoder finds out.

use super::{Cut, Cutter, MAX_UNIT_ITEMS, Mark};
use crate::codes::error::{CodeResult, invalid};
use std::collections::VecDeque;

/// Cuts one window of up to `window` items at a time, at the stream position
/// where the previous unit ended, which the decoder reports
/// ([`Cutter::learn`]): the framing of insertion/deletion channels, where a
/// frame of τ sent symbols arrives as τ plus or minus the drift and the
/// decoder finds where it ended.
///
/// A window is cut as soon as `window` items past its start have arrived, or
/// at the end of the stream with what is left; the next one only after the
/// decoder said how much of this one it consumed (at least 1 item). At the
/// end, at most [`leftover`](Self::with_leftover) items after the last unit
/// are no unit of their own: a decoder's estimate of where a frame ended may
/// leave the frame's last items (an insertion near its end) to a next frame
/// that never comes.
///
/// # Example
/// ```
/// use gpufec::codes::framing::{Cut, Cutter, WindowCutter};
/// let mut w = WindowCutter::<u8>::new(4).unwrap();
/// let mut cut = Cut::default();
/// w.cut(&[1, 2, 3, 4, 5, 6, 7], &[], &mut cut).unwrap();
/// assert_eq!(cut.units.len(), 1);                // items 0..4
/// assert!(w.awaiting());
/// w.learn(3, &mut cut).unwrap();                 // the frame held 3 of them
/// assert_eq!(cut.units[1].origin, 3);            // items 3..7
/// assert_eq!(&cut.items[4..], &[4, 5, 6, 7]);
/// ```
#[derive(Debug, Clone)]
pub struct WindowCutter<T> {
    window: usize,
    /// Items from stream position `buf_start` on.
    buf: VecDeque<T>,
    buf_start: u64,
    /// Stream position of the next window.
    next: u64,
    /// Length of the window cut and not yet learned.
    awaiting: Option<usize>,
    ended: bool,
    /// Items after the last unit that the stream's end leaves undecoded.
    leftover: usize,
}

impl<T: Copy + Send> WindowCutter<T> {
    /// Windows of at most `window` items (1 ..= [`MAX_UNIT_ITEMS`]).
    pub fn new(window: usize) -> CodeResult<Self> {
        if !(1..=MAX_UNIT_ITEMS).contains(&window) {
            return Err(invalid!("a window of {window} items is outside 1..={MAX_UNIT_ITEMS}"));
        }
        Ok(Self { window, buf: VecDeque::new(), buf_start: 0, next: 0, awaiting: None, ended: false, leftover: 0 })
    }

    /// At the stream's end, leave up to `items` items after the last unit
    /// undecoded (a stream of no unit at all is still cut).
    pub fn with_leftover(mut self, items: usize) -> Self {
        self.leftover = items;
        self
    }

    /// Cut the next window if its items are there.
    fn try_cut(&mut self, out: &mut Cut<T>) {
        if self.awaiting.is_some() {
            return;
        }
        let have = (self.buf_start + self.buf.len() as u64).saturating_sub(self.next) as usize;
        let left_over = self.ended && self.next > 0 && have <= self.leftover;
        if have == 0 || (have < self.window && !self.ended) || left_over {
            return;
        }
        let len = have.min(self.window);
        let from = (self.next - self.buf_start) as usize;
        out.items.extend(self.buf.range(from..from + len));
        out.close_unit(len, 0, self.next, None);
        self.awaiting = Some(len);
    }
}

impl<T: Copy + Send> Cutter<T> for WindowCutter<T> {
    fn max_unit_items(&self) -> usize {
        self.window
    }

    fn cut(&mut self, input: &[T], _marks: &[Mark], out: &mut Cut<T>) -> CodeResult<()> {
        self.buf.extend(input);
        self.try_cut(out);
        Ok(())
    }

    fn end(&mut self, out: &mut Cut<T>) -> CodeResult<()> {
        self.ended = true;
        self.try_cut(out);
        Ok(())
    }

    fn learns(&self) -> bool {
        true
    }

    fn awaiting(&self) -> bool {
        self.awaiting.is_some()
    }

    fn learn(&mut self, items: usize, out: &mut Cut<T>) -> CodeResult<()> {
        let Some(len) = self.awaiting else {
            return Err(invalid!("the decoder reported a unit the window cutter did not cut"));
        };
        if !(1..=len).contains(&items) {
            return Err(invalid!("the decoder says a window of {len} items consumed {items}; it must consume 1..={len}"));
        }
        self.next += items as u64;
        self.awaiting = None;
        // Items before the next window are never needed again.
        let drop = (self.next - self.buf_start) as usize;
        self.buf.drain(..drop.min(self.buf.len()));
        self.buf_start = self.next;
        self.try_cut(out);
        Ok(())
    }

    fn describe(&self) -> String {
        format!("windows of up to {} items, each starting where the decoder found the last one ended", self.window)
    }
}
