//! The constituent code of a turbo code: a recursive systematic
//! convolutional (RSC) code of memory 2..=4, and its trellis, which the
//! encoder, the CPU decoders and the GPU launcher all read.

use crate::codes::octal::parse_octal;
use crate::codes::error::{CodeResult, invalid};

/// Smallest memory of a constituent code.
pub const MIN_MEMORY: usize = 2;
/// Largest memory of a constituent code (16 states).
pub const MAX_MEMORY: usize = 4;

/// A rate-1/2 recursive systematic convolutional code, given by its feedback
/// and feedforward polynomials in octal with the most significant bit the
/// coefficient of D⁰, as 3GPP writes them: LTE's g₀ = 13 is 1 + D² + D³, its
/// g₁ = 15 is 1 + D + D³.
///
/// # Example
/// ```
/// use gpufec::codes::turbo::Rsc;
/// let lte = Rsc::lte();
/// assert_eq!((lte.memory(), lte.states()), (3, 8));
/// assert_eq!(Rsc::from_octal("13", "15").unwrap(), lte);
/// assert!(Rsc::from_octal("3", "15").is_err()); // memories differ
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rsc {
    memory: usize,
    feedback: u32,
    feedforward: u32,
}

impl Rsc {
    /// The constituent code of 3GPP TS 36.212: feedback 13, feedforward 15.
    pub fn lte() -> Self {
        Self { memory: 3, feedback: 0o13, feedforward: 0o15 }
    }

    /// The code of the two polynomials (octal text). Both must have the same
    /// degree m (2..=4), and the feedback polynomial a D⁰ term and a Dᵐ term
    /// (otherwise the register is not recursive of memory m).
    pub fn from_octal(feedback: &str, feedforward: &str) -> CodeResult<Self> {
        let (fb, ff) = (parse_octal(feedback)?, parse_octal(feedforward)?);
        let degree = |p: u32| 31 - p.leading_zeros().min(31) as usize;
        let memory = degree(fb);
        if !(MIN_MEMORY..=MAX_MEMORY).contains(&memory) {
            return Err(invalid!(
                "feedback polynomial {feedback}: memory {memory}; a constituent code has memory {MIN_MEMORY}..={MAX_MEMORY} (4 to 16 states)"
            ));
        }
        if ff == 0 || degree(ff) != memory {
            return Err(invalid!("feedforward polynomial {feedforward} must have the feedback polynomial's degree {memory} (octal {feedback})"));
        }
        if fb & 1 == 0 {
            return Err(invalid!("feedback polynomial {feedback} has no D^{memory} term: the register would not be of memory {memory}"));
        }
        Ok(Self { memory, feedback: fb, feedforward: ff })
    }

    /// Memory m: the register's length.
    pub fn memory(&self) -> usize {
        self.memory
    }

    /// 2^m states.
    pub fn states(&self) -> usize {
        1 << self.memory
    }

    /// The polynomials in octal, feedback first.
    pub fn octal(&self) -> (String, String) {
        (format!("{:o}", self.feedback), format!("{:o}", self.feedforward))
    }

    /// Coefficient of Dʲ of polynomial `p` (the most significant of m + 1 bits is D⁰).
    fn tap(&self, p: u32, j: usize) -> u32 {
        (p >> (self.memory - j)) & 1
    }
}

/// Trellis tables of an [`Rsc`] code.
///
/// State bit `i` holds the register cell a_{k−1−i} (bit 0 the newest). On
/// input u the new cell is a = u ⊕ feedback(state), the next state
/// `((state << 1) | a) mod 2^m`, the parity p = ff₀·a ⊕ feedforward(state).
///
/// # Example
/// ```
/// use gpufec::codes::turbo::{Rsc, RscTrellis};
/// let t = RscTrellis::new(&Rsc::lte());
/// assert_eq!(t.next(0, 1), 1);
/// assert_eq!(t.parity(0, 1), 1);
/// // The tail input drives the register to zero in m steps from any state.
/// let mut s = 5;
/// for _ in 0..3 { s = t.next(s, t.tail_input(s)); }
/// assert_eq!(s, 0);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RscTrellis {
    code: Rsc,
    /// `next[2 * state + u]`.
    next: Vec<u8>,
    /// `parity[2 * state + u]`.
    parity: Vec<u8>,
    /// The input that feeds a zero into the register, per state.
    tail: Vec<u8>,
    /// `run8[256 * state + byte]`: eight inputs at once, the first in the
    /// byte's least significant bit; the next state above bit 8, the eight
    /// parity bits below (the first in bit 0).
    run8: Vec<u16>,
}

