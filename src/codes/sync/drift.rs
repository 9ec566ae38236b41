//! The drift of the BSID channel as a Markov chain, and the state-space
//! limits the decoder sums over.
//!
//! Each input bit changes the drift by k (k insertions, then a transmission)
//! or k − 1 (k insertions, then a deletion): P(Δ = −1) = Pd and
//! P(Δ = k) = Pi^k·Pt + Pi^(k+1)·Pd for k ≥ 0. The drift after T bits is the
//! T-fold convolution of that law, computed here by repeated squaring;
//! the limits for T bits are the narrowest window [m⁻, m⁺] around 0 that
//! holds all but the exclusion probability of it. With T = τ = nN they are
//! the limits of the forward and backward metrics (m_τ±), with T = n those
//! of a codeword's drift change (m_n±).

use super::channel::BsidParams;
use crate::codes::error::{CodeResult, invalid};

/// Most states M_τ = m_τ⁺ − m_τ⁻ + 1 a decoder takes (the GPU's α and β
/// kernels hold a state per thread).
pub const MAX_STATES: usize = 2048;

/// Most drift changes M_n = m_n⁺ − m_n⁻ + 1 across one codeword (the width
/// of the lattice corridor).
pub const MAX_CORRIDOR: usize = 256;

/// Per-bit drift changes beyond this many insertions carry less than
/// Pi^64 ≤ 2^-64 of probability; what they carry is counted as excluded.
const MAX_STEP: usize = 64;

/// A window of drifts [lo, hi], lo ≤ 0 ≤ hi.
///
/// # Example
/// ```
/// use gpufec::codes::sync::{BsidParams, DriftLimits};
/// let p = BsidParams::new(1e-2, 1e-2, 0.0).unwrap();
/// let w = DriftLimits::for_bits(&p, 1000, 1e-10).unwrap();
/// assert!(w.lo < 0 && w.hi > 0 && w.states() < 100);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DriftLimits {
    /// The lowest drift considered (m⁻ ≤ 0).
    pub lo: i32,
    /// The highest drift considered (m⁺ ≥ 0).
    pub hi: i32,
}

impl DriftLimits {
    /// Drifts in the window: m⁺ − m⁻ + 1.
    pub fn states(&self) -> usize {
        (self.hi - self.lo + 1) as usize
    }

    /// Whether `m` lies in the window.
    pub fn contains(&self, m: i64) -> bool {
        (i64::from(self.lo)..=i64::from(self.hi)).contains(&m)
    }

    /// The narrowest window around 0 holding all but `exclusion` of the
    /// drift's probability after `bits` bits (ties: the one leaving out
    /// least). `exclusion` must be in (0, 1); windows wider than
    /// [`MAX_STATES`] are refused.
    pub fn for_bits(params: &BsidParams, bits: usize, exclusion: f64) -> CodeResult<Self> {
        check_exclusion(exclusion)?;
        let law = Law::after(params, bits, exclusion)?;
        law.window(exclusion)
    }
}

fn check_exclusion(exclusion: f64) -> CodeResult<()> {
    if !(exclusion > 0.0 && exclusion < 1.0) {
        return Err(invalid!("exclusion probability {exclusion} is outside (0, 1): the state space would be unbounded or empty"));
    }
    Ok(())
}

/// The state-space limits of a frame: m_τ± for the forward and backward
/// metrics, m_n± for the drift change across one codeword, and the
/// exclusion probability they came from.
///
/// # Example
/// ```
/// use gpufec::codes::sync::{BsidParams, StateLimits};
/// let p = BsidParams::new(1e-3, 1e-3, 0.0).unwrap();
/// let l = StateLimits::new(&p, 10, 210, 1e-10).unwrap();
/// assert!(l.frame.lo <= l.codeword.lo && l.codeword.hi <= l.frame.hi);
/// println!("{}", l.describe());
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StateLimits {
    /// m_τ⁻, m_τ⁺: drifts of the frame (α, β).
    pub frame: DriftLimits,
    /// m_n⁻, m_n⁺: drift changes across one codeword (γ).
    pub codeword: DriftLimits,
    /// The probability each window leaves out at most.
    pub exclusion: f64,
}

