//! The forward–backward algorithm over one frame: γ by the lattice, α and β
//! normalised per index (the seed's (11)–(12)), symbol APPs L_i(D) (1),
//! hard decisions and bit LLRs from them.

use super::geometry::Geometry;
use super::lattice::{self, Index, LANES, Moves, Scratch, Weights};
use super::received::{Received, fill_weights};
use crate::codes::simd::SimdLevel;
use crate::codes::sync::{BsidParams, SyncCode};
use rayon::prelude::*;

/// How a unit's end is found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// Each unit is one whole received frame: its length ρ gives the end
    /// drift ρ − τ. A frame whose drift lies outside the limits is decoded as
    /// if its end were unknown and reported (its check fails).
    Frames,
    /// Each unit is a window of a stream that starts where the frame starts:
    /// the decoder finds the end drift (the bits after the frame taken as
    /// random) and reports how many received bits the frame consumed. An end
    /// drift found on a limit is reported (the frame may have left them).
    Stream,
}

/// Everything one frame's decoding reads.
pub(super) struct Setup<'a> {
    pub geo: Geometry,
    pub code: &'a SyncCode,
    pub params: BsidParams,
    /// What LLRs are divided by (the `i8` quantizer's scale).
    pub scale: f32,
    pub moves: Moves,
    pub level: SimdLevel,
    /// γ of every index kept (global storage) or computed again for the
    /// backward pass (local storage).
    pub global: bool,
    pub framing: Framing,
}

/// A thread's memory for one frame at a time.
#[derive(Debug, Default)]
pub(super) struct FrameScratch {
    weights: Weights,
    lattice: Scratch,
    gamma: Vec<f32>,
    /// Σ_D γ_i(k, e, D): [i][k][e].
    sums: Vec<f64>,
    alpha: Vec<f64>,
    beta: Vec<f64>,
    beta_next: Vec<f64>,
    app: Vec<f64>,
}

/// Where one frame's results go.
pub(super) struct FrameOut<'a> {
    /// log2 q bits per symbol, most significant first.
    pub bits: &'a mut [u8],
    pub soft: Option<&'a mut [f32]>,
    /// The symbol APPs, N rows of q, when asked.
    pub app: Option<&'a mut Vec<f64>>,
}

/// What decoding one frame found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Received items the frame took.
    pub consumed: usize,
    /// The frame's end drift: ρ − τ for whole frames, the most likely one
    /// for a window of a stream.
    pub end_drift: i64,
    /// Its drift lay outside the limits (or, in a stream, on one of them).
    pub beyond: bool,
    /// No path within the limits explains what was received: the bits are
    /// zeros and the soft output 0.
    pub lost: bool,
}