impl RscTrellis {
    /// The tables of `code`.
    pub fn new(code: &Rsc) -> Self {
        let (m, states) = (code.memory, code.states());
        // Cell a_{k-j} is state bit j-1.
        let mask = |p: u32| (1..=m).fold(0u32, |acc, j| acc | (code.tap(p, j) << (j - 1)));
        let (fb_mask, ff_mask) = (mask(code.feedback), mask(code.feedforward));
        let ff0 = code.tap(code.feedforward, 0);
        let mut next = vec![0u8; 2 * states];
        let mut parity = vec![0u8; 2 * states];
        let mut tail = vec![0u8; states];
        for s in 0..states as u32 {
            let fb = (s & fb_mask).count_ones() & 1;
            tail[s as usize] = fb as u8;
            for u in 0..2u32 {
                let a = u ^ fb;
                next[2 * s as usize + u as usize] = (((s << 1) | a) as usize & (states - 1)) as u8;
                parity[2 * s as usize + u as usize] = ((ff0 & a) ^ ((s & ff_mask).count_ones() & 1)) as u8;
            }
        }
        let run8 = (0..states << 8)
            .map(|i| {
                let (mut s, mut parities) = (i >> 8, 0u16);
                for j in 0..8 {
                    let u = (i >> j) & 1;
                    parities |= u16::from(parity[2 * s + u]) << j;
                    s = next[2 * s + u] as usize;
                }
                (s as u16) << 8 | parities
            })
            .collect();
        Self { code: *code, next, parity, tail, run8 }
    }

    /// The code of the tables.
    pub fn code(&self) -> &Rsc {
        &self.code
    }

    /// Number of states.
    pub fn states(&self) -> usize {
        self.code.states()
    }

    /// Memory m: tail stages per constituent encoder.
    pub fn memory(&self) -> usize {
        self.code.memory
    }

    /// State after `state` on input `u`.
    #[inline(always)]
    pub fn next(&self, state: usize, u: usize) -> usize {
        self.next[2 * state + u] as usize
    }

    /// Parity bit sent leaving `state` on input `u`.
    #[inline(always)]
    pub fn parity(&self, state: usize, u: usize) -> u8 {
        self.parity[2 * state + u]
    }

    /// The input that terminates: it feeds a zero into the register.
    #[inline(always)]
    pub fn tail_input(&self, state: usize) -> usize {
        self.tail[state] as usize
    }

    /// Eight inputs at once from `state`, the first in bit 0 of `byte`:
    /// the state after them and their eight parity bits (the first in bit
    /// 0), by one table look-up, since the register's chain of dependent
    /// steps is what limits an encoder.
    #[inline(always)]
    pub fn step8(&self, state: usize, byte: u8) -> (usize, u8) {
        let step = self.run8[state << 8 | usize::from(byte)];
        (usize::from(step >> 8), step as u8)
    }

