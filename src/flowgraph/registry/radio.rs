//! The radio block kinds: a WAV source, SigMF recordings in and out, the receive chain from real or
//! complex samples to LLRs, and the transmit side with the channel model.

use super::super::assembly::{Assembly, Node};
use super::super::params::{Access, Args, Literal, Param, ParamType};
use super::groups::SEED;
use super::{Kind, StreamType, io};
use crate::blocks::{self, Reporting, SigmfSink, SigmfSource, WavItem, WavSource};
use crate::dsp::{self, Constellation, ReceiverSettings};
use num_complex::Complex32;

/// The kinds of this module.
pub(super) const KINDS: &[Kind] = &[
    Kind {
        name: "WavSource",
        summary: "samples of a WAV file (16-bit PCM or float): mono as f32, stereo as cf32 (I left, Q right)",
        groups: &[&[
            Param::required("path", ParamType::Path(Access::Reads), "the file, relative to the working directory"),
            Param::with_default("samples", ParamType::Choice(&["f32", "cf32"]), Literal::Text("f32"), "f32: a mono file; cf32: a stereo I/Q file"),
        ]],
        ports: |a| Ok(io(None, Some(wav_stream(a)?))),
        add: |a, asm| {
            fn add<T: WavItem>(a: &Args, asm: &mut Assembly) -> anyhow::Result<Node> {
                let block = a.about("path", WavSource::<T>::new(a.text("path")?))?;
                asm.add(block.report_to(&asm.errors))
            }
            match wav_stream(a)? {
                StreamType::Cf32 => add::<Complex32>(a, asm),
                _ => add::<f32>(a, asm),
            }
        },
    },
    Kind {
        name: "SigmfSource",
        summary: "samples of a SigMF recording (.sigmf-meta + .sigmf-data): complex datatypes as cf32, real ones as f32, integers scaled to −1..1",
        groups: &[&[
            Param::required("path", ParamType::Recording(Access::Reads), "the recording: its base path or either file, relative to the working directory"),
            RECORDING_SAMPLES,
            Param::optional("sample_rate", ParamType::Real, "the rate the chain is built for, Hz: a recording at another rate is refused"),
        ]],
        ports: |a| Ok(io(None, Some(wav_stream(a)?))),
        add: |a, asm| {
            fn add<T: WavItem>(a: &Args, asm: &mut Assembly) -> anyhow::Result<Node> {
                let block = a.about("path", SigmfSource::<T>::new(a.text("path")?, a.real_opt("sample_rate")?))?;
                asm.note_recording(a.text("path")?, block.meta(), block.samples());
                asm.add(block.report_to(&asm.errors))
            }
            match wav_stream(a)? {
                StreamType::Cf32 => add::<Complex32>(a, asm),
                _ => add::<f32>(a, asm),
            }
        },
    },
    Kind {
        name: "SigmfSink",
        summary: "writes a SigMF recording (.sigmf-data, then .sigmf-meta with datatype, sample rate, frequency and recorder), each file whole",
        groups: &[&[
            Param::required("path", ParamType::Recording(Access::Writes), "the recording: its base path or either file; never one of the run's inputs"),
            RECORDING_SAMPLES,
            Param::with_default("datatype", ParamType::Text, Literal::Text("cf32_le"), "the SigMF datatype written (cf32_le, ci16_le, ci8, cu8, rf32_le, ri16_le, ...; c for cf32, r for f32)"),
            Param::required("sample_rate", ParamType::Real, "samples per second, Hz (above 0)"),
            Param::optional("frequency", ParamType::Real, "the centre frequency, Hz"),
        ]],
        ports: |a| Ok(io(Some(wav_stream(a)?), None)),
        add: |a, asm| {
            fn add<T: WavItem>(a: &Args, asm: &mut Assembly) -> anyhow::Result<Node> {
                let datatype = a.about("datatype", dsp::Datatype::parse(a.text("datatype")?))?;
                let rate = a.real("sample_rate")?;
                if rate.is_nan() || rate <= 0.0 {
                    return Err(a.invalid("sample_rate", format!("{rate} Hz is not a rate above 0")));
                }
                let meta = dsp::SigmfMeta { datatype, sample_rate: rate, frequency: a.real_opt("frequency")?, recorder: None };
                let block = a.about("datatype", SigmfSink::<T>::new(a.text("path")?, meta))?;
                asm.note_file(&block.data_path().display().to_string(), wav_stream(a)?, block.written());
                asm.add(block.report_to(&asm.errors))
            }
            match wav_stream(a)? {
                StreamType::Cf32 => add::<Complex32>(a, asm),
                _ => add::<f32>(a, asm),
            }
        },
    },
    #[cfg(feature = "seify")]
    Kind {
        name: "SdrSource",
        summary: "complex samples from a radio through seify (cargo feature `seify`): tuned, streamed for a number of samples or until stopped",
        groups: &[&[
            Param::with_default("args", ParamType::Text, Literal::Text("driver=dummy"), "seify device arguments: driver=rtlsdr, driver=hackrf, driver=soapy,soapy_driver=NAME, or driver=dummy (zeros, no radio)"),
            Param::required("frequency", ParamType::Real, "centre frequency, Hz (above 0)"),
            Param::required("sample_rate", ParamType::Real, "sample rate, Hz (above 0)"),
            Param::optional("gain", ParamType::Real, "receive gain, dB (0 and up; absent: the radio's own)"),
            Param::with_default("samples", ParamType::Count, Literal::Count(0), "stop after this many samples; 0 runs until Ctrl-C"),
        ]],
        ports: |_| Ok(io(None, Some(StreamType::Cf32))),
        add: |a, asm| {
            let settings = blocks::SdrSettings {
                args: a.text("args")?.to_string(),
                frequency: a.real("frequency")?,
                sample_rate: a.real("sample_rate")?,
                gain: a.real_opt("gain")?,
                samples: Some(a.count("samples")?).filter(|&n| n > 0),
            };
            settings.check().map_err(|(field, problem)| a.invalid(field, problem))?;
            let block = a.about("args", blocks::SdrSource::new(settings))?;
            asm.add(block.report_to(&asm.errors))
        },
    },
    Kind {
        name: "RealToComplex",
        summary: "real samples (SSB audio) to complex baseband: the carrier to 0 Hz, low-passed, decimated",
        groups: &[&[
            Param::required("sample_rate", ParamType::Real, "input sample rate, Hz"),
            Param::required("carrier", ParamType::Real, "the carrier's frequency in the input, Hz (0 up to half the sample rate)"),
            Param::required("bandwidth", ParamType::Real, "Hz kept each side of the carrier"),
            Param::with_default("decimation", ParamType::Count, Literal::Count(1), "keep every n-th sample (1..=64)"),
        ]],
        ports: |_| Ok(io(Some(StreamType::F32), Some(StreamType::Cf32))),
        add: |a, asm| {
            let stage = dsp::RealToComplex::new(a.real("sample_rate")?, a.real("carrier")?, a.real("bandwidth")?, a.size("decimation")?);
            asm.add(blocks::RealToComplex::new(a.about("carrier", stage)?))
        },
    },
    Kind {
        name: "Agc",
        summary: "automatic gain control of complex samples towards a mean power",
        groups: &[&[
            Param::optional("rate", ParamType::Real, "averaging rate per sample (default 0.001)"),
            Param::optional("target", ParamType::Real, "mean power (default 1)"),
        ]],
        ports: |_| Ok(io(Some(StreamType::Cf32), Some(StreamType::Cf32))),
        add: |a, asm| {
            let stage = dsp::Agc::new(real_or(a, "rate", 1e-3)?, real_or(a, "target", 1.0)?);
            asm.add(blocks::Agc::new(a.about("rate", stage)?))
        },
    },
    Kind {
        name: "MatchedFilter",
        summary: "root-raised-cosine matched filter of complex samples",
        groups: &[SHAPE],
        ports: |_| Ok(io(Some(StreamType::Cf32), Some(StreamType::Cf32))),
        add: |a, asm| {
            let taps = a.about("span", dsp::rrc_taps(a.size("sps")?, real_or(a, "roll_off", DEFAULTS.roll_off)?, a.size("span")?))?;
            asm.add(blocks::MatchedFilter::new(a.about("span", dsp::Fir::new(taps, 1))?))
        },
    },
    Kind {
        name: "TimingRecovery",
        summary: "Gardner symbol timing recovery with a polyphase interpolator: one sample per symbol",
        groups: &[&[SPS, LOOP_BANDWIDTH, DAMPING]],
        ports: |_| Ok(io(Some(StreamType::Cf32), Some(StreamType::Cf32))),
        add: |a, asm| {
            let stage = dsp::Gardner::new(a.size("sps")? as f64, real_or(a, "loop_bandwidth", DEFAULTS.timing_bandwidth)?, damping(a)?);
            asm.add(blocks::TimingRecovery::new(a.about("loop_bandwidth", stage)?))
        },
    },
    Kind {
        name: "CarrierRecovery",
        summary: "carrier recovery of symbols: a block FFT frequency acquisition and an FLL for the pull-in, a Costas loop (BPSK or QPSK) and a lock detector",
        groups: &[&[CONSTELLATION, LOOP_BANDWIDTH, DAMPING, FLL_GAIN]],
        ports: |_| Ok(io(Some(StreamType::Cf32), Some(StreamType::Cf32))),
        add: |a, asm| {
            let stage = dsp::CarrierRecovery::new(
                constellation(a)?,
                real_or(a, "loop_bandwidth", DEFAULTS.carrier_bandwidth)?,
                damping(a)?,
                real_or(a, "fll_gain", DEFAULTS.fll_gain)?,
            );
            asm.add(blocks::CarrierRecovery::new(a.about("loop_bandwidth", stage)?))
        },
    },
    Kind {
        name: "SoftDemapper",
        summary: "LLRs of symbols, scaled by a running estimate of their amplitude and noise variance",
        groups: &[&[CONSTELLATION, NOISE_RATE]],
        ports: |_| Ok(io(Some(StreamType::Cf32), Some(StreamType::F32))),
        add: |a, asm| {
            let stage = dsp::SoftDemapper::new(constellation(a)?, real_or(a, "noise_rate", DEFAULTS.noise_rate)?);
            asm.add(blocks::SoftDemapper::new(a.about("noise_rate", stage)?))
        },
    },
    Kind {
        name: "DifferentialDecoder",
        summary: "differential decoding: of LLRs (the exact ⊞ of consecutive values), or of hard bits after a Viterbi decoder (b = d ⊕ d')",
        groups: &[&[Param::with_default(
            "stream",
            ParamType::Choice(&["f32", "u8"]),
            Literal::Text("f32"),
            "f32: LLRs before the decoder; u8: bits after it (a sender that precodes before its encoder)",
        )]],
        ports: |a| {
            let t = if a.text("stream")? == "u8" { StreamType::U8 } else { StreamType::F32 };
            Ok(io(Some(t), Some(t)))
        },
        add: |a, asm| match a.text("stream")? {
            "u8" => asm.add(blocks::BitDifferentialDecoder::new(Default::default())),
            _ => asm.add(blocks::DifferentialDecoder::new(Default::default())),
        },
    },
    Kind {
        name: "PskReceiver",
        summary: "the whole receiver of complex samples: AGC, matched filter, timing, carrier, soft demapper",
        groups: &[
            &[CONSTELLATION],
            SHAPE,
            &[
                Param::optional("agc_rate", ParamType::Real, "AGC averaging rate per sample (default 0.001)"),
                Param::optional("timing_bandwidth", ParamType::Real, "timing loop noise bandwidth Bn·T (default 0.002)"),
                Param::optional("timing_damping", ParamType::Real, "timing loop damping (default 0.707)"),
                Param::optional("carrier_bandwidth", ParamType::Real, "Costas loop noise bandwidth Bn·T (default 0.01)"),
                Param::optional("carrier_damping", ParamType::Real, "Costas loop damping (default 0.707)"),
                FLL_GAIN,
                NOISE_RATE,
            ],
        ],
        ports: |_| Ok(io(Some(StreamType::Cf32), Some(StreamType::F32))),
        add: |a, asm| {
            let settings = ReceiverSettings {
                constellation: constellation(a)?,
                sps: a.size("sps")?,
                roll_off: real_or(a, "roll_off", DEFAULTS.roll_off)?,
                span: a.size("span")?,
                agc_rate: real_or(a, "agc_rate", DEFAULTS.agc_rate)?,
                timing_bandwidth: real_or(a, "timing_bandwidth", DEFAULTS.timing_bandwidth)?,
                timing_damping: real_or(a, "timing_damping", DEFAULTS.timing_damping)?,
                carrier_bandwidth: real_or(a, "carrier_bandwidth", DEFAULTS.carrier_bandwidth)?,
                carrier_damping: real_or(a, "carrier_damping", DEFAULTS.carrier_damping)?,
                fll_gain: real_or(a, "fll_gain", DEFAULTS.fll_gain)?,
                noise_rate: real_or(a, "noise_rate", DEFAULTS.noise_rate)?,
            };
            asm.add(blocks::PskReceiver::new(a.whole(dsp::PskReceiver::new(settings))?))
        },
    },
    Kind {
        name: "FskDemodulator",
        summary: "2-FSK of an FM discriminator's audio to LLRs: DC removal, integrate and dump, Gardner timing",
        groups: &[&[
            SPS,
            LOOP_BANDWIDTH,
            DAMPING,
            Param::optional("dc_rate", ParamType::Real, "averaging rate of the DC removed, per sample (default 0.0001)"),
            NOISE_RATE,
            Param::with_default("invert", ParamType::Flag, Literal::Flag(false), "the higher tone is bit 1"),
        ]],
        ports: |_| Ok(io(Some(StreamType::F32), Some(StreamType::F32))),
        add: |a, asm| {
            let stage = dsp::FskDemodulator::new(
                a.size("sps")?,
                real_or(a, "loop_bandwidth", DEFAULTS.timing_bandwidth)?,
                damping(a)?,
                real_or(a, "dc_rate", 1e-4)?,
                real_or(a, "noise_rate", DEFAULTS.noise_rate)?,
                a.flag("invert")?,
            );
            asm.add(blocks::FskDemodulator::new(a.whole(stage)?))
        },
    },
    Kind {
        name: "PskMapper",
        summary: "bits to BPSK or Gray QPSK symbols of unit energy",
        groups: &[&[CONSTELLATION]],
        ports: |_| Ok(io(Some(StreamType::U8), Some(StreamType::Cf32))),
        add: |a, asm| asm.add(blocks::PskMapper::new(dsp::SymbolMapper::new(constellation(a)?))),
    },
    Kind {
        name: "DifferentialEncoder",
        summary: "differential precoding of bits: d_k = b_k ⊕ d_{k−1}",
        groups: &[],
        ports: |_| Ok(io(Some(StreamType::U8), Some(StreamType::U8))),
        add: |_, asm| asm.add(blocks::DifferentialEncoder::new(Default::default())),
    },
    Kind {
        name: "PulseShaper",
        summary: "root-raised-cosine pulse shaping: sps samples per symbol",
        groups: &[SHAPE],
        ports: |_| Ok(io(Some(StreamType::Cf32), Some(StreamType::Cf32))),
        add: |a, asm| {
            let stage = dsp::PulseShaper::new(a.size("sps")?, real_or(a, "roll_off", DEFAULTS.roll_off)?, a.size("span")?);
            asm.add(blocks::PulseShaper::new(a.about("span", stage)?))
        },
    },
    Kind {
        name: "ChannelModel",
        summary: "a seeded channel: clock and timing offsets, carrier offset and drift, phase, AWGN at an Es/N0",
        groups: &[&[
            Param::optional("esn0_db", ParamType::Real, "Es/N0 of unit-energy symbols, dB (no noise if absent)"),
            Param::optional("sample_rate", ParamType::Real, "sample rate, Hz, for cfo and drift (default 1: per sample)"),
            Param::optional("cfo", ParamType::Real, "carrier frequency offset, Hz (default 0)"),
            Param::optional("drift", ParamType::Real, "change of the carrier offset, Hz/s (default 0)"),
            Param::optional("phase", ParamType::Real, "carrier phase, radians (default 0)"),
            Param::optional("timing", ParamType::Real, "timing offset, 0..=1 sample (default 0)"),
            Param::optional("clock_ppm", ParamType::Real, "sample-rate offset, ppm (default 0)"),
            SEED,
        ]],
        ports: |_| Ok(io(Some(StreamType::Cf32), Some(StreamType::Cf32))),
        add: |a, asm| {
            let rate = real_or(a, "sample_rate", 1.0)?;
            if !(rate.is_finite() && rate > 0.0) {
                return Err(a.invalid("sample_rate", format!("{rate} Hz is not a positive rate")));
            }
            let params = dsp::ChannelParams {
                es_n0_db: a.real_opt("esn0_db")?,
                cfo: real_or(a, "cfo", 0.0)? / rate,
                drift: real_or(a, "drift", 0.0)? / (rate * rate),
                phase: real_or(a, "phase", 0.0)?,
                timing: real_or(a, "timing", 0.0)?,
                clock_ppm: real_or(a, "clock_ppm", 0.0)?,
                seed: a.count("seed")?,
            };
            asm.add(blocks::ChannelModel::new(a.whole(dsp::ChannelModel::new(params))?))
        },
    },
];

