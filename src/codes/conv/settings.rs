//! The convolutional family's settings and what they resolve into: the code,
//! its puncturing, how the stream is decoded (tiles or terminated frames) and
//! where the erasures go back. The command line and flowgraph files fill
//! [`ConvSettings`]; [`ConvSettings::resolve`] is the one place its rules live.

use super::decoder::{DEFAULT_GROUP, FrameConfig, TileConfig, Tiler, ViterbiMode, default_tile};
use super::link::{ConvSetup, NoisyLlrs};
use super::{ConvCode, ConvEncoder, EncoderMode, MAX_K, MIN_K, PuncturePattern, Punctured, Trellis};
use crate::codes::error::{CodeResult, invalid};
use crate::codes::framing::{BlockCutter, Cutter};
use crate::codes::llr::{Llr, LlrType};
use crate::codes::settings::{Chain, Field, FieldType, Noisy, SettingError, Settings, blame, count_in};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Information bits per terminated frame unless told.
pub const DEFAULT_FRAME: usize = 1024;

/// How a stream of the code is sent and decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// One endless stream, decoded in overlapping tiles.
    #[default]
    Streaming,
    /// Frames with K − 1 tail bits, each decoded whole.
    Terminated,
}

/// The order in which the outputs of a stage are sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OutputOrder {
    /// As `polys` lists the generators (CCSDS 131.0-B: 171 first).
    #[default]
    Polys,
    /// The reverse, inversions moving with their outputs: the NASA-DSN
    /// convention (133 first).
    NasaDsn,
}

/// Where the erasures of a punctured stream go back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Depuncturing {
    /// The decoder where it can (tile f a multiple of the puncturing
    /// period), else a depuncturer before it.
    #[default]
    Auto,
    /// A depuncturer before the decoder (the `Depuncture` block; the link
    /// simulator's host pass).
    Block,
    /// The decoder, as it loads each tile: fewer bytes to the GPU, one
    /// block less in a flowgraph.
    Decoder,
}

/// The convolutional family's settings, every field optional.
///
/// # Example
/// ```
/// use gpufec::codes::conv::ConvSettings;
/// use gpufec::codes::settings::{Chain, Settings};
/// let chain = ConvSettings { rate: Some("3/4".into()), ..Default::default() }.resolve()?;
/// assert_eq!(chain.rate(), 0.75);
/// assert!(chain.decoder_depunctures()); // the default tile 255,32,40 starts every tile on the period
/// let e = ConvSettings { tile: Some("256,20".into()), ..Default::default() }.resolve().unwrap_err();
/// assert_eq!(e.field, "tile");
/// # Ok::<(), gpufec::codes::settings::SettingError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ConvSettings {
    /// Constraint length K.
    pub k: Option<u64>,
    /// Generators in octal, comma-separated.
    pub polys: Option<String>,
    /// Outputs sent inverted: 0/1 per generator, in the order of `polys`.
    pub invert: Option<String>,
    /// The order the outputs are sent in.
    pub order: Option<OutputOrder>,
    /// A standard rate: 1/2, 1/3, 1/4, or a punctured 2/3, 3/4, 5/6, 7/8.
    pub rate: Option<String>,
    /// A puncturing pattern of one's own, one row of 0/1 per generator.
    pub pattern: Option<String>,
    /// Tiled stream or terminated frames.
    pub mode: Option<Mode>,
    /// Bits per terminated frame, or per counted frame of a stream.
    pub frame: Option<u64>,
    /// Tile f,v1,v2 in trellis stages.
    pub tile: Option<String>,
    /// Tiles per work unit.
    pub group: Option<u64>,
    /// `serial` or `parallel:F0`.
    pub traceback: Option<String>,
    /// Where the erasures go back.
    pub depuncture: Option<Depuncturing>,
}

/// Everything a convolutional chain needs, resolved from [`ConvSettings`].
#[derive(Debug, Clone)]
pub struct ConvChain {
    setup: ConvSetup,
    decoder_depunctures: bool,
    settings: ConvSettings,
}