    /// The m tail stages that drive `state` to zero: their (input, parity)
    /// pairs, in the first m entries.
    pub fn terminate(&self, mut state: usize) -> [(u8, u8); MAX_MEMORY] {
        let mut tail = [(0, 0); MAX_MEMORY];
        for t in &mut tail[..self.memory()] {
            let u = self.tail_input(state);
            *t = (u as u8, self.parity(state, u));
            state = self.next(state, u);
        }
        debug_assert_eq!(state, 0);
        tail
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The LTE register written the way 36.212's figure draws it: three
    /// delay cells, feedback taps D² and D³, feedforward taps 1, D and D³.
    fn lte_by_hand(bits: &[u8]) -> (Vec<u8>, Vec<(u8, u8)>) {
        let (mut d1, mut d2, mut d3) = (0u8, 0u8, 0u8);
        let mut z = Vec::new();
        for &u in bits {
            let a = u ^ d2 ^ d3;
            z.push(a ^ d1 ^ d3);
            (d3, d2, d1) = (d2, d1, a);
        }
        let mut tail = Vec::new();
        for _ in 0..3 {
            let x = d2 ^ d3;
            let a = 0;
            tail.push((x, a ^ d1 ^ d3));
            (d3, d2, d1) = (d2, d1, a);
        }
        (z, tail)
    }

    #[test]
    fn lte_trellis_is_the_standards_register() {
        let t = RscTrellis::new(&Rsc::lte());
        let bits = crate::codes::turbo::test_bits(500, 7);
        let mut s = 0;
        let z: Vec<u8> = bits
            .iter()
            .map(|&u| {
                let p = t.parity(s, u.into());
                s = t.next(s, u.into());
                p
            })
            .collect();
        let tail = t.terminate(s)[..3].to_vec();
        assert_eq!((z, tail), lte_by_hand(&bits));
    }

    /// The eight-at-a-time table against one step at a time, for every
    /// memory, state and byte; the tail stages against stepping by
    /// `tail_input`.
    #[test]
    fn bytewise_steps_are_single_steps() {
        for (fb, ff) in [("7", "5"), ("13", "15"), ("23", "35"), ("31", "27")] {
            let t = RscTrellis::new(&Rsc::from_octal(fb, ff).unwrap());
            for state in 0..t.states() {
                for byte in 0..=255u8 {
                    let (mut s, mut parity) = (state, 0u8);
                    for j in 0..8 {
                        let u = usize::from(byte >> j & 1);
                        parity |= t.parity(s, u) << j;
                        s = t.next(s, u);
                    }
                    assert_eq!(t.step8(state, byte), (s, parity), "{fb}/{ff} state {state} byte {byte:#04x}");
                }
                let (tail, mut s) = (t.terminate(state), state);
                for &(u, p) in &tail[..t.memory()] {
                    assert_eq!((usize::from(u), p), (t.tail_input(s), t.parity(s, t.tail_input(s))));
                    s = t.next(s, t.tail_input(s));
                }
                assert_eq!(s, 0);
                assert!(tail[t.memory()..].iter().all(|&e| e == (0, 0)));
            }
        }
    }

    #[test]
    fn every_memory_terminates_and_is_a_permutation_per_input() {
        for (fb, ff) in [("7", "5"), ("13", "15"), ("23", "35"), ("31", "27")] {
            let code = Rsc::from_octal(fb, ff).unwrap();
            let t = RscTrellis::new(&code);
            for s in 0..t.states() {
                let mut z = s;
                for _ in 0..t.memory() {
                    z = t.next(z, t.tail_input(z));
                }
                assert_eq!(z, 0, "{fb}/{ff} from state {s}");
                // Recursive: the two inputs leave a state to different states.
                assert_ne!(t.next(s, 0), t.next(s, 1));
            }
            // Each state is entered exactly twice.
            let mut entered = vec![0; t.states()];
            (0..2 * t.states()).for_each(|i| entered[t.next(i / 2, i % 2)] += 1);
            assert!(entered.iter().all(|&n| n == 2), "{fb}/{ff}: {entered:?}");
        }
    }

    #[test]
    fn bad_polynomials_are_refused() {
        for (fb, ff, says) in [("3", "15", "memory 1"), ("7", "15", "degree"), ("1", "1", "memory 0"), ("77", "75", "memory 5"), ("12", "15", "no D^3"), ("13", "0", "degree"), ("13", "19", "octal")] {
            let e = Rsc::from_octal(fb, ff).unwrap_err().to_string();
            assert!(e.contains(says), "{fb}/{ff}: {e}");
        }
    }
}
