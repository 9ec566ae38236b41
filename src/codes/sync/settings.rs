//! The sync family's settings and what they resolve into: the time-varying
//! block code (q, n, N, its codebooks and marker), the BSID channel it is
//! decoded for (Pi, Pd, Ps, and Eb/N0 when LLRs arrive), the decoder's
//! state-space limits and storage. The command line and flowgraph files fill
//! [`SyncSettings`]; [`SyncSettings::resolve`] is the one place its rules
//! live, and checks every limit (a frame's decoder memory included) before
//! anything large is allocated.

use super::channel::{Bsid, BsidAwgn, BsidParams, MAX_INSERTION};
use super::code::SyncCode;
use super::codebook::{Codebook, MAX_N, MAX_Q};
use super::decoder::{DEFAULT_EXCLUSION, DecoderConfig, Framing, Storage, SyncMapDecoder};
use super::drift::StateLimits;
use super::encoder::SyncEncoder;
use super::link::Sweep;
use super::speculative::Speculative;
use super::MAX_SYMBOLS;
use crate::codes::channel::{Channel, Quantizer, noise_variance};
use crate::codes::decode::BatchDecoder;
use crate::codes::error::{CodeResult, invalid};
use crate::codes::framing::{Cutter, WindowCutter};
use crate::codes::llr::{Llr, LlrType};
use crate::codes::settings::{Chain, Field, FieldType, Noisy, SettingError, Settings, blame, count_in};
use crate::codes::sim::{Transmitter, noise_seed};
use serde::{Deserialize, Serialize};

/// How the codebooks of a code are made, as a user names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CodebookKind {
    /// A different seeded random codebook for every index.
    #[default]
    Random,
    /// One seeded random codebook for every index.
    Repeated,
    /// The sparse codebook (the q lightest words) for every index: the
    /// Davey–MacKay inner code without its watermark.
    Sparse,
    /// The Davey–MacKay preset: the sparse codebook added to a seeded
    /// pseudo-random watermark.
    DaveyMackay,
}

/// Where γ lives, as a user names it ([`Storage`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StorageChoice {
    /// Global when it fits, else local.
    #[default]
    Auto,
    /// γ of the whole frame kept.
    Global,
    /// γ of one index at a time, computed again for the backward pass.
    Local,
}

/// Which channel probabilities a curve's x axis sets, as a user names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SweepChoice {
    /// Pi = Pd = x.
    #[default]
    PiPd,
    /// Pi = x.
    Pi,
    /// Pd = x.
    Pd,
    /// Ps = x.
    Ps,
}

/// How the link hands frames to the decoder, as a user names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FramingChoice {
    /// A stream, cut where the decoder found each frame's end.
    #[default]
    Stream,
    /// Whole received frames, their ends known.
    Frames,
}

/// The sync family's settings, every field optional.
///
/// # Example
/// ```
/// use gpufec::codes::settings::{Chain, Settings};
/// use gpufec::codes::sync::SyncSettings;
/// let chain = SyncSettings { q: Some(32), n: Some(10), symbols: Some(210), pi: Some(1e-3), pd: Some(1e-3), ..Default::default() }.resolve()?;
/// assert_eq!((chain.frame_bits(), chain.code().tau()), (1050, 2100));
/// let e = SyncSettings { q: Some(24), ..Default::default() }.resolve().unwrap_err();
/// assert_eq!(e.field, "q");
/// # Ok::<(), gpufec::codes::settings::SettingError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SyncSettings {
    /// Alphabet size q.
    pub q: Option<u64>,
    /// Bits per codeword n.
    pub n: Option<u64>,
    /// Symbols per frame N.
    #[serde(rename = "N")]
    pub symbols: Option<u64>,
    /// How the codebooks are made.
    pub codebook: Option<CodebookKind>,
    /// A codebook file instead.
    pub codebook_file: Option<String>,
    /// Seed of random codebooks and of the watermark.
    pub codebook_seed: Option<u64>,
    /// Marker bits after every codeword.
    pub marker: Option<String>,
    /// Insertion probability.
    pub pi: Option<f64>,
    /// Deletion probability.
    pub pd: Option<f64>,
    /// Substitution probability.
    pub ps: Option<f64>,
    /// Eb/N0 of BPSK over AWGN after the BSID events (LLRs arrive).
    pub ebn0_db: Option<f64>,
    /// What a curve's x axis sets.
    pub sweep: Option<SweepChoice>,
    /// Probability the state-space limits may leave out.
    pub exclusion: Option<f64>,
    /// Where γ lives.
    pub storage: Option<StorageChoice>,
    /// How the link hands frames to the decoder.
    pub framing: Option<FramingChoice>,
}

