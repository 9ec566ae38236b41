//! Many frames of a stream in flight, with the bits of frame-at-a-time
//! decoding.
//!
//! A stream decoder finds where each frame ended only by decoding it, so a
//! cutter that waits for that ([`WindowCutter`]) hands the decoder one frame
//! at a time: a GPU then decodes one frame per launch. [`Speculative`] takes
//! a segment of many frames' worth of the stream instead and decodes its
//! frames in rounds, each round one batch of windows of the inner decoder:
//!
//! - round 1 cuts every frame's window at its nominal start (the previous
//!   guess plus τ);
//! - later rounds guess each frame's start from where the latest decoding
//!   of the frame before it ended, even one decoded from a wrong start: the
//!   end a window's decoding finds is a place in the stream, and a start a
//!   few bits off is explained as drift, so the end found is mostly the
//!   true one and the guesses settle after a round or two;
//! - only windows whose start changed are decoded again; a frame is taken
//!   once it was decoded from the true start, which the frame before it,
//!   taken, gives. The first frame not yet taken is always decoded from its
//!   true start, so every round takes at least one frame.
//!
//! A frame is taken only from the window frame-at-a-time decoding would
//! have cut (the same start, the same items up to the same end), so the
//! bits, soft output and ends are those of frame-at-a-time decoding.

use super::super::decode::{Batch, BatchDecoder, BatchLimit, Decoded, UnitInput, UnitReport, UnitShape, UnitSpan, check_batch};
use super::super::error::{CodeResult, invalid};
use super::super::framing::{MAX_UNIT_ITEMS, WindowCutter};
use std::collections::VecDeque;

/// Decodes segments of a stream (windows of many frames: at most `frames`
/// frames of τ sent items each, plus one inner window) with an inner decoder
/// of single frames' windows, many windows per batch, and reports each
/// segment as one unit: the bits (and soft output) of its frames back to
/// back, the items they consumed, and a check that fails when any frame's
/// did. A segment ends with the last frame whose whole window it holds (at
/// the stream's end, whatever is left).
///
/// # Example
/// ```
/// use gpufec::codes::BatchDecoder;
/// use gpufec::codes::sync::{BsidParams, DecoderConfig, Framing, Speculative, SyncCode, SyncMapDecoder};
/// let code = SyncCode::random(16, 8, 30, 1)?;
/// let cfg = DecoderConfig { framing: Framing::Stream, ..DecoderConfig::default() };
/// let inner = SyncMapDecoder::<u8>::new(code, BsidParams::new(1e-3, 1e-3, 0.0)?, cfg, 0)?;
/// let window = inner.shapes()[0].items;
/// let (spec, cutter) = Speculative::new(Box::new(inner), 240, 16, 0)?;
/// assert_eq!(spec.shapes()[0].items, 16 * 240 + window);
/// # Ok::<(), gpufec::codes::CodeError>(())
/// ```
pub struct Speculative<T: Copy + Send + Sync> {
    inner: Box<dyn BatchDecoder<T>>,
    /// Sent items per frame (τ): how far the next frame's nominal start lies.
    tau: usize,
    /// Frames per segment at most.
    frames: usize,
    /// The inner decoder's window.
    window: usize,
    /// Items at the stream's end left to the frame before them (the
    /// cutter's leftover).
    leftover: usize,
    shape: [UnitShape; 1],
    done: VecDeque<Decoded>,
    /// Rounds (inner batches of windows), windows decoded, frames taken.
    rounds: u64,
    windows: u64,
    taken: u64,
}

/// One frame's latest decoding: from where, and what it gave.
struct Tried {
    start: usize,
    report: UnitReport,
    bits: Vec<u8>,
    soft: Vec<f32>,
}

impl<T: Copy + Send + Sync> Speculative<T> {
    /// Segments of up to `frames` frames (at least 1) of `tau` sent items
    /// over `inner`, a decoder of windows of a stream (one format, up to its
    /// window); `leftover` as the frame-at-a-time cutter's
    /// ([`WindowCutter::with_leftover`]). Returns the decoder and the cutter
    /// of its segments.
    pub fn new(inner: Box<dyn BatchDecoder<T>>, tau: usize, frames: usize, leftover: usize) -> CodeResult<(Self, WindowCutter<T>)> {
        let [shape] = inner.shapes() else {
            return Err(invalid!("speculative decoding needs a decoder of one unit format, not {}", inner.shapes().len()));
        };
        if shape.input != UnitInput::UpTo || tau == 0 || tau > shape.items {
            return Err(invalid!("speculative decoding needs a decoder of a stream's windows of at least τ = {tau} > 0 items"));
        }
        let window = shape.items;
        let most = (MAX_UNIT_ITEMS - window) / tau;
        if !(1..=most).contains(&frames) {
            return Err(invalid!("a segment of {frames} frames is outside 1..={most} (at most {MAX_UNIT_ITEMS} items)"));
        }
        let items = frames * tau + window;
        let shape = [UnitShape { items, bits: frames * shape.bits, input: UnitInput::UpTo }];
        let cutter = WindowCutter::new(items)?.with_leftover(leftover);
        let spec = Self { inner, tau, frames, window, leftover, shape, done: VecDeque::new(), rounds: 0, windows: 0, taken: 0 };
        Ok((spec, cutter))
    }

