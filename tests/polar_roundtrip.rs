//! Polar codes without noise: G·G = I over GF(2) for every length, every
//! decoder decoding its own clean codewords for every N from 8 to 2^16, and
//! the whole 5G chain over a grid of (A, E) that covers puncturing,
//! shortening and repetition, UCI with one and two code blocks, with and
//! without parity-check bits, and DCI.

use gpufec::codes::bits::BitSource;
use gpufec::codes::polar::nr::{NrDecoder, NrPolar, Selection};
use gpufec::codes::polar::transform::{bit, pack, polar_transform, words};
use gpufec::codes::polar::{Algorithm, BpConfig, BpPrecision, Construction, CpuPolar, EarlyStop, MAX_LOG_N, MIN_LOG_N, PolarSpec};
use gpufec::codes::{Batch, BatchDecoder, Decoded, Llr};
use std::sync::Arc;

fn random_bits(n: usize, seed: u64) -> Vec<u8> {
    let mut bits = vec![0; n];
    BitSource::new(seed).fill(&mut bits);
    bits
}

/// Clean LLRs of channel bits: ±`magnitude`.
fn clean<T: Llr>(bits: &[u8], one: T, zero: T) -> Vec<T> {
    bits.iter().map(|&b| if b == 0 { zero } else { one }).collect()
}

#[test]
fn g_times_g_is_the_identity_for_every_length() {
    for m in 0..=MAX_LOG_N {
        let n = 1usize << m;
        // Twice the transform gives back any vector …
        let v = random_bits(n, u64::from(m));
        let mut w = vec![0u64; words(n)];
        pack(&v, &mut w);
        let packed = w.clone();
        polar_transform(&mut w, n);
        polar_transform(&mut w, n);
        assert_eq!(w, packed, "N {n}");
        // … and, written out as a matrix for the short lengths, G is F^⊗m
        // (row i has ones at the j whose binary digits are a subset of i's)
        // and G·G = I.
        if n <= 256 {
            let rows: Vec<Vec<u64>> = (0..n)
                .map(|i| {
                    let mut e = vec![0u64; words(n)];
                    e[i / 64] |= 1 << (i % 64);
                    polar_transform(&mut e, n);
                    e
                })
                .collect();
            for (i, row) in rows.iter().enumerate() {
                assert!((0..n).all(|j| bit(row, j) == u8::from(j & i == j)), "N {n}: row {i} of G");
            }
            for i in 0..n {
                // Row i of G·G: the XOR of the rows j of G where G[i][j] = 1.
                let mut acc = vec![0u64; words(n)];
                for (j, row) in rows.iter().enumerate() {
                    if bit(&rows[i], j) == 1 {
                        acc.iter_mut().zip(row).for_each(|(a, r)| *a ^= r);
                    }
                }
                let mut e = vec![0u64; words(n)];
                e[i / 64] |= 1 << (i % 64);
                assert_eq!(acc, e, "N {n} row {i}");
            }
        }
    }
}

