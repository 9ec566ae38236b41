//! A batch of work units: their items in one buffer, and where each unit lies.

use super::BatchLimit;
use crate::codes::error::{CodeError, CodeResult, invalid};
use crate::codes::llr::{Llr, check_finite};

/// Where one unit of a [`Batch`] lies in the batch's buffer, and its format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct UnitSpan {
    /// Index of the unit's first item.
    pub start: usize,
    /// Items in the unit (at least 1).
    pub len: usize,
    /// Index of the decoder format ([`super::UnitShape`]) it has.
    pub format: u16,
}

/// Work units for a [`super::BatchDecoder`]: one buffer of items, cut either
/// into equal units of format 0 laid end to end, or by a list of spans (units
/// of different lengths and formats, possibly with gaps between them).
///
/// # Example
/// ```
/// use gpufec::codes::decode::{Batch, UnitSpan};
/// let items = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
/// let even = Batch::uniform(&items, 2).unwrap();
/// assert_eq!(even.units(), 3);
/// assert_eq!(even.unit(1), &[3.0, 4.0]);
/// let spans = [UnitSpan { start: 0, len: 1, format: 0 }, UnitSpan { start: 2, len: 4, format: 1 }];
/// let mixed = Batch::spans(&items, &spans).unwrap();
/// assert_eq!(mixed.unit(1), &[3.0, 4.0, 5.0, 6.0]);
/// assert_eq!(mixed.format(1), 1);
/// assert!(Batch::uniform(&items, 4).is_err());
/// ```
#[derive(Debug)]
pub struct Batch<'a, T> {
    items: &'a [T],
    layout: Layout<'a>,
}

#[derive(Debug, Clone, Copy)]
enum Layout<'a> {
    /// Units of this many items, end to end, format 0.
    Uniform(usize),
    Spans(&'a [UnitSpan]),
}

// Not derived: a batch is two references, whatever T is.
impl<T> Clone for Batch<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Batch<'_, T> {}

impl<'a, T> Batch<'a, T> {
    /// `items` cut into units of `len` items (format 0); `items` must hold a
    /// whole number of them.
    pub fn uniform(items: &'a [T], len: usize) -> CodeResult<Self> {
        if len == 0 {
            return Err(invalid!("a work unit of 0 items carries nothing"));
        }
        if !items.len().is_multiple_of(len) {
            return Err(CodeError::Truncated(format!(
                "{} items are not a whole number of {len}-item work units ({} of the last present)",
                items.len(),
                items.len() % len
            )));
        }
        Ok(Self { items, layout: Layout::Uniform(len) })
    }

    /// Units of `items` as `spans` say; every span must be non-empty and lie
    /// inside `items`.
    pub fn spans(items: &'a [T], spans: &'a [UnitSpan]) -> CodeResult<Self> {
        for (i, s) in spans.iter().enumerate() {
            if s.len == 0 || s.start.checked_add(s.len).is_none_or(|end| end > items.len()) {
                return Err(CodeError::LengthMismatch(format!(
                    "unit {i} (items {}..{}) is empty or lies outside the batch's {} items",
                    s.start,
                    s.start.saturating_add(s.len),
                    items.len()
                )));
            }
        }
        Ok(Self { items, layout: Layout::Spans(spans) })
    }

    /// Number of units.
    pub fn units(&self) -> usize {
        match self.layout {
            Layout::Uniform(len) => self.items.len() / len,
            Layout::Spans(s) => s.len(),
        }
    }

    /// Where unit `i` lies.
    ///
    /// # Panics
    /// When `i` is not below [`units`](Self::units).
    pub fn span(&self, i: usize) -> UnitSpan {
        match self.layout {
            Layout::Uniform(len) => {
                assert!(i < self.units(), "unit {i} of a batch of {}", self.units());
                UnitSpan { start: i * len, len, format: 0 }
            }
            Layout::Spans(s) => s[i],
        }
    }

    /// The items of unit `i`.
    pub fn unit(&self, i: usize) -> &'a [T] {
        let s = self.span(i);
        &self.items[s.start..s.start + s.len]
    }

    /// The format of unit `i`.
    pub fn format(&self, i: usize) -> u16 {
        self.span(i).format
    }

    /// Every unit's span, in order.
    pub fn spans_iter(&self) -> impl Iterator<Item = UnitSpan> + '_ {
        (0..self.units()).map(|i| self.span(i))
    }

    /// The whole buffer, gaps included.
    pub fn items(&self) -> &'a [T] {
        self.items
    }

    /// The unit length when the units are equal, end to end and of format 0.
    pub fn uniform_len(&self) -> Option<usize> {
        match self.layout {
            Layout::Uniform(len) => Some(len),
            Layout::Spans(_) => None,
        }
    }

    /// Items in the units, all together (gaps not counted).
    pub fn span_items(&self) -> usize {
        match self.layout {
            Layout::Uniform(_) => self.items.len(),
            Layout::Spans(s) => s.iter().map(|s| s.len).sum(),
        }
    }

    /// The first units that fit `limit`, and the rest. An error when not even
    /// the first unit fits.
    pub fn split_within(&self, limit: BatchLimit) -> CodeResult<(Self, Self)> {
        let mut units = 0;
        let mut items = 0;
        while units < self.units().min(limit.units) {
            let len = self.span(units).len;
            if items + len > limit.items {
                break;
            }
            items += len;
            units += 1;
        }
        if units == 0 && self.units() > 0 {
            return Err(CodeError::LengthMismatch(format!(
                "a unit of {} items exceeds the decoder's batch of {} units and {} items",
                self.span(0).len,
                limit.units,
                limit.items
            )));
        }
        Ok(match self.layout {
            Layout::Uniform(len) => {
                let (a, b) = self.items.split_at(units * len);
                (Self { items: a, layout: self.layout }, Self { items: b, layout: self.layout })
            }
            Layout::Spans(s) => {
                let (a, b) = s.split_at(units);
                (Self { items: self.items, layout: Layout::Spans(a) }, Self { items: self.items, layout: Layout::Spans(b) })
            }
        })
    }
}

impl<T: Llr> Batch<'_, T> {
    /// Check that every LLR of units `units` is finite; an error names the
    /// first bad one by its index in the batch's buffer. Units end to end are
    /// checked in one vectorised pass.
    pub fn check_finite(&self, units: std::ops::Range<usize>) -> CodeResult<()> {
        let at = |start: usize, r: CodeResult<()>| {
            r.map_err(|e| match e {
                CodeError::NonFiniteLlr { index } => CodeError::NonFiniteLlr { index: start + index },
                e => e,
            })
        };
        match self.layout {
            Layout::Uniform(len) => at(units.start * len, check_finite(&self.items[units.start * len..units.end * len])),
            Layout::Spans(s) => s[units].iter().try_for_each(|s| at(s.start, check_finite(&self.items[s.start..s.start + s.len]))),
        }
    }
}
