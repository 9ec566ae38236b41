//! The turbo family's settings and what they resolve into: bare code blocks
//! (any RSC code and interleaver) or LTE transport blocks through the whole
//! chain, and the decoder's algorithm, iterations, early stop and sub-block
//! split. The command line and flowgraph files fill [`TurboSettings`];
//! [`TurboSettings::resolve`] is the one place its rules live, and
//! [`TurboChain::config_for`] the one place the GPU's own split is applied.

use super::decoder::{DecoderConfig, EarlyStop, Guard, MAX_ITERATIONS, MaxStar, Precision};
use super::qpp::{Interleaver, Qpp};
use super::transport::{MAX_A, MAX_G, TransportBlock, TransportEncoder};
use super::{Rsc, TurboCode, TurboEncoder};
use crate::codes::encode::Encoder;
use crate::codes::error::CodeResult;
use crate::codes::framing::{BlockCutter, Cutter};
use crate::codes::llr::Llr;
use crate::codes::settings::{Chain, Field, FieldType, Noisy, SettingError, Settings, blame, count_in, noisy_frames};
use serde::{Deserialize, Serialize};

/// When a block stops iterating, as a user says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StopWhen {
    /// Every iteration runs.
    #[default]
    Never,
    /// When an iteration's decisions equal the previous iteration's.
    Stable,
    /// When the code block's CRC checks (CRC24B, or the transport block's
    /// CRC24A when it is one code block): transport blocks only.
    Crc,
}

/// Where the code blocks of a transport block are de-rate-matched when the
/// GPU decodes them; the CPU decoder always takes them de-rate-matched on
/// the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Dematching {
    /// On the host: 3K + 12 `f32` LLRs per code block cross PCIe.
    #[serde(rename = "host")]
    Host,
    /// On the GPU as the code blocks load: the E received LLRs cross PCIe
    /// as they came.
    #[default]
    #[serde(rename = "on-load")]
    OnLoad,
}

/// The turbo family's settings, every field optional.
///
/// # Example
/// ```
/// use gpufec::codes::settings::{Chain, Settings};
/// use gpufec::codes::turbo::TurboSettings;
/// let chain = TurboSettings { tbs: Some(6120), ..Default::default() }.resolve()?;
/// assert_eq!((chain.frame_bits(), chain.unit_llrs()), (6120, 3 * (6120 + 24)));
/// // The GPU takes its own split unless one is given; the CPU decodes serially.
/// assert_eq!((chain.config_for(6144, true).subblocks, chain.config_for(6144, false).subblocks), (128, 1));
/// let e = TurboSettings { block: Some(41), ..Default::default() }.resolve().unwrap_err();
/// assert_eq!(e.field, "block");
/// # Ok::<(), gpufec::codes::settings::SettingError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TurboSettings {
    /// Code block size K of bare code blocks.
    pub block: Option<u64>,
    /// The constituent code's feedback and feedforward polynomials in octal.
    pub polys: Option<String>,
    /// A file holding an interleaver of one's own.
    pub interleaver: Option<String>,
    /// Transport block size A: the whole LTE chain.
    pub tbs: Option<u64>,
    /// Coded bits G a transport block is sent in.
    pub coded: Option<u64>,
    /// Redundancy version.
    pub rv: Option<u64>,
    /// Where the GPU de-rate-matches.
    pub dematch: Option<Dematching>,
    /// Iterations at most.
    pub iterations: Option<u64>,
    /// The recursions' max*.
    pub algorithm: Option<MaxStar>,
    /// Extrinsic scaling.
    pub scaling: Option<f64>,
    /// Sub-blocks P.
    pub subblocks: Option<u64>,
    /// How sub-block edges are estimated.
    pub guard: Option<Guard>,
    /// Training window g.
    pub window: Option<u64>,
    /// When a block stops early.
    pub early_stop: Option<StopWhen>,
    /// The CPU decoder's metrics.
    pub precision: Option<Precision>,
}

/// What is sent: bare code blocks, or transport blocks through the LTE chain.
#[derive(Debug, Clone)]
pub enum Sent {
    /// Code blocks of one code.
    Blocks(TurboCode),
    /// Transport blocks.
    Transport(TransportBlock),
}

/// Everything a turbo chain needs, resolved from [`TurboSettings`].
#[derive(Debug, Clone)]
pub struct TurboChain {
    sent: Sent,
    cfg: DecoderConfig,
    /// No split was given: the GPU takes its own ([`DecoderConfig::with_gpu_split`]).
    auto_split: bool,
    precision: Precision,
    dematching: Dematching,
    settings: TurboSettings,
}

