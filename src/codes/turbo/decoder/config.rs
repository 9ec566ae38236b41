//! What a turbo decoder computes: the max* of its recursions, extrinsic
//! scaling, iterations and early stop, and the sub-block split with its guard.

use crate::codes::error::{CodeError, CodeResult, invalid};

/// Most iterations a decoder runs.
pub const MAX_ITERATIONS: usize = 64;

/// The max* operation of the recursions: max-log-MAP takes the max;
/// log-MAP adds the correction ln(1 + e^−|a−b|), exactly or approximated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum MaxStar {
    /// max(a, b): max-log-MAP. Insensitive to the LLRs' scale.
    #[serde(rename = "max-log")]
    Max,
    /// max(a, b) + ln(1 + e^−|a−b|): log-MAP, exact.
    #[serde(rename = "log-map")]
    Exact,
    /// max(a, b) + max(0, ln 2 − |a−b|/4): log-MAP with a linear correction.
    #[serde(rename = "log-map-linear")]
    Linear,
}

impl MaxStar {
    /// max*(a, b).
    #[inline(always)]
    pub fn apply(self, a: f32, b: f32) -> f32 {
        let m = max(a, b);
        match self {
            MaxStar::Max => m,
            MaxStar::Exact => m + ln1p_exp_neg((a - b).abs()),
            MaxStar::Linear => m + (std::f32::consts::LN_2 - 0.25 * (a - b).abs()).max(0.0),
        }
    }

    /// `max-log`, `log-map`, `log-map-linear`.
    pub fn name(self) -> &'static str {
        match self {
            MaxStar::Max => "max-log",
            MaxStar::Exact => "log-map",
            MaxStar::Linear => "log-map-linear",
        }
    }
}

/// ln(1 + e^−d) for d ≥ 0, the log-MAP correction, to within 2e-7 (a few
/// units in the last place of f32), computed here rather than by the
/// platform's `expf` and `log1pf`, which may differ in the last bit from
/// one C library to another: the CPU model gives the same bits everywhere
/// (as the channel's noise does). e^−d = 2^n · e^r with |r| ≤ ln 2 / 2
/// (degree-6 Taylor polynomial), then ln(1 + t) = 2 atanh(t / (2 + t)) with
/// t / (2 + t) ≤ 1/3 (odd series to the 13th power). Past d = 20 the
/// correction is below 2.1e-9 and is 0.
#[inline(always)]
pub(super) fn ln1p_exp_neg(d: f32) -> f32 {
    let d = if d < 20.0 { d } else { 20.0 };
    let n = (d * std::f32::consts::LOG2_E + 0.5) as i32 as f32; // round(d / ln 2), d ≥ 0
    let r = n * std::f32::consts::LN_2 - d;
    let er = 1.0 + r * (1.0 + r * (0.5 + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0))))));
    let t = er * f32::from_bits(((127 - n as i32) as u32) << 23);
    let z = t / (2.0 + t);
    let z2 = z * z;
    let series = 1.0 + z2 * (1.0 / 3.0 + z2 * (1.0 / 5.0 + z2 * (1.0 / 7.0 + z2 * (1.0 / 9.0 + z2 * (1.0 / 11.0 + z2 * (1.0 / 13.0))))));
    let c = 2.0 * z * series;
    if d < 20.0 { c } else { 0.0 }
}

/// The larger of two finite metrics. Written as a comparison, not
/// `f32::max`, whose NaN rule costs two more instructions per lane (one
/// `maxps` on x86, `fmaxf` semantics aside); the decoders never see NaN.
#[inline(always)]
pub(super) fn max(a: f32, b: f32) -> f32 {
    if a > b { a } else { b }
}

/// How the state metrics at a sub-block's edges are estimated (the
/// thesis's guarding mechanisms, §4.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Guard {
    /// Equal metrics at every inner edge.
    None,
    /// Previous iteration value initialisation: α at a sub-block's start is
    /// the previous sub-block's α at its end from the previous iteration;
    /// β likewise from the next sub-block.
    Pivi,
    /// Double-sided training windows: α runs g stages before the start, β g
    /// stages past the end, from equal metrics.
    Dstw,
    /// Both: the training windows start from the previous iteration's
    /// metrics at their own start.
    PiviDstw,
}

impl Guard {
    /// Whether training windows run.
    pub fn trains(self) -> bool {
        matches!(self, Guard::Dstw | Guard::PiviDstw)
    }

    /// Whether metrics carry over from the previous iteration.
    pub fn carries(self) -> bool {
        matches!(self, Guard::Pivi | Guard::PiviDstw)
    }

