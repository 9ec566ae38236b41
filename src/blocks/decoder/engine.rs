//! The engine of the decoder block: cuts its input into units, gathers them
//! into batches, keeps batches in flight, and hands the bits back in order
//! with the stream's tags and a report per unit.

use super::DecoderOptions;
use super::stats::DecoderStats;
use crate::blocks::unit_tags::{UNIT_REPORT_TAG, VALID_BITS_TAG, split_tags};
use crate::codes::decode::{Batch, BatchDecoder, BatchLimit, Decoded, UnitShape, UnitSpan};
use crate::codes::framing::{Cut, CutUnit, Cutter, InPlace, Mark};
use crate::codes::packed::par_pack_msb;
use crate::codes::threads::par_copy;
use anyhow::Context;
use futuresdr::runtime::dev::Tag;
use futuresdr::runtime::dev::prelude::*;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

pub(crate) struct Engine<T: CpuSample + Copy> {
    cutter: Box<dyn Cutter<T>>,
    decoder: Box<dyn BatchDecoder<T>>,
    shapes: Vec<UnitShape>,
    limit: BatchLimit,
    options: DecoderOptions,
    /// Units cut and not yet submitted.
    pending: Cut<T>,
    /// When each pending unit was cut, oldest first: the latency bound counts
    /// from there.
    cut_at: VecDeque<Instant>,
    /// The format the unit marks of the stream last named (a mark without a
    /// format keeps it).
    mark_format: u16,
    /// The units of each batch in flight.
    flights: VecDeque<Vec<CutUnit>>,
    /// Results collected and not yet written, from `sent` (bits) and
    /// `sent_soft` on; `base` is the output position of `queue.bits[0]`.
    queue: Decoded,
    sent: usize,
    sent_soft: usize,
    base: u64,
    /// Output tags at absolute output positions, in order.
    out_tags: VecDeque<(u64, Tag)>,
    /// Input tags at absolute input positions, waiting for their unit.
    in_tags: VecDeque<(u64, Tag)>,
    /// Input items taken so far.
    taken: u64,
    /// Input position up to which the stream's tags are in `in_tags`: a
    /// cutter that gives items back sees them again, their tags must not
    /// count twice.
    tags_to: u64,
    /// Since when whole units wait in the input for a full batch to cut in place.
    waiting_since: Option<Instant>,
    /// The input ended and the cutter was told.
    ended: bool,
    /// Why the stream's end was wrong (it ended inside a unit), said once
    /// the whole units before it are decoded and written.
    cut_off: Option<anyhow::Error>,
    stats: Arc<DecoderStats>,
    spans: Vec<UnitSpan>,
    /// The decoder hands bits packed (`queue.packed`), for packed output.
    packs: bool,
    /// Bits in `queue.packed` (its last byte may be partly padding).
    packed_bits: usize,
}

/// Most input items cut in one go: bounds the work between two looks at the
/// output and the clock.
const CUT_CHUNK_BYTES: usize = 4 << 20;

/// Largest batch cut in place, bytes, and how many such batches the input
/// buffer holds. Since the GPU copies batches from the buffer itself, a
/// shallow buffer is faster: what the file source wrote is still in the
/// CPU's cache when it is copied (on the lent H200, file → decoder → file,
/// three runs each: 32 MiB × 3 measured 11.0–12.0 Gb/s, × 2 11.2–12.0, × 4
/// 10.1–11.0, × 8 8.3–8.9; 16 MiB × 4 10.0–10.3, 48 MiB × 3 10.2–10.8).
const IN_PLACE_BATCH_BYTES: usize = 32 << 20;
const IN_PLACE_BATCHES: usize = 3;

