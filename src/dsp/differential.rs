//! Differential coding of BPSK: the sent bit is the change between
//! consecutive symbols, so a carrier loop's 180° ambiguity does no harm.

/// Differential precoding: d_k = b_k ⊕ d_{k−1}, starting from d = 0.
///
/// ```
/// let mut enc = gpufec::dsp::DifferentialEncoder::default();
/// let mut bits = vec![1, 0, 1, 1];
/// enc.process(&mut bits);
/// assert_eq!(bits, vec![1, 1, 0, 1]);
/// ```
#[derive(Debug, Default, Clone)]
pub struct DifferentialEncoder {
    last: u8,
}

impl DifferentialEncoder {
    /// Precodes `bits` (0 or 1) in place.
    pub fn process(&mut self, bits: &mut [u8]) {
        for b in bits {
            self.last ^= *b & 1;
            *b = self.last;
        }
    }
}

/// Differential decoding of hard bits: b_k = d_k ⊕ d_{k−1}, starting from
/// d = 0: what undoes [`DifferentialEncoder`], and what a chain whose
/// sender precodes before its convolutional encoder (CCSDS concatenated
/// downlinks such as BY70-1's) applies after the Viterbi decoder. A 180°
/// carrier ambiguity inverts every d and leaves every b as it was.
///
/// ```
/// let mut dec = gpufec::dsp::DifferentialDecoder::default();
/// let mut bits = vec![1, 1, 0, 1];
/// dec.process(&mut bits);
/// assert_eq!(bits, vec![1, 0, 1, 1]);
/// ```
#[derive(Debug, Default, Clone)]
pub struct DifferentialDecoder {
    last: u8,
}

impl DifferentialDecoder {
    /// Decodes `bits` (0 or 1) in place.
    pub fn process(&mut self, bits: &mut [u8]) {
        for b in bits {
            let here = *b & 1;
            *b = here ^ self.last;
            self.last = here;
        }
    }
}

/// The LLR of a ⊕ b from the LLRs of a and b, exactly:
/// sign(a)·sign(b)·min(|a|, |b|) + ln(1 + e^−|a+b|) − ln(1 + e^−|a−b|).
///
/// ```
/// let l = gpufec::dsp::boxplus(3.0, -2.0);
/// assert!(l < -1.5 && l > -2.0);
/// ```
pub fn boxplus(a: f32, b: f32) -> f32 {
    let min = a.abs().min(b.abs());
    let sign = if (a < 0.0) != (b < 0.0) { -1.0 } else { 1.0 };
    sign * min + (-(a + b).abs()).exp().ln_1p() - (-(a - b).abs()).exp().ln_1p()
}

/// Differential decoding on soft values: the LLR of b_k = d_k ⊕ d_{k−1} is
/// [`boxplus`] of the two symbols' LLRs (the exact form, not the min-sum
/// approximation). The symbol before the stream is unknown: the first
/// output is 0 (an erasure).
///
/// ```
/// let mut dec = gpufec::dsp::SoftDifferentialDecoder::default();
/// let mut llrs = vec![-5.0, -5.0, 5.0];
/// dec.process(&mut llrs);
/// assert_eq!(llrs[0], 0.0);
/// assert!(llrs[1] > 4.0 && llrs[2] < -4.0);
/// ```
#[derive(Debug, Default, Clone)]
pub struct SoftDifferentialDecoder {
    last: f32,
}

impl SoftDifferentialDecoder {
    /// Decodes `llrs` in place.
    pub fn process(&mut self, llrs: &mut [f32]) {
        for l in llrs {
            let here = *l;
            *l = boxplus(here, self.last);
            self.last = here;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hard_decoding_undoes_precoding_and_ignores_inversion() {
        let bits: Vec<u8> = (0..200u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 7 & 1) as u8).collect();
        let mut sent = bits.clone();
        DifferentialEncoder::default().process(&mut sent);
        let mut back = sent.clone();
        DifferentialDecoder::default().process(&mut back);
        assert_eq!(back, bits);
        // Every symbol inverted: only the first bit differs.
        let mut inverted: Vec<u8> = sent.iter().map(|b| b ^ 1).collect();
        DifferentialDecoder::default().process(&mut inverted);
        assert_eq!(inverted[1..], bits[1..]);
        assert_ne!(inverted[0], bits[0]);
    }

    #[test]
    fn boxplus_is_the_exact_xor_llr() {
        for (a, b) in [(0.5f32, 1.5f32), (-2.0, 0.3), (4.0, -7.0), (0.0, 3.0)] {
            let (pa, pb) = (1.0 / (1.0 + (-a).exp()), 1.0 / (1.0 + (-b).exp()));
            let p0 = pa * pb + (1.0 - pa) * (1.0 - pb);
            let want = (p0 / (1.0 - p0)).ln();
            assert!((boxplus(a, b) - want).abs() < 1e-4, "{a} ⊞ {b}");
        }
    }

    #[test]
    fn hard_decisions_undo_the_precoding_whatever_the_polarity() {
        let bits: Vec<u8> = (0..100).map(|i| ((i * 7 + i / 3) % 2) as u8).collect();
        let mut sent = bits.clone();
        DifferentialEncoder::default().process(&mut sent);
        for polarity in [1.0f32, -1.0] {
            let mut llrs: Vec<f32> = sent.iter().map(|&d| polarity * (1.0 - 2.0 * d as f32) * 4.0).collect();
            SoftDifferentialDecoder::default().process(&mut llrs);
            let got: Vec<u8> = llrs[1..].iter().map(|&l| (l < 0.0) as u8).collect();
            assert_eq!(got, bits[1..]);
        }
    }
}
