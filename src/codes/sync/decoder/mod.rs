//! The CPU reference MAP decoder of time-varying block codes over the BSID
//! channel (the seed's Section II-C), as a [`BatchDecoder`].
//!
//! - `lattice.rs`: γ by the corridor-constrained lattice, 32 lattices per
//!   vector loop (`f32`, as the seed computes the receiver metric).
//! - `frame.rs`: α, β (normalised per index), symbol APPs, decisions and
//!   bit LLRs of one frame (`f64`, as the seed).
//! - `geometry.rs`: state and corridor indices; `received.rs`: hard bits or
//!   LLRs in, the receiver metric's weights out.
//!
//! Frames of a batch run on rayon's threads, one frame per task; a batch of
//! fewer frames than threads computes each frame's γ on all of them instead.

mod frame;
mod geometry;
mod lattice;
mod received;

pub use frame::{Framing, Outcome};
pub use lattice::{FLUSH, LANES};
pub use received::{LLR_CLAMP, Received, receiver_weights};

use crate::codes::decode::{Batch, BatchDecoder, BatchLimit, Decoded, UnitInput, UnitReport, UnitShape, check_batch};
use crate::codes::error::{CodeError, CodeResult, invalid};
use crate::codes::simd::SimdLevel;
use crate::codes::sync::{BsidParams, StateLimits, SyncCode};
use crate::codes::threads::decoder_threads;
use frame::{FrameOut, FrameScratch, Setup};
use geometry::Geometry;
use lattice::Moves;
use std::marker::PhantomData;

/// Under [`Storage::Auto`], γ of a whole frame is kept when it takes at most
/// this many bytes (per frame in flight, so per thread).
pub const GLOBAL_GAMMA_BYTES: usize = 64 << 20;

/// Most memory one frame's decoding may take (γ, Σ_D γ, α, the received
/// weights), checked when the decoder is made: a code and channel needing
/// more are refused before anything is allocated.
pub const MAX_FRAME_BYTES: usize = 1 << 30;

/// Default frames per batch.
pub const DEFAULT_BATCH_FRAMES: usize = 64;

/// Default exclusion probability of the state-space limits.
pub const DEFAULT_EXCLUSION: f64 = 1e-10;

/// Where γ lives (the seed's Section IV).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Storage {
    /// Global when γ of a frame fits [`GLOBAL_GAMMA_BYTES`], else local.
    Auto,
    /// γ of every index kept for the backward pass: computed once.
    Global,
    /// γ of one index at a time, computed again for the backward pass: twice
    /// the lattice work, a frame's γ never held.
    Local,
}

/// How the decoder is set up beyond its code and channel.
///
/// # Example
/// ```
/// use gpufec::codes::sync::{DecoderConfig, Framing, Storage};
/// let cfg = DecoderConfig { framing: Framing::Stream, ..DecoderConfig::default() };
/// assert_eq!((cfg.exclusion, cfg.storage), (1e-10, Storage::Auto));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DecoderConfig {
    /// Probability the state-space limits may leave out, in (0, 1).
    pub exclusion: f64,
    /// Global or local γ.
    pub storage: Storage,
    /// Whole frames, or windows of a stream.
    pub framing: Framing,
}

impl Default for DecoderConfig {
    fn default() -> Self {
        Self { exclusion: DEFAULT_EXCLUSION, storage: Storage::Auto, framing: Framing::Frames }
    }
}

/// Arithmetic the decoder does per decoded symbol, counted from its loops
/// (interior indices, every state; the first few indices, whose states no
/// path reaches yet, are skipped and cost less).
///
/// # Example
/// ```
/// use gpufec::codes::sync::{BsidParams, DecoderConfig, SyncCode, SyncMapDecoder};
/// let code = SyncCode::random(32, 10, 210, 1).unwrap();
/// let p = BsidParams::new(1e-3, 1e-3, 0.0).unwrap();
/// let dec = SyncMapDecoder::<u8>::new(code, p, DecoderConfig::default(), 1).unwrap();
/// let ops = dec.ops_per_symbol();
/// assert!(ops.lattice_flops > ops.recursion_flops);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OpCount {
    /// Lattice cells computed per symbol: M_τ·q lattices of n rows of M_n
    /// cells (twice with local storage).
    pub lattice_cells: f64,
    /// Floating-point operations in them: 7 per cell (three fused
    /// multiply-adds and a multiplication), besides a compare and a select
    /// of the flush.
    pub lattice_flops: f64,
    /// The rest, in f64: Σ_D γ (M_τ·M_n·q), α and β (2 each per
    /// transition), APPs (2 per transition and symbol value), the bit LLRs.
    pub recursion_flops: f64,
}

