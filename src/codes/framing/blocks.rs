//! Code blocks laid end to end: of one fixed length, or of the lengths that
//! marks in the stream announce.

use super::{Cut, CutUnit, Cutter, InPlace, MAX_UNIT_ITEMS, Mark};
use crate::codes::decode::UnitSpan;
use crate::codes::error::{CodeError, CodeResult, invalid};

/// Cuts consecutive code blocks: all of one length ([`fixed`](Self::fixed)),
/// or each as long as the [`Mark`] at its start says ([`marked`](Self::marked),
/// a length that holds until the next mark).
///
/// # Example
/// ```
/// use gpufec::codes::framing::{BlockCutter, Cut, Cutter, Mark};
/// let mut fixed = BlockCutter::<i8>::fixed(4).unwrap();
/// let mut cut = Cut::default();
/// fixed.cut(&[1, 2, 3, 4, 5, 6], &[], &mut cut).unwrap();
/// assert_eq!(cut.units.len(), 1);
/// assert!(fixed.end(&mut cut).is_err()); // 2 of 4 items of the second block
///
/// let mut marked = BlockCutter::<i8>::marked(None, 100).unwrap();
/// let mut cut = Cut::default();
/// let marks = [Mark { at: 0, len: Some(2), ..Mark::default() }, Mark { at: 4, len: Some(3), format: Some(1), valid_bits: None }];
/// marked.cut(&[1, 2, 3, 4, 5, 6, 7], &marks, &mut cut).unwrap();
/// let lens: Vec<usize> = cut.units.iter().map(|u| u.span.len).collect();
/// assert_eq!(lens, [2, 2, 3]);
/// ```
#[derive(Debug, Clone)]
pub struct BlockCutter<T> {
    /// Length and format of the block being gathered, once known.
    current: Option<(usize, u16)>,
    /// Whether marks set the length.
    marked: bool,
    /// The longest block a mark may announce.
    max: usize,
    /// Items of the block being gathered that arrived in earlier pieces.
    partial: Vec<T>,
    /// Real bits of the block being gathered, when a mark said it is padded.
    valid_bits: Option<usize>,
    /// Stream position of the block being gathered.
    position: u64,
    /// What the items are called in messages.
    noun: &'static str,
    /// What a unit is called in messages.
    unit: &'static str,
}

impl<T: Copy + Send> BlockCutter<T> {
    /// Blocks of `len` items (1 ..= [`MAX_UNIT_ITEMS`]), format 0; marks are ignored.
    pub fn fixed(len: usize) -> CodeResult<Self> {
        check_len(len, MAX_UNIT_ITEMS)?;
        Ok(Self { current: Some((len, 0)), marked: false, max: len, partial: Vec::new(), valid_bits: None, position: 0, noun: "LLRs", unit: "code block" })
    }

    /// Blocks whose length and format marks set (a length of at most `max`
    /// items, itself at most [`MAX_UNIT_ITEMS`]), starting with `initial`
    /// (length, format) until the first mark; without it, items before the
    /// first mark are an error.
    pub fn marked(initial: Option<(usize, u16)>, max: usize) -> CodeResult<Self> {
        check_len(max, MAX_UNIT_ITEMS)?;
        if let Some((len, _)) = initial {
            check_len(len, max)?;
        }
        Ok(Self { current: initial, marked: true, max, partial: Vec::new(), valid_bits: None, position: 0, noun: "LLRs", unit: "code block" })
    }

    /// Call the items `noun` in messages (`LLRs` unless told).
    pub fn counting(mut self, noun: &'static str) -> Self {
        self.noun = noun;
        self
    }

    /// Call a unit `unit` in messages (`code block` unless told; a
    /// `transport block` of the LTE chain, say).
    pub fn naming(mut self, unit: &'static str) -> Self {
        self.unit = unit;
        self
    }