    /// Rounds (each one batch of the inner decoder, waited for), windows
    /// decoded and frames taken so far: windows over frames is the work
    /// speculation costs over frame-at-a-time decoding, rounds over frames
    /// its waits.
    pub fn counts(&self) -> (u64, u64, u64) {
        (self.rounds, self.windows, self.taken)
    }

    /// Decode the frames of segment `seg` into `out`, as one unit.
    fn decode_segment(&mut self, seg: &[T], out: &mut Decoded) -> CodeResult<()> {
        // A segment shorter than its window is the rest of the stream.
        let at_end = seg.len() < self.shape[0].items;
        let mut tried: Vec<Option<Tried>> = (0..self.frames).map(|_| None).collect();
        let (mut taken, mut next) = (0usize, 0usize);
        let mut spans = Vec::new();
        let mut wanted = Vec::new();
        let mut got = Decoded::default();
        loop {
            spans.clear();
            wanted.clear();
            let mut guess = next;
            for f in taken..self.frames {
                if f > taken {
                    guess = tried[f - 1].as_ref().map_or(guess + self.tau, |t| t.start + t.report.consumed);
                }
                let rest = seg.len().saturating_sub(guess);
                // Only the first frame not taken may be cut short by the
                // stream's end (as its own cutter would), unless what is
                // left is the frame before's leftover.
                let last = at_end && f == taken && rest > 0 && (f == 0 || rest > self.leftover);
                if rest < self.window && !last {
                    break;
                }
                if tried[f].as_ref().is_none_or(|t| t.start != guess) {
                    wanted.push(f);
                    spans.push(UnitSpan { start: guess, len: rest.min(self.window), format: 0 });
                }
            }
            if spans.is_empty() {
                break;
            }
            got.clear();
            self.inner.decode(&Batch::spans(seg, &spans)?, &mut got)?;
            self.rounds += 1;
            self.windows += spans.len() as u64;
            let (mut bits, mut soft) = (got.bits.as_slice(), got.soft.as_slice());
            for ((&f, span), report) in wanted.iter().zip(&spans).zip(&got.reports) {
                let (b, rest) = bits.split_at(report.bits);
                let (s, rest_soft) = soft.split_at(if soft.is_empty() { 0 } else { report.bits });
                tried[f] = Some(Tried { start: span.start, report: *report, bits: b.to_vec(), soft: s.to_vec() });
                (bits, soft) = (rest, rest_soft);
            }
            while let Some(t) = tried.get(taken).and_then(Option::as_ref).filter(|t| t.start == next) {
                next += t.report.consumed;
                taken += 1;
            }
        }
        let mut report = UnitReport { consumed: next, ..UnitReport::default() };
        for t in tried.iter().take(taken).flatten() {
            out.bits.extend_from_slice(&t.bits);
            out.soft.extend_from_slice(&t.soft);
            report.bits += t.report.bits;
            report.iterations += t.report.iterations;
            report.check = match (report.check, t.report.check) {
                (Some(a), Some(b)) => Some(a && b),
                (a, b) => a.or(b),
            };
        }
        out.reports.push(report);
        self.taken += taken as u64;
        Ok(())
    }
}

impl<T: Copy + Send + Sync> BatchDecoder<T> for Speculative<T> {
    fn shapes(&self) -> &[UnitShape] {
        &self.shape
    }

    /// One segment per batch: the next is cut where this one's frames ended.
    fn limit(&self) -> BatchLimit {
        BatchLimit { units: 1, items: self.shape[0].items }
    }

    fn depth(&self) -> usize {
        1
    }

    /// Decodes the batch's segments before it returns (each is many inner
    /// batches, kept in flight by the inner decoder).
    fn submit(&mut self, batch: &Batch<'_, T>) -> CodeResult<()> {
        let units = check_batch(batch, &self.shape, self.limit())?;
        let mut out = Decoded::default();
        for i in 0..units {
            self.decode_segment(batch.unit(i), &mut out)?;
        }
        self.done.push_back(out);
        Ok(())
    }

