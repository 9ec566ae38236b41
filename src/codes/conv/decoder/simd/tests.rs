//! Every SIMD forward pass against the reference's, decision for decision:
//! the same decision words, the same recorded best states, and the same final
//! metrics (bit for bit for `f32`; up to a common offset for `i16`).

use super::kernel::{Pass, Start};
use super::{Kernel, KernelScratch, Ran, SimdLevel, Workspace};
use crate::codes::conv::code::{ConvCode, Trellis};
use crate::codes::conv::decoder::scalar::{self, Scratch, words_per_stage};
use crate::codes::conv::decoder::llr::ViterbiLlr;
use rand::{Rng, SeedableRng, rngs::SmallRng};

/// Every K, every n, generators that tap neither the current nor the oldest bit.
fn codes() -> Vec<ConvCode> {
    [
        (3, vec![0o7, 0o5]),
        (3, vec![0o5, 0o7, 0o7, 0o3]),
        (4, vec![0o15, 0o17]),
        (5, vec![0o23, 0o35]),
        (5, vec![0o25, 0o33, 0o37]),
        (6, vec![0o53, 0o75]),
        (7, vec![0o171, 0o133]),
        (7, vec![0o133, 0o171, 0o165]),
        (7, vec![0o171, 0o035]),
        (7, vec![0o172, 0o133, 0o165, 0o117]),
        (8, vec![0o247, 0o371]),
        (9, vec![0o561, 0o753]),
        (9, vec![0o765, 0o671, 0o513, 0o473]),
    ]
    .into_iter()
    .map(|(k, p)| ConvCode::new(k, &p).unwrap())
    .collect()
}

/// Named LLR streams of `len` values: noisy, all tied, saturated, erased,
/// and mixtures of the extremes.
fn inputs(len: usize, seed: u64) -> Vec<(&'static str, Vec<f32>, Vec<i8>)> {
    let mut r = SmallRng::seed_from_u64(seed);
    let noisy = |r: &mut SmallRng| {
        let mean = if r.random::<bool>() { 2.0 } else { -2.0 };
        mean + 2.0 * (r.random::<f32>() + r.random::<f32>() + r.random::<f32>() - 1.5)
    };
    let awgn: Vec<f32> = (0..len).map(|_| noisy(&mut r)).collect();
    let awgn_i8 = awgn.iter().map(|&x| (x * 12.0).clamp(-128.0, 127.0) as i8).collect();
    let sat: Vec<i8> = (0..len).map(|_| if r.random::<bool>() { 127 } else { -128 }).collect();
    let extremes = [0i8, 1, -1, 127, -127, -128];
    let mixed: Vec<i8> = (0..len).map(|_| extremes[r.random_range(0..extremes.len())]).collect();
    let zeros = [0.0f32, -0.0, 1.0, -1.0, 1000.0, 1e-40];
    let signed_zeros = (0..len).map(|_| zeros[r.random_range(0..zeros.len())]).collect();
    let huge = (0..len).map(|_| if r.random::<bool>() { 3e38 } else { -1e38 }).collect();
    vec![
        ("awgn", awgn, awgn_i8),
        ("ties", vec![1.0; len], vec![1; len]),
        ("erased", vec![0.0; len], vec![0; len]),
        ("saturated", sat.iter().map(|&v| v as f32).collect(), sat),
        ("mixed", signed_zeros, mixed.clone()),
        ("huge", huge, mixed),
    ]
}

fn reference<T: ViterbiLlr>(trellis: &Trellis, llrs: &[T], start: Start, record: &[usize], every: usize) -> Scratch<T::Metric> {
    let mut s = Scratch::default();
    s.pm = vec![T::Metric::default(); trellis.states()];
    if start == Start::State0 {
        s.pm[1..].fill(T::METRIC_FLOOR);
    }
    scalar::forward(trellis, llrs, &mut s, record, every);
    s
}

