//! The polar family's settings and what they resolve into: bare codewords of
//! N bits (any construction, a CRC over the information bits if asked) or
//! whole 5G control messages of K bits sent in E, and the decoder: BP (its
//! iterations, early stop, arithmetic), SC or CA-SCL. The command line and
//! flowgraph files fill [`PolarSettings`]; [`PolarSettings::resolve`] is the
//! one place its rules live.

use super::decoder::{Algorithm, BP_ALPHA, BpConfig, BpPrecision, EarlyStop, MAX_ITERATIONS};
use super::link::PolarFrames;
use super::nr::{MAX_DCI_A, MAX_E, MAX_UCI_A, NrPolar};
use super::{Construction, InfoCheck, MAX_N, MIN_N, NR_MAX_N, PolarSpec};
use crate::codes::crc::{CRC6, CRC11, CRC16, CRC24C, Crc};
use crate::codes::error::CodeResult;
use crate::codes::framing::{BlockCutter, Cutter};
use crate::codes::llr::Llr;
use crate::codes::settings::{Chain, Field, FieldType, Noisy, SettingError, Settings, blame, count_in, noisy_frames};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// N of bare codewords unless told.
pub const DEFAULT_N: usize = 1024;
/// The design Eb/N0 (dB) of the Gaussian approximation where the 5G
/// sequence ends (N > 1024) and no construction is given.
pub const DEFAULT_GA_DB: f64 = 2.0;

/// When BP stops, as a user says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StopWhen {
    /// When û·G equals x̂.
    G,
    /// When the information bits pass the CRC.
    Crc,
    /// Never: every iteration runs.
    Never,
}

/// BP's messages, as a user says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// The `i8` model, what the GPU computes.
    I8,
    /// The `f32` reference (CPU only).
    F32,
}

/// A CRC over the information bits of bare codewords.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CrcName {
    /// None.
    None,
    /// CRC6 (TS 38.212 §5.1).
    Crc6,
    /// CRC11.
    Crc11,
    /// CRC16.
    Crc16,
    /// CRC24C.
    Crc24c,
}

impl CrcName {
    fn crc(self) -> Option<&'static Crc> {
        match self {
            CrcName::None => None,
            CrcName::Crc6 => Some(&CRC6),
            CrcName::Crc11 => Some(&CRC11),
            CrcName::Crc16 => Some(&CRC16),
            CrcName::Crc24c => Some(&CRC24C),
        }
    }
}

/// Which 5G control message the chain carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MessageKind {
    /// Uplink control information (CRC6 or CRC11, one or two code blocks).
    Uci,
    /// Downlink control information (CRC24C masked by the RNTI).
    Dci,
}

/// The polar family's settings, every field optional.
///
/// # Example
/// ```
/// use gpufec::codes::polar::PolarSettings;
/// use gpufec::codes::settings::{Chain, Settings};
/// let chain = PolarSettings { n: Some(256), k: Some(128), ..Default::default() }.resolve()?;
/// assert_eq!((chain.frame_bits(), chain.unit_llrs(), chain.rate()), (128, 256, 0.5));
/// let chain = PolarSettings { k: Some(39), e: Some(432), message: Some("dci".parse().unwrap()), ..Default::default() }.resolve()?;
/// assert_eq!((chain.frame_bits(), chain.unit_llrs()), (39, 432));
/// let e = PolarSettings { n: Some(1000), ..Default::default() }.resolve().unwrap_err();
/// assert_eq!(e.field, "n");
/// # Ok::<(), gpufec::codes::settings::SettingError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PolarSettings {
    /// N of bare codewords.
    pub n: Option<u64>,
    /// K information bits of a bare codeword, or A payload bits of a 5G message.
    pub k: Option<u64>,
    /// Bits E a 5G message is sent in: the whole 5G chain.
    pub e: Option<u64>,
    /// UCI or DCI (with e).
    pub message: Option<MessageKind>,
    /// The RNTI masking a DCI's CRC.
    pub rnti: Option<u64>,
    /// `5g`, `ga:DB` or a frozen-set file (bare codewords).
    pub construction: Option<String>,
    /// A CRC over a bare codeword's information bits.
    pub crc: Option<CrcName>,
    /// `bp`, `sc` or `scl:L`.
    pub algorithm: Option<String>,
    /// BP's iterations at most.
    pub iterations: Option<u64>,
    /// When BP stops.
    pub early_stop: Option<StopWhen>,
    /// BP's min-sum scaling (f32).
    pub alpha: Option<f64>,
    /// BP's messages.
    pub precision: Option<Precision>,
}

