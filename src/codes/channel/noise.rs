//! Counter-based standard normal noise: sample `i` of seed `s` depends only on
//! `(s, i)`, so any number of threads, any chunking of the stream and any
//! machine give the same noise and hence the same error counts.
//!
//! Sample `i` lies in block `b = i / 4` (indices are taken modulo 2^64).
//! Block `b` is Philox4x32-10 of counter `(b mod 2^32, b >> 32, 0, 0)` under
//! key `(seed mod 2^32, seed >> 32)`, giving words `w0..w3`. Each word `w`
//! becomes the uniform `(w + 0.5) · 2^-32` in f64, never 0 nor 1. The pair
//! `(w0, w1)` gives samples `4b` and `4b + 1`, the pair `(w2, w3)` samples
//! `4b + 2` and `4b + 3`, by Box–Muller: with `u1` from the first word and
//! `u2` from the second, `r = sqrt(-2 ln u1)`, `θ = 2π u2`, and the samples are
//! `r cos θ` then `r sin θ`, each rounded once to f32. (The sine and cosine
//! take the angle in turns, `u2` itself, which makes their range reduction
//! exact; see `sin_cos_turns`.)
//!
//! The platform's `ln`, `sin` and `cos` may differ in the last bit between C
//! libraries and versions, which would make two machines disagree on a
//! rounding to f32 now and then. So `ln` and the sine/cosine below are plain
//! IEEE additions, multiplications, one division and bit manipulation,
//! without fused multiply-add; `sqrt` is exactly rounded by IEEE 754. Any
//! vector width gives the same bits, which lets an AVX2 or AVX-512 build of
//! the same source run where the CPU has it. A port (a GPU kernel, say) gets
//! the same bits only by doing the same operations in the same order, each
//! rounded on its own (for CUDA: `-fmad=false`, or `__dadd_rn`/`__dmul_rn`).

use rayon::prelude::*;

/// Philox4x32 round multipliers (Salmon, Moraes, Dror, Shaw, "Parallel random
/// numbers: as easy as 1, 2, 3", SC'11).
const PHILOX_M0: u32 = 0xD251_1F53;
const PHILOX_M1: u32 = 0xCD9E_8D57;
/// Weyl increments of the key between rounds: golden ratio and sqrt(3) - 1.
const PHILOX_W0: u32 = 0x9E37_79B9;
const PHILOX_W1: u32 = 0xBB67_AE85;
const PHILOX_ROUNDS: usize = 10;

/// Blocks generated together: enough independent lanes to hide the latency
/// of the division, square root and long polynomials (64 ran about 1.5 times
/// faster than 16 with AVX-512), few enough to stay in L1 and to waste little
/// on short calls.
const BATCH_BLOCKS: usize = 64;
/// Samples per batch.
const BATCH: usize = 4 * BATCH_BLOCKS;
/// Block indices wrap at 2^62 so that sample indices wrap at 2^64: a batch
/// that crosses `u64::MAX` continues with block 0, as sample-by-sample would.
const BLOCK_MASK: u64 = (1 << 62) - 1;

/// Below this many samples `par_add_scaled` stays on the calling thread: the
/// hand-over to rayon would cost more than it saves.
const PAR_MIN: usize = 1 << 16;
/// Samples per rayon task: a whole number of batches, so that every task
/// starts on a block boundary and generates no block twice.
const PAR_CHUNK: usize = 1 << 14;
const _: () = assert!(PAR_CHUNK.is_multiple_of(BATCH) && PAR_MIN >= PAR_CHUNK);

/// Standard normal noise indexed by sample number: sample i of seed s is the same number whatever else is drawn.
///
/// The values are fixed by the seed and the sample index alone (see the
/// module documentation for the exact recipe), identical on every machine
/// and for every way of cutting the stream into calls or threads.
///
/// # Example
/// ```
/// use gpufec::codes::channel::GaussianNoise;
///
/// let noise = GaussianNoise::new(42);
/// let mut whole = vec![0.0f32; 10];
/// noise.fill(0, &mut whole);
///
/// // Samples 5, 6, 7 alone are the same numbers as within the whole run.
/// let mut part = vec![0.0f32; 3];
/// noise.fill(5, &mut part);
/// assert_eq!(&whole[5..8], &part[..]);
///
/// // Adding σ·z to a received BPSK signal, here on one thread or on all.
/// let mut y = vec![1.0f32; 100_000];
/// let mut y_par = y.clone();
/// noise.add_scaled(1_000, 0.5, &mut y);
/// noise.par_add_scaled(1_000, 0.5, &mut y_par);
/// assert_eq!(y, y_par);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct GaussianNoise {
    key: [u32; 2],
}

