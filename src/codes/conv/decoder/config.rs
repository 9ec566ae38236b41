//! Decoder configurations: tiled (v1 / f / v2 with serial or parallel
//! traceback) and whole frames.

use crate::codes::conv::PuncturePattern;
use crate::codes::error::{CodeError, CodeResult, invalid};

/// Which part of a tile geometry given as text an error is about
/// ([`TileConfig::from_text`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TileField {
    /// `F,V1,V2`.
    Tile,
    /// `serial` or `parallel:F0`.
    Traceback,
    /// Tiles per work unit.
    Group,
}

impl TileField {
    /// The field's name in flowgraph files and, after `--`, on the command line.
    pub fn name(self) -> &'static str {
        match self {
            TileField::Tile => "tile",
            TileField::Traceback => "traceback",
            TileField::Group => "group",
        }
    }
}

/// Largest tile or subframe length accepted, in stages; keeps decision memory
/// per tile bounded and every metric far from overflow.
pub const MAX_TILE_STAGES: usize = 1 << 16;

/// The overlaps (v1, v2) of the default tile by punctured rate (up to the
/// rate of each row): the cheapest that kept serial-traceback streaming within
/// 0.05 dB of the full-frame decoder at K = 7 on two seeds (BENCHMARKS.md,
/// "Streaming tiles by rate"). A punctured stream needs longer overlaps, the
/// warm-up v1 above all: with v1 = 20, no v2 gets within 0.1 dB at 3/4.
const DEFAULT_OVERLAPS: [(f64, usize, usize); 5] =
    [(0.5, 20, 20), (2.0 / 3.0, 24, 28), (0.75, 32, 40), (5.0 / 6.0, 44, 56), (7.0 / 8.0, 64, 68)];

/// The tile f,v1,v2 to use unless told, for a stream punctured with
/// `puncture`: the overlaps of its rate, and f the largest multiple of the
/// puncturing period up to 256 stages, so that the decoder can depuncture each
/// tile as it loads it.
///
/// # Example
/// ```
/// use gpufec::codes::conv::{PuncturePattern, default_tile};
/// assert_eq!(default_tile(&PuncturePattern::none(2)), "256,20,20");
/// assert_eq!(default_tile(&PuncturePattern::standard("3/4").unwrap()), "255,32,40");
/// assert_eq!(default_tile(&PuncturePattern::standard("7/8").unwrap()), "252,64,68");
/// ```
pub fn default_tile(puncture: &PuncturePattern) -> String {
    let rate = puncture.rate();
    let (_, v1, v2) = DEFAULT_OVERLAPS.iter().find(|(r, _, _)| rate <= r + 1e-9).unwrap_or(&DEFAULT_OVERLAPS[4]);
    let period = puncture.period();
    let f = (256 / period * period).max(period);
    format!("{f},{v1},{v2}")
}
/// Tiles per work unit unless told.
pub const DEFAULT_GROUP: usize = 64;

/// How a tile's decisions are traced back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Traceback {
    /// One traceback from the best state at the tile's last stage.
    Serial,
    /// The paper's parallel traceback: the f outputs split into subframes of
    /// `f0` stages; each subframe is traced back from the best state at the stage
    /// `v2` past its right end (clipped to the tile), the best states having been
    /// recorded during the forward pass.
    Parallel {
        /// Output stages per subframe.
        f0: usize,
    },
}

impl Traceback {
    /// Parse `serial` or `parallel:F0`.
    pub fn parse(s: &str) -> CodeResult<Self> {
        let s = s.trim();
        if s == "serial" {
            return Ok(Traceback::Serial);
        }
        if let Some(f0) = s.strip_prefix("parallel:") {
            let f0 = f0
                .trim()
                .parse::<usize>()
                .map_err(|_| invalid!("traceback '{s}': F0 in parallel:F0 must be a whole number"))?;
            return Ok(Traceback::Parallel { f0 });
        }
        Err(invalid!("traceback '{s}' is neither 'serial' nor 'parallel:F0'"))
    }
}

impl std::fmt::Display for Traceback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Traceback::Serial => write!(f, "serial"),
            Traceback::Parallel { f0 } => write!(f, "parallel:{f0}"),
        }
    }
}

