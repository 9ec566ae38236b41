//! Automatic gain control: scales a stream to a target mean power.

use super::check_range;
use crate::codes::error::CodeResult;
use num_complex::Complex32;

/// Gain the AGC may reach: a stream of zeros stays zeros rather than noise
/// blown up without bound.
const MAX_GAIN: f32 = 1e6;

/// Scales each sample by √(target / P), P the power averaged over about
/// 1/`rate` samples before it (a one-pole average, started at the first
/// sample's power), so the output's mean power follows `target`.
///
/// ```
/// use gpufec::dsp::{Agc, Complex32};
/// let mut agc = Agc::new(0.01, 1.0).unwrap();
/// let mut x = vec![Complex32::new(30.0, 40.0); 1000];
/// agc.process(&mut x);
/// assert!((x[999].norm() - 1.0).abs() < 1e-3);
/// ```
pub struct Agc {
    rate: f32,
    target: f32,
    power: Option<f32>,
}

impl Agc {
    /// An AGC of averaging rate `rate` (1e-6..=1) towards mean power
    /// `target` (1e-6..=1e6).
    pub fn new(rate: f64, target: f64) -> CodeResult<Self> {
        check_range("AGC rate", rate, 1e-6..=1.0)?;
        check_range("AGC target power", target, 1e-6..=1e6)?;
        Ok(Self { rate: rate as f32, target: target as f32, power: None })
    }

    /// Scales `samples` in place.
    pub fn process(&mut self, samples: &mut [Complex32]) {
        let mut power = match (self.power, samples.first()) {
            (Some(p), _) => p,
            (None, Some(s)) => s.norm_sqr(),
            (None, None) => return,
        };
        for s in samples {
            power += self.rate * (s.norm_sqr() - power);
            let gain = if power > 0.0 { (self.target / power).sqrt().min(MAX_GAIN) } else { MAX_GAIN };
            *s *= gain;
        }
        self.power = Some(power);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follows_a_step_in_level_and_keeps_zeros() {
        let mut agc = Agc::new(0.05, 2.0).unwrap();
        let mut x = vec![Complex32::new(0.1, 0.0); 500];
        x.extend(vec![Complex32::new(0.0, 100.0); 500]);
        for chunk in x.chunks_mut(33) {
            agc.process(chunk);
        }
        assert!((x[499].norm_sqr() - 2.0).abs() < 1e-3);
        assert!((x[999].norm_sqr() - 2.0).abs() < 1e-3);
        let mut zeros = vec![Complex32::new(0.0, 0.0); 10];
        Agc::new(0.05, 1.0).unwrap().process(&mut zeros);
        assert!(zeros.iter().all(|z| z.norm() == 0.0));
        assert!(Agc::new(0.0, 1.0).is_err());
        assert!(Agc::new(0.1, -1.0).is_err());
    }
}