impl std::str::FromStr for MessageKind {
    type Err = String;

    /// `uci` or `dci`.
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "uci" => Ok(MessageKind::Uci),
            "dci" => Ok(MessageKind::Dci),
            _ => Err(format!("message '{s}': give uci or dci")),
        }
    }
}

/// Everything a polar chain needs, resolved from [`PolarSettings`].
#[derive(Debug, Clone)]
pub struct PolarChain {
    frames: PolarFrames,
    algorithm: Algorithm,
    settings: PolarSettings,
}

impl Settings for PolarSettings {
    type Resolved = PolarChain;
    const FAMILY: &'static str = "polar";
    const FIELDS: &'static [Field] = &[
        Field::new("n", FieldType::Count, "codeword length N of bare codewords, a power of two 8..=65536 (the GPU decodes up to 32768); default 1024"),
        Field::new(
            "k",
            FieldType::Count,
            "information bits: K of a bare codeword, 1..=N (a CRC's bits included; default N/2), or with e the payload A of a 5G message (UCI 12..=1706, DCI 1..=140)",
        ),
        Field::new(
            "e",
            FieldType::Count,
            "bits E a 5G control message of k bits is sent in, up to 8192 per code block: the whole TS 38.212 chain (CRC, interleaving, code of N from K and E, rate matching by puncturing, shortening or repetition), instead of bare codewords",
        ),
        Field::new("message", FieldType::Choice(&["uci", "dci"]), "the 5G message (with e): uci (default: CRC6 or CRC11, one or two code blocks, channel interleaver) or dci (CRC24C masked by rnti, input interleaver)"),
        Field::new("rnti", FieldType::Count, "the RNTI masking a DCI's CRC, 0..=65535 (with message dci; default 0)"),
        Field::new(
            "construction",
            FieldType::Text,
            "the frozen set of bare codewords: 5g (the reliability sequence of TS 38.212, N <= 1024), ga:DB (Gaussian approximation at a design Eb/N0 in dB) or a file of N - K frozen indices; default 5g, ga:2 above N = 1024",
        ),
        Field::new("crc", FieldType::Choice(&["none", "crc6", "crc11", "crc16", "crc24c"]), "a CRC over a bare codeword's K information bits, its parity among them (default none; a 5G message has its own)"),
        Field::new("algorithm", FieldType::Text, "the decoder: bp (belief propagation, default; the GPU's), sc (successive cancellation) or scl:L (CRC-aided list decoding, L 1..=32)"),
        Field::new("iterations", FieldType::Count, "BP's iterations at most, 1..=1000 (default 40)"),
        Field::new(
            "early_stop",
            FieldType::Choice(&["g", "crc", "never"]),
            "when BP stops: g (default: when û·G equals x̂), crc (when the information bits pass the CRC; needs one) or never",
        ),
        Field::new("alpha", FieldType::Real, "BP's min-sum scaling in (0, 1] with precision f32 (default 0.9375; the i8 model's is 15/16, fixed)"),
        Field::new(
            "precision",
            FieldType::Choice(&["i8", "f32"]),
            "BP's messages: i8 (default: the GPU's arithmetic, its CPU model bit for bit; f32 LLRs are quantized as round(4·llr)) or f32 (the CPU reference)",
        ),
    ];

    fn resolve(&self) -> Result<PolarChain, SettingError> {
        let frames = match self.e {
            Some(e) => {
                for (field, given) in [("n", self.n.is_some()), ("construction", self.construction.is_some()), ("crc", self.crc.is_some())] {
                    if given {
                        return Err(SettingError::new(field, "applies to bare codewords: a 5G message (e) takes its code, construction and CRC from TS 38.212"));
                    }
                }
                let e = count_in("e", Some(e), 0, 1..=2 * MAX_E)?;
                let kind = self.message.unwrap_or(MessageKind::Uci);
                let nr = match kind {
                    MessageKind::Uci => {
                        if self.rnti.is_some() {
                            return Err(SettingError::new("rnti", "masks a DCI's CRC: give message dci"));
                        }
                        let a = count_in("k", self.k, 0, 1..=MAX_UCI_A)?;
                        blame("e", NrPolar::uci(a, e))?
                    }
                    MessageKind::Dci => {
                        let a = count_in("k", self.k, 0, 1..=MAX_DCI_A)?;
                        let rnti = count_in("rnti", self.rnti, 0, 0..=0xffff)? as u16;
                        blame("e", NrPolar::dci(a, e, rnti))?
                    }
                };
                PolarFrames::Nr(nr)
            }
            None => {
                for (field, given) in [("message", self.message.is_some()), ("rnti", self.rnti.is_some())] {
                    if given {
                        return Err(SettingError::new(field, "applies to 5G messages: give e too"));
                    }
                }
                let n = count_in("n", self.n, DEFAULT_N, MIN_N..=MAX_N)?;
                if !n.is_power_of_two() {
                    return Err(SettingError::new("n", format!("{n} is not a power of two (8, 16, ..., {MAX_N})")));
                }
                let k = count_in("k", self.k, n / 2, 1..=n)?;
                let construction = match &self.construction {
                    Some(c) => blame("construction", c.parse::<Construction>())?,
                    None if n <= NR_MAX_N => Construction::Nr,
                    None => Construction::Ga { design_ebn0_db: DEFAULT_GA_DB },
                };
                let code = Arc::new(blame("construction", construction.build(n, k))?);
                let check = match self.crc.and_then(CrcName::crc) {
                    Some(crc) => Some(blame("crc", InfoCheck::new(crc, k))?),
                    None => None,
                };
                PolarFrames::Codewords(blame("crc", PolarSpec::new(code, false, check))?)
            }
        };
        let algorithm = match self.algorithm.as_deref() {
            None => Algorithm::Bp(BpConfig::default()),
            Some(a) => blame("algorithm", a.parse::<Algorithm>())?,
        };
        let algorithm = match algorithm {
            Algorithm::Bp(_) => {
                let precision = match (self.precision.unwrap_or(Precision::I8), self.alpha) {
                    (Precision::I8, Some(_)) => return Err(SettingError::new("alpha", "the i8 model's scaling is 15/16, fixed: alpha applies with precision f32")),
                    (Precision::I8, None) => BpPrecision::I8,
                    (Precision::F32, alpha) => {
                        let alpha = alpha.unwrap_or(f64::from(BP_ALPHA));
                        if !(alpha > 0.0 && alpha <= 1.0) {
                            return Err(SettingError::new("alpha", format!("{alpha}: give 0 < alpha <= 1")));
                        }
                        BpPrecision::F32 { alpha: alpha as f32 }
                    }
                };
                let iterations = count_in("iterations", self.iterations, BpConfig::default().iterations as usize, 1..=MAX_ITERATIONS as usize)? as u32;
                let early_stop = match self.early_stop.unwrap_or(StopWhen::G) {
                    StopWhen::G => EarlyStop::GMatrix,
                    StopWhen::Never => EarlyStop::Never,
                    StopWhen::Crc if frames.spec().check().is_none() => {
                        return Err(SettingError::new("early_stop", "crc: these codewords carry no CRC (give crc, or send 5G messages with e)"));
                    }
                    StopWhen::Crc => EarlyStop::Crc,
                };
                Algorithm::Bp(BpConfig { iterations, early_stop, precision })
            }
            other => {
                for (field, given) in [("iterations", self.iterations.is_some()), ("early_stop", self.early_stop.is_some()), ("alpha", self.alpha.is_some()), ("precision", self.precision.is_some())] {
                    if given {
                        return Err(SettingError::new(field, format!("applies to BP, not {}", other.describe())));
                    }
                }
                other
            }
        };
        Ok(PolarChain { frames, algorithm, settings: self.clone() })
    }
}