/// Overlapping-tile geometry (the paper's Fig. 2): each tile decodes `f` stages
/// and also runs over `v1` stages before and `v2` after them.
///
/// Tile `i` of a stream covers stages `i·f − v1 .. i·f + f + v2`. Stages before the
/// stream start carry a confident bit 0 (the encoder starts in state 0), stages
/// past its end are erasures (LLR 0). Path metrics start equal in every state.
///
/// A *work unit* is a run of `group` consecutive tiles that share their overlaps:
/// stages `u·group·f − v1 .. (u+1)·group·f + v2` for unit `u`. The tiles, and so the
/// decoded bits, do not depend on `group`; it only sets how the stream travels
/// (each LLR once instead of `(v1+f+v2)/f` times, which matters on PCIe).
///
/// # Example
/// ```
/// use gpufec::codes::conv::{TileConfig, Traceback};
/// let t = TileConfig::new(256, 20, 32, Traceback::Serial).unwrap();
/// assert_eq!(t.stages(), 308);
/// let g = t.with_group(64).unwrap();
/// assert_eq!(g.unit_stages(), 64 * 256 + 52);
/// assert!(TileConfig::new(0, 20, 32, Traceback::Serial).is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TileConfig {
    /// Decoded (kept) stages per tile.
    pub f: usize,
    /// Left overlap, stages.
    pub v1: usize,
    /// Right overlap, stages.
    pub v2: usize,
    /// Traceback variant.
    pub traceback: Traceback,
    /// Tiles per work unit (≥ 1).
    pub group: usize,
}

/// Largest work unit accepted, in stages.
pub const MAX_UNIT_STAGES: usize = 1 << 24;

impl TileConfig {
    /// Validated tile geometry.
    pub fn new(f: usize, v1: usize, v2: usize, traceback: Traceback) -> CodeResult<Self> {
        if f == 0 {
            return Err(invalid!("tile with f=0 decodes nothing; f must be at least 1"));
        }
        let stages = f.checked_add(v1).and_then(|s| s.checked_add(v2));
        if stages.is_none_or(|s| s > MAX_TILE_STAGES) {
            return Err(invalid!(
                "tile of f={f} v1={v1} v2={v2} stages exceeds the limit of {MAX_TILE_STAGES} stages (f+v1+v2)"
            ));
        }
        if let Traceback::Parallel { f0 } = traceback {
            if f0 == 0 {
                return Err(invalid!("parallel traceback with f0=0 has no subframes; f0 must be at least 1"));
            }
            if f0 > f {
                return Err(invalid!("parallel traceback subframe f0={f0} is longer than the tile's f={f}"));
            }
        }
        Ok(Self { f, v1, v2, traceback, group: 1 })
    }

    /// The same tiles, travelling `group` to a work unit.
    pub fn with_group(self, group: usize) -> CodeResult<Self> {
        if group == 0 {
            return Err(invalid!("a work unit of 0 tiles carries nothing; group must be at least 1"));
        }
        // v1 + v2 ≤ MAX_TILE_STAGES (checked by `new`), so their sum cannot overflow.
        let stages = group.checked_mul(self.f).and_then(|s| s.checked_add(self.v1 + self.v2));
        match stages {
            Some(s) if s <= MAX_UNIT_STAGES => Ok(Self { group, ..self }),
            _ => Err(invalid!(
                "a work unit of {group} tiles of f={} exceeds the limit of {MAX_UNIT_STAGES} stages",
                self.f
            )),
        }
    }

    /// Parse `F,V1,V2` (the CLI's `--tile`) with the given traceback.
    pub fn parse(text: &str, traceback: Traceback) -> CodeResult<Self> {
        let parts: Vec<&str> = text.split(',').map(str::trim).collect();
        let nums = parts
            .iter()
            .map(|p| p.parse::<usize>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| invalid!("tile '{text}' must be three whole numbers f,v1,v2"))?;
        match nums[..] {
            [f, v1, v2] => Self::new(f, v1, v2, traceback),
            _ => Err(invalid!("tile '{text}' must be three whole numbers f,v1,v2")),
        }
    }

    /// The geometry the command line and flowgraph files give as text: tile
    /// `F,V1,V2`, traceback `serial` or `parallel:F0`, and `group` tiles per
    /// unit, each checked against its limits. An error says which of the three
    /// it is about.
    ///
    /// # Example
    /// ```
    /// use gpufec::codes::conv::{TileConfig, TileField, Traceback};
    /// let t = TileConfig::from_text("256,20,45", "parallel:32", 64).unwrap();
    /// assert_eq!((t.f, t.v2, t.traceback, t.group), (256, 45, Traceback::Parallel { f0: 32 }, 64));
    /// assert_eq!(TileConfig::from_text("64,20,20", "parallel:65", 1).unwrap_err().0, TileField::Traceback);
    /// assert_eq!(TileConfig::from_text("64,20", "serial", 1).unwrap_err().0, TileField::Tile);
    /// assert_eq!(TileConfig::from_text("64,20,20", "serial", 0).unwrap_err().0, TileField::Group);
    /// ```
    pub fn from_text(tile: &str, traceback: &str, group: usize) -> Result<Self, (TileField, CodeError)> {
        let t = Self::parse(tile, Traceback::Serial).map_err(|e| (TileField::Tile, e))?;
        let tb = Traceback::parse(traceback).map_err(|e| (TileField::Traceback, e))?;
        let t = Self::new(t.f, t.v1, t.v2, tb).map_err(|e| (TileField::Traceback, e))?;
        t.with_group(group).map_err(|e| (TileField::Group, e))
    }

    /// Stages one tile runs over: v1 + f + v2.
    pub fn stages(&self) -> usize {
        self.v1 + self.f + self.v2
    }

