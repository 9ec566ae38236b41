//! Counting decoded bits against the sent ones, frame by frame, up to a stop
//! rule.

use super::point::{Ended, Point, StopRule};
use crate::codes::decode::UnitReport;

/// Counts bit, frame (and symbol) errors of a decoded stream against the
/// reference, and stops counting exactly where a [`StopRule`] says: at
/// `max_bits`, or at the end of the frame in which the `max_errors`-th bit
/// error fell. Shared by the link simulators and the `BerSink` block.
///
/// # Example
/// ```
/// use gpufec::codes::sim::{StopRule, Tally};
/// let mut t = Tally::new(3.0, 4).stopping(StopRule { max_bits: 100, max_errors: 2 });
/// // Two errors in the second frame: counting stops at its end.
/// let counted = t.add(&[0, 0, 0, 0, 1, 1, 0, 0, 1, 1], &[0; 10]);
/// assert_eq!(counted, 8);
/// assert!(t.done());
/// let p = t.point();
/// assert_eq!((p.bits, p.bit_errors, p.frames, p.frame_errors), (8, 2, 2, 1));
/// ```
#[derive(Debug, Clone)]
pub struct Tally {
    point: Point,
    stop: Option<StopRule>,
    frame_bits: usize,
    in_frame: usize,
    frame_has_error: bool,
    symbol_bits: usize,
    in_symbol: usize,
    symbol_has_error: bool,
}

/// One decoded unit's errors as a device link compares it
/// ([`Tally::add_unit_counts`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UnitCounts {
    /// Bits of the unit.
    pub bits: usize,
    /// Its first bits that were compared.
    pub compared: usize,
    /// Bit errors among them.
    pub errors: u64,
    /// Symbols among them with an error (the last may be a part of one).
    pub symbol_errors: u64,
}

/// The per-frame error counts of a run of decoded bits, summed: what a GPU
/// simulator hands back instead of every frame's count.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FrameSummary {
    /// Frames the bits touch (the first and last may be parts of frames).
    pub frames: u64,
    /// Errors in the first frame touched.
    pub first: u32,
    /// Errors in the last frame touched (the first, when only one).
    pub last: u32,
    /// Errors in the frames between.
    pub inner_errors: u64,
    /// Frames between with at least one error.
    pub inner_error_frames: u64,
}

impl FrameSummary {
    /// The summary of per-frame counts.
    pub fn of(counts: &[u32]) -> Self {
        let inner = counts.get(1..counts.len().saturating_sub(1)).unwrap_or_default();
        Self {
            frames: counts.len() as u64,
            first: counts.first().copied().unwrap_or(0),
            last: counts.last().copied().unwrap_or(0),
            inner_errors: inner.iter().map(|&e| u64::from(e)).sum(),
            inner_error_frames: inner.iter().filter(|&&e| e > 0).count() as u64,
        }
    }
}

impl Tally {
    /// Counts for frames of `frame_bits` bits (at least 1) at axis value `x`,
    /// with no stop rule.
    pub fn new(x: f64, frame_bits: usize) -> Self {
        Self {
            point: Point { x, ..Point::default() },
            stop: None,
            frame_bits: frame_bits.max(1),
            in_frame: 0,
            frame_has_error: false,
            symbol_bits: 0,
            in_symbol: 0,
            symbol_has_error: false,
        }
    }

    /// Stop counting as `stop` says.
    pub fn stopping(mut self, stop: StopRule) -> Self {
        self.stop = Some(stop);
        self
    }

    /// Also count errors of symbols of `bits` bits (each frame starting a new
    /// symbol).
    pub fn counting_symbols(mut self, bits: usize) -> Self {
        self.symbol_bits = bits;
        self
    }

    /// The counts so far (a frame still open is not counted yet).
    pub fn point(&self) -> &Point {
        &self.point
    }

    /// Whether the stop rule ended counting.
    pub fn done(&self) -> bool {
        self.point.ended != Ended::No
    }