    /// Take `items` (a stretch without marks) into blocks.
    fn take(&mut self, mut items: &[T], out: &mut Cut<T>) -> CodeResult<()> {
        while !items.is_empty() {
            let Some((len, format)) = self.current else {
                return Err(invalid!(
                    "{} {} arrived before the first unit mark says how long a unit is (a framer marks the units it cuts; a plain stream is cut by its decoder: input = \"stream\")",
                    items.len(),
                    self.noun
                ));
            };
            if self.partial.is_empty() && items.len() >= len {
                // A whole block straight from the input.
                out.items.extend_from_slice(&items[..len]);
                items = &items[len..];
            } else {
                let n = (len - self.partial.len()).min(items.len());
                self.partial.extend_from_slice(&items[..n]);
                items = &items[n..];
                if self.partial.len() < len {
                    return Ok(());
                }
                out.items.append(&mut self.partial);
            }
            out.close_unit(len, format, self.position, Some(len));
            if let (Some(v), Some(u)) = (self.valid_bits.take(), out.units.last_mut()) {
                u.valid_bits = Some(v);
            }
            self.position += len as u64;
        }
        Ok(())
    }
}

fn check_len(len: usize, max: usize) -> CodeResult<()> {
    if !(1..=max).contains(&len) {
        return Err(invalid!("a code block of {len} items is outside 1..={max}"));
    }
    Ok(())
}

impl<T: Copy + Send> Cutter<T> for BlockCutter<T> {
    fn max_unit_items(&self) -> usize {
        self.max
    }

    fn plain(&self) -> bool {
        !self.marked
    }

    fn cut(&mut self, input: &[T], marks: &[Mark], out: &mut Cut<T>) -> CodeResult<()> {
        let mut from = 0;
        if self.marked {
            for m in marks {
                if m.at < from || m.at > input.len() {
                    return Err(invalid!("unit mark at offset {} of a piece of {} items is out of order", m.at, input.len()));
                }
                self.take(&input[from..m.at], out)?;
                from = m.at;
                if !self.partial.is_empty() {
                    let (len, _) = self.current.unwrap_or_default();
                    return Err(CodeError::Truncated(format!(
                        "a unit mark at {} {} cuts the unit before it short ({} of {len} {} present)",
                        self.noun,
                        self.position + self.partial.len() as u64,
                        self.partial.len(),
                        self.noun
                    )));
                }
                let (len, format) = self.current.unwrap_or((0, 0));
                let len = m.len.unwrap_or(len);
                check_len(len, self.max)?;
                self.current = Some((len, m.format.unwrap_or(format)));
                self.valid_bits = m.valid_bits;
            }
        }
        self.take(&input[from..], out)
    }

    fn cuts_in_place(&self) -> bool {
        !self.marked
    }

    fn cut_in_place(&mut self, available: usize, want: InPlace, out: &mut Vec<CutUnit>) -> Option<usize> {
        // Marks may change the length anywhere: only fixed blocks, from a block's start.
        let (len, format) = self.current?;
        if self.marked || !self.partial.is_empty() {
            return None;
        }
        let count = (available / len).min(want.max_units).min(want.max_items / len);
        if count == 0 || count < want.min_units {
            return Some(0);
        }
        for i in 0..count {
            let span = UnitSpan { start: i * len, len, format };
            out.push(CutUnit { span, valid_bits: None, origin: self.position + (i * len) as u64, own: Some(len) });
        }
        self.position += (count * len) as u64;
        Some(count * len)
    }

    fn release(&mut self) -> usize {
        if self.marked {
            return 0;
        }
        let n = self.partial.len();
        self.partial.clear();
        n
    }

    fn end(&mut self, _out: &mut Cut<T>) -> CodeResult<()> {
        if let (false, Some((len, _))) = (self.partial.is_empty(), self.current) {
            return Err(CodeError::Truncated(format!(
                "the {} stream ended inside a {} ({} of {len} {} present)",
                if self.noun == "LLRs" { "LLR" } else { self.noun },
                self.unit,
                self.partial.len(),
                self.noun
            )));
        }
        Ok(())
    }

    fn describe(&self) -> String {
        match (self.marked, self.current) {
            (false, Some((len, _))) => format!("{}s of {len} {}", self.unit, self.noun),
            _ => format!("blocks as long as the stream's unit marks say ({})", self.noun),
        }
    }
}
