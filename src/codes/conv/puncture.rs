//! Puncturing patterns for rate-1/n mother codes, and puncture / depuncture as
//! exact inverses in position.

use crate::codes::conv::code::MAX_N;
use crate::codes::encode::Encoder;
use crate::codes::error::{CodeError, CodeResult, invalid};

/// Longest puncturing period accepted, in stages.
pub const MAX_PERIOD: usize = 1024;

/// A puncturing pattern: one row per encoder output, one column per stage of the
/// period; 1 keeps the bit, 0 deletes it. Within a stage the kept bits leave in
/// generator order.
///
/// # Example
/// ```
/// use gpufec::codes::conv::PuncturePattern;
/// let p = PuncturePattern::standard("3/4").unwrap();
/// assert_eq!(p.to_string(), "101,110");
/// assert_eq!(p.kept_per_period(), 4);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PuncturePattern {
    rows: Vec<Vec<bool>>,
}

impl PuncturePattern {
    /// The pattern for a named rate. `1/2`, `1/3` and `1/4` keep every bit of
    /// a mother code of that rate; 2/3, 3/4, 5/6 and 7/8 are the DVB-S patterns
    /// of a rate-1/2 mother code (ETSI EN 300 421, table 2) with row 0 =
    /// generator 171 (X) and row 1 = generator 133 (Y).
    pub fn standard(rate: &str) -> CodeResult<Self> {
        let rows = match rate.trim() {
            "1/2" => "1,1",
            "1/3" => "1,1,1",
            "1/4" => "1,1,1,1",
            "2/3" => "10,11",
            "3/4" => "101,110",
            "5/6" => "10101,11010",
            "7/8" => "1000101,1111010",
            other => {
                return Err(invalid!(
                    "rate '{other}' has no standard pattern; use 1/2, 1/3, 1/4, 2/3, 3/4, 5/6 or 7/8"
                ));
            }
        };
        Self::parse(rows)
    }

    /// Parse a pattern written as comma-separated rows of 0/1, e.g. `110,101`.
    pub fn parse(text: &str) -> CodeResult<Self> {
        let rows = text
            .split(',')
            .map(|r| {
                r.trim()
                    .chars()
                    .map(|c| match c {
                        '0' => Ok(false),
                        '1' => Ok(true),
                        _ => Err(invalid!("puncture pattern '{text}' may hold only 0, 1 and commas")),
                    })
                    .collect::<CodeResult<Vec<bool>>>()
            })
            .collect::<CodeResult<Vec<_>>>()?;
        Self::new(rows)
    }

    /// Build a pattern from rows. All rows must have the same non-zero length
    /// (at most [`MAX_PERIOD`]), there are at most [`MAX_N`] of them, and every
    /// column (stage) must keep at least one bit, so that a depuncturer can
    /// always tell where a stream ended.
    pub fn new(rows: Vec<Vec<bool>>) -> CodeResult<Self> {
        let period = rows.first().map_or(0, Vec::len);
        if rows.is_empty() || period == 0 {
            return Err(invalid!("puncture pattern is empty"));
        }
        if rows.len() > MAX_N {
            return Err(invalid!("puncture pattern has {} rows; codes have at most {MAX_N} outputs", rows.len()));
        }
        if period > MAX_PERIOD {
            return Err(invalid!("puncture pattern of {period} stages; at most {MAX_PERIOD}"));
        }
        if rows.iter().any(|r| r.len() != period) {
            return Err(invalid!("puncture pattern rows differ in length"));
        }
        if let Some(c) = (0..period).find(|&c| rows.iter().all(|r| !r[c])) {
            return Err(invalid!("puncture pattern column {c} deletes every bit of its stage"));
        }
        Ok(Self { rows })
    }

    /// Identity pattern for an n-output code.
    pub fn none(n: usize) -> Self {
        Self { rows: vec![vec![true]; n] }
    }

    /// Number of encoder outputs the pattern is for.
    pub fn n(&self) -> usize {
        self.rows.len()
    }