/// Everything a sync chain needs, resolved from [`SyncSettings`].
#[derive(Debug, Clone)]
pub struct SyncChain {
    code: SyncCode,
    params: BsidParams,
    cfg: DecoderConfig,
    limits: StateLimits,
    ebn0_db: Option<f64>,
    sweep: Sweep,
    settings: SyncSettings,
}

/// A probability field within [0, `max`], or `default` when absent.
fn probability(field: &'static str, value: Option<f64>, default: f64, max: f64) -> Result<f64, SettingError> {
    match value {
        None => Ok(default),
        Some(p) if (0.0..=max).contains(&p) => Ok(p),
        Some(p) => Err(SettingError::new(field, format!("{p} is outside [0, {max}]"))),
    }
}

impl Settings for SyncSettings {
    type Resolved = SyncChain;
    const FAMILY: &'static str = "sync";
    const FIELDS: &'static [Field] = &[
        Field::new("q", FieldType::Count, "alphabet size q, a power of two in 2..=4096 and at most 2^n (default 32)"),
        Field::new("n", FieldType::Count, "bits per codeword n, 1..=32 (default 10; with a marker, n + its bits at most 32)"),
        Field::new("N", FieldType::Count, "symbols per frame N, 1..=65536, with nN at most 2^20 bits (default 210)"),
        Field::new(
            "codebook",
            FieldType::Choice(&["random", "repeated", "sparse", "davey-mackay"]),
            "random (default: a seeded random codebook per index), repeated (one seeded random codebook), sparse (the q lightest words at every index), davey-mackay (sparse plus a seeded watermark); at most 2^24 codewords in all",
        ),
        Field::new(
            "codebook_file",
            FieldType::Text,
            "a codebook file instead of codebook: 'n q count' then count·q codewords of n characters 0/1, no codeword twice in a codebook, count 1..=N, the file at most 64 MiB",
        ),
        Field::new("codebook_seed", FieldType::Count, "seed of random codebooks and of the Davey-MacKay watermark (default 1)"),
        Field::new("marker", FieldType::Text, "marker bits after every codeword, as 0/1 characters (default none)"),
        Field::new("pi", FieldType::Real, "insertion probability Pi, in [0, 0.5] (default 1e-3)"),
        Field::new("pd", FieldType::Real, "deletion probability Pd, in [0, 1], Pi + Pd at most 1 (default 1e-3)"),
        Field::new("ps", FieldType::Real, "substitution probability Ps of a transmitted bit, in [0, 1] (default 0)"),
        Field::new(
            "ebn0_db",
            FieldType::Real,
            "Eb/N0 of BPSK over AWGN after the BSID events, dB: the link's decoder takes LLRs (default none: hard bits)",
        ),
        Field::new("sweep", FieldType::Choice(&["pi-pd", "pi", "pd", "ps"]), "what the x axis of a curve (--p) sets: pi-pd (default, Pi = Pd), pi, pd or ps"),
        Field::new(
            "exclusion",
            FieldType::Real,
            "probability the decoder's drift limits may leave out, in (0, 1) (default 1e-10); at most 2048 drift states and a corridor of 256",
        ),
        Field::new(
            "storage",
            FieldType::Choice(&["auto", "global", "local"]),
            "where the decoder keeps γ: global (a frame's whole γ), local (one index's, computed again for the backward pass), auto (default: global when it fits)",
        ),
        Field::new(
            "framing",
            FieldType::Choice(&["stream", "frames"]),
            "how the link hands frames to the decoder: stream (default: cut where the decoder found each frame's end) or frames (each frame's received bits, its ends known)",
        ),
    ];

    fn resolve(&self) -> Result<SyncChain, SettingError> {
        let q = count_in("q", self.q, 32, 2..=MAX_Q)?;
        if !q.is_power_of_two() {
            return Err(SettingError::new("q", format!("{q} is not a power of two")));
        }
        let n = count_in("n", self.n, 10, 1..=MAX_N)?;
        if n < usize::BITS as usize && q > 1 << n {
            return Err(SettingError::new("q", format!("{q} symbols need more than the 2^{n} codewords of n = {n} bits")));
        }
        let symbols = count_in("N", self.symbols, 210, 1..=MAX_SYMBOLS)?;
        let seed = self.codebook_seed.unwrap_or(1);
        let code = match (&self.codebook_file, self.codebook) {
            (Some(_), Some(_)) => return Err(SettingError::new("codebook", "give codebook or codebook_file, not both")),
            (Some(_), None) if self.q.is_some() || self.n.is_some() || self.codebook_seed.is_some() => {
                return Err(SettingError::new("codebook_file", "the file gives q and n, and has no seed: drop q, n and codebook_seed"));
            }
            (Some(path), None) => blame("codebook_file", SyncCode::read(std::path::Path::new(path), symbols))?,
            (None, kind) => blame(
                "N",
                match kind.unwrap_or_default() {
                    CodebookKind::Random => SyncCode::random(q, n, symbols, seed),
                    CodebookKind::Repeated => {
                        let mut r = super::codebook::rng(seed);
                        Codebook::random(q, n, &mut r).and_then(|b| SyncCode::repeated(b, symbols))
                    }
                    CodebookKind::Sparse => Codebook::sparse(q, n).and_then(|b| SyncCode::repeated(b, symbols)),
                    CodebookKind::DaveyMackay => SyncCode::davey_mackay(q, n, symbols, seed),
                },
            )?,
        };
        let code = match &self.marker {
            None => code,
            Some(m) => {
                let bits: Vec<u8> = m.bytes().map(|c| c.wrapping_sub(b'0')).collect();
                if bits.is_empty() || bits.iter().any(|&b| b > 1) {
                    return Err(SettingError::new("marker", format!("'{m}' is not a string of 0 and 1")));
                }
                blame("marker", code.with_marker(&bits))?
            }
        };
        let pi = probability("pi", self.pi, 1e-3, MAX_INSERTION)?;
        let pd = probability("pd", self.pd, 1e-3, 1.0)?;
        let ps = probability("ps", self.ps, 0.0, 1.0)?;
        if pi + pd > 1.0 {
            return Err(SettingError::new("pd", format!("Pi + Pd = {} is above 1", pi + pd)));
        }
        let params = blame("pd", BsidParams::new(pi, pd, ps))?;
        if let Some(e) = self.ebn0_db {
            blame("ebn0_db", noise_variance(e, code.rate().min(1.0)))?;
        }
        let exclusion = match self.exclusion {
            None => DEFAULT_EXCLUSION,
            Some(x) if x > 0.0 && x < 1.0 => x,
            Some(x) => return Err(SettingError::new("exclusion", format!("{x} is outside (0, 1): limits that leave out nothing are infinite"))),
        };
        let storage = match self.storage.unwrap_or_default() {
            StorageChoice::Auto => Storage::Auto,
            StorageChoice::Global => Storage::Global,
            StorageChoice::Local => Storage::Local,
        };
        let framing = match self.framing.unwrap_or_default() {
            FramingChoice::Stream => Framing::Stream,
            FramingChoice::Frames => Framing::Frames,
        };
        let cfg = DecoderConfig { exclusion, storage, framing };
        let limits = blame("exclusion", StateLimits::new(&params, code.n(), code.symbols(), exclusion))?;
        // The decoder's own limits (a frame's memory among them), before anything is allocated.
        blame("N", SyncMapDecoder::<u8>::new(code.clone(), params, cfg, 1))?;
        let sweep = match self.sweep.unwrap_or_default() {
            SweepChoice::PiPd => Sweep::PiPd,
            SweepChoice::Pi => Sweep::Pi,
            SweepChoice::Pd => Sweep::Pd,
            SweepChoice::Ps => Sweep::Ps,
        };
        Ok(SyncChain { code, params, cfg, limits, ebn0_db: self.ebn0_db, sweep, settings: self.clone() })
    }
}