    /// Compare `decoded` with `reference` bit by bit, frames of `frame_bits`;
    /// returns how many bits were counted (fewer than the shorter of the two
    /// once the stop rule ends counting).
    pub fn add(&mut self, decoded: &[u8], reference: &[u8]) -> usize {
        let total = decoded.len().min(reference.len());
        let mut at = 0;
        while at < total && !self.done() {
            let room = self.stop.map_or(usize::MAX, |s| (s.max_bits - self.point.bits.min(s.max_bits)) as usize);
            if self.in_frame == 0 && self.symbol_bits == 0 {
                // Whole frames without an error, the common case, counted at
                // once after a comparison that stops at the first difference.
                let span = (total - at).min(room) / self.frame_bits * self.frame_bits;
                let (d, r) = (&decoded[at..at + span], &reference[at..at + span]);
                let clean = first_difference(d, r).unwrap_or(span) / self.frame_bits * self.frame_bits;
                if clean > 0 {
                    self.point.bits += clean as u64;
                    self.point.frames += (clean / self.frame_bits) as u64;
                    at += clean;
                    self.check_stop();
                    continue;
                }
            }
            let take = (self.frame_bits - self.in_frame).min(total - at).min(room);
            self.compare(&decoded[at..at + take], &reference[at..at + take]);
            at += take;
            if self.in_frame == self.frame_bits {
                self.close_frame();
            }
            self.check_stop();
        }
        at
    }

    /// Count `bits` decoded bits whose errors are known only per frame, as a
    /// simulator that compares on a GPU reports them: `errors[i]` errors fell
    /// in the i-th frame the bits touch (the first continues the frame in
    /// progress; the last may stay open). Stops as [`add`](Self::add) does,
    /// at `max_bits` or at the end of the frame in which the
    /// `max_errors`-th error fell; returns the bits counted. Needs a tally
    /// without symbols, and one count per frame touched.
    ///
    /// # Example
    /// ```
    /// use gpufec::codes::sim::{StopRule, Tally};
    /// let mut t = Tally::new(0.0, 10).stopping(StopRule { max_bits: 1000, max_errors: 3 });
    /// // 4 bits finish nothing; then 6 + 10 + 10 + 5 bits: frames 0, 1, 2 and a part of 3.
    /// assert_eq!(t.add_frame_errors(4, &[1]), 4);
    /// assert_eq!(t.add_frame_errors(31, &[0, 0, 2, 7]), 26);
    /// let p = t.point();
    /// assert_eq!((p.bits, p.bit_errors, p.frames, p.frame_errors), (30, 3, 3, 2));
    /// assert!(t.done());
    /// ```
    pub fn add_frame_errors(&mut self, bits: u64, errors: &[u32]) -> u64 {
        assert_eq!(self.symbol_bits, 0, "per-frame counts carry no symbol errors");
        let mut left = bits;
        let mut counted = 0;
        for &e in errors {
            if left == 0 || self.done() {
                break;
            }
            let take = ((self.frame_bits - self.in_frame) as u64).min(left);
            assert!(self.stop.is_none_or(|s| self.point.bits + take <= s.max_bits), "a chunk past max_bits");
            self.point.bits += take;
            self.point.bit_errors += u64::from(e);
            self.frame_has_error |= e > 0;
            self.in_frame += take as usize;
            left -= take;
            counted += take;
            if self.in_frame == self.frame_bits {
                self.close_frame();
            }
            self.check_stop();
        }
        assert!(left == 0 || self.done(), "{left} bits without a frame count");
        counted
    }

    /// Count `frames` whole frames known only in sum (`error_frames` of them
    /// with `errors` errors in all), when no stop rule can fall inside them;
    /// otherwise count nothing and return false, and the caller gives the
    /// counts frame by frame ([`add_frame_errors`](Self::add_frame_errors)).
    /// Needs no frame in progress.
    ///
    /// # Example
    /// ```
    /// use gpufec::codes::sim::{StopRule, Tally};
    /// let mut t = Tally::new(0.0, 100).stopping(StopRule { max_bits: 10_000, max_errors: 50 });
    /// assert!(t.add_whole_frames(20, 3, 40));
    /// assert!(!t.add_whole_frames(20, 3, 10)); // the 50th error falls inside
    /// assert_eq!((t.point().frames, t.point().bit_errors), (20, 40));
    /// ```
    pub fn add_whole_frames(&mut self, frames: u64, error_frames: u64, errors: u64) -> bool {
        assert_eq!(self.in_frame, 0, "whole frames while a frame is in progress");
        let bits = frames * self.frame_bits as u64;
        if let Some(s) = self.stop
            && (self.point.bit_errors + errors >= s.max_errors || self.point.bits + bits > s.max_bits)
        {
            return false;
        }
        if self.done() {
            return false;
        }
        self.point.bits += bits;
        self.point.frames += frames;
        self.point.frame_errors += error_frames;
        self.point.bit_errors += errors;
        self.check_stop();
        true
    }

