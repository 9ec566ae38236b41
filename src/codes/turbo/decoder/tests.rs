use super::*;
use crate::codes::channel::{BpskAwgn, Channel};
use crate::codes::decode::{Batch, BatchDecoder, Decoded};
use crate::codes::encode::Encoder;
use crate::codes::turbo::{TurboCode, TurboEncoder, test_bits};

fn lte(k: usize) -> TurboCode {
    TurboCode::lte(k).unwrap()
}

/// `blocks` random blocks of `code` through AWGN at `ebn0_db`: (bits, LLRs).
fn sent(code: &TurboCode, blocks: usize, ebn0_db: f64, seed: u64) -> (Vec<u8>, Vec<f32>) {
    let bits = test_bits(blocks * code.k(), seed);
    let mut enc = TurboEncoder::new(code.clone());
    let mut coded = Vec::new();
    enc.encode(&bits, &mut coded).unwrap();
    let mut ch = BpskAwgn::new(ebn0_db, enc.rate(), seed).unwrap();
    let mut llrs = Vec::new();
    ch.transmit(&coded, &mut llrs).unwrap();
    (bits, llrs)
}

fn decode(code: &TurboCode, cfg: DecoderConfig, llrs: &[f32], threads: usize) -> Decoded {
    let mut dec = CpuTurbo::<f32>::new(code.clone(), cfg, 1.0, threads).unwrap().with_soft_output();
    let mut out = Decoded::default();
    dec.decode(&Batch::uniform(llrs, code.coded_len()).unwrap(), &mut out).unwrap();
    out
}

fn errors(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).filter(|(x, y)| x != y).count()
}

#[test]
fn every_algorithm_and_guard_decodes_a_clean_channel() {
    let code = lte(1024);
    let (bits, llrs) = sent(&code, 3, 8.0, 1);
    for max_star in [MaxStar::Max, MaxStar::Exact, MaxStar::Linear] {
        for (subblocks, guard, window) in [(1, Guard::None, 0), (16, Guard::None, 0), (16, Guard::Pivi, 0), (16, Guard::Dstw, 8), (16, Guard::PiviDstw, 8)] {
            let cfg = DecoderConfig { max_star, subblocks, guard, window, iterations: 4, ..Default::default() };
            let out = decode(&code, cfg, &llrs, 1);
            assert_eq!(errors(&out.bits, &bits), 0, "{}", cfg.describe());
            assert!(out.reports.iter().all(|r| r.iterations == 4 && r.bits == 1024 && r.consumed == 3 * 1024 + 12));
            // Soft output agrees with the hard decisions.
            assert!(out.soft.iter().zip(&out.bits).all(|(&l, &b)| (l < 0.0) == (b == 1)));
        }
    }
}

#[test]
fn lanes_and_threads_do_not_change_a_block() {
    // 21 blocks: one full group of 16 and a part group, on one and on two threads.
    let code = lte(40);
    let (_, llrs) = sent(&code, 21, 1.0, 2);
    let cfg = DecoderConfig { early_stop: EarlyStop::Stable, ..Default::default() };
    let together = decode(&code, cfg, &llrs, 2);
    let n = code.coded_len();
    for (i, unit) in llrs.chunks(n).enumerate() {
        let alone = decode(&code, cfg, unit, 1);
        assert_eq!(alone.bits, together.bits[i * 40..][..40], "block {i}");
        assert_eq!(alone.soft, together.soft[i * 40..][..40], "block {i}");
        assert_eq!(alone.reports[0], together.reports[i], "block {i}");
    }
    // Some blocks stopped early, some did not: the test sees both paths.
    let its: Vec<u32> = together.reports.iter().map(|r| r.iterations).collect();
    assert!(its.iter().any(|&i| i < 8) && its.iter().any(|&i| i > 2), "{its:?}");
}

#[test]
fn iterating_corrects_errors_and_max_log_is_scale_free() {
    let code = lte(6144);
    let (bits, llrs) = sent(&code, 2, 0.7, 3);
    // The systematic part of each block, decided alone.
    let hard: Vec<u8> = llrs.chunks(code.coded_len()).flat_map(|b| b[..6144].iter().map(|&l| u8::from(l < 0.0))).collect();
    let raw = errors(&hard, &bits);
    let one = decode(&code, DecoderConfig { iterations: 1, ..Default::default() }, &llrs, 1);
    let eight = decode(&code, DecoderConfig::default(), &llrs, 1);
    let e1 = errors(&one.bits, &bits);
    let e8 = errors(&eight.bits, &bits);
    // At 0.7 dB (rate 1/3) the channel flips about 19 % of the bits; the decoder must do far better.
    assert!(raw > 2000 && e1 < raw * 2 / 3 && e8 < e1 / 4, "channel {raw}, 1 iteration {e1}, 8 iterations {e8}");
    // Max-log-MAP with scaling is linear in the LLRs: the same bits at any scale.
    let scaled: Vec<f32> = llrs.iter().map(|&l| l * 5.5).collect();
    assert_eq!(decode(&code, DecoderConfig::default(), &scaled, 1).bits, eight.bits);
}