impl SyncChain {
    /// The code.
    pub fn code(&self) -> &SyncCode {
        &self.code
    }

    /// The channel the decoder is made for.
    pub fn params(&self) -> BsidParams {
        self.params
    }

    /// The decoder's configuration as the link takes it.
    pub fn config(&self) -> DecoderConfig {
        self.cfg
    }

    /// The configuration of a decoder of a stream's windows (the decoder
    /// block's, whatever the link does).
    pub fn stream_config(&self) -> DecoderConfig {
        DecoderConfig { framing: Framing::Stream, ..self.cfg }
    }

    /// The drift limits at the chain's channel.
    pub fn limits(&self) -> &StateLimits {
        &self.limits
    }

    /// Eb/N0 of the AWGN after the BSID events, when LLRs arrive.
    pub fn ebn0_db(&self) -> Option<f64> {
        self.ebn0_db
    }

    /// What a curve's x axis sets.
    pub fn sweep(&self) -> Sweep {
        self.sweep
    }

    /// Received items of a stream's window: the frame at its latest end.
    pub fn window(&self) -> usize {
        self.code.tau() + self.limits.frame.hi.max(0) as usize
    }

    /// The cutter of a stream's windows, each starting where the decoder
    /// found the last frame ended. At the stream's end, up to the limits'
    /// span of drifts (m_τ⁺ − m_τ⁻ items, fewer than the shortest frame)
    /// after the last frame are that frame's own: its end as decoded may
    /// differ from the true one by as much.
    pub fn stream_cutter<T: Copy + Send>(&self) -> CodeResult<WindowCutter<T>> {
        Ok(WindowCutter::new(self.window())?.with_leftover(self.leftover()))
    }

