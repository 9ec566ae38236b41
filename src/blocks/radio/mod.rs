//! Radio blocks: the receive chain from samples to soft bits, the transmit
//! side and the channel model, each thin over its stage in
//! [`dsp`](crate::dsp), the WAV file source, and SigMF recordings
//! ([`SigmfSource`], [`SigmfSink`]), and with the cargo feature `seify` a
//! radio (`SdrSource`).
//!
//! A receive chain for an SSB receiver's audio (a recording):
//! [`WavSource`] → [`RealToComplex`] → [`PskReceiver`] (or its stages:
//! [`Agc`] → [`MatchedFilter`] → [`TimingRecovery`] → [`CarrierRecovery`] →
//! [`SoftDemapper`]) → LLRs for a decoder. Tags are not carried through:
//! these blocks change the sample rate or drop the relation between items.
//! For an FM receiver's audio, [`FskDemodulator`] takes 2-FSK to LLRs.

#[cfg(feature = "seify")]
mod sdr_source;
mod sigmf;
mod wav_source;

#[cfg(feature = "seify")]
pub use sdr_source::{SdrSettings, SdrSource};
pub use sigmf::{SigmfSink, SigmfSource};
pub use wav_source::{WavItem, WavSource};

use super::stream::{Backlog, Relay, Transform};
use crate::dsp;
use futuresdr::runtime::dev::prelude::*;
use num_complex::Complex32;

/// A [`dsp`] stage as a [`Transform`]: `run` appends the stage's output for
/// an input chunk.
pub(crate) struct Staged<S, I, O> {
    stage: S,
    run: fn(&mut S, &[I], &mut Vec<O>),
}

impl<S, I, O> Transform<I, O> for Staged<S, I, O> {
    fn process(&mut self, input: &[I], _tags: &[ItemTag], out: &mut Backlog<O>) -> anyhow::Result<()> {
        (self.run)(&mut self.stage, input, &mut out.items);
        Ok(())
    }
}

/// Declares a radio block around a [`dsp`] stage: its documentation in the
/// blocks' template (what it does, its streams, an example), its struct,
/// `new`, its count of items taken and its work through a [`Relay`].
macro_rules! radio_block {
    ($name:ident, $stage:ty, $in:ty => $out:ty, $run:expr, $what:literal, input: $input:literal, output: $output:literal, usage: $usage:literal) => {
        #[doc = $what]
        #[doc = ""]
        #[doc = "# Stream Inputs"]
        #[doc = ""]
        #[doc = concat!("`input`: ", $input)]
        #[doc = ""]
        #[doc = "# Stream Outputs"]
        #[doc = ""]
        #[doc = concat!("`output`: ", $output)]
        #[doc = ""]
        #[doc = "# Usage"]
        #[doc = "```"]
        #[doc = concat!("use gpufec::blocks::", stringify!($name), ";")]
        #[doc = $usage]
        #[doc = "```"]
        #[derive(Block)]
        pub struct $name {
            stage: Staged<$stage, $in, $out>,
            relay: Relay<$out>,
            #[input]
            input: DefaultCpuReader<$in>,
            #[output]
            output: DefaultCpuWriter<$out>,
        }

        impl $name {
            /// The block around `stage`.
            pub fn new(stage: $stage) -> Self {
                Self {
                    stage: Staged { stage, run: $run },
                    relay: Relay::default(),
                    input: DefaultCpuReader::default(),
                    output: super::stream::output(),
                }
            }
        }

        impl super::Counted for $name {
            fn items(&self) -> u64 {
                self.relay.taken()
            }
        }

        #[doc(hidden)]
        impl Kernel for $name {
            async fn work(&mut self, io: &mut WorkIo, _mo: &mut MessageOutputs, _meta: &mut BlockMeta) -> Result<()> {
                self.relay.work(&mut self.stage, &mut self.input, &mut self.output, io)
            }
        }
    };
}

