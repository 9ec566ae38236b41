//! Symbol timing recovery: a Gardner detector driving a second-order loop,
//! with the polyphase interpolator reading the stream between its samples.

use super::interpolate::{AFTER, BEFORE, Interpolator};
use super::{LoopGains, MAX_SPS, check_range};
use crate::codes::error::CodeResult;
use num_complex::Complex32;

/// The Gardner detector's gain near lock, error per symbol of timing error,
/// for unit-amplitude random symbols through RRC shaping and matched
/// filtering of roll-off 0.35: 2·|g'(T/2)| of the raised-cosine pulse g.
pub const GARDNER_GAIN: f64 = 2.6;

/// How far the loop may move the symbol period from nominal: ±2 %.
const MAX_PERIOD_DEVIATION: f32 = 0.02;

/// Gardner symbol timing recovery: one output per symbol, the matched
/// filter's output at the instant the loop takes for the symbol's centre.
///
/// The detector is e = Re{ y*(k−½)·(y(k) − y(k−1)) }, positive when the
/// strobes are late; the loop is second order ([`LoopGains`], noise bandwidth
/// Bn·T per symbol, detector gain [`GARDNER_GAIN`]), so it follows a clock
/// offset without a standing error. Input: matched-filtered samples at about
/// `sps` a symbol, at unit amplitude (after an [`Agc`](super::Agc)).
///
/// ```
/// use gpufec::dsp::{Complex32, Gardner};
/// let mut gardner = Gardner::new(4.0, 0.01, 0.707).unwrap();
/// let samples = vec![Complex32::new(1.0, 0.0); 400];
/// let mut symbols = Vec::new();
/// gardner.process(&samples, &mut symbols);
/// assert!((98..=100).contains(&symbols.len()));
/// ```
pub struct Gardner {
    sps: f64,
    gains: LoopGains,
    interp: Interpolator,
    buf: Vec<Complex32>,
    /// Where in `buf` the last symbol was taken, and the next will be.
    last: f64,
    next: f64,
    /// The integrator: the period's deviation from nominal, in symbols.
    drift: f32,
    prev: Complex32,
}

impl Gardner {
    /// A loop for `sps` samples per symbol (2..=`MAX_SPS`), noise bandwidth
    /// `bandwidth` (Bn·T, at most 0.1) and damping `damping`.
    pub fn new(sps: f64, bandwidth: f64, damping: f64) -> CodeResult<Self> {
        check_range("samples per symbol", sps, 2.0..=MAX_SPS as f64)?;
        let gains = LoopGains::new(bandwidth, damping, GARDNER_GAIN)?;
        Ok(Self {
            sps,
            gains,
            interp: Interpolator::new(),
            buf: vec![Complex32::new(0.0, 0.0); BEFORE],
            last: BEFORE as f64,
            next: BEFORE as f64 + sps,
            drift: 0.0,
            prev: Complex32::new(0.0, 0.0),
        })
    }

    /// The loop's current samples per symbol.
    pub fn period(&self) -> f64 {
        self.sps * (1.0 - self.drift as f64)
    }

    /// Reads `input`, appending a symbol to `out` for each symbol centre it reaches.
    pub fn process(&mut self, input: &[Complex32], out: &mut Vec<Complex32>) {
        self.buf.extend_from_slice(input);
        while (self.next as usize) + AFTER < self.buf.len() {
            let mid = self.sample((self.last + self.next) / 2.0);
            let y = self.sample(self.next);
            let e = ((y - self.prev) * mid.conj()).re;
            self.drift = (self.drift + self.gains.integral * e).clamp(-MAX_PERIOD_DEVIATION, MAX_PERIOD_DEVIATION);
            let step = 1.0 - self.gains.proportional * e - self.drift;
            self.last = self.next;
            self.next += self.sps * step as f64;
            self.prev = y;
            out.push(y);
        }
        // Keep what the next midpoint and symbol read.
        let keep_from = (self.last as usize).saturating_sub(BEFORE);
        self.buf.drain(..keep_from);
        self.last -= keep_from as f64;
        self.next -= keep_from as f64;
    }

    fn sample(&self, at: f64) -> Complex32 {
        let i = at as usize;
        self.interp.at(&self.buf, i, (at - i as f64) as f32)
    }
}