    /// `inner`, a decoder of the chain's stream windows, decoding segments of
    /// frames many windows at a time ([`Speculative`]: the bits of
    /// frame-at-a-time decoding), and the cutter of its segments.
    ///
    /// A guess far from a frame's true start (beyond the drift limits)
    /// teaches nothing about where the frame ends, so a segment holds the
    /// frames over which the drift stays well within the limits: its standard
    /// deviation (about √((Pi + Pd)·bits) for small Pi, Pd) at most 2/3 of
    /// m_τ⁺, and at most one batch of `inner`. (Measured on the CPU, q = 16,
    /// n = 8, N = 210, 300 frames: 8, 16, 32, 64 frames a segment took 76, 41,
    /// 26, 27 rounds at Pi = Pd = 1e-3 and 77, 40, 48, 45 at 1e-2.)
    pub fn speculative<T: Copy + Send + Sync>(&self, inner: Box<dyn BatchDecoder<T>>) -> CodeResult<(Speculative<T>, WindowCutter<T>)> {
        let spread = (self.params.pi() + self.params.pd()) * self.code.tau() as f64;
        let reach = (2.0 * f64::from(self.limits.frame.hi.max(1)) / 3.0).powi(2);
        let frames = if spread > 0.0 { (reach / spread).floor() as usize } else { usize::MAX };
        let frames = inner.limit().units.min(frames).max(1);
        Speculative::new(inner, self.code.tau(), frames, self.leftover())
    }

    /// Items at the stream's end that [`stream_cutter`](Self::stream_cutter)
    /// leaves to the last frame.
    fn leftover(&self) -> usize {
        let (lo, hi) = (i64::from(self.limits.frame.lo), i64::from(self.limits.frame.hi));
        let shortest = self.code.tau() as i64 + lo;
        (hi - lo).min(shortest - 1).max(0) as usize
    }