    fn collect(&mut self, out: &mut Decoded) -> CodeResult<bool> {
        let Some(mut d) = self.done.pop_front() else { return Ok(false) };
        out.bits.append(&mut d.bits);
        out.soft.append(&mut d.soft);
        out.reports.append(&mut d.reports);
        Ok(true)
    }

    fn in_flight(&self) -> usize {
        self.done.len()
    }

    fn describe(&self) -> String {
        format!("{}; speculative segments of up to {} frames", self.inner.describe(), self.frames)
    }

    fn gives_soft(&self) -> bool {
        self.inner.gives_soft()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes::channel::Channel;
    use crate::codes::encode::Encoder;
    use crate::codes::framing::{Cut, Cutter};
    use crate::codes::sync::tests::bits;
    use crate::codes::sync::{Bsid, BsidParams, DecoderConfig, Framing, SyncCode, SyncEncoder, SyncMapDecoder};

    /// Decode a whole `stream` as the decoder block does: units cut by
    /// `cutter`, each decoded before the next is cut where it ended.
    fn drive(dec: &mut dyn BatchDecoder<u8>, mut cutter: WindowCutter<u8>, stream: &[u8]) -> Decoded {
        let mut cut = Cut::default();
        cutter.cut(stream, &[], &mut cut).unwrap();
        cutter.end(&mut cut).unwrap();
        let mut out = Decoded::default();
        let mut next = 0;
        while next < cut.units.len() {
            let u = cut.units[next];
            let items = &cut.items[u.span.start..u.span.start + u.span.len];
            let at = out.reports.len();
            dec.decode(&Batch::spans(items, &[UnitSpan { start: 0, len: items.len(), format: 0 }]).unwrap(), &mut out).unwrap();
            cutter.learn(out.reports[at].consumed, &mut cut).unwrap();
            next += 1;
        }
        out
    }

    #[test]
    fn segments_decode_to_the_bits_and_soft_output_of_frame_at_a_time_decoding() {
        let code = SyncCode::random(16, 8, 30, 3).unwrap();
        let cfg = DecoderConfig { framing: Framing::Stream, ..DecoderConfig::default() };
        for (p, seed) in [(1e-3, 1), (1e-2, 2), (4e-2, 3)] {
            let params = BsidParams::new(p, p, 0.0).unwrap();
            let decoder = || SyncMapDecoder::<u8>::new(code.clone(), params, cfg, 1).unwrap().with_soft_output();
            let (frames, leftover) = (70, 6);
            let info = bits(frames * code.info_bits(), seed);
            let mut sent = Vec::new();
            SyncEncoder::new(code.clone()).encode(&info, &mut sent).unwrap();
            let mut stream = Vec::new();
            Bsid::new(params, seed).transmit(&sent, &mut stream).unwrap();
            let mut single = decoder();
            let window = single.shapes()[0].items;
            let one = drive(&mut single, WindowCutter::new(window).unwrap().with_leftover(leftover), &stream);
            assert_eq!(one.reports.len(), frames, "Pi = Pd = {p}: every frame decoded");
            for segment in [1, 16, 100] {
                let (mut spec, cutter) = Speculative::new(Box::new(decoder()), code.tau(), segment, leftover).unwrap();
                let many = drive(&mut spec, cutter, &stream);
                assert!(many.bits == one.bits, "Pi = Pd = {p}, {segment} frames a segment: the bits differ");
                assert!(many.soft == one.soft, "Pi = Pd = {p}, {segment} frames a segment: the soft output differs");
                let consumed = |d: &Decoded| d.reports.iter().map(|r| r.consumed).sum::<usize>();
                assert_eq!(consumed(&many), consumed(&one));
                let (rounds, windows, taken) = spec.counts();
                assert_eq!(taken, frames as u64);
                eprintln!("Pi = Pd = {p}, segments of {segment}: {rounds} rounds, {windows} windows for {taken} frames");
            }
        }
    }

    #[test]
    fn segments_of_no_frames_or_beyond_the_unit_limit_are_refused() {
        let code = SyncCode::random(16, 8, 30, 3).unwrap();
        let params = BsidParams::new(1e-3, 1e-3, 0.0).unwrap();
        let cfg = DecoderConfig { framing: Framing::Stream, ..DecoderConfig::default() };
        let stream = || Box::new(SyncMapDecoder::<u8>::new(code.clone(), params, cfg, 1).unwrap());
        let e = Speculative::new(stream(), code.tau(), 0, 0).err().unwrap();
        assert!(e.to_string().contains("a segment of 0 frames is outside 1..="), "{e}");
        assert!(Speculative::new(stream(), code.tau(), 1 << 20, 0).is_err());
        assert!(Speculative::new(stream(), 0, 8, 0).is_err(), "frames of no items");
    }
}
