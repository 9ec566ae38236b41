//! A streaming FIR filter on complex samples with real taps (futuredsp's
//! kernel, with the history kept between calls), and root-raised-cosine taps.

use super::{MAX_SPS, MAX_TAPS, check_range, check_sps};
use crate::codes::error::{CodeResult, invalid};
use futuredsp::{DecimatingFirFilter, Filter, firdes};
use num_complex::Complex32;

/// Root-raised-cosine taps of unit energy (Σh² ≈ 1) for `sps` samples per
/// symbol, roll-off `alpha` (0.05..=1) and `span` symbols (even `span·sps`,
/// so that the filter is symmetric around one tap); `span·sps + 1` taps.
///
/// A symbol of amplitude a shaped and matched by these taps comes out with
/// amplitude a at its peak.
///
/// ```
/// let h = gpufec::dsp::rrc_taps(4, 0.35, 10).unwrap();
/// assert_eq!(h.len(), 41);
/// let energy: f32 = h.iter().map(|t| t * t).sum();
/// assert!((energy - 1.0).abs() < 0.01);
/// ```
pub fn rrc_taps(sps: usize, alpha: f64, span: usize) -> CodeResult<Vec<f32>> {
    check_sps(sps)?;
    check_range("roll-off", alpha, 0.05..=1.0)?;
    if span == 0 || span * sps + 1 > MAX_TAPS || !(span * sps).is_multiple_of(2) {
        return Err(invalid!(
            "an RRC span of {span} symbols at {sps} samples per symbol must be at least 1, \
             give an even span × sps, and at most {MAX_TAPS} taps"
        ));
    }
    debug_assert!(sps <= MAX_SPS);
    Ok(firdes::root_raised_cosine::<f32>(span, sps, alpha))
}

/// A FIR filter with real taps over a stream of complex samples, keeping
/// every output `decimation`-th sample. Output sample k is
/// Σ_t h[t]·x[k·D + D − 1 − t] of the whole stream (zeros before it starts),
/// whatever the pieces the stream came in.
///
/// ```
/// use gpufec::dsp::{Complex32, Fir};
/// let mut fir = Fir::new(vec![0.5, 0.5], 1).unwrap();
/// let mut out = Vec::new();
/// fir.process(&[Complex32::new(2.0, 0.0), Complex32::new(4.0, 0.0)], &mut out);
/// assert_eq!(out, vec![Complex32::new(1.0, 0.0), Complex32::new(3.0, 0.0)]);
/// ```
pub struct Fir {
    filter: DecimatingFirFilter<Complex32, Complex32, Vec<f32>>,
    history: Vec<Complex32>,
    decimation: usize,
}

impl Fir {
    /// A filter of `taps` (1..=`MAX_TAPS`, finite) keeping every
    /// `decimation`-th output (1..=`MAX_DECIMATION`).
    pub fn new(taps: Vec<f32>, decimation: usize) -> CodeResult<Self> {
        if taps.is_empty() || taps.len() > MAX_TAPS || taps.iter().any(|t| !t.is_finite()) {
            return Err(invalid!("a filter needs 1..={MAX_TAPS} finite taps, not {}", taps.len()));
        }
        if !(1..=super::MAX_DECIMATION).contains(&decimation) {
            return Err(invalid!("decimation {decimation} is outside 1..={}", super::MAX_DECIMATION));
        }
        let history = vec![Complex32::new(0.0, 0.0); taps.len() - 1];
        Ok(Self { filter: DecimatingFirFilter::new(decimation, taps), history, decimation })
    }

    /// Filters `input`, appending the outputs it completes to `out`.
    pub fn process(&mut self, input: &[Complex32], out: &mut Vec<Complex32>) {
        self.history.extend_from_slice(input);
        let at = out.len();
        let room = self.history.len() / self.decimation + 1;
        out.resize(at + room, Complex32::new(0.0, 0.0));
        let (consumed, produced, _) = self.filter.filter(&self.history, &mut out[at..]);
        out.truncate(at + produced);
        self.history.drain(..consumed);
    }

}

#[cfg(test)]
mod tests {
    use super::*;

    fn ramp(n: usize) -> Vec<Complex32> {
        (0..n).map(|i| Complex32::new(i as f32, -(i as f32) * 0.5)).collect()
    }

    #[test]
    fn pieces_give_the_same_output_as_one_call() {
        let taps = rrc_taps(4, 0.35, 6).unwrap();
        let x = ramp(1000);
        for decimation in [1, 3, 4] {
            let mut whole = Vec::new();
            Fir::new(taps.clone(), decimation).unwrap().process(&x, &mut whole);
            let mut fir = Fir::new(taps.clone(), decimation).unwrap();
            let mut pieces = Vec::new();
            for chunk in x.chunks(37) {
                fir.process(chunk, &mut pieces);
            }
            assert_eq!(whole, pieces);
            assert_eq!(whole.len(), 1000 / decimation);
        }
    }

    #[test]
    fn bad_filters_are_refused() {
        assert!(Fir::new(vec![], 1).is_err());
        assert!(Fir::new(vec![f32::NAN], 1).is_err());
        assert!(Fir::new(vec![1.0], 0).is_err());
        assert!(rrc_taps(1, 0.35, 8).is_err());
        assert!(rrc_taps(4, 0.0, 8).is_err());
        assert!(rrc_taps(5, 0.35, 7).is_err());
        assert!(rrc_taps(64, 0.35, 100).is_err());
    }

    #[test]
    fn shaped_and_matched_symbols_have_no_intersymbol_interference() {
        let h = rrc_taps(4, 0.35, 16).unwrap();
        // A full raised cosine: h * h, sampled every 4, is 1 at the centre and near 0 elsewhere.
        let mid = h.len() - 1;
        for k in (0..2 * h.len() - 1).step_by(4) {
            let c: f32 = (0..h.len()).filter(|&i| k >= i && k - i < h.len()).map(|i| h[i] * h[k - i]).sum();
            let want = if k == mid { 1.0 } else { 0.0 };
            assert!((c - want).abs() < 0.01, "lag {k}: {c}");
        }
    }
}
