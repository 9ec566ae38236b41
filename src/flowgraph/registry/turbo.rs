//! The turbo family: its settings as a [`Family`], its resolved
//! [`TurboChain`] as a [`Code`], and its block kinds: the encoder of the
//! code's blocks (LTE code blocks, or transport blocks through the whole
//! chain) and the turbo decoder (its units from a `Framer`, or cut from the
//! stream itself).

use super::super::assembly::{Assembly, Node};
use super::super::family::{DecoderBuild, Family, FamilyChain, boxed, decoder, downcast, resolve};
use super::super::params::{Args, Param, ParamType};
use super::groups::{BACKEND, CODE, DECODER_BLOCK, LLR, backend_options, build_on_backend, by_llr, decoder_options, decoder_ports, llr_type, input_cutter};
use super::{Kind, StreamType, io};
use crate::blocks::{Reporting, TransportEncoder, TurboDecoder, TurboEncoder};
use crate::codes::encode::Encoder;
use crate::codes::llr::{Llr, LlrType};
use crate::codes::settings::Settings;
use crate::codes::sim::{EBN0, Link};
use crate::codes::turbo::{self, MaxStar, Sent, TurboChain, TurboLink, TurboSettings};
use crate::gpu::{BackendOptions, Choice, DeviceTurboLink, turbo_decoder};
use std::any::Any;

/// The family.
pub(crate) const FAMILY: Family = Family {
    name: TurboSettings::FAMILY,
    summary: "LTE turbo codes (TS 36.212): code blocks of the 188 QPP sizes or any RSC code and interleaver, or whole transport blocks; max-log-MAP or log-MAP with P sub-blocks and their guards",
    fields: TurboSettings::FIELDS,
    resolve: resolve::<TurboSettings>,
    kinds: KINDS,
    default_llr: LlrType::F32,
    axis: EBN0,
};

const KINDS: &[Kind] = &[
    Kind {
        name: "TurboEncoder",
        summary: "the turbo code's encoder: code blocks of K bits to 3K + 12 coded bits, or transport blocks of A bits to G",
        groups: &[&[CODE]],
        ports: |_| Ok(io(Some(StreamType::U8), Some(StreamType::U8))),
        add: |a, asm| {
            let code = asm.code(a, FAMILY.name)?;
            match downcast::<TurboChain>(code.as_ref())?.sent() {
                Sent::Transport(tb) => {
                    let encoder = turbo::TransportEncoder::new(tb.clone());
                    asm.note_unit(encoder.unit_bits());
                    asm.add(TransportEncoder::new(encoder).report_to(&asm.errors))
                }
                Sent::Blocks(c) => {
                    let encoder = turbo::TurboEncoder::new(c.clone());
                    asm.note_unit(encoder.unit_bits());
                    asm.add(TurboEncoder::new(encoder).report_to(&asm.errors))
                }
            }
        },
    },
    Kind {
        name: "TurboDecoder",
        summary: "turbo decoder of the code's code blocks or transport blocks, on the CPU or the GPU",
        groups: &[LLR, &[CODE, INPUT_SCALE], BACKEND, DECODER_BLOCK],
        ports: |a| decoder_ports(a, llr_type(a)?),
        add: |a, asm| by_llr(a, asm, add_decoder::<i8>, add_decoder::<f32>),
    },
];

const INPUT_SCALE: Param = Param::optional(
    "input_scale",
    ParamType::Real,
    "i8 LLRs are divided by this as they are loaded (the channel's quantizer scale); log-MAP needs it with i8, max-log-MAP does not",
);

fn add_decoder<T: Llr>(a: &Args, asm: &mut Assembly) -> anyhow::Result<Node> {
    let code = asm.code(a, FAMILY.name)?;
    let chain = downcast::<TurboChain>(code.as_ref())?;
    let block_options = decoder_options(a)?;
    if block_options.soft && matches!(chain.sent(), Sent::Transport(_)) {
        return Err(a.invalid("soft_output", "transport blocks are decoded to hard decisions only"));
    }
    let input_scale = match (a.real_opt("input_scale")?, T::TYPE, chain.config().max_star) {
        (Some(s), _, _) if s.is_finite() && s > 0.0 => s as f32,
        (Some(_), _, _) => return Err(a.invalid("input_scale", "give a finite factor > 0")),
        (None, LlrType::I8, MaxStar::Exact | MaxStar::Linear) => {
            return Err(a.missing("input_scale", "log-MAP on i8 LLRs needs the quantizer's scale (max-log-MAP does not)"));
        }
        (None, _, _) => 1.0,
    };
    let build = DecoderBuild { options: backend_options(a, asm)?, input_scale, soft: block_options.soft };
    let cutter = input_cutter::<T>(a, code.as_ref())?;
    let (decoder, choice) = build_on_backend(a, asm, build.options.backend, || decoder::<T>(code.as_ref(), &build))?;
    let block = a.whole(TurboDecoder::build(decoder, cutter, block_options))?.report_to(&asm.errors);
    asm.note_decoder(choice, block.describe(), block.stats());
    asm.add(block)
}

impl FamilyChain for TurboChain {
    const FAMILY: &'static str = FAMILY.name;

    fn decoder_of(&self, llr: LlrType, build: &DecoderBuild) -> anyhow::Result<(Box<dyn Any + Send>, Choice)> {
        Ok(match llr {
            LlrType::I8 => turbo_decoder::<i8>(self, build.input_scale, build.soft, &build.options).map(|(d, c)| (boxed(d), c))?,
            LlrType::F32 => turbo_decoder::<f32>(self, build.input_scale, build.soft, &build.options).map(|(d, c)| (boxed(d), c))?,
        })
    }

    fn link(&self, llr: LlrType, options: &BackendOptions) -> anyhow::Result<(Box<dyn Link>, Choice)> {
        fn link<T: Llr>(chain: &TurboChain, options: &BackendOptions) -> anyhow::Result<(Box<dyn Link>, Choice)> {
            let (decoder, choice) = turbo_decoder::<T>(chain, 1.0, false, options)?;
            Ok((Box::new(TurboLink::new(chain, decoder)?), choice))
        }
        match llr {
            LlrType::I8 => link::<i8>(self, options),
            LlrType::F32 => link::<f32>(self, options),
        }
    }

    fn device_link(&self, llr: LlrType, options: &BackendOptions) -> Option<anyhow::Result<Box<dyn Link>>> {
        fn link<T: Llr>(chain: &TurboChain, device: usize) -> anyhow::Result<Box<dyn Link>> {
            Ok(Box::new(DeviceTurboLink::<T>::new(chain, device)?))
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