    /// The x of the chain's own channel on its sweep: Pi = Pd needs them equal.
    pub fn own_x(&self) -> CodeResult<f64> {
        let p = &self.params;
        match self.sweep {
            Sweep::PiPd if p.pi() == p.pd() => Ok(p.pi()),
            Sweep::PiPd => Err(invalid!("Pi = {} and Pd = {} differ: sweep pi, pd or ps, or give the points (--p)", p.pi(), p.pd())),
            Sweep::Pi => Ok(p.pi()),
            Sweep::Pd => Ok(p.pd()),
            Sweep::Ps => Ok(p.ps()),
        }
    }
}

impl Chain for SyncChain {
    type Settings = SyncSettings;

    fn settings(&self) -> &SyncSettings {
        &self.settings
    }

    /// `q=32 n=10 N=210, random per index (seed 1), Pi=... , m_tau=[..]`.
    fn describe(&self) -> String {
        let llrs = self.ebn0_db.map_or("hard bits".to_string(), |e| format!("LLRs at Eb/N0 {e} dB"));
        format!("{}, {}, {llrs}, {}", self.code.describe(), self.params.describe(), self.limits.describe())
    }

    /// Information bits over bits sent, log2 q / n (with the marker).
    fn rate(&self) -> f64 {
        self.code.rate()
    }

    /// Information bits per frame, N·log2 q.
    fn frame_bits(&self) -> usize {
        self.code.info_bits()
    }

    /// Windows of a stream, each starting where the decoder found the last
    /// frame ended.
    fn cutter<T: Llr>(&self) -> CodeResult<Box<dyn Cutter<T>>> {
        Ok(Box::new(self.stream_cutter()?))
    }

    /// Frames through the chain's BSID channel and BPSK over AWGN at
    /// `ebn0_db`, each frame's window (from its true start, as the cutter
    /// cuts it after the decoder found the frame before) back to back.
    fn noisy<T: Llr>(&self, bits: u64, ebn0_db: f64, seed: u64) -> CodeResult<Noisy<T>> {
        let k = self.frame_bits() as u64;
        let frames = usize::try_from(bits.div_ceil(k).max(1)).map_err(|_| invalid!("{bits} bits do not fit this machine"))?;
        let rate = self.rate().min(1.0);
        let quantizer = Quantizer::matched(noise_variance(ebn0_db, rate)?)?;
        let scale = if T::TYPE == LlrType::I8 { quantizer.scale() } else { 1.0 };
        let channel = BsidAwgn::<T>::with_quantizer(self.params, ebn0_db, rate, noise_seed(seed), quantizer)?;
        Ok(Noisy { llrs: self.windows(channel, frames, seed)?, info_bits: frames as u64 * k, scale })
    }
}

impl SyncChain {
    /// `frames` frames of the bits of `seed` through `channel`, each
    /// frame's window (from its true start, as the cutter cuts it once the
    /// decoder found the frame before) back to back: [`Chain::noisy`]'s
    /// units, and with the hard [`Bsid`] channel, the hard bits' ones.
    pub fn windows<C: Channel<In = u8>>(&self, channel: C, frames: usize, seed: u64) -> CodeResult<Vec<C::Out>> {
        let k = self.frame_bits();
        let mut tx = Transmitter::new(seed, SyncEncoder::new(self.code.clone()), channel);
        let (mut info, mut received, mut starts) = (Vec::new(), Vec::new(), Vec::with_capacity(frames));
        for _ in 0..frames.max(1) {
            starts.push(received.len());
            tx.send(k, &mut info, &mut received)?;
        }
        // Frames after the last counted one, until its window is full.
        let (last, window) = (starts[starts.len() - 1], self.window());
        while received.len() < last + window {
            tx.send(k, &mut info, &mut received)?;
        }
        Ok(starts.iter().flat_map(|&s| received[s..s + window].iter().copied()).collect())
    }