    /// Stages per period.
    pub fn period(&self) -> usize {
        self.rows[0].len()
    }

    /// Bits kept per period.
    pub fn kept_per_period(&self) -> usize {
        self.rows.iter().flatten().filter(|&&b| b).count()
    }

    /// Whether the bit of output `row` at stage `col` of the period is kept.
    pub fn keeps(&self, row: usize, col: usize) -> bool {
        self.rows[row][col]
    }

    /// Bits kept at stage `col` of the period.
    pub fn kept_in_stage(&self, col: usize) -> usize {
        self.rows.iter().filter(|r| r[col]).count()
    }

    /// LLRs a stream punctured from stage 0 on carries before `stage`. The count
    /// extends periodically to negative stages, so that `kept_before(b) −
    /// kept_before(a)` is the LLR count of stages `a..b` wherever they lie.
    ///
    /// # Example
    /// ```
    /// use gpufec::codes::conv::PuncturePattern;
    /// let p = PuncturePattern::standard("3/4").unwrap(); // stages keep 2, 1, 1
    /// assert_eq!(p.kept_before(4), 6);
    /// assert_eq!(p.kept_before(0) - p.kept_before(-2), 2);
    /// ```
    pub fn kept_before(&self, stage: isize) -> isize {
        let period = self.period() as isize;
        let whole = stage.div_euclid(period) * self.kept_per_period() as isize;
        whole + (0..stage.rem_euclid(period) as usize).map(|c| self.kept_in_stage(c)).sum::<usize>() as isize
    }

    /// Whole stages whose LLRs fill the first `llrs` LLRs of a stream punctured
    /// from stage 0 on: the largest `s` with `kept_before(s) ≤ llrs`.
    pub fn stages_in(&self, llrs: usize) -> usize {
        let (period, kept) = (self.period(), self.kept_per_period());
        let (mut stages, mut rest) = (llrs / kept * period, llrs % kept);
        while rest >= self.kept_in_stage(stages % period) {
            rest -= self.kept_in_stage(stages % period);
            stages += 1;
        }
        stages
    }

    /// Whether the pattern keeps every bit.
    pub fn is_identity(&self) -> bool {
        self.rows.iter().flatten().all(|&b| b)
    }

    /// Code rate after puncturing a rate-1/n mother code: period / kept.
    pub fn rate(&self) -> f64 {
        self.period() as f64 / self.kept_per_period() as f64
    }

    /// Check that the pattern fits a code with `n` outputs.
    pub fn check_fits(&self, n: usize) -> CodeResult<()> {
        if self.n() != n {
            return Err(invalid!(
                "puncture pattern '{self}' has {} rows but the code has {n} outputs",
                self.n()
            ));
        }
        Ok(())
    }
}

impl std::fmt::Display for PuncturePattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let rows: Vec<String> = self
            .rows
            .iter()
            .map(|r| r.iter().map(|&b| if b { '1' } else { '0' }).collect())
            .collect();
        write!(f, "{}", rows.join(","))
    }
}

/// Position in the pattern, carried across calls so that a stream may arrive in
/// pieces of any size.
#[derive(Debug, Clone)]
struct Phase {
    pattern: PuncturePattern,
    /// Flat position in the period, `stage * n + output`.
    pos: usize,
}

impl Phase {
    /// With an identity pattern, account for `items` passed on unchanged.
    fn pass(&mut self, items: usize) -> bool {
        if !self.pattern.is_identity() {
            return false;
        }
        self.pos = (self.pos + items) % (self.pattern.n() * self.pattern.period());
        true
    }

    fn advance(&mut self) -> bool {
        let n = self.pattern.n();
        let keep = self.pattern.keeps(self.pos % n, self.pos / n);
        self.pos += 1;
        if self.pos == n * self.pattern.period() {
            self.pos = 0;
        }
        keep
    }
}