impl OpCount {
    /// All floating-point operations per symbol.
    pub fn flops(&self) -> f64 {
        self.lattice_flops + self.recursion_flops
    }
}

/// The CPU MAP decoder of a [`SyncCode`] over the BSID channel, taking hard
/// bits (`T = u8`) or LLRs (`T = f32`). A unit is one received frame
/// ([`Framing::Frames`]) or a window of a stream starting at a frame
/// ([`Framing::Stream`], for the [`WindowCutter`](crate::codes::framing::WindowCutter));
/// it decodes to N·log2 q bits, and its report says how many received items
/// the frame consumed. A frame whose drift left the limits fails its check
/// (`check: Some(false)`, a frame error the receiver knows of); every other
/// report has no check. The limits ([`limits`](Self::limits)) are in every
/// [`describe`](BatchDecoder::describe).
///
/// # Example
/// ```
/// use gpufec::codes::channel::Channel;
/// use gpufec::codes::encode::Encoder;
/// use gpufec::codes::sync::{Bsid, BsidParams, DecoderConfig, SyncCode, SyncEncoder, SyncMapDecoder};
/// use gpufec::codes::{Batch, BatchDecoder, Decoded};
/// let code = SyncCode::random(16, 8, 20, 7).unwrap();
/// let p = BsidParams::new(1e-3, 1e-3, 0.0).unwrap();
/// let info: Vec<u8> = (0..80).map(|i| (i * 7 % 5 == 0) as u8).collect();
/// let mut sent = Vec::new();
/// SyncEncoder::new(code.clone()).encode(&info, &mut sent).unwrap();
/// let mut received = Vec::new();
/// Bsid::new(p, 3).transmit(&sent, &mut received).unwrap();
/// let mut dec = SyncMapDecoder::<u8>::new(code, p, DecoderConfig::default(), 1).unwrap();
/// let spans = [gpufec::codes::UnitSpan { start: 0, len: received.len(), format: 0 }];
/// let mut out = Decoded::default();
/// dec.decode(&Batch::spans(&received, &spans).unwrap(), &mut out).unwrap();
/// assert_eq!(out.bits, info);
/// assert_eq!(out.reports[0].consumed, received.len());
/// ```
pub struct SyncMapDecoder<T: Received> {
    code: SyncCode,
    params: BsidParams,
    cfg: DecoderConfig,
    limits: StateLimits,
    geo: Geometry,
    global: bool,
    shape: [UnitShape; 1],
    threads: usize,
    level: SimdLevel,
    soft: bool,
    scale: f32,
    batch_units: usize,
    scratch: Vec<FrameScratch>,
    /// The decoded batch not yet collected.
    done: Option<Decoded>,
    frames: u64,
    beyond: u64,
    _item: PhantomData<T>,
}

