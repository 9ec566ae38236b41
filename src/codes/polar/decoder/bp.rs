//! Belief propagation on the polar factor graph with scaled min-sum and the
//! round-trip schedule (Yuan and Parhi, "Early stopping criteria for
//! energy-efficient low-latency belief-propagation polar code decoders",
//! IEEE TSP 2014; the seed paper, Liu, Liu, Yan, Zhao, "GPU-based
//! implementation of belief propagation decoding for polar codes"), in two
//! arithmetics that share one schedule: the `f32` reference and the `i8`
//! model of the GPU decoder.
//!
//! # The graph and the schedule (both arithmetics)
//!
//! N = 2^m; columns j = 0 … m of N nodes each, column 0 the bits u, column
//! m the codeword x. Stage s (0 ≤ s < m) joins columns s and s + 1 by N/2
//! processing elements of span h = 2^s: one for every i with i & h = 0,
//! joining nodes i and i + h, where column s + 1 holds (v_i ⊕ v_{i+h},
//! v_{i+h}) of column s's (v_i, v_{i+h}). So stage 0, next to u, has span 1
//! and stage m − 1, next to x, span N/2. Every order of the stages encodes
//! x = u·G (they commute), but BP's result depends on the graph: the seed
//! paper's numbering (span 2^(m−j) at its stage j, N/2 next to u) belongs
//! to Arıkan's bit-reversed G = B·F^⊗m; with this family's G = F^⊗m that
//! order decoded (256, 128) at 3 dB with a frame error rate of 0.48 against
//! 0.013 for this one (equal to SC's 0.012). Each node holds a leftward
//! message L[j][i] and a rightward one R[j][i].
//!
//! Start: L[m][i] = the channel LLR of x_i; R[0][i] = CERTAIN for a frozen
//! u_i (+∞ in `f32`, 127 in `i8`), 0 for information and parity-check bits
//! (BP does not use the parity checks' relations); every other message 0.
//!
//! Iteration t = 1, 2, …: first the left pass, stages s = m − 1 down to 0,
//! then the right pass, stages s = 0 up to m − 1. Within a stage the
//! elements are independent (each writes only its own two outputs); the
//! model runs them in order of i. With a = L[s+1][i], b = L[s+1][i+h],
//! c = R[s][i], d = R[s][i+h] and F(p, q) = α·f(p, q) (below):
//!
//! - left pass:  L[s][i] = F(a, b + d);  L[s][i+h] = F(a, c) + b
//! - right pass: R[s+1][i] = F(c, d + b); R[s+1][i+h] = F(c, a) + d
//!
//! The left pass reads R[s] of iteration t − 1 (R[0] never changes), the
//! right pass the L[s+1] the left pass of iteration t just wrote.
//!
//! After the iteration: û_i = 0 for a frozen u_i, otherwise 1 exactly when
//! L[0][i] + R[0][i] < 0; x̂_i = 1 exactly when L[m][i] + R[m][i] < 0 (a sum
//! of 0 decides 0). The decoder stops after iteration t when t = Imax, or
//! with the G-matrix stop when û·G = x̂, or with the CRC stop when the
//! information bits of û pass the CRC. It outputs û's information bits (of
//! û·G for a systematic code) and t.
//!
//! # The `f32` reference
//!
//! f(p, q) = sign(p)·sign(q)·min(|p|, |q|) ([`super::minsum::f`]), F = α·f
//! with α = 0.9375 unless asked otherwise, + the IEEE sum; ∞ only ever
//! meets finite values or +∞, so no NaN arises.
//!
//! # The `i8` model (what the GPU kernel computes, bit for bit)
//!
//! Messages are `i8` in −128 … 127; `i8` channel LLRs are taken as they
//! come (the quantizer gives −127 … 127), `f32` ones quantized by the
//! shared quantizer at [`I8_MODEL_F32_SCALE`](super::I8_MODEL_F32_SCALE) (round(4·llr), halves away
//! from 0, saturated to ±127). With |p|⁺ = min(|p|, 127) (so −128
//! counts as 127):
//!
//! 1. m = min(|p|⁺, |q|⁺), an integer 0 … 127;
//! 2. α·m is m − ((m + 8) >> 4): 15m/16 rounded to the nearest integer,
//!    a half rounded towards 0 (m = 8 gives 7, m = 24 gives 22, m = 127
//!    gives 119, m < 8 stays m); α is 15/16 and cannot be changed;
//! 3. F(p, q) = −(α·m) when exactly one of p, q is negative (their sign
//!    bits differ), else α·m: never −128;
//! 4. p + q saturates to −128 … 127.
//!
//! The operations are those of the schedule above in its order; each
//! element's two outputs depend only on its four inputs, so the elements of
//! a stage may run in any order or at once. Decisions compare the exact sum
//! of two messages with 0 (the sign of a saturating sum is the same).
//!
//! Why this arithmetic: on an NVIDIA GPU four messages fit a 32-bit
//! register, and every step is a few SIMD-within-a-word instructions that
//! never carry across bytes: |p|⁺ a saturating absolute value, the minimum
//! of two magnitudes from the sign of a + 0x80 − b, the scaling an add of
//! 0x08 per byte (no carry: m + 8 ≤ 135), a shift with the mask 0x0F0F0F0F
//! and a subtract (no borrow), the sign a conditional negation by the byte
//! mask of the signs of p ^ q, and the saturating sum. No step needs a
//! widening, a multiply or a clamp of its own, and four elements of a stage
//! are updated per instruction (`docs/studies/polar_gpu.md` counts them).