impl Setup<'_> {
    /// Decode one frame from `items` (a whole frame or a window at least
    /// τ + m_τ⁻ long, as the caller checked). With `nested`, γ is computed
    /// on rayon's threads index by index (global storage).
    pub fn decode<T: Received>(&self, items: &[T], s: &mut FrameScratch, out: &mut FrameOut<'_>, nested: bool) -> Outcome {
        let g = &self.geo;
        let (tau, avail) = (g.tau() as i64, items.len());
        let pad = (1 - i64::from(g.lo) - i64::from(g.corridor_lo)).max(1) as usize;
        let len = pad + avail.max(g.tau() + (g.lo + g.states as i32) as usize) + g.n + g.corridor + 2 * LANES;
        fill_weights(items, &self.params, self.scale, pad, len, g.q, &mut s.weights);
        let (per, glen) = (g.states * g.corridor, g.gamma_len());
        s.sums.resize(g.symbols * per, 0.0);
        if self.global {
            s.gamma.resize(g.symbols * glen, 0.0);
            let one = |lat: &mut Scratch, (i, out): (usize, &mut [f32])| self.gamma(i, avail, &s.weights, lat, out);
            if nested {
                s.gamma.par_chunks_mut(glen).enumerate().for_each_init(Scratch::default, one);
            } else {
                s.gamma.chunks_mut(glen).enumerate().for_each(|x| one(&mut s.lattice, x));
            }
            for (sums, gamma) in s.sums.chunks_mut(per).zip(s.gamma.chunks(glen)) {
                sum_symbols(gamma, g.q, sums);
            }
        } else {
            s.gamma.resize(glen, 0.0);
            for i in 0..g.symbols {
                self.gamma(i, avail, &s.weights, &mut s.lattice, &mut s.gamma);
                sum_symbols(&s.gamma, g.q, &mut s.sums[i * per..(i + 1) * per]);
            }
        }
        let Some(()) = self.forward(s) else { return self.lost(avail, out) };
        // The end: known for a whole frame within the limits; else a prior
        // over the ends the window holds, each further received bit that
        // the frame does not take counted as a random bit (factor 1/2).
        let known = tau + i64::from(g.lo)..=tau + i64::from(g.lo) + g.states as i64 - 1;
        let rho = avail as i64;
        let end_known = self.framing == Framing::Frames && known.contains(&rho);
        s.beta_next.clear();
        s.beta_next.extend((0..g.states).map(|k| {
            let m = k as i64 + i64::from(g.lo);
            match end_known {
                true if m == rho - tau => 1.0,
                true => 0.0,
                false if tau + m <= rho => 2f64.powi((m - (rho - tau)) as i32),
                false => 0.0,
            }
        }));
        let last = &s.alpha[g.symbols * g.states..];
        let (best, weight) = likeliest(last, &s.beta_next);
        if weight <= 0.0 {
            return self.lost(avail, out);
        }
        let end_drift = best as i64 + i64::from(g.lo);
        let Some(edge) = self.backward(avail, s, out) else { return self.lost(avail, out) };
        let (consumed, beyond) = match self.framing {
            Framing::Frames => (avail, !end_known || edge),
            Framing::Stream => ((tau + end_drift) as usize, edge || self.on_edge(best)),
        };
        Outcome { consumed, end_drift: if end_known { rho - tau } else { end_drift }, beyond, lost: false }
    }

    fn gamma(&self, i: usize, avail: usize, w: &Weights, lat: &mut Scratch, out: &mut [f32]) {
        let x = Index { geo: &self.geo, moves: self.moves, weights: w, book: self.code.codebook(i), i, avail };
        lattice::gamma(self.level, &x, lat, out);
    }

    /// α over every index, normalised; `None` when a row sums to zero.
    fn forward(&self, s: &mut FrameScratch) -> Option<()> {
        let g = &self.geo;
        let m = g.states;
        s.alpha.clear();
        s.alpha.resize((g.symbols + 1) * m, 0.0);
        s.alpha[(-g.lo) as usize] = 1.0;
        for i in 0..g.symbols {
            let (now, next) = s.alpha[i * m..(i + 2) * m].split_at_mut(m);
            let sums = &s.sums[i * m * g.corridor..(i + 1) * m * g.corridor];
            for (k, &a) in now.iter().enumerate().filter(|(_, a)| **a != 0.0) {
                for (e, &gs) in sums[k * g.corridor..(k + 1) * g.corridor].iter().enumerate() {
                    if let Some(to) = g.next_state(k, e) {
                        next[to] += a * gs;
                    }
                }
            }
            normalise(next)?;
        }
        Some(())
    }

    /// Whether state `k` is a limit that the drift may cross (not 0): a
    /// frame whose most likely drift sits there may have left the limits.
    fn on_edge(&self, k: usize) -> bool {
        (k == 0 && self.geo.lo < 0) || (k + 1 == self.geo.states && self.geo.lo + self.geo.states as i32 - 1 > 0)
    }

    /// β from the end prior in `beta_next`, with the APPs, decisions and
    /// soft output of every index; `None` when a row of β sums to zero,
    /// else whether the most likely drift (of α·β) lay on an edge at some
    /// index after the first.
    fn backward(&self, avail: usize, s: &mut FrameScratch, out: &mut FrameOut<'_>) -> Option<bool> {
        let g = &self.geo;
        let (m, q, w) = (g.states, g.q, g.corridor);
        let k_bits = self.code.symbol_bits();
        let glen = g.gamma_len();
        let FrameOut { bits, soft, app } = out;
        if let Some(a) = app.as_deref_mut() {
            a.clear();
            a.resize(g.symbols * q, 0.0);
        }
        normalise(&mut s.beta_next)?;
        let mut edge = false;
        for i in (0..g.symbols).rev() {
            if !self.global {
                self.gamma(i, avail, &s.weights, &mut s.lattice, &mut s.gamma);
            }
            let gamma = if self.global { &s.gamma[i * glen..(i + 1) * glen] } else { &s.gamma[..] };
            let alpha = &s.alpha[i * m..(i + 1) * m];
            let sums = &s.sums[i * m * w..(i + 1) * m * w];
            s.app.clear();
            s.app.resize(q, 0.0);
            s.beta.clear();
            s.beta.resize(m, 0.0);
            for k in 0..m {
                for e in 0..w {
                    let Some(to) = g.next_state(k, e) else { continue };
                    let b = s.beta_next[to];
                    s.beta[k] += sums[k * w + e] * b;
                    let weight = alpha[k] * b;
                    if weight != 0.0 {
                        let row = &gamma[(k * w + e) * q..(k * w + e + 1) * q];
                        for (p, &x) in s.app.iter_mut().zip(row) {
                            *p += weight * f64::from(x);
                        }
                    }
                }
            }
            normalise(&mut s.beta)?;
            if i > 0 {
                edge |= self.on_edge(likeliest(alpha, &s.beta).0);
            }
            std::mem::swap(&mut s.beta, &mut s.beta_next);
            normalise(&mut s.app)?;
            let best = s.app.iter().enumerate().fold((0, -1.0), |a, (d, &p)| if p > a.1 { (d, p) } else { a }).0;
            let sym_bits = &mut bits[i * k_bits..(i + 1) * k_bits];
            for (j, b) in sym_bits.iter_mut().enumerate() {
                *b = (best >> (k_bits - 1 - j)) as u8 & 1;
            }
            if let Some(soft) = soft.as_deref_mut() {
                bit_llrs(&s.app, k_bits, &mut soft[i * k_bits..(i + 1) * k_bits]);
            }
            if let Some(a) = app.as_deref_mut() {
                a[i * q..(i + 1) * q].copy_from_slice(&s.app);
            }
        }
        Some(edge)
    }

    fn lost(&self, avail: usize, out: &mut FrameOut<'_>) -> Outcome {
        out.bits.fill(0);
        if let Some(s) = out.soft.as_deref_mut() {
            s.fill(0.0);
        }
        if let Some(a) = out.app.as_deref_mut() {
            a.clear();
            a.resize(self.geo.symbols * self.geo.q, 1.0 / self.geo.q as f64);
        }
        let consumed = match self.framing {
            Framing::Frames => avail,
            Framing::Stream => self.geo.tau().min(avail),
        };
        Outcome { consumed, end_drift: consumed as i64 - self.geo.tau() as i64, beyond: true, lost: true }
    }
}