impl Settings for ConvSettings {
    type Resolved = ConvChain;
    const FAMILY: &'static str = "conv";
    const FIELDS: &'static [Field] = &[
        Field::new("k", FieldType::Count, "constraint length K, 3..=9 (default 7)"),
        Field::new(
            "polys",
            FieldType::Text,
            "generators in octal, comma-separated (default by rate: 171,133 for 1/2 and the punctured rates, 133,171,165 for 1/3 as LTE, 133,171,145,133 for 1/4 as DAB)",
        ),
        Field::new(
            "invert",
            FieldType::Text,
            "outputs sent inverted: one 0/1 per generator in the order of polys, e.g. 01 for CCSDS 131.0-B (its second output, 133, inverted); default none",
        ),
        Field::new(
            "order",
            FieldType::Choice(&["polys", "nasa-dsn"]),
            "the order each stage's outputs are sent in: polys (as listed; default) or nasa-dsn (reversed, each inversion moving with its output: 133 first for 171,133)",
        ),
        Field::new("rate", FieldType::Text, "1/2, 1/3, 1/4 (unpunctured), or 2/3, 3/4, 5/6, 7/8 (the DVB-S / 802.11 patterns of the rate-1/2 code); default 1/2"),
        Field::new("pattern", FieldType::Text, "a puncturing pattern of your own instead of a rate: one row of 0/1 per generator, e.g. 110,101 (at most 4 rows of 1024)"),
        Field::new("mode", FieldType::Choice(&["streaming", "terminated"]), "a stream decoded in overlapping tiles, or frames with K−1 tail bits decoded whole (default streaming)"),
        Field::new("frame", FieldType::Count, "information bits per frame, at most 2^26: terminated frames (default 1024), or the frame a stream's FER counts (default the tile's f)"),
        Field::new(
            "tile",
            FieldType::Text,
            "tile f,v1,v2 in trellis stages, f at most 2^16 (default by rate, within 0.05 dB of full frames: 256,20,20 at 1/2, 256,24,28 at 2/3, 255,32,40 at 3/4, 255,44,56 at 5/6, 252,64,68 at 7/8)",
        ),
        Field::new("group", FieldType::Count, "tiles per work unit (default 64; a unit at most 2^24 stages)"),
        Field::new("traceback", FieldType::Text, "serial, or parallel:F0 (subframes of F0 stages) (default serial)"),
        Field::new(
            "depuncture",
            FieldType::Choice(&["auto", "block", "decoder"]),
            "where a punctured stream's erasures go back: decoder (as it loads each tile; f a multiple of the puncturing period), block (a depuncturer before it), auto (default: the decoder where it can)",
        ),
    ];

    fn resolve(&self) -> Result<ConvChain, SettingError> {
        let puncture = match (&self.rate, &self.pattern) {
            (Some(_), Some(_)) => return Err(SettingError::new("pattern", "give either rate or pattern, not both")),
            (None, Some(p)) => blame("pattern", PuncturePattern::parse(p))?,
            (rate, None) => blame("rate", PuncturePattern::standard(rate.as_deref().unwrap_or("1/2")))?,
        };
        let puncture_field = if self.pattern.is_some() { "pattern" } else { "rate" };
        let k = count_in("k", self.k, 7, MIN_K as usize..=MAX_K as usize)? as u32;
        let code = match &self.polys {
            Some(p) => blame("polys", ConvCode::from_octal(k, &p.split(',').collect::<Vec<_>>()))?,
            None if k == 7 => ConvCode::k7_standard(puncture.n())
                .ok_or_else(|| SettingError::new(puncture_field, format!("no standard K=7 code has {} outputs; give polys", puncture.n())))?,
            None => return Err(SettingError::new("k", format!("give the generators of a K={k} code with polys (the defaults are K=7 codes)"))),
        };
        let code = match &self.invert {
            Some(text) => blame("invert", parse_inverted(text, code.n()).and_then(|mask| code.with_inverted(mask)))?,
            None => code,
        };
        let code = match self.order.unwrap_or_default() {
            OutputOrder::Polys => code,
            OutputOrder::NasaDsn => code.reversed(),
        };
        blame(puncture_field, puncture.check_fits(code.n()).map_err(|e| format!("{e} (polys {})", code.polys_octal())))?;
        let trellis = Arc::new(Trellis::new(&code));
        let (mode, frame_bits) = match self.mode.unwrap_or_default() {
            Mode::Terminated => {
                for (field, given) in [("tile", self.tile.is_some()), ("group", self.group.is_some()), ("traceback", self.traceback.is_some())] {
                    if given {
                        return Err(SettingError::new(field, "applies to tiles of a stream, not to mode terminated"));
                    }
                }
                if self.depuncture == Some(Depuncturing::Decoder) && !puncture.is_identity() {
                    return Err(SettingError::new("depuncture", "terminated frames take depunctured LLRs: give block (or auto)"));
                }
                // FrameConfig states the limits.
                let frame = count_in("frame", self.frame, DEFAULT_FRAME, 0..=usize::MAX)?;
                let f = blame("frame", FrameConfig::new(frame, true))?;
                (ViterbiMode::Frame(f), f.frame)
            }
            Mode::Streaming => {
                let text = self.tile.clone().unwrap_or_else(|| default_tile(&puncture));
                // TileConfig states the limits of the tile and the group.
                let group = count_in("group", self.group, DEFAULT_GROUP, 0..=usize::MAX)?;
                let tile = TileConfig::from_text(&text, self.traceback.as_deref().unwrap_or("serial"), group)
                    .map_err(|(field, e)| SettingError::new(field.name(), e))?;
                let frame = count_in("frame", self.frame, tile.f, 0..=usize::MAX)?;
                (ViterbiMode::Tiled(tile), blame("frame", FrameConfig::new(frame, false))?.frame)
            }
        };
        let decoder_depunctures = match (mode, puncture.is_identity(), self.depuncture.unwrap_or_default()) {
            (ViterbiMode::Frame(_), _, _) | (_, true, _) | (_, _, Depuncturing::Block) => false,
            // One definition of where the decoder can depuncture: the punctured tiler's.
            (ViterbiMode::Tiled(t), false, Depuncturing::Auto) => Tiler::<i8>::punctured(t, puncture.clone()).is_ok(),
            (ViterbiMode::Tiled(t), false, Depuncturing::Decoder) => {
                blame("depuncture", Tiler::<i8>::punctured(t, puncture.clone()))?;
                true
            }
        };
        let setup = ConvSetup { trellis, puncture, mode, frame_bits, i8_scale: None };
        blame(puncture_field, setup.validate())?;
        Ok(ConvChain { setup, decoder_depunctures, settings: self.clone() })
    }
}

