//! Reed–Solomon against libfec's parity and its own limits, the basis
//! transformation's structure, and the BY70-1 frames.

use super::*;
use rand::{Rng, SeedableRng, rngs::SmallRng};

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

/// The 24 frames of BY70-1 that gr-satellites decoded (tests/data/satellite/README.md).
pub(crate) fn by70_frames() -> Vec<Vec<u8>> {
    include_str!("../../../tests/data/satellite/by70-1.frames.hex").lines().map(unhex).collect()
}

#[test]
fn parity_equals_libfecs_in_both_bases_whole_and_shortened() {
    let lines: Vec<&str> = include_str!("../../../tests/data/ccsds/libfec_rs.txt").lines().collect();
    assert_eq!(lines.len(), 4);
    for line in lines {
        let f: Vec<&str> = line.split(' ').collect();
        let basis = Basis::parse(f[0]).unwrap();
        let rs = ReedSolomon::new(f[1].parse().unwrap(), 1, basis).unwrap();
        let (data, parity) = (unhex(f[2]), unhex(f[3]));
        let frame = rs.encode(&data).unwrap();
        assert_eq!(&frame[data.len()..], &parity[..], "{} {}", f[0], f[1]);
        let mut clean = frame.clone();
        assert_eq!(rs.decode(&mut clean), Ok(0));
    }
}

#[test]
fn the_dual_basis_map_is_a_trace_dual_basis() {
    // Berlekamp's representation: dual bit k of z is Tr(λ_k z) for a basis
    // λ_0..λ_7 of the field. Recover each λ_k from the table and check
    // that the map is one (linear, invertible, and of this form).
    let mut lambdas = Vec::new();
    for k in 0..8 {
        let l = (1..=255u8).find(|&l| (0..=255u8).all(|z| (to_dual(z) >> k & 1) == gf::trace(gf::mul(l, z))));
        lambdas.push(l.unwrap_or_else(|| panic!("dual bit {k} is no trace form")));
    }
    // The λ_k are a basis: no nonempty subset sums to zero.
    for subset in 1..256u32 {
        let sum = (0..8).filter(|k| subset >> k & 1 == 1).fold(0u8, |a, k| a ^ lambdas[k]);
        assert_ne!(sum, 0, "{subset:b}");
    }
    for z in 0..=255u8 {
        assert_eq!(from_dual(to_dual(z)), z);
    }
}

/// `count` distinct random positions of `len`, each XORed with a nonzero byte.
fn corrupt(frame: &mut [u8], count: usize, rng: &mut SmallRng) {
    let mut at: Vec<usize> = (0..frame.len()).collect();
    for i in 0..count {
        let j = rng.random_range(i..at.len());
        at.swap(i, j);
        frame[at[i]] ^= rng.random_range(1..=255u8);
    }
}

#[test]
fn every_known_frame_encodes_to_a_codeword_and_up_to_16_errors_are_corrected() {
    let mut rng = SmallRng::seed_from_u64(25);
    for basis in [Basis::Conventional, Basis::Dual] {
        let rs = ReedSolomon::new(146, 1, basis).unwrap();
        for data in by70_frames() {
            let sent = rs.encode(&data).unwrap();
            assert_eq!(rs.decode(&mut sent.clone()), Ok(0));
            for errors in [1, 5, 15, 16] {
                let mut got = sent.clone();
                corrupt(&mut got, errors, &mut rng);
                assert_eq!(rs.decode(&mut got), Ok(errors), "{basis:?} {errors}");
                assert_eq!(got, sent);
            }
        }
    }
}