impl Settings for TurboSettings {
    type Resolved = TurboChain;
    const FAMILY: &'static str = "turbo";
    const FIELDS: &'static [Field] = &[
        Field::new("block", FieldType::Count, "code block size K, one of the 188 LTE sizes 40..=6144 (default 6144; bare code blocks)"),
        Field::new("polys", FieldType::Text, "the constituent code's feedback and feedforward polynomials in octal, memory 2..=4 (default LTE's 13,15; bare code blocks)"),
        Field::new(
            "interleaver",
            FieldType::InputFile,
            "a file of your own interleaver's indices (decimal, separated by spaces, commas or lines; K = their count, at most 6144; the file at most 16 MiB), instead of block's QPP",
        ),
        Field::new(
            "tbs",
            FieldType::Count,
            "transport block size A, 1..=1048552: the whole LTE chain (CRC24A, segmentation with CRC24B, rate matching to coded bits) instead of bare code blocks",
        ),
        Field::new("coded", FieldType::Count, "coded bits G a transport block is sent in, at most 2^26 (with tbs; default 3·(A + 24), about rate 1/3)"),
        Field::new("rv", FieldType::Count, "redundancy version 0..=3 (with tbs; default 0)"),
        Field::new(
            "dematch",
            FieldType::Choice(&["on-load", "host"]),
            "where the GPU decoder de-rate-matches a transport block's code blocks (with tbs): on-load (default: the received LLRs go to the GPU) or host (3K + 12 f32 LLRs per code block go); the CPU's always on the host",
        ),
        Field::new("iterations", FieldType::Count, "iterations at most, 1..=64 (default 8)"),
        Field::new(
            "algorithm",
            FieldType::Choice(&["max-log", "log-map", "log-map-linear"]),
            "max-log (default), log-map (exact max*), log-map-linear (max(0, ln 2 − |a−b|/4) correction)",
        ),
        Field::new("scaling", FieldType::Real, "factor on the extrinsics passed between the constituent decoders, in (0, 1] (default 0.75 with max-log, 1 with log-MAP)"),
        Field::new(
            "subblocks",
            FieldType::Count,
            "sub-blocks P decoded independently, 1..=K (1: the serial decoder); without subblocks, guard and window: serial on the CPU, and on the GPU P = K/48 (at most 128) with PIVIDSTW g = 8",
        ),
        Field::new("guard", FieldType::Choice(&["none", "pivi", "dstw", "pividstw"]), "how sub-block edges are estimated (with P > 1; default none)"),
        Field::new("window", FieldType::Count, "training window g in stages (dstw, pividstw), shorter than the shortest sub-block"),
        Field::new(
            "early_stop",
            FieldType::Choice(&["never", "stable", "crc"]),
            "stop a block when an iteration's decisions equal the previous one's (stable), or when its CRC checks (crc: CRC24B, or CRC24A for a transport block of one code block; with tbs); default never",
        ),
        Field::new("precision", FieldType::Choice(&["f32", "i16"]), "the CPU decoder's metrics: f32 (default; what the GPU computes) or i16 with saturation (twice the blocks per instruction; max-log only)"),
    ];

    fn resolve(&self) -> Result<TurboChain, SettingError> {
        let sent = match self.tbs {
            Some(a) => {
                for (field, given) in [("block", self.block.is_some()), ("polys", self.polys.is_some()), ("interleaver", self.interleaver.is_some())] {
                    if given {
                        return Err(SettingError::new(field, "applies to bare code blocks: a transport block (tbs) is cut into LTE code blocks of its own sizes"));
                    }
                }
                let a = count_in("tbs", Some(a), 0, 1..=MAX_A)?;
                let g = count_in("coded", self.coded, 3 * (a + 24), 1..=MAX_G)?;
                let rv = count_in("rv", self.rv, 0, 0..=3)? as u8;
                // What is left (a code rate above 1) is G's fault.
                Sent::Transport(blame("coded", TransportBlock::new(a, g, rv))?)
            }
            None => {
                for (field, given) in [("coded", self.coded.is_some()), ("rv", self.rv.is_some()), ("dematch", self.dematch.is_some())] {
                    if given {
                        return Err(SettingError::new(field, "applies to transport blocks: give tbs too"));
                    }
                }
                let rsc = match &self.polys {
                    None => Rsc::lte(),
                    Some(p) => match p.split(',').collect::<Vec<_>>()[..] {
                        [fb, ff] => blame("polys", Rsc::from_octal(fb, ff))?,
                        _ => return Err(SettingError::new("polys", format!("'{p}': give two octal polynomials, feedback first, e.g. 13,15"))),
                    },
                };
                let interleaver = match &self.interleaver {
                    Some(_) if self.block.is_some() => return Err(SettingError::new("block", "give block or interleaver (the file's length is K), not both")),
                    Some(path) => blame("interleaver", Interleaver::read_text(std::path::Path::new(path)))?,
                    None => Interleaver::Qpp(blame("block", Qpp::lte(count_in("block", self.block, 6144, 0..=usize::MAX)?))?),
                };
                Sent::Blocks(blame(if self.interleaver.is_some() { "interleaver" } else { "block" }, TurboCode::new(rsc, &interleaver))?)
            }
        };
        let max_star = self.algorithm.unwrap_or(MaxStar::Max);
        let guard = self.guard.unwrap_or(Guard::None);
        let smallest = match &sent {
            Sent::Blocks(code) => code.k(),
            Sent::Transport(tb) => tb.block_sizes().into_iter().min().unwrap_or(0),
        };
        let subblocks = count_in("subblocks", self.subblocks, 1, 1..=smallest.max(1))?;
        if subblocks == 1 && guard != Guard::None {
            return Err(SettingError::new("guard", format!("{}: a guard needs subblocks > 1", guard.name())));
        }
        let cfg = DecoderConfig {
            max_star,
            scaling: self.scaling.map_or(if max_star == MaxStar::Max { 0.75 } else { 1.0 }, |s| s as f32),
            iterations: count_in("iterations", self.iterations, 8, 1..=MAX_ITERATIONS)?,
            early_stop: match (self.early_stop.unwrap_or_default(), &sent) {
                (StopWhen::Never, _) => EarlyStop::Never,
                (StopWhen::Stable, _) => EarlyStop::Stable,
                (StopWhen::Crc, Sent::Transport(tb)) if tb.segmentation().c == 1 => EarlyStop::Crc24A,
                (StopWhen::Crc, Sent::Transport(_)) => EarlyStop::Crc24B,
                (StopWhen::Crc, Sent::Blocks(_)) => return Err(SettingError::new("early_stop", "crc: bare code blocks carry no CRC; send transport blocks (tbs)")),
            },
            subblocks,
            guard,
            window: count_in("window", self.window, 0, 0..=smallest)?,
        };
        let sizes = match &sent {
            Sent::Blocks(code) => vec![code.k()],
            Sent::Transport(tb) => tb.block_sizes(),
        };
        for k in sizes {
            cfg.check(k).map_err(|(field, e)| SettingError::new(field, format!("{e} (K = {k})")))?;
        }
        let precision = self.precision.unwrap_or(Precision::F32);
        if precision == Precision::I16 && max_star != MaxStar::Max {
            return Err(SettingError::new("precision", format!("i16 metrics decode with max-log-MAP only, not {}", max_star.name())));
        }
        Ok(TurboChain {
            sent,
            cfg,
            auto_split: self.subblocks.is_none() && self.guard.is_none() && self.window.is_none(),
            precision,
            dematching: self.dematch.unwrap_or_default(),
            settings: self.clone(),
        })
    }
}

