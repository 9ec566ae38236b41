//! Counter-based standard normal noise: sample `i` of seed `s` depends only on
//! `(s, i)`, so any number of threads, any chunking of the stream and any
//! machine give the same noise and hence the same error counts.
//!
//! The recipe. Indices are taken modulo 2^64. Sample `i` lies in group
//! `g = i / 64`, in row `k = (i mod 64) / 16` and lane `l = i mod 16` of it,
//! and is drawn from block `b = 16 g + l`. Block `b` is Philox4x32-10 of
//! counter `(b mod 2^32, b >> 32, 0, 0)` under key `(seed mod 2^32, seed >>
//! 32)`, giving words `w0..w3`. Rows 0 and 1 are `r cos θ` and `r sin θ` of
//! the pair `(w0, w1)`, rows 2 and 3 those of `(w2, w3)`, by Box–Muller in
//! f32: with `w` the first word of the pair and `v` the second,
//! `r = sqrt(-2 ln u)` for the uniform `u = (w + 0.5) · 2^-32` and
//! `θ = 2π (v + 0.5) · 2^-32`, computed as `ln_unit` and `sin_cos_turns`
//! say, each operation rounded to f32. The 16 lanes of a row are one
//! AVX-512 vector, so a group is written without shuffles; the smallest
//! word gives the deepest tail, |z| up to sqrt(-2 ln 2^-33) = 6.76.
//!
//! The platform's `ln`, `sin` and `cos` may differ in the last bit between C
//! libraries and versions, which would make two machines disagree now and
//! then. So `ln` and the sine/cosine below are plain IEEE additions,
//! multiplications, one division, conversions and bit manipulation, without
//! fused multiply-add; `sqrt` is exactly rounded by IEEE 754. Any vector
//! width gives the same bits, which lets an AVX2 or AVX-512 build of the
//! same source run where the CPU has it. A port (a GPU kernel, say) gets the
//! same bits only by doing the same operations in the same order, each
//! rounded on its own (for CUDA: `-fmad=false`, or `__fadd_rn`/`__fmul_rn`).

use rayon::prelude::*;

/// Philox4x32 round multipliers (Salmon, Moraes, Dror, Shaw, "Parallel random
/// numbers: as easy as 1, 2, 3", SC'11).
const PHILOX_M0: u32 = 0xD251_1F53;
const PHILOX_M1: u32 = 0xCD9E_8D57;
/// Weyl increments of the key between rounds: golden ratio and sqrt(3) - 1.
const PHILOX_W0: u32 = 0x9E37_79B9;
const PHILOX_W1: u32 = 0xBB67_AE85;
const PHILOX_ROUNDS: usize = 10;

/// Blocks whose words and normals are computed together in registers: one
/// AVX-512 vector of u32 or f32, and the lanes of a group (module doc).
const LANES: usize = 16;
/// Samples per group: four rows of [`LANES`].
const GROUP: usize = 4 * LANES;
/// Groups generated together: enough independent chains of operations to
/// hide their latency (with AVX-512, 4 ran 1.8 times faster than 1 and 1.4
/// times faster than 2; 8 spilled registers and ran slower), few enough to
/// waste little on short calls.
const BATCH_GROUPS: usize = 4;
/// Samples per batch.
const BATCH: usize = GROUP * BATCH_GROUPS;
/// Group indices wrap at 2^58 so that sample indices wrap at 2^64: a batch
/// that crosses `u64::MAX` continues with group 0, as sample-by-sample would.
const GROUP_MASK: u64 = (1 << 58) - 1;