/// Appends `input` to `out` and lets `f` change the appended part in place.
fn in_place<T: Copy>(input: &[T], out: &mut Vec<T>, f: impl FnOnce(&mut [T])) {
    let at = out.len();
    out.extend_from_slice(input);
    f(&mut out[at..]);
}

radio_block! {
    RealToComplex, dsp::RealToComplex, f32 => Complex32, |s, i, o| s.process(i, o),
    "Real samples (an SSB receiver's audio) to complex baseband: the carrier shifted to 0 Hz, low-passed and decimated ([`dsp::RealToComplex`]).",
    input: "real samples (`f32`).",
    output: "baseband samples (`Complex32`), one per `decimation` inputs.",
    usage: "let block = RealToComplex::new(gpufec::dsp::RealToComplex::new(48_000.0, 11_500.0, 8_000.0, 1)?);\n# Ok::<(), gpufec::codes::CodeError>(())"
}

radio_block! {
    Agc, dsp::Agc, Complex32 => Complex32, |s, i, o| in_place(i, o, |x| s.process(x)),
    "Automatic gain control towards a mean power ([`dsp::Agc`]).",
    input: "samples (`Complex32`).",
    output: "the samples scaled, one per input.",
    usage: "let block = Agc::new(gpufec::dsp::Agc::new(1e-3, 1.0)?);\n# Ok::<(), gpufec::codes::CodeError>(())"
}

radio_block! {
    MatchedFilter, dsp::Fir, Complex32 => Complex32, |s, i, o| s.process(i, o),
    "The root-raised-cosine matched filter ([`dsp::Fir`] of [`dsp::rrc_taps`]).",
    input: "samples (`Complex32`).",
    output: "the filtered samples, one per input.",
    usage: "use gpufec::dsp::{Fir, rrc_taps};\nlet block = MatchedFilter::new(Fir::new(rrc_taps(4, 0.35, 10)?, 1)?);\n# Ok::<(), gpufec::codes::CodeError>(())"
}

radio_block! {
    TimingRecovery, dsp::Gardner, Complex32 => Complex32, |s, i, o| s.process(i, o),
    "Gardner symbol timing recovery ([`dsp::Gardner`]): one sample per symbol.",
    input: "matched-filtered samples (`Complex32`) at about unit amplitude.",
    output: "symbols (`Complex32`).",
    usage: "let block = TimingRecovery::new(gpufec::dsp::Gardner::new(4.0, 0.002, 0.707)?);\n# Ok::<(), gpufec::codes::CodeError>(())"
}

radio_block! {
    CarrierRecovery, dsp::CarrierRecovery, Complex32 => Complex32, |s, i, o| in_place(i, o, |x| s.process(x)),
    "Carrier recovery, a frequency acquisition, an FLL and a Costas loop ([`dsp::CarrierRecovery`]).",
    input: "symbols (`Complex32`).",
    output: "the symbols derotated, one per input.",
    usage: "use gpufec::dsp::Constellation;\nlet block = CarrierRecovery::new(gpufec::dsp::CarrierRecovery::new(Constellation::Bpsk, 0.01, 0.707, 0.001)?);\n# Ok::<(), gpufec::codes::CodeError>(())"
}

radio_block! {
    SoftDemapper, dsp::SoftDemapper, Complex32 => f32, |s, i, o| s.process(i, o),
    "LLRs of symbols scaled by a running noise estimate ([`dsp::SoftDemapper`]).",
    input: "symbols (`Complex32`).",
    output: "LLRs (`f32`), one per BPSK symbol, two (I, Q) per QPSK symbol.",
    usage: "use gpufec::dsp::Constellation;\nlet block = SoftDemapper::new(gpufec::dsp::SoftDemapper::new(Constellation::Bpsk, 0.005)?);\n# Ok::<(), gpufec::codes::CodeError>(())"
}

radio_block! {
    DifferentialDecoder, dsp::SoftDifferentialDecoder, f32 => f32, |s, i, o| in_place(i, o, |x| s.process(x)),
    "Differential decoding on soft values ([`dsp::SoftDifferentialDecoder`]).",
    input: "LLRs (`f32`) of differentially precoded symbols.",
    output: "LLRs (`f32`) of the bits, one per input.",
    usage: "let block = DifferentialDecoder::new(Default::default());"
}

