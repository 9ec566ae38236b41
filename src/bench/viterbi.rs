//! Viterbi decoding throughput on noisy work units prepared in advance.

use crate::codes::bits::BitSource;
use crate::codes::channel::{Awgn, Quantizer, bpsk_map, noise_variance};
use crate::codes::conv::{ConvEncoder, EncoderMode, TileConfig, Tiler, Trellis};
use crate::codes::{BatchDecoder, Llr};
use std::sync::Arc;
use std::time::Instant;

/// Eb/N0 of the prepared LLRs: the Viterbi decoder's work does not depend on
/// the noise, but real noise keeps every path metric realistic.
pub const BENCH_EBN0_DB: f64 = 4.0;

/// Noisy LLR work units of a streaming rate-1/n code, tiled as `tile` says:
/// at least `bits` information bits, rounded up to whole units, BPSK over AWGN
/// at [`BENCH_EBN0_DB`], bits and noise from `seed`. `to_llr` turns the `f32`
/// LLRs into the decoder's type. Returns the units and their information bits.
pub fn noisy_units<T: Llr>(
    trellis: &Arc<Trellis>,
    tile: TileConfig,
    bits: u64,
    seed: u64,
    to_llr: impl Fn(&[f32], &mut Vec<T>) -> anyhow::Result<()>,
) -> anyhow::Result<(Vec<T>, u64)> {
    let unit_bits = tile.unit_bits() as u64;
    let units = bits.div_ceil(unit_bits).max(1);
    let info = units * unit_bits;
    let info_len = usize::try_from(info)?;
    let rate = 1.0 / trellis.n() as f64;
    let mut channel = Awgn::new(BENCH_EBN0_DB, rate, crate::codes::sim::noise_seed(seed))?;
    let mut encoder = ConvEncoder::new(trellis.clone(), EncoderMode::Streaming)?;
    let mut tiler = Tiler::<T>::new(tile, trellis.n());
    let mut out = Vec::with_capacity(units as usize * tile.unit_stages() * trellis.n());
    let mut source = BitSource::new(seed);
    let (mut info_bits, mut coded, mut samples, mut llrs) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    // In pieces, so that the f32 intermediates stay small beside the units.
    const PIECE: usize = 1 << 20;
    for start in (0..info_len).step_by(PIECE) {
        info_bits.resize(PIECE.min(info_len - start), 0);
        source.fill(&mut info_bits);
        coded.clear();
        encoder.encode(&info_bits, &mut coded)?;
        samples.clear();
        bpsk_map(&coded, &mut samples);
        channel.add_noise(&mut samples);
        for s in samples.iter_mut() {
            *s *= channel.llr_gain();
        }
        llrs.clear();
        to_llr(&samples, &mut llrs)?;
        tiler.push(&llrs, &mut out);
    }
    tiler.finish(&mut out)?;
    Ok((out, info))
}

/// The `i8` conversion the benchmarks and the link simulator use by default:
/// scale 16·σ² at [`BENCH_EBN0_DB`] for a rate-1/n code.
pub fn i8_quantizer(n: usize) -> anyhow::Result<Quantizer> {
    Ok(Quantizer::new(16.0 * noise_variance(BENCH_EBN0_DB, 1.0 / n as f64)? as f32)?)
}

/// One timed decode.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timing {
    /// Information bits decoded.
    pub info_bits: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
}

impl Timing {
    /// Information throughput in Mb/s.
    pub fn mbps(&self) -> f64 {
        self.info_bits as f64 / self.seconds.max(1e-12) / 1e6
    }
}

/// Decode `units` (whole work units, `info_bits` information bits) with
/// `decoder`, keeping up to its depth of batches in flight, after one untimed
/// batch that warms caches and threads up.
pub fn time_decoder<T: Llr>(decoder: &mut dyn BatchDecoder<T>, units: &[T], info_bits: u64) -> anyhow::Result<Timing> {
    let unit = decoder.unit();
    let mut out = Vec::with_capacity(units.len() / unit.llrs_in.max(1) * unit.bits_out);
    let warm = (decoder.batch_units().max(1) * unit.llrs_in).min(units.len());
    decoder.decode_all(&units[..warm], &mut out)?;
    out.clear();
    let started = Instant::now();
    decoder.decode_all(units, &mut out)?;
    let seconds = started.elapsed().as_secs_f64();
    anyhow::ensure!(
        out.len() as u64 == info_bits,
        "the decoder returned {} bits for {info_bits} information bits",
        out.len()
    );
    Ok(Timing { info_bits, seconds })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes::conv::{ConvCode, CpuViterbi, Traceback, ViterbiMode};

    #[test]
    fn times_a_decoder_on_whole_units() {
        let trellis = Arc::new(Trellis::new(&ConvCode::k7_171_133()));
        let tile = TileConfig::new(64, 16, 16, Traceback::Serial).unwrap().with_group(4).unwrap();
        let q = i8_quantizer(2).unwrap();
        let (units, info) = noisy_units::<i8>(&trellis, tile, 3000, 5, |l, o| Ok(q.quantize(l, o)?)).unwrap();
        assert_eq!(info, 3072);
        assert_eq!(units.len(), 12 * tile.unit_stages() * 2);
        let mut dec = CpuViterbi::<i8>::new(trellis, ViterbiMode::Tiled(tile), 1).unwrap().with_batch_units(5);
        let t = time_decoder(&mut dec, &units, info).unwrap();
        assert_eq!(t.info_bits, 3072);
        assert!(t.mbps() > 0.0);
    }
}
