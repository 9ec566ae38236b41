//! The polar family: its settings as a [`Family`], its resolved
//! [`PolarChain`] as a [`Code`](super::super::family::Code), and its block
//! kinds: the encoder of the code's frames (bare codewords, or 5G messages
//! through the whole chain) and the polar decoder (its units from a
//! `Framer`, or cut from the stream itself).

use super::super::assembly::{Assembly, Node};
use super::super::family::{DecoderBuild, Family, FamilyChain, boxed, decoder, downcast, one_gpu_link, resolve};
use super::super::params::Args;
use super::groups::{BACKEND, CODE, DECODER_BLOCK, LLR, backend_options, build_on_backend, by_llr, decoder_options, decoder_ports, llr_type, input_cutter};
use super::{Kind, StreamType, io};
use crate::blocks::{PolarDecoder, PolarEncoder, Reporting};
use crate::codes::encode::Encoder;
use crate::codes::llr::{Llr, LlrType};
use crate::codes::polar::{PolarChain, PolarLink, PolarSettings};
use crate::codes::settings::Settings;
use crate::codes::sim::{EBN0, Link};
use crate::gpu::{BackendOptions, Choice, DevicePolarLink, polar_decoder};
use std::any::Any;

/// The family.
pub(crate) const FAMILY: Family = Family {
    name: PolarSettings::FAMILY,
    summary: "polar codes: bare codewords of N = 2^m (5G, Gaussian-approximation or file construction) or 5G control messages through TS 38.212's chain; BP (f32, or the GPU's i8 model), SC and CA-SCL",
    fields: PolarSettings::FIELDS,
    resolve: resolve::<PolarSettings>,
    kinds: KINDS,
    default_llr: LlrType::I8,
    axis: EBN0,
};

const KINDS: &[Kind] = &[
    Kind {
        name: "PolarEncoder",
        summary: "the polar code's encoder: payloads to codewords of N bits, or 5G messages of K bits to their E sent bits",
        groups: &[&[CODE]],
        ports: |_| Ok(io(Some(StreamType::U8), Some(StreamType::U8))),
        add: |a, asm| {
            let code = asm.code(a, FAMILY.name)?;
            let encoder = downcast::<PolarChain>(code.as_ref())?.frames().encoder();
            asm.note_unit(encoder.unit_bits());
            asm.add(PolarEncoder::new(encoder).report_to(&asm.errors))
        },
    },
    Kind {
        name: "PolarDecoder",
        summary: "polar decoder of the code's codewords or 5G messages (BP, SC or CA-SCL), BP on the CPU or the GPU",
        groups: &[LLR, &[CODE], BACKEND, DECODER_BLOCK],
        ports: |a| decoder_ports(a, llr_type(a)?),
        add: |a, asm| by_llr(a, asm, add_decoder::<i8>, add_decoder::<f32>),
    },
];

fn add_decoder<T: Llr>(a: &Args, asm: &mut Assembly) -> anyhow::Result<Node> {
    let code = asm.code(a, FAMILY.name)?;
    let block_options = decoder_options(a)?;
    let build = DecoderBuild { options: backend_options(a, asm)?, input_scale: 1.0, soft: block_options.soft };
    let cutter = input_cutter::<T>(a, code.as_ref())?;
    let (decoder, choice) = build_on_backend(a, asm, build.options.backend, || decoder::<T>(code.as_ref(), &build))?;
    let block = a.whole(PolarDecoder::build(decoder, cutter, block_options))?.report_to(&asm.errors);
    asm.note_decoder(choice, block.describe(), block.stats());
    asm.add(block)
}

impl FamilyChain for PolarChain {
    const FAMILY: &'static str = FAMILY.name;

    fn decoder_of(&self, llr: LlrType, build: &DecoderBuild) -> anyhow::Result<(Box<dyn Any + Send>, Choice)> {
        Ok(match llr {
            LlrType::I8 => polar_decoder::<i8>(self, build.soft, &build.options).map(|(d, c)| (boxed(d), c))?,
            LlrType::F32 => polar_decoder::<f32>(self, build.soft, &build.options).map(|(d, c)| (boxed(d), c))?,
        })
    }

    fn link(&self, llr: LlrType, options: &BackendOptions) -> anyhow::Result<(Box<dyn Link>, Choice)> {
        fn link<T: Llr>(chain: &PolarChain, options: &BackendOptions) -> anyhow::Result<(Box<dyn Link>, Choice)> {
            let (decoder, choice) = polar_decoder::<T>(chain, false, options)?;
            Ok((Box::new(PolarLink::new(chain.frames().clone(), decoder, None)?), choice))
        }
        match llr {
            LlrType::I8 => link::<i8>(self, options),
            LlrType::F32 => link::<f32>(self, options),
        }
    }

    fn device_link(&self, llr: LlrType, options: &BackendOptions) -> Option<anyhow::Result<Box<dyn Link>>> {
        one_gpu_link(options, |device| -> anyhow::Result<Box<dyn Link>> {
            Ok(match llr {
                LlrType::I8 => Box::new(DevicePolarLink::<i8>::new(self, device)?),
                LlrType::F32 => Box::new(DevicePolarLink::<f32>::new(self, device)?),
            })
        })
    }
}
