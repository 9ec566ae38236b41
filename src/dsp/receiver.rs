//! The whole PSK receiver of complex baseband samples, in one object: AGC,
//! matched filter, timing, carrier, demapper. Each stage is also usable alone.

use super::{Agc, CarrierRecovery, Constellation, Fir, Gardner, SoftDemapper, rrc_taps};
use crate::codes::error::CodeResult;
use num_complex::Complex32;

/// The receiver's settings; [`Default`] gives the ones proved on the BY70-1
/// recording and in the loopback tests.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReceiverSettings {
    /// BPSK or QPSK.
    pub constellation: Constellation,
    /// Samples per symbol of the input (2..=`MAX_SPS`).
    pub sps: usize,
    /// Roll-off of the RRC matched filter.
    pub roll_off: f64,
    /// Span of the matched filter in symbols.
    pub span: usize,
    /// AGC averaging rate per sample ([`Agc`]).
    pub agc_rate: f64,
    /// Timing loop noise bandwidth Bn·T and damping ([`Gardner`]).
    pub timing_bandwidth: f64,
    /// Damping of the timing loop.
    pub timing_damping: f64,
    /// Costas loop noise bandwidth Bn·T while pulling in; a third of it
    /// once locked ([`CarrierRecovery`]).
    pub carrier_bandwidth: f64,
    /// Damping of the Costas loop.
    pub carrier_damping: f64,
    /// FLL gain per symbol.
    pub fll_gain: f64,
    /// Averaging rate of the demapper's noise estimate, per symbol ([`SoftDemapper`]).
    pub noise_rate: f64,
}

impl Default for ReceiverSettings {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl ReceiverSettings {
    /// The defaults, as a constant for those that fall back to them field by field.
    pub const DEFAULT: Self = Self {
        constellation: Constellation::Bpsk,
        sps: 4,
        roll_off: 0.35,
        span: 10,
        agc_rate: 1e-3,
        timing_bandwidth: 0.002,
        timing_damping: 0.707,
        carrier_bandwidth: 0.01,
        carrier_damping: 0.707,
        fll_gain: 0.001,
        noise_rate: 0.005,
    };
}

/// Complex baseband samples to LLRs: [`Agc`] → matched filter ([`Fir`] of
/// [`rrc_taps`]) → [`Gardner`] → [`CarrierRecovery`] → [`SoftDemapper`].
///
/// ```
/// use gpufec::dsp::{PskReceiver, ReceiverSettings};
/// let mut rx = PskReceiver::new(ReceiverSettings::default()).unwrap();
/// let mut llrs = Vec::new();
/// rx.process(&[Default::default(); 400], &mut llrs);
/// assert!((98..=100).contains(&llrs.len()));
/// ```
pub struct PskReceiver {
    agc: Agc,
    matched: Fir,
    timing: Gardner,
    carrier: CarrierRecovery,
    demapper: SoftDemapper,
    scaled: Vec<Complex32>,
    filtered: Vec<Complex32>,
    symbols: Vec<Complex32>,
}

impl PskReceiver {
    /// A receiver of `settings`, each checked by its stage.
    pub fn new(settings: ReceiverSettings) -> CodeResult<Self> {
        let s = settings;
        Ok(Self {
            agc: Agc::new(s.agc_rate, 1.0)?,
            matched: Fir::new(rrc_taps(s.sps, s.roll_off, s.span)?, 1)?,
            timing: Gardner::new(s.sps as f64, s.timing_bandwidth, s.timing_damping)?,
            carrier: CarrierRecovery::new(s.constellation, s.carrier_bandwidth, s.carrier_damping, s.fll_gain)?,
            demapper: SoftDemapper::new(s.constellation, s.noise_rate)?,
            scaled: Vec::new(),
            filtered: Vec::new(),
            symbols: Vec::new(),
        })
    }

    /// The carrier loop, for its lock state and frequency.
    pub fn carrier(&self) -> &CarrierRecovery {
        &self.carrier
    }

    /// Receives `samples`, appending the LLRs of the symbols they complete to `llrs`.
    pub fn process(&mut self, samples: &[Complex32], llrs: &mut Vec<f32>) {
        self.scaled.clear();
        self.scaled.extend_from_slice(samples);
        self.agc.process(&mut self.scaled);
        self.filtered.clear();
        self.matched.process(&self.scaled, &mut self.filtered);
        self.symbols.clear();
        self.timing.process(&self.filtered, &mut self.symbols);
        self.carrier.process(&mut self.symbols);
        self.demapper.process(&self.symbols, llrs);
    }
}
