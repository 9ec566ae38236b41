//! Convolutional code definition (constraint length, generators) and its
//! trellis tables, built once and shared by the encoder, the CPU decoders and
//! the GPU launcher.
//!
//! Shift-register convention: the register holds `K` bits, the current input in
//! bit `K-1` and the input of `d` steps ago in bit `K-1-d`. A generator's most
//! significant octal digit therefore taps the current input, as in the usual
//! octal notation (171/133 for the K=7 NASA/DVB/802.11 code). The state is the
//! `K-1` previous inputs, the most recent in bit `K-2`; the next state after
//! input `u` from state `s` is `(u << (K-2)) | (s >> 1)`.

use crate::codes::error::{CodeResult, invalid};
use crate::codes::octal::{format_octal, parse_octal};

/// Smallest supported constraint length.
pub const MIN_K: u32 = 3;
/// Largest supported constraint length.
pub const MAX_K: u32 = 9;
/// Largest supported number of outputs per input bit (rate 1/n).
pub const MAX_N: usize = 4;

/// A rate-1/n feed-forward convolutional code.
///
/// # Example
/// ```
/// use gpufec::codes::conv::ConvCode;
/// let code = ConvCode::from_octal(7, &["171", "133"]).unwrap();
/// assert_eq!(code.n(), 2);
/// assert_eq!(code.states(), 64);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConvCode {
    k: u32,
    polys: Vec<u32>,
    /// Bit i set: output i is sent inverted (CCSDS inverts its second).
    inverted: u8,
}

impl ConvCode {
    /// The K=7, rate 1/2 code with generators 171 and 133 (octal).
    pub fn k7_171_133() -> Self {
        Self { k: 7, polys: vec![0o171, 0o133], inverted: 0 }
    }

    /// The K=7 code of `n` outputs the standards use: (171, 133) for n = 2
    /// (NASA, DVB-S, IEEE 802.11), (133, 171, 165) for n = 3 (3GPP TS 36.212,
    /// 5.1.3.1), (133, 171, 145, 133) for n = 4 (DAB, ETSI EN 300 401, 11.1.1).
    ///
    /// # Example
    /// ```
    /// use gpufec::codes::conv::ConvCode;
    /// assert_eq!(ConvCode::k7_standard(3).unwrap().polys_octal(), "133,171,165");
    /// assert!(ConvCode::k7_standard(5).is_none());
    /// ```
    pub fn k7_standard(n: usize) -> Option<Self> {
        let polys = match n {
            2 => return Some(Self::k7_171_133()),
            3 => vec![0o133, 0o171, 0o165],
            4 => vec![0o133, 0o171, 0o145, 0o133],
            _ => return None,
        };
        Some(Self { k: 7, polys, inverted: 0 })
    }

    /// Build a code from its constraint length and generator polynomials.
    ///
    /// Rejects K outside 3..=9, n outside 2..=4, generators with taps beyond K,
    /// codes where no generator taps the current or the oldest bit, and
    /// catastrophic codes (generators with a common factor).
    pub fn new(k: u32, polys: &[u32]) -> CodeResult<Self> {
        if !(MIN_K..=MAX_K).contains(&k) {
            return Err(invalid!("constraint length K={k} is outside {MIN_K}..={MAX_K}"));
        }
        if !(2..=MAX_N).contains(&polys.len()) {
            return Err(invalid!(
                "{} generator polynomials given; rate 1/n needs n in 2..={MAX_N}",
                polys.len()
            ));
        }
        for &p in polys {
            if p == 0 {
                return Err(invalid!("generator polynomial 0 taps nothing"));
            }
            if p >= 1 << k {
                return Err(invalid!(
                    "generator polynomial {p:o} (octal) has taps beyond constraint length K={k}"
                ));
            }
        }
        if polys.iter().all(|p| p & (1 << (k - 1)) == 0) {
            return Err(invalid!(
                "no generator taps the current input bit (octal {}) for K={k}",
                format_octal(&[1 << (k - 1)])
            ));
        }
        if polys.iter().all(|p| p & 1 == 0) {
            return Err(invalid!(
                "no generator taps the oldest bit: the code's constraint length is below K={k}"
            ));
        }
        let common = polys.iter().fold(0u32, |g, &p| gf2_gcd(g, p));
        if common != 1 {
            return Err(invalid!(
                "generators {} share the factor {common:b} (binary): the code is catastrophic",
                format_octal(polys)
            ));
        }
        Ok(Self { k, polys: polys.to_vec(), inverted: 0 })
    }