impl ConvChain {
    /// The code, its puncturing, its decoding mode and counted frame.
    pub fn setup(&self) -> &ConvSetup {
        &self.setup
    }

    /// The trellis of the code.
    pub fn trellis(&self) -> &Arc<Trellis> {
        &self.setup.trellis
    }

    /// The puncturing (the identity at the mother rate).
    pub fn puncture(&self) -> &PuncturePattern {
        &self.setup.puncture
    }

    /// Tiles of a stream, or terminated frames.
    pub fn mode(&self) -> ViterbiMode {
        self.setup.mode
    }

    /// Whether the decoder puts the erasures back as it loads each tile (its
    /// units are then the LLRs as sent).
    pub fn decoder_depunctures(&self) -> bool {
        self.decoder_depunctures
    }

    /// The pattern the decoder depunctures its units with, if it does.
    pub fn decoder_pattern(&self) -> Option<&PuncturePattern> {
        self.decoder_depunctures.then_some(&self.setup.puncture)
    }

    /// The pattern a depuncturer before the decoder puts erasures back
    /// with; `None` when the stream reaches the decoder as it is (unpunctured,
    /// or depunctured by the decoder).
    pub fn depuncturer_pattern(&self) -> Option<&PuncturePattern> {
        (!self.decoder_depunctures && !self.setup.puncture.is_identity()).then_some(&self.setup.puncture)
    }

    /// The code's own encoder (before puncturing).
    pub fn encoder(&self) -> CodeResult<ConvEncoder> {
        let mode = match self.setup.mode {
            ViterbiMode::Tiled(_) => EncoderMode::Streaming,
            ViterbiMode::Frame(f) => EncoderMode::Terminated { frame: f.frame },
        };
        ConvEncoder::new(self.setup.trellis.clone(), mode)
    }

    /// The transmitter's encoder: the code's, punctured.
    pub fn punctured_encoder(&self) -> CodeResult<Punctured<ConvEncoder>> {
        self.setup.encoder()
    }

}

impl Chain for ConvChain {
    type Settings = ConvSettings;

    /// The settings it was resolved from.
    fn settings(&self) -> &ConvSettings {
        &self.settings
    }

