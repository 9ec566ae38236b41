//! Cuts a continuous LLR stream into overlapping tiles (v1 / f / v2), the work
//! units of the tiled decoders. Shared by the `Framer` block, the BER tools and
//! the tests, so that there is one definition of where a tile starts.

use crate::codes::conv::decoder::config::TileConfig;
use crate::codes::conv::PuncturePattern;
use crate::codes::decode::UnitSpan;
use crate::codes::error::{CodeError, CodeResult, invalid};
use crate::codes::framing::{Cut, CutUnit, Cutter, InPlace, Mark};
use crate::codes::llr::Llr;

/// Streaming tiler: LLRs in (any chunking), whole work units out.
///
/// Unit `u` holds stages `u·G·f − v1 .. (u+1)·G·f + v2` (G = `group`): the `G`
/// tiles of the unit laid end to end, sharing their overlaps. Stages before the
/// stream start carry [`Llr::CERTAIN_ZERO`] (the encoder's register is all zeros
/// there; [`Llr::CERTAIN_ONE`] for an output the code inverts,
/// [`Tiler::inverting`]), so the first tile starts from a known state when v1 ≥ K−1; stages
/// after the stream's end are erasures (LLR 0).
///
/// A plain tiler ([`Tiler::new`]) takes `n` LLRs per stage. A punctured one
/// ([`Tiler::punctured`]) takes the stream as the puncturer left it and cuts
/// units that hold only the sent LLRs of their stages, for a decoder that puts
/// the erasures back itself; every unit then starts at the same stage of the
/// puncturing period, [`Tiler::first_phase`].
///
/// # Example
/// ```
/// use gpufec::codes::conv::{TileConfig, Tiler, Traceback};
/// let cfg = TileConfig::new(4, 2, 2, Traceback::Serial).unwrap();
/// let mut t = Tiler::<f32>::new(cfg, 2);
/// let mut units = Vec::new();
/// t.push(&[1.0; 20], &mut units);   // 10 stages: tile 1 needs stages up to 9
/// assert_eq!(units.len(), 2 * 8 * 2);
/// let last = t.finish(&mut units).unwrap();
/// assert_eq!(last, Some(2));        // 10 = 2·4 + 2: the last tile keeps 2 stages
/// ```
#[derive(Debug, Clone)]
pub struct Tiler<T> {
    cfg: TileConfig,
    /// Which LLRs of a stage the stream carries (all n when not punctured).
    pattern: PuncturePattern,
    /// LLRs from stage `buf_stage` on.
    buf: Vec<T>,
    buf_stage: usize,
    /// Whole stages received so far.
    received: usize,
    /// Index of the next unit to emit.
    next_unit: usize,
    /// Outputs the code sends inverted (bit i: output i).
    inverted: u8,
}

impl<T: Llr> Tiler<T> {
    /// Tiler for `n` LLRs per stage.
    pub fn new(cfg: TileConfig, n: usize) -> Self {
        Self { cfg, pattern: PuncturePattern::none(n), buf: Vec::new(), buf_stage: 0, received: 0, next_unit: 0, inverted: 0 }
    }

    /// Tiler for a stream punctured with `pattern` from its first stage on. Tiles
    /// must start on a period boundary (`f` a multiple of the period), so that
    /// every tile sees the same pattern.
    pub fn punctured(cfg: TileConfig, pattern: PuncturePattern) -> CodeResult<Self> {
        if !cfg.f.is_multiple_of(pattern.period()) {
            return Err(invalid!(
                "tiles of f={} stages do not start on the {}-stage puncturing period of '{pattern}'; make f a multiple of {}",
                cfg.f,
                pattern.period(),
                pattern.period()
            ));
        }
        Ok(Self { pattern, ..Self::new(cfg, 1) })
    }