/// Every decoder on its clean codewords, N = 8 … 2^16, K = N/2 (and the
/// extremes K = 1, K = N for the short codes), systematic or not.
#[test]
fn every_decoder_decodes_clean_codewords_of_every_length() {
    let bp = |precision| Algorithm::Bp(BpConfig { iterations: 20, early_stop: EarlyStop::GMatrix, precision });
    for m in MIN_LOG_N..=MAX_LOG_N {
        let n = 1usize << m;
        let mut sizes = vec![n / 2];
        if m <= 6 {
            sizes.extend([1, n]);
        }
        for k in sizes {
            let construction = if n <= 1024 { Construction::Nr } else { Construction::Ga { design_ebn0_db: 2.0 } };
            let code = Arc::new(construction.build(n, k).unwrap());
            for systematic in [false, true] {
                let spec = PolarSpec::new(code.clone(), systematic, None).unwrap();
                // Fewer codewords of the long codes: every lane and the
                // first and last bit are what matter.
                let frames = if n >= 1 << 13 { 2 } else { 11 };
                let payload = random_bits(frames * k, (n + k) as u64);
                let mut x = vec![0u8; frames * n];
                for (p, c) in payload.chunks(k).zip(x.chunks_mut(n)) {
                    spec.encode(p, c).unwrap();
                }
                let llrs = clean(&x, -6.0f32, 6.0);
                let q = clean(&x, -100i8, 100);
                let what = format!("({n}, {k}) systematic {systematic}");
                for alg in [Algorithm::Sc, Algorithm::Scl { list: 4 }, bp(BpPrecision::F32 { alpha: 0.9375 })] {
                    let mut dec = CpuPolar::<f32>::new(spec.clone(), alg, 0).unwrap();
                    let mut bits = Vec::new();
                    dec.decode_all(&llrs, &mut bits).unwrap();
                    assert_eq!(bits, payload, "{what}: {}", alg.describe());
                }
                let mut dec = CpuPolar::<i8>::new(spec.clone(), bp(BpPrecision::I8), 0).unwrap();
                let mut bits = Vec::new();
                dec.decode_all(&q, &mut bits).unwrap();
                assert_eq!(bits, payload, "{what}: i8 BP");
            }
        }
    }
}

/// The (A, E) grid of the 5G chain: UCI from 12 bits (CRC6 and parity
/// checks) to 1706 (two blocks), DCI from 1 bit (padded to 12) to 140, and
/// E from just above K to several times N.
#[test]
fn the_5g_chain_round_trips_over_a_grid_of_a_and_e() {
    let mut seen = std::collections::BTreeMap::new();
    let mut chains = Vec::new();
    for a in [12, 16, 19, 20, 32, 100, 200, 359, 360, 500, 1012, 1013, 1706] {
        for e in [a + 24, a * 3 / 2 + 20, 2 * a + 20, 3 * a, 5 * a, 1088, 2500, 8192] {
            if let Ok(c) = NrPolar::uci(a, e) {
                chains.push(c);
            }
        }
    }
    for a in [1, 11, 12, 39, 64, 100, 140] {
        for e in [a + 40, 108, 216, 432, 864, 1728, 3000] {
            if let Ok(c) = NrPolar::dci(a, e, 0xBEEF) {
                chains.push(c);
            }
        }
    }
    for (i, chain) in chains.iter().enumerate() {
        let frames = 3;
        let payload = random_bits(frames * chain.a(), i as u64);
        let mut sent = Vec::new();
        for p in payload.chunks(chain.a()) {
            chain.encode(p, &mut sent).unwrap();
        }
        assert_eq!(sent.len(), frames * chain.e());
        let llrs = clean(&sent, -5.0f32, 5.0);
        for alg in [Algorithm::Sc, Algorithm::Scl { list: 8 }, Algorithm::Bp(BpConfig { iterations: 30, early_stop: EarlyStop::Crc, precision: BpPrecision::F32 { alpha: 0.9375 } })] {
            let mut dec = NrDecoder::new(chain.clone(), |spec| Ok(Box::new(CpuPolar::<f32>::new(spec.clone(), alg, 0)?))).unwrap();
            let mut out = Decoded::default();
            dec.decode(&Batch::uniform(&llrs, chain.e()).unwrap(), &mut out).unwrap();
            assert_eq!(out.bits, payload, "{}: {}", chain.describe(), alg.describe());
            assert!(out.reports.iter().all(|r| r.check == Some(true)), "{}: {}", chain.describe(), alg.describe());
        }
        let key = (chain.rate_match().selection().name(), chain.blocks(), chain.block_spec().code().parity().len());
        *seen.entry(key).or_insert(0) += 1;
    }
    for selection in [Selection::Puncturing, Selection::Shortening, Selection::Repetition] {
        assert!(seen.keys().any(|k| k.0 == selection.name() && k.1 == 1), "{} never came up: {seen:?}", selection.name());
    }
    assert!(seen.keys().any(|k| k.1 == 2) && seen.keys().any(|k| k.2 == 3), "{seen:?}");
    assert!(chains.len() > 80, "{} chains", chains.len());
}
