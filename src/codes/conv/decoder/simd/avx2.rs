//! AVX2 lanes: 8 `f32` or 16 `i16` path metrics per 256-bit register.

use super::kernel::{self, KernelScratch, Pass};
use super::lanes::{F32_SIGN_BITS, I16_SIGNS, Lanes};
use super::plan::Plan;
use std::arch::x86_64::*;

/// Eight `f32` metrics.
#[derive(Clone, Copy)]
pub(super) struct F32x8(__m256);

/// Branch metrics of labels 0..8 (`lo`) and, for n = 4, 8..16 (`hi`).
#[derive(Clone, Copy)]
pub(super) struct TableF32 {
    lo: __m256,
    hi: __m256,
    wide: bool,
}

/// Label per lane, and a sign-bit mask of the lanes whose label is 8 or more.
#[derive(Clone, Copy)]
pub(super) struct IndexF32 {
    label: __m256i,
    upper: __m256,
}

// SAFETY: every method uses AVX2 at most, and is compiled with it enabled.
unsafe impl Lanes for F32x8 {
    type Metric = f32;
    type Llr = f32;
    type Table = TableF32;
    type Index = IndexF32;
    type Mask = __m256;
    const WIDTH: usize = 8;

    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn index(labels: &[u8]) -> IndexF32 {
        let label: [i32; 8] = std::array::from_fn(|l| labels[l] as i32);
        let upper: [i32; 8] = std::array::from_fn(|l| if labels[l] >= 8 { i32::MIN } else { 0 });
        // SAFETY: both arrays hold the 8 lanes read.
        unsafe {
            IndexF32 {
                label: _mm256_loadu_si256(label.as_ptr().cast()),
                upper: _mm256_castsi256_ps(_mm256_loadu_si256(upper.as_ptr().cast())),
            }
        }
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn load(m: &[f32]) -> Self {
        let m = &m[..8];
        // SAFETY: `m` holds the 8 lanes read.
        F32x8(unsafe { _mm256_loadu_ps(m.as_ptr()) })
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn store(self, m: &mut [f32]) {
        let m = &mut m[..8];
        // SAFETY: `m` holds the 8 lanes written.
        unsafe { _mm256_storeu_ps(m.as_mut_ptr(), self.0) }
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn splat(x: f32) -> Self {
        F32x8(_mm256_set1_ps(x))
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn table(llrs: &[f32]) -> TableF32 {
        // SAFETY: each sign row holds 16 lanes, 8 are read.
        let sign = |g: usize| unsafe { _mm256_loadu_ps(F32_SIGN_BITS[g].as_ptr().cast()) };
        let term = |g: usize| _mm256_xor_ps(_mm256_set1_ps(llrs[g]), sign(g));
        // Label bits 0..3 live in the lanes; for n = 4 the last term is added
        // once positive (labels 0..8) and once negated (8..16), keeping the
        // reference's order of additions.
        let mut acc = term(0);
        for g in 1..llrs.len().min(3) {
            acc = _mm256_add_ps(acc, term(g));
        }
        match llrs.get(3) {
            Some(&last) => {
                let last = _mm256_set1_ps(last);
                let neg = _mm256_xor_ps(last, _mm256_set1_ps(-0.0));
                TableF32 { lo: _mm256_add_ps(acc, last), hi: _mm256_add_ps(acc, neg), wide: true }
            }
            None => TableF32 { lo: acc, hi: acc, wide: false },
        }
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn lookup(table: TableF32, index: IndexF32) -> Self {
        let lo = _mm256_permutevar8x32_ps(table.lo, index.label);
        if !table.wide {
            return F32x8(lo);
        }
        let hi = _mm256_permutevar8x32_ps(table.hi, index.label);
        F32x8(_mm256_blendv_ps(lo, hi, index.upper))
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn add(self, other: Self) -> Self {
        F32x8(_mm256_add_ps(self.0, other.0))
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn sub(self, other: Self) -> Self {
        F32x8(_mm256_sub_ps(self.0, other.0))
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn deinterleave(a: Self, b: Self) -> (Self, Self) {
        // In-lane shuffles give [a0 a2 b0 b2 | a4 a6 b4 b6]; one cross-lane
        // permute of 64-bit pairs puts the lanes in order.
        let order = |v: __m256| _mm256_castpd_ps(_mm256_permute4x64_pd::<0b11_01_10_00>(_mm256_castps_pd(v)));
        (
            F32x8(order(_mm256_shuffle_ps::<0b10_00_10_00>(a.0, b.0))),
            F32x8(order(_mm256_shuffle_ps::<0b11_01_11_01>(a.0, b.0))),
        )
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn select(even: Self, odd: Self) -> (Self, __m256) {
        // vmaxps(x, y) is `x > y ? x : y`, exactly the reference's choice
        // (ties, signed zeros and NaN included).
        (F32x8(_mm256_max_ps(odd.0, even.0)), _mm256_cmp_ps::<_CMP_GT_OQ>(odd.0, even.0))
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn decisions(lo: __m256, hi: __m256) -> u64 {
        (_mm256_movemask_ps(lo) as u32 | (_mm256_movemask_ps(hi) as u32) << 8) as u64
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn max(self, other: Self) -> Self {
        F32x8(_mm256_max_ps(self.0, other.0))
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn max_lane(self) -> f32 {
        let m = _mm_max_ps(_mm256_castps256_ps128(self.0), _mm256_extractf128_ps::<1>(self.0));
        let m = _mm_max_ps(m, _mm_movehl_ps(m, m));
        _mm_cvtss_f32(_mm_max_ss(m, _mm_movehdup_ps(m)))
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn has_nan(self) -> bool {
        _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_UNORD_Q>(self.0, self.0)) != 0
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn equal(self, x: f32) -> __m256 {
        _mm256_cmp_ps::<_CMP_EQ_OQ>(self.0, _mm256_set1_ps(x))
    }
}

/// Sixteen `i16` metrics.
#[derive(Clone, Copy)]
pub(super) struct I16x16(__m256i);

/// Branch metrics of labels 0..8 (`lo`) and, for n = 4, 8..16 (`hi`), each
/// repeated in both 128-bit halves for `vpshufb`.
#[derive(Clone, Copy)]
pub(super) struct TableI16 {
    lo: __m256i,
    hi: __m256i,
    wide: bool,
}

/// `vpshufb` controls picking each lane's label from `lo` and from `hi`; the
/// other table's bytes are zeroed (control bit 7).
#[derive(Clone, Copy)]
pub(super) struct IndexI16 {
    lo: __m256i,
    hi: __m256i,
}

/// `vpshufb` control gathering, in each 128-bit half, the even 16-bit lanes
/// into the low 8 bytes and the odd ones into the high 8.
const EVEN_ODD_BYTES: [u8; 32] = {
    let mut c = [0u8; 32];
    let mut i = 0;
    while i < 32 {
        let byte = i % 16;
        let word = if byte < 8 { 2 * (byte / 2) } else { 2 * ((byte - 8) / 2) + 1 };
        c[i] = (2 * word + byte % 2) as u8;
        i += 1;
    }
    c
};

// SAFETY: every method uses AVX2 at most, and is compiled with it enabled.
unsafe impl Lanes for I16x16 {
    type Metric = i16;
    type Llr = i8;
    type Table = TableI16;
    type Index = IndexI16;
    type Mask = __m256i;
    const WIDTH: usize = 16;

    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn index(labels: &[u8]) -> IndexI16 {
        let control = |upper: bool| -> [u8; 32] {
            std::array::from_fn(|b| {
                let label = labels[b / 2];
                let zero = if (label >= 8) == upper { 0 } else { 0x80 };
                (2 * (label & 7) + (b % 2) as u8) | zero
            })
        };
        let (lo, hi) = (control(false), control(true));
        // SAFETY: both arrays hold the 32 bytes read.
        unsafe {
            IndexI16 { lo: _mm256_loadu_si256(lo.as_ptr().cast()), hi: _mm256_loadu_si256(hi.as_ptr().cast()) }
        }
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn load(m: &[i16]) -> Self {
        let m = &m[..16];
        // SAFETY: `m` holds the 16 lanes read.
        I16x16(unsafe { _mm256_loadu_si256(m.as_ptr().cast()) })
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn store(self, m: &mut [i16]) {
        let m = &mut m[..16];
        // SAFETY: `m` holds the 16 lanes written.
        unsafe { _mm256_storeu_si256(m.as_mut_ptr().cast(), self.0) }
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn splat(x: i16) -> Self {
        I16x16(_mm256_set1_epi16(x))
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn table(llrs: &[i8]) -> TableI16 {
        let mut acc = _mm_setzero_si128();
        for (g, &llr) in llrs.iter().enumerate().take(3) {
            // SAFETY: each sign row holds 16 lanes, 8 are read.
            let sign = unsafe { _mm_loadu_si128(I16_SIGNS[g].as_ptr().cast()) };
            acc = _mm_add_epi16(acc, _mm_sign_epi16(_mm_set1_epi16(llr as i16), sign));
        }
        let wide = |v: __m128i| _mm256_broadcastsi128_si256(v);
        match llrs.get(3) {
            Some(&last) => {
                let last = _mm_set1_epi16(last as i16);
                TableI16 { lo: wide(_mm_add_epi16(acc, last)), hi: wide(_mm_sub_epi16(acc, last)), wide: true }
            }
            None => TableI16 { lo: wide(acc), hi: wide(acc), wide: false },
        }
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn lookup(table: TableI16, index: IndexI16) -> Self {
        let lo = _mm256_shuffle_epi8(table.lo, index.lo);
        if !table.wide {
            return I16x16(lo);
        }
        I16x16(_mm256_or_si256(lo, _mm256_shuffle_epi8(table.hi, index.hi)))
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn add(self, other: Self) -> Self {
        I16x16(_mm256_add_epi16(self.0, other.0))
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn sub(self, other: Self) -> Self {
        I16x16(_mm256_sub_epi16(self.0, other.0))
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn deinterleave(a: Self, b: Self) -> (Self, Self) {
        // SAFETY: the control array holds the 32 bytes read.
        let control = unsafe { _mm256_loadu_si256(EVEN_ODD_BYTES.as_ptr().cast()) };
        let (a, b) = (_mm256_shuffle_epi8(a.0, control), _mm256_shuffle_epi8(b.0, control));
        // 64-bit runs [a.even0-3 b.even0-3 | a.even4-7 b.even4-7] → in order.
        let order = |v: __m256i| _mm256_permute4x64_epi64::<0b11_01_10_00>(v);
        (I16x16(order(_mm256_unpacklo_epi64(a, b))), I16x16(order(_mm256_unpackhi_epi64(a, b))))
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn select(even: Self, odd: Self) -> (Self, __m256i) {
        (I16x16(_mm256_max_epi16(odd.0, even.0)), _mm256_cmpgt_epi16(odd.0, even.0))
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn decisions(lo: __m256i, hi: __m256i) -> u64 {
        // Saturating packs keep 0 / −1 per lane as bytes, half by half.
        let bytes = _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_packs_epi16(lo, hi));
        _mm256_movemask_epi8(bytes) as u32 as u64
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn max(self, other: Self) -> Self {
        I16x16(_mm256_max_epi16(self.0, other.0))
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn max_lane(self) -> i16 {
        let m = _mm_max_epi16(_mm256_castsi256_si128(self.0), _mm256_extracti128_si256::<1>(self.0));
        let m = _mm_max_epi16(m, _mm_srli_si128::<8>(m));
        let m = _mm_max_epi16(m, _mm_srli_si128::<4>(m));
        _mm_extract_epi16::<0>(_mm_max_epi16(m, _mm_srli_si128::<2>(m))) as i16
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn has_nan(self) -> bool {
        false
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn equal(self, x: i16) -> __m256i {
        _mm256_cmpeq_epi16(self.0, _mm256_set1_epi16(x))
    }
}

kernel::entry!(
    /// Forward pass with `f32` metrics on AVX2 (see [`kernel::forward`]).
    forward_f32, F32x8, "avx2"
);
kernel::entry!(
    /// Forward pass with `i16` metrics from `i8` LLRs on AVX2 (see [`kernel::forward`]).
    forward_i16, I16x16, "avx2"
);