use super::minsum::f;
use crate::codes::channel::Quantizer;
use crate::codes::llr::{Llr, LlrType};
use crate::codes::polar::code::BitKind;
use crate::codes::polar::spec::PolarSpec;
use crate::codes::polar::transform::{polar_transform, words};

/// When BP stops before its last iteration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EarlyStop {
    /// When û·G equals x̂ (the G-matrix criterion).
    GMatrix,
    /// When the information bits pass the code's CRC.
    Crc,
    /// Never: always the full number of iterations.
    Never,
}

impl EarlyStop {
    /// `g`, `crc` or `never`.
    pub fn name(self) -> &'static str {
        match self {
            EarlyStop::GMatrix => "g",
            EarlyStop::Crc => "crc",
            EarlyStop::Never => "never",
        }
    }
}

/// The message arithmetic of one BP decoder.
pub(super) trait Arith: Copy + Send + Sync {
    /// A message.
    type M: Copy + Default + Send + Sync;
    /// The prior of a frozen bit.
    const CERTAIN: Self::M;
    /// A channel LLR as a message.
    fn load<T: Llr>(&self, llr: T) -> Self::M;
    /// F(p, q) = α·f(p, q).
    fn scaled(&self, p: Self::M, q: Self::M) -> Self::M;
    /// p + q.
    fn add(p: Self::M, q: Self::M) -> Self::M;
    /// Whether p + q < 0 (exactly).
    fn negative(p: Self::M, q: Self::M) -> bool;
    /// p + q as an `f32` soft value.
    fn soft(p: Self::M, q: Self::M) -> f32;
}

/// The `f32` reference with its α.
#[derive(Debug, Clone, Copy)]
pub(super) struct F32Arith {
    pub(super) alpha: f32,
}

impl Arith for F32Arith {
    type M = f32;
    const CERTAIN: f32 = f32::INFINITY;
    #[inline(always)]
    fn load<T: Llr>(&self, llr: T) -> f32 {
        llr.to_f32()
    }
    #[inline(always)]
    fn scaled(&self, p: f32, q: f32) -> f32 {
        self.alpha * f(p, q)
    }
    #[inline(always)]
    fn add(p: f32, q: f32) -> f32 {
        p + q
    }
    #[inline(always)]
    fn negative(p: f32, q: f32) -> bool {
        p + q < 0.0
    }
    #[inline(always)]
    fn soft(p: f32, q: f32) -> f32 {
        p + q
    }
}

/// The `i8` model (module documentation).
#[derive(Debug, Clone, Copy)]
pub(super) struct I8Arith {
    /// How `f32` LLRs become messages ([`super::I8_MODEL_F32_SCALE`]).
    pub(super) f32_in: Quantizer,
}