/// Below this many samples `par_pieces` stays on the calling thread: the
/// hand-over to rayon would cost more than it saves.
const PAR_MIN: usize = 1 << 16;
/// Samples per rayon task: a whole number of batches, so that every task
/// starts on a group boundary and generates no group twice.
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
        run_best(self.key, first, out.len(), |at, z| out[at..at + z.len()].copy_from_slice(z));
    }

    /// `samples[j] += sigma · z(first + j)`
    ///
    /// Computed as exactly `*s = *s + sigma * z` in f32, so that any other
    /// implementation doing the same gets the same bits.
    pub fn add_scaled(&self, first: u64, sigma: f32, samples: &mut [f32]) {
        run_best(self.key, first, samples.len(), |at, z| {
            for (s, &z) in samples[at..at + z.len()].iter_mut().zip(z) {
                // Product rounded, then sum rounded: never fused.
                *s += sigma * z;
            }
        });
    }

    /// `out[j] = f(input[j], z(first + j))`, in one pass, compiled with `f`
    /// inlined for the best instruction set this CPU has: a channel that
    /// maps, adds noise and quantizes does it all in the vector loop that
    /// reads the normals while they are in L1. `f` must give the same value
    /// for the same arguments on every instruction set (plain IEEE
    /// operations; Rust never fuses a multiply and an add on its own).
    pub fn map_into<I: Copy, O>(&self, first: u64, input: &[I], out: &mut [O], f: impl Fn(I, f32) -> O) {
        assert_eq!(input.len(), out.len(), "one output per input");
        run_best(self.key, first, out.len(), |at, z| map_run(&input[at..at + z.len()], z, &mut out[at..at + z.len()], &f));
    }

    /// The four Philox4x32-10 words of blocks `first, first + 1, ...` into
    /// `out`: uniform words that depend only on the seed and the block, for
    /// channels whose random events are not Gaussian (insertions and
    /// deletions) and must be counter-based all the same. Block `b` is the one
    /// of the module recipe, whose words also give the normals of its samples:
    /// a channel drawing both takes them from two seeds.
    ///
    /// # Example
    /// ```
    /// use gpufec::codes::channel::GaussianNoise;
    /// let g = GaussianNoise::new(3);
    /// let (mut all, mut one) = ([[0u32; 4]; 40], [[0u32; 4]; 1]);
    /// g.words(0, &mut all);
    /// g.words(37, &mut one);
    /// assert_eq!(all[37], one[0]);
    /// ```
    pub fn words(&self, first: u64, out: &mut [[u32; 4]]) {
        for (c, chunk) in out.chunks_mut(LANES).enumerate() {
            let start = first.wrapping_add((c * LANES) as u64);
            let mut a: [u64; LANES] = std::array::from_fn(|j| start.wrapping_add(j as u64));
            let mut b = [0u64; LANES];
            philox4x32_10(&mut a, &mut b, self.key);
            for (j, w) in chunk.iter_mut().enumerate() {
                *w = [a[j] as u32, (a[j] >> 32) as u32, b[j] as u32, (b[j] >> 32) as u32];
            }
        }
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
        // Up to the next group boundary on this thread, then chunks that
        // each start on a boundary.
        let head = (first.wrapping_neg() % GROUP as u64) as usize;
        let (head_items, body) = out.split_at_mut(head);
        f(first, 0, head_items);
        let body_first = first.wrapping_add(head as u64);
        body.par_chunks_mut(PAR_CHUNK).enumerate().for_each(|(i, chunk)| {
            f(body_first.wrapping_add((i * PAR_CHUNK) as u64), head + i * PAR_CHUNK, chunk);
        });
    }
}

/// The loop of [`GaussianNoise::map_into`] over one run. The slices are
/// arguments of their own, not captures of a closure, so that the compiler
/// knows the output aliases neither the input nor `f`'s state and vectorises.
#[inline(always)]
fn map_run<I: Copy, O>(input: &[I], z: &[f32], out: &mut [O], f: &impl Fn(I, f32) -> O) {
    for ((o, &x), &z) in out.iter_mut().zip(input).zip(z) {
        *o = f(x, z);
    }
}