impl GaussianNoise {
    /// Noise stream of `seed`; every 64-bit seed gives a distinct Philox key.
    pub fn new(seed: u64) -> Self {
        Self {
            key: [seed as u32, (seed >> 32) as u32],
        }
    }

    /// Standard normals of samples first, first+1, ... into out.
    pub fn fill(&self, first: u64, out: &mut [f32]) {
        run_best(self.key, first, out, Op::Fill);
    }

    /// `samples[j] += sigma · z(first + j)`
    ///
    /// Computed as exactly `*s = *s + sigma * z` in f32, so that any other
    /// implementation doing the same gets the same bits.
    pub fn add_scaled(&self, first: u64, sigma: f32, samples: &mut [f32]) {
        run_best(self.key, first, samples, Op::Add(sigma));
    }

    /// [`add_scaled`](Self::add_scaled) on all cores when the slice is large
    /// (≥ 64 Ki samples); bit-identical to it.
    pub fn par_add_scaled(&self, first: u64, sigma: f32, samples: &mut [f32]) {
        self.par_pieces(first, samples, |piece_first, _, piece| self.add_scaled(piece_first, sigma, piece));
    }

    /// Cut `out`, whose item j belongs to stream position `first + j`, into
    /// pieces and call `f(position of the piece, its offset in out, piece)`
    /// for each, on rayon's threads when `out` is large (≥ 64 Ki items),
    /// else on this one. Every piece but the first starts on a block
    /// boundary, so that work drawing this noise per piece generates no block
    /// twice and gives the same bits as one pass.
    pub fn par_pieces<T: Send>(&self, first: u64, out: &mut [T], f: impl Fn(u64, usize, &mut [T]) + Sync) {
        if out.len() < PAR_MIN {
            f(first, 0, out);
            return;
        }
        // Up to the next block boundary on this thread, then chunks that
        // each start on a boundary.
        let head = (first.wrapping_neg() % 4) as usize;
        let (head_items, body) = out.split_at_mut(head);
        f(first, 0, head_items);
        let body_first = first.wrapping_add(head as u64);
        body.par_chunks_mut(PAR_CHUNK).enumerate().for_each(|(i, chunk)| {
            f(body_first.wrapping_add((i * PAR_CHUNK) as u64), head + i * PAR_CHUNK, chunk);
        });
    }
}

/// What to do with the generated normals.
#[derive(Debug, Clone, Copy)]
enum Op {
    Fill,
    Add(f32),
}

/// The fastest instruction set this CPU has; all give the same bits.
fn run_best(key: [u32; 2], first: u64, data: &mut [f32], op: Op) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F, checked just above.
            unsafe { run_avx512(key, first, data, op) };
            return;
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2, checked just above.
            unsafe { run_avx2(key, first, data, op) };
            return;
        }
    }
    run_portable(key, first, data, op);
}