radio_block! {
    PskReceiver, dsp::PskReceiver, Complex32 => f32, |s, i, o| s.process(i, o),
    "The whole PSK receiver from the AGC to the LLRs ([`dsp::PskReceiver`]).",
    input: "baseband samples (`Complex32`) at `sps` a symbol.",
    output: "LLRs (`f32`).",
    usage: "let block = PskReceiver::new(gpufec::dsp::PskReceiver::new(Default::default())?);\n# Ok::<(), gpufec::codes::CodeError>(())"
}

radio_block! {
    FskDemodulator, dsp::FskDemodulator, f32 => f32, |s, i, o| s.process(i, o),
    "2-FSK demodulation of an FM discriminator's audio: DC removal, integrate and dump, Gardner timing, LLRs ([`dsp::FskDemodulator`]).",
    input: "discriminator audio (`f32`) at `sps` samples per symbol.",
    output: "LLRs (`f32`), one per symbol.",
    usage: "let block = FskDemodulator::new(gpufec::dsp::FskDemodulator::new(5, 0.005, 0.707, 1e-4, 0.01, false)?);\n# Ok::<(), gpufec::codes::CodeError>(())"
}

radio_block! {
    PskMapper, dsp::SymbolMapper, u8 => Complex32, |s, i, o| s.process(i, o),
    "Bits to BPSK or QPSK symbols of unit energy ([`dsp::SymbolMapper`]).",
    input: "bits (`u8` 0/1).",
    output: "symbols (`Complex32`), one per bit (BPSK) or bit pair (QPSK).",
    usage: "use gpufec::dsp::{Constellation, SymbolMapper};\nlet block = PskMapper::new(SymbolMapper::new(Constellation::Qpsk));"
}

radio_block! {
    BitDifferentialDecoder, dsp::DifferentialDecoder, u8 => u8, |s, i, o| in_place(i, o, |x| s.process(x)),
    "Differential decoding of hard bits ([`dsp::DifferentialDecoder`]): after a Viterbi decoder whose sender precoded before encoding.",
    input: "bits (`u8` 0/1) of a differentially precoded stream.",
    output: "the bits, one per input.",
    usage: "let block = BitDifferentialDecoder::new(Default::default());"
}

radio_block! {
    DifferentialEncoder, dsp::DifferentialEncoder, u8 => u8, |s, i, o| in_place(i, o, |x| s.process(x)),
    "Differential precoding of bits ([`dsp::DifferentialEncoder`]).",
    input: "bits (`u8` 0/1).",
    output: "precoded bits, one per input.",
    usage: "let block = DifferentialEncoder::new(Default::default());"
}

radio_block! {
    PulseShaper, dsp::PulseShaper, Complex32 => Complex32, |s, i, o| s.process(i, o),
    "Root-raised-cosine pulse shaping ([`dsp::PulseShaper`]).",
    input: "symbols (`Complex32`).",
    output: "samples (`Complex32`), `sps` per symbol.",
    usage: "let block = PulseShaper::new(gpufec::dsp::PulseShaper::new(4, 0.35, 10)?);\n# Ok::<(), gpufec::codes::CodeError>(())"
}

radio_block! {
    ChannelModel, dsp::ChannelModel, Complex32 => Complex32, |s, i, o| s.process(i, o),
    "The seeded channel model: clock and timing offsets, carrier offset and drift, phase, AWGN ([`dsp::ChannelModel`]).",
    input: "samples (`Complex32`) of unit-energy symbols.",
    output: "the received samples, about one per input (the clock offset).",
    usage: "use gpufec::dsp::ChannelParams;\nlet block = ChannelModel::new(gpufec::dsp::ChannelModel::new(ChannelParams { es_n0_db: Some(10.0), ..Default::default() })?);\n# Ok::<(), gpufec::codes::CodeError>(())"
}

#[cfg(test)]
mod tests;