impl<T: Received> SyncMapDecoder<T> {
    /// A decoder of `code` for a channel of `params`, on `threads` threads
    /// (0: every core). The limits come from `cfg.exclusion`.
    pub fn new(code: SyncCode, params: BsidParams, cfg: DecoderConfig, threads: usize) -> CodeResult<Self> {
        let limits = StateLimits::new(&params, code.n(), code.symbols(), cfg.exclusion)?;
        let geo = Geometry::new(&code, &limits);
        let threads = decoder_threads(threads)?;
        let gamma_bytes = geo.symbols * geo.gamma_len() * std::mem::size_of::<f32>();
        let global = match cfg.storage {
            Storage::Auto => gamma_bytes <= GLOBAL_GAMMA_BYTES,
            Storage::Global => true,
            Storage::Local => false,
        };
        let tau = geo.tau();
        let per_index = geo.gamma_len() * std::mem::size_of::<f32>();
        let bytes = if global { per_index * geo.symbols } else { per_index }
            + geo.symbols * geo.states * geo.corridor * std::mem::size_of::<f64>()
            + (geo.symbols + 1) * geo.states * std::mem::size_of::<f64>()
            + (3 * tau + geo.states) * (2 + 2 * LANES) * std::mem::size_of::<f32>();
        if bytes > MAX_FRAME_BYTES {
            return Err(invalid!(
                "decoding a frame of {} would take {bytes} bytes ({}), more than {MAX_FRAME_BYTES}: shorten the frame or improve the channel",
                code.describe(),
                limits.describe()
            ));
        }
        let items = match cfg.framing {
            // A stream's window reaches the latest end the limits allow.
            Framing::Stream => tau + limits.frame.hi as usize,
            // Whole frames longer than the limits allow are decoded and
            // counted, up to twice τ and the state space.
            Framing::Frames => 2 * tau + geo.states,
        };
        let shape = [UnitShape { items, bits: code.info_bits(), input: UnitInput::UpTo }];
        Ok(Self {
            code,
            params,
            cfg,
            limits,
            geo,
            global,
            shape,
            threads,
            level: default_level(),
            soft: false,
            scale: 1.0,
            batch_units: DEFAULT_BATCH_FRAMES,
            scratch: Vec::new(),
            done: None,
            frames: 0,
            beyond: 0,
            _item: PhantomData,
        })
    }

    /// Also give the LLR of every decoded bit, from the symbol APPs.
    pub fn with_soft_output(mut self) -> Self {
        self.soft = true;
        self
    }

    /// Take LLRs as the items divided by `scale` (the quantizer's scale of
    /// `i8` LLRs; finite and positive).
    pub fn with_input_scale(mut self, scale: f32) -> CodeResult<Self> {
        if !(scale.is_finite() && scale > 0.0) {
            return Err(invalid!("input scale {scale}: give a finite factor > 0"));
        }
        self.scale = scale;
        Ok(self)
    }

    /// Run the lattice at `level` instead of the best this CPU has (the
    /// results do not change: the same fused operations at every level); a
    /// level the CPU lacks is refused.
    pub fn with_simd(mut self, level: SimdLevel) -> CodeResult<Self> {
        if !level_runs(level) {
            return Err(invalid!("SIMD level {level} (with FMA) is not supported by this CPU"));
        }
        self.level = level;
        Ok(self)
    }

    /// Set the frames per batch (at least 1).
    pub fn with_batch_units(mut self, units: usize) -> Self {
        self.batch_units = units.max(1);
        self
    }

    /// The state-space limits every frame is decoded within.
    pub fn limits(&self) -> &StateLimits {
        &self.limits
    }

    /// Whether γ of a whole frame is kept (global storage).
    pub fn global_storage(&self) -> bool {
        self.global
    }

    /// Bytes of γ a frame holds: the whole frame's (global) or one index's.
    pub fn gamma_bytes(&self) -> usize {
        let per_index = self.geo.gamma_len() * std::mem::size_of::<f32>();
        if self.global { per_index * self.geo.symbols } else { per_index }
    }

    /// The code decoded.
    pub fn code(&self) -> &SyncCode {
        &self.code
    }

    /// Frames decoded so far, and how many of them left the limits.
    pub fn frames(&self) -> (u64, u64) {
        (self.frames, self.beyond)
    }

    /// The arithmetic per decoded symbol ([`OpCount`]).
    pub fn ops_per_symbol(&self) -> OpCount {
        let g = &self.geo;
        let (m, w, q, n) = (g.states as f64, g.corridor as f64, g.q as f64, g.n as f64);
        let passes = if self.global { 1.0 } else { 2.0 };
        let lattice_cells = passes * m * q * n * w;
        let transitions = m * w;
        let bits = self.code.symbol_bits() as f64;
        let recursion_flops = transitions * q + 2.0 * transitions + 2.0 * transitions + transitions * (2.0 * q + 1.0) + 2.0 * m + 2.0 * m + 2.0 * q + q * bits;
        OpCount { lattice_cells, lattice_flops: 7.0 * lattice_cells, recursion_flops }
    }

