//! A code family as flowgraph files and the command line see it ([`Family`]:
//! its name, its settings' fields, how they resolve, the block kinds it
//! adds), and [`Code`]: what every chain needs of a resolved code, whatever
//! its family — its rate and counted frame (the channel and the BER count),
//! the cutter of its decoder's units (the framer, the decoder block), its
//! decoder on either backend, and its link simulator (`gpufec ber`). Shared
//! code reaches a family only through these two.

use super::registry::Kind;
use crate::codes::decode::BatchDecoder;
use crate::codes::error::CodeResult;
use crate::codes::framing::Cutter;
use crate::codes::llr::{Llr, LlrType};
use crate::codes::settings::{Chain, Field, Noisy, SettingError, Settings};
use crate::codes::sim::{Axis, Link};
use crate::gpu::{BackendOptions, Choice};
use serde_json::{Map, Value};
use std::any::Any;
use std::sync::Arc;

/// How a family resolves settings given as field values.
pub type Resolver = fn(Map<String, Value>) -> Result<Arc<dyn Code>, SettingError>;

/// One code family.
pub struct Family {
    /// Its name: `gpufec ber <name>`, `family = "<name>"` in a `[codes.NAME]` table.
    pub name: &'static str,
    /// One line saying what it is.
    pub summary: &'static str,
    /// Its settings' fields.
    pub fields: &'static [Field],
    /// Resolve settings given as field values.
    pub resolve: Resolver,
    /// The block kinds of the family.
    pub kinds: &'static [Kind],
    /// The LLR type its decoders take unless told.
    pub default_llr: LlrType,
    /// The x axis of its link's curves (Eb/N0, or a channel probability).
    pub axis: Axis,
}

/// What a decoder is built with besides its code.
#[derive(Debug, Clone, PartialEq)]
pub struct DecoderBuild {
    /// Where and how it runs.
    pub options: BackendOptions,
    /// `i8` LLRs are divided by this as they are loaded (the channel's
    /// quantizer scale), for decoders whose result depends on the LLRs' scale.
    pub input_scale: f32,
    /// Also give each bit's a-posteriori LLR (decoders that can).
    pub soft: bool,
}

impl Default for DecoderBuild {
    fn default() -> Self {
        Self { options: BackendOptions::default(), input_scale: 1.0, soft: false }
    }
}

/// A family's resolved settings, as every chain sees them (an object, so
/// that shared code holds any family's): [`FamilyChain`]s are.
pub trait Code: Send + Sync {
    /// The family's name.
    fn family(&self) -> &'static str;

    /// One line naming the code and its decoder's settings.
    fn describe(&self) -> String;

    /// The settings as given, for the record of a run.
    fn settings_json(&self) -> Value;

    /// Information bits over channel bits sent (Eb/N0 = Es/N0 / rate).
    fn rate(&self) -> f64;

    /// Information bits per counted frame (FER).
    fn frame_bits(&self) -> usize;

    /// The cutter of the decoder's units from a stream of `llr` LLRs, as a
    /// `Box<dyn Cutter<T>>` of that type (see [`cutter`]).
    fn cutter_of(&self, llr: LlrType) -> CodeResult<Box<dyn Any + Send>>;

    /// Noisy input of the decoder, its LLRs of `llr` (see [`noisy`]).
    fn noisy_of(&self, llr: LlrType, bits: u64, ebn0_db: f64, seed: u64) -> CodeResult<Box<dyn Any + Send>>;

    /// The decoder of `llr` LLRs, as a `Box<dyn BatchDecoder<T>>` of that
    /// type (see [`decoder`]), and where it ended up.
    fn decoder_of(&self, llr: LlrType, build: &DecoderBuild) -> anyhow::Result<(Box<dyn Any + Send>, Choice)>;

    /// The direct link simulation of the code (bits, encoder, BPSK over
    /// AWGN to `llr` LLRs, cutter, decoder, error count), and where its
    /// decoder ended up.
    fn link(&self, llr: LlrType, options: &BackendOptions) -> anyhow::Result<(Box<dyn Link>, Choice)>;

    /// The link simulated whole on the GPU `options` names (bits, encoder,
    /// channel, decoder and error count on the device), if the family has
    /// one: `None` when it has none, an error saying why when it cannot
    /// simulate this code there.
    fn device_link(&self, llr: LlrType, options: &BackendOptions) -> Option<anyhow::Result<Box<dyn Link>>>;

    /// The point of the family's axis that the settings themselves give
    /// (a channel probability among them), for a curve of one point; the
    /// error says why they give none.
    fn default_x(&self) -> anyhow::Result<f64>;

    /// The family's own type, for its block kinds.
    fn as_any(&self) -> &dyn Any;
}

/// What a family adds to its resolved settings (its [`Chain`]) for the
/// flowgraph and the command line: its name, its decoders and its link.
pub trait FamilyChain: Chain {
    /// The family's name.
    const FAMILY: &'static str;

    /// The decoder of `llr` LLRs, as a `Box<dyn BatchDecoder<T>>` of that type.
    fn decoder_of(&self, llr: LlrType, build: &DecoderBuild) -> anyhow::Result<(Box<dyn Any + Send>, Choice)>;

    /// The direct link simulation of the code with `llr` LLRs.
    fn link(&self, llr: LlrType, options: &BackendOptions) -> anyhow::Result<(Box<dyn Link>, Choice)>;

    /// The link simulated whole on the GPU, for families that have one
    /// (none by default; see [`Code::device_link`]).
    fn device_link(&self, _llr: LlrType, _options: &BackendOptions) -> Option<anyhow::Result<Box<dyn Link>>> {
        None
    }

