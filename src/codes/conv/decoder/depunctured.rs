//! A decoder of punctured work units: puts each unit's erasures back and hands
//! it to a decoder of whole stages. The CPU side of on-the-fly depuncturing, and
//! the reference the GPU kernel that depunctures as it loads is checked against.

use crate::codes::conv::decoder::config::TileConfig;
use crate::codes::conv::{Depuncturer, PuncturePattern, Tiler};
use crate::codes::decode::{Batch, BatchDecoder, BatchLimit, Decoded, UnitShape, check_batch};
use crate::codes::error::{CodeResult, invalid};
use crate::codes::llr::Llr;

/// Decodes the units of a punctured [`Tiler`] with a decoder of plain units.
///
/// Each unit is depunctured from the period stage it starts at
/// ([`Tiler::first_phase`]); its bits are the inner decoder's bits of that
/// depunctured unit.
///
/// # Example
/// ```
/// use gpufec::codes::conv::{ConvCode, CpuViterbi, DepuncturedUnits, PuncturePattern, TileConfig, Traceback, Trellis, ViterbiMode};
/// use gpufec::codes::BatchDecoder;
/// use std::sync::Arc;
/// let t = Arc::new(Trellis::new(&ConvCode::k7_171_133()));
/// let tile = TileConfig::new(48, 20, 20, Traceback::Serial).unwrap();
/// let inner = CpuViterbi::<f32>::new(t, ViterbiMode::Tiled(tile), 1).unwrap();
/// let p = PuncturePattern::standard("3/4").unwrap();
/// let mut dec = DepuncturedUnits::new(Box::new(inner), tile, p).unwrap();
/// // 88 stages from period stage 1: 29 periods of 4 LLRs, then one stage of 1.
/// assert_eq!(dec.shapes()[0].items, 29 * 4 + 1);
/// let mut bits = Vec::new();
/// dec.decode_all(&vec![1.0; 2 * dec.shapes()[0].items], &mut bits).unwrap();
/// assert_eq!(bits, vec![0; 96]);
/// ```
pub struct DepuncturedUnits<T: Llr> {
    inner: Box<dyn BatchDecoder<T>>,
    /// Restarted at `phase` for every unit.
    depuncturer: Depuncturer,
    pattern: PuncturePattern,
    phase: usize,
    shape: [UnitShape; 1],
    /// LLRs per unit of the inner decoder.
    full: usize,
    /// Depunctured LLRs of the batch being submitted.
    buf: Vec<T>,
}

impl<T: Llr> DepuncturedUnits<T> {
    /// Wrap `inner`, a decoder of `tile` units with every LLR present, for
    /// units punctured with `pattern`.
    pub fn new(inner: Box<dyn BatchDecoder<T>>, tile: TileConfig, pattern: PuncturePattern) -> CodeResult<Self> {
        let tiler = Tiler::<T>::punctured(tile, pattern.clone())?;
        let full = tile.unit_stages() * pattern.n();
        let inner_shape = inner.shapes()[0];
        if inner.shapes().len() != 1 || inner_shape.items != full {
            return Err(invalid!(
                "the decoder takes units of {} LLRs, not the {full} of {} stages of {} LLRs",
                inner_shape.items,
                tile.unit_stages(),
                pattern.n()
            ));
        }
        let shape = UnitShape::exact(tiler.unit_len(), inner_shape.bits);
        let phase = tiler.first_phase();
        Ok(Self { inner, depuncturer: Depuncturer::at_stage(pattern.clone(), phase), pattern, phase, shape: [shape], full, buf: Vec::new() })
    }
}

impl<T: Llr> BatchDecoder<T> for DepuncturedUnits<T> {
    fn shapes(&self) -> &[UnitShape] {
        &self.shape
    }

    fn limit(&self) -> BatchLimit {
        let units = self.inner.limit().units;
        BatchLimit { units, items: units.saturating_mul(self.shape[0].items) }
    }

    fn depth(&self) -> usize {
        self.inner.depth()
    }

    fn submit(&mut self, batch: &Batch<'_, T>) -> CodeResult<()> {
        check_batch(batch, &self.shape, self.limit())?;
        // Here, so that a bad LLR is named by its place in the caller's units.
        batch.check_finite(0..batch.units())?;
        self.buf.clear();
        for i in 0..batch.units() {
            self.depuncturer.restart_at(self.phase);
            self.depuncturer.depuncture(batch.unit(i), &mut self.buf);
        }
        self.inner.submit(&Batch::uniform(&self.buf, self.full)?)
    }

    fn collect(&mut self, out: &mut Decoded) -> CodeResult<bool> {
        let before = out.reports.len();
        let more = self.inner.collect(out)?;
        // The inner decoder consumed depunctured units; the caller's were punctured.
        for r in &mut out.reports[before..] {
            r.consumed = self.shape[0].items;
        }
        Ok(more)
    }

