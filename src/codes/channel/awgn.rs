//! Additive white Gaussian noise at a given Eb/N0, and the matching LLR demapper.

use crate::codes::error::{CodeResult, invalid};
use rand::SeedableRng;
use rand::rngs::SmallRng;
use rand_distr::{Distribution, StandardNormal};

/// Noise variance per real BPSK sample for `ebn0_db` at code rate `rate`
/// (information bits over channel bits actually sent): σ² = 1 / (2·R·Eb/N0).
pub fn noise_variance(ebn0_db: f64, rate: f64) -> CodeResult<f64> {
    if !ebn0_db.is_finite() || !(-30.0..=60.0).contains(&ebn0_db) {
        return Err(invalid!("Eb/N0 = {ebn0_db} dB is outside -30..=60 dB"));
    }
    if !(rate > 0.0 && rate <= 1.0) {
        return Err(invalid!("code rate {rate} is outside (0, 1]"));
    }
    Ok(1.0 / (2.0 * rate * 10f64.powf(ebn0_db / 10.0)))
}

/// Seeded AWGN source: the same seed gives the same noise.
///
/// # Example
/// ```
/// use gpufec::codes::channel::Awgn;
/// let mut ch = Awgn::new(3.0, 0.5, 7).unwrap();
/// let mut y = vec![1.0f32; 4];
/// ch.add_noise(&mut y);
/// let llr = ch.llrs(&y);
/// assert_eq!(llr.len(), 4);
/// ```
#[derive(Debug, Clone)]
pub struct Awgn {
    sigma: f32,
    llr_gain: f32,
    rng: SmallRng,
}

impl Awgn {
    /// Channel for `ebn0_db` at effective code rate `rate`, noise drawn from `seed`.
    pub fn new(ebn0_db: f64, rate: f64, seed: u64) -> CodeResult<Self> {
        let var = noise_variance(ebn0_db, rate)?;
        Ok(Self {
            sigma: var.sqrt() as f32,
            llr_gain: (2.0 / var) as f32,
            rng: SmallRng::seed_from_u64(seed),
        })
    }

    /// Noise standard deviation σ.
    pub fn sigma(&self) -> f32 {
        self.sigma
    }

    /// LLR gain 2/σ² that the matched demapper applies.
    pub fn llr_gain(&self) -> f32 {
        self.llr_gain
    }

    /// Add noise in place.
    pub fn add_noise(&mut self, samples: &mut [f32]) {
        for s in samples {
            let z: f32 = StandardNormal.sample(&mut self.rng);
            *s += self.sigma * z;
        }
    }

    /// LLRs 2y/σ² of received samples.
    pub fn llrs(&self, samples: &[f32]) -> Vec<f32> {
        samples.iter().map(|&y| self.llr_gain * y).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variance_follows_ebn0_and_rate() {
        let v = noise_variance(0.0, 0.5).unwrap();
        assert!((v - 1.0).abs() < 1e-12);
        let v = noise_variance(10.0, 1.0).unwrap();
        assert!((v - 0.05).abs() < 1e-12);
        assert!(noise_variance(f64::NAN, 0.5).is_err());
        assert!(noise_variance(3.0, 0.0).is_err());
        assert!(noise_variance(3.0, 1.5).is_err());
    }

    #[test]
    fn noise_has_the_asked_variance_and_is_seeded() {
        let mut a = Awgn::new(2.0, 0.5, 11).unwrap();
        let mut y = vec![0.0f32; 200_000];
        a.add_noise(&mut y);
        let var = y.iter().map(|&x| (x as f64).powi(2)).sum::<f64>() / y.len() as f64;
        let want = noise_variance(2.0, 0.5).unwrap();
        // Standard error of the variance estimate is want*sqrt(2/N) ≈ 0.3 %.
        assert!((var / want - 1.0).abs() < 0.015, "{var} vs {want}");
        let mut b = Awgn::new(2.0, 0.5, 11).unwrap();
        let mut z = vec![0.0f32; 200_000];
        b.add_noise(&mut z);
        assert_eq!(y, z);
    }
}