    /// The point of the family's axis the settings give, or why they give
    /// none (none for an Eb/N0 axis: no code implies a channel).
    fn default_x(&self) -> anyhow::Result<f64> {
        anyhow::bail!("the settings of a {} code give no point of their own", Self::FAMILY)
    }
}

impl<C: FamilyChain> Code for C {
    fn family(&self) -> &'static str {
        C::FAMILY
    }

    fn describe(&self) -> String {
        Chain::describe(self)
    }

    fn settings_json(&self) -> Value {
        serde_json::to_value(Chain::settings(self)).unwrap_or_default()
    }

    fn rate(&self) -> f64 {
        Chain::rate(self)
    }

    fn frame_bits(&self) -> usize {
        Chain::frame_bits(self)
    }

    fn cutter_of(&self, llr: LlrType) -> CodeResult<Box<dyn Any + Send>> {
        Ok(match llr {
            LlrType::I8 => boxed(Chain::cutter::<i8>(self)?),
            LlrType::F32 => boxed(Chain::cutter::<f32>(self)?),
        })
    }

    fn noisy_of(&self, llr: LlrType, bits: u64, ebn0_db: f64, seed: u64) -> CodeResult<Box<dyn Any + Send>> {
        Ok(match llr {
            LlrType::I8 => boxed(Chain::noisy::<i8>(self, bits, ebn0_db, seed)?),
            LlrType::F32 => boxed(Chain::noisy::<f32>(self, bits, ebn0_db, seed)?),
        })
    }

    fn decoder_of(&self, llr: LlrType, build: &DecoderBuild) -> anyhow::Result<(Box<dyn Any + Send>, Choice)> {
        FamilyChain::decoder_of(self, llr, build)
    }

    fn link(&self, llr: LlrType, options: &BackendOptions) -> anyhow::Result<(Box<dyn Link>, Choice)> {
        FamilyChain::link(self, llr, options)
    }

    fn device_link(&self, llr: LlrType, options: &BackendOptions) -> Option<anyhow::Result<Box<dyn Link>>> {
        FamilyChain::device_link(self, llr, options)
    }

    fn default_x(&self) -> anyhow::Result<f64> {
        FamilyChain::default_x(self)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The cutter of `code`'s decoder units from a stream of `T`.
pub fn cutter<T: Llr>(code: &dyn Code) -> CodeResult<Box<dyn Cutter<T>>> {
    let any = code.cutter_of(T::TYPE)?;
    Ok(*any.downcast::<Box<dyn Cutter<T>>>().unwrap_or_else(|_| panic!("the {} family's cutter_of is not of the LLR type asked for", code.family())))
}

/// The decoder of `code` for LLRs of `T`, and where it ended up.
pub fn decoder<T: Llr>(code: &dyn Code, build: &DecoderBuild) -> anyhow::Result<(Box<dyn BatchDecoder<T>>, Choice)> {
    let (any, choice) = code.decoder_of(T::TYPE, build)?;
    let decoder = any.downcast::<Box<dyn BatchDecoder<T>>>().unwrap_or_else(|_| panic!("the {} family's decoder_of is not of the LLR type asked for", code.family()));
    Ok((*decoder, choice))
}

/// Whole units of `code`'s decoder input holding at least `bits`
/// information bits, sent with the bits of `seed` over BPSK and AWGN at
/// `ebn0_db` as LLRs of `T` ([`Chain::noisy`]).
pub fn noisy<T: Llr>(code: &dyn Code, bits: u64, ebn0_db: f64, seed: u64) -> CodeResult<Noisy<T>> {
    let any = code.noisy_of(T::TYPE, bits, ebn0_db, seed)?;
    Ok(*any.downcast::<Noisy<T>>().unwrap_or_else(|_| panic!("the {} family's noisy_of is not of the LLR type asked for", code.family())))
}

/// A family's device link on the one GPU `options` names, made by `make`
/// from the device's index (for [`Code::device_link`]); several GPUs are
/// refused: the decoder then spreads over them and the channel runs on the host.
pub fn one_gpu_link(options: &BackendOptions, make: impl FnOnce(usize) -> anyhow::Result<Box<dyn Link>>) -> Option<anyhow::Result<Box<dyn Link>>> {
    if options.pipeline.devices.is_some() {
        return Some(Err(anyhow::anyhow!("the device link runs on one GPU; with several, the decoder spreads over them and the channel runs on the host")));
    }
    Some(make(options.pipeline.device))
}

/// Box a family's typed cutter or decoder for [`Code::cutter_of`] and
/// [`Code::decoder_of`].
pub fn boxed<X: Send + 'static>(x: X) -> Box<dyn Any + Send> {
    Box::new(x)
}

/// Resolve `values` as settings of `S`: what a family's [`Family::resolve`] is.
/// The values' names and types were checked against `S::FIELDS` by the caller.
pub fn resolve<S: Settings>(values: Map<String, Value>) -> Result<Arc<dyn Code>, SettingError>
where
    S::Resolved: FamilyChain,
{
    let settings: S = serde_json::from_value(Value::Object(values)).map_err(|e| SettingError::new("settings", e))?;
    Ok(Arc::new(settings.resolve()?))
}

/// The family named `name`.
pub fn family(name: &str) -> Option<&'static Family> {
    super::registry::FAMILIES.iter().copied().find(|f| f.name == name)
}

/// Every family.
pub fn families() -> impl Iterator<Item = &'static Family> {
    super::registry::FAMILIES.iter().copied()
}

/// `code` as the family's own resolved type `C` (for the family's block kinds).
pub fn downcast<C: 'static>(code: &dyn Code) -> anyhow::Result<&C> {
    code.as_any().downcast_ref::<C>().ok_or_else(|| anyhow::anyhow!("a code of the {} family where another family's was expected", code.family()))
}
