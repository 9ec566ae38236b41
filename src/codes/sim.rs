//! Direct (no FutureSDR) link simulation for BER/FER curves: random bits →
//! encoder → puncture → BPSK → AWGN → LLR (→ i8) → depuncture → tiles or frames →
//! decoder → compare. The `ber` command and the BER tests share it; any
//! [`BatchDecoder`] (CPU or GPU) plugs in.

use crate::codes::channel::{Awgn, Quantizer, bpsk_map};
use crate::codes::conv::{
    ConvEncoder, Depuncturer, EncoderMode, PuncturePattern, Puncturer, TileConfig, Tiler, Traceback, Trellis, ViterbiMode,
};
use crate::codes::decoder::BatchDecoder;
use crate::codes::llr::Llr;
use anyhow::{Context, ensure};
use crate::codes::bits::BitSource;
use std::sync::Arc;
use std::time::Instant;

/// How LLRs reach the decoder.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LlrKind {
    /// `f32` LLRs 2y/σ².
    F32,
    /// `i8` LLRs quantized with this scale; `None` picks 16·σ² per point, which
    /// maps a noiseless ±1 sample to ±32 and saturates beyond ±4.
    I8 {
        /// Quantizer scale, or `None` for the per-point default.
        scale: Option<f32>,
    },
}

/// A decoder for either LLR type.
pub enum LinkDecoder {
    /// Decoder of `f32` LLRs.
    F32(Box<dyn BatchDecoder<f32>>),
    /// Decoder of `i8` LLRs.
    I8(Box<dyn BatchDecoder<i8>>),
}

impl LinkDecoder {
    /// The decoder's one-line description.
    pub fn describe(&self) -> String {
        match self {
            LinkDecoder::F32(d) => d.describe(),
            LinkDecoder::I8(d) => d.describe(),
        }
    }
}

/// When a point stops: whichever limit is reached first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StopRule {
    /// Information bits to simulate at most.
    pub max_bits: u64,
    /// Bit errors after which to stop.
    pub max_errors: u64,
}

/// Result of one Eb/N0 point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BerPoint {
    /// Eb/N0 in dB (per information bit).
    pub ebn0_db: f64,
    /// Information bits compared.
    pub bits: u64,
    /// Of which in error.
    pub bit_errors: u64,
    /// Frames compared.
    pub frames: u64,
    /// Frames with at least one bit error.
    pub frame_errors: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
}

impl BerPoint {
    /// Bit error rate.
    pub fn ber(&self) -> f64 {
        self.bit_errors as f64 / self.bits.max(1) as f64
    }
    /// Frame error rate.
    pub fn fer(&self) -> f64 {
        self.frame_errors as f64 / self.frames.max(1) as f64
    }
}

/// A convolutional-code link to simulate.
#[derive(Debug, Clone)]
pub struct ConvLink {
    /// Code tables.
    pub trellis: Arc<Trellis>,
    /// Puncturing (identity for the mother rate).
    pub puncture: PuncturePattern,
    /// Tiled stream or frames.
    pub mode: ViterbiMode,
    /// Information bits per counted frame (the frame itself in frame mode).
    pub frame_bits: usize,
    /// LLR type at the decoder.
    pub llr: LlrKind,
}

/// The seed of the noise that goes with the bits of `seed`: bits and noise
/// drawn from one seed must not come from the same random sequence. The
/// `Awgn` block derives its noise the same way, so that a flowgraph given the
/// seed of a [`ConvLink`] run sees the same noise.
pub fn noise_seed(seed: u64) -> u64 {
    seed ^ 0x9e37_79b9_7f4a_7c15
}

/// Counts bit and frame errors over a decoded stream, frame by frame; shared
/// by the link simulator and the `BerSink` block.
#[derive(Debug, Clone)]
pub struct Tally {
    point: BerPoint,
    frame_bits: usize,
    in_frame: usize,
    frame_has_error: bool,
}

impl Tally {
    /// Counts for frames of `frame_bits` bits (at least 1), at `ebn0_db`.
    pub fn new(ebn0_db: f64, frame_bits: usize) -> Self {
        Self {
            point: BerPoint { ebn0_db, bits: 0, bit_errors: 0, frames: 0, frame_errors: 0, seconds: 0.0 },
            frame_bits: frame_bits.max(1),
            in_frame: 0,
            frame_has_error: false,
        }
    }

    /// The counts so far (a frame still open is not counted yet).
    pub fn point(&self) -> &BerPoint {
        &self.point
    }

