//! Polar code construction by Gaussian approximation (Trifonov, "Efficient
//! design and decoding of polar codes", IEEE Trans. Commun. 2012): each bit
//! channel's LLR is taken as Gaussian with mean μ and variance 2μ, and the
//! means follow the encoder's butterflies from the channel's 2/σ² · 2.
//!
//! With x = u·G, G = F^⊗m and no bit reversal, the first (most significant)
//! bit of an index says which half of the codeword's outermost butterfly the
//! bit channel sits on: 0 is the check-node ("bad") side, μ' = φ⁻¹(1 − (1 −
//! φ(μ))²), 1 the variable-node ("good") side, μ' = 2μ. φ is Chung's
//! approximation, evaluated in the log domain so that long codes at high
//! design Eb/N0 (φ far below f64's smallest number) keep their order.

use crate::codes::channel::noise_variance;
use crate::codes::error::CodeResult;

/// Chung's φ below x = 10: exp(A·x^B + C).
const PHI_A: f64 = -0.4527;
const PHI_B: f64 = 0.86;
const PHI_C: f64 = 0.0218;
/// Where Chung's two pieces meet.
const PHI_SPLIT: f64 = 10.0;

/// ln φ(x) for x ≥ 0.
fn ln_phi(x: f64) -> f64 {
    if x < PHI_SPLIT {
        PHI_A * x.powf(PHI_B) + PHI_C
    } else {
        0.5 * (std::f64::consts::PI / x).ln() - x / 4.0 + (1.0 - 10.0 / (7.0 * x)).ln()
    }
}

/// The x ≥ 0 with ln φ(x) = `t` (t ≤ 0): the first piece inverted in closed
/// form where it applies, Newton's method on the second (whose slope is
/// below −1/4 everywhere it is used, so a few steps from x = −4t suffice).
fn inverse_ln_phi(t: f64) -> f64 {
    if t >= PHI_A * PHI_SPLIT.powf(PHI_B) + PHI_C {
        return ((t - PHI_C) / PHI_A).max(0.0).powf(1.0 / PHI_B);
    }
    let mut x = (-4.0 * t).max(PHI_SPLIT);
    for _ in 0..50 {
        let slope = -0.5 / x - 0.25 + (10.0 / (7.0 * x * x)) / (1.0 - 10.0 / (7.0 * x));
        let next = (x - (ln_phi(x) - t) / slope).max(PHI_SPLIT);
        if (next - x).abs() <= 1e-12 * x {
            return next;
        }
        x = next;
    }
    x
}

/// The mean of the check-node side of a butterfly whose inputs have mean μ:
/// φ⁻¹(φ(μ)·(2 − φ(μ))), or μ²/2 where that is smaller. Chung's φ exceeds 1
/// below μ ≈ 0.03 and grows worse towards 0, where the check node's mean
/// is about μ²/2 (tanh(L/2) ≈ L/2); the smaller of two increasing functions
/// keeps the means increasing in μ, so the order respects binary domination.
fn check_node_mean(mu: f64) -> f64 {
    let ln_p = ln_phi(mu);
    inverse_ln_phi(ln_p + (2.0 - ln_p.exp()).ln()).min(mu * mu / 2.0).min(mu)
}

/// The mean LLR of every bit channel of a code of 2^`m` bits sent at
/// noise variance `variance` (σ² per real BPSK sample), u_0 first.
pub fn bit_channel_means(m: u32, variance: f64) -> Vec<f64> {
    let mut mu = vec![2.0 / variance];
    for _ in 0..m {
        // Index 2j + b of the next level appends bit b below j's bits.
        mu = mu.iter().flat_map(|&x| [check_node_mean(x), 2.0 * x]).collect();
    }
    mu
}

/// The bit indices of a code of 2^`m` bits, least reliable first, by
/// Gaussian approximation at `design_ebn0_db` for a code of rate `rate`
/// (ties in order of index).
///
/// # Example
/// ```
/// use gpufec::codes::polar::ga_reliability;
/// let order = ga_reliability(3, 0.0, 0.5).unwrap();
/// assert_eq!(order, vec![0, 1, 2, 4, 3, 5, 6, 7]);
/// ```
pub fn ga_reliability(m: u32, design_ebn0_db: f64, rate: f64) -> CodeResult<Vec<u32>> {
    let mu = bit_channel_means(m, noise_variance(design_ebn0_db, rate)?);
    let mut order: Vec<u32> = (0..mu.len() as u32).collect();
    order.sort_by(|&a, &b| mu[a as usize].total_cmp(&mu[b as usize]).then(a.cmp(&b)));
    Ok(order)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phi_inverts_on_both_pieces() {
        for x in [0.01, 0.5, 3.0, 9.99, 10.2, 10.5, 40.0, 1e3, 1e6] {
            let y = inverse_ln_phi(ln_phi(x));
            assert!((y - x).abs() <= 1e-9 * x.max(1.0), "{x} -> {y}");
        }
    }

    #[test]
    fn means_follow_the_butterflies() {
        let mu = bit_channel_means(4, 0.5);
        // The all-ones index only doubles: 2^m · 4.
        assert!((mu[15] - 16.0 * 4.0).abs() < 1e-9);
        // Binary domination: one more 1 bit is never worse.
        for i in 0..16 {
            for b in (0..4).filter(|b| i >> b & 1 == 0) {
                assert!(mu[i | 1 << b] >= mu[i], "{i} vs {}", i | 1 << b);
            }
        }
        // Long codes at high design Eb/N0 keep distinct, ordered means.
        let long = bit_channel_means(16, noise_variance(8.0, 0.5).unwrap());
        assert!(long.iter().all(|m| m.is_finite() && *m >= 0.0));
        for i in (0..1 << 16).step_by(97) {
            for b in (0..16).filter(|b| i >> b & 1 == 0) {
                assert!(long[i | 1 << b] >= long[i], "{i} vs {}", i | 1 << b);
            }
        }
    }
}