#[test]
fn seventeen_or_more_errors_are_reported_never_claimed_correct() {
    // A word with 17+ errors decodes to another codeword only if it falls
    // within distance 16 of one: about Σ_{i≤16} C(n,i)·255^i / 256^32 of
    // the words, 2.4·10⁻¹⁸ for n = 146, 2.6·10⁻¹⁴ for n = 255, 4·10⁻²⁵ for
    // n = 60; a miscorrection in these 320 words would fail the test.
    let mut rng = SmallRng::seed_from_u64(17);
    for basis in [Basis::Conventional, Basis::Dual] {
        for (n, depth) in [(146, 1), (255, 1), (60, 4), (255, 8)] {
            let rs = ReedSolomon::new(n, depth, basis).unwrap();
            for trial in 0..40 {
                let data: Vec<u8> = (0..rs.data_len()).map(|_| rng.random()).collect();
                let sent = rs.encode(&data).unwrap();
                let mut got = sent.clone();
                // 17..=40 errors all in one codeword (every depth-th byte).
                let errors = 17 + trial % 24;
                let word: Vec<usize> = (0..n).map(|b| b * depth + trial % depth).collect();
                let mut picks = word.clone();
                for i in 0..errors {
                    let j = rng.random_range(i..picks.len());
                    picks.swap(i, j);
                    got[picks[i]] ^= rng.random_range(1..=255u8);
                }
                let before = got.clone();
                assert_eq!(rs.decode(&mut got), Err(Uncorrectable { codeword: trial % depth }), "{basis:?} ({n})×{depth} {errors}");
                assert_eq!(got, before, "a failed frame is left as it came");
            }
        }
    }
}

#[test]
fn interleaved_codewords_correct_16_errors_each() {
    let mut rng = SmallRng::seed_from_u64(8);
    for depth in 1..=MAX_INTERLEAVE {
        let rs = ReedSolomon::new(255, depth, Basis::Dual).unwrap();
        let data: Vec<u8> = (0..rs.data_len()).map(|_| rng.random()).collect();
        let sent = rs.encode(&data).unwrap();
        let mut got = sent.clone();
        // A burst of 16·depth bytes: 16 in each codeword.
        let at = rng.random_range(0..sent.len() - 16 * depth);
        got[at..at + 16 * depth].iter_mut().for_each(|b| *b ^= 0xa5);
        assert_eq!(rs.decode(&mut got), Ok(16 * depth));
        assert_eq!(got, sent);
    }
}

#[test]
fn sizes_out_of_limits_are_refused() {
    for (n, depth) in [(32, 1), (256, 1), (146, 0), (146, 9)] {
        assert!(ReedSolomon::new(n, depth, Basis::Dual).is_err(), "{n} {depth}");
    }
    for (data, depth) in [(0, 1), (224, 1), (115, 2), (223 * 9, 9)] {
        assert!(ReedSolomon::for_data(data, depth, Basis::Dual).is_err(), "{data} {depth}");
    }
    assert_eq!(ReedSolomon::for_data(114, 1, Basis::Dual).unwrap().frame_len(), 146);
    let rs = ReedSolomon::new(146, 1, Basis::Dual).unwrap();
    assert!(rs.encode(&[0; 113]).is_err());
    assert!(FrameSync::new(AsmSearch::new(ASM, 0).unwrap(), 0).is_err());
    assert!(FrameSync::new(AsmSearch::new(ASM, 0).unwrap(), MAX_FRAME_BYTES + 1).is_err());
    assert!(AsmSearch::new(ASM, MAX_MARKER_ERRORS + 1).is_err());
    assert!(MarkerSync::<f32>::new(AsmSearch::new(ASM, 0).unwrap(), 0).is_err());
    assert!(MarkerSync::<f32>::new(AsmSearch::new(ASM, 0).unwrap(), MAX_SOFT_FRAME + 1).is_err());
    assert!(AsmInserter::new(ASM, 0).is_err());
    assert!(AsmInserter::new(ASM, MAX_SOFT_FRAME + 1).is_err());
}