/// Baseline build (SSE2 on x86_64); also the reference the others are tested against.
fn run_portable(key: [u32; 2], first: u64, data: &mut [f32], op: Op) {
    run(key, first, data, op);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn run_avx2(key: [u32; 2], first: u64, data: &mut [f32], op: Op) {
    run(key, first, data, op);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn run_avx512(key: [u32; 2], first: u64, data: &mut [f32], op: Op) {
    run(key, first, data, op);
}

/// Everything below is `inline(always)` so that each `run_*` compiles the
/// whole pipeline for its own instruction set.
#[inline(always)]
fn run(key: [u32; 2], first: u64, data: &mut [f32], op: Op) {
    match op {
        Op::Fill => drive(key, first, data, |out, z| out.copy_from_slice(z)),
        Op::Add(sigma) => drive(key, first, data, |samples, z| {
            for (s, &z) in samples.iter_mut().zip(z) {
                // Product rounded, then sum rounded: never fused.
                *s += sigma * z;
            }
        }),
    }
}

/// Walks `data` batch by batch; only the first batch may start inside a
/// block, and the last may generate samples past the end that are dropped.
#[inline(always)]
fn drive(key: [u32; 2], first: u64, data: &mut [f32], mut apply: impl FnMut(&mut [f32], &[f32])) {
    let mut z = [0.0f32; BATCH];
    let mut index = first;
    let mut rest = data;
    while !rest.is_empty() {
        let skip = (index % 4) as usize;
        batch(key, index / 4, &mut z);
        let take = (BATCH - skip).min(rest.len());
        let (now, later) = std::mem::take(&mut rest).split_at_mut(take);
        apply(now, &z[skip..skip + take]);
        index = index.wrapping_add(take as u64);
        rest = later;
    }
}

/// Samples `4 · block ..` for `BATCH_BLOCKS` blocks. Every loop runs over
/// lanes of independent blocks, which the compiler turns into vector code.
#[inline(always)]
fn batch(key: [u32; 2], block: u64, z: &mut [f32; BATCH]) {
    let mut words = [[0u32; BATCH_BLOCKS]; 4];
    let [lo, hi, _, _] = &mut words;
    for (j, (lo, hi)) in lo.iter_mut().zip(hi).enumerate() {
        let b = block.wrapping_add(j as u64) & BLOCK_MASK;
        (*lo, *hi) = (b as u32, (b >> 32) as u32);
    }
    philox4x32_10(&mut words, key);

    let mut cos_first = [0.0f32; BATCH_BLOCKS];
    let mut sin_first = [0.0f32; BATCH_BLOCKS];
    let mut cos_second = [0.0f32; BATCH_BLOCKS];
    let mut sin_second = [0.0f32; BATCH_BLOCKS];
    for j in 0..BATCH_BLOCKS {
        (cos_first[j], sin_first[j]) = box_muller(words[0][j], words[1][j]);
        (cos_second[j], sin_second[j]) = box_muller(words[2][j], words[3][j]);
    }
    for j in 0..BATCH_BLOCKS {
        z[4 * j] = cos_first[j];
        z[4 * j + 1] = sin_first[j];
        z[4 * j + 2] = cos_second[j];
        z[4 * j + 3] = sin_second[j];
    }
}

/// Philox4x32-10 on `N` counters at once, one per lane: `x[w][j]` is word
/// `w` of lane `j`, replaced by the output. The key is bumped between rounds,
/// as in Random123.
#[inline(always)]
fn philox4x32_10<const N: usize>(x: &mut [[u32; N]; 4], key: [u32; 2]) {
    let [mut k0, mut k1] = key;
    for round in 0..PHILOX_ROUNDS {
        if round > 0 {
            k0 = k0.wrapping_add(PHILOX_W0);
            k1 = k1.wrapping_add(PHILOX_W1);
        }
        let [x0, x1, x2, x3] = &mut *x;
        for (((x0, x1), x2), x3) in x0.iter_mut().zip(x1).zip(x2).zip(x3) {
            let p0 = u64::from(PHILOX_M0) * u64::from(*x0);
            let p1 = u64::from(PHILOX_M1) * u64::from(*x2);
            (*x0, *x1, *x2, *x3) = (
                (p1 >> 32) as u32 ^ *x1 ^ k0,
                p1 as u32,
                (p0 >> 32) as u32 ^ *x3 ^ k1,
                p0 as u32,
            );
        }
    }
}

/// 2^-32, exactly.
const TWO_POW_M32: f64 = 1.0 / 4_294_967_296.0;

/// `(w + 0.5) · 2^-32`: strictly inside (0, 1), symmetric about 1/2, and exact.
#[inline(always)]
fn unit(w: u32) -> f64 {
    (f64::from(w) + 0.5) * TWO_POW_M32
}

/// Two independent standard normals `(r cos θ, r sin θ)` from two words.
#[inline(always)]
fn box_muller(w1: u32, w2: u32) -> (f32, f32) {
    let r = (-2.0 * ln(unit(w1))).sqrt();
    let (sin, cos) = sin_cos_turns(unit(w2));
    ((r * cos) as f32, (r * sin) as f32)
}

/// Bits of sqrt(1/2) rounded to f64: `ln` reduces its argument to
/// [sqrt(1/2), sqrt(2)), where the series below converges fastest.
const SQRT_HALF_BITS: u64 = 0x3FE6_A09E_667F_3BCD;
/// Exponent field and sign, the part of the bits that holds the power of two.
const EXP_FIELD: u64 = 0xFFF << 52;
/// 2^52: an integer n < 2^52 written into the low bits of its mantissa
/// reads back, less 2^52, as n in f64 (a conversion that vectorises
/// without AVX-512).
const TWO_POW_52: f64 = 4_503_599_627_370_496.0;
/// ln 2 = LN2_HI + LN2_LO to twice f64's precision, LN2_HI with 21 trailing
/// zero bits so that k · LN2_HI is exact for every exponent k (the split of
/// fdlibm's `e_log.c`).
const LN2_HI: f64 = f64::from_bits(0x3FE6_2E42_FEE0_0000);
const LN2_LO: f64 = f64::from_bits(0x3DEA_39EF_3579_3C76);

/// ln(x) for positive normal x (subnormals, zero, infinities and NaN are
/// not handled); within 1e-13 relative of the true value, in practice a few
/// units in the last place.
///
/// x = 2^k · m with m in [sqrt(1/2), sqrt(2)); ln m = 2 atanh(s) with
/// s = (m - 1) / (m + 1), |s| ≤ 0.1716, summed to the s^21 term (the first
/// term left out is below 1e-18 relative).
#[inline(always)]
fn ln(x: f64) -> f64 {
    let bits = x.to_bits();
    // The top 12 bits of `tmp` are k in two's complement: x / 2^k falls in
    // [sqrt(1/2), sqrt(2)).
    let tmp = bits.wrapping_sub(SQRT_HALF_BITS);
    let m = f64::from_bits(bits.wrapping_sub(tmp & EXP_FIELD));
    let k_biased = tmp.wrapping_add(2048 << 52) >> 52;
    let k = f64::from_bits(TWO_POW_52.to_bits() | k_biased) - (TWO_POW_52 + 2048.0);

    let f = m - 1.0;
    let s = f / (2.0 + f);
    let z = s * s;
    let p = 1.0 / 3.0
        + z * (1.0 / 5.0
            + z * (1.0 / 7.0
                + z * (1.0 / 9.0
                    + z * (1.0 / 11.0
                        + z * (1.0 / 13.0
                            + z * (1.0 / 15.0 + z * (1.0 / 17.0 + z * (1.0 / 19.0 + z * (1.0 / 21.0)))))))));
    let two_s = s + s;
    let ln_m = two_s + two_s * (z * p);
    k * LN2_HI + (ln_m + k * LN2_LO)
}

/// 1.5 · 2^52: adding it rounds a number below 2^51 in magnitude to the
/// nearest integer and leaves that integer in the low mantissa bits.
const ROUND_MAGIC: f64 = 6_755_399_441_055_744.0;

/// (sin 2πt, cos 2πt) for t in [0, 1], within 1e-15 of std's `sin` and
/// `cos` of 2πt.
///
/// The angle is in turns so that the range reduction is exact: with q the
/// quarter turn nearest to t, r = t - q/4 in [-1/8, 1/8] needs no more bits
/// than t has, and only a = 2πr is rounded. sin a and cos a are Taylor
/// series to a^15 and a^16 (|a| ≤ π/4, first term left out below 5e-17),
/// then swapped and negated by quadrant.
#[inline(always)]
fn sin_cos_turns(t: f64) -> (f64, f64) {
    let shifted = 4.0 * t + ROUND_MAGIC;
    let q = shifted.to_bits();
    let r = t - (shifted - ROUND_MAGIC) * 0.25;
    let a = r * std::f64::consts::TAU;
    let a2 = a * a;
    let sin_tail = -1.0 / 6.0
        + a2 * (1.0 / 120.0
            + a2 * (-1.0 / 5_040.0
                + a2 * (1.0 / 362_880.0
                    + a2 * (-1.0 / 39_916_800.0 + a2 * (1.0 / 6_227_020_800.0 + a2 * (-1.0 / 1_307_674_368_000.0))))));
    let sin_a = a + a * a2 * sin_tail;
    let cos_a = 1.0
        + a2 * (-1.0 / 2.0
            + a2 * (1.0 / 24.0
                + a2 * (-1.0 / 720.0
                    + a2 * (1.0 / 40_320.0
                        + a2 * (-1.0 / 3_628_800.0
                            + a2 * (1.0 / 479_001_600.0
                                + a2 * (-1.0 / 87_178_291_200.0 + a2 * (1.0 / 20_922_789_888_000.0))))))));
    // Quarter turns: (sin, cos)(qπ/2 + a) is (sin a, cos a), (cos a, -sin a),
    // (-sin a, -cos a), (-cos a, sin a) for q = 0, 1, 2, 3 mod 4.
    let (sin, cos) = if q & 1 == 0 { (sin_a, cos_a) } else { (cos_a, sin_a) };
    let sin = f64::from_bits(sin.to_bits() ^ ((q & 2) << 62));
    let cos = f64::from_bits(cos.to_bits() ^ ((q.wrapping_add(1) & 2) << 62));
    (sin, cos)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Philox4x32-10 of one counter, through the lane code that production uses.
    fn philox(ctr: [u32; 4], key: [u32; 2]) -> [u32; 4] {
        let mut x = [[0u32; 3]; 4];
        for (w, &c) in ctr.iter().enumerate() {
            x[w] = [c; 3];
        }
        philox4x32_10(&mut x, key);
        for lane in 1..3 {
            assert_eq!(
                [x[0][lane], x[1][lane], x[2][lane], x[3][lane]],
                [x[0][0], x[1][0], x[2][0], x[3][0]]
            );
        }
        [x[0][0], x[1][0], x[2][0], x[3][0]]
    }

    /// Known answers of Random123's `kat_vectors` file (D. E. Shaw Research,
    /// github.com/DEShawResearch/random123, tests/kat_vectors): its three
    /// `philox4x32 10` lines, as carried into DEShawResearch/Random123-Boost,
    /// libs/random/test/test_philox.cpp at commit
    /// 916db91ae4c6fd8324ef054a518851321ab41f91 ("cut-and-pasted from the
    /// kat_vectors file in the original Random123 distribution"). The
    /// single-bit counters and keys come from the longer generated list
    /// examples/kat_vectors of the Random123 manual (github.com/girving/
    /// random123-manual at commit 61e8479252c42f0f8c0490dec55237d7c01bf509);
    /// they catch a mix-up of the words that all-equal inputs cannot.
    /// Columns: counter (4 words), key (2 words), expected output (4 words).
    #[rustfmt::skip]
    const PHILOX_KAT: [([u32; 4], [u32; 2], [u32; 4]); 7] = [
        ([0, 0, 0, 0], [0, 0], [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8]),
        (
            [0xffff_ffff; 4],
            [0xffff_ffff; 2],
            [0x408f_276d, 0x41c8_3b0e, 0xa20b_c7c6, 0x6d54_51fd],
        ),
        (
            [0x243f_6a88, 0x85a3_08d3, 0x1319_8a2e, 0x0370_7344],
            [0xa409_3822, 0x299f_31d0],
            [0xd16c_fe09, 0x94fd_cceb, 0x5001_e420, 0x2412_6ea1],
        ),
        ([1, 0, 0, 0], [1, 0], [0xac08_141b, 0xdfc5_ccbe, 0x79c0_7a47, 0xa7f6_6093]),
        ([0, 1, 0, 0], [1, 0], [0x833f_f8dc, 0x225c_963c, 0x232b_88b3, 0x0b33_4b07]),
        ([0, 0, 0, 1], [0, 1], [0x96b2_7e8c, 0x2882_6d0f, 0x66d9_58ef, 0x0815_09dc]),
        (
            [0x243f_6a88, 0x85a3_08d3, 0x1319_8a2e, 0x0370_7344],
            [0, 0xffff_ffff],
            [0x08f7_720c, 0x845e_e9e0, 0x502c_cd3d, 0xa9a0_0e27],
        ),
    ];

    #[test]
    fn philox_known_answers() {
        for (ctr, key, want) in PHILOX_KAT {
            assert_eq!(philox(ctr, key), want, "counter {ctr:08x?} key {key:08x?}");
        }
    }

    /// Reference for sample `i`: the recipe of the module doc with the
    /// platform's ln, sin, cos, written independently of `batch`.
    fn reference(seed: u64, i: u64) -> f64 {
        let block = i / 4;
        let w = philox(
            [block as u32, (block >> 32) as u32, 0, 0],
            [seed as u32, (seed >> 32) as u32],
        );
        let pair = ((i % 4) / 2) as usize;
        let u1 = (f64::from(w[2 * pair]) + 0.5) / 4_294_967_296.0;
        let u2 = (f64::from(w[2 * pair + 1]) + 0.5) / 4_294_967_296.0;
        let r = (-2.0 * u1.ln()).sqrt();
        let theta = std::f64::consts::TAU * u2;
        if i.is_multiple_of(2) {
            r * theta.cos()
        } else {
            r * theta.sin()
        }
    }

    fn sample(noise: &GaussianNoise, i: u64) -> f32 {
        let mut z = [0.0f32];
        noise.fill(i, &mut z);
        z[0]
    }

    #[test]
    fn samples_follow_the_documented_recipe() {
        let mut indices: Vec<u64> = (0..70).collect();
        indices.extend([1 << 32, (1 << 34) + 3, (1 << 40) + 5, u64::MAX - 9]);
        indices.extend((u64::MAX - 5)..=u64::MAX);
        for seed in [0, 1, 0xdead_beef_0000_0001, u64::MAX] {
            let noise = GaussianNoise::new(seed);
            for &i in &indices {
                let (got, want) = (f64::from(sample(&noise, i)), reference(seed, i));
                assert!(
                    (got - want).abs() <= 1e-6 * want.abs().max(1.0),
                    "seed {seed:#x} sample {i}: {got} vs reference {want}"
                );
            }
        }
    }

    /// Pins the stream itself, so that a change of any bit on any machine
    /// (a new compiler, another CPU, an edit here) fails in CI.
    #[test]
    fn stream_is_pinned() {
        let mut z = [0.0f32; 8];
        GaussianNoise::new(0).fill(0, &mut z);
        let bits: Vec<u32> = z.iter().map(|z| z.to_bits()).collect();
        assert_eq!(bits, PINNED_FIRST_8, "{z:?}");

        let mut z = vec![0.0f32; 1 << 16];
        GaussianNoise::new(0x0123_4567_89ab_cdef).fill(12_345_678_901, &mut z);
        assert_eq!(fnv1a(&z), PINNED_DIGEST, "{:#018x}", fnv1a(&z));
    }

    /// Seed 0, samples 0..8: 0.9911377, -0.9246626, -0.61760896, -0.4820686,
    /// -0.15363823, 0.1808259, 0.83173513, 0.19743972.
    #[rustfmt::skip]
    const PINNED_FIRST_8: [u32; 8] = [
        0x3f7d_bb33, 0xbf6c_b6b0, 0xbf1e_1b9f, 0xbef6_d1b2,
        0xbe1d_5357, 0x3e39_2a6d, 0x3f54_ec98, 0x3e4a_2da3,
    ];
    const PINNED_DIGEST: u64 = 0x7034_090d_14b1_ead0;

    fn fnv1a(z: &[f32]) -> u64 {
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        for v in z {
            for b in v.to_bits().to_le_bytes() {
                h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
            }
        }
        h
    }

    /// Arguments of `ln` that matter (all uniforms the generator can make,
    /// sampled, with both ends complete) and some beyond.
    fn ln_arguments() -> Vec<f64> {
        let mut xs: Vec<f64> = (0..4096u32)
            .chain(u32::MAX - 4095..=u32::MAX)
            .chain((0..u32::MAX).step_by(4099))
            .map(unit)
            .collect();
        xs.extend([
            0.5 * TWO_POW_M32,
            1.0,
            1.0 - f64::EPSILON / 2.0,
            1.0 - f64::EPSILON,
            0.5,
            0.25,
            std::f64::consts::FRAC_1_SQRT_2,
            f64::from_bits(SQRT_HALF_BITS - 1),
            f64::from_bits(SQRT_HALF_BITS + 1),
            f64::MIN_POSITIVE,
            1e-300,
            1e-100,
        ]);
        let mut x = 1.0f64;
        while x > 1e-300 {
            xs.extend([x, f64::from_bits(x.to_bits() - 1), f64::from_bits(x.to_bits() + 1)]);
            x *= 0.7;
        }
        xs.retain(|&x| x > 0.0 && x <= 1.0);
        xs
    }

    #[test]
    fn ln_matches_std() {
        let mut worst = (0.0f64, 0.0f64);
        for x in ln_arguments() {
            let (got, want) = (ln(x), x.ln());
            let err = if want == 0.0 {
                got.abs()
            } else {
                ((got - want) / want).abs()
            };
            if err > worst.0 {
                worst = (err, x);
            }
        }
        println!("ln: worst relative error {:.2e} at x = {:e}", worst.0, worst.1);
        assert!(worst.0 < 1e-13, "ln relative error {:e} at x = {:e}", worst.0, worst.1);
        assert_eq!(ln(1.0), 0.0);
        // The split of ln 2 rounds to ln 2 and carries the bits beyond it.
        assert_eq!(LN2_HI + LN2_LO, std::f64::consts::LN_2);
        assert!((LN2_LO - (std::f64::consts::LN_2 - LN2_HI)).abs() < 1e-16);
        assert_eq!(LN2_HI.to_bits() & 0x1F_FFFF, 0);
    }

    #[test]
    fn sin_cos_match_std() {
        let mut ts: Vec<f64> = (0..4096u32)
            .chain(u32::MAX - 4095..=u32::MAX)
            .chain((0..u32::MAX).step_by(4099))
            .map(unit)
            .collect();
        for k in 0..=8 {
            let t = f64::from(k) / 8.0;
            ts.extend([t, t - 1e-9, t + 1e-9, t - f64::EPSILON, t + f64::EPSILON]);
        }
        ts.retain(|&t| (0.0..=1.0).contains(&t));
        let mut worst = (0.0f64, 0.0f64);
        for t in ts {
            let (sin, cos) = sin_cos_turns(t);
            let angle = std::f64::consts::TAU * t;
            let err = (sin - angle.sin()).abs().max((cos - angle.cos()).abs());
            if err > worst.0 {
                worst = (err, t);
            }
        }
        println!(
            "sin/cos: worst absolute error {:.2e} at t = {:e} turns",
            worst.0, worst.1
        );
        assert!(worst.0 < 1e-13, "sin/cos error {:e} at t = {:e}", worst.0, worst.1);
    }

    #[test]
    fn chunking_does_not_change_the_noise() {
        let noise = GaussianNoise::new(7);
        let first = 3;
        let mut whole = vec![0.0f32; 10_000];
        noise.fill(first, &mut whole);

        let mut pieces = vec![0.0f32; whole.len()];
        let sizes = [1, 2, 3, 5, 7, 11, 13, 63, 64, 65, 127, 129, 1000, 4099];
        let (mut at, mut k) = (0, 0);
        while at < pieces.len() {
            let n = sizes[k % sizes.len()].min(pieces.len() - at);
            noise.fill(first + at as u64, &mut pieces[at..at + n]);
            at += n;
            k += 1;
        }
        assert!(whole.iter().zip(&pieces).all(|(a, b)| a.to_bits() == b.to_bits()));

        for (start, len) in [(1, 1), (2, 3), (5, 70), (63, 66), (4095, 1900)] {
            let mut part = vec![0.0f32; len];
            noise.fill(first + start as u64, &mut part);
            assert_eq!(part, whole[start..start + len], "samples {start}..+{len}");
        }

        // Across the wrap of the sample index: u64::MAX is followed by 0.
        let mut across = vec![0.0f32; 20];
        noise.fill(u64::MAX - 6, &mut across);
        let mut after = vec![0.0f32; 13];
        noise.fill(0, &mut after);
        let mut before = vec![0.0f32; 7];
        noise.fill(u64::MAX - 6, &mut before);
        assert_eq!(across[..7], before);
        assert_eq!(across[7..], after);
    }

    #[test]
    fn add_scaled_is_fill_then_multiply_add() {
        let noise = GaussianNoise::new(11);
        let sigma = 0.37f32;
        let start: Vec<f32> = (0..1001).map(|i| if i % 3 == 0 { 1.0 } else { -1.0 }).collect();
        let mut z = vec![0.0f32; start.len()];
        noise.fill(5, &mut z);
        let mut y = start.clone();
        noise.add_scaled(5, sigma, &mut y);
        for ((y, s), z) in y.iter().zip(&start).zip(&z) {
            assert_eq!(y.to_bits(), (*s + sigma * *z).to_bits());
        }
    }

    #[test]
    fn par_add_scaled_matches_add_scaled() {
        let noise = GaussianNoise::new(0x5eed);
        let start: Vec<f32> = (0..(1 << 20) + 3).map(|i| if i % 5 < 2 { 1.0 } else { -1.0 }).collect();
        for first in [0, 12_345, (1 << 33) + 2] {
            let mut serial = start.clone();
            noise.add_scaled(first, 0.7, &mut serial);
            let mut parallel = start.clone();
            noise.par_add_scaled(first, 0.7, &mut parallel);
            assert!(
                serial.iter().zip(&parallel).all(|(a, b)| a.to_bits() == b.to_bits()),
                "first = {first}"
            );
        }
    }

    /// Every instruction set this CPU has gives the bits of the baseline build.
    #[test]
    fn vector_builds_match_baseline() {
        let start: Vec<f32> = (0..(1 << 18) + 5).map(|i| (i % 7) as f32 - 3.0).collect();
        for (seed, first) in [(0, 0), (3, 1), (u64::MAX, (1 << 34) - 101)] {
            for op in [Op::Fill, Op::Add(0.3)] {
                let key = GaussianNoise::new(seed).key;
                let mut want = start.clone();
                run_portable(key, first, &mut want, op);
                let mut builds: Vec<(&str, Vec<f32>)> = Vec::new();
                #[cfg(target_arch = "x86_64")]
                {
                    if std::arch::is_x86_feature_detected!("avx2") {
                        let mut got = start.clone();
                        // SAFETY: AVX2 checked just above.
                        unsafe { run_avx2(key, first, &mut got, op) };
                        builds.push(("avx2", got));
                    }
                    if std::arch::is_x86_feature_detected!("avx512f") {
                        let mut got = start.clone();
                        // SAFETY: AVX-512F checked just above.
                        unsafe { run_avx512(key, first, &mut got, op) };
                        builds.push(("avx512f", got));
                    }
                }
                for (name, got) in builds {
                    assert!(
                        want.iter().zip(&got).all(|(a, b)| a.to_bits() == b.to_bits()),
                        "{name} differs from baseline, seed {seed} first {first} {op:?}"
                    );
                }
            }
        }
    }

    fn normals(seed: u64, first: u64, n: usize) -> Vec<f32> {
        let mut z = vec![0.0f32; n];
        GaussianNoise::new(seed).fill(first, &mut z);
        z
    }

    #[test]
    fn mean_and_variance() {
        let n = 1_000_000;
        let z = normals(2024, 17, n);
        let mean = z.iter().map(|&z| f64::from(z)).sum::<f64>() / n as f64;
        let var = z.iter().map(|&z| (f64::from(z) - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        let n = n as f64;
        assert!(mean.abs() < 5.0 / n.sqrt(), "mean {mean}");
        assert!((var - 1.0).abs() < 5.0 * (2.0 / n).sqrt(), "variance {var}");
    }

    #[test]
    fn tails_are_gaussian() {
        let n = 1 << 22;
        let z = normals(99, 0, n);
        // 2 Q(x), the probability of |z| > x.
        for (x, p) in [(2.0, 0.045_500_3), (3.0, 0.002_699_8), (4.0, 0.000_063_3)] {
            let frac = z.iter().filter(|z| z.abs() > x).count() as f64 / n as f64;
            let se = (p * (1.0 - p) / n as f64).sqrt();
            assert!(
                (frac - p).abs() < 5.0 * se,
                "P(|z| > {x}) = {frac}, want {p} ± {}",
                5.0 * se
            );
        }
    }

    fn correlation(a: &[f32], b: &[f32]) -> f64 {
        let n = a.len() as f64;
        let (ma, mb) = (
            a.iter().map(|&v| f64::from(v)).sum::<f64>() / n,
            b.iter().map(|&v| f64::from(v)).sum::<f64>() / n,
        );
        let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
        for (&x, &y) in a.iter().zip(b) {
            let (x, y) = (f64::from(x) - ma, f64::from(y) - mb);
            sab += x * y;
            saa += x * x;
            sbb += y * y;
        }
        sab / (saa * sbb).sqrt()
    }

    #[test]
    fn seeds_give_unrelated_streams() {
        let n = 1 << 18;
        let bound = 5.0 / (n as f64).sqrt();
        for (s, t) in [(0, 1), (1, 1 << 32), (5, 5 | 1 << 63), (0x1234, 0x1234_0000_0000)] {
            let (a, b) = (normals(s, 0, n), normals(t, 0, n));
            let equal = a.iter().zip(&b).filter(|(x, y)| x == y).count();
            assert!(equal < 8, "seeds {s:#x} and {t:#x}: {equal} equal samples");
            let rho = correlation(&a, &b);
            assert!(rho.abs() < bound, "seeds {s:#x} and {t:#x}: correlation {rho}");
        }
    }

    #[test]
    fn neighbours_are_uncorrelated() {
        let n = 1_000_000;
        let z = normals(31337, 1, n + 8);
        let bound = 5.0 / (n as f64).sqrt();
        for lag in 1..=8 {
            let rho = correlation(&z[..n], &z[lag..lag + n]);
            assert!(rho.abs() < bound, "lag {lag}: correlation {rho}");
        }
        // |z| of a pair share the radius: their squares must not correlate either.
        let sq: Vec<f32> = z.iter().map(|z| z * z).collect();
        for lag in 1..=4 {
            let rho = correlation(&sq[..n], &sq[lag..lag + n]);
            assert!(rho.abs() < bound, "lag {lag}: correlation of squares {rho}");
        }
    }
}