impl StateLimits {
    /// Limits for frames of `symbols` codewords of `n` bits over `params`,
    /// leaving out at most `exclusion`. m_τ⁻ is kept above −τ so that a
    /// frame consumes at least one received bit, and the frame's window is
    /// widened to hold the codeword's, as the decoder needs.
    pub fn new(params: &BsidParams, n: usize, symbols: usize, exclusion: f64) -> CodeResult<Self> {
        let tau = n * symbols;
        let codeword = DriftLimits::for_bits(params, n, exclusion)?;
        let mut frame = DriftLimits::for_bits(params, tau, exclusion)?;
        frame.lo = frame.lo.min(codeword.lo).max(1 - tau as i32);
        frame.hi = frame.hi.max(codeword.hi);
        if frame.states() > MAX_STATES {
            return Err(invalid!(
                "{} drift states for frames of {tau} bits at {} (exclusion {exclusion:e}) exceed {MAX_STATES}: shorten the frame",
                frame.states(),
                params.describe()
            ));
        }
        if codeword.states() > MAX_CORRIDOR {
            return Err(invalid!("a corridor of {} drifts per codeword of {n} bits exceeds {MAX_CORRIDOR}", codeword.states()));
        }
        Ok(Self { frame, codeword, exclusion })
    }

    /// `m_tau=[lo, hi] m_n=[lo, hi] (Pr=…)`.
    pub fn describe(&self) -> String {
        format!(
            "m_tau=[{}, {}] m_n=[{}, {}] (exclusion {:e})",
            self.frame.lo, self.frame.hi, self.codeword.lo, self.codeword.hi, self.exclusion
        )
    }
}

/// A drift law over [lo, lo + p.len()), with the probability already left
/// out below and above it.
#[derive(Debug, Clone)]
struct Law {
    lo: i64,
    p: Vec<f64>,
    out_lo: f64,
    out_hi: f64,
}

impl Law {
    /// The drift change of one bit.
    fn one_bit(params: &BsidParams) -> Self {
        let (pi, pd, pt) = (params.pi(), params.pd(), params.pt());
        let mut p = vec![pd];
        let mut power = 1.0;
        for _ in 0..=MAX_STEP {
            p.push(power * pt + power * pi * pd);
            power *= pi;
        }
        // What lies beyond MAX_STEP insertions: Pi^(MAX_STEP+1)·(1 − Pd).
        Self { lo: -1, p, out_lo: 0.0, out_hi: power * (1.0 - pd) }
    }

    /// The drift after `bits` bits, tails below `exclusion`·1e-6 in all
    /// trimmed off (and counted as left out).
    fn after(params: &BsidParams, bits: usize, exclusion: f64) -> CodeResult<Self> {
        let steps = 2 * (usize::BITS - bits.leading_zeros()) as usize + 1;
        let trim = exclusion * 1e-6 / (2 * steps) as f64;
        let mut power = Self::one_bit(params);
        power.trim(trim);
        let mut result = Self { lo: 0, p: vec![1.0], out_lo: 0.0, out_hi: 0.0 };
        let mut rest = bits;
        while rest > 0 {
            if rest & 1 == 1 {
                result = result.convolve(&power);
                result.trim(trim);
            }
            rest >>= 1;
            if rest > 0 {
                power = power.convolve(&power);
                power.trim(trim);
            }
            // A law far wider than any window we could accept: stop early.
            if result.p.len().max(power.p.len()) > 4 * MAX_STATES {
                return Err(invalid!(
                    "the drift after {bits} bits at {} spreads over more than {MAX_STATES} states: shorten the frame",
                    params.describe()
                ));
            }
        }
        Ok(result)
    }

    fn convolve(&self, other: &Self) -> Self {
        let mut p = vec![0.0; self.p.len() + other.p.len() - 1];
        for (i, &a) in self.p.iter().enumerate() {
            for (j, &b) in other.p.iter().enumerate() {
                p[i + j] += a * b;
            }
        }
        // Mass left out of either factor stays out (bounded by its total).
        let out_lo = self.out_lo + other.out_lo;
        let out_hi = self.out_hi + other.out_hi;
        Self { lo: self.lo + other.lo, p, out_lo, out_hi }
    }

    /// Drop tails carrying less than `eps` on each side.
    fn trim(&mut self, eps: f64) {
        let mut head = 0;
        let mut cut = 0.0;
        while head + 1 < self.p.len() && cut + self.p[head] < eps {
            cut += self.p[head];
            head += 1;
        }
        self.out_lo += cut;
        let mut tail = self.p.len();
        let mut cut = 0.0;
        while tail > head + 1 && cut + self.p[tail - 1] < eps {
            cut += self.p[tail - 1];
            tail -= 1;
        }
        self.out_hi += cut;
        self.p.truncate(tail);
        self.p.drain(..head);
        self.lo += head as i64;
    }

