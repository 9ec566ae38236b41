//! Viterbi decoding throughput on noisy work units prepared in advance.

use crate::codes::bits::BitSource;
use crate::codes::channel::{Awgn, Quantizer, bpsk_map, noise_variance};
use crate::codes::conv::{ConvEncoder, EncoderMode, FrameConfig, TileConfig, Tiler, Traceback, Trellis, ViterbiMode};
use crate::codes::{BatchDecoder, CodeResult, Llr};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Eb/N0 of the prepared LLRs (as in `benches/viterbi_cpu.rs`): the Viterbi
/// decoder's work does not depend on the noise, but real noise keeps every
/// path metric realistic.
pub const BENCH_EBN0_DB: f64 = 3.0;

/// Information bits per terminated frame in [`standard_setups`].
pub const BENCH_FRAME_BITS: usize = 2048;

/// One decoder configuration to time.
#[derive(Debug, Clone, PartialEq)]
pub struct Setup {
    /// How tables and reports name it, e.g. `tiled f=256 v1=20 v2=20 serial`.
    pub name: String,
    /// What the decoder decodes.
    pub mode: ViterbiMode,
}

impl Setup {
    /// A setup named after its mode.
    pub fn new(mode: ViterbiMode) -> Self {
        let name = match mode {
            ViterbiMode::Tiled(t) => format!("tiled f={} v1={} v2={} {}", t.f, t.v1, t.v2, t.traceback),
            ViterbiMode::Frame(f) => {
                format!("frames of {}, {}", f.frame, if f.terminated { "terminated" } else { "unterminated" })
            }
        };
        Self { name, mode }
    }
}

/// The configurations `gpufec bench viterbi` measures by default: the paper's
/// tiles with serial traceback (f=256, v1=20, v2=20) and with parallel
/// traceback (f0=32, v2=45; both within 0.05 dB of full-frame decoding, see
/// BENCHMARKS.md), `group` tiles to a work unit, and terminated frames of
/// [`BENCH_FRAME_BITS`] bits.
pub fn standard_setups(group: usize) -> CodeResult<Vec<Setup>> {
    let serial = TileConfig::new(256, 20, 20, Traceback::Serial)?.with_group(group)?;
    let parallel = TileConfig::new(256, 20, 45, Traceback::Parallel { f0: 32 })?.with_group(group)?;
    let frames = FrameConfig::new(BENCH_FRAME_BITS, true)?;
    Ok([ViterbiMode::Tiled(serial), ViterbiMode::Tiled(parallel), ViterbiMode::Frame(frames)]
        .into_iter()
        .map(Setup::new)
        .collect())
}

