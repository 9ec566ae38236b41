//! The convolutional family: its settings as a [`Family`], its resolved
//! [`ConvChain`] as a [`Code`], and its block kinds (encoder, puncturer,
//! depuncturer, Viterbi decoder), each taking what it needs from the code.

use super::super::assembly::{Assembly, Node};
use super::super::family::{DecoderBuild, Family, FamilyChain, boxed, decoder, downcast, resolve};
use super::super::params::{Args, Literal, Param, ParamType};
use super::groups::{BACKEND, CODE, DECODER_BLOCK, LLR, backend_options, build_on_backend, by_llr, decoder_options, decoder_ports, llr_type, same_llr_in_out, input_cutter};
use super::{Kind, StreamType, io};
use crate::blocks::{ConvEncoder, Depuncture, PairSync, Puncture, Reporting, ViterbiDecoder};
use crate::codes::conv::{ConvChain, ConvLink, ConvSettings, ViterbiLlr};
use crate::codes::encode::Encoder;
use crate::codes::llr::{Llr, LlrType};
use crate::codes::settings::Settings;
use crate::codes::sim::{EBN0, Link};
use crate::gpu::{BackendOptions, Choice, DeviceConvLink, ViterbiTuning, viterbi_decoder};
use std::any::Any;

/// The family.
pub(crate) const FAMILY: Family = Family {
    name: ConvSettings::FAMILY,
    summary: "convolutional codes (K=7 171,133 by default; rates 1/2 to 1/4, punctured 2/3 to 7/8), Viterbi decoding of tiles or terminated frames",
    fields: ConvSettings::FIELDS,
    resolve: resolve::<ConvSettings>,
    kinds: KINDS,
    default_llr: LlrType::I8,
    axis: EBN0,
};

const KINDS: &[Kind] = &[
    Kind {
        name: "ConvEncoder",
        summary: "the convolutional code's encoder, streaming or terminated frames (before puncturing)",
        groups: &[&[CODE]],
        ports: |_| Ok(io(Some(StreamType::U8), Some(StreamType::U8))),
        add: |a, asm| {
            let code = asm.code(a, FAMILY.name)?;
            let encoder = a.about("code", downcast::<ConvChain>(code.as_ref())?.encoder())?;
            asm.note_unit(encoder.unit_bits());
            asm.add(ConvEncoder::new(encoder).report_to(&asm.errors))
        },
    },
    Kind {
        name: "Puncture",
        summary: "deletes the coded bits the code's puncturing pattern does not keep (passes the stream on at the mother rate)",
        groups: &[&[CODE]],
        ports: |_| Ok(io(Some(StreamType::U8), Some(StreamType::U8))),
        add: |a, asm| {
            let code = asm.code(a, FAMILY.name)?;
            let chain = downcast::<ConvChain>(code.as_ref())?;
            if chain.puncture().is_identity() {
                return asm.wire::<Puncture>();
            }
            asm.add(a.about("code", Puncture::new(chain.puncture().clone(), chain.trellis().n()))?)
        },
    },
    Kind {
        name: "Depuncture",
        summary: "puts erasures (LLR 0) back where the puncturer deleted bits, unless the code's decoder does (then the stream passes on)",
        groups: &[LLR, &[CODE]],
        ports: same_llr_in_out,
        add: |a, asm| {
            fn add<T: Llr>(a: &Args, asm: &mut Assembly) -> anyhow::Result<Node> {
                let code = asm.code(a, FAMILY.name)?;
                let chain = downcast::<ConvChain>(code.as_ref())?;
                // A stream that ends inside a stage is still refused, by the
                // cutter of the framer or decoder that reads it.
                match chain.depuncturer_pattern() {
                    None => asm.wire::<Depuncture<T>>(),
                    Some(p) => {
                        let block = a.about("code", Depuncture::<T>::new(p.clone(), chain.trellis().n()))?.report_to(&asm.errors);
                        asm.add(block)
                    }
                }
            }
            by_llr(a, asm, add::<i8>, add::<f32>)
        },
    },
    Kind {
        name: "PairSync",
        summary: "drops the LLRs before the first whole trellis stage of a receiver's stream, and turns QPSK pairs back by 90° where needed (decided on each window: the candidate whose decoded bits re-encode closest to it)",
        groups: &[&[
            CODE,
            Param::with_default("window", ParamType::Count, Literal::Count(1024), "stages the decision is taken on (64..=2^20)"),
            Param::with_default("constellation", ParamType::Choice(&["bpsk", "qpsk"]), Literal::Text("bpsk"), "qpsk: also the pairs turned back by 90° (a rate-1/2 code)"),
        ]],
        ports: |_| Ok(io(Some(StreamType::F32), Some(StreamType::F32))),
        add: |a, asm| {
            let code = asm.code(a, FAMILY.name)?;
            let chain = downcast::<ConvChain>(code.as_ref())?;
            if !chain.puncture().is_identity() {
                return Err(a.invalid("code", "a punctured code's stages repeat over the puncturing period; PairSync takes an unpunctured stream"));
            }
            let mut finder = a.about("window", crate::codes::conv::PairSync::new(chain.trellis().clone(), a.size("window")?))?;
            if a.text("constellation")? == "qpsk" {
                finder = a.about("constellation", finder.with_rotations())?;
            }
            asm.add(PairSync::new(finder).report_to(&asm.errors))
        },
    },
    Kind {
        name: "ViterbiDecoder",
        summary: "Viterbi decoder of the code's tiles or terminated frames, on the CPU or the GPU",
        groups: &[LLR, &[CODE], BACKEND, DECODER_BLOCK],
        ports: |a| decoder_ports(a, llr_type(a)?),
        add: |a, asm| by_llr(a, asm, add_viterbi::<i8>, add_viterbi::<f32>),
    },
];

