//! The sync family: its settings as a [`Family`], its resolved
//! [`SyncChain`] as a [`Code`](super::super::family::Code), and its block
//! kinds: the encoder of time-varying block codes, the BSID channel, and the
//! MAP decoder, which cuts the received stream itself as it learns where
//! each frame ended.

use super::super::assembly::{Assembly, Node};
use super::super::family::{DecoderBuild, Family, FamilyChain, boxed, downcast, resolve};
use super::super::params::{Args, Literal, Param, ParamType};
use super::groups::{BACKEND, CODE, DECODER_BLOCK, SEED, backend_options, build_on_backend, decoder_options, decoder_ports};
use super::{Kind, StreamType, io};
use crate::blocks::{BsidChannel, Reporting, SyncDecoder, SyncEncoder};
use crate::codes::channel::{Quantizer, noise_variance};
use crate::codes::decode::BatchDecoder;
use crate::codes::error::CodeError;
use crate::codes::encode::Encoder;
use crate::codes::framing::Cutter;
use crate::codes::llr::{Llr, LlrType};
use crate::codes::settings::{Chain, Settings};
use crate::codes::sim::{Axis, Link};
use crate::codes::sync::decoder::Received;
use crate::codes::sync::{self, Bsid, BsidAwgn, BsidParams, MakeDecoder, SyncChain, SyncLink, SyncSettings};
use crate::gpu::{BackendOptions, Choice, DeviceSyncLink, sync_decoder};
use futuresdr::runtime::dev::CpuSample;
use std::any::Any;

/// The family.
pub(crate) const FAMILY: Family = Family {
    name: SyncSettings::FAMILY,
    summary: "insertion/deletion codes: time-varying block codes (q-ary symbols as n-bit codewords, Davey-MacKay among them) over the BSID channel, MAP decoding over the drift",
    fields: SyncSettings::FIELDS,
    resolve: resolve::<SyncSettings>,
    kinds: KINDS,
    default_llr: LlrType::F32,
    axis: P,
};

/// The x axis of the family's curves: the channel probabilities its
/// settings' `sweep` names (Pi = Pd unless told).
const P: Axis = Axis { key: "p", flag: "--p", label: "P", unit: "" };

/// The received items a decoder takes, or a channel gives.
const ITEMS: Param = Param::with_default(
    "items",
    ParamType::Choice(&["bits", "f32", "i8"]),
    Literal::Text("bits"),
    "bits: hard decisions (u8 0/1); f32 or i8: LLRs of BPSK over AWGN at the code's ebn0_db (i8 quantized with the matched 16·σ²)",
);

/// Whether the decoder takes many frames at a time.
const SPECULATIVE: Param = Param::with_default(
    "speculative",
    ParamType::Choice(&["auto", "on", "off"]),
    Literal::Text("auto"),
    "on: cut segments of many frames and decode their windows many at a time, guessing each start and decoding again where a guess was wrong (the bits of frame-at-a-time decoding, at about twice the work); off: one frame at a time; auto: on for the GPU",
);

fn items_type(a: &Args) -> anyhow::Result<StreamType> {
    Ok(match a.text("items")? {
        "f32" => StreamType::F32,
        "i8" => StreamType::I8,
        _ => StreamType::U8,
    })
}