    /// `K=7 (171,133) rate 3/4, tiles 255,32,40 serial ×64, depunctured by the decoder`.
    fn describe(&self) -> String {
        let t = &self.setup.trellis;
        let inverted = match t.code().inverted() {
            0 => String::new(),
            m => format!("; inverted {}", (0..t.n()).map(|i| if m >> i & 1 == 1 { '1' } else { '0' }).collect::<String>()),
        };
        let mut s = format!("K={} ({}{inverted}) rate {}", t.k(), t.code().polys_octal(), rate_name(&self.setup.puncture));
        match self.setup.mode {
            ViterbiMode::Tiled(tile) => s += &format!(", tiles {},{},{} {} ×{}", tile.f, tile.v1, tile.v2, tile.traceback, tile.group),
            ViterbiMode::Frame(f) => s += &format!(", terminated frames of {}", f.frame),
        }
        if self.decoder_depunctures {
            s += ", depunctured by the decoder";
        }
        s
    }

    /// Information bits over channel bits sent (puncturing and tails counted).
    fn rate(&self) -> f64 {
        // Resolving built this encoder once already: it cannot fail now.
        self.setup.effective_rate().unwrap_or(f64::NAN)
    }

    /// Information bits per counted frame.
    fn frame_bits(&self) -> usize {
        self.setup.frame_bits
    }

    /// The cutter of the stream the decoder takes (punctured when the
    /// decoder depunctures, otherwise depunctured): its tiles, or its frames.
    fn cutter<T: Llr>(&self) -> CodeResult<Box<dyn Cutter<T>>> {
        let (n, inverted) = (self.setup.trellis.n(), self.setup.trellis.code().inverted());
        Ok(match (self.setup.mode, self.decoder_pattern()) {
            (ViterbiMode::Tiled(t), Some(p)) => Box::new(Tiler::punctured(t, p.clone())?.inverting(inverted)),
            (ViterbiMode::Tiled(t), None) => Box::new(Tiler::new(t, n).inverting(inverted)),
            (ViterbiMode::Frame(f), _) => Box::new(BlockCutter::fixed(f.stages(self.setup.trellis.k()) * n)?.naming("terminated frame")),
        })
    }

    fn noisy<T: Llr>(&self, bits: u64, ebn0_db: f64, seed: u64) -> CodeResult<Noisy<T>> {
        let (llrs, info_bits) = NoisyLlrs::<T>::new(&self.setup, ebn0_db, seed)?.units(self.setup.mode, self.decoder_depunctures, bits)?;
        let scale = if T::TYPE == LlrType::I8 { self.setup.quantizer(ebn0_db)?.scale() } else { 1.0 };
        Ok(Noisy { llrs, info_bits, scale })
    }
}

/// The inverted outputs `01`-style (one digit per output, the first for
/// output 0) as a mask, bit i for output i.
fn parse_inverted(text: &str, n: usize) -> CodeResult<u8> {
    let digits: Vec<char> = text.trim().chars().collect();
    if digits.len() != n || digits.iter().any(|&c| c != '0' && c != '1') {
        return Err(invalid!("'{text}' is not one 0 or 1 for each of the code's {n} outputs (e.g. 01: the second inverted)"));
    }
    Ok(digits.iter().enumerate().fold(0, |m, (i, &c)| m | u8::from(c == '1') << i))
}