    /// [`windows`](Self::windows) of hard bits through the chain's own channel.
    pub fn hard_windows(&self, frames: usize, seed: u64) -> CodeResult<Vec<u8>> {
        self.windows(Bsid::new(self.params, noise_seed(seed)), frames, seed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_names_its_field() {
        let ok = SyncSettings::default();
        for (s, field) in [
            (SyncSettings { q: Some(24), ..ok.clone() }, "q"),
            (SyncSettings { q: Some(1), ..ok.clone() }, "q"),
            (SyncSettings { q: Some(64), n: Some(5), ..ok.clone() }, "q"),
            (SyncSettings { q: Some(8192), n: Some(20), ..ok.clone() }, "q"),
            (SyncSettings { n: Some(0), ..ok.clone() }, "n"),
            (SyncSettings { n: Some(33), ..ok.clone() }, "n"),
            (SyncSettings { symbols: Some(0), ..ok.clone() }, "N"),
            (SyncSettings { symbols: Some(1 << 17), ..ok.clone() }, "N"),
            (SyncSettings { codebook: Some(CodebookKind::Sparse), codebook_file: Some("x".into()), ..ok.clone() }, "codebook"),
            (SyncSettings { codebook_file: Some("/nonexistent/books".into()), ..ok.clone() }, "codebook_file"),
            (SyncSettings { codebook_file: Some("/nonexistent/books".into()), q: Some(4), ..ok.clone() }, "codebook_file"),
            (SyncSettings { marker: Some("0x".into()), ..ok.clone() }, "marker"),
            (SyncSettings { n: Some(31), q: Some(4), marker: Some("01".into()), ..ok.clone() }, "marker"),
            (SyncSettings { pi: Some(-0.1), ..ok.clone() }, "pi"),
            (SyncSettings { pi: Some(0.6), ..ok.clone() }, "pi"),
            (SyncSettings { pd: Some(1.5), ..ok.clone() }, "pd"),
            (SyncSettings { ps: Some(f64::NAN), ..ok.clone() }, "ps"),
            (SyncSettings { pi: Some(0.5), pd: Some(0.6), ..ok.clone() }, "pd"),
            (SyncSettings { exclusion: Some(0.0), ..ok.clone() }, "exclusion"),
            (SyncSettings { exclusion: Some(1.0), ..ok.clone() }, "exclusion"),
            (SyncSettings { ebn0_db: Some(1e300), ..ok.clone() }, "ebn0_db"),
            (SyncSettings { pi: Some(0.3), pd: Some(0.3), symbols: Some(20000), ..ok.clone() }, "exclusion"),
        ] {
            assert_eq!(s.resolve().map(|_| ()).unwrap_err().field, field, "{s:?}");
        }
    }

    #[test]
    fn codebook_files_with_duplicates_or_the_wrong_size_are_refused_by_the_field() {
        let dir = std::env::temp_dir().join(format!("gpufec-sync-settings-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (text, says) in [("3 4 1\n000 011 101 000\n", "twice"), ("3 4 1\n000 011 101\n", "too few"), ("3 4 1\n000 011 101 110 111\n", "wrong size")] {
            let path = dir.join("books.txt");
            std::fs::write(&path, text).unwrap();
            let s = SyncSettings { codebook_file: Some(path.display().to_string()), symbols: Some(6), ..Default::default() };
            let e = s.resolve().unwrap_err();
            assert!(e.field == "codebook_file" && e.problem.contains(says), "{e}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_window_and_the_own_point_follow_the_channel() {
        let c = SyncSettings::default().resolve().unwrap();
        assert_eq!((c.code().q(), c.code().n(), c.code().symbols()), (32, 10, 210));
        assert_eq!(c.window(), 2100 + c.limits().frame.hi as usize);
        assert_eq!(c.own_x().unwrap(), 1e-3);
        let differ = SyncSettings { pd: Some(2e-3), ..Default::default() }.resolve().unwrap();
        assert!(differ.own_x().is_err());
        let noisy = c.noisy::<f32>(2000, 6.0, 3).unwrap();
        assert_eq!((noisy.llrs.len(), noisy.info_bits), (2 * c.window(), 2100));
    }
}