/// Calls `apply(at, z)` for consecutive runs of the normals of samples
/// `first .. first + len`, `z[k]` being sample `first + at + k`, on the
/// fastest instruction set this CPU has; all give the same bits. `apply` is
/// inlined into each instruction set's copy, so its loop is vectorised for
/// that set too.
#[inline(always)]
fn run_best(key: [u32; 2], first: u64, len: usize, apply: impl FnMut(usize, &[f32])) {
    #[cfg(target_arch = "x86_64")]
    {
        if has_avx512() {
            // SAFETY: the CPU has every feature `run_avx512` enables, checked just above.
            unsafe { run_avx512(key, first, len, apply) };
            return;
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2, checked just above.
            unsafe { run_avx2(key, first, len, apply) };
            return;
        }
    }
    run_portable(key, first, len, apply);
}

/// Whether the CPU has the AVX-512 subsets `run_avx512` enables.
#[cfg(target_arch = "x86_64")]
fn has_avx512() -> bool {
    std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512bw")
}

/// Baseline build (SSE2 on x86_64); also the reference the others are tested against.
fn run_portable(key: [u32; 2], first: u64, len: usize, apply: impl FnMut(usize, &[f32])) {
    drive(key, first, len, apply);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn run_avx2(key: [u32; 2], first: u64, len: usize, apply: impl FnMut(usize, &[f32])) {
    drive(key, first, len, apply);
}

/// AVX-512BW too, for the byte conversions of the `apply` of `map_into`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
fn run_avx512(key: [u32; 2], first: u64, len: usize, apply: impl FnMut(usize, &[f32])) {
    drive(key, first, len, apply);
}

/// Walks samples `first .. first + len` batch by batch; everything below is
/// `inline(always)` so that each `run_*` compiles the whole pipeline for its
/// own instruction set. Only the first batch may start inside a block, and
/// the last may generate samples past the end that are dropped.
#[inline(always)]
fn drive(key: [u32; 2], first: u64, len: usize, mut apply: impl FnMut(usize, &[f32])) {
    let mut z = [0.0f32; BATCH];
    let mut index = first;
    let mut at = 0;
    while at < len {
        let skip = (index % GROUP as u64) as usize;
        batch(key, index / GROUP as u64, &mut z);
        let take = (BATCH - skip).min(len - at);
        apply(at, &z[skip..skip + take]);
        index = index.wrapping_add(take as u64);
        at += take;
    }
}

/// The samples of `BATCH_GROUPS` groups from `group` on. Every operation
/// runs over lanes of independent blocks, which the compiler turns into
/// vector code; the words and normals of the batch stay in registers, and
/// its groups' independent chains of operations hide each other's latency.
#[inline(always)]
fn batch(key: [u32; 2], group: u64, z: &mut [f32; BATCH]) {
    const N: usize = BATCH_GROUPS * LANES;
    // The counter (b mod 2^32, b >> 32, 0, 0) of block b, as two u64s.
    let mut a: [u64; N] = std::array::from_fn(|j| {
        let g = group.wrapping_add((j / LANES) as u64) & GROUP_MASK;
        g * LANES as u64 + (j % LANES) as u64
    });
    let mut b = [0u64; N];
    philox4x32_10(&mut a, &mut b, key);
    // The words as u32 lanes first, so that the f32 arithmetic below runs
    // on vectors of LANES floats, not of as many floats as u64s.
    let words: [[u32; N]; 4] = [a.map(|a| a as u32), a.map(|a| (a >> 32) as u32), b.map(|b| b as u32), b.map(|b| (b >> 32) as u32)];
    for (g, z) in z.chunks_exact_mut(GROUP).enumerate() {
        for (pair, rows) in z.chunks_exact_mut(2 * LANES).enumerate() {
            let (cos, sin) = rows.split_at_mut(LANES);
            let (w, v) = (&words[2 * pair][g * LANES..], &words[2 * pair + 1][g * LANES..]);
            for l in 0..LANES {
                (cos[l], sin[l]) = box_muller(w[l], v[l]);
            }
        }
    }
}

/// Philox4x32-10 on `N` counters at once, one per lane, each held as two
/// u64s, `a = x0 | x1 << 32` and `b = x2 | x3 << 32`, and replaced by the
/// output. The round (x0, x1, x2, x3) ← (hi(M1·x2) ^ x1 ^ k0, lo(M1·x2),
/// hi(M0·x0) ^ x3 ^ k1, lo(M0·x0)) is then, per u64, a 32×32→64-bit
/// multiplication, a rotation by 32 bits and a three-way XOR: few vector
/// instructions and no shuffles. The key is bumped between rounds, as in
/// Random123.
#[inline(always)]
fn philox4x32_10<const N: usize>(a: &mut [u64; N], b: &mut [u64; N], key: [u32; 2]) {
    let [mut k0, mut k1] = key;
    for _ in 0..PHILOX_ROUNDS {
        for (a, b) in a.iter_mut().zip(b.iter_mut()) {
            let pa = (*a & 0xFFFF_FFFF) * u64::from(PHILOX_M0);
            let pb = (*b & 0xFFFF_FFFF) * u64::from(PHILOX_M1);
            (*a, *b) = (pb.rotate_left(32) ^ (*a >> 32) ^ u64::from(k0), pa.rotate_left(32) ^ (*b >> 32) ^ u64::from(k1));
        }
        k0 = k0.wrapping_add(PHILOX_W0);
        k1 = k1.wrapping_add(PHILOX_W1);
    }
}

/// Two independent standard normals `(r cos θ, r sin θ)` from two words:
/// `r = sqrt(-2 ln u1)` with `u1 = (w1 + 0.5) · 2^-32` ([`ln_unit`]),
/// `θ = 2π (w2 + 0.5) · 2^-32` ([`sin_cos_turns`]).
#[inline(always)]
fn box_muller(w1: u32, w2: u32) -> (f32, f32) {
    let r = (-2.0 * ln_unit(w1)).sqrt();
    let (sin, cos) = sin_cos_turns(w2);
    (r * cos, r * sin)
}

/// Bits of sqrt(1/2) rounded to f32: `ln_unit` reduces its argument to
/// [sqrt(1/2), sqrt(2)), where the series below converges fastest.
const SQRT_HALF_BITS: u32 = 0x3F35_04F3;
/// ln 2 rounded to f32.
const LN_2: f32 = std::f32::consts::LN_2;

/// ln u of the uniform `u = (w + 0.5) · 2^-32` of a word, in f32: strictly
/// inside (0, 1) and symmetric about 1/2 before rounding, so that the
/// smallest word gives the deepest tail, sqrt(-2 ln 2^-33) = 6.76.
///
/// x = f32(w) + 0.5 (each operation rounded to nearest; exact below 2^23) is
/// 2^k · m with m in [sqrt(1/2), sqrt(2)), and ln u = (k - 32) ln 2 + ln m,
/// with ln m = 2 atanh(s), s = (m - 1) / (m + 1), |s| ≤ 0.1716, summed to
/// the s^9 term (the first term left out is below 3e-9 of the sum).
#[inline(always)]
fn ln_unit(w: u32) -> f32 {
    let x = w as f32 + 0.5;
    let bits = x.to_bits();
    // The top 9 bits of `tmp` are k in two's complement (x ≥ 0.5, so k ≥ −1):
    // x / 2^k falls in [sqrt(1/2), sqrt(2)).
    let tmp = bits.wrapping_sub(SQRT_HALF_BITS);
    let k = (tmp as i32) >> 23;
    let m = f32::from_bits(bits.wrapping_sub(tmp & 0xFF80_0000));
    let f = m - 1.0;
    let s = f / (2.0 + f);
    let z = s * s;
    let p = 1.0 / 3.0 + z * (1.0 / 5.0 + z * (1.0 / 7.0 + z * (1.0 / 9.0)));
    let two_s = s + s;
    let ln_m = two_s + two_s * (z * p);
    (k - 32) as f32 * LN_2 + ln_m
}

/// 2π · 2^-32 rounded to f32: radians per unit of a word's angle.
const RADIANS_PER_UNIT: f32 = (std::f64::consts::TAU / 4_294_967_296.0) as f32;

/// (sin θ, cos θ) of θ = 2π (w + 0.5) · 2^-32, in f32.
///
/// The range reduction is exact, in integers: q = round(w / 2^30) mod 4 is
/// the quarter turn nearest to θ, and the rest d = w − q · 2^30 (in
/// [−2^29, 2^29)) becomes a = (f32(d) + 0.5) · 2π·2^-32, |a| ≤ π/4. sin a and
/// cos a are Taylor series to a^9 and a^8 (the first terms left out are
/// below 2e-9 and 3e-8), then swapped and negated by quadrant.
#[inline(always)]
fn sin_cos_turns(w: u32) -> (f32, f32) {
    let q = w.wrapping_add(1 << 29) >> 30;
    let d = w.wrapping_sub(q << 30) as i32;
    let a = (d as f32 + 0.5) * RADIANS_PER_UNIT;
    let a2 = a * a;
    let sin_a = a + a * a2 * (-1.0 / 6.0 + a2 * (1.0 / 120.0 + a2 * (-1.0 / 5_040.0 + a2 * (1.0 / 362_880.0))));
    let cos_a = 1.0 + a2 * (-1.0 / 2.0 + a2 * (1.0 / 24.0 + a2 * (-1.0 / 720.0 + a2 * (1.0 / 40_320.0))));
    // Quarter turns: (sin, cos)(qπ/2 + a) is (sin a, cos a), (cos a, -sin a),
    // (-sin a, -cos a), (-cos a, sin a) for q = 0, 1, 2, 3.
    let (sin, cos) = if q & 1 == 0 { (sin_a, cos_a) } else { (cos_a, sin_a) };
    let sin = f32::from_bits(sin.to_bits() ^ ((q & 2) << 30));
    let cos = f32::from_bits(cos.to_bits() ^ ((q.wrapping_add(1) & 2) << 30));
    (sin, cos)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Philox4x32-10 of one counter, through the lane code that production uses.
    fn philox(ctr: [u32; 4], key: [u32; 2]) -> [u32; 4] {
        let pack = |lo: u32, hi: u32| u64::from(lo) | u64::from(hi) << 32;
        let (mut a, mut b) = ([pack(ctr[0], ctr[1]); 3], [pack(ctr[2], ctr[3]); 3]);
        philox4x32_10(&mut a, &mut b, key);
        for lane in 1..3 {
            assert_eq!((a[lane], b[lane]), (a[0], b[0]));
        }
        [a[0] as u32, (a[0] >> 32) as u32, b[0] as u32, (b[0] >> 32) as u32]
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

    /// Reference for sample `i`: the recipe of the module doc in f64 with
    /// the platform's ln, sin, cos, written independently of `batch`.
    fn reference(seed: u64, i: u64) -> f64 {
        let (group, row, lane) = (i / 64, (i % 64) / 16, i % 16);
        let block = 16 * group + lane;
        let w = philox(
            [block as u32, (block >> 32) as u32, 0, 0],
            [seed as u32, (seed >> 32) as u32],
        );
        let pair = (row / 2) as usize;
        let u1 = rounded_unit(w[2 * pair]);
        let u2 = (f64::from(w[2 * pair + 1]) + 0.5) / 4_294_967_296.0;
        let r = (-2.0 * u1.ln()).sqrt();
        let theta = std::f64::consts::TAU * u2;
        if row % 2 == 0 { r * theta.cos() } else { r * theta.sin() }
    }

    /// The uniform of a word as the recipe rounds it, f32(w) + 0.5 over
    /// 2^32 (exact in f64): 24 significant bits, so that near 1 its steps
    /// are 2^-24 (and small radii r are quantized in steps of 2^-23 in r²).
    fn rounded_unit(w: u32) -> f64 {
        f64::from(w as f32 + 0.5) / 4_294_967_296.0
    }

    fn sample(noise: &GaussianNoise, i: u64) -> f32 {
        let mut z = [0.0f32];
        noise.fill(i, &mut z);
        z[0]
    }

    /// Every sample is the recipe's within the error of f32 arithmetic
    /// (a few units in the last place of r, and of cos θ and sin θ).
    #[test]
    fn samples_follow_the_documented_recipe() {
        let mut indices: Vec<u64> = (0..200).collect();
        indices.extend([1 << 32, (1 << 34) + 3, (1 << 40) + 5, (1 << 58) + 17, u64::MAX - 70]);
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

    /// Seed 0, samples 0..8: 0.9911377, -0.15363818, -1.1863579, -0.595407,
    /// -0.12755169, 1.2440062, 0.28980014, 0.880858.
    #[rustfmt::skip]
    const PINNED_FIRST_8: [u32; 8] = [
        0x3f7d_bb33, 0xbe1d_5354, 0xbf97_da93, 0xbf18_6c98,
        0xbe02_9ce9, 0x3f9f_3b98, 0x3e94_60af, 0x3f61_7fe9,
    ];
    const PINNED_DIGEST: u64 = 0x426b_47b6_b1ab_7faa;

    fn fnv1a(z: &[f32]) -> u64 {
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        for v in z {
            for b in v.to_bits().to_le_bytes() {
                h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
            }
        }
        h
    }

    /// The words whose logarithm matters most (both ends complete, where
    /// the tails and the rounding of f32(w) + 0.5 are) and a sample of the rest.
    fn words() -> impl Iterator<Item = u32> {
        (0..1 << 16).chain(u32::MAX - (1 << 16)..=u32::MAX).chain((0..u32::MAX).step_by(4099)).chain((1..32).flat_map(|k| {
            let p = 1u32 << k;
            [p - 1, p, p + 1]
        }))
    }

    #[test]
    fn ln_unit_matches_std() {
        let mut worst = (0.0f64, 0u32);
        for w in words() {
            let want = rounded_unit(w).ln();
            let err = if want == 0.0 { f64::from(ln_unit(w)).abs() } else { ((f64::from(ln_unit(w)) - want) / want).abs() };
            if err > worst.0 {
                worst = (err, w);
            }
        }
        println!("ln_unit: worst relative error {:.2e} at w = {}", worst.0, worst.1);
        assert!(worst.0 < 4e-7, "ln_unit relative error {:e} at w = {}", worst.0, worst.1);
        assert!(ln_unit(u32::MAX) <= 0.0);
    }

    #[test]
    fn sin_cos_match_std() {
        let mut worst = (0.0f64, 0u32);
        for w in words().chain((0..8u32).flat_map(|k| {
            // The quarter and eighth turns, where the reduction switches.
            let b = k << 29;
            [b.wrapping_sub(2), b.wrapping_sub(1), b, b + 1, b + 2]
        })) {
            let (sin, cos) = sin_cos_turns(w);
            let angle = std::f64::consts::TAU * (f64::from(w) + 0.5) / 4_294_967_296.0;
            let err = (f64::from(sin) - angle.sin()).abs().max((f64::from(cos) - angle.cos()).abs());
            if err > worst.0 {
                worst = (err, w);
            }
        }
        println!("sin/cos: worst absolute error {:.2e} at w = {}", worst.0, worst.1);
        assert!(worst.0 < 2e-7, "sin/cos error {:e} at w = {}", worst.0, worst.1);
    }

    /// The radius r(w) = sqrt(-2 ln u) of Box–Muller has P(r > x) =
    /// exp(-x²/2); its tail is the tail of |z| at angles near the axes. So
    /// the words with r(w) > x must be 2^32 exp(-x²/2) of them, out to the
    /// 6.5σ the recipe promises: exactly, since r falls with w.
    #[test]
    fn radius_tail_reaches_6_5_sigma() {
        let radius = |w: u32| f64::from((-2.0 * ln_unit(w)).sqrt());
        for x in [4.0f64, 5.0, 6.0, 6.5] {
            let count = (0..=u32::MAX).take_while(|&w| radius(w) > x).count() as f64;
            let want = 4_294_967_296.0 * (-x * x / 2.0).exp();
            assert!((count - want).abs() <= 1.0 + 1e-5 * want, "P(r > {x}): {count} words, want {want}");
        }
        assert!(radius(0) > 6.76 && radius(0) < 6.77, "{}", radius(0));
        // The deepest tail reaches the samples: w = 0 at angles near 0 and π/2.
        let (sin, cos) = sin_cos_turns(0);
        let (z0, z1) = box_muller(0, 0);
        assert!(z0 > 6.76 && z0 == (-2.0 * ln_unit(0)).sqrt() * cos && z1 == (-2.0 * ln_unit(0)).sqrt() * sin, "{z0} {z1}");
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

    /// What one build (`run_portable`, `run_avx2`, `run_avx512`) makes of
    /// samples `first ..` of `key`: the normals, `start` plus 0.3 times them,
    /// and the channel's map of `bits` (BPSK, noise, LLR gain, `i8`
    /// quantizer), each with its closure inlined into that build as in
    /// production.
    macro_rules! outputs {
        ($run:ident, $key:expr, $first:expr, $start:expr, $bits:expr) => {{
            let (key, first, start, bits): ([u32; 2], u64, &[f32], &[u8]) = ($key, $first, $start, $bits);
            let n = start.len();
            let q = crate::codes::channel::Quantizer::new(5.3).unwrap();
            let (mut fill, mut add, mut llrs) = (vec![0.0f32; n], start.to_vec(), vec![0i8; n]);
            // SAFETY (for the vector builds): the caller checked that the CPU has their features.
            #[allow(unused_unsafe)]
            unsafe {
                $run(key, first, n, |at, z| fill[at..at + z.len()].copy_from_slice(z));
                $run(key, first, n, |at, z| {
                    for (s, &z) in add[at..at + z.len()].iter_mut().zip(z) {
                        *s += 0.3 * z;
                    }
                });
                $run(key, first, n, |at, z| {
                    for ((l, &b), &z) in llrs[at..at + z.len()].iter_mut().zip(&bits[at..]).zip(z) {
                        *l = q.one((crate::codes::channel::bpsk_symbol(b) + 0.8 * z) * 3.1);
                    }
                });
            }
            (fill, add, llrs)
        }};
    }

    /// Every instruction set this CPU has gives the bits of the baseline
    /// build, for the normals and for a channel's map of them.
    #[test]
    fn vector_builds_match_baseline() {
        let start: Vec<f32> = (0..(1 << 18) + 5).map(|i| (i % 7) as f32 - 3.0).collect();
        let bits: Vec<u8> = (0..start.len() as u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 31) as u8).collect();
        for (seed, first) in [(0, 0), (3, 1), (u64::MAX, (1 << 34) - 101)] {
            let key = GaussianNoise::new(seed).key;
            let want = outputs!(run_portable, key, first, &start, &bits);
            let mut builds = Vec::new();
            #[cfg(target_arch = "x86_64")]
            {
                if std::arch::is_x86_feature_detected!("avx2") {
                    builds.push(("avx2", outputs!(run_avx2, key, first, &start, &bits)));
                }
                if has_avx512() {
                    builds.push(("avx512", outputs!(run_avx512, key, first, &start, &bits)));
                }
            }
            let same = |a: &[f32], b: &[f32]| a.iter().zip(b).all(|(a, b)| a.to_bits() == b.to_bits());
            for (name, got) in builds {
                assert!(same(&want.0, &got.0), "{name}: normals differ from baseline, seed {seed} first {first}");
                assert!(same(&want.1, &got.1), "{name}: added noise differs from baseline, seed {seed} first {first}");
                assert_eq!(want.2, got.2, "{name}: channel LLRs differ from baseline, seed {seed} first {first}");
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
        for (x, p) in [(2.0, 0.045_500_3), (3.0, 0.002_699_8), (4.0, 0.000_063_3), (4.5, 0.000_006_795_7)] {
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