/// The rate a pattern gives, as a fraction: `1/2`, `3/4`, `5/9`.
fn rate_name(p: &PuncturePattern) -> String {
    let (num, den) = (p.period(), p.kept_per_period());
    let g = gcd(num, den);
    format!("{}/{}", num / g, den / g)
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(s: ConvSettings) -> Result<ConvChain, SettingError> {
        s.resolve()
    }

    #[test]
    fn defaults_are_the_k7_rate_half_stream() {
        let c = resolve(ConvSettings::default()).unwrap();
        assert_eq!(c.describe(), "K=7 (171,133) rate 1/2, tiles 256,20,20 serial ×64");
        assert_eq!((c.rate(), c.frame_bits(), c.decoder_depunctures()), (0.5, 256, false));
        let third = resolve(ConvSettings { rate: Some("1/3".into()), ..Default::default() }).unwrap();
        assert_eq!(third.trellis().code().polys_octal(), "133,171,165");
    }

    #[test]
    fn ccsds_and_nasa_dsn_conventions_resolve_into_the_code() {
        let ccsds = resolve(ConvSettings { invert: Some("01".into()), ..Default::default() }).unwrap();
        assert_eq!(ccsds.describe(), "K=7 (171,133; inverted 01) rate 1/2, tiles 256,20,20 serial ×64");
        assert_eq!(ccsds.trellis().output(0, 0), 0b10);
        let dsn = resolve(ConvSettings { invert: Some("01".into()), order: Some(OutputOrder::NasaDsn), ..Default::default() }).unwrap();
        assert_eq!(dsn.describe(), "K=7 (133,171; inverted 10) rate 1/2, tiles 256,20,20 serial ×64");
        let plain_dsn = resolve(ConvSettings { order: Some(OutputOrder::NasaDsn), ..Default::default() }).unwrap();
        assert_eq!(plain_dsn.trellis().code().polys_octal(), "133,171");
    }

    #[test]
    fn where_the_erasures_go_follows_the_tile() {
        let at = |tile: &str, d: Option<Depuncturing>| {
            resolve(ConvSettings { rate: Some("3/4".into()), tile: Some(tile.into()), depuncture: d, ..Default::default() })
        };
        assert!(at("255,32,40", None).unwrap().decoder_depunctures());
        assert!(!at("256,32,40", None).unwrap().decoder_depunctures(), "f not a multiple of the period 3");
        assert_eq!(at("256,32,40", Some(Depuncturing::Decoder)).unwrap_err().field, "depuncture");
        let block = at("255,32,40", Some(Depuncturing::Block)).unwrap();
        assert_eq!((block.decoder_pattern(), block.depuncturer_pattern().map(|p| p.to_string())), (None, Some("101,110".into())));
    }

    #[test]
    fn every_error_names_its_field() {
        for (s, field) in [
            (ConvSettings { k: Some(12), ..Default::default() }, "k"),
            (ConvSettings { k: Some(5), ..Default::default() }, "k"),
            (ConvSettings { polys: Some("171,1x3".into()), ..Default::default() }, "polys"),
            (ConvSettings { rate: Some("4/5".into()), ..Default::default() }, "rate"),
            (ConvSettings { rate: Some("1/2".into()), pattern: Some("11,11".into()), ..Default::default() }, "pattern"),
            (ConvSettings { pattern: Some("110,101,011".into()), polys: Some("171,133".into()), ..Default::default() }, "pattern"),
            (ConvSettings { mode: Some(Mode::Terminated), tile: Some("64,8,8".into()), ..Default::default() }, "tile"),
            (ConvSettings { mode: Some(Mode::Terminated), frame: Some(0), ..Default::default() }, "frame"),
            (ConvSettings { mode: Some(Mode::Terminated), frame: Some(1 << 27), ..Default::default() }, "frame"),
            (ConvSettings { frame: Some(0), ..Default::default() }, "frame"),
            (ConvSettings { group: Some(0), ..Default::default() }, "group"),
            (ConvSettings { invert: Some("011".into()), ..Default::default() }, "invert"),
            (ConvSettings { invert: Some("0x".into()), ..Default::default() }, "invert"),
            (ConvSettings { traceback: Some("parallel:0".into()), ..Default::default() }, "traceback"),
            (ConvSettings { rate: Some("3/4".into()), mode: Some(Mode::Terminated), depuncture: Some(Depuncturing::Decoder), ..Default::default() }, "depuncture"),
        ] {
            assert_eq!(resolve(s.clone()).unwrap_err().field, field, "{s:?}");
        }
    }

    #[test]
    fn the_cutter_cuts_what_the_decoder_takes() {
        let c = resolve(ConvSettings { rate: Some("3/4".into()), ..Default::default() }).unwrap();
        assert!(c.cutter::<i8>().unwrap().describe().contains("punctured"), "{}", c.cutter::<i8>().unwrap().describe());
        let f = resolve(ConvSettings { mode: Some(Mode::Terminated), frame: Some(100), ..Default::default() }).unwrap();
        assert_eq!(f.cutter::<f32>().unwrap().max_unit_items(), 2 * 106);
        assert_eq!((f.rate(), f.frame_bits()), (100.0 / 212.0, 100));
    }
}
