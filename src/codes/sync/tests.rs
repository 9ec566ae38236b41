//! Channel and encoder tests of the sync family.

use super::channel::*;
use super::drift::drift_law;
use super::*;
use crate::codes::bits::BitSource;
use crate::codes::channel::{Channel, GaussianNoise};
use crate::codes::encode::Encoder;

/// Seeded random bits.
pub(crate) fn bits(n: usize, seed: u64) -> Vec<u8> {
    let mut b = vec![0; n];
    BitSource::new(seed).fill(&mut b);
    b
}

/// |measured − p| within `z` binomial standard deviations of `trials`.
fn within(measured: f64, p: f64, trials: f64, z: f64) -> bool {
    (measured - p).abs() <= z * (p * (1.0 - p) / trials).sqrt()
}

/// Per channel event (a trial: insertion, deletion or transmission), the
/// measured rates of insertions, deletions and substitutions of
/// transmitted bits, counted from the events the channel draws.
#[test]
fn insertion_deletion_and_substitution_rates_match_the_probabilities() {
    for (pi, pd, ps, seed) in [(0.01, 0.02, 0.05, 1), (0.1, 0.1, 0.0, 2), (0.3, 0.05, 0.2, 3), (0.001, 0.001, 0.001, 4)] {
        let p = BsidParams::new(pi, pd, ps).unwrap();
        let n = 400_000;
        let mut words = vec![[0u32; 4]; n];
        GaussianNoise::new(seed).words(0, &mut words);
        let mut ch = Bsid::new(p, seed);
        let (mut ins, mut del, mut flips) = (0usize, 0usize, 0usize);
        let input = bits(n, seed);
        let mut out = Vec::new();
        ch.transmit(&input, &mut out).unwrap();
        // Replay the channel's words event by event, independently of its
        // thresholds: k insertions while word 0 < Pi^k·2^32, and so on.
        let mut at = 0;
        for (w, &x) in words.iter().zip(&input) {
            let mut k = 0;
            while f64::from(w[0]) < pi.powi(k + 1) * 4_294_967_296.0 {
                k += 1;
            }
            ins += k as usize;
            at += k as usize;
            if f64::from(w[1]) < pd / (1.0 - pi) * 4_294_967_296.0 {
                del += 1;
            } else {
                flips += usize::from(out[at] != x);
                at += 1;
            }
        }
        assert_eq!(at, out.len(), "the replay accounts for every received bit");
        let trials = (n + ins) as f64;
        let sent = (n - del) as f64;
        let (mi, md, ms) = (ins as f64 / trials, del as f64 / trials, flips as f64 / sent);
        assert!(within(mi, pi, trials, 4.5), "Pi {pi}: measured {mi}");
        assert!(within(md, pd, trials, 4.5), "Pd {pd}: measured {md}");
        assert!(within(ms, ps, sent, 4.5), "Ps {ps}: measured {ms}");
    }
}

/// The drift change over segments of T bits against the Markov chain's law.
#[test]
fn the_drift_follows_the_markov_model() {
    let p = BsidParams::new(0.05, 0.03, 0.0).unwrap();
    let (t, segments) = (50usize, 20_000usize);
    let mut ch = Bsid::new(p, 77);
    let (mut out, mut drift) = (Vec::new(), Vec::new());
    ch.transmit_tracking(&bits(t * segments, 1), &mut out, &mut drift).unwrap();
    assert_eq!(*drift.last().unwrap(), out.len() as i64 - (t * segments) as i64);
    let (lo, law) = drift_law(&p, t).unwrap();
    let mut seen = vec![0usize; law.len()];
    let mut before = 0;
    for s in 0..segments {
        let after = drift[(s + 1) * t - 1];
        let j = (after - before - lo) as usize;
        seen[j.min(law.len() - 1)] += 1;
        before = after;
    }
    let mut checked = 0;
    for (j, &p) in law.iter().enumerate() {
        let expect = p * segments as f64;
        if expect >= 20.0 {
            let z = (seen[j] as f64 - expect) / expect.sqrt();
            assert!(z.abs() < 5.0, "drift {}: seen {} expected {expect:.1}", lo + j as i64, seen[j]);
            checked += 1;
        }
    }
    assert!(checked >= 8, "only {checked} bins had enough counts");
}

