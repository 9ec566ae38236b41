//! 2-FSK from an FM receiver's discriminator output: the tones are two
//! levels of a real baseband signal, so the demodulator removes the DC
//! (the receiver's tuning offset), integrates over a symbol, recovers the
//! timing and gives LLRs.

use super::{Fir, Gardner, SoftDemapper, check_range, check_sps};
use crate::codes::error::CodeResult;
use num_complex::Complex32;

/// 2-FSK demodulation of discriminator audio at `sps` samples per symbol:
/// DC removal (a one-pole average over about 1/`dc_rate` samples,
/// subtracted), an integrate-and-dump matched filter (a boxcar of `sps`
/// taps, the matched filter of rectangular symbols), [`Gardner`] timing and
/// [`SoftDemapper::real`] LLRs. The higher tone (a positive level) is bit 0,
/// or bit 1 with `invert`.
///
/// ```
/// use gpufec::dsp::FskDemodulator;
/// let mut fsk = FskDemodulator::new(8, 0.005, 0.707, 1e-4, 0.01, false).unwrap();
/// // Alternating symbols: +1 for 8 samples, then −1 for 8, around a DC of 0.3.
/// let audio: Vec<f32> = (0..8000).map(|n| 0.3 + if (n / 8) % 2 == 0 { 1.0 } else { -1.0 }).collect();
/// let mut llrs = Vec::new();
/// fsk.process(&audio, &mut llrs);
/// let tail = &llrs[llrs.len() - 100..];
/// assert!(tail.windows(2).all(|w| (w[0] > 0.0) != (w[1] > 0.0)));
/// ```
pub struct FskDemodulator {
    dc_rate: f32,
    dc: Option<f32>,
    sign: f32,
    filter: Fir,
    timing: Gardner,
    demapper: SoftDemapper,
    centred: Vec<Complex32>,
    filtered: Vec<Complex32>,
    symbols: Vec<Complex32>,
}

impl FskDemodulator {
    /// A demodulator of `sps` samples per symbol (2..=`MAX_SPS`), timing loop
    /// bandwidth and damping as [`Gardner`]'s, DC averaging rate `dc_rate`
    /// per sample (1e-7..=0.1), noise estimate rate `noise_rate` per symbol.
    pub fn new(sps: usize, bandwidth: f64, damping: f64, dc_rate: f64, noise_rate: f64, invert: bool) -> CodeResult<Self> {
        check_sps(sps)?;
        check_range("DC rate", dc_rate, 1e-7..=0.1)?;
        Ok(Self {
            dc_rate: dc_rate as f32,
            dc: None,
            sign: if invert { -1.0 } else { 1.0 },
            filter: Fir::new(vec![1.0 / sps as f32; sps], 1)?,
            timing: Gardner::new(sps as f64, bandwidth, damping)?,
            demapper: SoftDemapper::real(noise_rate)?,
            centred: Vec::new(),
            filtered: Vec::new(),
            symbols: Vec::new(),
        })
    }

    /// Demodulates `audio`, appending the LLRs of the symbols it completes to `llrs`.
    pub fn process(&mut self, audio: &[f32], llrs: &mut Vec<f32>) {
        let mut dc = match (self.dc, audio.first()) {
            (Some(dc), _) => dc,
            (None, Some(&x)) => x,
            (None, None) => return,
        };
        self.centred.clear();
        for &x in audio {
            dc += self.dc_rate * (x - dc);
            self.centred.push(Complex32::new(self.sign * (x - dc), 0.0));
        }
        self.dc = Some(dc);
        self.filtered.clear();
        self.filter.process(&self.centred, &mut self.filtered);
        self.symbols.clear();
        self.timing.process(&self.filtered, &mut self.symbols);
        self.demapper.process(&self.symbols, llrs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes::channel::GaussianNoise;

    #[test]
    fn noisy_fsk_with_an_offset_and_a_clock_error_is_demodulated() {
        let sps = 8;
        let bits: Vec<u8> = (0..20_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 31) as u8).collect();
        // Rectangular symbols at a clock 200 ppm fast, a DC of 0.5, noise σ = 0.5 per sample.
        let n = bits.len() * sps;
        let mut z = vec![0f32; n];
        GaussianNoise::new(4).fill(0, &mut z);
        let audio: Vec<f32> = (0..n)
            .map(|i| {
                let symbol = ((i as f64 * (1.0 + 200e-6)) / sps as f64) as usize;
                let level = 1.0 - 2.0 * bits[symbol.min(bits.len() - 1)] as f32;
                0.5 + level + 0.5 * z[i]
            })
            .collect();
        let mut fsk = FskDemodulator::new(sps, 0.005, 0.707, 1e-4, 0.01, false).unwrap();
        let mut llrs = Vec::new();
        for chunk in audio.chunks(1000) {
            fsk.process(chunk, &mut llrs);
        }
        // The receiver's delay: the lag with the fewest errors after the loops settle.
        let errors = |lag: usize| (5000..19_000).filter(|&k| (llrs[k + lag] < 0.0) as u8 != bits[k]).count();
        let best = (0..4).map(errors).min().unwrap();
        // Integrated over 8 samples σ = 0.5/√8: ideal BER Q(5.7) ≈ 1e-8; a few errors at most.
        assert!(best <= 3, "{best} errors");
        assert!(FskDemodulator::new(1, 0.005, 0.707, 1e-4, 0.01, false).is_err());
        assert!(FskDemodulator::new(8, 0.005, 0.707, 0.0, 0.01, false).is_err());
    }
}