    /// The narrowest window holding 0 that leaves out at most `exclusion`.
    fn window(&self, exclusion: f64) -> CodeResult<DriftLimits> {
        // Extend the support to hold 0, then tail sums from each end (small
        // numbers summed from the small end, exactly as far as f64 goes).
        let lo = self.lo.min(0);
        let hi = (self.lo + self.p.len() as i64 - 1).max(0);
        let len = (hi - lo + 1) as usize;
        let at = |m: i64| -> f64 {
            let j = m - self.lo;
            if j >= 0 && (j as usize) < self.p.len() { self.p[j as usize] } else { 0.0 }
        };
        // below[j]: left out when the window starts at lo + j.
        let mut below = vec![self.out_lo; len];
        for j in 1..len {
            below[j] = below[j - 1] + at(lo + j as i64 - 1);
        }
        // above[j]: left out when the window ends at lo + j.
        let mut above = vec![self.out_hi; len];
        for j in (0..len - 1).rev() {
            above[j] = above[j + 1] + at(lo + j as i64 + 1);
        }
        let zero = (-lo) as usize;
        let mut best: Option<(usize, f64, usize, usize)> = None;
        // A later start leaves out more below, so its end can only be later.
        let mut end = zero;
        for (start, &cut_below) in below.iter().enumerate().take(zero + 1) {
            while end < len && cut_below + above[end] > exclusion {
                end += 1;
            }
            if end == len {
                break;
            }
            let (width, left_out) = (end - start, cut_below + above[end]);
            if best.is_none_or(|(w, o, _, _)| width < w || (width == w && left_out < o)) {
                best = Some((width, left_out, start, end));
            }
        }
        let (_, _, start, end) = best.ok_or_else(|| invalid!("no drift window leaves out at most {exclusion:e}"))?;
        Ok(DriftLimits { lo: (lo + start as i64) as i32, hi: (lo + end as i64) as i32 })
    }
}

/// The probability of each drift after `bits` bits over [lo, lo + len)
/// (`lo` returned), as [`StateLimits`] uses it: for tests and studies.
pub fn drift_law(params: &BsidParams, bits: usize) -> CodeResult<(i64, Vec<f64>)> {
    let law = Law::after(params, bits, 1e-15)?;
    Ok((law.lo, law.p))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The law after a few bits, by brute force over every event sequence.
    #[test]
    fn the_law_of_two_bits_is_the_convolution_of_one_bit_laws() {
        let p = BsidParams::new(0.1, 0.2, 0.0).unwrap();
        let (lo, law) = drift_law(&p, 2).unwrap();
        assert_eq!(lo, -2);
        let (pi, pd, pt) = (0.1, 0.2, 0.7);
        // Δ per bit: -1 w.p. Pd, 0 w.p. Pt + Pi·Pd, 1 w.p. Pi·Pt + Pi²·Pd.
        let one = [pd, pt + pi * pd, pi * pt + pi * pi * pd];
        assert!((law[0] - one[0] * one[0]).abs() < 1e-15);
        assert!((law[1] - 2.0 * one[0] * one[1]).abs() < 1e-15);
        assert!((law[2] - (one[1] * one[1] + 2.0 * one[0] * one[2])).abs() < 1e-15);
        assert!((law.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn windows_leave_out_at_most_the_exclusion_and_are_the_narrowest() {
        let p = BsidParams::new(0.01, 0.01, 0.0).unwrap();
        let (lo, law) = drift_law(&p, 2000).unwrap();
        for ex in [1e-3, 1e-6, 1e-10] {
            let w = DriftLimits::for_bits(&p, 2000, ex).unwrap();
            let inside = |a: i64, b: i64| (a..=b).map(|m| law.get((m - lo) as usize).copied().unwrap_or(0.0)).sum::<f64>();
            let outside = 1.0 - inside(w.lo.into(), w.hi.into());
            assert!(outside <= ex * 1.0001, "{ex}: {outside}");
            // One state narrower on either side leaves out too much.
            let narrower = (1.0 - inside((w.lo + 1).into(), w.hi.into())).min(1.0 - inside(w.lo.into(), (w.hi - 1).into()));
            assert!(narrower > ex * 0.9999, "{ex}: {narrower}");
        }
        // Smaller exclusions give wider windows.
        let a = DriftLimits::for_bits(&p, 2000, 1e-6).unwrap();
        let b = DriftLimits::for_bits(&p, 2000, 1e-12).unwrap();
        assert!(b.lo < a.lo && b.hi > a.hi);
    }

    #[test]
    fn bad_exclusions_and_huge_state_spaces_are_refused() {
        let p = BsidParams::new(0.01, 0.01, 0.0).unwrap();
        for ex in [0.0, 1.0, -1e-3, f64::NAN] {
            assert!(matches!(StateLimits::new(&p, 8, 100, ex), Err(crate::codes::CodeError::InvalidParameter(_))), "{ex}");
        }
        let poor = BsidParams::new(0.3, 0.3, 0.0).unwrap();
        let e = StateLimits::new(&poor, 16, 60_000, 1e-10).unwrap_err();
        assert!(e.to_string().contains("shorten the frame"), "{e}");
    }
}