impl<T: CpuSample + Copy> Engine<T> {
    pub fn new(cutter: Box<dyn Cutter<T>>, mut decoder: Box<dyn BatchDecoder<T>>, options: DecoderOptions) -> anyhow::Result<Self> {
        let shapes = decoder.shapes().to_vec();
        anyhow::ensure!(!shapes.is_empty(), "the decoder declares no unit format");
        let limit = decoder.limit();
        anyhow::ensure!(limit.units > 0 && limit.items > 0, "the decoder takes batches of nothing ({limit:?})");
        anyhow::ensure!(decoder.depth() > 0, "the decoder keeps no batch in flight (depth 0), so it could never decode one");
        anyhow::ensure!(
            cutter.max_unit_items() <= limit.items,
            "the cutter cuts units of up to {} items, more than the decoder's batch of {} items",
            cutter.max_unit_items(),
            limit.items
        );
        anyhow::ensure!(
            !options.soft || decoder.gives_soft(),
            "soft output was asked of a decoder that gives hard decisions only ({})",
            decoder.describe()
        );
        // Only a cutter that cuts in place (Tiler, fixed blocks) pads nothing
        // but the stream's last unit, which packed units need.
        let packs = options.packed && cutter.cuts_in_place() && decoder.pack_bits();
        Ok(Self {
            cutter,
            decoder,
            shapes,
            limit,
            options,
            pending: Cut::default(),
            cut_at: VecDeque::new(),
            mark_format: 0,
            flights: VecDeque::new(),
            queue: Decoded::default(),
            sent: 0,
            sent_soft: 0,
            base: 0,
            out_tags: VecDeque::new(),
            in_tags: VecDeque::new(),
            taken: 0,
            tags_to: 0,
            waiting_since: None,
            ended: false,
            cut_off: None,
            stats: Arc::default(),
            spans: Vec::new(),
            packs,
            packed_bits: 0,
        })
    }

    /// Once the block finished: why its stream ended wrong, saying how much
    /// before it was decoded and passed on. The block ends normally all the
    /// same, so that the blocks after it write all of that out; the run then
    /// fails with this.
    pub fn cut_off(&mut self) -> Option<anyhow::Error> {
        let e = self.cut_off.take()?;
        let c = self.stats.counts();
        let units = if c.units == 1 { "unit" } else { "units" };
        Some(anyhow::anyhow!("{e:#}; the {} whole {units} before it were decoded and passed on ({} bits)", c.units, c.bits))
    }

    pub fn describe(&self) -> String {
        self.decoder.describe()
    }

    /// Whether a stream that ends inside a unit only drops its tail
    /// ([`DecoderOptions::drop_partial_end`]).
    pub fn drops_partial_end(&self) -> bool {
        self.options.drop_partial_end
    }

    /// Input items taken so far.
    pub fn taken(&self) -> u64 {
        self.taken
    }

    pub fn stats(&self) -> Arc<DecoderStats> {
        self.stats.clone()
    }

    /// Input items worth buffering in front of the block: batches cut in
    /// place, or a piece to copy.
    pub fn input_buffer_items(&self) -> usize {
        if self.cutter.cuts_in_place() {
            return IN_PLACE_BATCHES * self.in_place_units() * self.cutter.max_unit_items() + self.cutter.max_unit_items();
        }
        self.limit.items.min((CUT_CHUNK_BYTES / size_of::<T>().max(1)).max(self.cutter.max_unit_items()))
    }

    /// Units of a full batch cut in place.
    fn in_place_units(&self) -> usize {
        let unit = self.cutter.max_unit_items();
        let items = self.limit.items.min(IN_PLACE_BATCH_BYTES / size_of::<T>().max(1));
        self.limit.units.min(items / unit).max(1)
    }

    /// One `work` call.
    pub fn work(
        &mut self,
        input: &mut DefaultCpuReader<T>,
        output: &mut DefaultCpuWriter<u8>,
        mut soft: Option<&mut DefaultCpuWriter<f32>>,
        io: &mut WorkIo,
    ) -> anyhow::Result<()> {
        loop {
            self.drain(output, soft.as_deref_mut());
            if self.backlog() {
                // Downstream is full: wait for it before producing more.
                return Ok(());
            }
            if self.decoder.in_flight() > 0 && (self.decoder.in_flight() >= self.decoder.depth() || self.ended || self.cutter.awaiting()) {
                self.collect()?;
                continue;
            }
            if self.submit_due() {
                self.submit()?;
                continue;
            }
            if self.take_input(input)? {
                continue;
            }
            if self.decoder.in_flight() > 0 {
                // Nothing else to do: the batches in flight are the only work.
                self.collect()?;
                continue;
            }
            if self.ended && self.pending.units.is_empty() && !self.cutter.awaiting() {
                // The input buffer goes with the flowgraph: nothing may stay locked on it.
                self.decoder.forget_reused();
                io.finished = true;
                return Ok(());
            }
            // Units wait for their batch to fill: look again when the latency bound is due.
            let waiting = self.cut_at.front().or(self.waiting_since.as_ref());
            if let Some(wait) = waiting.map(|t| self.options.max_latency.saturating_sub(t.elapsed())).filter(|w| !w.is_zero()) {
                io.block_on(futuresdr::runtime::Timer::after(wait));
            }
            return Ok(());
        }
    }