    /// The tiler for a code that sends the outputs of `mask` inverted
    /// ([`ConvCode::with_inverted`](crate::codes::conv::ConvCode::with_inverted)):
    /// the stages before the stream carry what the all-zero register sends.
    pub fn inverting(mut self, mask: u8) -> Self {
        self.inverted = mask;
        self
    }

    /// Stage of the puncturing period at which every unit (and every tile)
    /// starts: that of stage −v1.
    pub fn first_phase(&self) -> usize {
        (-(self.cfg.v1 as isize)).rem_euclid(self.pattern.period() as isize) as usize
    }

    /// LLRs per emitted unit.
    pub fn unit_len(&self) -> usize {
        self.llrs(-(self.cfg.v1 as isize), self.cfg.unit_stages() as isize - self.cfg.v1 as isize)
    }

    /// LLRs the stream carries for stages `a..b`.
    fn llrs(&self, a: isize, b: isize) -> usize {
        (self.pattern.kept_before(b) - self.pattern.kept_before(a)) as usize
    }

    fn emit(&mut self, out: &mut Vec<T>) {
        let first = self.first_stage(self.next_unit);
        let end = first + self.cfg.unit_stages() as isize;
        // Three runs: before the stream, inside it, past its end.
        let lo = first.clamp(0, end.max(0));
        if self.inverted == 0 {
            out.extend(std::iter::repeat_n(T::CERTAIN_ZERO, self.llrs(first, lo)));
        } else {
            let p = &self.pattern;
            for stage in first..lo {
                let col = stage.rem_euclid(p.period() as isize) as usize;
                let sent = (0..p.n()).filter(|&i| p.keeps(i, col));
                out.extend(sent.map(|i| if self.inverted >> i & 1 == 1 { T::CERTAIN_ONE } else { T::CERTAIN_ZERO }));
            }
        }
        let hi = end.clamp(lo, (self.received as isize).max(lo));
        let i = self.llrs(self.buf_stage as isize, lo);
        out.extend_from_slice(&self.buf[i..i + self.llrs(lo, hi)]);
        out.extend(std::iter::repeat_n(T::default(), self.llrs(hi, end)));
        self.next_unit += 1;
    }

    /// Forget the stages before the next unit's first stage; done once per call,
    /// not per unit, so a large push costs one move of the buffer.
    fn compact(&mut self) {
        let keep_from = (self.next_unit * self.cfg.unit_bits()).saturating_sub(self.cfg.v1).min(self.received);
        if keep_from > self.buf_stage {
            self.buf.drain(..self.llrs(self.buf_stage as isize, keep_from as isize));
            self.buf_stage = keep_from;
        }
    }

    /// Add LLRs; append every unit that became complete to `out` and return how
    /// many. A stage split across calls is held back until it is whole.
    pub fn push(&mut self, llrs: &[T], out: &mut Vec<T>) -> usize {
        let before = self.next_unit;
        self.buf.extend_from_slice(llrs);
        let total = self.pattern.kept_before(self.buf_stage as isize) as usize + self.buf.len();
        self.received = self.pattern.stages_in(total);
        while self.received >= (self.next_unit + 1) * self.cfg.unit_bits() + self.cfg.v2 {
            self.emit(out);
        }
        self.compact();
        self.next_unit - before
    }

    /// End of stream: append the remaining units (padded with erasures) and
    /// return how many stages of the last emitted unit are valid when fewer than
    /// group · f (`None` when every emitted unit is whole). A stream that ended
    /// inside a stage is an error.
    pub fn finish(&mut self, out: &mut Vec<T>) -> CodeResult<Option<usize>> {
        if let Some(e) = self.drop_partial_stage() {
            return Err(e);
        }
        while self.next_unit * self.cfg.unit_bits() < self.received {
            self.emit(out);
        }
        let valid = self.received - (self.next_unit.max(1) - 1) * self.cfg.unit_bits();
        Ok((self.received > 0 && valid < self.cfg.unit_bits()).then_some(valid))
    }
}