    /// `none`, `pivi`, `dstw`, `pividstw`.
    pub fn name(self) -> &'static str {
        match self {
            Guard::None => "none",
            Guard::Pivi => "pivi",
            Guard::Dstw => "dstw",
            Guard::PiviDstw => "pividstw",
        }
    }
}

/// When a block stops iterating before the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EarlyStop {
    /// Always run every iteration.
    Never,
    /// When an iteration's hard decisions equal the previous iteration's.
    Stable,
    /// When the block's last 24 bits are the CRC24B of the rest (a code
    /// block of a segmented transport block).
    Crc24B,
    /// When the block's last 24 bits are the CRC24A of the rest (a transport
    /// block sent as one code block).
    Crc24A,
}

/// Everything a turbo decoder computes, checked by [`DecoderConfig::validate`].
///
/// # Example
/// ```
/// use gpufec::codes::turbo::{DecoderConfig, Guard};
/// let c = DecoderConfig { subblocks: 96, guard: Guard::PiviDstw, window: 8, ..DecoderConfig::default() };
/// c.validate(6144).unwrap();
/// assert!(c.validate(40).is_err()); // 96 sub-blocks of a 40-bit block
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DecoderConfig {
    /// The recursions' max*.
    pub max_star: MaxStar,
    /// Factor on the extrinsic LLRs passed between the constituent decoders
    /// (1 = none; 0.75 is the usual choice for max-log-MAP).
    pub scaling: f32,
    /// Most iterations (each: both constituent decoders), 1..=[`MAX_ITERATIONS`].
    pub iterations: usize,
    /// When to stop before `iterations`.
    pub early_stop: EarlyStop,
    /// P: sub-blocks decoded independently per half-iteration (1: the serial
    /// decoder). Sub-block p covers stages ⌊pK/P⌋ to ⌊(p+1)K/P⌋; the last
    /// also the tail. Sizes differ by at most one.
    pub subblocks: usize,
    /// How the sub-blocks' edge metrics are estimated.
    pub guard: Guard,
    /// g: training window in stages (DSTW, PIVIDSTW), shorter than the shortest sub-block.
    pub window: usize,
}

impl Default for DecoderConfig {
    /// Max-log-MAP scaled by 0.75, 8 iterations, no early stop, serial.
    fn default() -> Self {
        Self { max_star: MaxStar::Max, scaling: 0.75, iterations: 8, early_stop: EarlyStop::Never, subblocks: 1, guard: Guard::None, window: 0 }
    }
}

impl DecoderConfig {
    /// Check the configuration for blocks of `k` bits.
    pub fn validate(&self, k: usize) -> CodeResult<()> {
        self.check(k).map_err(|(_, e)| e)
    }

    /// [`Self::validate`], the error naming the field at fault (`iterations`,
    /// `scaling`, `subblocks`, `window`, `early_stop`), as the flowgraph
    /// kinds and the command line name it.
    ///
    /// # Example
    /// ```
    /// use gpufec::codes::turbo::{DecoderConfig, Guard};
    /// let c = DecoderConfig { subblocks: 8, guard: Guard::Dstw, ..DecoderConfig::default() };
    /// assert_eq!(c.check(6144).unwrap_err().0, "window"); // DSTW needs g ≥ 1
    /// ```
    pub fn check(&self, k: usize) -> Result<(), (&'static str, CodeError)> {
        if !(1..=MAX_ITERATIONS).contains(&self.iterations) {
            return Err(("iterations", invalid!("{} iterations: give 1..={MAX_ITERATIONS}", self.iterations)));
        }
        if !(self.scaling.is_finite() && self.scaling > 0.0 && self.scaling <= 1.0) {
            return Err(("scaling", invalid!("extrinsic scaling {}: give a factor in (0, 1]", self.scaling)));
        }
        if !(1..=k).contains(&self.subblocks) {
            return Err(("subblocks", invalid!("{} sub-blocks of a {k}-bit block: give 1..={k}", self.subblocks)));
        }
        let shortest = k / self.subblocks;
        if self.guard.trains() {
            if self.window == 0 {
                return Err(("window", invalid!("guard {} needs a training window g ≥ 1", self.guard.name())));
            }
            // A window as long as a sub-block would train β from the far
            // neighbour's edge, which no sub-block computes.
            if self.window >= shortest {
                return Err((
                    "window",
                    invalid!(
                        "training window g = {} is not shorter than the shortest sub-block ({shortest} stages of K = {k} in {} sub-blocks)",
                        self.window,
                        self.subblocks
                    ),
                ));
            }
        } else if self.window != 0 {
            return Err(("window", invalid!("a training window g = {} needs guard dstw or pividstw, not {}", self.window, self.guard.name())));
        }
        if matches!(self.early_stop, EarlyStop::Crc24A | EarlyStop::Crc24B) && k <= 24 {
            return Err(("early_stop", invalid!("a CRC early stop needs blocks longer than the 24 CRC bits, not {k}")));
        }
        Ok(())
    }

