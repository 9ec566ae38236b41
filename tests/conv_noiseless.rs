//! With no noise every Viterbi variant returns the input exactly, for any tile
//! geometry, traceback and stream length.

use gpufec::codes::BatchDecoder;
use gpufec::codes::conv::*;
use rand::{Rng, SeedableRng, rngs::SmallRng};
use std::sync::Arc;

fn noiseless_llrs(coded: &[u8]) -> Vec<f32> {
    coded.iter().map(|&b| if b == 0 { 4.0 } else { -4.0 }).collect()
}

fn random_bits(n: usize, seed: u64) -> Vec<u8> {
    let mut r = SmallRng::seed_from_u64(seed);
    (0..n).map(|_| r.random_range(0..2u8)).collect()
}

fn decode_stream<T: ViterbiLlr>(trellis: &Arc<Trellis>, tile: TileConfig, llrs: &[T], stages: usize) -> Vec<u8> {
    let mut tiler = Tiler::new(tile, trellis.n()).inverting(trellis.code().inverted());
    let mut tiles = Vec::new();
    tiler.push(llrs, &mut tiles);
    tiler.finish(&mut tiles).unwrap();
    let mut dec = CpuViterbi::<T>::new(trellis.clone(), ViterbiMode::Tiled(tile), 2).unwrap().with_batch_units(7);
    let mut out = Vec::new();
    dec.decode_all(&tiles, &mut out).unwrap();
    out.truncate(stages);
    out
}

#[test]
fn tiled_decoders_are_exact_without_noise() {
    // The last three send outputs inverted: CCSDS, its NASA-DSN order, and a rate-1/3 code.
    for (k, polys, inverted) in [(7u32, vec![0o171u32, 0o133], 0u8), (5, vec![0o23, 0o35], 0), (9, vec![0o561, 0o753], 0), (3, vec![7, 5], 0), (7, vec![0o133, 0o171, 0o165], 0), (7, vec![0o171, 0o133], 0b10), (7, vec![0o133, 0o171], 0b01), (7, vec![0o133, 0o171, 0o165], 0b101)] {
        let trellis = Arc::new(Trellis::new(&ConvCode::new(k, &polys).unwrap().with_inverted(inverted).unwrap()));
        for (len, seed) in [(1usize, 1u64), (37, 2), (1000, 3), (2049, 4)] {
            let bits = random_bits(len, seed);
            let mut enc = ConvEncoder::new(trellis.clone(), EncoderMode::Streaming).unwrap();
            let mut coded = Vec::new();
            enc.encode(&bits, &mut coded).unwrap();
            let llrs = noiseless_llrs(&coded);
            let llrs_i8: Vec<i8> = llrs.iter().map(|&x| x as i8).collect();
            // A tile starts in an unknown state: without overlap it needs enough
            // stages of its own to resolve it (a handful; f = 5 is not always
            // enough), so short tiles get overlaps of at least K−1.
            for (f, v1, v2) in [(1usize, 8usize, 8usize), (5, 8, 8), (32, 8, 10), (64, 0, 20), (100, 20, 45), (256, 20, 32), (13, 8, 8), (512, 8, 0)] {
                for tb in [Traceback::Serial, Traceback::Parallel { f0: 8.min(f) }, Traceback::Parallel { f0: 32.min(f) }, Traceback::Parallel { f0: 7.min(f) }] {
                    if len < 5 && v1 < k as usize - 1 {
                        // A stream shorter than the code's memory, decoded without
                        // the known start state, is ambiguous: not a decoder fault.
                        continue;
                    }
                    let tile = TileConfig::new(f, v1, v2, tb).unwrap().with_group(1 + len % 3).unwrap();
                    assert_eq!(decode_stream(&trellis, tile, &llrs, len), bits, "K={k} len={len} tile={tile:?}");
                    assert_eq!(decode_stream(&trellis, tile, &llrs_i8, len), bits, "i8 K={k} len={len} tile={tile:?}");
                }
            }
        }
    }
}

#[test]
fn frame_decoder_is_exact_without_noise() {
    let trellis = Arc::new(Trellis::new(&ConvCode::k7_171_133()));
    for terminated in [true, false] {
        let frame = FrameConfig::new(333, terminated).unwrap();
        let bits = random_bits(333 * 5, 9);
        let mode = if terminated { EncoderMode::Terminated { frame: 333 } } else { EncoderMode::Streaming };
        let mut coded = Vec::new();
        for chunk in bits.chunks(333) {
            let mut enc = ConvEncoder::new(trellis.clone(), mode).unwrap();
            enc.encode(chunk, &mut coded).unwrap();
        }
        let mut dec = CpuViterbi::<f32>::new(trellis.clone(), ViterbiMode::Frame(frame), 0).unwrap();
        let mut out = Vec::new();
        dec.decode_all(&noiseless_llrs(&coded), &mut out).unwrap();
        assert_eq!(out, bits, "terminated={terminated}");
    }
}

#[test]
fn grouping_tiles_into_units_changes_no_bit() {
    // The unit size only changes how the stream travels: on noisy input every
    // group size must give the same decisions as one tile per unit.
    let trellis = Arc::new(Trellis::new(&ConvCode::k7_171_133()));
    let mut r = SmallRng::seed_from_u64(21);
    let llrs: Vec<i8> = (0..2 * 5000).map(|_| r.random_range(-40..=40i8)).collect();
    for tb in [Traceback::Serial, Traceback::Parallel { f0: 16 }] {
        let base = TileConfig::new(64, 12, 20, tb).unwrap();
        let one = decode_stream(&trellis, base, &llrs, 5000);
        for group in [2usize, 7, 100] {
            let grouped = decode_stream(&trellis, base.with_group(group).unwrap(), &llrs, 5000);
            assert_eq!(grouped, one, "group {group} {tb:?}");
        }
    }
}
