//! Signal processing for real receive chains (layer 1, beside `codes`):
//! samples in, soft bits out, and the transmit side and channel model that
//! loopback tests need.
//!
//! Pure algorithms on slices of `num_complex::Complex32` (or `f32` audio),
//! each keeping its state between calls so that a stream may arrive in pieces
//! of any size and give the same output as in one piece. No FutureSDR here;
//! the blocks of `blocks::radio` are thin over these.
//!
//! The receive chain, in order: [`RealToComplex`] (audio or SSB output to
//! baseband), [`Agc`], the matched filter ([`Fir`] with [`rrc_taps`]),
//! [`Gardner`] symbol timing, [`CarrierRecovery`] (FFT acquisition, FLL and Costas),
//! [`SoftDemapper`], and [`SoftDifferentialDecoder`] where the sender
//! precoded its symbols; [`PskReceiver`] chains them from the AGC on.
//! [`FskDemodulator`] is the 2-FSK receiver of an FM discriminator's audio.
//! Recordings: [`WavReader`] and SigMF ([`SigmfMeta`], [`SigmfReader`]).
//! Soft values follow the project's convention: LLR = ln P(b=0)/P(b=1),
//! BPSK maps 0 → +1.

mod acquisition;
mod agc;
mod carrier;
mod channel;
mod demap;
mod differential;
mod fir;
mod fsk;
mod interpolate;
mod loop_filter;
mod modulate;
mod real_to_complex;
mod receiver;
mod sigmf;
mod timing;
mod wav;

pub use agc::Agc;
pub use carrier::CarrierRecovery;
pub use channel::{ChannelModel, ChannelParams};
pub use demap::SoftDemapper;
pub use differential::{DifferentialDecoder, DifferentialEncoder, SoftDifferentialDecoder, boxplus};
pub use fir::{Fir, rrc_taps};
pub use fsk::FskDemodulator;
pub use interpolate::Interpolator;
pub use loop_filter::LoopGains;
pub use modulate::{PulseShaper, SymbolMapper, map_symbols};
pub use real_to_complex::RealToComplex;
pub use receiver::{PskReceiver, ReceiverSettings};
pub use sigmf::{DATA_EXTENSION, Datatype, MAX_META_BYTES, META_EXTENSION, SIGMF_VERSION, Scalar, SigmfMeta, SigmfReader, sigmf_paths};
pub use timing::{GARDNER_GAIN, Gardner};
pub use wav::{MAX_WAV_CHANNELS, WavFormat, WavReader, WavSamples};

pub use num_complex::Complex32;

use crate::codes::error::{CodeResult, invalid};

/// Samples per symbol a shaper, matched filter or timing loop accepts.
pub const MAX_SPS: usize = 64;
/// Taps a filter may have (span × samples per symbol + 1 for RRC filters).
pub const MAX_TAPS: usize = 4097;
/// Decimation a real-to-complex converter accepts.
pub const MAX_DECIMATION: usize = 64;

/// The constellations of the mappers, carrier loops and demappers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Constellation {
    /// One bit a symbol: 0 → +1, 1 → −1.
    Bpsk,
    /// Two bits a symbol, Gray: the first on I, the second on Q, each
    /// 0 → +1/√2, 1 → −1/√2.
    Qpsk,
}

impl Constellation {
    /// Bits each symbol carries.
    pub fn bits(self) -> usize {
        match self {
            Constellation::Bpsk => 1,
            Constellation::Qpsk => 2,
        }
    }

    /// The order of the phase ambiguity (and of the power that removes the
    /// modulation): 2 for BPSK, 4 for QPSK.
    pub fn order(self) -> u32 {
        match self {
            Constellation::Bpsk => 2,
            Constellation::Qpsk => 4,
        }
    }

    /// Parses `bpsk` or `qpsk`.
    pub fn parse(name: &str) -> CodeResult<Self> {
        match name {
            "bpsk" => Ok(Constellation::Bpsk),
            "qpsk" => Ok(Constellation::Qpsk),
            _ => Err(invalid!("constellation \"{name}\" is not bpsk or qpsk")),
        }
    }
}

/// Checks that `sps` samples per symbol are within `2..=MAX_SPS`.
pub(crate) fn check_sps(sps: usize) -> CodeResult<()> {
    if !(2..=MAX_SPS).contains(&sps) {
        return Err(invalid!("{sps} samples per symbol is outside 2..={MAX_SPS}"));
    }
    Ok(())
}

/// Checks that `value` is finite and within `range`, naming it in the error.
pub(crate) fn check_range(name: &str, value: f64, range: std::ops::RangeInclusive<f64>) -> CodeResult<()> {
    if !value.is_finite() || !range.contains(&value) {
        return Err(invalid!("{name} = {value} is outside {}..={}", range.start(), range.end()));
    }
    Ok(())
}
