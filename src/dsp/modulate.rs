//! The transmit side for loopback tests and test recordings: bits to
//! constellation points, and root-raised-cosine pulse shaping.

use super::{Constellation, Fir, check_sps, rrc_taps};
use crate::codes::error::{CodeResult, invalid};
use num_complex::Complex32;

/// Appends the symbols of `bits` (0 or 1, a whole number of symbols) to
/// `out`: BPSK 0 → +1, 1 → −1; QPSK Gray, bit pairs (I, Q) each
/// 0 → +1/√2, 1 → −1/√2. Symbols have unit energy.
///
/// ```
/// use gpufec::dsp::{Complex32, Constellation, map_symbols};
/// let mut out = Vec::new();
/// map_symbols(Constellation::Bpsk, &[0, 1], &mut out).unwrap();
/// assert_eq!(out, vec![Complex32::new(1.0, 0.0), Complex32::new(-1.0, 0.0)]);
/// ```
pub fn map_symbols(constellation: Constellation, bits: &[u8], out: &mut Vec<Complex32>) -> CodeResult<()> {
    let level = |b: u8| 1.0 - 2.0 * (b & 1) as f32;
    match constellation {
        Constellation::Bpsk => out.extend(bits.iter().map(|&b| Complex32::new(level(b), 0.0))),
        Constellation::Qpsk => {
            if !bits.len().is_multiple_of(2) {
                return Err(invalid!("QPSK maps bit pairs: {} bits is not a whole number of symbols", bits.len()));
            }
            let a = std::f32::consts::FRAC_1_SQRT_2;
            out.extend(bits.chunks_exact(2).map(|p| Complex32::new(a * level(p[0]), a * level(p[1]))));
        }
    }
    Ok(())
}

/// [`map_symbols`] over a stream in pieces of any size: a QPSK bit pair
/// split between two pieces waits for its second bit.
///
/// ```
/// use gpufec::dsp::{Constellation, SymbolMapper};
/// let mut mapper = SymbolMapper::new(Constellation::Qpsk);
/// let mut out = Vec::new();
/// mapper.process(&[0, 1, 1], &mut out);
/// mapper.process(&[0], &mut out);
/// assert_eq!(out.len(), 2);
/// ```
pub struct SymbolMapper {
    constellation: Constellation,
    pending: Vec<u8>,
}

impl SymbolMapper {
    /// A mapper for `constellation`.
    pub fn new(constellation: Constellation) -> Self {
        Self { constellation, pending: Vec::new() }
    }

    /// Maps `bits`, appending the symbols they complete to `out`.
    pub fn process(&mut self, bits: &[u8], out: &mut Vec<Complex32>) {
        self.pending.extend_from_slice(bits);
        let whole = self.pending.len() / self.constellation.bits() * self.constellation.bits();
        map_symbols(self.constellation, &self.pending[..whole], out).expect("whole symbols");
        self.pending.drain(..whole);
    }
}

/// Root-raised-cosine pulse shaping: each symbol becomes `sps` samples, the
/// symbol times the unit-energy pulse of [`rrc_taps`], so a symbol's energy
/// (the sum of its samples' power) is the symbol's power and a matched
/// filter of the same taps gives the symbol back at its peak.
///
/// ```
/// use gpufec::dsp::{Complex32, PulseShaper};
/// let mut shaper = PulseShaper::new(4, 0.35, 8).unwrap();
/// let mut out = Vec::new();
/// shaper.process(&[Complex32::new(1.0, 0.0); 10], &mut out);
/// assert_eq!(out.len(), 40);
/// ```
pub struct PulseShaper {
    sps: usize,
    fir: Fir,
    upsampled: Vec<Complex32>,
}

impl PulseShaper {
    /// A shaper of `sps` samples per symbol, roll-off `alpha` and a pulse of
    /// `span` symbols (the limits of [`rrc_taps`]).
    pub fn new(sps: usize, alpha: f64, span: usize) -> CodeResult<Self> {
        check_sps(sps)?;
        Ok(Self { sps, fir: Fir::new(rrc_taps(sps, alpha, span)?, 1)?, upsampled: Vec::new() })
    }

    /// Shapes `symbols`, appending `sps` samples per symbol to `out`.
    pub fn process(&mut self, symbols: &[Complex32], out: &mut Vec<Complex32>) {
        self.upsampled.clear();
        self.upsampled.resize(symbols.len() * self.sps, Complex32::new(0.0, 0.0));
        for (slot, &s) in self.upsampled.iter_mut().step_by(self.sps).zip(symbols) {
            *slot = s;
        }
        self.fir.process(&self.upsampled, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qpsk_needs_whole_symbols_and_has_unit_energy() {
        let mut out = Vec::new();
        assert!(map_symbols(Constellation::Qpsk, &[0, 1, 1], &mut out).is_err());
        map_symbols(Constellation::Qpsk, &[0, 1, 1, 0], &mut out).unwrap();
        assert!(out.iter().all(|s| (s.norm_sqr() - 1.0).abs() < 1e-6));
        assert!(out[0].re > 0.0 && out[0].im < 0.0 && out[1].re < 0.0 && out[1].im > 0.0);
    }
}
