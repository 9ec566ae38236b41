//! What the decoder receives: hard bits or LLRs, and the receiver metric's
//! per-sample weights made from them.

use super::lattice::{LANES, Weights};
use crate::codes::bits::first_non_bit;
use crate::codes::decode::Batch;
use crate::codes::error::{CodeError, CodeResult};
use crate::codes::sync::BsidParams;

/// LLRs are taken as at most this in magnitude: beyond it P(bit) is below
/// 1e-13, certainty at the lattice's `f32` precision, and the weights stay
/// far from the subnormal range (see [`super::lattice::FLUSH`]).
pub const LLR_CLAMP: f32 = 30.0;

/// A received item the MAP decoder takes: a hard bit (`u8`, 0 or 1) or an
/// LLR (`f32`, or `i8` quantized; positive for 0). Each gives P(bit = 0 | item) for a flat
/// prior, from which the receiver metric weighs a transmitted bit
/// (Q(y|x) = Pt·((1 − Ps)·P(y | x) + Ps·P(y | 1 − x)), the seed's (8) for
/// hard bits) and an inserted random bit (Pi/2).
pub trait Received: Copy + Send + Sync + 'static {
    /// `hard bits` or `f32 LLRs`, for descriptions.
    const NAME: &'static str;

    /// P(bit = 0 | this item), an LLR taken as this item divided by `scale`
    /// (the quantizer's scale of `i8` LLRs; hard bits have none).
    fn p_zero(self, scale: f32) -> f64;

    /// Check the items of units `0..units` of `batch` (a bit that is not 0
    /// or 1, a NaN or infinite LLR: the first one found is the error).
    fn check(batch: &Batch<'_, Self>, units: usize) -> CodeResult<()>;
}

impl Received for u8 {
    const NAME: &'static str = "hard bits";

    fn p_zero(self, _scale: f32) -> f64 {
        f64::from(1 - self)
    }

    fn check(batch: &Batch<'_, Self>, units: usize) -> CodeResult<()> {
        for span in batch.spans_iter().take(units) {
            let unit = &batch.items()[span.start..span.start + span.len];
            if let Some(i) = first_non_bit(unit) {
                return Err(CodeError::InvalidParameter(format!("received bit at index {} is {}, not 0 or 1", span.start + i, unit[i])));
            }
        }
        Ok(())
    }
}

impl Received for f32 {
    const NAME: &'static str = "f32 LLRs";

    fn p_zero(self, scale: f32) -> f64 {
        llr_p_zero(self / scale)
    }

    fn check(batch: &Batch<'_, Self>, units: usize) -> CodeResult<()> {
        batch.check_finite(0..units)
    }
}

impl Received for i8 {
    const NAME: &'static str = "i8 LLRs";

    fn p_zero(self, scale: f32) -> f64 {
        llr_p_zero(f32::from(self) / scale)
    }

    /// Every `i8` is an LLR.
    fn check(_batch: &Batch<'_, Self>, _units: usize) -> CodeResult<()> {
        Ok(())
    }
}

/// P(bit = 0) of the LLR `l`, clamped to [`LLR_CLAMP`].
fn llr_p_zero(l: f32) -> f64 {
    let l = f64::from(l.clamp(-LLR_CLAMP, LLR_CLAMP));
    1.0 / (1.0 + (-l).exp())
}

/// The receiver metric's weights of `items` (LLRs divided by `scale`) for
/// a channel of `params`: Q(y|0) into `w0` and Q(y|1) − Q(y|0) into `dw`,
/// one per item, in `f32` from `f64` arithmetic; what every decoder of
/// the family, on either backend, computes the lattice from.
pub fn receiver_weights<T: Received>(items: &[T], params: &BsidParams, scale: f32, w0: &mut [f32], dw: &mut [f32]) {
    let (pt, ps) = (params.pt(), params.ps());
    for ((&y, a), d) in items.iter().zip(w0).zip(dw) {
        let p0 = y.p_zero(scale);
        let p1 = 1.0 - p0;
        let sent0 = pt * ((1.0 - ps) * p0 + ps * p1);
        let sent1 = pt * ((1.0 - ps) * p1 + ps * p0);
        *a = sent0 as f32;
        *d = sent1 as f32 - sent0 as f32;
    }
}

/// Fill `w` with the weights of `items` (LLRs divided by `scale`), padded by
/// `pad` zeros in front and zeros up to `len` entries, then expanded per
/// lane for q < LANES.
pub(super) fn fill_weights<T: Received>(items: &[T], params: &BsidParams, scale: f32, pad: usize, len: usize, q: usize, w: &mut Weights) {
    w.pad = pad;
    for v in [&mut w.w0, &mut w.dw] {
        v.clear();
        v.resize(len.max(pad + items.len()), 0.0);
    }
    receiver_weights(items, params, scale, &mut w.w0[pad..], &mut w.dw[pad..]);
    w.w0.truncate(len);
    w.dw.truncate(len);
    if q < LANES {
        w.expand(q);
    }
}
