//! The one decoder contract every code family implements, CPU reference and
//! GPU launcher alike.
//!
//! A decoder turns *work units* (a run of Viterbi tiles, a turbo code block, a
//! polar codeword, a window of received symbols) into information bits. Work
//! is submitted in [`Batch`]es and collected in order, so that a GPU decoder
//! can keep several batches in flight (copy in, compute, copy out) while a CPU
//! decoder simply decodes on submit.
//!
//! - Units of one batch may differ in length and in *format*: a decoder
//!   declares its formats ([`UnitShape`], indexed by `format`), and each unit
//!   names one. A turbo decoder of one transport block has a format per code
//!   block size; a Viterbi decoder has one.
//! - A format may take fewer input items than its maximum
//!   ([`UnitInput::UpTo`]): for codes whose received length is known only
//!   after decoding, the unit is a window of the stream and its report says how
//!   much of it the unit consumed.
//! - [`collect`](BatchDecoder::collect) appends hard bits, soft output when
//!   the decoder gives it, and one [`UnitReport`] per unit (iterations, the
//!   code's own check, input consumed).

mod batch;
mod decoded;

pub use batch::{Batch, UnitSpan};
pub use decoded::{Decoded, UnitReport};

use crate::codes::error::{CodeError, CodeResult};

/// How many input items a unit of one format takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnitInput {
    /// Exactly [`UnitShape::items`].
    Exact,
    /// From 1 up to [`UnitShape::items`]: a window of a stream, of which the
    /// unit consumes what its report says.
    UpTo,
}

/// One unit format of a decoder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnitShape {
    /// Input items per unit (the most, with [`UnitInput::UpTo`]).
    pub items: usize,
    /// Information bits each unit decodes to.
    pub bits: usize,
    /// Whether the unit takes exactly `items` items.
    pub input: UnitInput,
}

impl UnitShape {
    /// A format taking exactly `items` items to `bits` bits.
    pub const fn exact(items: usize, bits: usize) -> Self {
        Self { items, bits, input: UnitInput::Exact }
    }

    /// Whether a unit of `len` items fits this format.
    pub fn accepts(&self, len: usize) -> bool {
        match self.input {
            UnitInput::Exact => len == self.items,
            UnitInput::UpTo => (1..=self.items).contains(&len),
        }
    }
}

/// The largest batch a decoder takes at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchLimit {
    /// Units per batch.
    pub units: usize,
    /// Input items per batch, all units together.
    pub items: usize,
}

/// A decoder of batches of work units whose items are of type `T` (LLRs, or
/// received symbols).
pub trait BatchDecoder<T: Copy + Send + Sync>: Send {
    /// The unit formats, indexed by [`UnitSpan::format`]; never empty.
    fn shapes(&self) -> &[UnitShape];

    /// The largest batch [`submit`](Self::submit) takes.
    fn limit(&self) -> BatchLimit;

    /// Batches that may be in flight before the oldest must be collected.
    fn depth(&self) -> usize;