    /// Compare `decoded` with `reference` (the shorter length counts).
    pub fn add(&mut self, decoded: &[u8], reference: &[u8]) {
        for (&d, &r) in decoded.iter().zip(reference) {
            let e = d != r;
            self.point.bit_errors += e as u64;
            self.frame_has_error |= e;
            self.in_frame += 1;
            if self.in_frame == self.frame_bits {
                self.close_frame();
            }
        }
        self.point.bits += decoded.len().min(reference.len()) as u64;
    }

    /// Count the frame in progress, if any bit of it was compared.
    pub fn close_frame(&mut self) {
        if self.in_frame > 0 {
            self.point.frames += 1;
            self.point.frame_errors += self.frame_has_error as u64;
        }
        self.in_frame = 0;
        self.frame_has_error = false;
    }
}

impl ConvLink {
    /// Information bits over channel bits actually sent (puncturing and tails counted).
    pub fn effective_rate(&self) -> f64 {
        let r = self.puncture.rate();
        match self.mode {
            ViterbiMode::Tiled(_) => r,
            ViterbiMode::Frame(f) => r * f.frame as f64 / f.stages(self.trellis.k()) as f64,
        }
    }

    /// Check that the parts fit together.
    pub fn validate(&self) -> anyhow::Result<()> {
        self.puncture.check_fits(self.trellis.n())?;
        ensure!(self.frame_bits > 0, "frame of 0 bits");
        if let ViterbiMode::Frame(f) = self.mode {
            ensure!(self.frame_bits == f.frame, "counted frame ({}) differs from the code frame ({})", self.frame_bits, f.frame);
        }
        if let LlrKind::I8 { scale: Some(s) } = self.llr {
            Quantizer::new(s)?;
        }
        Ok(())
    }

    /// Simulate one Eb/N0 point with `decoder` (its LLR type must match `self.llr`).
    pub fn run_point(&self, decoder: &mut LinkDecoder, ebn0_db: f64, stop: StopRule, seed: u64) -> anyhow::Result<BerPoint> {
        self.validate()?;
        match (decoder, self.llr) {
            (LinkDecoder::F32(d), LlrKind::F32) => self.run::<f32>(d.as_mut(), ebn0_db, stop, seed, |l, out| {
                out.extend_from_slice(l);
                Ok(())
            }),
            (LinkDecoder::I8(d), LlrKind::I8 { scale }) => {
                let var = crate::codes::channel::noise_variance(ebn0_db, self.effective_rate())?;
                let q = Quantizer::new(scale.unwrap_or(16.0 * var as f32))?;
                self.run::<i8>(d.as_mut(), ebn0_db, stop, seed, move |l, out| Ok(q.quantize(l, out)?))
            }
            _ => anyhow::bail!("decoder LLR type does not match the link's LLR type"),
        }
    }

    fn run<T: Llr>(
        &self,
        decoder: &mut dyn BatchDecoder<T>,
        ebn0_db: f64,
        stop: StopRule,
        seed: u64,
        to_llr: impl Fn(&[f32], &mut Vec<T>) -> anyhow::Result<()>,
    ) -> anyhow::Result<BerPoint> {
        let started = Instant::now();
        let n = self.trellis.n();
        let mut bit_source = BitSource::new(seed);
        let mut channel = Awgn::new(ebn0_db, self.effective_rate(), noise_seed(seed))?;
        let enc_mode = match self.mode {
            ViterbiMode::Tiled(_) => EncoderMode::Streaming,
            ViterbiMode::Frame(f) => EncoderMode::Terminated { frame: f.frame },
        };
        let mut encoder = ConvEncoder::new(self.trellis.clone(), enc_mode)?;
        let mut puncturer = Puncturer::new(self.puncture.clone());
        let mut depuncturer = Depuncturer::new(self.puncture.clone());
        let mut tiler = match self.mode {
            ViterbiMode::Tiled(t) => Some(Tiler::<T>::new(t, n)),
            ViterbiMode::Frame(_) => None,
        };
        let unit = decoder.unit();
        let chunk_bits = decoder.batch_units().max(1) * unit.bits_out;
        let mut tally = Tally::new(ebn0_db, self.frame_bits);
        // Reference bits not yet matched by decoded ones (the tiler holds some back).
        let mut reference: Vec<u8> = Vec::new();
        let (mut bits, mut coded, mut sent, mut samples) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let (mut llrs, mut quantized, mut depunct, mut units, mut decoded) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut last = false;
        while !last {
            let mut want = chunk_bits.min((stop.max_bits - tally.point.bits.min(stop.max_bits)) as usize).max(1);
            if let ViterbiMode::Frame(f) = self.mode {
                // Frames decode whole: round the last chunk up to a frame.
                want = want.next_multiple_of(f.frame);
            }
            bits.resize(want, 0);
            bit_source.fill(&mut bits);
            reference.extend_from_slice(&bits);
            coded.clear();
            encoder.encode(&bits, &mut coded)?;
            sent.clear();
            puncturer.puncture(&coded, &mut sent);
            samples.clear();
            bpsk_map(&sent, &mut samples);
            channel.add_noise(&mut samples);
            llrs.clear();
            llrs.extend(samples.iter().map(|&y| channel.llr_gain() * y));
            quantized.clear();
            to_llr(&llrs, &mut quantized)?;
            depunct.clear();
            depuncturer.depuncture(&quantized, &mut depunct);
            let projected = tally.point.bits + reference.len() as u64;
            last = projected >= stop.max_bits || tally.point.bit_errors >= stop.max_errors;
            units.clear();
            match tiler.as_mut() {
                Some(t) => {
                    t.push(&depunct, &mut units);
                    if last {
                        depuncturer.finish()?;
                        t.finish(&mut units)?;
                    }
                }
                None => units.extend_from_slice(&depunct),
            }
            decoded.clear();
            decoder.decode_all(&units, &mut decoded).context("decoder failed")?;
            let m = decoded.len().min(reference.len());
            tally.add(&decoded[..m], &reference[..m]);
            reference.drain(..m);
        }
        tally.close_frame();
        tally.point.seconds = started.elapsed().as_secs_f64();
        Ok(tally.point)
    }
}