impl PolarChain {
    /// What is sent.
    pub fn frames(&self) -> &PolarFrames {
        &self.frames
    }

    /// The decoder.
    pub fn algorithm(&self) -> Algorithm {
        self.algorithm
    }

    /// The code of every codeword the block decoder sees (a 5G message's
    /// code blocks' code).
    pub fn spec(&self) -> &PolarSpec {
        self.frames.spec()
    }

    /// LLRs per decoder unit: N, or a message's E.
    pub fn unit_llrs(&self) -> usize {
        self.frames.unit().items
    }
}

impl Chain for PolarChain {
    type Settings = PolarSettings;

    /// The settings it was resolved from.
    fn settings(&self) -> &PolarSettings {
        &self.settings
    }

    /// `(1024, 512), BP i8 model Imax=40 stop=g`.
    fn describe(&self) -> String {
        let sent = match &self.frames {
            PolarFrames::Codewords(spec) => spec.describe(),
            PolarFrames::Nr(nr) => nr.describe(),
        };
        format!("{sent}, {}", self.algorithm.describe())
    }

    /// Payload bits over channel bits: (K − CRC) / N, or A / E.
    fn rate(&self) -> f64 {
        self.frames.rate()
    }

    /// Payload bits per counted frame.
    fn frame_bits(&self) -> usize {
        self.frames.unit().bits
    }

