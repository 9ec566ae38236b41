//! The reference lines and intervals of an error-rate plot: uncoded BPSK,
//! the BPSK-constrained capacity limit of a code's rate, and the Wilson
//! interval of a counted rate.

/// z of a two-sided 95 % interval.
const Z95: f64 = 1.959_963_984_540_054;

/// Complementary error function, |relative error| < 1.2e-7 (the Chebyshev
/// fit of Numerical Recipes' `erfcc`): ample for a reference curve.
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06 + t * (0.278_868_07 + t * (-1.135_203_98 + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

/// Bit error rate of uncoded BPSK over AWGN at `ebn0_db`: Q(√(2 Eb/N0)).
pub fn uncoded_bpsk_ber(ebn0_db: f64) -> f64 {
    0.5 * erfc(10f64.powf(ebn0_db / 10.0).sqrt())
}

/// Capacity in bits per channel use of BPSK over AWGN at Es/N0 `esn0`
/// (linear): 1 − E[log2(1 + e^(−2y/σ²))] for y = 1 + n, σ² = 1/(2 Es/N0),
/// by the trapezoid rule over ±12σ.
fn bpsk_capacity(esn0: f64) -> f64 {
    let sigma2 = 1.0 / (2.0 * esn0);
    let sigma = sigma2.sqrt();
    const STEPS: usize = 4000;
    let (lo, hi) = (-12.0 * sigma, 12.0 * sigma);
    let h = (hi - lo) / STEPS as f64;
    let mut sum = 0.0;
    for i in 0..=STEPS {
        let n = lo + i as f64 * h;
        let density = (-n * n / (2.0 * sigma2)).exp() / (sigma * (2.0 * std::f64::consts::PI).sqrt());
        let a = -2.0 * (1.0 + n) / sigma2;
        // log2(1 + e^a) without overflow for large a.
        let l = if a > 30.0 { a / std::f64::consts::LN_2 } else { a.exp().ln_1p() / std::f64::consts::LN_2 };
        let w = if i == 0 || i == STEPS { 0.5 } else { 1.0 };
        sum += w * density * l;
    }
    1.0 - sum * h
}

/// The least Eb/N0 in dB at which BPSK over AWGN can carry information at
/// `rate` bits per channel bit (0 < rate < 1) without error: the Shannon
/// limit of a code of that rate with BPSK; `None` outside (0, 1).
pub fn bpsk_limit_db(rate: f64) -> Option<f64> {
    if !(rate > 0.0 && rate < 1.0) {
        return None;
    }
    // Capacity grows with Es/N0: bisect on its dB value.
    let (mut lo, mut hi) = (-40.0f64, 30.0f64);
    for _ in 0..80 {
        let mid = 0.5 * (lo + hi);
        if bpsk_capacity(10f64.powf(mid / 10.0)) < rate { lo = mid } else { hi = mid }
    }
    let esn0_db = 0.5 * (lo + hi);
    Some(esn0_db - 10.0 * rate.log10())
}

/// The Wilson score interval (95 %) of `k` events in `n` trials: (low,
/// high); for `k` = 0 the low end is 0 and the high end the rate's upper
/// bound.
pub fn wilson(k: u64, n: u64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let zero = k == 0;
    let (k, n) = (k as f64, n as f64);
    let p = k / n;
    let z2 = Z95 * Z95;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = Z95 / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    // With no event the low end is 0 exactly (rounding leaves a speck).
    (if zero { 0.0 } else { (centre - half).max(0.0) }, (centre + half).min(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uncoded_bpsk_matches_known_values() {
        // Q(√2) = 7.865e-2 at 0 dB; 9.6 dB gives about 1e-5.
        assert!((uncoded_bpsk_ber(0.0) - 7.8650e-2).abs() < 1e-5);
        assert!((uncoded_bpsk_ber(9.6) / 1.0e-5 - 1.0).abs() < 0.1);
    }

    #[test]
    fn the_bpsk_limits_of_the_common_rates() {
        // The BPSK-constrained limits: 0.19 dB at rate 1/2, -0.50 dB at 1/3,
        // 1.63 dB at 3/4 (published tables give these to 0.01 dB).
        for (rate, db) in [(0.5, 0.19), (1.0 / 3.0, -0.50), (0.75, 1.63)] {
            let got = bpsk_limit_db(rate).unwrap();
            assert!((got - db).abs() < 0.02, "rate {rate}: {got}");
        }
        assert_eq!(bpsk_limit_db(1.0), None);
        assert_eq!(bpsk_limit_db(0.0), None);
    }

    #[test]
    fn wilson_intervals_hold_the_rate_and_bound_zero_counts() {
        let (lo, hi) = wilson(10, 1000);
        assert!(lo < 0.01 && 0.01 < hi && (0.005..0.006).contains(&lo) && (0.018..0.019).contains(&hi), "{lo} {hi}");
        let (lo, hi) = wilson(0, 1000);
        assert_eq!(lo, 0.0);
        assert!((hi - 3.84 / 1003.84).abs() < 1e-4, "{hi}");
    }
}