/// Noisy LLR work units of a rate-1/n code for a decoder of `mode`: at least
/// `bits` information bits, rounded up to whole units, BPSK over AWGN at
/// [`BENCH_EBN0_DB`], bits and noise from `seed`. A tiled mode gets one
/// streaming codeword cut into units; a frame mode gets terminated frames.
/// `to_llr` turns the `f32` LLRs into the decoder's type. Returns the units
/// and their information bits.
pub fn noisy_units<T: Llr>(
    trellis: &Arc<Trellis>,
    mode: ViterbiMode,
    bits: u64,
    seed: u64,
    to_llr: impl Fn(&[f32], &mut Vec<T>) -> anyhow::Result<()>,
) -> anyhow::Result<(Vec<T>, u64)> {
    let n = trellis.n();
    let (unit_bits, unit_llrs, encoder_mode, rate) = match mode {
        ViterbiMode::Tiled(t) => (t.unit_bits(), t.unit_stages() * n, EncoderMode::Streaming, 1.0 / n as f64),
        ViterbiMode::Frame(f) => {
            let stages = f.stages(trellis.k());
            let encoder_mode = match f.terminated {
                true => EncoderMode::Terminated { frame: f.frame },
                false => EncoderMode::Streaming,
            };
            (f.frame, stages * n, encoder_mode, f.frame as f64 / (stages * n) as f64)
        }
    };
    let units = usize::try_from(bits.div_ceil(unit_bits as u64).max(1))?;
    let info = units * unit_bits;
    let mut channel = Awgn::new(BENCH_EBN0_DB, rate, crate::codes::sim::noise_seed(seed))?;
    let mut encoder = ConvEncoder::new(trellis.clone(), encoder_mode)?;
    let mut tiler = match mode {
        ViterbiMode::Tiled(t) => Some(Tiler::<T>::new(t, n)),
        ViterbiMode::Frame(_) => None,
    };
    let mut out = Vec::with_capacity(units * unit_llrs);
    let mut source = BitSource::new(seed);
    let (mut info_bits, mut coded, mut samples, mut llrs) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    // In pieces of whole units, so that the f32 intermediates stay small beside the units.
    let piece = unit_bits * (1usize << 20).div_ceil(unit_bits);
    for start in (0..info).step_by(piece) {
        info_bits.resize(piece.min(info - start), 0);
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
        match tiler.as_mut() {
            Some(t) => {
                t.push(&llrs, &mut out);
            }
            None => out.extend_from_slice(&llrs),
        }
    }
    if let Some(t) = tiler.as_mut() {
        t.finish(&mut out)?;
    }
    debug_assert_eq!(out.len(), units * unit_llrs);
    Ok((out, info as u64))
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
/// `decoder`, keeping up to its depth of batches in flight: once untimed (to
/// warm caches, threads and the device up), then repeatedly, at least three
/// times and for at least `budget`. Returns the fastest repetition, the one
/// least disturbed by other work on the machine.
pub fn time_decoder<T: Llr>(
    decoder: &mut dyn BatchDecoder<T>,
    units: &[T],
    info_bits: u64,
    budget: Duration,
) -> anyhow::Result<Timing> {
    let unit = decoder.unit();
    let mut out = Vec::with_capacity(units.len() / unit.llrs_in.max(1) * unit.bits_out);
    decoder.decode_all(units, &mut out)?;
    anyhow::ensure!(
        out.len() as u64 == info_bits,
        "the decoder returned {} bits for {info_bits} information bits",
        out.len()
    );
    let (started, mut best, mut reps) = (Instant::now(), f64::INFINITY, 0);
    while reps < 3 || started.elapsed() < budget {
        out.clear();
        let t = Instant::now();
        decoder.decode_all(units, &mut out)?;
        best = best.min(t.elapsed().as_secs_f64());
        reps += 1;
    }
    Ok(Timing { info_bits, seconds: best })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes::conv::{ConvCode, CpuViterbi};

    #[test]
    fn times_a_decoder_on_whole_units() {
        let trellis = Arc::new(Trellis::new(&ConvCode::k7_171_133()));
        let tile = TileConfig::new(64, 16, 16, Traceback::Serial).unwrap().with_group(4).unwrap();
        let q = i8_quantizer(2).unwrap();
        let mode = ViterbiMode::Tiled(tile);
        let (units, info) = noisy_units::<i8>(&trellis, mode, 3000, 5, |l, o| Ok(q.quantize(l, o)?)).unwrap();
        assert_eq!(info, 3072);
        assert_eq!(units.len(), 12 * tile.unit_stages() * 2);
        let mut dec = CpuViterbi::<i8>::new(trellis, mode, 1).unwrap().with_batch_units(5);
        let t = time_decoder(&mut dec, &units, info, Duration::ZERO).unwrap();
        assert_eq!(t.info_bits, 3072);
        assert!(t.mbps() > 0.0);
    }

    #[test]
    fn frames_decode_to_their_bits_and_setups_are_named() {
        let trellis = Arc::new(Trellis::new(&ConvCode::k7_171_133()));
        let setups = standard_setups(64).unwrap();
        let names: Vec<&str> = setups.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            ["tiled f=256 v1=20 v2=20 serial", "tiled f=256 v1=20 v2=45 parallel:32", "frames of 2048, terminated"]
        );
        let mode = setups[2].mode;
        let (units, info) = noisy_units::<f32>(&trellis, mode, 5000, 1, |l, o| {
            o.extend_from_slice(l);
            Ok(())
        })
        .unwrap();
        assert_eq!(info, 3 * 2048);
        assert_eq!(units.len(), 3 * (2048 + 6) * 2);
        let mut bits = Vec::new();
        CpuViterbi::<f32>::new(trellis, mode, 1).unwrap().decode_all(&units, &mut bits).unwrap();
        let mut sent = vec![0; info as usize];
        BitSource::new(1).fill(&mut sent);
        // At 3 dB a few errors are possible, not more.
        assert!(bits.iter().zip(&sent).filter(|(a, b)| a != b).count() < 60);
    }
}