    /// Decoded stages per work unit: group · f.
    pub fn unit_bits(&self) -> usize {
        self.group * self.f
    }

    /// Stages one work unit carries: group · f + v1 + v2.
    pub fn unit_stages(&self) -> usize {
        self.unit_bits() + self.v1 + self.v2
    }

    /// Work units needed for a stream of `stages` stages.
    pub fn units_for(&self, stages: usize) -> usize {
        stages.div_ceil(self.unit_bits())
    }

    /// Subframe length for the traceback: f for serial, f0 for parallel.
    pub fn subframe(&self) -> usize {
        match self.traceback {
            Traceback::Serial => self.f,
            Traceback::Parallel { f0 } => f0,
        }
    }

    /// Number of tracebacks per tile.
    pub fn subframes(&self) -> usize {
        self.f.div_ceil(self.subframe())
    }

    /// Tile-relative stage whose best state starts the traceback of subframe `s`.
    pub fn traceback_start(&self, s: usize) -> usize {
        (self.v1 + (s + 1) * self.subframe() + self.v2).min(self.stages()) - 1
    }
}

/// Largest frame accepted, in information bits.
pub const MAX_FRAME_BITS: usize = 1 << 26;

/// Whole frames, each decoded from a known start state 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameConfig {
    /// Information bits per frame.
    pub frame: usize,
    /// Whether the frame ends in K−1 tail bits (terminated) or not.
    pub terminated: bool,
}

impl FrameConfig {
    /// Validated frame geometry.
    pub fn new(frame: usize, terminated: bool) -> CodeResult<Self> {
        if frame == 0 {
            return Err(invalid!("frame of 0 bits; frame must be at least 1"));
        }
        if frame > MAX_FRAME_BITS {
            return Err(invalid!("frame of {frame} bits exceeds the limit of {MAX_FRAME_BITS}"));
        }
        Ok(Self { frame, terminated })
    }

    /// Trellis stages per frame for a code of constraint length `k`.
    pub fn stages(&self, k: u32) -> usize {
        self.frame + if self.terminated { k as usize - 1 } else { 0 }
    }
}

/// What a Viterbi decoder decodes: overlapping tiles of a stream, or frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ViterbiMode {
    /// Tiles of a continuous stream.
    Tiled(TileConfig),
    /// Whole frames.
    Frame(FrameConfig),
}

impl ViterbiMode {
    /// Trellis stages of one work unit of a code of constraint length `k`:
    /// a group of tiles with their overlaps, or a frame with its tail.
    pub fn unit_stages(&self, k: u32) -> usize {
        match self {
            ViterbiMode::Tiled(t) => t.unit_stages(),
            ViterbiMode::Frame(f) => f.stages(k),
        }
    }

    /// Information bits one work unit decodes to.
    pub fn unit_bits(&self) -> usize {
        match self {
            ViterbiMode::Tiled(t) => t.unit_bits(),
            ViterbiMode::Frame(f) => f.frame,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_validate() {
        assert_eq!(Traceback::parse("serial").unwrap(), Traceback::Serial);
        assert_eq!(Traceback::parse("parallel:32").unwrap(), Traceback::Parallel { f0: 32 });
        assert!(Traceback::parse("parallel:x").is_err());
        assert!(Traceback::parse("fast").is_err());
        let t = TileConfig::parse("256,20,32", Traceback::Serial).unwrap();
        assert_eq!((t.f, t.v1, t.v2), (256, 20, 32));
        assert!(TileConfig::parse("256,20", Traceback::Serial).is_err());
        assert!(TileConfig::parse("0,20,32", Traceback::Serial).is_err());
        assert!(TileConfig::new(64, 0, 0, Traceback::Parallel { f0: 0 }).is_err());
        assert!(TileConfig::new(64, 0, 0, Traceback::Parallel { f0: 65 }).is_err());
        assert!(TileConfig::new(1 << 17, 0, 0, Traceback::Serial).is_err());
        assert!(TileConfig::new(1, usize::MAX, 1, Traceback::Serial).is_err(), "f+v1+v2 must not wrap around");
        assert!(FrameConfig::new(0, true).is_err());
        assert!(t.with_group(0).is_err());
        assert!(t.with_group(1 << 20).is_err());
        assert_eq!(t.with_group(3).unwrap().unit_stages(), 3 * 256 + 52);
    }

    #[test]
    fn subframe_geometry() {
        let t = TileConfig::new(100, 10, 20, Traceback::Parallel { f0: 32 }).unwrap();
        assert_eq!(t.subframes(), 4);
        assert_eq!(t.traceback_start(0), 10 + 32 + 20 - 1);
        assert_eq!(t.traceback_start(3), t.stages() - 1);
        let s = TileConfig::new(100, 10, 20, Traceback::Serial).unwrap();
        assert_eq!(s.subframes(), 1);
        assert_eq!(s.traceback_start(0), 129);
    }
}