#[test]
fn log_map_beats_max_log_and_guards_rank_as_the_thesis_says() {
    // K = 6144 at 0.6 dB, 20 blocks: counts of bit errors, fixed seed.
    let code = lte(6144);
    let (bits, llrs) = sent(&code, 20, 0.6, 4);
    let count = |cfg: DecoderConfig| errors(&decode(&code, cfg, &llrs, 0).bits, &bits);
    let unscaled = DecoderConfig { scaling: 1.0, ..Default::default() };
    let max_log = count(unscaled);
    let log_map = count(DecoderConfig { max_star: MaxStar::Exact, ..unscaled });
    assert!(log_map < max_log, "log-MAP {log_map} vs max-log-MAP {max_log}");
    let p96 = |guard, window| DecoderConfig { subblocks: 96, guard, window, ..Default::default() };
    let serial = count(DecoderConfig::default());
    let none = count(p96(Guard::None, 0));
    let pivi = count(p96(Guard::Pivi, 0));
    let pividstw = count(p96(Guard::PiviDstw, 8));
    assert!(none > 10 * (pivi + 1), "no guard {none} vs PIVI {pivi}");
    assert!(pividstw <= pivi, "PIVIDSTW {pividstw} vs PIVI {pivi}");
    assert!(pividstw <= 2 * serial + 20, "PIVIDSTW {pividstw} vs serial {serial}");
}

#[test]
fn bad_configurations_are_refused() {
    let code = lte(40);
    for (cfg, says) in [
        (DecoderConfig { iterations: 0, ..Default::default() }, "iterations"),
        (DecoderConfig { iterations: 65, ..Default::default() }, "iterations"),
        (DecoderConfig { scaling: f32::NAN, ..Default::default() }, "scaling"),
        (DecoderConfig { scaling: 0.0, ..Default::default() }, "scaling"),
        (DecoderConfig { subblocks: 41, ..Default::default() }, "sub-blocks"),
        (DecoderConfig { subblocks: 0, ..Default::default() }, "sub-blocks"),
        (DecoderConfig { subblocks: 4, guard: Guard::Dstw, window: 11, ..Default::default() }, "shortest sub-block"),
        (DecoderConfig { subblocks: 4, guard: Guard::Dstw, window: 0, ..Default::default() }, "g ≥ 1"),
        (DecoderConfig { subblocks: 4, guard: Guard::Pivi, window: 3, ..Default::default() }, "needs guard"),
    ] {
        let e = CpuTurbo::<f32>::new(code.clone(), cfg, 1.0, 1).err().unwrap().to_string();
        assert!(e.contains(says), "{cfg:?}: {e}");
    }
    assert!(CpuTurbo::<f32>::new(code.clone(), DecoderConfig::default(), f32::INFINITY, 1).is_err());
    // Wrong unit length and NaN LLRs fail the batch with a clear error.
    let mut dec = CpuTurbo::<f32>::new(code.clone(), DecoderConfig::default(), 1.0, 1).unwrap();
    let mut out = Decoded::default();
    let e = dec.decode(&Batch::uniform(&[0.0f32; 131], 131).unwrap(), &mut out).unwrap_err().to_string();
    assert!(e.contains("131"), "{e}");
    let mut nan = vec![1.0f32; 132];
    nan[77] = f32::NAN;
    let e = dec.decode(&Batch::uniform(&nan, 132).unwrap(), &mut out).unwrap_err().to_string();
    assert!(e.contains("77"), "{e}");
}

#[test]
fn sixteen_bit_metrics_decode_about_as_well_as_f32() {
    // 48 blocks of K = 6144 at 0.5 dB, 8 iterations of max-log-MAP ×0.75:
    // near the cliff, where a flawed fixed-point decoder would fall off it.
    let code = lte(6144);
    let (bits, llrs) = sent(&code, 48, 0.5, 5);
    let count = |p: Precision| {
        let mut dec = CpuTurbo::<f32>::new(code.clone(), DecoderConfig::default(), 1.0, 0).unwrap().with_precision(p).unwrap();
        let mut out = Decoded::default();
        dec.decode(&Batch::uniform(&llrs, code.coded_len()).unwrap(), &mut out).unwrap();
        (errors(&out.bits, &bits), out.reports.iter().filter(|r| r.bits == 6144).count())
    };
    let (f, i) = (count(Precision::F32), count(Precision::I16));
    assert_eq!((f.1, i.1), (48, 48));
    assert!(i.0 <= 2 * f.0 + 50, "i16 {} errors against f32 {}", i.0, f.0);
    // A clean channel, and the refusals.
    let (bits, llrs) = sent(&code, 3, 6.0, 6);
    let mut dec = CpuTurbo::<f32>::new(code.clone(), DecoderConfig::default(), 1.0, 1).unwrap().with_precision(Precision::I16).unwrap();
    let mut out = Decoded::default();
    dec.decode(&Batch::uniform(&llrs, code.coded_len()).unwrap(), &mut out).unwrap();
    assert_eq!(out.bits, bits);
    let log_map = DecoderConfig { max_star: MaxStar::Exact, ..Default::default() };
    let e = CpuTurbo::<f32>::new(code, log_map, 1.0, 1).unwrap().with_precision(Precision::I16).err().unwrap().to_string();
    assert!(e.contains("max-log-MAP only"), "{e}");
}

#[test]
fn every_simd_level_gives_the_same_blocks() {
    let code = lte(1024);
    let (_, llrs) = sent(&code, 40, 0.6, 8);
    let cfg = DecoderConfig { early_stop: EarlyStop::Stable, ..Default::default() };
    use crate::codes::simd::SimdLevel;
    let levels = SimdLevel::to_compare("every_simd_level_gives_the_same_blocks");
    for p in [Precision::F32, Precision::I16] {
        let results: Vec<Decoded> = std::iter::once(SimdLevel::Scalar)
            .chain(levels.iter().copied())
            .map(|level| {
                let mut dec = CpuTurbo::<f32>::new(code.clone(), cfg, 1.0, 2).unwrap().with_precision(p).unwrap().with_simd(level).unwrap().with_soft_output();
                let mut out = Decoded::default();
                dec.decode(&Batch::uniform(&llrs, code.coded_len()).unwrap(), &mut out).unwrap();
                out
            })
            .collect();
        assert!(results.windows(2).all(|w| w[0] == w[1]), "{p:?}");
    }
}
