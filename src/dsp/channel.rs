//! A seeded channel model for loopback tests: sample-rate and timing
//! offsets, a carrier offset with drift, a phase offset, and AWGN.

use super::interpolate::{AFTER, BEFORE, Interpolator};
use super::check_range;
use crate::codes::channel::GaussianNoise;
use crate::codes::error::CodeResult;
use num_complex::Complex32;

/// What the channel does to a stream of complex samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChannelParams {
    /// Es/N0 in dB (−30..=100) for symbols of unit energy (the
    /// [`PulseShaper`](super::PulseShaper)'s output): complex noise of
    /// variance N0 = 10^(−Es/N0/10) on each sample; `None` adds none.
    pub es_n0_db: Option<f64>,
    /// Carrier frequency offset, cycles per sample (within ±0.25).
    pub cfo: f64,
    /// Change of the carrier offset, cycles per sample per sample (within ±1e-6).
    pub drift: f64,
    /// Carrier phase at the first output sample, radians.
    pub phase: f64,
    /// Timing offset: the first output sample is the input at this time, in
    /// samples (0..=1, fractions of a sample).
    pub timing: f64,
    /// Sample-rate offset in parts per million (within ±1000): output sample n
    /// is the input at time `timing` + n·(1 + ppm·10⁻⁶).
    pub clock_ppm: f64,
    /// Seed of the noise.
    pub seed: u64,
}

impl Default for ChannelParams {
    fn default() -> Self {
        Self { es_n0_db: None, cfo: 0.0, drift: 0.0, phase: 0.0, timing: 0.0, clock_ppm: 0.0, seed: 0 }
    }
}

/// The channel: the input resampled (polyphase interpolation) at the offset
/// clock, rotated by the carrier offset, then noise added. The noise of
/// output sample n is the project's counter-based noise of the seed at
/// 2n (real) and 2n + 1 (imaginary), so runs repeat exactly however the
/// stream is cut.
///
/// ```
/// use gpufec::dsp::{ChannelModel, ChannelParams, Complex32};
/// let params = ChannelParams { phase: std::f64::consts::FRAC_PI_2, ..Default::default() };
/// let mut channel = ChannelModel::new(params).unwrap();
/// let mut out = Vec::new();
/// channel.process(&[Complex32::new(1.0, 0.0); 100], &mut out);
/// assert!((out[50] - Complex32::new(0.0, 1.0)).norm() < 1e-3);
/// ```
pub struct ChannelModel {
    sigma: f32,
    noise: GaussianNoise,
    step: f64,
    interp: Interpolator,
    buf: Vec<Complex32>,
    /// Where in `buf` the next output sample is read.
    at: f64,
    /// Carrier phase (cycles) and frequency (cycles per sample) of the next output.
    carrier_phase: f64,
    carrier_frequency: f64,
    drift: f64,
    produced: u64,
    z: Vec<f32>,
}

impl ChannelModel {
    /// A channel doing `params`, each checked against its range.
    pub fn new(params: ChannelParams) -> CodeResult<Self> {
        if let Some(es_n0) = params.es_n0_db {
            check_range("Es/N0 (dB)", es_n0, -30.0..=100.0)?;
        }
        check_range("carrier offset (cycles per sample)", params.cfo, -0.25..=0.25)?;
        check_range("carrier drift (cycles per sample²)", params.drift, -1e-6..=1e-6)?;
        check_range("phase offset (radians)", params.phase, -1e3..=1e3)?;
        check_range("timing offset (samples)", params.timing, 0.0..=1.0)?;
        check_range("clock offset (ppm)", params.clock_ppm, -1000.0..=1000.0)?;
        let sigma = params.es_n0_db.map_or(0.0, |db| (0.5 * 10f64.powf(-db / 10.0)).sqrt() as f32);
        Ok(Self {
            sigma,
            noise: GaussianNoise::new(params.seed),
            step: 1.0 + params.clock_ppm * 1e-6,
            interp: Interpolator::new(),
            buf: vec![Complex32::new(0.0, 0.0); BEFORE],
            at: BEFORE as f64 + params.timing,
            carrier_phase: params.phase / (2.0 * std::f64::consts::PI),
            carrier_frequency: params.cfo,
            drift: params.drift,
            produced: 0,
            z: Vec::new(),
        })
    }

    /// Passes `input` through the channel, appending the output samples it completes to `out`.
    pub fn process(&mut self, input: &[Complex32], out: &mut Vec<Complex32>) {
        self.buf.extend_from_slice(input);
        let first = out.len();
        while (self.at as usize) + AFTER < self.buf.len() {
            let i = self.at as usize;
            let x = self.interp.at(&self.buf, i, (self.at - i as f64) as f32);
            let (s, c) = (2.0 * std::f64::consts::PI * self.carrier_phase).sin_cos();
            out.push(x * Complex32::new(c as f32, s as f32));
            self.carrier_phase = (self.carrier_phase + self.carrier_frequency).rem_euclid(1.0);
            self.carrier_frequency += self.drift;
            self.at += self.step;
        }
        let made = out.len() - first;
        if self.sigma > 0.0 && made > 0 {
            self.z.resize(2 * made, 0.0);
            self.noise.fill(2 * self.produced, &mut self.z);
            for (y, z) in out[first..].iter_mut().zip(self.z.chunks_exact(2)) {
                *y += Complex32::new(self.sigma * z[0], self.sigma * z[1]);
            }
        }
        self.produced += made as u64;
        let keep_from = (self.at as usize).saturating_sub(BEFORE);
        self.buf.drain(..keep_from);
        self.at -= keep_from as f64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_give_the_same_output_and_bad_params_are_refused() {
        let params = ChannelParams {
            es_n0_db: Some(10.0),
            cfo: 0.01,
            drift: 1e-8,
            phase: 1.0,
            timing: 0.3,
            clock_ppm: 100.0,
            seed: 5,
        };
        let x: Vec<Complex32> = (0..3000).map(|i| Complex32::from_polar(1.0, 0.1 * i as f32)).collect();
        let mut whole = Vec::new();
        ChannelModel::new(params).unwrap().process(&x, &mut whole);
        let mut channel = ChannelModel::new(params).unwrap();
        let mut pieces = Vec::new();
        for chunk in x.chunks(101) {
            channel.process(chunk, &mut pieces);
        }
        assert_eq!(whole, pieces);
        // 100 ppm slower: 3000 inputs make about 0.3 fewer outputs, less the interpolator's look-ahead.
        assert!((2990..3000).contains(&whole.len()));
        for bad in [
            ChannelParams { cfo: 0.3, ..params },
            ChannelParams { timing: 1.5, ..params },
            ChannelParams { clock_ppm: f64::NAN, ..params },
            ChannelParams { es_n0_db: Some(200.0), ..params },
        ] {
            assert!(ChannelModel::new(bad).is_err());
        }
    }

    #[test]
    fn the_noise_has_the_variance_es_n0_gives() {
        let params = ChannelParams { es_n0_db: Some(3.0), seed: 9, ..Default::default() };
        let mut out = Vec::new();
        ChannelModel::new(params).unwrap().process(&vec![Complex32::new(0.0, 0.0); 50_000], &mut out);
        let n0: f32 = out.iter().map(|y| y.norm_sqr()).sum::<f32>() / out.len() as f32;
        assert!((n0 / 10f32.powf(-0.3) - 1.0).abs() < 0.03, "N0 = {n0}");
    }
}