/// Streaming puncturer: drops the deleted positions of a coded stream.
///
/// # Example
/// ```
/// use gpufec::codes::conv::{PuncturePattern, Puncturer};
/// let mut p = Puncturer::new(PuncturePattern::standard("2/3").unwrap());
/// let mut out = Vec::new();
/// p.puncture(&[1u8, 2, 3, 4, 5, 6, 7, 8], &mut out);
/// assert_eq!(out, vec![1, 2, 4, 5, 6, 8]);
/// ```
#[derive(Debug, Clone)]
pub struct Puncturer {
    phase: Phase,
}

impl Puncturer {
    /// Start at the beginning of the pattern.
    pub fn new(pattern: PuncturePattern) -> Self {
        Self { phase: Phase { pattern, pos: 0 } }
    }

    /// With a pattern that keeps every bit, account for `items` that the
    /// caller passes on unchanged (saving a copy) and return true; otherwise
    /// return false and change nothing.
    pub fn pass_through(&mut self, items: usize) -> bool {
        self.phase.pass(items)
    }

    /// Append the kept items of `input` to `out`.
    pub fn puncture<T: Copy>(&mut self, input: &[T], out: &mut Vec<T>) {
        if self.phase.pass(input.len()) {
            out.extend_from_slice(input);
            return;
        }
        for &x in input {
            if self.phase.advance() {
                out.push(x);
            }
        }
    }
}

/// An encoder whose output is punctured: what a transmitter of a punctured
/// convolutional code sends.
///
/// # Example
/// ```
/// use gpufec::codes::conv::{ConvCode, ConvEncoder, EncoderMode, PuncturePattern, Punctured, Trellis};
/// use gpufec::codes::encode::Encoder;
/// use std::sync::Arc;
/// let t = Arc::new(Trellis::new(&ConvCode::k7_171_133()));
/// let enc = ConvEncoder::new(t, EncoderMode::Streaming).unwrap();
/// let mut p = Punctured::new(enc, PuncturePattern::standard("3/4").unwrap(), 2).unwrap();
/// let mut out = Vec::new();
/// p.encode(&[1, 0, 1], &mut out).unwrap();
/// assert_eq!(out.len(), 4);
/// assert_eq!(p.rate(), 0.75);
/// ```
#[derive(Debug, Clone)]
pub struct Punctured<E> {
    inner: E,
    puncturer: Puncturer,
    /// Channel bits per stage before puncturing.
    n: usize,
    coded: Vec<u8>,
}

impl<E: Encoder> Punctured<E> {
    /// `inner`, an encoder of `n` channel bits per stage, punctured with `pattern`.
    pub fn new(inner: E, pattern: PuncturePattern, n: usize) -> CodeResult<Self> {
        pattern.check_fits(n)?;
        Ok(Self { inner, puncturer: Puncturer::new(pattern), n, coded: Vec::new() })
    }
}

impl<E: Encoder> Encoder for Punctured<E> {
    fn encode(&mut self, bits: &[u8], out: &mut Vec<u8>) -> CodeResult<()> {
        if self.puncturer.phase.pattern.is_identity() {
            // Nothing to drop: no intermediate copy (rate 1/n links send every bit).
            return self.inner.encode(bits, out);
        }
        self.coded.clear();
        self.inner.encode(bits, &mut self.coded)?;
        self.puncturer.puncture(&self.coded, out);
        Ok(())
    }

    fn at_boundary(&self) -> bool {
        self.inner.at_boundary()
    }

    fn unit_bits(&self) -> u64 {
        self.inner.unit_bits()
    }

    fn rate(&self) -> f64 {
        // Of every n bits of a stage, the pattern keeps kept/period.
        self.inner.rate() * self.n as f64 * self.puncturer.phase.pattern.rate()
    }
}

/// Streaming depuncturer: reinserts deleted positions as erasures (LLR 0).
///
/// # Example
/// ```
/// use gpufec::codes::conv::{Depuncturer, PuncturePattern};
/// let mut d = Depuncturer::new(PuncturePattern::standard("2/3").unwrap());
/// let mut out = Vec::new();
/// d.depuncture(&[1.0f32, 2.0, 4.0], &mut out);
/// assert_eq!(out, vec![1.0, 2.0, 0.0, 4.0]);
/// assert!(d.finish().is_ok());
/// ```
#[derive(Debug, Clone)]
pub struct Depuncturer {
    phase: Phase,
    /// For each position of the period, the kept LLR (in sending order) that
    /// fills it, or `None` for an erasure.
    take: Vec<Option<usize>>,
}