impl TurboChain {
    /// What is sent.
    pub fn sent(&self) -> &Sent {
        &self.sent
    }

    /// The code of every code block, in order (one for bare code blocks).
    pub fn codes(&self) -> Vec<TurboCode> {
        match &self.sent {
            Sent::Blocks(code) => vec![code.clone()],
            Sent::Transport(tb) => tb.codes(),
        }
    }

    /// The decoder configuration as given (the CPU's).
    pub fn config(&self) -> DecoderConfig {
        self.cfg
    }

    /// What a decoder of K = `k` computes on the GPU (`gpu`) or the CPU: the
    /// GPU takes its own split when none was given.
    pub fn config_for(&self, k: usize, gpu: bool) -> DecoderConfig {
        if gpu && self.auto_split { self.cfg.with_gpu_split(k) } else { self.cfg }
    }

    /// The CPU decoder's metrics.
    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// Where the GPU de-rate-matches transport blocks.
    pub fn dematching(&self) -> Dematching {
        self.dematching
    }

    /// LLRs per decoder unit: a code block's 3K + 4m, or a transport block's G.
    pub fn unit_llrs(&self) -> usize {
        match &self.sent {
            Sent::Blocks(code) => code.coded_len(),
            Sent::Transport(tb) => tb.g(),
        }
    }

    /// The transmitter's encoder.
    pub fn encoder(&self) -> Box<dyn Encoder> {
        match &self.sent {
            Sent::Blocks(code) => Box::new(TurboEncoder::new(code.clone())),
            Sent::Transport(tb) => Box::new(TransportEncoder::new(tb.clone())),
        }
    }

}

impl Chain for TurboChain {
    type Settings = TurboSettings;

    /// The settings it was resolved from.
    fn settings(&self) -> &TurboSettings {
        &self.settings
    }

    /// `transport blocks of A = 6120 in G = 18432 (rv 0), max-log ×0.75, 8 it`.
    fn describe(&self) -> String {
        let sent = match &self.sent {
            Sent::Blocks(code) => code.describe(),
            Sent::Transport(tb) => format!("transport blocks of A = {} in G = {} (rv {})", tb.a(), tb.g(), self.settings.rv.unwrap_or(0)),
        };
        format!("{sent}, {}", self.cfg.describe())
    }