impl Arith for I8Arith {
    type M = i8;
    const CERTAIN: i8 = 127;
    #[inline(always)]
    fn load<T: Llr>(&self, llr: T) -> i8 {
        match T::TYPE {
            // Exact: an i8 LLR is its own message, −128 included.
            LlrType::I8 => llr.to_f32() as i8,
            LlrType::F32 => self.f32_in.one(llr.to_f32()),
        }
    }
    #[inline(always)]
    fn scaled(&self, p: i8, q: i8) -> i8 {
        let m = p.unsigned_abs().min(127).min(q.unsigned_abs().min(127));
        let m = (m - ((m + 8) >> 4)) as i8;
        if (p ^ q) < 0 { -m } else { m }
    }
    #[inline(always)]
    fn add(p: i8, q: i8) -> i8 {
        p.saturating_add(q)
    }
    #[inline(always)]
    fn negative(p: i8, q: i8) -> bool {
        i16::from(p) + i16::from(q) < 0
    }
    #[inline(always)]
    fn soft(p: i8, q: i8) -> f32 {
        f32::from(i16::from(p) + i16::from(q))
    }
}

/// What one codeword's decoding found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct BpResult {
    pub(super) iterations: u32,
    /// The CRC's verdict (with a CRC), else the G-matrix check's (with that stop).
    pub(super) check: Option<bool>,
}

/// The messages of one codeword, reused codeword after codeword.
pub(super) struct Bp<A: Arith> {
    arith: A,
    iterations: u32,
    stop: EarlyStop,
    m: u32,
    /// L[j] at j·N, j = 0 … m.
    l: Vec<A::M>,
    /// R[j] at j·N.
    r: Vec<A::M>,
    u: Vec<u64>,
    x: Vec<u64>,
    /// û·G.
    ug: Vec<u64>,
    info: Vec<u8>,
}

impl<A: Arith> Bp<A> {
    /// Messages of a code of 2^`m` bits with `k` information bits, decoded
    /// with at most `iterations` iterations and `stop`.
    pub(super) fn new(arith: A, iterations: u32, stop: EarlyStop, m: u32, k: usize) -> Self {
        let n = 1usize << m;
        let cells = (m as usize + 1) * n;
        Self { arith, iterations, stop, m, l: vec![A::M::default(); cells], r: vec![A::M::default(); cells], u: vec![0; words(n)], x: vec![0; words(n)], ug: vec![0; words(n)], info: vec![0; k] }
    }

    /// Decode the N LLRs `llrs`: the decided u packed into `u`, the soft
    /// value of each information bit into `soft` when asked.
    pub(super) fn decode<T: Llr>(&mut self, spec: &PolarSpec, llrs: &[T], u: &mut [u64], soft: Option<&mut [f32]>) -> BpResult {
        let (m, n) = (self.m as usize, 1usize << self.m);
        let (iterations, stop) = (self.iterations, self.stop);
        let code = spec.code();
        self.l.fill(A::M::default());
        self.r.fill(A::M::default());
        for (o, &a) in self.l[m * n..].iter_mut().zip(llrs) {
            *o = self.arith.load(a);
        }
        for (o, &k) in self.r[..n].iter_mut().zip(code.kinds()) {
            if k == BitKind::Frozen {
                *o = A::CERTAIN;
            }
        }
        let mut result = BpResult { iterations, check: None };
        for t in 1..=iterations {
            self.iteration();
            if stop == EarlyStop::Never && t < iterations {
                continue;
            }
            self.decide_u(code.kinds());
            let done = match stop {
                EarlyStop::GMatrix => self.g_matrix_holds(),
                EarlyStop::Crc => {
                    spec.info_of_u(&self.u, &mut self.info);
                    spec.check().is_some_and(|c| c.passes(&self.info))
                }
                EarlyStop::Never => false,
            };
            if done || t == iterations {
                result.iterations = t;
                break;
            }
        }
        spec.info_of_u(&self.u, &mut self.info);
        result.check = match spec.check() {
            Some(c) => Some(c.passes(&self.info)),
            None if stop == EarlyStop::GMatrix => Some(self.g_matrix_holds()),
            None => None,
        };
        u.copy_from_slice(&self.u);
        if let Some(soft) = soft {
            // The a-posteriori value of each information bit: of u, or of x
            // for a systematic code.
            let j = if spec.systematic() { m } else { 0 };
            let (l, r) = (&self.l[j * n..(j + 1) * n], &self.r[j * n..(j + 1) * n]);
            for (s, &i) in soft.iter_mut().zip(code.info()) {
                *s = A::soft(l[i as usize], r[i as usize]);
            }
        }
        result
    }