    /// Bits the stop rule still lets be counted before `max_bits` (all,
    /// without a rule).
    pub fn room(&self) -> u64 {
        self.stop.map_or(u64::MAX, |s| s.max_bits.saturating_sub(self.point.bits))
    }

    /// Bits of the frame in progress.
    pub fn in_frame(&self) -> usize {
        self.in_frame
    }

    /// Count `bits` decoded bits known by a [`FrameSummary`] of their
    /// per-frame error counts: in bulk where no stop rule can fall, else
    /// frame by frame from `dense()` (every frame's count, as
    /// [`add_frame_errors`](Self::add_frame_errors) takes them), which is
    /// asked for only then. Returns the bits counted.
    pub fn add_summary<E>(&mut self, bits: u64, s: &FrameSummary, dense: impl FnOnce() -> Result<Vec<u32>, E>) -> Result<u64, E> {
        let head = ((self.frame_bits - self.in_frame) as u64).min(bits);
        if s.frames <= 2 || head == bits {
            let counts = [s.first, s.last];
            return Ok(self.add_frame_errors(bits, &counts[..s.frames.clamp(1, 2) as usize]));
        }
        let mut counted = self.add_frame_errors(head, &[s.first]);
        let inner = s.frames - 2;
        if self.done() {
            return Ok(counted);
        }
        if self.add_whole_frames(inner, s.inner_error_frames, s.inner_errors) {
            counted += inner * self.frame_bits as u64;
            if !self.done() {
                counted += self.add_frame_errors(bits - counted, &[s.last]);
            }
        } else {
            counted += self.add_frame_errors(bits - head, &dense()?[1..]);
        }
        Ok(counted)
    }


    /// Count one decoded unit that is one frame of its own (a code block), with
    /// what its decoder reported: the check tells detected from undetected
    /// errors, and its iterations are counted. Returns the bits counted.
    pub fn add_unit(&mut self, decoded: &[u8], reference: &[u8], report: &UnitReport) -> usize {
        if self.done() {
            return 0;
        }
        self.close_frame();
        let n = self.unit_room(decoded.len().min(reference.len()));
        self.compare(&decoded[..n], &reference[..n]);
        self.end_unit(n == decoded.len(), report);
        n
    }

    /// [`add_unit`](Self::add_unit) for a unit compared elsewhere (a device
    /// link's): `counts` are its errors over the bits the stop rule lets be
    /// counted, which must be `counts.compared`. Returns the bits counted.
    ///
    /// # Example
    /// ```
    /// use gpufec::codes::decode::UnitReport;
    /// use gpufec::codes::sim::{StopRule, Tally, UnitCounts};
    /// let mut t = Tally::new(0.0, 8).stopping(StopRule { max_bits: 12, max_errors: 100 }).counting_symbols(2);
    /// let r = UnitReport { bits: 8, blocks: 1, check: Some(false), ..Default::default() };
    /// assert_eq!(t.add_unit_counts(UnitCounts { bits: 8, compared: 8, errors: 3, symbol_errors: 2 }, &r), 8);
    /// // Only 4 bits of the next unit are left to count: two symbols, no frame.
    /// assert_eq!(t.add_unit_counts(UnitCounts { bits: 8, compared: 4, errors: 1, symbol_errors: 1 }, &r), 4);
    /// let p = t.point();
    /// assert_eq!((p.bits, p.bit_errors, p.frames, p.frame_errors, p.detected, p.symbols, p.symbol_errors), (12, 4, 1, 1, 1, 6, 3));
    /// ```
    pub fn add_unit_counts(&mut self, counts: UnitCounts, report: &UnitReport) -> usize {
        if self.done() {
            return 0;
        }
        self.close_frame();
        let n = self.unit_room(counts.bits);
        assert_eq!(n, counts.compared, "a unit compared over other bits than the stop rule counts");
        self.point.bits += n as u64;
        self.point.bit_errors += counts.errors;
        self.frame_has_error |= counts.errors > 0;
        self.in_frame += n;
        if self.symbol_bits > 0 {
            self.point.symbols += n.div_ceil(self.symbol_bits) as u64;
            self.point.symbol_errors += counts.symbol_errors;
        }
        self.end_unit(n == counts.bits, report);
        n
    }

    /// The bits of a unit of `bits` that the stop rule lets be counted.
    fn unit_room(&self, bits: usize) -> usize {
        bits.min(usize::try_from(self.room()).unwrap_or(usize::MAX))
    }