    /// Information bits over channel bits sent: K / (3K + 12), or A / G.
    fn rate(&self) -> f64 {
        self.frame_bits() as f64 / self.unit_llrs() as f64
    }

    /// Information bits per counted frame: a code block's K, or a transport block's A.
    fn frame_bits(&self) -> usize {
        match &self.sent {
            Sent::Blocks(code) => code.k(),
            Sent::Transport(tb) => tb.a(),
        }
    }

    /// The cutter of the decoder's units from a stream of LLRs.
    fn cutter<T: Llr>(&self) -> CodeResult<Box<dyn Cutter<T>>> {
        let unit = if matches!(self.sent, Sent::Transport(_)) { "transport block" } else { "code block" };
        Ok(Box::new(BlockCutter::fixed(self.unit_llrs())?.naming(unit)))
    }

    fn noisy<T: Llr>(&self, bits: u64, ebn0_db: f64, seed: u64) -> CodeResult<Noisy<T>> {
        noisy_frames(self.encoder(), self.rate(), self.frame_bits(), bits, ebn0_db, seed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_names_its_field() {
        let ok = TurboSettings::default();
        for (s, field) in [
            (TurboSettings { block: Some(41), ..ok.clone() }, "block"),
            (TurboSettings { tbs: Some(100), block: Some(40), ..ok.clone() }, "block"),
            (TurboSettings { tbs: Some(100), polys: Some("13,15".into()), ..ok.clone() }, "polys"),
            (TurboSettings { coded: Some(100), ..ok.clone() }, "coded"),
            (TurboSettings { rv: Some(1), ..ok.clone() }, "rv"),
            (TurboSettings { dematch: Some(Dematching::Host), ..ok.clone() }, "dematch"),
            (TurboSettings { tbs: Some(0), ..ok.clone() }, "tbs"),
            (TurboSettings { tbs: Some(1 << 21), ..ok.clone() }, "tbs"),
            (TurboSettings { tbs: Some(1000), coded: Some(500), ..ok.clone() }, "coded"),
            (TurboSettings { tbs: Some(1000), rv: Some(4), ..ok.clone() }, "rv"),
            (TurboSettings { polys: Some("13".into()), ..ok.clone() }, "polys"),
            (TurboSettings { polys: Some("3,15".into()), ..ok.clone() }, "polys"),
            (TurboSettings { interleaver: Some("/nonexistent/il.txt".into()), ..ok.clone() }, "interleaver"),
            (TurboSettings { iterations: Some(0), ..ok.clone() }, "iterations"),
            (TurboSettings { iterations: Some(65), ..ok.clone() }, "iterations"),
            (TurboSettings { scaling: Some(1.5), ..ok.clone() }, "scaling"),
            (TurboSettings { scaling: Some(f64::NAN), ..ok.clone() }, "scaling"),
            (TurboSettings { subblocks: Some(0), ..ok.clone() }, "subblocks"),
            (TurboSettings { block: Some(40), subblocks: Some(41), ..ok.clone() }, "subblocks"),
            (TurboSettings { guard: Some(Guard::Pivi), ..ok.clone() }, "guard"),
            (TurboSettings { subblocks: Some(8), guard: Some(Guard::Dstw), ..ok.clone() }, "window"),
            (TurboSettings { window: Some(4), ..ok.clone() }, "window"),
            (TurboSettings { early_stop: Some(StopWhen::Crc), ..ok.clone() }, "early_stop"),
            (TurboSettings { algorithm: Some(MaxStar::Exact), precision: Some(Precision::I16), ..ok.clone() }, "precision"),
        ] {
            assert_eq!(s.resolve().map(|_| ()).unwrap_err().field, field, "{s:?}");
        }
    }

    #[test]
    fn defaults_follow_the_algorithm_and_the_sent_blocks() {
        let c = TurboSettings { algorithm: Some(MaxStar::Exact), ..Default::default() }.resolve().unwrap();
        assert_eq!((c.config().scaling, c.frame_bits(), c.unit_llrs()), (1.0, 6144, 3 * 6144 + 12));
        let one = TurboSettings { tbs: Some(6120), early_stop: Some(StopWhen::Crc), ..Default::default() }.resolve().unwrap();
        assert_eq!(one.config().early_stop, EarlyStop::Crc24A);
        let two = TurboSettings { tbs: Some(7000), coded: Some(14000), early_stop: Some(StopWhen::Crc), ..Default::default() }.resolve().unwrap();
        assert_eq!((two.config().early_stop, two.rate()), (EarlyStop::Crc24B, 0.5));
        let given = TurboSettings { subblocks: Some(8), ..Default::default() }.resolve().unwrap();
        assert_eq!(given.config_for(6144, true).subblocks, 8, "a split given is the GPU's too");
    }
}