/// The state of the largest α·β, and that product.
fn likeliest(alpha: &[f64], beta: &[f64]) -> (usize, f64) {
    alpha.iter().zip(beta).map(|(a, b)| a * b).enumerate().fold((0, 0.0), |best, (k, p)| if p > best.1 { (k, p) } else { best })
}

/// Σ over the q symbols of each (k, e) row of γ, in f64.
fn sum_symbols(gamma: &[f32], q: usize, sums: &mut [f64]) {
    for (s, row) in sums.iter_mut().zip(gamma.chunks_exact(q)) {
        *s = row.iter().map(|&x| f64::from(x)).sum();
    }
}

/// Divide by the sum; `None` when it is zero (or not finite).
fn normalise(v: &mut [f64]) -> Option<()> {
    let total: f64 = v.iter().sum();
    if !(total > 0.0 && total.is_finite()) {
        return None;
    }
    let inv = 1.0 / total;
    v.iter_mut().for_each(|x| *x *= inv);
    Some(())
}

/// The LLR of each of the symbol's `k` bits (most significant first) from
/// its APPs: ln Σ_{D: bit 0} L(D) / Σ_{D: bit 1} L(D), the sums floored at
/// the smallest normal f64 so that the result is finite (|LLR| ≤ 1416).
fn bit_llrs(app: &[f64], k: usize, out: &mut [f32]) {
    for (j, o) in out.iter_mut().enumerate() {
        let bit = k - 1 - j;
        let (mut p0, mut p1) = (0.0, 0.0);
        for (d, &p) in app.iter().enumerate() {
            if d >> bit & 1 == 0 {
                p0 += p;
            } else {
                p1 += p;
            }
        }
        *o = (p0.max(f64::MIN_POSITIVE).ln() - p1.max(f64::MIN_POSITIVE).ln()) as f32;
    }
}