    fn cutter<T: Llr>(&self) -> CodeResult<Box<dyn Cutter<T>>> {
        let unit = if matches!(self.frames, PolarFrames::Nr(_)) { "5G message" } else { "codeword" };
        Ok(Box::new(BlockCutter::fixed(self.unit_llrs())?.naming(unit)))
    }

    fn noisy<T: Llr>(&self, bits: u64, ebn0_db: f64, seed: u64) -> CodeResult<Noisy<T>> {
        noisy_frames(self.frames.encoder(), self.rate(), self.frame_bits(), bits, ebn0_db, seed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(s: PolarSettings) -> SettingError {
        s.resolve().map(|_| ()).unwrap_err()
    }

    #[test]
    fn every_error_names_its_field() {
        let ok = PolarSettings::default();
        let dci = Some(MessageKind::Dci);
        for (s, field, says) in [
            (PolarSettings { n: Some(1000), ..ok.clone() }, "n", "power of two"),
            (PolarSettings { n: Some(4), ..ok.clone() }, "n", "outside 8..=65536"),
            (PolarSettings { n: Some(1 << 17), ..ok.clone() }, "n", "outside"),
            (PolarSettings { k: Some(0), ..ok.clone() }, "k", "outside 1..=1024"),
            (PolarSettings { k: Some(1025), ..ok.clone() }, "k", "outside 1..=1024"),
            (PolarSettings { n: Some(2048), construction: Some("5g".into()), ..ok.clone() }, "construction", "1024"),
            (PolarSettings { construction: Some("ga:hot".into()), ..ok.clone() }, "construction", "ga:DB"),
            (PolarSettings { construction: Some("/nonexistent/frozen.txt".into()), ..ok.clone() }, "construction", "frozen-set file"),
            (PolarSettings { k: Some(10), crc: Some(CrcName::Crc11), ..ok.clone() }, "crc", "cannot carry"),
            (PolarSettings { e: Some(100), n: Some(128), ..ok.clone() }, "n", "bare codewords"),
            (PolarSettings { e: Some(100), crc: Some(CrcName::Crc11), k: Some(30), ..ok.clone() }, "crc", "bare codewords"),
            (PolarSettings { message: dci, ..ok.clone() }, "message", "give e"),
            (PolarSettings { rnti: Some(3), ..ok.clone() }, "rnti", "give e"),
            (PolarSettings { k: Some(30), e: Some(20), ..ok.clone() }, "e", "E"),
            (PolarSettings { k: Some(30), e: Some(1 << 20), ..ok.clone() }, "e", "outside"),
            (PolarSettings { k: Some(5), e: Some(100), ..ok.clone() }, "e", "12..=1706"),
            (PolarSettings { k: Some(200), e: Some(1000), message: dci, ..ok.clone() }, "k", "outside 1..=140"),
            (PolarSettings { k: Some(20), e: Some(200), message: dci, rnti: Some(70000), ..ok.clone() }, "rnti", "outside 0..=65535"),
            (PolarSettings { k: Some(20), e: Some(200), rnti: Some(7), ..ok.clone() }, "rnti", "dci"),
            (PolarSettings { algorithm: Some("scl:0".into()), ..ok.clone() }, "algorithm", "1..=32"),
            (PolarSettings { algorithm: Some("scl:1000000000".into()), ..ok.clone() }, "algorithm", "1..=32"),
            (PolarSettings { algorithm: Some("viterbi".into()), ..ok.clone() }, "algorithm", "bp, sc or scl:L"),
            (PolarSettings { iterations: Some(0), ..ok.clone() }, "iterations", "outside 1..=1000"),
            (PolarSettings { iterations: Some(u64::MAX), ..ok.clone() }, "iterations", "outside 1..=1000"),
            (PolarSettings { early_stop: Some(StopWhen::Crc), ..ok.clone() }, "early_stop", "no CRC"),
            (PolarSettings { alpha: Some(0.9), ..ok.clone() }, "alpha", "15/16"),
            (PolarSettings { alpha: Some(1.5), precision: Some(Precision::F32), ..ok.clone() }, "alpha", "0 < alpha"),
            (PolarSettings { alpha: Some(f64::NAN), precision: Some(Precision::F32), ..ok.clone() }, "alpha", "0 < alpha"),
            (PolarSettings { algorithm: Some("sc".into()), iterations: Some(20), ..ok.clone() }, "iterations", "applies to BP"),
            (PolarSettings { algorithm: Some("scl:8".into()), precision: Some(Precision::F32), ..ok.clone() }, "precision", "applies to BP"),
        ] {
            let e = err(s.clone());
            assert_eq!(e.field, field, "{s:?}: {e}");
            assert!(e.problem.contains(says), "{s:?}: {e}");
        }
    }

    #[test]
    fn defaults_and_the_5g_chain() {
        let c = PolarSettings::default().resolve().unwrap();
        assert_eq!((c.spec().n(), c.spec().code().k(), c.algorithm()), (1024, 512, Algorithm::Bp(BpConfig { precision: BpPrecision::I8, ..BpConfig::default() })));
        let long = PolarSettings { n: Some(1 << 15), ..Default::default() }.resolve().unwrap();
        assert_eq!(long.spec().code().k(), 1 << 14, "GA above 1024 unless told");
        let crc = PolarSettings { n: Some(256), k: Some(128), crc: Some(CrcName::Crc11), early_stop: Some(StopWhen::Crc), ..Default::default() }.resolve().unwrap();
        assert_eq!((crc.frame_bits(), crc.rate()), (117, 117.0 / 256.0));
        let uci = PolarSettings { k: Some(200), e: Some(300), ..Default::default() }.resolve().unwrap();
        assert_eq!((uci.frame_bits(), uci.unit_llrs(), uci.spec().n()), (200, 300, 512));
        assert!(uci.describe().starts_with("UCI A=200 E=300"), "{}", uci.describe());
    }
}