    /// One iteration: the left pass, then the right pass. Both passes update
    /// an element alike: with (p, q) its inputs from the side it writes
    /// towards (L[s+1] going left, R[s] going right) and (r, t) the other
    /// side's, top = F(p, q + t) and bottom = F(p, r) + q.
    fn iteration(&mut self) {
        let (m, n) = (self.m as usize, 1usize << self.m);
        for s in (0..m).rev() {
            let (lo, hi) = self.l.split_at_mut((s + 1) * n);
            stage(self.arith, 1 << s, &mut lo[s * n..], &hi[..n], &self.r[s * n..(s + 1) * n]);
        }
        for s in 0..m {
            let (lo, hi) = self.r.split_at_mut((s + 1) * n);
            stage(self.arith, 1 << s, &mut hi[..n], &lo[s * n..], &self.l[(s + 1) * n..(s + 2) * n]);
        }
    }

    /// û from L[0] + R[0], frozen bits 0.
    fn decide_u(&mut self, kinds: &[BitKind]) {
        let n = 1usize << self.m;
        pack_decisions::<A>(&self.l[..n], &self.r[..n], Some(kinds), &mut self.u);
    }

    /// Whether û·G = x̂.
    fn g_matrix_holds(&mut self) -> bool {
        let (m, n) = (self.m as usize, 1usize << self.m);
        pack_decisions::<A>(&self.l[m * n..], &self.r[m * n..], None, &mut self.x);
        self.ug.copy_from_slice(&self.u);
        polar_transform(&mut self.ug, n);
        self.ug == self.x
    }
}

/// One stage of span `h` in one direction: every element's two outputs
/// into `dst` from its inputs `src` (the side it reads along the pass) and
/// `other` (the messages of the opposite direction): top = F(p, q + t),
/// bottom = F(p, r) + q with (p, q) from `src` and (r, t) from `other`.
#[inline(always)]
fn stage<A: Arith>(ar: A, h: usize, dst: &mut [A::M], src: &[A::M], other: &[A::M]) {
    for ((o, i), x) in dst.chunks_exact_mut(2 * h).zip(src.chunks_exact(2 * h)).zip(other.chunks_exact(2 * h)) {
        let (top, bottom) = o.split_at_mut(h);
        let (p, q) = i.split_at(h);
        let (r, t) = x.split_at(h);
        for k in 0..h {
            top[k] = ar.scaled(p[k], A::add(q[k], t[k]));
            bottom[k] = A::add(ar.scaled(p[k], r[k]), q[k]);
        }
    }
}

/// The hard decisions of l + r, packed; 0 where `kinds` says frozen.
fn pack_decisions<A: Arith>(l: &[A::M], r: &[A::M], kinds: Option<&[BitKind]>, out: &mut [u64]) {
    for (w, (l, r)) in out.iter_mut().zip(l.chunks(64).zip(r.chunks(64))) {
        *w = 0;
        for (i, (&a, &b)) in l.iter().zip(r).enumerate() {
            *w |= u64::from(A::negative(a, b)) << i;
        }
    }
    if let Some(kinds) = kinds {
        for (i, k) in kinds.iter().enumerate() {
            if *k == BitKind::Frozen {
                out[i / 64] &= !(1 << (i % 64));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `i8` element functions by hand, as the module documentation states them.
    #[test]
    fn the_i8_model_by_hand() {
        let a = I8Arith { f32_in: super::super::i8_model_f32_quantizer() };
        assert_eq!(a.scaled(100, -30), -28); // m = 30: 30 − (38 >> 4) = 28, signs differ
        assert_eq!(a.scaled(-8, -100), 7); // m = 8: 8 − 1, a half rounded towards 0
        assert_eq!(a.scaled(7, 9), 7); // m < 8 stays
        assert_eq!(a.scaled(-128, 127), -119); // |−128| counts as 127: 127 − 8
        assert_eq!(a.scaled(0, -5), 0);
        assert_eq!(a.scaled(24, 24), 22);
        assert_eq!(I8Arith::add(100, 100), 127);
        assert_eq!(I8Arith::add(-100, -100), -128);
        assert!(I8Arith::negative(-128, 127) && !I8Arith::negative(-5, 5));
        // Every pair: never −128 out of F, always within one of 15/16 of the min.
        for p in i8::MIN..=i8::MAX {
            for q in [i8::MIN, -77, -1, 0, 1, 8, 77, i8::MAX] {
                let v = a.scaled(p, q);
                let m = f32::from(p.unsigned_abs().min(127).min(q.unsigned_abs().min(127)));
                assert!(v != i8::MIN && (f32::from(v.unsigned_abs()) - m * 15.0 / 16.0).abs() <= 0.5, "{p} {q} {v}");
            }
        }
    }
}