/// Same decisions and best states; `offsets` maps each final metric pair
/// (reference, kernel) to what must agree across states (`None`: a state no
/// path reaches, whose metric only the floor sets).
fn assert_same<A: Copy, B: Copy, D: PartialEq + std::fmt::Debug>(
    stages: usize,
    words: usize,
    r: &Scratch<A>,
    k: &Scratch<B>,
    offsets: impl Fn(A, B) -> Option<D>,
    what: &str,
) {
    let n = stages * words;
    if let Some(i) = (0..n).find(|&i| r.dec[i] != k.dec[i]) {
        panic!("{what}: decisions differ first at stage {}: {:x} vs {:x}", i / words, r.dec[i], k.dec[i]);
    }
    assert_eq!(r.best, k.best, "{what}: recorded best states");
    let want: Vec<D> = r.pm.iter().zip(&k.pm).filter_map(|(&a, &b)| offsets(a, b)).collect();
    assert!(want.windows(2).all(|w| w[0] == w[1]), "{what}: final metrics {want:?}");
}

#[test]
fn forward_passes_match_the_reference_decision_for_decision() {
    let levels = SimdLevel::to_compare("forward_passes_match_the_reference_decision_for_decision");
    for (ci, code) in codes().into_iter().enumerate() {
        let trellis = Trellis::new(&code);
        let n = trellis.n();
        let words = words_per_stage(trellis.states());
        for (stages, start, record, every) in
            [(300, Start::Equal, vec![0, 31, 32, 200, 299], 0), (2100, Start::State0, vec![2099], 64), (5, Start::State0, vec![4], 64)]
        {
            let inputs = inputs(stages * n, 7 + ci as u64);
            // Each input alone, and with the next one as a second stream.
            for (i, (name, f, q)) in inputs.iter().enumerate() {
                let (_, f2, q2) = &inputs[(i + 1) % inputs.len()];
                let refs_f = [f, f2].map(|l| reference(&trellis, l, start, &record, every));
                let refs_q = [q, q2].map(|l| reference(&trellis, l, start, &record, every));
                for &level in &levels {
                    let kernel = Kernel::new(&trellis, level).unwrap();
                    let what = format!("{level} K={} {} {name} {stages} stages", code.k(), code.polys_octal());
                    let same_f32 = |k: &KernelScratch<f32>, r: &Scratch<f32>, what: &str| {
                        assert_same(stages, words, r, &k.out, |a, b| Some(a.to_bits() ^ b.to_bits()), what)
                    };
                    let same_i16 = |k: &KernelScratch<i16>, r: &Scratch<i32>, what: &str| {
                        assert_same(stages, words, r, &k.out, |a, b| (a > i8::METRIC_FLOOR / 2).then_some(a - b as i32), what)
                    };
                    let mut ws = Workspace::<f32>::default();
                    match kernel.run(Pass { llrs: [&f[..]], start, record: &record, normalize_every: every }, &mut ws) {
                        Ran::F32([k]) => same_f32(k, &refs_f[0], &what),
                        _ => panic!("{what}: no f32 kernel ran"),
                    }
                    match kernel.run(Pass { llrs: [&f[..], &f2[..]], start, record: &record, normalize_every: every }, &mut ws) {
                        Ran::F32([a, b]) => (same_f32(a, &refs_f[0], &what), same_f32(b, &refs_f[1], &format!("second stream {what}"))),
                        _ => panic!("{what}: no f32 kernel ran"),
                    };
                    let mut ws = Workspace::<i32>::default();
                    match kernel.run(Pass { llrs: [&q[..]], start, record: &record, normalize_every: every }, &mut ws) {
                        Ran::I16([k]) => same_i16(k, &refs_q[0], &format!("i8 {what}")),
                        _ => panic!("i8 {what}: no i16 kernel ran"),
                    }
                    match kernel.run(Pass { llrs: [&q[..], &q2[..]], start, record: &record, normalize_every: every }, &mut ws) {
                        Ran::I16([a, b]) => (same_i16(a, &refs_q[0], &format!("i8 {what}")), same_i16(b, &refs_q[1], &format!("i8 second stream {what}"))),
                        _ => panic!("i8 {what}: no i16 kernel ran"),
                    };
                }
            }
        }
    }
}
