//! A code family's settings: plain data that the command line (`gpufec ber
//! <family> --field value`) and flowgraph files (`[codes.NAME]` tables) fill
//! field by field, resolved once into everything the family's encoder,
//! decoder, cutter and link need. The rules (defaults, limits, which fields
//! go together) live in the resolver alone; the callers only fill.

use crate::codes::channel::{BpskAwgn, Quantizer, noise_variance};
use crate::codes::encode::Encoder;
use crate::codes::error::CodeResult;
use crate::codes::framing::Cutter;
use crate::codes::llr::{Llr, LlrType};
use crate::codes::sim::{Transmitter, noise_seed};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::fmt;

/// The kind of value a settings field holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    /// A whole number ≥ 0.
    Count,
    /// A real number.
    Real,
    /// Text (a list, a pattern).
    Text,
    /// The path of a file the settings read (an interleaver): no output of a
    /// run may be that file.
    InputFile,
    /// One of the listed words.
    Choice(&'static [&'static str]),
}

/// One field of a family's settings: its name (as a flowgraph file writes
/// it; the command line writes `--name` with `-` for `_`), its type, and one
/// line saying what it sets, its default and its limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// The name.
    pub name: &'static str,
    /// Its type.
    pub ty: FieldType,
    /// What it sets, its default and its limit.
    pub doc: &'static str,
}

impl Field {
    /// A field.
    pub const fn new(name: &'static str, ty: FieldType, doc: &'static str) -> Self {
        Self { name, ty, doc }
    }
}

/// A setting that cannot be resolved, naming the field at fault, so that the
/// command line can say `--tile: ...` and a flowgraph file `field 'tile': ...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingError {
    /// The field at fault.
    pub field: &'static str,
    /// What is wrong with it.
    pub problem: String,
}

impl SettingError {
    /// An error about `field`.
    pub fn new(field: &'static str, problem: impl fmt::Display) -> Self {
        Self { field, problem: problem.to_string() }
    }
}

impl fmt::Display for SettingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.problem)
    }
}

impl std::error::Error for SettingError {}

/// `result` with its error blamed on `field`.
pub fn blame<T, E: fmt::Display>(field: &'static str, result: Result<T, E>) -> Result<T, SettingError> {
    result.map_err(|e| SettingError::new(field, e))
}

/// What a family's settings resolve into, as every chain sees it: the
/// channel's rate, the counted frame, the cutter of the decoder's units, and
/// noisy input for the decoder.
pub trait Chain: Send + Sync + 'static {
    /// The settings it was resolved from.
    type Settings: Serialize;

    /// The settings it was resolved from.
    fn settings(&self) -> &Self::Settings;

    /// One line naming the code and its decoder's settings.
    fn describe(&self) -> String;

    /// Information bits over channel bits sent (Eb/N0 = Es/N0 / rate).
    fn rate(&self) -> f64;

    /// Information bits per counted frame (FER).
    fn frame_bits(&self) -> usize;

    /// The cutter of the decoder's units from a stream of LLRs of `T`.
    fn cutter<T: Llr>(&self) -> CodeResult<Box<dyn Cutter<T>>>;

    /// Whole units of the decoder's input holding at least `bits`
    /// information bits, sent with the bits of `seed` over BPSK and AWGN at
    /// `ebn0_db` as LLRs of `T` (`i8` quantized with the matched scale
    /// matched scale): the input of benchmarks and of tests that compare decoders.
    fn noisy<T: Llr>(&self, bits: u64, ebn0_db: f64, seed: u64) -> CodeResult<Noisy<T>>;
}

/// Noisy input of a decoder ([`Chain::noisy`]).
#[derive(Debug, Clone)]
pub struct Noisy<T> {
    /// Whole units, back to back, as the chain's cutter cuts them.
    pub llrs: Vec<T>,
    /// The information bits they hold.
    pub info_bits: u64,
    /// What `i8` LLRs are to be divided by (the matched quantizer's scale; 1 for `f32`).
    pub scale: f32,
}

/// [`Chain::noisy`] of a chain that sends whole frames of `frame_bits`
/// information bits through `encoder` at `rate`: the fewest whole frames
/// holding at least `bits` bits, sent with the bits of `seed` over BPSK and
/// AWGN at `ebn0_db` as LLRs of `T` (`i8` with the matched quantizer).
pub fn noisy_frames<T: Llr>(encoder: impl Encoder, rate: f64, frame_bits: usize, bits: u64, ebn0_db: f64, seed: u64) -> CodeResult<Noisy<T>> {
    let frame = frame_bits as u64;
    let info_bits = bits.div_ceil(frame).max(1) * frame;
    let send = usize::try_from(info_bits).map_err(|_| crate::codes::error::invalid!("{bits} bits do not fit this machine"))?;
    let quantizer = Quantizer::matched(noise_variance(ebn0_db, rate)?)?;
    let scale = if T::TYPE == LlrType::I8 { quantizer.scale() } else { 1.0 };
    let channel = BpskAwgn::<T>::with_quantizer(ebn0_db, rate, noise_seed(seed), quantizer)?;
    let (mut info, mut llrs) = (Vec::new(), Vec::new());
    Transmitter::new(seed, encoder, channel).send(send, &mut info, &mut llrs)?;
    Ok(Noisy { llrs, info_bits, scale })
}

/// A family's settings type: every field optional (absent takes the
/// default its [`Field`] states), serde-friendly, resolved by one resolver.
pub trait Settings: Default + Clone + fmt::Debug + Serialize + DeserializeOwned + Send + Sync + 'static {
    /// What the settings resolve into.
    type Resolved: Chain;

    /// The family's name (`conv`, `turbo`).
    const FAMILY: &'static str;

    /// Every field, in the order help texts list them.
    const FIELDS: &'static [Field];

    /// Check every field against its limit and the others, and build what
    /// the family's chain needs; the error names the field at fault.
    fn resolve(&self) -> Result<Self::Resolved, SettingError>;
}

/// A count field within `range`, or `default` when absent.
pub fn count_in(field: &'static str, value: Option<u64>, default: usize, range: std::ops::RangeInclusive<usize>) -> Result<usize, SettingError> {
    match value {
        None => Ok(default),
        Some(v) => match usize::try_from(v) {
            Ok(v) if range.contains(&v) => Ok(v),
            _ => Err(SettingError::new(field, format!("{v} is outside {}..={}", range.start(), range.end()))),
        },
    }
}
