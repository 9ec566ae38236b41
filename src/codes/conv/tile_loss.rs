//! The Eb/N0 a tiled Viterbi decoder loses against the full-frame decoder:
//! the metric of the paper's Tables II and III, measured on the same bits and
//! noise so that the difference is far more precise than either BER.

use crate::codes::conv::link::ConvLink;
use crate::codes::conv::{ConvSetup, PuncturePattern, TileConfig, Traceback, Trellis, ViterbiMode};
use crate::codes::decode::BatchDecoder;
use crate::codes::error::{CodeResult, invalid};
use crate::codes::llr::Llr;
use crate::codes::sim::{StopRule, run_point};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// One tiled decoder's loss at one operating point.
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

/// A decoder of `T` LLRs for tiles of a given geometry.
pub type TileDecoder<'a, T> = &'a dyn Fn(TileConfig) -> CodeResult<Box<dyn BatchDecoder<T>>>;

/// Where tile losses are measured: a code and its puncturing at one Eb/N0,
/// `bits` stream bits a figure with bits and noise from `seed`, tiles decoded
/// by `decoder`.
///
/// # Example
/// ```no_run
/// use gpufec::codes::conv::tile_loss::TileLosses;
/// use gpufec::codes::conv::*;
/// use gpufec::codes::BatchDecoder;
/// use std::sync::Arc;
/// let trellis = Arc::new(Trellis::new(&ConvCode::k7_171_133()));
/// let dec = |t: TileConfig| -> gpufec::codes::CodeResult<Box<dyn BatchDecoder<f32>>> {
///     Ok(Box::new(CpuViterbi::<f32>::new(trellis.clone(), ViterbiMode::Tiled(t), 0)?))
/// };
/// let at = TileLosses { trellis: trellis.clone(), puncture: PuncturePattern::none(2), ebn0_db: 3.0, bits: 3_000_000, seed: 1, decoder: &dec };
/// let reference = at.reference()?;
/// let loss = at.loss(TileConfig::new(256, 20, 20, Traceback::Serial)?, reference)?;
/// # anyhow::Ok(())
/// ```
pub struct TileLosses<'a, T: Llr> {
    /// Code tables.
    pub trellis: Arc<Trellis>,
    /// Puncturing (the identity for the mother rate).
    pub puncture: PuncturePattern,
    /// Eb/N0 of the operating point, dB.
    pub ebn0_db: f64,
    /// Stream bits per BER figure.
    pub bits: u64,
    /// Seed of the bits and the noise.
    pub seed: u64,
    /// The decoder of a tile geometry.
    pub decoder: TileDecoder<'a, T>,
}

impl<T: Llr> TileLosses<'_, T> {
    /// BER of the stream through `tile` at `ebn0_db`.
    fn ber(&self, tile: TileConfig, ebn0_db: f64) -> CodeResult<f64> {
        let setup = ConvSetup {
            trellis: self.trellis.clone(),
            puncture: self.puncture.clone(),
            mode: ViterbiMode::Tiled(tile),
            frame_bits: tile.f,
            i8_scale: None,
        };
        let mut link = ConvLink::new(setup, (self.decoder)(tile)?)?;
        let stop = StopRule { max_bits: self.bits, max_errors: u64::MAX };
        Ok(run_point(&mut link, ebn0_db, self.seed, stop, &AtomicBool::new(false), Duration::MAX, |_| {})?.ber())
    }

    /// Reference BER at the operating point and its local slope in decades per dB.
    pub fn reference(&self) -> CodeResult<(f64, f64)> {
        let at = self.ber(reference_tile(), self.ebn0_db)?;
        let above = self.ber(reference_tile(), self.ebn0_db + 0.5)?;
        if !(at > 0.0 && above > 0.0 && above < at) {
            return Err(invalid!("the reference curve has no usable slope at {} dB ({at:.2e}, {above:.2e}): simulate more bits", self.ebn0_db));
        }
        Ok((at, (at / above).log10() / 0.5))
    }

    /// Loss of `tile` against the reference `(BER, slope)` of [`Self::reference`].
    pub fn loss(&self, tile: TileConfig, reference: (f64, f64)) -> CodeResult<TileLoss> {
        let ber = self.ber(tile, self.ebn0_db)?;
        let (ber_ref, slope) = reference;
        Ok(TileLoss { ber_tiled: ber, ber_reference: ber_ref, loss_db: (ber.max(1e-12) / ber_ref).log10() / slope })
    }
}
