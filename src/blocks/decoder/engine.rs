//! The engine of the decoder block: cuts its input into units, gathers them
//! into batches, keeps batches in flight, and hands the bits back in order
//! with the stream's tags and a report per unit.

use super::DecoderOptions;
use super::stats::DecoderStats;
use crate::blocks::unit_tags::{UNIT_REPORT_TAG, split_tags};
use crate::codes::decode::{Batch, BatchDecoder, BatchLimit, Decoded, UnitShape, UnitSpan};
use crate::codes::framing::{Cut, CutUnit, Cutter, Mark};
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
    /// The input ended and the cutter was told.
    ended: bool,
    stats: Arc<DecoderStats>,
    spans: Vec<UnitSpan>,
}

/// Most input items cut in one go: bounds the work between two looks at the
/// output and the clock.
const CUT_CHUNK_BYTES: usize = 4 << 20;

impl<T: CpuSample + Copy> Engine<T> {
    pub fn new(cutter: Box<dyn Cutter<T>>, decoder: Box<dyn BatchDecoder<T>>, options: DecoderOptions) -> anyhow::Result<Self> {
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
            ended: false,
            stats: Arc::default(),
            spans: Vec::new(),
        })
    }

    pub fn describe(&self) -> String {
        self.decoder.describe()
    }

    /// Input items taken so far.
    pub fn taken(&self) -> u64 {
        self.taken
    }

    pub fn stats(&self) -> Arc<DecoderStats> {
        self.stats.clone()
    }

    /// Input items worth buffering in front of the block.
    pub fn input_buffer_items(&self) -> usize {
        self.limit.items.min((CUT_CHUNK_BYTES / size_of::<T>().max(1)).max(self.cutter.max_unit_items()))
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
                io.finished = true;
                return Ok(());
            }
            if let Some(since) = self.cut_at.front() {
                let wait = self.options.max_latency.saturating_sub(since.elapsed());
                io.block_on(futuresdr::runtime::Timer::after(wait));
            }
            return Ok(());
        }
    }

    fn backlog(&self) -> bool {
        self.sent < self.queue.bits.len() || (self.options.soft && self.sent_soft < self.queue.soft.len())
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
        let (items, tags) = input.slice_with_tags();
        if items.is_empty() {
            if !finished {
                return Ok(false);
            }
            let before = self.pending.units.len();
            self.cutter.end(&mut self.pending).context("at the end of the stream")?;
            self.ended = true;
            self.note_cut(before);
            return Ok(true);
        }
        // No more than the input buffer: a piece far larger than a batch would
        // be moved down once per batch submitted from it.
        let n = items.len().min(self.input_buffer_items());
        let (marks, passing) = split_tags(tags, n);
        self.check_marks(&marks)?;
        self.in_tags.extend(passing.into_iter().map(|(i, t)| (self.taken + i as u64, t)));
        let before = self.pending.units.len();
        let at = self.taken;
        self.cutter.cut(&items[..n], &marks, &mut self.pending).with_context(|| format!("cutting items {at}..{} of the stream", at + n as u64))?;
        input.consume(n);
        self.taken += n as u64;
        self.note_cut(before);
        Ok(true)
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
        self.spans.clear();
        self.spans.extend(units.iter().map(|u| u.span));
        let first = units.first().map_or(0, |u| u.origin);
        let batch = Batch::spans(&self.pending.items, &self.spans)?;
        self.decoder.submit(&batch).with_context(|| format!("decoding the units from stream item {first} on"))?;
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

    /// Collect the oldest batch into the (drained) queue.
    fn collect(&mut self) -> anyhow::Result<()> {
        self.base += self.queue.bits.len() as u64;
        self.queue.clear();
        (self.sent, self.sent_soft) = (0, 0);
        let units = self.flights.pop_front().unwrap_or_default();
        anyhow::ensure!(self.decoder.collect(&mut self.queue)?, "the decoder returned no batch although one was in flight");
        anyhow::ensure!(
            self.queue.reports.len() == units.len(),
            "the decoder reported {} units for a batch of {}",
            self.queue.reports.len(),
            units.len()
        );
        let reports = std::mem::take(&mut self.queue.reports);
        let mut at = 0;
        for (unit, report) in units.iter().zip(&reports) {
            let keep = unit.valid_bits.unwrap_or(report.bits).min(report.bits);
            if keep < report.bits {
                self.queue.bits.drain(at + keep..at + report.bits);
                if self.options.soft {
                    self.queue.soft.drain(at + keep..at + report.bits);
                }
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
        if self.ended && self.flights.is_empty() && self.pending.units.is_empty() && !self.cutter.awaiting() {
            // Tags past the last unit's own items stay with its last bit.
            let last = (self.base + self.queue.bits.len() as u64).saturating_sub(1);
            self.out_tags.extend(self.in_tags.drain(..).map(|(_, t)| (last, t)));
        }
        Ok(())
    }

    fn drain(&mut self, output: &mut DefaultCpuWriter<u8>, soft: Option<&mut DefaultCpuWriter<f32>>) {
        let (o, mut tags) = output.slice_with_tags();
        let n = o.len().min(self.queue.bits.len() - self.sent);
        o[..n].copy_from_slice(&self.queue.bits[self.sent..self.sent + n]);
        let start = self.base + self.sent as u64;
        while let Some((at, _)) = self.out_tags.front() {
            if *at >= start + n as u64 {
                break;
            }
            if let Some((at, tag)) = self.out_tags.pop_front() {
                tags.add_tag(at.saturating_sub(start) as usize, tag);
            }
        }
        output.produce(n);
        self.sent += n;
        if let (Some(s), true) = (soft, self.options.soft) {
            let o = s.slice();
            let n = o.len().min(self.queue.soft.len() - self.sent_soft);
            o[..n].copy_from_slice(&self.queue.soft[self.sent_soft..self.sent_soft + n]);
            s.produce(n);
            self.sent_soft += n;
        }
    }
}