    /// Check `batch` as [`submit`](BatchDecoder::submit) does before
    /// decoding it (the formats and the limit, every item, the windows'
    /// lengths), for any decoder of this code and channel; the units it holds.
    pub fn check(&self, batch: &Batch<'_, T>) -> CodeResult<usize> {
        let units = check_batch(batch, &self.shape, self.limit())?;
        T::check(batch, units)?;
        self.check_windows(batch, units)?;
        Ok(units)
    }

    /// The lattice's branch weights that no sample changes, in `f32`:
    /// an insertion of a random bit (Pi/2) and a deletion (Pd).
    pub fn lattice_moves(&self) -> (f32, f32) {
        ((self.params.pi() / 2.0) as f32, self.params.pd() as f32)
    }

    /// The channel the decoder is made for.
    pub fn params(&self) -> &BsidParams {
        &self.params
    }

    /// What LLRs are divided by.
    pub fn input_scale(&self) -> f32 {
        self.scale
    }

    /// How units end (whole frames or windows of a stream).
    pub fn framing(&self) -> Framing {
        self.cfg.framing
    }

    /// Decode one received unit alone (as [`Framing`] says), also giving
    /// its symbol APPs (N rows of q, each summing to 1) in `app`.
    pub fn decode_frame(&mut self, items: &[T], bits: &mut Vec<u8>, app: &mut Vec<f64>) -> CodeResult<Outcome> {
        let spans = [crate::codes::UnitSpan { start: 0, len: items.len(), format: 0 }];
        let batch = Batch::spans(items, &spans)?;
        self.check(&batch)?;
        bits.clear();
        bits.resize(self.code.info_bits(), 0);
        let mut scratch = std::mem::take(&mut self.scratch);
        if scratch.is_empty() {
            scratch.push(FrameScratch::default());
        }
        let mut out = FrameOut { bits, soft: None, app: Some(app) };
        let o = self.setup().decode(items, &mut scratch[0], &mut out, self.threads > 1);
        self.scratch = scratch;
        self.count(std::slice::from_ref(&o));
        Ok(o)
    }

    fn setup(&self) -> Setup<'_> {
        let (insert, delete) = self.lattice_moves();
        let moves = Moves { insert, delete };
        Setup { geo: self.geo, code: &self.code, params: self.params, scale: self.scale, moves, level: self.level, global: self.global, framing: self.cfg.framing }
    }

    fn count(&mut self, outcomes: &[Outcome]) {
        self.frames += outcomes.len() as u64;
        self.beyond += outcomes.iter().filter(|o| o.beyond).count() as u64;
    }

    /// A window of a stream shorter than the shortest frame the limits
    /// allow: the stream ended inside a frame.
    fn check_windows(&self, batch: &Batch<'_, T>, units: usize) -> CodeResult<()> {
        let shortest = self.geo.tau() as i64 + i64::from(self.limits.frame.lo);
        if self.cfg.framing != Framing::Stream {
            return Ok(());
        }
        match batch.spans_iter().take(units).find(|s| (s.len as i64) < shortest) {
            Some(s) => Err(CodeError::Truncated(format!(
                "a received block of {} bits is shorter than the {shortest} the limits allow for a frame of {} bits ({})",
                s.len,
                self.geo.tau(),
                self.limits.describe()
            ))),
            None => Ok(()),
        }
    }

    fn decode_batch(&mut self, batch: &Batch<'_, T>, out: &mut Decoded) -> CodeResult<()> {
        let units = self.check(batch)?;
        let k = self.code.info_bits();
        let bits_at = out.bits.len();
        out.bits.resize(bits_at + units * k, 0);
        let soft_at = out.soft.len();
        if self.soft {
            out.soft.resize(soft_at + units * k, 0.0);
        }
        let mut outcomes = vec![Outcome::default(); units];
        // Fewer frames than threads: each frame's γ on all of them.
        let nested = units < self.threads;
        let per_task = if nested { units } else { units.div_ceil(self.threads) };
        let tasks = units.div_ceil(per_task.max(1));
        let mut scratch = std::mem::take(&mut self.scratch);
        while scratch.len() < tasks {
            scratch.push(FrameScratch::default());
        }
        let setup = self.setup();
        let soft = if self.soft { Some(&mut out.soft[soft_at..]) } else { None };
        let mut soft_chunks = soft.map(|s| s.chunks_mut(per_task * k)).into_iter().flatten();
        let jobs = out.bits[bits_at..].chunks_mut(per_task * k).zip(outcomes.chunks_mut(per_task)).zip(scratch.iter_mut()).enumerate();
        rayon::scope(|sc| {
            for (t, ((bits, outcomes), scratch)) in jobs {
                let soft = soft_chunks.next();
                let setup = &setup;
                sc.spawn(move |_| {
                    let mut soft = soft.map(|s| s.chunks_mut(k));
                    for (j, (bits, o)) in bits.chunks_mut(k).zip(outcomes.iter_mut()).enumerate() {
                        let unit = batch.unit(t * per_task + j);
                        let mut fo = FrameOut { bits, soft: soft.as_mut().and_then(Iterator::next), app: None };
                        *o = setup.decode(unit, scratch, &mut fo, nested);
                    }
                });
            }
        });
        self.scratch = scratch;
        self.count(&outcomes);
        out.reports.extend(outcomes.iter().map(|o| UnitReport { bits: k, iterations: 0, blocks: 1, check: o.beyond.then_some(false), consumed: o.consumed }));
        Ok(())
    }
}