    /// Whether results wait for room downstream. Packed output holds back
    /// the bits of a byte not yet whole until the stream's last.
    fn backlog(&self) -> bool {
        let unsent = self.queued_bits() - self.sent;
        // (A packing decoder's units are whole bytes: nothing to hold back.)
        let bits = if self.options.packed && !self.packs && !self.all_cut() { unsent >= 8 } else { unsent > 0 };
        bits || (self.options.soft && self.sent_soft < self.queue.soft.len())
    }

    /// Bits in the queue, sent or not.
    fn queued_bits(&self) -> usize {
        if self.packs { self.packed_bits } else { self.queue.bits.len() }
    }

    /// Whether every unit of the stream is decoded and in the queue.
    fn all_cut(&self) -> bool {
        self.ended && self.flights.is_empty() && self.pending.units.is_empty() && !self.cutter.awaiting()
    }

    /// Whether the pending units should go now: a full batch, the end of the
    /// stream, a cutter waiting on them, or the latency bound.
    fn submit_due(&self) -> bool {
        if self.pending.units.is_empty() || self.decoder.in_flight() >= self.decoder.depth() {
            return false;
        }
        let full = self.pending.units.len() >= self.limit.units
            || self.pending.items.len() + self.cutter.max_unit_items() > self.limit.items;
        let late = self.cut_at.front().is_some_and(|t| t.elapsed() >= self.options.max_latency);
        full || self.ended || self.cutter.awaiting() || late
    }

    /// Take the next piece of input into the cutter; whether anything happened.
    fn take_input(&mut self, input: &mut DefaultCpuReader<T>) -> anyhow::Result<bool> {
        if self.ended || self.cutter.awaiting() || self.pending.items.len() >= self.limit.items {
            return Ok(false);
        }
        let finished = input.finished();
        if input.slice().is_empty() {
            if !finished {
                return Ok(false);
            }
            let before = self.pending.units.len();
            let end = self.cutter.end(&mut self.pending);
            self.ended = true;
            self.note_cut(before);
            self.cut_off = end.err().map(|e| anyhow::Error::from(e).context("at the end of the stream"));
            return Ok(true);
        }
        if self.cutter.cuts_in_place() {
            if !self.pending.units.is_empty() {
                // Units cut by copying go first, whatever their number.
                if self.decoder.in_flight() >= self.decoder.depth() {
                    return Ok(false);
                }
                self.submit()?;
                return Ok(true);
            }
            if let Some(done) = self.cut_in_place(input, finished)? {
                return Ok(done);
            }
        }
        self.cut_copies(input, finished)
    }