    /// Close a unit's frame (a frame if `whole`), with its report.
    fn end_unit(&mut self, whole: bool, report: &UnitReport) {
        if whole && self.frame_has_error && report.check == Some(false) {
            self.point.detected += 1;
        }
        // A unit is a frame of its own, whatever its length.
        self.end_frame(whole);
        self.count_units(std::slice::from_ref(report));
        self.check_stop();
    }

    /// Count the units and iterations of `reports` (for links whose frames are
    /// not the decoder's units).
    pub fn count_units(&mut self, reports: &[UnitReport]) {
        self.point.units += reports.iter().map(|r| u64::from(r.blocks)).sum::<u64>();
        self.point.iterations += reports.iter().map(|r| r.iterations as u64).sum::<u64>();
    }

    /// Count `units` decoded units of `iterations` in all, and `detected`
    /// of the frames counted with errors as caught by their unit's check:
    /// what a link that counts on a GPU brings back instead of reports.
    pub fn count_unit_sums(&mut self, units: u64, iterations: u64, detected: u64) {
        self.point.units += units;
        self.point.iterations += iterations;
        self.point.detected += detected;
    }

    fn compare(&mut self, decoded: &[u8], reference: &[u8]) {
        // A plain count vectorises; the frame and symbol flags need only "any".
        let errors = decoded.iter().zip(reference).filter(|(d, r)| d != r).count();
        self.point.bits += decoded.len() as u64;
        self.point.bit_errors += errors as u64;
        self.frame_has_error |= errors > 0;
        self.in_frame += decoded.len();
        if self.symbol_bits > 0 {
            for (d, r) in decoded.iter().zip(reference) {
                self.symbol_has_error |= d != r;
                self.in_symbol += 1;
                if self.in_symbol == self.symbol_bits {
                    self.close_symbol();
                }
            }
        }
    }

    fn close_symbol(&mut self) {
        if self.in_symbol > 0 {
            self.point.symbols += 1;
            self.point.symbol_errors += self.symbol_has_error as u64;
        }
        self.in_symbol = 0;
        self.symbol_has_error = false;
    }

    fn check_stop(&mut self) {
        let Some(s) = self.stop else { return };
        if self.point.bits >= s.max_bits {
            self.close_frame();
            self.point.ended = Ended::MaxBits;
        } else if self.in_frame == 0 && self.point.bit_errors >= s.max_errors {
            self.point.ended = Ended::MaxErrors;
        }
    }

    /// End the frame in progress: a whole one is counted as a frame, one cut
    /// short only in [`Point::partial_bits`] (its bits are in the bit counts).
    pub fn close_frame(&mut self) {
        self.end_frame(self.in_frame == self.frame_bits);
    }

    /// End the frame in progress, counting it as a frame if it is `whole`.
    fn end_frame(&mut self, whole: bool) {
        if whole && self.in_frame > 0 {
            self.point.frames += 1;
            self.point.frame_errors += self.frame_has_error as u64;
        } else {
            self.point.partial_bits += self.in_frame as u64;
        }
        self.in_frame = 0;
        self.frame_has_error = false;
        self.close_symbol();
    }

    /// Close the open frame and return the point, marked as ended `why` unless
    /// the stop rule ended it already.
    pub fn finish(&mut self, why: Ended, seconds: f64) -> Point {
        self.close_frame();
        if self.point.ended == Ended::No {
            self.point.ended = why;
        }
        self.point.seconds = seconds;
        self.point
    }
}

