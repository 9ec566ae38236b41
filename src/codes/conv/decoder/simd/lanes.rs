//! The vector operations the Viterbi kernel is written in. Each instruction
//! set implements them once per metric type (`avx2.rs`, `avx512.rs`); the
//! kernel (`kernel.rs`) holds the one mapping of the trellis onto lanes.

use super::metric::KernelMetric;

/// `WIDTH` path metrics in one register and the operations add-compare-select
/// needs on them.
///
/// # Safety
/// Every method may use the instructions of the implementation's ISA level;
/// callers must have checked that the CPU has that level.
pub(super) unsafe trait Lanes: Copy {
    /// Path-metric element.
    type Metric: KernelMetric;
    /// LLR sample the branch metrics are built from.
    type Llr: Copy;
    /// One stage's branch metrics for every n-bit label, ready for lookups.
    type Table: Copy;
    /// Which label each lane looks up.
    type Index: Copy;
    /// One decision per lane: whether the odd predecessor won.
    type Mask: Copy;
    /// Metrics per vector.
    const WIDTH: usize;

    /// Index vector looking up label `labels[l]` (below 16) in lane `l`.
    unsafe fn index(labels: &[u8]) -> Self::Index;
    /// Load the first `WIDTH` metrics of `m`.
    unsafe fn load(m: &[Self::Metric]) -> Self;
    /// Store into the first `WIDTH` metrics of `m`.
    unsafe fn store(self, m: &mut [Self::Metric]);
    /// `x` in every lane.
    unsafe fn splat(x: Self::Metric) -> Self;
    /// Branch-metric table of one stage from its n LLRs, entry `sym` equal to
    /// `scalar::branch_metrics`' (for `f32`: the same additions in the same order).
    unsafe fn table(llrs: &[Self::Llr]) -> Self::Table;
    /// The branch metric of each lane's label.
    unsafe fn lookup(table: Self::Table, index: Self::Index) -> Self;
    /// Lane-wise `self + other`.
    unsafe fn add(self, other: Self) -> Self;
    /// Lane-wise `self - other`.
    unsafe fn sub(self, other: Self) -> Self;
    /// Lane `l` of the results holds lane `2l` (even) and `2l + 1` (odd) of
    /// `a` followed by `b`.
    unsafe fn deinterleave(a: Self, b: Self) -> (Self, Self);
    /// Survivor and decision per lane: `odd` where it is strictly greater than
    /// `even`, else `even` (the reference's tie-breaking).
    unsafe fn select(even: Self, odd: Self) -> (Self, Self::Mask);
    /// Decision bits: lane `l` of `lo` in bit `l`, of `hi` in bit `WIDTH + l`.
    unsafe fn decisions(lo: Self::Mask, hi: Self::Mask) -> u64;
    /// Lane-wise maximum of NaN-free vectors.
    unsafe fn max(self, other: Self) -> Self;
    /// The largest lane of a NaN-free vector.
    unsafe fn max_lane(self) -> Self::Metric;
    /// Whether any lane is NaN.
    unsafe fn has_nan(self) -> bool;
    /// The lanes equal to `x` (as a decision mask).
    unsafe fn equal(self, x: Self::Metric) -> Self::Mask;
}

/// Row `g`, entry `sym`: `minus` where LLR `g` enters the branch metric of
/// label `sym` negated (bit `g` of `sym` set), else `plus`.
const fn sign_rows<T: Copy>(plus: T, minus: T) -> [[T; 16]; 4] {
    let mut rows = [[plus; 16]; 4];
    let mut g = 0;
    while g < 4 {
        let mut sym = 0;
        while sym < 16 {
            if (sym >> g) & 1 == 1 {
                rows[g][sym] = minus;
            }
            sym += 1;
        }
        g += 1;
    }
    rows
}

/// The f32 sign bit where an LLR enters negated (`xor` operand).
pub(super) const F32_SIGN_BITS: [[u32; 16]; 4] = sign_rows(0, 1 << 31);

/// −1 where an LLR enters negated, else +1 (`psignw` operand).
pub(super) const I16_SIGNS: [[i16; 16]; 4] = sign_rows(1, -1);

/// Pair `p`, label `sym`: the signs of LLRs `2p` and `2p + 1` in label
/// `sym`'s branch metric, side by side (the operand of `vpmaddwd` against the
/// two LLRs as one 32-bit lane).
pub(super) const I16_SIGN_PAIRS: [[i16; 32]; 2] = {
    let mut pairs = [[0i16; 32]; 2];
    let mut p = 0;
    while p < 2 {
        let mut i = 0;
        while i < 32 {
            pairs[p][i] = I16_SIGNS[2 * p + i % 2][i / 2];
            i += 1;
        }
        p += 1;
    }
    pairs
};
