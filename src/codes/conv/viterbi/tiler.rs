//! Cuts a continuous LLR stream into overlapping tiles (v1 / f / v2), the work
//! units of the tiled decoders. Shared by the `Framer` block, the BER tools and
//! the tests, so that there is one definition of where a tile starts.

use crate::codes::conv::viterbi::config::TileConfig;
use crate::codes::error::{CodeError, CodeResult};
use crate::codes::llr::Llr;

/// Streaming tiler: LLRs in (any chunking), whole work units out.
///
/// Unit `u` holds stages `u·G·f − v1 .. (u+1)·G·f + v2` (G = `group`), `n` LLRs per
/// stage: the `G` tiles of the unit laid end to end, sharing their overlaps.
/// Stages before the stream start carry [`Llr::CERTAIN_ZERO`] (the encoder's
/// register is all zeros there), so the first tile starts from a known state
/// when v1 ≥ K−1; stages after the stream's end are erasures (LLR 0).
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
    n: usize,
    /// LLRs from stage `buf_stage` on.
    buf: Vec<T>,
    buf_stage: usize,
    /// Stages received so far.
    received: usize,
    /// Index of the next unit to emit.
    next_unit: usize,
}

impl<T: Llr> Tiler<T> {
    /// Tiler for `n` LLRs per stage.
    pub fn new(cfg: TileConfig, n: usize) -> Self {
        Self { cfg, n, buf: Vec::new(), buf_stage: 0, received: 0, next_unit: 0 }
    }

    /// LLRs per emitted unit.
    pub fn unit_len(&self) -> usize {
        self.cfg.unit_stages() * self.n
    }

    /// Units emitted so far.
    pub fn units_emitted(&self) -> usize {
        self.next_unit
    }

    fn emit(&mut self, out: &mut Vec<T>) {
        let first = (self.next_unit * self.cfg.unit_bits()) as isize - self.cfg.v1 as isize;
        let end = first + self.cfg.unit_stages() as isize;
        let n = self.n;
        // Three runs: before the stream, inside it, past its end.
        let lead = (-first).clamp(0, end - first) as usize;
        out.extend(std::iter::repeat_n(T::CERTAIN_ZERO, lead * n));
        let lo = first.max(0) as usize;
        let hi = (end.max(0) as usize).min(self.received).max(lo);
        let i = (lo - self.buf_stage) * n;
        out.extend_from_slice(&self.buf[i..i + (hi - lo) * n]);
        let tail = self.cfg.unit_stages() - lead - (hi - lo);
        out.extend(std::iter::repeat_n(T::default(), tail * n));
        self.next_unit += 1;
    }

    /// Forget the stages before the next unit's first stage; done once per call,
    /// not per unit, so a large push costs one move of the buffer.
    fn compact(&mut self) {
        let keep_from = (self.next_unit * self.cfg.unit_bits()).saturating_sub(self.cfg.v1);
        if keep_from > self.buf_stage {
            let drop = ((keep_from - self.buf_stage) * self.n).min(self.buf.len() / self.n * self.n);
            self.buf.drain(..drop);
            self.buf_stage += drop / self.n;
        }
    }

    /// Add LLRs; append every unit that became complete to `out` and return how
    /// many. A stage split across calls is held back until it is whole.
    pub fn push(&mut self, llrs: &[T], out: &mut Vec<T>) -> usize {
        let before = self.next_unit;
        self.buf.extend_from_slice(llrs);
        self.received = self.buf_stage + self.buf.len() / self.n;
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
        let rem = self.buf.len() % self.n;
        if rem != 0 {
            return Err(CodeError::Truncated(format!(
                "LLR stream ended inside a trellis stage ({rem} of {} LLRs present)",
                self.n
            )));
        }
        while self.next_unit * self.cfg.unit_bits() < self.received {
            self.emit(out);
        }
        let valid = self.received - (self.next_unit.max(1) - 1) * self.cfg.unit_bits();
        Ok((self.received > 0 && valid < self.cfg.unit_bits()).then_some(valid))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes::conv::viterbi::config::Traceback;

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

    #[test]
    fn stream_ending_inside_a_stage_is_an_error() {
        let cfg = TileConfig::new(4, 1, 1, Traceback::Serial).unwrap();
        let mut t = Tiler::<i8>::new(cfg, 2);
        let mut out = Vec::new();
        t.push(&[1, 2, 3], &mut out);
        assert!(matches!(t.finish(&mut out), Err(CodeError::Truncated(_))));
    }
}