impl Depuncturer {
    /// Start at the beginning of the pattern.
    pub fn new(pattern: PuncturePattern) -> Self {
        Self::at_stage(pattern, 0)
    }

    /// Start at stage `stage` of the period (mod the period): for a piece of
    /// stream, such as a work unit, that does not begin where the pattern does.
    pub fn at_stage(pattern: PuncturePattern, stage: usize) -> Self {
        let mut next = 0;
        let take = (0..pattern.n() * pattern.period())
            .map(|pos| {
                pattern.keeps(pos % pattern.n(), pos / pattern.n()).then(|| {
                    next += 1;
                    next - 1
                })
            })
            .collect();
        let mut d = Self { phase: Phase { pattern, pos: 0 }, take };
        d.restart_at(stage);
        d
    }

    /// With a pattern that keeps every bit, account for `items` that the
    /// caller passes on unchanged (saving a copy) and return true; otherwise
    /// return false and change nothing.
    pub fn pass_through(&mut self, items: usize) -> bool {
        self.phase.pass(items)
    }

    /// Start over at stage `stage` of the period, as for a new piece of stream.
    pub fn restart_at(&mut self, stage: usize) {
        self.phase.pos = stage % self.phase.pattern.period() * self.phase.pattern.n();
    }

    /// Append `input` to `out` with erasures at the deleted positions. Output runs
    /// up to the last received LLR and then through any deleted positions that
    /// follow it within the same stage.
    pub fn depuncture<T: Copy + Default>(&mut self, input: &[T], out: &mut Vec<T>) {
        let span = self.take.len();
        if self.phase.pass(input.len()) {
            out.extend_from_slice(input);
            return;
        }
        let mut input = input;
        // Item by item up to the period boundary, then whole periods at once.
        while self.phase.pos != 0 && !input.is_empty() {
            self.push_one(input[0], out);
            input = &input[1..];
        }
        let kept = self.phase.pattern.kept_per_period();
        let whole = input.len() / kept * kept;
        let periods = input[..whole].chunks_exact(kept);
        out.reserve(periods.len() * span);
        for period in periods {
            out.extend(self.take.iter().map(|t| t.map_or_else(T::default, |k| period[k])));
        }
        for &x in &input[whole..] {
            self.push_one(x, out);
        }
        let n = self.phase.pattern.n();
        while !self.phase.pos.is_multiple_of(n) && !self.phase.pattern.keeps(self.phase.pos % n, self.phase.pos / n) {
            self.phase.advance();
            out.push(T::default());
        }
    }

    /// Append the erasures before the next kept position, then `x`.
    fn push_one<T: Copy + Default>(&mut self, x: T, out: &mut Vec<T>) {
        while !self.phase.advance() {
            out.push(T::default());
        }
        out.push(x);
    }