/// Where `a` and `b` (of the same length) first differ: a slice comparison
/// (memcmp, as wide as the CPU goes) a few KiB at a time, then the byte.
fn first_difference(a: &[u8], b: &[u8]) -> Option<usize> {
    // One thread: a search on rayon's threads, restarted after every error
    // over the whole span, ran `turbo_tb_awgn.toml` (an error every hundred
    // thousand bits) at 883 and 866 Mb/s against 1152 and 1106 on the lent
    // H200 (the low-error `turbo_awgn.toml` gained 5 %).
    const STRETCH: usize = 4096;
    let chunk = a.chunks(STRETCH).zip(b.chunks(STRETCH)).position(|(x, y)| x != y)?;
    let at = chunk * STRETCH;
    a[at..].iter().zip(&b[at..]).position(|(x, y)| x != y).map(|i| at + i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_errors_ends_with_the_frame_the_last_error_fell_in() {
        let mut t = Tally::new(0.0, 10).stopping(StopRule { max_bits: 1000, max_errors: 3 });
        let mut decoded = vec![0u8; 100];
        decoded[12] = 1;
        decoded[15] = 1;
        decoded[21] = 1; // the third error, in frame 2 (bits 20..30)
        decoded[22] = 1;
        decoded[45] = 1;
        assert_eq!(t.add(&decoded, &[0; 100]), 30);
        let p = *t.point();
        assert_eq!((p.bits, p.bit_errors, p.frames, p.frame_errors, p.ended), (30, 4, 3, 2, Ended::MaxErrors));
        assert_eq!(t.add(&decoded, &[0; 100]), 0, "nothing is counted after the stop");
    }

    #[test]
    fn max_bits_cuts_the_last_frame_exactly_in_any_chunking() {
        for chunk in [1usize, 7, 64, 1000] {
            let mut t = Tally::new(0.0, 64).stopping(StopRule { max_bits: 150, max_errors: u64::MAX });
            let mut counted = 0;
            for _ in 0..(1000 / chunk + 1) {
                counted += t.add(&vec![1u8; chunk], &vec![0u8; chunk]);
            }
            let p = t.finish(Ended::Interrupted, 0.0);
            // Two whole frames; the 22 bits of the third are no frame.
            assert_eq!((counted, p.bits, p.bit_errors, p.frames, p.partial_bits, p.ended), (150, 150, 150, 2, 22, Ended::MaxBits), "chunk {chunk}");
        }
    }

    /// Error-free frames are counted in bulk when whole frames arrive at
    /// once; one bit at a time every frame takes the bit-by-bit path. Both
    /// must count the same, under every stop rule, whatever the chunking.
    #[test]
    fn bulk_counting_of_clean_frames_counts_what_bit_by_bit_counts() {
        let reference: Vec<u8> = (0..20_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 31) as u8).collect();
        let mut decoded = reference.clone();
        for i in [0, 5, 9, 10, 4095, 4096, 4097, 8191, 9000, 9001, 12_345, 19_999] {
            decoded[i] ^= 1;
        }
        let stops = [None, Some(StopRule { max_bits: 9_005, max_errors: u64::MAX }), Some(StopRule { max_bits: 1 << 40, max_errors: 7 })];
        for frame_bits in [10, 256, 4096] {
            for stop in stops {
                let point = |chunk: usize| {
                    let mut t = Tally::new(0.0, frame_bits);
                    if let Some(s) = stop {
                        t = t.stopping(s);
                    }
                    let counted: usize = decoded.chunks(chunk).zip(reference.chunks(chunk)).map(|(d, r)| t.add(d, r)).sum();
                    let p = t.finish(Ended::Interrupted, 0.0);
                    (counted, p.bits, p.bit_errors, p.frames, p.frame_errors, p.partial_bits, p.ended)
                };
                let want = point(1);
                for chunk in [3, 256, 1000, 4096, 20_000] {
                    assert_eq!(point(chunk), want, "frames of {frame_bits}, {stop:?}, chunks of {chunk}");
                }
            }
        }
    }

    /// Counts that arrive per frame (a GPU simulator's), in bulk where no
    /// stop can fall, give the point that bit-by-bit comparison gives, under
    /// every stop rule and chunking.
    #[test]
    fn per_frame_counts_count_what_bit_by_bit_counts() {
        let reference = vec![0u8; 20_000];
        let mut decoded = reference.clone();
        for i in [0, 5, 9, 10, 4095, 4096, 4097, 8191, 9000, 9001, 12_345, 19_999] {
            decoded[i] = 1;
        }
        let stops = [StopRule { max_bits: 20_000, max_errors: u64::MAX }, StopRule { max_bits: 9_005, max_errors: u64::MAX }, StopRule { max_bits: 1 << 40, max_errors: 7 }];
        for frame_bits in [1, 10, 256, 4096] {
            for stop in stops {
                let want = {
                    let mut t = Tally::new(0.0, frame_bits).stopping(stop);
                    t.add(&decoded, &reference);
                    t.finish(Ended::Interrupted, 0.0)
                };
                for chunk in [3usize, 256, 1000, 4096, 20_000] {
                    let mut t = Tally::new(0.0, frame_bits).stopping(stop);
                    let mut at = 0usize;
                    while at < decoded.len() && !t.done() {
                        let n = chunk.min(decoded.len() - at).min((stop.max_bits - t.point().bits) as usize);
                        if n == 0 {
                            break;
                        }
                        // Pieces per frame, as the device counts them.
                        let (a, b) = (at, at + n);
                        let pieces: Vec<u32> = (a / frame_bits..=(b - 1) / frame_bits)
                            .map(|f| decoded[(f * frame_bits).max(a)..((f + 1) * frame_bits).min(b)].iter().map(|&x| u32::from(x)).sum())
                            .collect();
                        let summary = FrameSummary::of(&pieces);
                        let counted = t.add_summary(n as u64, &summary, || Ok::<_, ()>(pieces.clone())).unwrap();
                        assert!(counted == n as u64 || t.done());
                        at = b;
                    }
                    let got = t.finish(Ended::Interrupted, 0.0);
                    let key = |p: &Point| (p.bits, p.bit_errors, p.frames, p.frame_errors, p.partial_bits, p.ended);
                    assert_eq!(key(&got), key(&want), "frames of {frame_bits}, {stop:?}, chunks of {chunk}");
                }
            }
        }
    }

    /// Units counted elsewhere (a device link's) count what the same units
    /// compared here count, under every stop rule, symbols included.
    #[test]
    fn unit_counts_count_what_compared_units_count() {
        let (k, sb) = (12, 3);
        let units: Vec<(Vec<u8>, UnitReport)> = (0..40u32)
            .map(|u| {
                let bits = (0..k as u32).map(|i| u8::from((u * 7 + i * 3) % 11 == 0 && u % 3 != 0)).collect();
                (bits, UnitReport { bits: k, iterations: u % 4, blocks: 1, check: (u % 5 == 0).then_some(false), consumed: 0 })
            })
            .collect();
        let reference = vec![0u8; k];
        for stop in [StopRule { max_bits: 245, max_errors: u64::MAX }, StopRule { max_bits: 1 << 20, max_errors: 9 }] {
            let [mut a, mut b] = [0, 1].map(|_| Tally::new(0.0, k).stopping(stop).counting_symbols(sb));
            for (bits, r) in &units {
                let compared = a.add_unit(bits, &reference, r);
                let n = b.room().min(k as u64) as usize;
                let errors = bits[..n].iter().filter(|&&x| x == 1).count() as u64;
                let symbol_errors = bits[..n].chunks(sb).filter(|s| s.contains(&1)).count() as u64;
                let counted = b.add_unit_counts(UnitCounts { bits: k, compared: n, errors, symbol_errors }, r);
                assert_eq!(counted, compared, "{stop:?}");
            }
            let (pa, pb) = (a.finish(Ended::Interrupted, 0.0), b.finish(Ended::Interrupted, 0.0));
            assert_eq!(format!("{pa:?}"), format!("{pb:?}"), "{stop:?}");
            assert!(pa.symbol_errors > 0 && pa.detected > 0 && pa.ended != Ended::Interrupted, "{pa:?}");
        }
    }

    #[test]
    fn units_tell_detected_from_undetected_errors_and_count_iterations() {
        let mut t = Tally::new(1.0, 1);
        let r = |check, iterations| UnitReport { bits: 4, iterations, blocks: 1, check: Some(check), consumed: 12 };
        t.add_unit(&[0, 1, 0, 0], &[0; 4], &r(false, 8)); // wrong, flagged
        t.add_unit(&[1, 1, 0, 0], &[0; 4], &r(true, 3)); // wrong, passed: undetected
        t.add_unit(&[0, 0, 0, 0], &[0; 4], &r(true, 2)); // right
        let p = t.finish(Ended::MaxBits, 1.0);
        assert_eq!((p.frames, p.frame_errors, p.detected, p.undetected(), p.bit_errors), (3, 2, 1, 1, 3));
        assert!((p.mean_iterations() - 13.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn symbols_are_counted_when_asked_and_rates_of_nothing_are_no_result() {
        let mut t = Tally::new(0.0, 8).counting_symbols(4);
        t.add(&[1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0], &[0; 12]);
        let p = t.finish(Ended::MaxBits, 0.0);
        assert_eq!((p.symbols, p.symbol_errors, p.frames, p.frame_errors, p.partial_bits), (3, 2, 1, 1, 4));
        let empty = Tally::new(0.0, 8).finish(Ended::Interrupted, 0.0);
        assert!(empty.ber().is_nan() && empty.fer().is_nan() && empty.mean_iterations().is_nan());
        // A stream shorter than one frame: bits counted, no frame, no FER.
        let mut short = Tally::new(0.0, 256);
        short.add(&[0; 7], &[0; 7]);
        let p = short.finish(Ended::MaxBits, 0.0);
        assert_eq!((p.bits, p.frames, p.partial_bits), (7, 0, 7));
        assert!(p.fer().is_nan() && p.ber() == 0.0);
    }
}