const KINDS: &[Kind] = &[
    Kind {
        name: "SyncEncoder",
        summary: "the time-varying block code's encoder: frames of N·log2 q bits to N codewords of n bits",
        groups: &[&[CODE]],
        ports: |_| Ok(io(Some(StreamType::U8), Some(StreamType::U8))),
        add: |a, asm| {
            let code = asm.code(a, FAMILY.name)?;
            let chain = downcast::<SyncChain>(code.as_ref())?;
            let encoder = sync::SyncEncoder::new(chain.code().clone());
            asm.note_unit(encoder.unit_bits());
            asm.add(SyncEncoder::new(encoder).report_to(&asm.errors))
        },
    },
    Kind {
        name: "BsidChannel",
        summary: "the binary substitution, insertion and deletion channel of the code's Pi, Pd, Ps: hard bits, or LLRs of BPSK over AWGN at the code's ebn0_db",
        groups: &[&[CODE, SEED, ITEMS]],
        ports: |a| Ok(io(Some(StreamType::U8), Some(items_type(a)?))),
        add: |a, asm| {
            let code = asm.code(a, FAMILY.name)?;
            let chain = downcast::<SyncChain>(code.as_ref())?;
            let seed = a.count("seed")?;
            fn soft<T: Llr + CpuSample>(a: &Args, asm: &mut Assembly, chain: &SyncChain, seed: u64) -> anyhow::Result<Node> {
                let (ebn0, quantizer) = a.about("items", llr_channel(chain))?;
                let block = a.about("code", BsidChannel::<T>::soft(chain.params(), ebn0, chain.rate().min(1.0), seed, quantizer))?;
                asm.add(block.report_to(&asm.errors))
            }
            match items_type(a)? {
                StreamType::F32 => soft::<f32>(a, asm, chain, seed),
                StreamType::I8 => soft::<i8>(a, asm, chain, seed),
                _ => asm.add(BsidChannel::<u8>::hard(chain.params(), seed).report_to(&asm.errors)),
            }
        },
    },
    Kind {
        name: "SyncDecoder",
        summary: "MAP decoder of the code's frames over the BSID channel, cutting the received stream where it finds each frame's end, on the CPU or the GPU",
        groups: &[&[CODE, ITEMS, SPECULATIVE], BACKEND, DECODER_BLOCK],
        ports: |a| decoder_ports(a, items_type(a)?),
        add: |a, asm| match items_type(a)? {
            StreamType::F32 => add_decoder::<f32>(a, asm, false),
            StreamType::I8 => add_decoder::<i8>(a, asm, true),
            _ => add_decoder::<u8>(a, asm, false),
        },
    },
];

/// The Eb/N0 of a chain whose channel gives LLRs, and the matched quantizer
/// of its `i8` ones.
fn llr_channel(chain: &SyncChain) -> anyhow::Result<(f64, Quantizer)> {
    let ebn0 = chain.ebn0_db().ok_or_else(|| anyhow::anyhow!("LLRs need the code's ebn0_db (the AWGN after the BSID events)"))?;
    Ok((ebn0, Quantizer::matched(noise_variance(ebn0, chain.rate().min(1.0))?)?))
}

/// Add the decoder of items `T`; `quantized` ones are divided by the matched
/// quantizer's scale of the code's channel.
fn add_decoder<T: Received + CpuSample>(a: &Args, asm: &mut Assembly, quantized: bool) -> anyhow::Result<Node> {
    let code = asm.code(a, FAMILY.name)?;
    let chain = downcast::<SyncChain>(code.as_ref())?;
    if a.text("input")? != "stream" {
        return Err(a.invalid("input", "a frame's received length is known only once it is decoded: the sync decoder cuts the stream itself (input = \"stream\")"));
    }
    let block_options = decoder_options(a)?;
    let input_scale = if quantized { a.about("items", llr_channel(chain))?.1.scale() } else { 1.0 };
    let build = DecoderBuild { options: backend_options(a, asm)?, input_scale, soft: block_options.soft };
    let (decoder, choice) = build_on_backend(a, asm, build.options.backend, || {
        sync_decoder::<T>(chain.code(), chain.params(), chain.stream_config(), build.input_scale, build.soft, &build.options)
    })?;
    // A GPU decodes one frame per launch unless the frames of a batch go together.
    let (decoder, cutter): (Box<dyn BatchDecoder<T>>, Box<dyn Cutter<T>>) = match (a.text("speculative")?, choice.gpu) {
        ("on", _) | ("auto", true) => {
            let (spec, cutter) = a.about("speculative", chain.speculative(decoder))?;
            (Box::new(spec), Box::new(cutter))
        }
        _ => (decoder, Box::new(a.about("code", chain.stream_cutter::<T>())?)),
    };
    let block = a.whole(SyncDecoder::build(decoder, Some(cutter), block_options))?.report_to(&asm.errors);
    asm.note_decoder(choice, block.describe(), block.stats());
    asm.add(block)
}

/// The decoders of a link's points: for the probabilities of each, on the
/// backend of `options`.
fn decoders<T: Received>(chain: &SyncChain, input_scale: f32, options: &BackendOptions) -> MakeDecoder<T> {
    let (code, cfg, options) = (chain.code().clone(), chain.config(), options.clone());
    Box::new(move |p: BsidParams| {
        sync_decoder::<T>(&code, p, cfg, input_scale, false, &options).map(|(d, _)| d).map_err(|e| CodeError::InvalidParameter(format!("{e:#}")))
    })
}