    /// Build a code from generators written in octal (`["171", "133"]`).
    pub fn from_octal<S: AsRef<str>>(k: u32, polys: &[S]) -> CodeResult<Self> {
        let parsed = polys
            .iter()
            .map(|s| parse_octal(s.as_ref()))
            .collect::<CodeResult<Vec<u32>>>()?;
        Self::new(k, &parsed)
    }

    /// The code with the outputs of `mask` (bit i: output i) sent inverted,
    /// as CCSDS 131.0-B sends its second (`0b10`). The trellis labels carry
    /// the inversion, so every encoder and decoder of the code sees it.
    ///
    /// # Example
    /// ```
    /// use gpufec::codes::conv::{ConvCode, Trellis};
    /// let ccsds = ConvCode::k7_171_133().with_inverted(0b10).unwrap();
    /// assert_eq!(Trellis::new(&ccsds).output(0, 0), 0b10);
    /// assert!(ConvCode::k7_171_133().with_inverted(0b100).is_err());
    /// ```
    pub fn with_inverted(mut self, mask: u8) -> CodeResult<Self> {
        if u32::from(mask) >> self.n() != 0 {
            return Err(invalid!("inverted outputs {mask:b} (binary) name an output beyond the code's {}", self.n()));
        }
        self.inverted = mask;
        Ok(self)
    }

    /// The code with its outputs sent in the reverse order, the inversions
    /// moving with their outputs: the NASA-DSN order of the rate-1/2 CCSDS
    /// code (133 first, then 171).
    ///
    /// # Example
    /// ```
    /// use gpufec::codes::conv::ConvCode;
    /// let dsn = ConvCode::k7_171_133().with_inverted(0b10).unwrap().reversed();
    /// assert_eq!((dsn.polys_octal(), dsn.inverted()), ("133,171".to_string(), 0b01));
    /// ```
    pub fn reversed(mut self) -> Self {
        let n = self.n();
        self.polys.reverse();
        self.inverted = (0..n).filter(|i| self.inverted >> i & 1 == 1).fold(0, |m, i| m | 1 << (n - 1 - i));
        self
    }

    /// The outputs sent inverted, bit i for output i.
    pub fn inverted(&self) -> u8 {
        self.inverted
    }

    /// Constraint length K.
    pub fn k(&self) -> u32 {
        self.k
    }

    /// Outputs per input bit (the n of rate 1/n).
    pub fn n(&self) -> usize {
        self.polys.len()
    }

    /// Generator polynomials, bit `K-1` tapping the current input.
    pub fn polys(&self) -> &[u32] {
        &self.polys
    }

    /// Number of trellis states, 2^(K-1).
    pub fn states(&self) -> usize {
        1 << (self.k - 1)
    }

    /// Generators as comma-separated octal, e.g. `171,133`.
    pub fn polys_octal(&self) -> String {
        format_octal(&self.polys)
    }
}

/// Greatest common divisor of two polynomials over GF(2), bit i = coefficient of x^i.
fn gf2_gcd(mut a: u32, mut b: u32) -> u32 {
    while b != 0 {
        let mut r = a;
        let db = 31 - b.leading_zeros();
        while r != 0 && 31 - r.leading_zeros() >= db {
            r ^= b << (31 - r.leading_zeros() - db);
        }
        a = b;
        b = r;
    }
    a
}

/// Trellis tables of a [`ConvCode`].
///
/// `output(s, u)` is the n-bit branch label leaving state `s` on input `u`
/// (bit `i` = output of generator `i`, inverted where the code inverts it). New state `j` is entered from the two
/// predecessors `pred_base(j)` and `pred_base(j) | 1`, on input `j >> (K-2)`.
#[derive(Debug, Clone)]
pub struct Trellis {
    code: ConvCode,
    outputs: Vec<u8>,
}