    /// Start decoding `batch` (within [`limit`](Self::limit), every unit of a
    /// format it accepts). A NaN or infinite LLR fails the whole batch.
    fn submit(&mut self, batch: &Batch<'_, T>) -> CodeResult<()>;

    /// [`submit`](Self::submit) for a batch whose items lie in memory the
    /// caller cuts batch after batch from (a stream buffer read in place),
    /// mapped until [`forget_reused`](Self::forget_reused): a GPU decoder may
    /// page-lock that memory once and copy units straight from it, which may
    /// still read the items after this returns: the caller keeps them
    /// unchanged until [`reused_read`](Self::reused_read) returns. Says
    /// whether they go from where they lie (`false`: staged as by `submit`,
    /// read on return).
    ///
    /// # Safety
    /// The memory of `batch`'s items (and the rest of its pages) must stay
    /// mapped and unchanged until `reused_read` returns, and must not be
    /// freed, or reused for other memory at the same addresses, before
    /// `forget_reused` or the decoder's drop: a decoder that locked the pages
    /// knows them by address, and would copy from the old pages.
    unsafe fn submit_reused(&mut self, batch: &Batch<'_, T>) -> CodeResult<bool> {
        self.submit(batch).map(|()| false)
    }

    /// Wait until the items of every [`submit_reused`](Self::submit_reused)
    /// batch have been read, so that the caller may overwrite them.
    fn reused_read(&mut self) -> CodeResult<()> {
        Ok(())
    }

    /// The memory of earlier [`submit_reused`](Self::submit_reused) batches
    /// is about to be freed: release whatever was set up for it (after
    /// [`reused_read`](Self::reused_read)).
    fn forget_reused(&mut self) {}

    /// Append the results of the oldest submitted batch to `out`, waiting for
    /// them; `false` when nothing is in flight.
    fn collect(&mut self, out: &mut Decoded) -> CodeResult<bool>;

    /// Batches submitted and not yet collected.
    fn in_flight(&self) -> usize;

    /// Whether the oldest batch in flight is decoded, so that
    /// [`collect`](Self::collect) would only hand its results over, waiting for
    /// no device; `false` when nothing is in flight, or when the decoder
    /// cannot tell without waiting.
    fn oldest_ready(&mut self) -> bool {
        false
    }

    /// One line naming the backend and its resources, e.g. `cpu (2 threads, avx2)`.
    fn describe(&self) -> String;

    /// From now on, hand hard decisions packed ([`Decoded::packed`], with the
    /// reports as before) instead of a byte per bit, if this decoder can
    /// (its units' bits are whole bytes); whether it will. A decoder whose
    /// bits are packed already (a GPU's) saves the unpacking, and the caller
    /// the packing, of every bit.
    fn pack_bits(&mut self) -> bool {
        false
    }

    /// Whether [`collect`](Self::collect) also gives soft output (one
    /// a-posteriori LLR per decoded bit, in [`Decoded::soft`]).
    fn gives_soft(&self) -> bool {
        false
    }

    /// For a decoder spread over several devices, what each decoded so far:
    /// (device index, batches, units); empty for one device or the CPU.
    fn dealt(&self) -> Vec<(usize, u64, u64)> {
        Vec::new()
    }

    /// Decode every unit of `batch`, of any size: it is split at the
    /// decoder's limit, and up to [`depth`](Self::depth) parts are kept in
    /// flight. Results are appended to `out`.
    fn decode(&mut self, batch: &Batch<'_, T>, out: &mut Decoded) -> CodeResult<()> {
        let limit = self.limit();
        let mut rest = *batch;
        while rest.units() > 0 {
            let (part, later) = rest.split_within(limit)?;
            if self.in_flight() >= self.depth() {
                self.collect(out)?;
            }
            self.submit(&part)?;
            rest = later;
        }
        while self.collect(out)? {}
        Ok(())
    }

    /// Decode `items`, whole units of format 0 back to back, appending their
    /// bits to `bits`.
    fn decode_all(&mut self, items: &[T], bits: &mut Vec<u8>) -> CodeResult<()> {
        let shape = self.shapes()[0];
        if shape.input != UnitInput::Exact {
            return Err(CodeError::InvalidParameter(
                "units of varying length need a batch that says where each one starts".into(),
            ));
        }
        let mut out = Decoded { bits: std::mem::take(bits), ..Decoded::default() };
        let r = self.decode(&Batch::uniform(items, shape.items)?, &mut out);
        *bits = out.bits;
        r
    }
}

/// Check `batch` against a decoder's formats and limit, as every
/// [`BatchDecoder::submit`] must; returns the number of units.
pub fn check_batch<T>(batch: &Batch<'_, T>, shapes: &[UnitShape], limit: BatchLimit) -> CodeResult<usize> {
    let units = batch.units();
    if units > limit.units || batch.span_items() > limit.items {
        return Err(CodeError::LengthMismatch(format!(
            "a batch of {units} units and {} items exceeds the decoder's limit of {} units and {} items",
            batch.span_items(),
            limit.units,
            limit.items
        )));
    }
    if let Some(len) = batch.uniform_len() {
        return match shapes.first() {
            Some(s) if s.accepts(len) => Ok(units),
            _ => Err(wrong_unit(len, 0, shapes)),
        };
    }
    for span in batch.spans_iter() {
        match shapes.get(span.format as usize) {
            Some(s) if s.accepts(span.len) => {}
            _ => return Err(wrong_unit(span.len, span.format, shapes)),
        }
    }
    Ok(units)
}

fn wrong_unit(len: usize, format: u16, shapes: &[UnitShape]) -> CodeError {
    let takes: Vec<String> = shapes
        .iter()
        .enumerate()
        .map(|(i, s)| match s.input {
            UnitInput::Exact => format!("format {i}: {} items", s.items),
            UnitInput::UpTo => format!("format {i}: up to {} items", s.items),
        })
        .collect();
    CodeError::LengthMismatch(format!(
        "a unit of {len} items in format {format} does not fit the decoder, which takes {}",
        takes.join("; ")
    ))
}

#[cfg(test)]
pub(crate) mod tests;