impl<T: Llr> Tiler<T> {
    /// Drop the LLRs of a stage the stream ended inside, saying so: the
    /// stream then ends at the last whole stage.
    fn drop_partial_stage(&mut self) -> Option<CodeError> {
        let rem = self.buf.len() - self.llrs(self.buf_stage as isize, self.received as isize);
        if rem == 0 {
            return None;
        }
        self.buf.truncate(self.buf.len() - rem);
        Some(CodeError::Truncated(format!(
            "LLR stream ended inside a trellis stage ({rem} of {} LLRs present)",
            self.pattern.kept_in_stage(self.received % self.pattern.period())
        )))
    }

    /// Record the last `count` units appended to `out.items` as units `first..`.
    fn close_units(&self, first: usize, count: usize, out: &mut Cut<T>) {
        let len = self.unit_len();
        for u in first..first + count {
            let (origin, own) = self.own_items(u);
            out.close_unit(len, 0, origin, Some(own));
            let last = out.units.len() - 1;
            // close_unit takes the unit to end at the buffer's end; it ends
            // `first + count - 1 - u` units earlier.
            out.units[last].span.start -= (first + count - 1 - u) * len;
        }
    }

    /// Stream position and count of the items whose bits unit `u` decodes.
    fn own_items(&self, u: usize) -> (u64, usize) {
        let own = u * self.cfg.unit_bits()..(u + 1) * self.cfg.unit_bits();
        (self.pattern.kept_before(own.start as isize) as u64, self.llrs(own.start as isize, own.end as isize))
    }

    /// First stage of unit `u` (negative for a unit that starts before the stream).
    fn first_stage(&self, u: usize) -> isize {
        (u * self.cfg.unit_bits()) as isize - self.cfg.v1 as isize
    }
}

impl<T: Llr> Cutter<T> for Tiler<T> {
    fn max_unit_items(&self) -> usize {
        self.unit_len()
    }

    fn cut(&mut self, input: &[T], _marks: &[Mark], out: &mut Cut<T>) -> CodeResult<()> {
        let first = self.next_unit;
        let count = self.push(input, &mut out.items);
        self.close_units(first, count, out);
        Ok(())
    }

    fn end(&mut self, out: &mut Cut<T>) -> CodeResult<()> {
        // The whole stages before a cut-off one are decoded all the same.
        let cut_off = self.drop_partial_stage();
        let first = self.next_unit;
        let valid = self.finish(&mut out.items)?;
        self.close_units(first, self.next_unit - first, out);
        // Only a unit cut here can be short (see `finish`).
        if let (Some(v), true, Some(u)) = (valid, self.next_unit > first, out.units.last_mut()) {
            u.valid_bits = Some(v);
        }
        cut_off.map_or(Ok(()), Err)
    }

    fn cuts_in_place(&self) -> bool {
        true
    }

    fn cut_in_place(&mut self, available: usize, want: InPlace, out: &mut Vec<CutUnit>) -> Option<usize> {
        // In place only from a unit's first stage with nothing held, and not
        // for a unit that starts before the stream (its padding is not there).
        let first = self.first_stage(self.next_unit);
        if !self.buf.is_empty() || first < 0 || first != self.buf_stage as isize {
            return None;
        }
        let at = self.pattern.kept_before(first) as usize;
        let stages = self.pattern.stages_in(at + available);
        let (len, ub, v2) = (self.unit_len(), self.cfg.unit_bits(), self.cfg.v2);
        let mut count = 0;
        while count < want.max_units && (count + 1) * len <= want.max_items && stages >= (self.next_unit + count + 1) * ub + v2 {
            count += 1;
        }
        if count == 0 || count < want.min_units {
            return Some(0);
        }
        for u in self.next_unit..self.next_unit + count {
            let start = self.pattern.kept_before(self.first_stage(u)) as usize - at;
            let (origin, own) = self.own_items(u);
            out.push(CutUnit { span: UnitSpan { start, len, format: 0 }, valid_bits: None, origin, own: Some(own) });
        }
        self.next_unit += count;
        // As if the stream up to the next unit's first stage had been pushed and compacted.
        let next = self.first_stage(self.next_unit) as usize;
        (self.buf_stage, self.received) = (next, next);
        Some(self.pattern.kept_before(next as isize) as usize - at)
    }