impl Trellis {
    /// Build the tables of `code`.
    pub fn new(code: &ConvCode) -> Self {
        let s = code.states();
        let mut outputs = vec![0u8; 2 * s];
        for state in 0..s as u32 {
            for u in 0..2u32 {
                let reg = (u << (code.k - 1)) | state;
                let mut sym = 0u8;
                for (i, &p) in code.polys.iter().enumerate() {
                    sym |= (((reg & p).count_ones() & 1) as u8) << i;
                }
                outputs[(state as usize) * 2 + u as usize] = sym ^ code.inverted;
            }
        }
        Self { code: code.clone(), outputs }
    }

    /// The code the tables belong to.
    pub fn code(&self) -> &ConvCode {
        &self.code
    }

    /// Constraint length K.
    pub fn k(&self) -> u32 {
        self.code.k
    }

    /// Outputs per stage.
    pub fn n(&self) -> usize {
        self.code.n()
    }

    /// Number of states.
    pub fn states(&self) -> usize {
        self.code.states()
    }

    /// Branch label leaving `state` on input `u`.
    #[inline(always)]
    pub fn output(&self, state: usize, u: usize) -> u8 {
        self.outputs[state * 2 + u]
    }

    /// All branch labels, indexed `state * 2 + input` (the GPU launcher uploads these).
    pub fn outputs(&self) -> &[u8] {
        &self.outputs
    }

    /// State after `state` on input `u`.
    #[inline(always)]
    pub fn next_state(&self, state: usize, u: usize) -> usize {
        (u << (self.code.k - 2)) | (state >> 1)
    }

    /// Even predecessor of new state `j` (the odd one is this `| 1`).
    #[inline(always)]
    pub fn pred_base(&self, j: usize) -> usize {
        (j << 1) & (self.states() - 1)
    }

    /// Input bit that leads into state `j`.
    #[inline(always)]
    pub fn input_of(&self, j: usize) -> u8 {
        (j >> (self.code.k - 2)) as u8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_bad_codes() {
        assert!(ConvCode::new(2, &[3, 1]).is_err());
        assert!(ConvCode::new(10, &[0o1777, 0o1001]).is_err());
        assert!(ConvCode::new(7, &[0o171]).is_err());
        assert!(ConvCode::new(7, &[0o171, 0o133, 0o165, 0o117, 0o127]).is_err());
        assert!(ConvCode::new(7, &[0o371, 0o133]).is_err());
        assert!(ConvCode::new(7, &[0, 0o133]).is_err());
        // x^2+1 = (x+1)^2 and x+1 share x+1: catastrophic.
        let e = ConvCode::new(3, &[0b101, 0b110]).unwrap_err().to_string();
        assert!(e.contains("catastrophic"), "{e}");
        assert!(ConvCode::from_octal(7, &["171", "19"]).is_err());
        assert!(ConvCode::from_octal(7, &["171", ""]).is_err());
    }

    #[test]
    fn accepts_standard_codes() {
        for (k, p) in [(3, vec![7u32, 5]), (5, vec![0o23, 0o35]), (7, vec![0o171, 0o133]),
                       (9, vec![0o561, 0o753]), (7, vec![0o133, 0o171, 0o165])] {
            let c = ConvCode::new(k, &p).unwrap();
            assert_eq!(c.states(), 1 << (k - 1));
        }
        assert_eq!(ConvCode::from_octal(7, &["171", "0o133"]).unwrap(), ConvCode::k7_171_133());
    }

    #[test]
    fn trellis_is_consistent() {
        let t = Trellis::new(&ConvCode::k7_171_133());
        for j in 0..t.states() {
            for d in 0..2 {
                let p = t.pred_base(j) | d;
                assert_eq!(t.next_state(p, t.input_of(j) as usize), j);
            }
        }
        // Both generators tap the current input: the two branches out of a state
        // have complementary labels.
        for s in 0..t.states() {
            assert_eq!(t.output(s, 0) ^ t.output(s, 1), 0b11);
        }
    }
}
