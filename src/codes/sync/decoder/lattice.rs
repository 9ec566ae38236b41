//! γ of one symbol index by the corridor-constrained lattice (the seed's
//! equations (7)–(10)), [`LANES`] lattices at a time.
//!
//! One lattice per (i, m', D): row r holds the probability of having sent
//! the codeword's first r bits and received c samples, kept only where the
//! drift c − r lies in the corridor [m_n⁻, m_n⁺]. Indexed by that drift δ,
//! a row is a fixed-width vector and the three moves read
//!
//! ```text
//! G_r[δ] = Pi/2·G_r[δ−1] + Pd·G_{r−1}[δ+1] + Q(y_{r+δ−1} | x_{r−1})·G_{r−1}[δ]
//! ```
//!
//! (insertion, deletion, transmission; no insertion in the last row, since
//! the channel's last event is not one). The last row holds R(y | C_i(D))
//! for every drift change δ at once: the smaller ones are read off it.
//!
//! Lanes are pairs (m', D) with D fastest: for q ≥ [`LANES`] a block of lanes
//! shares its start m' and reads each received weight as one broadcast;
//! for smaller q a block spans LANES/q starts, and reads weights expanded
//! per lane once per frame ([`Weights`]). The chain along δ (the insertion
//! term) is one fused multiply-add per vector, and LANES/16 vectors run
//! side by side to hide its latency. Rows are flushed to zero below
//! [`FLUSH`], so that no arithmetic runs on subnormal numbers.

use super::geometry::Geometry;
use crate::codes::simd::SimdLevel;
use crate::codes::sync::Codebook;

/// Lattices computed together: two AVX-512 or four AVX2 vectors of `f32`.
pub const LANES: usize = 32;

/// One value per lane.
pub(super) type Lanes = [f32; LANES];

const ZERO: Lanes = [0.0; LANES];

/// Lattice values below this are set to zero after each row: a path this
/// unlikely changes no decision, and the flush keeps every product of two
/// stored values (≥ 1e-20) and a weight (≥ 1e-14, see [`LLR_CLAMP`](super::LLR_CLAMP))
/// out of the subnormal range, where x86 arithmetic is a hundred times slower.
pub const FLUSH: f32 = 1e-20;

/// The received weights of one frame, shifted by `pad` so that every
/// sample a lattice may read has an index (zeros outside the frame).
#[derive(Debug, Default)]
pub(super) struct Weights {
    pub pad: usize,
    /// Q(y_s | 0) and Q(y_s | 1) − Q(y_s | 0) of sample s at s + pad.
    pub w0: Vec<f32>,
    pub dw: Vec<f32>,
    /// For q < LANES: the same, lane l holding sample s + l / q.
    pub wide0: Vec<Lanes>,
    pub wide_d: Vec<Lanes>,
}

impl Weights {
    /// Fill the expanded weights from `w0` and `dw` (only for q < LANES).
    pub fn expand(&mut self, q: usize) {
        let len = self.w0.len() - LANES / q;
        let spread = |w: &[f32], out: &mut Vec<Lanes>| {
            out.clear();
            out.extend((0..len).map(|s| std::array::from_fn(|l| w[s + l / q])));
        };
        spread(&self.w0, &mut self.wide0);
        spread(&self.dw, &mut self.wide_d);
    }
}

/// A thread's rows and tables for the lattices of one index.
#[derive(Debug, Default)]
pub(super) struct Scratch {
    /// Codeword bit r − 1 of each lane's symbol, as 0.0 / 1.0, for each lane
    /// group (q / LANES of them, or 1).
    bits: Vec<Lanes>,
    prev: Vec<Lanes>,
    cur: Vec<Lanes>,
    /// Row 0: (Pi/2)^δ for δ ≥ 0.
    init: Vec<Lanes>,
}

/// The branch weights that do not depend on a sample.
#[derive(Debug, Clone, Copy)]
pub(super) struct Moves {
    /// Insertion of a random bit: Pi / 2.
    pub insert: f32,
    /// Deletion: Pd.
    pub delete: f32,
}

/// What the lattices of one index read.
pub(super) struct Index<'a> {
    pub geo: &'a Geometry,
    pub moves: Moves,
    pub weights: &'a Weights,
    /// The index's codebook C_i.
    pub book: &'a Codebook,
    pub i: usize,
    /// Received samples in the unit.
    pub avail: usize,
}

