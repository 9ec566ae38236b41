//! AVX-512 lanes: 16 `f32` or 32 `i16` path metrics per 512-bit register
//! (AVX-512F, and AVX-512BW for the 16-bit lanes).

use super::kernel::{self, KernelScratch, Pass};
use super::lanes::{F32_SIGN_BITS, I16_SIGN_PAIRS, Lanes};
use super::plan::Plan;
use std::arch::x86_64::*;

/// Lane `l` of the even (odd) control: lane `2l` (`2l + 1`) of two vectors.
const fn deinterleave_controls<const W: usize>() -> [[u16; W]; 2] {
    let mut c = [[0u16; W]; 2];
    let mut l = 0;
    while l < W {
        c[0][l] = 2 * l as u16;
        c[1][l] = 2 * l as u16 + 1;
        l += 1;
    }
    c
}

const SPLIT_F32: [[u16; 16]; 2] = deinterleave_controls::<16>();
const SPLIT_I16: [[u16; 32]; 2] = deinterleave_controls::<32>();

/// Sixteen `f32` metrics.
#[derive(Clone, Copy)]
pub(super) struct F32x16(__m512);

// SAFETY: every method uses AVX-512F at most, and is compiled with it enabled.
unsafe impl Lanes for F32x16 {
    type Metric = f32;
    type Llr = f32;
    /// All 16 labels' branch metrics.
    type Table = __m512;
    type Index = __m512i;
    type Mask = __mmask16;
    const WIDTH: usize = 16;

    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn index(labels: &[u8]) -> __m512i {
        let label: [i32; 16] = std::array::from_fn(|l| labels[l] as i32);
        // SAFETY: the array holds the 16 lanes read.
        unsafe { _mm512_loadu_si512(label.as_ptr().cast()) }
    }

    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn load(m: &[f32]) -> Self {
        let m = &m[..16];
        // SAFETY: `m` holds the 16 lanes read.
        F32x16(unsafe { _mm512_loadu_ps(m.as_ptr()) })
    }

    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn store(self, m: &mut [f32]) {
        let m = &mut m[..16];
        // SAFETY: `m` holds the 16 lanes written.
        unsafe { _mm512_storeu_ps(m.as_mut_ptr(), self.0) }
    }

    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn splat(x: f32) -> Self {
        F32x16(_mm512_set1_ps(x))
    }

    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn table(llrs: &[f32]) -> __m512 {
        let mut acc = _mm512_setzero_ps();
        for (g, &llr) in llrs.iter().enumerate() {
            // SAFETY: each sign row holds the 16 lanes read.
            let sign = unsafe { _mm512_loadu_si512(F32_SIGN_BITS[g].as_ptr().cast()) };
            let term = _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(_mm512_set1_ps(llr)), sign));
            // The reference starts from term 0, not from 0 + term 0 (which
            // would turn a −0 into +0).
            acc = if g == 0 { term } else { _mm512_add_ps(acc, term) };
        }
        acc
    }

    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn lookup(table: __m512, index: __m512i) -> Self {
        F32x16(_mm512_permutexvar_ps(index, table))
    }

    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn add(self, other: Self) -> Self {
        F32x16(_mm512_add_ps(self.0, other.0))
    }

    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn sub(self, other: Self) -> Self {
        F32x16(_mm512_sub_ps(self.0, other.0))
    }

    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn deinterleave(a: Self, b: Self) -> (Self, Self) {
        // SAFETY: each control holds the 16 lanes read.
        let (even, odd) = unsafe {
            (_mm512_cvtepu16_epi32(_mm256_loadu_si256(SPLIT_F32[0].as_ptr().cast())),
             _mm512_cvtepu16_epi32(_mm256_loadu_si256(SPLIT_F32[1].as_ptr().cast())))
        };
        (F32x16(_mm512_permutex2var_ps(a.0, even, b.0)), F32x16(_mm512_permutex2var_ps(a.0, odd, b.0)))
    }

    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn select(even: Self, odd: Self) -> (Self, __mmask16) {
        // vmaxps(x, y) is `x > y ? x : y`, exactly the reference's choice.
        (F32x16(_mm512_max_ps(odd.0, even.0)), _mm512_cmp_ps_mask::<_CMP_GT_OQ>(odd.0, even.0))
    }

    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn decisions(lo: __mmask16, hi: __mmask16) -> u64 {
        lo as u64 | (hi as u64) << 16
    }

    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn max(self, other: Self) -> Self {
        F32x16(_mm512_max_ps(self.0, other.0))
    }

    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn max_lane(self) -> f32 {
        _mm512_reduce_max_ps(self.0)
    }

    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn has_nan(self) -> bool {
        _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(self.0, self.0) != 0
    }

    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn equal(self, x: f32) -> __mmask16 {
        _mm512_cmp_ps_mask::<_CMP_EQ_OQ>(self.0, _mm512_set1_ps(x))
    }
}

/// Thirty-two `i16` metrics.
#[derive(Clone, Copy)]
pub(super) struct I16x32(__m512i);