    /// Cut units in the input buffer and submit them without copying them
    /// there; `None` when the cutter cannot now (the caller copies).
    fn cut_in_place(&mut self, input: &mut DefaultCpuReader<T>, finished: bool) -> anyhow::Result<Option<bool>> {
        if self.decoder.in_flight() >= self.decoder.depth() {
            return Ok(Some(false));
        }
        let full = self.in_place_units();
        let stalled = self.waiting_since.is_some_and(|t| t.elapsed() >= self.options.max_latency);
        let want = InPlace {
            min_units: if finished || stalled { 1 } else { full },
            max_units: full,
            max_items: full * self.cutter.max_unit_items(),
        };
        let (items, tags) = input.slice_with_tags();
        let mut units = Vec::new();
        let Some(consumable) = self.cutter.cut_in_place(items.len(), want, &mut units) else {
            return Ok(None);
        };
        if units.is_empty() {
            // At the end, the rest is shorter than a unit: copied, then padded.
            if finished {
                return Ok(None);
            }
            if !stalled {
                self.waiting_since.get_or_insert_with(Instant::now);
            }
            return Ok(Some(false));
        }
        let n = items.len();
        self.capture_tags(tags, n)?;
        Self::hand_over(self.decoder.as_mut(), &self.stats, &mut self.spans, items, &units, true)?;
        self.flights.push_back(units);
        if self.decoder.in_flight() >= self.decoder.depth() {
            // While the copy engine reads this batch where it lies, take the
            // oldest batch's results (the queue is drained: no backlog).
            self.collect()?;
        }
        let t = Instant::now();
        self.decoder.reused_read().context("copying a batch to the decoder")?;
        self.stats.add_submit_wait(t.elapsed());
        input.consume(consumable);
        self.taken += consumable as u64;
        self.waiting_since = None;
        Ok(Some(true))
    }

    /// Cut the next piece of input by copying its units' items.
    fn cut_copies(&mut self, input: &mut DefaultCpuReader<T>, finished: bool) -> anyhow::Result<bool> {
        let (items, tags) = input.slice_with_tags();
        // No more than the input buffer: a piece far larger than a batch would
        // be moved down once per batch submitted from it. A cutter that cuts in
        // place copies only until it can (the stream's first unit).
        let mut n = items.len().min(self.input_buffer_items());
        if self.cutter.cuts_in_place() && !finished {
            n = n.min(self.cutter.max_unit_items());
        }
        let marks = self.capture_tags(tags, n)?;
        let before = self.pending.units.len();
        let at = self.taken;
        self.cutter.cut(&items[..n], &marks, &mut self.pending).with_context(|| format!("cutting items {at}..{} of the stream", at + n as u64))?;
        // What the cutter holds stays in the stream for the next look, unless
        // the stream is over.
        let kept = if finished { 0 } else { self.cutter.release() };
        input.consume(n - kept);
        self.taken += (n - kept) as u64;
        self.note_cut(before);
        Ok(n > kept || self.pending.units.len() > before)
    }

    /// The framing marks among the tags of the first `n` items of the input
    /// (checked against the decoder's formats); the other tags go to
    /// `in_tags`, each once.
    fn capture_tags(&mut self, tags: &[ItemTag], n: usize) -> anyhow::Result<Vec<Mark>> {
        let (marks, passing) = split_tags(tags, n);
        self.check_marks(&marks)?;
        let seen = (self.tags_to - self.taken) as usize;
        self.in_tags.extend(passing.into_iter().filter(|(i, _)| *i >= seen).map(|(i, t)| (self.taken + i as u64, t)));
        self.tags_to = self.tags_to.max(self.taken + n as u64);
        Ok(marks)
    }

    /// A mark must announce a unit the decoder takes; a mark without a format
    /// keeps the one named before (as the cutter does).
    fn check_marks(&mut self, marks: &[Mark]) -> anyhow::Result<()> {
        for m in marks {
            let format = m.format.unwrap_or(self.mark_format);
            let Some(shape) = self.shapes.get(format as usize) else {
                anyhow::bail!(
                    "the stream's unit tags name format {format}, which the decoder does not have (it has formats 0..={})",
                    self.shapes.len() - 1
                );
            };
            self.mark_format = format;
            if let Some(len) = m.len {
                anyhow::ensure!(
                    shape.accepts(len),
                    "the framer cuts units of {len} LLRs but the decoder takes units of {} (format {format}): give both the same geometry",
                    shape.items
                );
            }
        }
        Ok(())
    }

    /// Note when the units cut since there were `before` were cut.
    fn note_cut(&mut self, before: usize) {
        let now = Instant::now();
        self.cut_at.extend(std::iter::repeat_n(now, self.pending.units.len().saturating_sub(before)));
    }

