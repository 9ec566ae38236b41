//! Cuts a continuous LLR stream into overlapping tiles (v1 / f / v2), the work
//! units of the tiled decoders. Shared by the `Framer` block, the BER tools and
//! the tests, so that there is one definition of where a tile starts.

use crate::codes::conv::viterbi::config::TileConfig;
use crate::codes::error::{CodeError, CodeResult};
use crate::codes::llr::Llr;

/// Streaming tiler: LLRs in (any chunking), whole tiles out.
///
/// Tile `i` holds stages `i·f − v1 .. i·f + f + v2`, `n` LLRs per stage. Stages
/// before the stream start carry [`Llr::CERTAIN_ZERO`] (the encoder's register
/// is all zeros there), so the first tile starts from a known state when
/// v1 ≥ K−1; stages after the stream's end are erasures (LLR 0).
///
/// # Example
/// ```
/// use gpufec::codes::conv::{TileConfig, Tiler, Traceback};
/// let cfg = TileConfig::new(4, 2, 2, Traceback::Serial).unwrap();
/// let mut t = Tiler::<f32>::new(cfg, 2);
/// let mut tiles = Vec::new();
/// t.push(&[1.0; 20], &mut tiles);   // 10 stages: tile 0 needs stages up to 5
/// assert_eq!(tiles.len(), 2 * 8 * 2);
/// let last = t.finish(&mut tiles).unwrap();
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
    /// Index of the next tile to emit.
    next_tile: usize,
}

impl<T: Llr> Tiler<T> {
    /// Tiler for `n` LLRs per stage.
    pub fn new(cfg: TileConfig, n: usize) -> Self {
        Self { cfg, n, buf: Vec::new(), buf_stage: 0, received: 0, next_tile: 0 }
    }

    /// LLRs per emitted tile.
    pub fn tile_len(&self) -> usize {
        self.cfg.stages() * self.n
    }

    /// Tiles emitted so far.
    pub fn tiles_emitted(&self) -> usize {
        self.next_tile
    }

    fn emit(&mut self, out: &mut Vec<T>) {
        let first = (self.next_tile * self.cfg.f) as isize - self.cfg.v1 as isize;
        let n = self.n;
        for s in first..first + self.cfg.stages() as isize {
            if s < 0 {
                out.extend(std::iter::repeat_n(T::CERTAIN_ZERO, n));
            } else if s as usize >= self.received {
                out.extend(std::iter::repeat_n(T::default(), n));
            } else {
                let i = (s as usize - self.buf_stage) * n;
                out.extend_from_slice(&self.buf[i..i + n]);
            }
        }
        self.next_tile += 1;
    }

    /// Forget the stages before the next tile's first stage; done once per call,
    /// not per tile, so a large push costs one move of the buffer.
    fn compact(&mut self) {
        let keep_from = (self.next_tile * self.cfg.f).saturating_sub(self.cfg.v1);
        if keep_from > self.buf_stage {
            let drop = ((keep_from - self.buf_stage) * self.n).min(self.buf.len() / self.n * self.n);
            self.buf.drain(..drop);
            self.buf_stage += drop / self.n;
        }
    }

    /// Add LLRs; append every tile that became complete to `out` and return how
    /// many. A stage split across calls is held back until it is whole.
    pub fn push(&mut self, llrs: &[T], out: &mut Vec<T>) -> usize {
        let before = self.next_tile;
        self.buf.extend_from_slice(llrs);
        self.received = self.buf_stage + self.buf.len() / self.n;
        loop {
            let need = self.next_tile * self.cfg.f + self.cfg.f + self.cfg.v2;
            if self.received < need {
                break;
            }
            self.emit(out);
        }
        self.compact();
        self.next_tile - before
    }

    /// End of stream: append the remaining tiles (padded with erasures) and
    /// return how many stages of the last emitted tile are valid when fewer than
    /// f (`None` when every emitted tile is whole). A stream that ended inside a
    /// stage is an error.
    pub fn finish(&mut self, out: &mut Vec<T>) -> CodeResult<Option<usize>> {
        let rem = self.buf.len() % self.n;
        if rem != 0 {
            return Err(CodeError::Truncated(format!(
                "LLR stream ended inside a trellis stage ({rem} of {} LLRs present)",
                self.n
            )));
        }
        while self.next_tile * self.cfg.f < self.received {
            self.emit(out);
        }
        let valid = self.received - (self.next_tile.max(1) - 1) * self.cfg.f;
        Ok((self.received > 0 && valid < self.cfg.f).then_some(valid))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes::conv::viterbi::config::Traceback;

    #[test]
    fn tiles_hold_the_right_stages_in_any_chunking() {
        let n = 2;
        for (f, v1, v2, stages) in [(4, 2, 3, 10usize), (5, 0, 0, 15), (3, 7, 1, 8), (8, 3, 2, 1), (4, 2, 2, 0)] {
            let cfg = TileConfig::new(f, v1, v2, Traceback::Serial).unwrap();
            let llrs: Vec<f32> = (0..stages * n).map(|i| i as f32 + 1.0).collect();
            for chunk in [1usize, 3, 16, 1000] {
                let mut t = Tiler::new(cfg, n);
                let mut out = Vec::new();
                for c in llrs.chunks(chunk) {
                    t.push(c, &mut out);
                }
                let last = t.finish(&mut out).unwrap();
                let tiles = cfg.tiles_for(stages);
                assert_eq!(out.len(), tiles * cfg.stages() * n, "{f},{v1},{v2},{stages}");
                for ti in 0..tiles {
                    for s in 0..cfg.stages() {
                        let g = (ti * f + s) as isize - v1 as isize;
                        for k in 0..n {
                            let want = if g < 0 { f32::CERTAIN_ZERO } else if g as usize >= stages { 0.0 } else { llrs[g as usize * n + k] };
                            assert_eq!(out[(ti * cfg.stages() + s) * n + k], want);
                        }
                    }
                }
                let want_last = if stages % f != 0 { Some(stages % f) } else { None };
                assert_eq!(last, want_last);
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