    /// This configuration split the way the GPU decodes by default: P
    /// sub-blocks of about 48 stages (at most 128), PIVIDSTW with g = 8 when
    /// P > 1. At K = 6144 (P = 128) that loses 0.036–0.032 dB in BER and
    /// 0.045–0.054 dB in FER against the serial decoder, and decodes 7 %
    /// faster on the H200 than P = 96 (0.016–0.032 dB; BENCHMARKS.md).
    ///
    /// # Example
    /// ```
    /// use gpufec::codes::turbo::{DecoderConfig, Guard};
    /// let c = DecoderConfig::default().with_gpu_split(6144);
    /// assert_eq!((c.subblocks, c.guard, c.window), (128, Guard::PiviDstw, 8));
    /// assert_eq!(DecoderConfig::default().with_gpu_split(88).subblocks, 1);
    /// ```
    pub fn with_gpu_split(self, k: usize) -> Self {
        let subblocks = (k / 48).clamp(1, 128);
        let (guard, window) = if subblocks > 1 { (Guard::PiviDstw, 8) } else { (Guard::None, 0) };
        Self { subblocks, guard, window, ..self }
    }

    /// First stage of sub-block `p` of a `k`-bit block.
    pub fn subblock_start(&self, k: usize, p: usize) -> usize {
        p * k / self.subblocks
    }

    /// `max-log ×0.75, 8 it, P=96 pividstw g=8, stop on CRC24B`.
    pub fn describe(&self) -> String {
        let mut s = self.max_star.name().to_string();
        if self.scaling != 1.0 {
            s += &format!(" ×{}", self.scaling);
        }
        s += &format!(", {} it", self.iterations);
        if self.subblocks > 1 {
            s += &format!(", P={} {}", self.subblocks, self.guard.name());
            if self.guard.trains() {
                s += &format!(" g={}", self.window);
            }
        }
        match self.early_stop {
            EarlyStop::Never => {}
            EarlyStop::Stable => s += ", stop when stable",
            EarlyStop::Crc24B => s += ", stop on CRC24B",
            EarlyStop::Crc24A => s += ", stop on CRC24A",
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_map_correction_is_within_2e_7() {
        let mut worst = (0.0f64, 0.0f32);
        for i in 0..=300_000 {
            let d = i as f32 * 1e-4;
            let want = (1.0 + (-(d as f64)).exp()).ln();
            let err = (ln1p_exp_neg(d) as f64 - want).abs();
            if err > worst.0 {
                worst = (err, d);
            }
        }
        assert!(worst.0 < 2e-7, "error {:e} at d = {}", worst.0, worst.1);
        assert_eq!(ln1p_exp_neg(1e30), 0.0);
        assert!((ln1p_exp_neg(0.0) - std::f32::consts::LN_2).abs() < 1e-7);
    }

    #[test]
    fn check_names_the_field_at_fault() {
        let ok = DecoderConfig::default();
        for (cfg, k, field, says) in [
            (DecoderConfig { iterations: 0, ..ok }, 6144, "iterations", "0 iterations"),
            (DecoderConfig { scaling: f32::NAN, ..ok }, 6144, "scaling", "scaling NaN"),
            (DecoderConfig { subblocks: 41, ..ok }, 40, "subblocks", "41 sub-blocks"),
            (DecoderConfig { subblocks: 8, guard: Guard::PiviDstw, ..ok }, 6144, "window", "needs a training window"),
            (DecoderConfig { subblocks: 96, guard: Guard::Dstw, window: 65, ..ok }, 6144, "window", "g = 65"),
            (DecoderConfig { subblocks: 96, guard: Guard::PiviDstw, window: 64, ..ok }, 6144, "window", "g = 64 is not shorter"),
            (DecoderConfig { window: 4, ..ok }, 6144, "window", "needs guard dstw"),
            (DecoderConfig { early_stop: EarlyStop::Crc24B, ..ok }, 24, "early_stop", "CRC early stop"),
        ] {
            let (got, e) = cfg.check(k).unwrap_err();
            assert_eq!(got, field, "{e}");
            assert!(e.to_string().contains(says), "{e}");
            assert_eq!(cfg.validate(k), Err(e));
        }
        assert_eq!(ok.check(40), Ok(()));
    }
}