/// Eb/N0 distance of a tiled decoder from the (practically) full-frame
/// decoder at one operating point, the metric of the paper's Tables II and III.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TileLoss {
    /// BER of the tiled decoder.
    pub ber_tiled: f64,
    /// BER of the reference decoder on the same bits and noise.
    pub ber_reference: f64,
    /// Loss in dB: how much more Eb/N0 the reference would need to do as badly.
    pub loss_db: f64,
}

/// The full-frame reference for stream decoding: tiles so long (65536 stages,
/// 64-stage overlaps) that edge effects are below measurement.
pub fn reference_tile() -> TileConfig {
    TileConfig { f: 65536, v1: 64, v2: 64, traceback: Traceback::Serial, group: 1 }
}

/// Reference BER at `ebn0_db` and its local slope in decades per dB, for a
/// stream of `bits` information bits (seeded), rate 1/n of `trellis`.
pub fn reference_slope(
    trellis: &Arc<Trellis>,
    puncture: &PuncturePattern,
    ebn0_db: f64,
    bits: u64,
    seed: u64,
    decoder: impl Fn(TileConfig) -> anyhow::Result<LinkDecoder>,
    llr: LlrKind,
) -> anyhow::Result<(f64, f64)> {
    let link = stream_link(trellis, puncture, reference_tile(), llr);
    let stop = StopRule { max_bits: bits, max_errors: u64::MAX };
    let at = link.run_point(&mut decoder(reference_tile())?, ebn0_db, stop, seed)?.ber();
    let above = link.run_point(&mut decoder(reference_tile())?, ebn0_db + 0.5, stop, seed)?.ber();
    ensure!(at > 0.0 && above > 0.0 && above < at, "reference curve has no usable slope at {ebn0_db} dB ({at:.2e}, {above:.2e}): simulate more bits");
    Ok((at, (at / above).log10() / 0.5))
}

/// Loss of `tile` against the reference, using the same bits and noise (seed)
/// so that the difference is measured far more precisely than either BER.
#[allow(clippy::too_many_arguments)]
pub fn tile_loss(
    trellis: &Arc<Trellis>,
    puncture: &PuncturePattern,
    tile: TileConfig,
    ebn0_db: f64,
    bits: u64,
    seed: u64,
    reference: (f64, f64),
    decoder: impl Fn(TileConfig) -> anyhow::Result<LinkDecoder>,
    llr: LlrKind,
) -> anyhow::Result<TileLoss> {
    let link = stream_link(trellis, puncture, tile, llr);
    let stop = StopRule { max_bits: bits, max_errors: u64::MAX };
    let ber = link.run_point(&mut decoder(tile)?, ebn0_db, stop, seed)?.ber();
    let (ber_ref, slope) = reference;
    Ok(TileLoss { ber_tiled: ber, ber_reference: ber_ref, loss_db: (ber.max(1e-12) / ber_ref).log10() / slope })
}

fn stream_link(trellis: &Arc<Trellis>, puncture: &PuncturePattern, tile: TileConfig, llr: LlrKind) -> ConvLink {
    ConvLink { trellis: trellis.clone(), puncture: puncture.clone(), mode: ViterbiMode::Tiled(tile), frame_bits: tile.f, llr }
}