    fn release(&mut self) -> usize {
        // The buffer holds the stream from `buf_stage` on, whole stages and a partial one.
        let n = self.buf.len();
        self.buf.clear();
        self.received = self.buf_stage;
        n
    }

    fn describe(&self) -> String {
        let c = &self.cfg;
        let punctured = if self.pattern.is_identity() { String::new() } else { format!(", punctured '{}'", self.pattern) };
        format!("tiles f={} v1={} v2={}, {} per unit{punctured}", c.f, c.v1, c.v2, c.group)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes::conv::decoder::config::Traceback;
    use crate::codes::framing::{Cut, Cutter};

    #[test]
    fn units_hold_the_right_stages_in_any_chunking() {
        let n = 2;
        for (f, v1, v2, stages) in [(4, 2, 3, 10usize), (5, 0, 0, 15), (3, 7, 1, 8), (8, 3, 2, 1), (4, 2, 2, 0), (2, 9, 9, 3)] {
            for group in [1usize, 2, 3] {
                let cfg = TileConfig::new(f, v1, v2, Traceback::Serial).unwrap().with_group(group).unwrap();
                let llrs: Vec<f32> = (0..stages * n).map(|i| i as f32 + 1.0).collect();
                for chunk in [1usize, 3, 16, 1000] {
                    let mut t = Tiler::new(cfg, n);
                    let mut out = Vec::new();
                    for c in llrs.chunks(chunk) {
                        t.push(c, &mut out);
                    }
                    let last = t.finish(&mut out).unwrap();
                    let units = cfg.units_for(stages);
                    let us = cfg.unit_stages();
                    assert_eq!(out.len(), units * us * n, "{f},{v1},{v2},{stages},{group}");
                    for u in 0..units {
                        for s in 0..us {
                            let g = (u * cfg.unit_bits() + s) as isize - v1 as isize;
                            for k in 0..n {
                                let want = if g < 0 {
                                    f32::CERTAIN_ZERO
                                } else if g as usize >= stages {
                                    0.0
                                } else {
                                    llrs[g as usize * n + k]
                                };
                                assert_eq!(out[(u * us + s) * n + k], want);
                            }
                        }
                    }
                    let whole = cfg.unit_bits();
                    let want_last = if stages % whole != 0 { Some(stages % whole) } else { None };
                    assert_eq!(last, want_last);
                }
            }
        }
    }

    /// A punctured unit, its erasures put back, is the plain tiler's unit of the
    /// depunctured stream, except that a deleted position before the stream
    /// start is an erasure rather than a certain zero.
    #[test]
    fn punctured_units_are_the_depunctured_streams_units() {
        use crate::codes::conv::{Depuncturer, Puncturer};
        for pat in ["10,11", "101,110", "1000101,1111010", "110,011,101"] {
            let p = PuncturePattern::parse(pat).unwrap();
            let (n, period) = (p.n(), p.period());
            for (f, v1, v2, stages, group) in [(4, 2, 3, 100usize, 1), (2, 0, 0, 15, 3), (6, 7, 1, 8, 2), (8, 3, 2, 1, 1), (14, 9, 9, 300, 2)] {
                let f = f * period;
                let cfg = TileConfig::new(f, v1, v2, Traceback::Serial).unwrap().with_group(group).unwrap();
                let coded: Vec<f32> = (0..stages * n).map(|i| i as f32 + 1.0).collect();
                let mut sent = Vec::new();
                Puncturer::new(p.clone()).puncture(&coded, &mut sent);
                let mut depunctured = Vec::new();
                Depuncturer::new(p.clone()).depuncture(&sent, &mut depunctured);
                let mut plain = Tiler::new(cfg, n);
                let mut want = Vec::new();
                plain.push(&depunctured, &mut want);
                let want_last = plain.finish(&mut want).unwrap();
                for chunk in [1usize, 5, 1000] {
                    let mut t = Tiler::punctured(cfg, p.clone()).unwrap();
                    let mut got = Vec::new();
                    for c in sent.chunks(chunk) {
                        t.push(c, &mut got);
                    }
                    assert_eq!(t.finish(&mut got).unwrap(), want_last, "{pat} {f},{v1},{v2},{stages}");
                    assert_eq!(got.len() % t.unit_len(), 0);
                    assert_eq!(got.len() / t.unit_len(), want.len() / plain.unit_len(), "{pat} {f},{v1},{v2},{stages}");
                    let mut expanded = Vec::new();
                    for unit in got.chunks(t.unit_len()) {
                        Depuncturer::at_stage(p.clone(), t.first_phase()).depuncture(unit, &mut expanded);
                    }
                    assert_eq!(expanded.len(), want.len());
                    let us = cfg.unit_stages();
                    for (i, (&g, &w)) in expanded.iter().zip(&want).enumerate() {
                        let stage = ((i / n) % us + (i / n / us) * cfg.unit_bits()) as isize - v1 as isize;
                        let erased_lead = stage < 0 && !p.keeps(i % n, stage.rem_euclid(period as isize) as usize);
                        assert_eq!(g, if erased_lead { 0.0 } else { w }, "{pat} {f},{v1},{v2},{stages} chunk {chunk} at {i}");
                    }
                }
            }
        }
        let p = PuncturePattern::standard("3/4").unwrap();
        let err = Tiler::<i8>::punctured(TileConfig::new(256, 20, 20, Traceback::Serial).unwrap(), p.clone()).unwrap_err();
        assert!(err.to_string().contains("make f a multiple of 3"), "{err}");
        // A stream that stops inside a stage (here inside the period's first, two-LLR stage).
        let mut t = Tiler::<i8>::punctured(TileConfig::new(3, 1, 1, Traceback::Serial).unwrap(), p).unwrap();
        let mut out = Vec::new();
        t.push(&[1, 2, 3, 4, 5], &mut out);
        let err = t.finish(&mut out).unwrap_err();
        assert!(err.to_string().contains("1 of 2 LLRs present"), "{err}");
    }

    #[test]
    fn stream_ending_inside_a_stage_is_an_error() {
        let cfg = TileConfig::new(4, 1, 1, Traceback::Serial).unwrap();
        let mut t = Tiler::<i8>::new(cfg, 2);
        let mut out = Vec::new();
        t.push(&[1, 2, 3], &mut out);
        assert!(matches!(t.finish(&mut out), Err(CodeError::Truncated(_))));
    }

    /// Cutting in place as the decoder block does (the first unit copied and
    /// the rest given back, then units where they lie in ever-changing
    /// windows of the stream, the tail copied and padded) gives the units,
    /// origins and valid bits that pushing the whole stream gives.
    #[test]
    fn cutting_in_place_gives_the_units_of_a_plain_cut() {
        use crate::codes::framing::{Cut, Cutter, InPlace};
        let mut seed = 12345u64;
        let mut next = |m: usize| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) as usize % m
        };
        for pat in ["11,11", "10,11", "110,101"] {
            let p = PuncturePattern::parse(pat).unwrap();
            for (f, v1, v2, stages, group) in [(6, 2, 3, 200usize, 1), (12, 0, 6, 151, 2), (6, 7, 1, 97, 3), (6, 3, 2, 5, 1)] {
                let cfg = TileConfig::new(f, v1, v2, Traceback::Serial).unwrap().with_group(group).unwrap();
                let sent = p.kept_before(stages as isize) as usize;
                let stream: Vec<f32> = (0..sent).map(|i| i as f32 + 1.0).collect();
                // A unit's items, origin, own items and valid bits.
                type Seen = (Vec<f32>, u64, Option<usize>, Option<usize>);
                let units_of = |cut: &Cut<f32>| -> Vec<Seen> {
                    cut.units.iter().map(|u| (cut.items[u.span.start..u.span.start + u.span.len].to_vec(), u.origin, u.own, u.valid_bits)).collect()
                };
                let mut plain = Tiler::punctured(cfg, p.clone()).unwrap();
                let mut want = Cut::default();
                plain.cut(&stream, &[], &mut want).unwrap();
                plain.end(&mut want).unwrap();
                let want = units_of(&want);
                for _ in 0..5 {
                    let mut t = Tiler::punctured(cfg, p.clone()).unwrap();
                    let (mut pos, mut copied) = (0usize, Cut::default());
                    let (mut got, mut in_place) = (Vec::new(), 0);
                    loop {
                        let end = (pos + 1 + next(3 * t.unit_len())).min(sent);
                        let (window, finished) = (&stream[pos..end], end == sent);
                        let want_units = InPlace { min_units: if finished { 1 } else { 1 + next(2) }, max_units: 1 + next(3), max_items: t.unit_len() + next(3 * t.unit_len()) };
                        let mut units = Vec::new();
                        match t.cut_in_place(window.len(), want_units, &mut units) {
                            Some(n) if !units.is_empty() => {
                                assert!(copied.units.is_empty());
                                got.extend(units.iter().map(|u| (window[u.span.start..u.span.start + u.span.len].to_vec(), u.origin, u.own, u.valid_bits)));
                                in_place += units.len();
                                pos += n;
                            }
                            Some(_) if !finished => {}
                            _ => {
                                let n = if finished { window.len() } else { window.len().min(t.max_unit_items()) };
                                t.cut(&window[..n], &[], &mut copied).unwrap();
                                let kept = if finished { 0 } else { t.release() };
                                pos += n - kept;
                                if finished {
                                    t.end(&mut copied).unwrap();
                                }
                                got.extend(units_of(&copied));
                                copied.clear();
                                if finished {
                                    break;
                                }
                            }
                        }
                    }
                    assert_eq!(got, want, "{pat} {f},{v1},{v2} {stages} stages, group {group}");
                    // All but the first and the padded last units can be cut in place.
                    assert!(in_place + 3 >= want.len(), "{in_place} of {} units in place", want.len());
                }
            }
        }
    }

    #[test]
    fn tiles_as_a_cutter_are_the_tilers_units_and_own_their_stages() {
        let tile = TileConfig::new(16, 4, 6, Traceback::Serial).unwrap().with_group(3).unwrap();
        let llrs: Vec<f32> = (0..2 * 1000).map(|i| i as f32).collect();
        let mut want = Vec::new();
        let mut plain = Tiler::new(tile, 2);
        plain.push(&llrs, &mut want);
        let valid = plain.finish(&mut want).unwrap();
        for chunk in [1, 99, 2000] {
            let mut cutter = Tiler::new(tile, 2);
            let mut out = Cut::default();
            for piece in llrs.chunks(chunk) {
                Cutter::cut(&mut cutter, piece, &[], &mut out).unwrap();
            }
            Cutter::end(&mut cutter, &mut out).unwrap();
            assert_eq!(out.items, want, "chunk {chunk}");
            let unit_llrs = tile.unit_stages() * 2;
            for (u, unit) in out.units.iter().enumerate() {
                assert_eq!((unit.span.start, unit.span.len), (u * unit_llrs, unit_llrs));
                // Unit u decodes stages u·48 .. (u+1)·48: LLRs 96u .. 96(u+1).
                assert_eq!((unit.origin, unit.own), (96 * u as u64, Some(96)));
            }
            assert_eq!(out.units.last().unwrap().valid_bits, valid);
            assert_eq!(out.units[..out.units.len() - 1].iter().filter(|u| u.valid_bits.is_some()).count(), 0);
        }
    }
}