/// AVX-512 where the CPU has it, else AVX2 with FMA, else scalar.
fn default_level() -> SimdLevel {
    [SimdLevel::Avx512, SimdLevel::Avx2].into_iter().find(|&l| level_runs(l)).unwrap_or(SimdLevel::Scalar)
}

/// Whether the lattice can run at `level`: its vector builds use FMA too.
fn level_runs(level: SimdLevel) -> bool {
    #[cfg(target_arch = "x86_64")]
    let fma = std::arch::is_x86_feature_detected!("fma");
    #[cfg(not(target_arch = "x86_64"))]
    let fma = false;
    level == SimdLevel::Scalar || (level.is_supported() && fma)
}

impl<T: Received> BatchDecoder<T> for SyncMapDecoder<T> {
    fn shapes(&self) -> &[UnitShape] {
        &self.shape
    }

    fn limit(&self) -> BatchLimit {
        BatchLimit { units: self.batch_units, items: self.batch_units * self.shape[0].items }
    }

    fn depth(&self) -> usize {
        1
    }

    fn submit(&mut self, batch: &Batch<'_, T>) -> CodeResult<()> {
        // Depth 1: a caller collects before it submits again.
        if self.done.is_some() {
            return Err(invalid!("a batch was submitted before the last one was collected"));
        }
        let mut out = Decoded::default();
        self.decode_batch(batch, &mut out)?;
        self.done = Some(out);
        Ok(())
    }

    fn collect(&mut self, out: &mut Decoded) -> CodeResult<bool> {
        let Some(mut d) = self.done.take() else { return Ok(false) };
        out.bits.append(&mut d.bits);
        out.soft.append(&mut d.soft);
        out.reports.append(&mut d.reports);
        Ok(true)
    }

    fn in_flight(&self) -> usize {
        usize::from(self.done.is_some())
    }

    fn describe(&self) -> String {
        format!(
            "cpu ({}, {}, {LANES} lanes, {}), {}, {}, {}, {} storage ({} KiB of gamma per frame), {:?}",
            crate::codes::words::count_of(self.threads as u64, "thread"),
            T::NAME,
            self.level,
            self.code.describe(),
            self.params.describe(),
            self.limits.describe(),
            if self.global { "global" } else { "local" },
            self.gamma_bytes() / 1024,
            self.cfg.framing
        )
    }

    fn gives_soft(&self) -> bool {
        self.soft
    }
}

#[cfg(test)]
mod tests;