#[test]
fn the_soft_synchroniser_passes_each_frames_llrs_turned_back_in_any_pieces() {
    use crate::codes::encode::Encoder;
    let frame_bits = 500;
    let mut rng = SmallRng::seed_from_u64(4);
    let sent: Vec<u8> = (0..6 * frame_bits).map(|_| rng.random_range(0..2u8)).collect();
    let mut marked = Vec::new();
    AsmInserter::new(ASM, frame_bits).unwrap().encode(&sent, &mut marked).unwrap();
    assert_eq!(marked.len(), 6 * (32 + frame_bits));
    // Junk before the first marker, LLRs of random size, three marker bits
    // wrong in each, and the whole stream at either half turn.
    let mut bits: Vec<u8> = (0..77).map(|_| rng.random_range(0..2u8)).collect();
    bits.extend(&marked);
    let llrs: Vec<f32> = bits
        .iter()
        .enumerate()
        .map(|(i, &b)| {
            let wrong = i >= 77 && (i - 77) % (32 + frame_bits) < 3;
            (1.0 - 2.0 * f32::from(b ^ u8::from(wrong))) * rng.random_range(0.1..5.0)
        })
        .collect();
    for inverted in [false, true] {
        let stream: Vec<f32> = llrs.iter().map(|&x| if inverted { -x } else { x }).collect();
        let mut sync = MarkerSync::<f32>::new(AsmSearch::new(ASM, 3).unwrap(), frame_bits).unwrap();
        let mut frames = Vec::new();
        let mut rest = &stream[..];
        while !rest.is_empty() {
            let (piece, tail) = rest.split_at(rng.random_range(1..=rest.len().min(700)));
            sync.push(piece, |found, items| frames.push((found, items.to_vec())));
            rest = tail;
        }
        assert!(!sync.in_frame());
        assert_eq!(frames.len(), 6, "inverted {inverted}");
        for (k, (found, items)) in frames.iter().enumerate() {
            assert_eq!((found.inverted, found.errors), (inverted, 3));
            assert_eq!(found.start as usize, 77 + (k + 1) * 32 + k * frame_bits);
            // The frame's LLRs as received, their signs turned back where the marker came complemented.
            let start = found.start as usize;
            let expected: Vec<f32> = llrs[start..start + frame_bits].to_vec();
            assert_eq!(*items, expected);
            let hard: Vec<u8> = items.iter().map(|&x| u8::from(x < 0.0)).collect();
            assert_eq!(hard, sent[k * frame_bits..(k + 1) * frame_bits]);
        }
    }
}

#[test]
fn the_synchroniser_finds_frames_in_noise_and_in_an_inverted_stream() {
    let codec = FrameCodec::new(ReedSolomon::new(146, 1, Basis::Conventional).unwrap(), true);
    let frames = by70_frames();
    let mut rng = SmallRng::seed_from_u64(3);
    let mut bits = Vec::new();
    for f in &frames {
        // Junk between frames, then the marker and the frame.
        bits.extend((0..rng.random_range(0..300)).map(|_| rng.random_range(0..2u8)));
        for b in codec.encode(f).unwrap() {
            bits.extend((0..8).rev().map(|i| b >> i & 1));
        }
    }
    for inverted in [false, true] {
        let mut noisy: Vec<u8> = bits.iter().map(|&b| b ^ u8::from(inverted)).collect();
        // Two bit errors in every marker position range, and some in the frames.
        for i in (0..noisy.len()).step_by(97) {
            noisy[i] ^= 1;
        }
        let mut finder = FrameSync::new(AsmSearch::new(ASM, 4).unwrap(), 146).unwrap();
        let mut found = Vec::new();
        for piece in noisy.chunks(1000) {
            finder.push(piece, &mut found);
        }
        let decoded: Vec<Vec<u8>> = found
            .into_iter()
            .filter_map(|mut f| {
                assert_eq!(f.found.inverted, inverted);
                matches!(codec.decode(&mut f.bytes), FrameOutcome::Corrected(_)).then(|| f.bytes[..114].to_vec())
            })
            .collect();
        assert_eq!(decoded, frames, "inverted {inverted}");
    }
}
