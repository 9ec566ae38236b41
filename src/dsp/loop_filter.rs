//! Gains of the second-order loops (timing and carrier): a proportional and
//! an integral path, set from the loop's noise bandwidth and damping.

use super::check_range;
use crate::codes::error::CodeResult;

/// Proportional and integral gains of a second-order loop.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoopGains {
    /// Gain of the error into the phase (or timing) step.
    pub proportional: f32,
    /// Gain of the error into the frequency (or period) integrator.
    pub integral: f32,
}

impl LoopGains {
    /// Gains for noise bandwidth `bandwidth` (Bn·T, cycles per update, at
    /// most 0.1), damping `damping` (0.1..=4) and detector gain `detector`
    /// (error per unit of phase or timing error near lock), from the usual
    /// bilinear design: θ = Bn·T / (ζ + 1/(4ζ)), Kp = 4ζθ / ((1 + 2ζθ + θ²)·Kd),
    /// Ki = 4θ² / ((1 + 2ζθ + θ²)·Kd).
    ///
    /// ```
    /// let g = gpufec::dsp::LoopGains::new(0.01, 0.707, 1.0).unwrap();
    /// assert!(g.proportional > g.integral && g.integral > 0.0);
    /// ```
    pub fn new(bandwidth: f64, damping: f64, detector: f64) -> CodeResult<Self> {
        check_range("loop bandwidth", bandwidth, 1e-6..=0.1)?;
        check_range("loop damping", damping, 0.1..=4.0)?;
        check_range("detector gain", detector, 1e-6..=1e6)?;
        let theta = bandwidth / (damping + 0.25 / damping);
        let d = (1.0 + 2.0 * damping * theta + theta * theta) * detector;
        Ok(Self {
            proportional: (4.0 * damping * theta / d) as f32,
            integral: (4.0 * theta * theta / d) as f32,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_settings_are_refused() {
        assert!(LoopGains::new(0.0, 0.7, 1.0).is_err());
        assert!(LoopGains::new(0.2, 0.7, 1.0).is_err());
        assert!(LoopGains::new(0.01, f64::NAN, 1.0).is_err());
    }

    #[test]
    fn gains_scale_inversely_with_the_detector() {
        let a = LoopGains::new(0.02, 1.0, 1.0).unwrap();
        let b = LoopGains::new(0.02, 1.0, 2.0).unwrap();
        assert!((a.proportional / b.proportional - 2.0).abs() < 1e-5);
        assert!((a.integral / b.integral - 2.0).abs() < 1e-5);
    }
}