    /// Submit the pending units that fit one batch.
    fn submit(&mut self) -> anyhow::Result<()> {
        let mut items = 0;
        let mut count = 0;
        for u in &self.pending.units {
            if count == self.limit.units || items + u.span.len > self.limit.items {
                break;
            }
            items += u.span.len;
            count += 1;
        }
        let units: Vec<CutUnit> = self.pending.units.drain(..count).collect();
        Self::hand_over(self.decoder.as_mut(), &self.stats, &mut self.spans, &self.pending.items, &units, false)?;
        // Forget the submitted units' items.
        let end = units.last().map_or(0, |u| u.span.start + u.span.len);
        self.pending.items.drain(..end);
        for u in &mut self.pending.units {
            u.span.start -= end;
        }
        self.cut_at.drain(..count.min(self.cut_at.len()));
        self.flights.push_back(units);
        Ok(())
    }

    /// Hand `units`, spans of `items`, to the decoder as one batch, timed;
    /// `in_place`: `items` is the input buffer, which later batches reuse.
    fn hand_over(
        decoder: &mut dyn BatchDecoder<T>,
        stats: &DecoderStats,
        spans: &mut Vec<UnitSpan>,
        items: &[T],
        units: &[CutUnit],
        in_place: bool,
    ) -> anyhow::Result<()> {
        spans.clear();
        spans.extend(units.iter().map(|u| u.span));
        let batch = Batch::spans(items, spans)?;
        let first = units.first().map_or(0, |u| u.origin);
        let t = Instant::now();
        let direct = if in_place {
            // SAFETY: `items` is the block's input buffer, which lives as long
            // as the block; it is consumed only after `reused_read`, and the
            // decoder forgets it at the end of the stream or is dropped first
            // (the engine is declared before the block's input).
            unsafe { decoder.submit_reused(&batch) }
        } else {
            decoder.submit(&batch).map(|()| false)
        }
            .with_context(|| format!("decoding the units from stream item {first} on"))?;
        stats.add_submit(t.elapsed(), direct);
        stats.note_in_flight(decoder.in_flight());
        Ok(())
    }

    /// Collect the oldest batch into the (drained) queue.
    fn collect(&mut self) -> anyhow::Result<()> {
        // Bits of a packed byte not yet whole stay at the front of the queue.
        self.base += self.sent as u64;
        if self.packs {
            // Everything was sent (no backlog), in whole bytes.
            self.queue.packed.clear();
            self.packed_bits = 0;
        } else {
            self.queue.bits.drain(..self.sent);
        }
        self.queue.soft.clear();
        let held = self.queued_bits();
        let mut at = held;
        (self.sent, self.sent_soft) = (0, 0);
        let units = self.flights.pop_front().unwrap_or_default();
        let t = Instant::now();
        let collected = self.decoder.collect(&mut self.queue)?;
        self.stats.add_collect(t.elapsed());
        self.stats.note_in_flight(self.decoder.in_flight());
        self.stats.note_dealt(self.decoder.dealt());
        anyhow::ensure!(collected, "the decoder returned no batch although one was in flight");
        anyhow::ensure!(
            self.queue.reports.len() == units.len(),
            "the decoder reported {} units for a batch of {}",
            self.queue.reports.len(),
            units.len()
        );
        let reports = std::mem::take(&mut self.queue.reports);
        for (unit, report) in units.iter().zip(&reports) {
            let keep = unit.valid_bits.unwrap_or(report.bits).min(report.bits);
            if self.packs {
                self.keep_packed(at, keep, report.bits)?;
            } else if keep < report.bits {
                self.queue.bits.drain(at + keep..at + report.bits);
            }
            if keep < report.bits && self.options.soft {
                self.queue.soft.drain(at - held + keep..at - held + report.bits);
            }
            let first = self.base + at as u64;
            // The stream's tags on this unit's own items go to its bits.
            let own = unit.own.unwrap_or(report.consumed).max(1) as u64;
            while let Some((pos, _)) = self.in_tags.front() {
                if *pos >= unit.origin + own {
                    break;
                }
                let Some((pos, tag)) = self.in_tags.pop_front() else { break };
                // Own items map onto the unit's bits in proportion; a padded unit's own
                // items run past the stream's end, so scale by all its bits, then clip.
                let offset = (pos.saturating_sub(unit.origin) * report.bits as u64 / own).min(keep.saturating_sub(1) as u64);
                self.out_tags.push_back((first + offset, tag));
            }
            if self.options.report_tags {
                self.out_tags.push_back((first, Tag::NamedAny(UNIT_REPORT_TAG.to_string(), Box::new(*report))));
            }
            self.stats.add(report, keep);
            if self.cutter.awaiting() {
                let before = self.pending.units.len();
                self.cutter.learn(report.consumed, &mut self.pending)?;
                self.note_cut(before);
            }
            at += keep;
        }
        self.queue.reports = reports;
        self.queue.reports.clear();
        if self.all_cut() {
            // Tags past the last unit's own items stay with its last bit.
            let last = (self.base + self.queued_bits() as u64).saturating_sub(1);
            self.out_tags.extend(self.in_tags.drain(..).map(|(_, t)| (last, t)));
        }
        Ok(())
    }