impl FamilyChain for SyncChain {
    const FAMILY: &'static str = FAMILY.name;

    /// A decoder of windows of a stream (the decoder block's), LLRs of `llr`.
    fn decoder_of(&self, llr: LlrType, build: &DecoderBuild) -> anyhow::Result<(Box<dyn Any + Send>, Choice)> {
        fn of<T: Received>(c: &SyncChain, build: &DecoderBuild) -> anyhow::Result<(Box<dyn Any + Send>, Choice)> {
            let (d, choice) = sync_decoder::<T>(c.code(), c.params(), c.stream_config(), build.input_scale, build.soft, &build.options)?;
            Ok((boxed(d), choice))
        }
        match llr {
            LlrType::I8 => of::<i8>(self, build),
            LlrType::F32 => of::<f32>(self, build),
        }
    }

    /// Hard bits when the settings give no Eb/N0, else LLRs of `llr`.
    fn link(&self, llr: LlrType, options: &BackendOptions) -> anyhow::Result<(Box<dyn Link>, Choice)> {
        // Where the decoder of the chain's own channel ends up, and what it is
        // (each point builds its own, for its channel's limits).
        fn choice<T: Received>(c: &SyncChain, scale: f32, options: &BackendOptions) -> anyhow::Result<(Choice, String)> {
            let (decoder, choice) = sync_decoder::<T>(c.code(), c.params(), c.config(), scale, false, options)?;
            Ok((choice, decoder.describe()))
        }
        fn soft<T: Llr + Received>(c: &SyncChain, options: &BackendOptions) -> anyhow::Result<(Box<dyn Link>, Choice)> {
            let (ebn0, quantizer) = llr_channel(c)?;
            let scale = if T::TYPE == LlrType::I8 { quantizer.scale() } else { 1.0 };
            let rate = c.rate().min(1.0);
            let make = Box::new(move |p, seed| BsidAwgn::<T>::with_quantizer(p, ebn0, rate, seed, quantizer));
            let (choice, about) = choice::<T>(c, scale, options)?;
            let link = SyncLink::new(c.code().clone(), c.params(), c.sweep(), c.config().framing, make, decoders::<T>(c, scale, options)).described(about);
            Ok((Box::new(link), choice))
        }
        match (self.ebn0_db(), llr) {
            (None, _) => {
                let make = Box::new(|p, seed| Ok(Bsid::new(p, seed)));
                let (choice, about) = choice::<u8>(self, 1.0, options)?;
                let link = SyncLink::new(self.code().clone(), self.params(), self.sweep(), self.config().framing, make, decoders::<u8>(self, 1.0, options)).described(about);
                Ok((Box::new(link), choice))
            }
            (Some(_), LlrType::I8) => soft::<i8>(self, options),
            (Some(_), LlrType::F32) => soft::<f32>(self, options),
        }
    }

    /// Whole frames on one GPU ([`DeviceSyncLink`]): hard bits when the
    /// settings give no Eb/N0, else LLRs of `llr`; a stream's windows are
    /// refused, saying why.
    fn device_link(&self, llr: LlrType, options: &BackendOptions) -> Option<anyhow::Result<Box<dyn Link>>> {
        if options.pipeline.devices.is_some() {
            return Some(Err(anyhow::anyhow!("the device link runs on one GPU; with several, the decoder spreads over them and the channel runs on the host")));
        }
        let device = options.pipeline.device;
        Some(match (self.ebn0_db(), llr) {
            (None, _) => DeviceSyncLink::<u8>::new(self, device).map(|l| Box::new(l) as Box<dyn Link>),
            (Some(_), LlrType::I8) => DeviceSyncLink::<i8>::new(self, device).map(|l| Box::new(l) as Box<dyn Link>),
            (Some(_), LlrType::F32) => DeviceSyncLink::<f32>::new(self, device).map(|l| Box::new(l) as Box<dyn Link>),
        })
    }

    fn default_x(&self) -> anyhow::Result<f64> {
        Ok(self.own_x()?)
    }
}