fn add_viterbi<T: Llr>(a: &Args, asm: &mut Assembly) -> anyhow::Result<Node> {
    let code = asm.code(a, FAMILY.name)?;
    let block_options = decoder_options(a)?;
    let build = DecoderBuild { options: backend_options(a, asm)?, soft: block_options.soft, ..Default::default() };
    let cutter = input_cutter::<T>(a, code.as_ref())?;
    let (decoder, choice) = build_on_backend(a, asm, build.options.backend, || decoder::<T>(code.as_ref(), &build))?;
    let block = a.whole(ViterbiDecoder::build(decoder, cutter, block_options))?.report_to(&asm.errors);
    asm.note_decoder(choice, block.describe(), block.stats());
    asm.add(block)
}

impl FamilyChain for ConvChain {
    const FAMILY: &'static str = FAMILY.name;

    fn decoder_of(&self, llr: LlrType, build: &DecoderBuild) -> anyhow::Result<(Box<dyn Any + Send>, Choice)> {
        Ok(match llr {
            LlrType::I8 => typed::<i8>(self, &build.options).map(|(d, c)| (boxed(d), c))?,
            LlrType::F32 => typed::<f32>(self, &build.options).map(|(d, c)| (boxed(d), c))?,
        })
    }

    fn link(&self, llr: LlrType, options: &BackendOptions) -> anyhow::Result<(Box<dyn Link>, Choice)> {
        fn link<T: ViterbiLlr>(chain: &ConvChain, options: &BackendOptions) -> anyhow::Result<(Box<dyn Link>, Choice)> {
            let (decoder, choice) = typed::<T>(chain, options)?;
            Ok((Box::new(ConvLink::of(chain, decoder)?), choice))
        }
        match llr {
            LlrType::I8 => link::<i8>(self, options),
            LlrType::F32 => link::<f32>(self, options),
        }
    }

    fn device_link(&self, llr: LlrType, options: &BackendOptions) -> Option<anyhow::Result<Box<dyn Link>>> {
        fn link<T: ViterbiLlr>(chain: &ConvChain, device: usize) -> anyhow::Result<Box<dyn Link>> {
            Ok(Box::new(DeviceConvLink::<T>::new(chain, device)?))
        }
        if options.pipeline.devices.is_some() {
            return Some(Err(anyhow::anyhow!("the device link runs on one GPU; with several, the decoder spreads over them and the channel runs on the host")));
        }
        let device = options.pipeline.device;
        Some(match llr {
            LlrType::I8 => link::<i8>(self, device),
            LlrType::F32 => link::<f32>(self, device),
        })
    }
}

/// The chain's Viterbi decoder of `T` LLRs on the backend `options` asks for.
fn typed<T: ViterbiLlr>(chain: &ConvChain, options: &BackendOptions) -> anyhow::Result<(Box<dyn crate::codes::BatchDecoder<T>>, Choice)> {
    viterbi_decoder::<T>(chain.trellis().clone(), chain.mode(), chain.decoder_pattern(), options, ViterbiTuning::default())
}