// SAFETY: every method uses AVX-512F/BW at most, and is compiled with them enabled.
unsafe impl Lanes for I16x32 {
    type Metric = i16;
    type Llr = i8;
    /// All 16 labels' branch metrics in the low 16 lanes.
    type Table = __m512i;
    type Index = __m512i;
    type Mask = __mmask32;
    const WIDTH: usize = 32;

    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn index(labels: &[u8]) -> __m512i {
        let label: [i16; 32] = std::array::from_fn(|l| labels[l] as i16);
        // SAFETY: the array holds the 32 lanes read.
        unsafe { _mm512_loadu_si512(label.as_ptr().cast()) }
    }

    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn load(m: &[i16]) -> Self {
        let m = &m[..32];
        // SAFETY: `m` holds the 32 lanes read.
        I16x32(unsafe { _mm512_loadu_si512(m.as_ptr().cast()) })
    }

    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn store(self, m: &mut [i16]) {
        let m = &mut m[..32];
        // SAFETY: `m` holds the 32 lanes written.
        unsafe { _mm512_storeu_si512(m.as_mut_ptr().cast(), self.0) }
    }

    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn splat(x: i16) -> Self {
        I16x32(_mm512_set1_epi16(x))
    }

    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn table(llrs: &[i8]) -> __m512i {
        // No loop over the LLRs: each pair of them, as one 32-bit lane, is
        // multiplied by its two signs per label and summed (vpmaddwd), exactly
        // in i32; the (at most two) pairs are added and narrowed to i16.
        let byte = |g: usize| llrs.get(g).map_or(0, |&l| l as u8 as i32) << (8 * g);
        let words = _mm_cvtepi8_epi16(_mm_cvtsi32_si128(byte(0) | byte(1) | byte(2) | byte(3)));
        // SAFETY: each pair row holds the 32 lanes read.
        let signs = |p: usize| unsafe { _mm512_loadu_si512(I16_SIGN_PAIRS[p].as_ptr().cast()) };
        let mut acc = _mm512_madd_epi16(_mm512_broadcastd_epi32(words), signs(0));
        if llrs.len() > 2 {
            acc = _mm512_add_epi32(acc, _mm512_madd_epi16(_mm512_broadcastd_epi32(_mm_srli_si128::<4>(words)), signs(1)));
        }
        _mm512_castsi256_si512(_mm512_cvtepi32_epi16(acc))
    }

    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn lookup(table: __m512i, index: __m512i) -> Self {
        I16x32(_mm512_permutexvar_epi16(index, table))
    }

    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn add(self, other: Self) -> Self {
        I16x32(_mm512_add_epi16(self.0, other.0))
    }

    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn sub(self, other: Self) -> Self {
        I16x32(_mm512_sub_epi16(self.0, other.0))
    }

    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn deinterleave(a: Self, b: Self) -> (Self, Self) {
        // SAFETY: each control holds the 32 lanes read.
        let (even, odd) = unsafe {
            (_mm512_loadu_si512(SPLIT_I16[0].as_ptr().cast()), _mm512_loadu_si512(SPLIT_I16[1].as_ptr().cast()))
        };
        (I16x32(_mm512_permutex2var_epi16(a.0, even, b.0)), I16x32(_mm512_permutex2var_epi16(a.0, odd, b.0)))
    }

    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn select(even: Self, odd: Self) -> (Self, __mmask32) {
        (I16x32(_mm512_max_epi16(odd.0, even.0)), _mm512_cmpgt_epi16_mask(odd.0, even.0))
    }

    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn decisions(lo: __mmask32, hi: __mmask32) -> u64 {
        lo as u64 | (hi as u64) << 32
    }

    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn max(self, other: Self) -> Self {
        I16x32(_mm512_max_epi16(self.0, other.0))
    }

    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn max_lane(self) -> i16 {
        let m = _mm256_max_epi16(_mm512_castsi512_si256(self.0), _mm512_extracti64x4_epi64::<1>(self.0));
        let m = _mm_max_epi16(_mm256_castsi256_si128(m), _mm256_extracti128_si256::<1>(m));
        let m = _mm_max_epi16(m, _mm_srli_si128::<8>(m));
        let m = _mm_max_epi16(m, _mm_srli_si128::<4>(m));
        _mm_extract_epi16::<0>(_mm_max_epi16(m, _mm_srli_si128::<2>(m))) as i16
    }

    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn has_nan(self) -> bool {
        false
    }

    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn equal(self, x: i16) -> __mmask32 {
        _mm512_cmpeq_epi16_mask(self.0, _mm512_set1_epi16(x))
    }
}

kernel::entry!(
    /// Forward pass with `f32` metrics on AVX-512F (see [`kernel::forward`]).
    forward_f32, F32x16, "avx512f"
);
kernel::entry!(
    /// Forward pass with `i16` metrics from `i8` LLRs on AVX-512BW (see [`kernel::forward`]).
    forward_i16, I16x32, "avx512f,avx512bw"
);