    /// Keep the first `keep` of the `bits` bits that a unit put into the
    /// packed queue at bit `at`. Units are whole bytes, so only a stream's
    /// last unit may end inside a byte, whose padding bits are cleared.
    fn keep_packed(&mut self, at: usize, keep: usize, bits: usize) -> anyhow::Result<()> {
        anyhow::ensure!(
            at.is_multiple_of(8) && bits.is_multiple_of(8),
            "a unit of {bits} bits at bit {at} of packed output: only a stream's last unit may end inside a byte"
        );
        let (from, kept) = (at / 8, keep.div_ceil(8));
        self.queue.packed.drain(from + kept..from + bits / 8);
        if !keep.is_multiple_of(8) {
            self.queue.packed[from + kept - 1] &= 0xFF << (8 - keep % 8);
        }
        self.packed_bits = at + keep;
        Ok(())
    }

    fn drain(&mut self, output: &mut DefaultCpuWriter<u8>, soft: Option<&mut DefaultCpuWriter<f32>>) {
        if self.sent == self.queued_bits() && self.sent_soft == self.queue.soft.len() {
            return;
        }
        let t = Instant::now();
        self.write_out(output, soft);
        self.stats.add_drain(t.elapsed());
    }

    fn write_out(&mut self, output: &mut DefaultCpuWriter<u8>, soft: Option<&mut DefaultCpuWriter<f32>>) {
        let last = self.all_cut();
        let (o, mut tags) = output.slice_with_tags();
        // Bits per output item, and the bits the items written carry.
        let (per, n, bits) = if self.packs {
            let from = self.sent / 8;
            let bytes = o.len().min(self.queue.packed.len() - from);
            o[..bytes].copy_from_slice(&self.queue.packed[from..from + bytes]);
            (8, bytes, (8 * bytes).min(self.packed_bits - self.sent))
        } else if self.options.packed {
            let unsent = &self.queue.bits[self.sent..];
            let bytes = o.len().min(if last { unsent.len().div_ceil(8) } else { unsent.len() / 8 });
            let bits = (8 * bytes).min(unsent.len());
            par_pack_msb(&unsent[..bits], &mut o[..bytes]);
            (8, bytes, bits)
        } else {
            let unsent = &self.queue.bits[self.sent..];
            let n = o.len().min(unsent.len());
            par_copy(&unsent[..n], &mut o[..n]);
            (1, n, n)
        };
        let start = self.base + self.sent as u64;
        while let Some((at, _)) = self.out_tags.front() {
            if *at >= start + bits as u64 {
                break;
            }
            if let Some((at, tag)) = self.out_tags.pop_front() {
                tags.add_tag((at.saturating_sub(start) / per) as usize, tag);
            }
        }
        if bits < per as usize * n {
            // The stream's last byte, completed with zero bits: say how many are real.
            tags.add_tag(n - 1, Tag::NamedUsize(VALID_BITS_TAG.to_string(), bits - 8 * (n - 1)));
        }
        output.produce(n);
        self.sent += bits;
        if let (Some(s), true) = (soft, self.options.soft) {
            let o = s.slice();
            let n = o.len().min(self.queue.soft.len() - self.sent_soft);
            o[..n].copy_from_slice(&self.queue.soft[self.sent_soft..self.sent_soft + n]);
            s.produce(n);
            self.sent_soft += n;
        }
    }
}