/// The same received bits on one thread or many, in any chunking, and as
/// a one-block-at-a-time replay of the recipe.
#[test]
fn same_output_on_any_threads_and_in_any_chunking() {
    let p = BsidParams::new(0.08, 0.06, 0.02).unwrap();
    let input = bits(100_003, 5);
    let run = |threads: usize, chunk: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            let mut ch = Bsid::new(p, 12);
            let (mut out, mut drift) = (Vec::new(), Vec::new());
            for c in input.chunks(chunk) {
                ch.transmit_tracking(c, &mut out, &mut drift).unwrap();
            }
            (out, drift)
        })
    };
    let want = run(1, input.len());
    for (threads, chunk) in [(4, input.len()), (3, 40_000), (1, 1), (2, 777)] {
        assert!(run(threads, chunk) == want, "{threads} threads, chunks of {chunk}");
    }
    // One bit at a time through the channel's own event function.
    let th = Thresholds::new(&p);
    let mut replay = Vec::new();
    let mut w = [[0u32; 4]; 1];
    let mut buf = [0u8; 40];
    for (t, &x) in input.iter().enumerate() {
        GaussianNoise::new(12).words(t as u64, &mut w);
        let k = th.emit(w[0], x, &mut buf);
        replay.extend_from_slice(&buf[..k]);
    }
    assert_eq!(replay, want.0);
}

#[test]
fn soft_output_is_the_hard_channel_through_bpsk_and_awgn() {
    let p = BsidParams::new(0.02, 0.02, 0.01).unwrap();
    let input = bits(20_000, 8);
    let mut hard = Vec::new();
    Bsid::new(p, 4).transmit(&input, &mut hard).unwrap();
    let mut llrs = Vec::new();
    let mut soft = BsidAwgn::new(p, 12.0, 0.5, 4).unwrap();
    soft.transmit(&input, &mut llrs).unwrap();
    assert_eq!(llrs.len(), hard.len());
    // At 12 dB a sign error is rarer than 1e-7: the signs are the bits.
    assert!(llrs.iter().zip(&hard).all(|(&l, &b)| (l < 0.0) == (b == 1)));
    assert_eq!(soft.bsid().drift(), hard.len() as i64 - input.len() as i64);
    assert!(BsidAwgn::new(p, f64::NAN, 0.5, 1).is_err());
}

#[test]
fn bad_probabilities_are_refused() {
    for (pi, pd, ps) in [(-0.1, 0.0, 0.0), (0.0, 1.5, 0.0), (0.0, 0.0, 2.0), (0.5, 0.6, 0.0), (0.6, 0.1, 0.0), (f64::NAN, 0.0, 0.0), (0.0, 0.0, f64::INFINITY)] {
        let e = BsidParams::new(pi, pd, ps).unwrap_err();
        assert!(matches!(e, crate::codes::CodeError::InvalidParameter(_)), "{pi} {pd} {ps}: {e}");
    }
    assert!(Bsid::new(BsidParams::new(0.1, 0.1, 0.0).unwrap(), 1).transmit(&[0, 3], &mut Vec::new()).is_err());
}

#[test]
fn the_encoder_sends_each_symbol_by_its_index_codebook() {
    let code = SyncCode::random(8, 5, 4, 9).unwrap();
    let info = bits(3 * 4 * 3, 2); // three frames
    let mut enc = SyncEncoder::new(code.clone());
    let mut out = Vec::new();
    enc.encode(&info[..5], &mut out).unwrap();
    enc.encode(&info[5..], &mut out).unwrap();
    assert!(enc.at_boundary());
    assert_eq!(out.len(), 12 * 5);
    for (s, sym) in info.chunks(3).enumerate() {
        let d = usize::from(sym[0]) << 2 | usize::from(sym[1]) << 1 | usize::from(sym[2]);
        assert_eq!(&out[s * 5..(s + 1) * 5], &code.codebook(s % 4).bits(d)[..], "symbol {s}");
    }
    assert!(enc.encode(&[0, 2], &mut out).is_err());
    assert!((enc.rate() - 0.6).abs() < 1e-12);
}

/// run_point over the family's link counts symbols as well as bits and
/// frames (the link says how many bits a symbol has).
#[test]
fn the_link_counts_symbols_through_run_point() {
    use crate::codes::sim::{Link, StopRule, run_point};
    use std::sync::atomic::AtomicBool;
    let code = SyncCode::random(16, 8, 25, 3).unwrap();
    let base = BsidParams::new(0.0, 0.0, 0.0).unwrap();
    let cfg = DecoderConfig { framing: Framing::Stream, ..DecoderConfig::default() };
    let mut link = SyncLink::hard(code, base, Sweep::PiPd, cfg, 1);
    assert_eq!(link.symbol_bits(), 4);
    let stop = StopRule { max_bits: 2000, max_errors: u64::MAX };
    let p = run_point(&mut link, 0.05, 1, stop, &AtomicBool::new(false), std::time::Duration::from_secs(60), |_| {}).unwrap();
    assert_eq!((p.bits, p.frames, p.symbols), (2000, 20, 500));
    assert!(p.symbol_errors > 0 && p.symbol_errors <= p.symbols && p.bit_errors >= p.symbol_errors);
    assert!(link.check(0.7).is_err(), "Pi = 0.7 is refused");
}