/// γ_i(m', δ, D) = R(y | C_i(D)) for every start m' and drift change δ of
/// index `x.i`, into `out` ([m'][δ][D], zero where the start or the end
/// lies outside the limits or the received samples).
pub(super) fn gamma(level: SimdLevel, x: &Index<'_>, scratch: &mut Scratch, out: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    match level {
        // SAFETY: the level is one this CPU supports (checked when the
        // decoder was made), and AVX2 CPUs have FMA (checked too).
        SimdLevel::Avx512 => return unsafe { gamma_avx512(x, scratch, out) },
        SimdLevel::Avx2 => return unsafe { gamma_avx2(x, scratch, out) },
        SimdLevel::Scalar => {}
    }
    let _ = level;
    gamma_body(x, scratch, out);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn gamma_avx2(x: &Index<'_>, scratch: &mut Scratch, out: &mut [f32]) {
    gamma_body(x, scratch, out);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,fma")]
fn gamma_avx512(x: &Index<'_>, scratch: &mut Scratch, out: &mut [f32]) {
    gamma_body(x, scratch, out);
}

#[inline(always)]
fn gamma_body(x: &Index<'_>, s: &mut Scratch, out: &mut [f32]) {
    let Index { geo: g, moves, weights: w, book, i, avail } = *x;
    let (n, q, width) = (g.n, g.q, g.corridor);
    let groups = q.div_ceil(LANES);
    s.bits.clear();
    for grp in 0..groups {
        for r in 0..n {
            s.bits.push(std::array::from_fn(|l| {
                let d = if q >= LANES { grp * LANES + l } else { l % q };
                (book.word(d) >> (n - 1 - r) & 1) as f32
            }));
        }
    }
    s.init.clear();
    let mut power = 1.0f32;
    for e in 0..width {
        let delta = e as i32 + g.corridor_lo;
        s.init.push(if delta < 0 { ZERO } else { [power; LANES] });
        if delta >= 0 {
            power *= moves.insert;
        }
    }
    s.prev.resize(width + 1, ZERO);
    s.cur.resize(width + 1, ZERO);
    out.fill(0.0);
    let per_block = if q >= LANES { 1 } else { LANES / q };
    let blocks = if q >= LANES { g.states * (q / LANES) } else { g.states.div_ceil(per_block) };
    // Sample of lane 0 at cell (r, e) of a block starting at received
    // position a: a + r + e + m_n⁻ − 1, shifted by the padding.
    let shift = w.pad as i64 + i64::from(g.corridor_lo) - 1;
    for b in 0..blocks {
        let (state0, grp) = if q >= LANES { (b / (q / LANES), b % (q / LANES)) } else { (b * per_block, 0) };
        let states = state0..(state0 + per_block).min(g.states);
        if !states.clone().any(|k| g.start(i, k, avail).is_some()) {
            continue;
        }
        let base = (g.start_unchecked(i, state0) + shift) as usize;
        let bits = &s.bits[grp * n..(grp + 1) * n];
        if q >= LANES {
            let sample = |j: usize| ([w.w0[base + j]; LANES], [w.dw[base + j]; LANES]);
            run(n, width, moves, &s.init, bits, sample, &mut s.prev, &mut s.cur);
        } else {
            let sample = |j: usize| (w.wide0[base + j], w.wide_d[base + j]);
            run(n, width, moves, &s.init, bits, sample, &mut s.prev, &mut s.cur);
        }
        // The last row is in `prev`: write each lane's valid ends.
        for l in 0..LANES {
            let (k, d) = if q >= LANES { (state0, grp * LANES + l) } else { (state0 + l / q, l % q) };
            let Some(a) = (k < g.states).then(|| g.start(i, k, avail)).flatten() else { continue };
            for e in 0..width {
                if g.end_valid(k, e, a, avail) {
                    out[(k * width + e) * q + d] = s.prev[e][l];
                }
            }
        }
    }
}

/// One block of lattices: rows 1..=n from row 0 (`init`), the last left in
/// `prev[..width]`. `sample(r + e)` gives the lanes' weights of cell (r, e).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn run(n: usize, width: usize, moves: Moves, init: &[Lanes], bits: &[Lanes], sample: impl Fn(usize) -> (Lanes, Lanes), prev: &mut Vec<Lanes>, cur: &mut Vec<Lanes>) {
    prev[..width].copy_from_slice(init);
    prev[width] = ZERO;
    let pd = moves.delete;
    for r in 1..=n {
        let b = &bits[r - 1];
        let h = if r < n { moves.insert } else { 0.0 };
        let mut left = ZERO;
        for e in 0..width {
            let (w0, dw) = sample(r + e);
            let (up, dg) = (&prev[e + 1], &prev[e]);
            let mut v = ZERO;
            for l in 0..LANES {
                let diag = b[l].mul_add(dw[l], w0[l]);
                let t = pd.mul_add(up[l], diag * dg[l]);
                v[l] = h.mul_add(left[l], t);
            }
            cur[e] = v;
            left = v;
        }
        for x in cur[..width].as_flattened_mut() {
            *x = if *x < FLUSH { 0.0 } else { *x };
        }
        std::mem::swap(prev, cur);
        prev[width] = ZERO;
    }
}