    /// Check that the stream ended on a stage boundary.
    pub fn finish(&self) -> CodeResult<()> {
        let n = self.phase.pattern.n();
        if !self.phase.pos.is_multiple_of(n) {
            return Err(CodeError::Truncated(format!(
                "punctured stream ended inside a stage ({} of {n} outputs present)",
                self.phase.pos % n
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_rates_have_the_right_rate() {
        for (r, v) in [("1/2", 0.5), ("1/3", 1.0 / 3.0), ("1/4", 0.25), ("2/3", 2.0 / 3.0), ("3/4", 0.75), ("5/6", 5.0 / 6.0), ("7/8", 0.875)] {
            let p = PuncturePattern::standard(r).unwrap();
            assert!((p.rate() - v).abs() < 1e-12, "{r}: {}", p.rate());
        }
        assert!(PuncturePattern::standard("4/5").is_err());
    }

    #[test]
    fn rejects_bad_patterns() {
        assert!(PuncturePattern::parse("").is_err());
        assert!(PuncturePattern::parse("11,1").is_err());
        assert!(PuncturePattern::parse("12,11").is_err());
        assert!(PuncturePattern::parse("10,10").is_err());
        assert!(PuncturePattern::parse("01,10").is_ok());
        assert!(PuncturePattern::parse("10,00").unwrap_err().to_string().contains("column 1"));
        assert!(PuncturePattern::parse("1,1,1,1,1").unwrap_err().to_string().contains("at most 4 outputs"));
        assert!(PuncturePattern::parse(&"1".repeat(MAX_PERIOD + 1)).unwrap_err().to_string().contains("at most 1024"));
        let p = PuncturePattern::standard("3/4").unwrap();
        assert!(p.check_fits(3).is_err());
        assert!(p.check_fits(2).is_ok());
    }

    #[test]
    fn depuncture_inverts_puncture_in_any_chunking() {
        for pat in ["1,1", "10,11", "101,110", "10101,11010", "1000101,1111010", "110,011,101"] {
            let p = PuncturePattern::parse(pat).unwrap();
            let n = p.n();
            for stages in [1usize, 2, 5, 7, 21, 100] {
                let coded: Vec<f32> = (1..=stages * n).map(|i| i as f32).collect();
                let mut tx = Vec::new();
                let mut pu = Puncturer::new(p.clone());
                for c in coded.chunks(3) {
                    pu.puncture(c, &mut tx);
                }
                let mut rx = Vec::new();
                let mut de = Depuncturer::new(p.clone());
                for c in tx.chunks(2) {
                    de.depuncture(c, &mut rx);
                }
                de.finish().unwrap();
                assert_eq!(rx.len(), coded.len(), "{pat} {stages}");
                for (i, (&a, &b)) in coded.iter().zip(&rx).enumerate() {
                    let keep = p.keeps(i % n, (i / n) % p.period());
                    assert_eq!(b, if keep { a } else { 0.0 }, "{pat} {stages} at {i}");
                }
            }
        }
    }

    #[test]
    fn kept_counts_match_the_puncturer() {
        for pat in ["1,1", "10,11", "101,110", "1000101,1111010", "110,011,101"] {
            let p = PuncturePattern::parse(pat).unwrap();
            let n = p.n();
            let mut sent = Vec::new();
            Puncturer::new(p.clone()).puncture(&vec![0u8; 40 * n], &mut sent);
            let mut llrs = 0;
            for stage in 0..40usize {
                assert_eq!(p.kept_before(stage as isize), llrs as isize, "{pat} stage {stage}");
                for l in llrs..llrs + p.kept_in_stage(stage % p.period()) {
                    assert_eq!(p.stages_in(l), stage, "{pat}: {l} LLRs");
                }
                llrs += p.kept_in_stage(stage % p.period());
            }
            // Negative stages repeat the period.
            let per = p.period() as isize;
            for s in -13..0isize {
                assert_eq!(p.kept_before(s + per) - p.kept_before(s), p.kept_per_period() as isize, "{pat} {s}");
            }
        }
    }

    #[test]
    fn depuncturing_may_start_inside_the_period() {
        let p = PuncturePattern::standard("3/4").unwrap(); // columns 11, 01, 10
        let mut out = Vec::new();
        Depuncturer::at_stage(p.clone(), 1).depuncture(&[1.0f32, 2.0, 3.0, 4.0], &mut out);
        assert_eq!(out, vec![0.0, 1.0, 2.0, 0.0, 3.0, 4.0]);
        out.clear();
        Depuncturer::at_stage(p, 5).depuncture(&[7.0f32], &mut out);
        assert_eq!(out, vec![7.0, 0.0]);
    }

    #[test]
    fn truncated_stage_is_reported() {
        let mut de = Depuncturer::new(PuncturePattern::standard("1/2").unwrap());
        let mut out = Vec::new();
        de.depuncture(&[1.0f32, 2.0, 3.0], &mut out);
        assert!(matches!(de.finish(), Err(CodeError::Truncated(_))));
    }
}