/// The receiver's defaults, which the kinds' optional fields fall back to.
const DEFAULTS: ReceiverSettings = ReceiverSettings::DEFAULT;

const RECORDING_SAMPLES: Param =
    Param::with_default("samples", ParamType::Choice(&["cf32", "f32"]), Literal::Text("cf32"), "cf32: a complex datatype (I/Q); f32: a real one");
const CONSTELLATION: Param = Param::with_default("constellation", ParamType::Choice(&["bpsk", "qpsk"]), Literal::Text("bpsk"), "BPSK or Gray QPSK");
const SPS: Param = Param::with_default("sps", ParamType::Count, Literal::Count(4), "samples per symbol (2..=64)");
const SHAPE: &[Param] = &[
    SPS,
    Param::optional("roll_off", ParamType::Real, "RRC roll-off (default 0.35)"),
    Param::with_default("span", ParamType::Count, Literal::Count(10), "RRC pulse span in symbols (span·sps even)"),
];
const LOOP_BANDWIDTH: Param = Param::optional("loop_bandwidth", ParamType::Real, "loop noise bandwidth Bn·T per symbol (default 0.002 timing, 0.01 carrier)");
const DAMPING: Param = Param::optional("damping", ParamType::Real, "loop damping (default 0.707)");
const FLL_GAIN: Param = Param::optional("fll_gain", ParamType::Real, "FLL gain per symbol, 0 turns it off (default 0.001)");
const NOISE_RATE: Param = Param::optional("noise_rate", ParamType::Real, "averaging rate of the noise estimate per symbol (default 0.005)");

fn real_or(a: &Args, field: &str, default: f64) -> anyhow::Result<f64> {
    Ok(a.real_opt(field)?.unwrap_or(default))
}

fn damping(a: &Args) -> anyhow::Result<f64> {
    real_or(a, "damping", DEFAULTS.timing_damping)
}

fn constellation(a: &Args) -> anyhow::Result<Constellation> {
    a.about("constellation", Constellation::parse(a.text("constellation")?))
}

fn wav_stream(a: &Args) -> anyhow::Result<StreamType> {
    Ok(if a.text("samples")? == "cf32" { StreamType::Cf32 } else { StreamType::F32 })
}