    fn in_flight(&self) -> usize {
        self.inner.in_flight()
    }

    fn oldest_ready(&mut self) -> bool {
        self.inner.oldest_ready()
    }

    fn describe(&self) -> String {
        format!("{}, depuncturing '{}' per unit", self.inner.describe(), self.pattern)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes::channel::{BpskAwgn, Channel};
    use crate::codes::conv::{ConvCode, ConvEncoder, CpuViterbi, EncoderMode, Puncturer, Traceback, Trellis, ViterbiMode};
    use rand::{Rng, SeedableRng, rngs::SmallRng};
    use std::sync::Arc;

    /// Depuncturing per unit decodes what depuncturing the stream decodes: from
    /// the second tile on bit for bit (their stages are the same LLRs either
    /// way); the first tile may differ only through its stages before the
    /// stream start, whose deleted positions are erasures here and certain
    /// zeros there.
    #[test]
    fn decodes_what_the_depunctured_stream_decodes() {
        let trellis = Arc::new(Trellis::new(&ConvCode::k7_171_133()));
        let mut r = SmallRng::seed_from_u64(5);
        for rate in ["2/3", "3/4", "7/8"] {
            let p = PuncturePattern::standard(rate).unwrap();
            let tile = TileConfig::new(42, 13, 20, Traceback::Serial).unwrap().with_group(4).unwrap();
            let info: Vec<u8> = (0..20_000).map(|_| r.random_range(0..2u8)).collect();
            let mut coded = Vec::new();
            ConvEncoder::new(trellis.clone(), EncoderMode::Streaming).unwrap().encode(&info, &mut coded).unwrap();
            let mut sent = Vec::new();
            Puncturer::new(p.clone()).puncture(&coded, &mut sent);
            let mut llrs = Vec::new();
            BpskAwgn::new(3.0, p.rate(), r.random()).unwrap().transmit(&sent, &mut llrs).unwrap();
            let decode = |tiler: &mut Tiler<f32>, llrs: &[f32], dec: &mut dyn BatchDecoder<f32>| {
                let mut units = Vec::new();
                tiler.push(llrs, &mut units);
                tiler.finish(&mut units).unwrap();
                let mut bits = Vec::new();
                dec.decode_all(&units, &mut bits).unwrap();
                bits.truncate(info.len());
                bits
            };
            let cpu = || Box::new(CpuViterbi::<f32>::new(trellis.clone(), ViterbiMode::Tiled(tile), 1).unwrap());
            let mut full = Vec::new();
            Depuncturer::new(p.clone()).depuncture(&llrs, &mut full);
            let by_block = decode(&mut Tiler::new(tile, 2), &full, cpu().as_mut());
            let mut per_unit = DepuncturedUnits::new(cpu(), tile, p.clone()).unwrap();
            let by_unit = decode(&mut Tiler::punctured(tile, p).unwrap(), &llrs, &mut per_unit);
            let errors = by_block.iter().zip(&info).filter(|(a, b)| a != b).count();
            assert!(errors > 20, "rate {rate}: {errors} errors are too few to tell the paths apart");
            assert_eq!(by_unit[tile.f..], by_block[tile.f..], "rate {rate}");
        }
    }

    #[test]
    fn a_bad_llr_is_named_by_its_place_in_the_punctured_units() {
        let trellis = Arc::new(Trellis::new(&ConvCode::k7_171_133()));
        let tile = TileConfig::new(48, 20, 20, Traceback::Serial).unwrap();
        let inner = Box::new(CpuViterbi::<f32>::new(trellis, ViterbiMode::Tiled(tile), 1).unwrap());
        let mut dec = DepuncturedUnits::new(inner, tile, PuncturePattern::standard("3/4").unwrap()).unwrap();
        let unit = dec.shapes()[0].items;
        let mut llrs = vec![1.0f32; 2 * unit];
        llrs[unit + 7] = f32::NAN;
        let e = dec.decode_all(&llrs, &mut Vec::new()).unwrap_err().to_string();
        assert!(e.contains(&format!("index {}", unit + 7)), "{e}");
    }

    #[test]
    fn refuses_a_decoder_of_other_units() {
        let trellis = Arc::new(Trellis::new(&ConvCode::k7_171_133()));
        let tile = TileConfig::new(48, 20, 20, Traceback::Serial).unwrap();
        let other = TileConfig::new(48, 20, 24, Traceback::Serial).unwrap();
        let inner = Box::new(CpuViterbi::<f32>::new(trellis, ViterbiMode::Tiled(other), 1).unwrap());
        let e = DepuncturedUnits::new(inner, tile, PuncturePattern::standard("3/4").unwrap()).err().unwrap();
        assert!(e.to_string().contains("takes units of 184 LLRs, not the 176"), "{e}");
    }
}
