//! The quadratic permutation polynomial (QPP) interleaver of the LTE turbo
//! code (3GPP TS 36.212 §5.1.3.2.3), its table of block sizes (Table
//! 5.1.3-3), and [`Interleaver`]: a QPP or any permutation read from a file.
//!
//! Convention, as in §5.1.3.2.3: the interleaver's output is
//! `c'_i = c_Π(i)`, so `Π(i)` names the input position read for output `i`.

use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use crate::codes::error::{CodeResult, invalid};

/// Smallest turbo code block size K of Table 5.1.3-3.
pub const MIN_BLOCK: usize = 40;
/// Largest turbo code block size K of Table 5.1.3-3 (Z of §5.1.2).
pub const MAX_BLOCK: usize = 6144;
/// Most positions an interleaver built here may have: 2^20, far above any
/// turbo block, and small enough that `f2·i²` of a QPP fits in a `u64`.
pub const MAX_INTERLEAVER_LEN: usize = 1 << 20;
/// Largest permutation file [`Interleaver::read_text`] opens: 16 MiB holds
/// [`MAX_INTERLEAVER_LEN`] indices of up to 7 digits with a separator each,
/// with room to spare.
pub const MAX_FILE_BYTES: u64 = 16 << 20;

/// Table 5.1.3-3 of TS 36.212: the 188 turbo code block sizes K with their
/// QPP parameters, as `(K, f1, f2)`, sorted by K. K runs from 40 to 512 in
/// steps of 8, to 1024 in steps of 16, to 2048 in steps of 32 and to 6144 in
/// steps of 64.
///
/// # Example
/// ```
/// use gpufec::codes::turbo::qpp::QPP_TABLE;
/// assert_eq!(QPP_TABLE[0], (40, 3, 10));
/// assert_eq!(QPP_TABLE[187], (6144, 263, 480));
/// ```
#[rustfmt::skip]
pub const QPP_TABLE: [(u16, u16, u16); 188] = [
    (40, 3, 10), (48, 7, 12), (56, 19, 42), (64, 7, 16),
    (72, 7, 18), (80, 11, 20), (88, 5, 22), (96, 11, 24),
    (104, 7, 26), (112, 41, 84), (120, 103, 90), (128, 15, 32),
    (136, 9, 34), (144, 17, 108), (152, 9, 38), (160, 21, 120),
    (168, 101, 84), (176, 21, 44), (184, 57, 46), (192, 23, 48),
    (200, 13, 50), (208, 27, 52), (216, 11, 36), (224, 27, 56),
    (232, 85, 58), (240, 29, 60), (248, 33, 62), (256, 15, 32),
    (264, 17, 198), (272, 33, 68), (280, 103, 210), (288, 19, 36),
    (296, 19, 74), (304, 37, 76), (312, 19, 78), (320, 21, 120),
    (328, 21, 82), (336, 115, 84), (344, 193, 86), (352, 21, 44),
    (360, 133, 90), (368, 81, 46), (376, 45, 94), (384, 23, 48),
    (392, 243, 98), (400, 151, 40), (408, 155, 102), (416, 25, 52),
    (424, 51, 106), (432, 47, 72), (440, 91, 110), (448, 29, 168),
    (456, 29, 114), (464, 247, 58), (472, 29, 118), (480, 89, 180),
    (488, 91, 122), (496, 157, 62), (504, 55, 84), (512, 31, 64),
    (528, 17, 66), (544, 35, 68), (560, 227, 420), (576, 65, 96),
    (592, 19, 74), (608, 37, 76), (624, 41, 234), (640, 39, 80),
    (656, 185, 82), (672, 43, 252), (688, 21, 86), (704, 155, 44),
    (720, 79, 120), (736, 139, 92), (752, 23, 94), (768, 217, 48),
    (784, 25, 98), (800, 17, 80), (816, 127, 102), (832, 25, 52),
    (848, 239, 106), (864, 17, 48), (880, 137, 110), (896, 215, 112),
    (912, 29, 114), (928, 15, 58), (944, 147, 118), (960, 29, 60),
    (976, 59, 122), (992, 65, 124), (1008, 55, 84), (1024, 31, 64),
    (1056, 17, 66), (1088, 171, 204), (1120, 67, 140), (1152, 35, 72),
    (1184, 19, 74), (1216, 39, 76), (1248, 19, 78), (1280, 199, 240),
    (1312, 21, 82), (1344, 211, 252), (1376, 21, 86), (1408, 43, 88),
    (1440, 149, 60), (1472, 45, 92), (1504, 49, 846), (1536, 71, 48),
    (1568, 13, 28), (1600, 17, 80), (1632, 25, 102), (1664, 183, 104),
    (1696, 55, 954), (1728, 127, 96), (1760, 27, 110), (1792, 29, 112),
    (1824, 29, 114), (1856, 57, 116), (1888, 45, 354), (1920, 31, 120),
    (1952, 59, 610), (1984, 185, 124), (2016, 113, 420), (2048, 31, 64),
    (2112, 17, 66), (2176, 171, 136), (2240, 209, 420), (2304, 253, 216),
    (2368, 367, 444), (2432, 265, 456), (2496, 181, 468), (2560, 39, 80),
    (2624, 27, 164), (2688, 127, 504), (2752, 143, 172), (2816, 43, 88),
    (2880, 29, 300), (2944, 45, 92), (3008, 157, 188), (3072, 47, 96),
    (3136, 13, 28), (3200, 111, 240), (3264, 443, 204), (3328, 51, 104),
    (3392, 51, 212), (3456, 451, 192), (3520, 257, 220), (3584, 57, 336),
    (3648, 313, 228), (3712, 271, 232), (3776, 179, 236), (3840, 331, 120),
    (3904, 363, 244), (3968, 375, 248), (4032, 127, 168), (4096, 31, 64),
    (4160, 33, 130), (4224, 43, 264), (4288, 33, 134), (4352, 477, 408),
    (4416, 35, 138), (4480, 233, 280), (4544, 357, 142), (4608, 337, 480),
    (4672, 37, 146), (4736, 71, 444), (4800, 71, 120), (4864, 37, 152),
    (4928, 39, 462), (4992, 127, 234), (5056, 39, 158), (5120, 39, 80),
    (5184, 31, 96), (5248, 113, 902), (5312, 41, 166), (5376, 251, 336),
    (5440, 43, 170), (5504, 21, 86), (5568, 43, 174), (5632, 45, 176),
    (5696, 45, 178), (5760, 161, 120), (5824, 89, 182), (5888, 323, 184),
    (5952, 47, 186), (6016, 23, 94), (6080, 47, 190), (6144, 263, 480),
];

/// Position in [`QPP_TABLE`] of the first K that is `>= k`.
fn first_at_least(k: usize) -> usize {
    QPP_TABLE.partition_point(|&(tk, _, _)| usize::from(tk) < k)
}

/// The QPP parameters `(f1, f2)` of block size `k`, or `None` where `k` is
/// not in Table 5.1.3-3.
///
/// # Example
/// ```
/// use gpufec::codes::turbo::qpp::qpp_params;
/// assert_eq!(qpp_params(6144), Some((263, 480)));
/// assert_eq!(qpp_params(41), None);
/// ```
pub fn qpp_params(k: usize) -> Option<(usize, usize)> {
    let &(tk, f1, f2) = QPP_TABLE.get(first_at_least(k))?;
    (usize::from(tk) == k).then_some((usize::from(f1), usize::from(f2)))
}

/// Whether `k` is one of the 188 turbo code block sizes.
pub fn is_block_size(k: usize) -> bool {
    qpp_params(k).is_some()
}

/// The 188 turbo code block sizes, smallest first.
pub fn block_sizes() -> impl Iterator<Item = usize> {
    QPP_TABLE.iter().map(|&(k, _, _)| usize::from(k))
}

/// The smallest block size `>= x`, or `None` above 6144: K+ of code block
/// segmentation (§5.1.2).
///
/// # Example
/// ```
/// use gpufec::codes::turbo::qpp::block_size_at_least;
/// assert_eq!(block_size_at_least(1), Some(40));
/// assert_eq!(block_size_at_least(513), Some(528));
/// assert_eq!(block_size_at_least(6145), None);
/// ```
pub fn block_size_at_least(x: usize) -> Option<usize> {
    QPP_TABLE.get(first_at_least(x)).map(|&(k, _, _)| usize::from(k))
}

/// The largest block size `< x`, or `None` at or below 40: K- of code block
/// segmentation (§5.1.2).
///
/// # Example
/// ```
/// use gpufec::codes::turbo::qpp::block_size_below;
/// assert_eq!(block_size_below(528), Some(512));
/// assert_eq!(block_size_below(40), None);
/// ```
pub fn block_size_below(x: usize) -> Option<usize> {
    let i = first_at_least(x).checked_sub(1)?;
    Some(usize::from(QPP_TABLE[i].0))
}

/// A quadratic permutation polynomial interleaver of K positions:
/// `Π(i) = (f1·i + f2·i²) mod K`. Built only where that is a permutation.
///
/// # Example
/// ```
/// use gpufec::codes::turbo::qpp::Qpp;
/// let q = Qpp::lte(40).unwrap();
/// assert_eq!((q.f1(), q.f2()), (3, 10));
/// assert_eq!(q.index(1), 13);
/// assert_eq!(&q.permutation()[..4], &[0, 13, 6, 19]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Qpp {
    k: usize,
    f1: usize,
    f2: usize,
}

impl Qpp {
    /// The interleaver of LTE block size `k`, parameters from Table 5.1.3-3.
    /// A `k` outside the table is refused with the nearest valid sizes.
    pub fn lte(k: usize) -> CodeResult<Self> {
        match qpp_params(k) {
            Some((f1, f2)) => Ok(Self { k, f1, f2 }),
            None => Err(invalid!("{}", not_a_block_size(k))),
        }
    }

    /// A QPP interleaver of any length `k` in `1..=`[`MAX_INTERLEAVER_LEN`]
    /// with `f1, f2 < k`; refused unless `Π` is a permutation of `0..k`
    /// (the error names two positions that `Π` sends to the same place).
    ///
    /// # Example
    /// ```
    /// use gpufec::codes::turbo::qpp::Qpp;
    /// assert!(Qpp::new(16, 3, 4).is_ok());
    /// assert!(Qpp::new(16, 2, 4).is_err()); // f1 even: Π(8) = Π(0)
    /// ```
    pub fn new(k: usize, f1: usize, f2: usize) -> CodeResult<Self> {
        if !(1..=MAX_INTERLEAVER_LEN).contains(&k) {
            return Err(invalid!("QPP length K={k} is outside 1..={MAX_INTERLEAVER_LEN}"));
        }
        if f1 >= k || f2 >= k {
            return Err(invalid!(
                "QPP parameters f1={f1}, f2={f2} must both be below K={k} (reduce them mod K)"
            ));
        }
        let qpp = Self { k, f1, f2 };
        match permutation_fault(&qpp.permutation()) {
            None => Ok(qpp),
            Some(m) => Err(invalid!("QPP K={k}, f1={f1}, f2={f2} is not a permutation: {m}")),
        }
    }

    /// Block length K.
    pub fn k(&self) -> usize {
        self.k
    }

    /// Linear coefficient f1.
    pub fn f1(&self) -> usize {
        self.f1
    }

    /// Quadratic coefficient f2.
    pub fn f2(&self) -> usize {
        self.f2
    }

    /// `Π(i)`, computed directly in `u64` (no overflow: `i, f2 < 2^20`).
    ///
    /// # Panics
    /// If `i >= K`.
    pub fn index(&self, i: usize) -> usize {
        assert!(i < self.k, "QPP index {i} out of range for K={}", self.k);
        let (i, k) = (i as u64, self.k as u64);
        ((self.f1 as u64 * i + self.f2 as u64 * i * i) % k) as usize
    }

    /// The whole permutation `[Π(0), …, Π(K-1)]`.
    pub fn permutation(&self) -> Vec<u32> {
        self.iter().collect()
    }

    /// `Π(0), Π(1), …` by the recursion `Π(i+1) = Π(i) + g(i)`,
    /// `g(i+1) = g(i) + 2·f2` (mod K), with `g(0) = f1 + f2`: additions and
    /// a compare per step instead of a division.
    fn iter(&self) -> impl Iterator<Item = u32> {
        let k = self.k as u32;
        // Both terms are below K ≤ 2^20, so their sum fits and one subtraction
        // reduces it.
        let add = move |a: u32, b: u32| if a + b >= k { a + b - k } else { a + b };
        let step = add(self.f2 as u32, self.f2 as u32);
        let mut state = (0u32, add(self.f1 as u32, self.f2 as u32));
        (0..self.k).map(move |_| {
            let (p, g) = state;
            state = (add(p, g), add(g, step));
            p
        })
    }
}

/// The message for a K outside Table 5.1.3-3, naming its nearest sizes.
fn not_a_block_size(k: usize) -> String {
    let base = format!("K={k} is not an LTE turbo block size (TS 36.212 Table 5.1.3-3)");
    match (block_size_below(k), block_size_at_least(k)) {
        (Some(lo), Some(hi)) => format!("{base}; the nearest are {lo} and {hi}"),
        (None, _) => format!("{base}; the smallest is {MIN_BLOCK}"),
        (_, None) => format!("{base}; the largest is {MAX_BLOCK}"),
    }
}

/// Where `perm` first fails to be a permutation of `0..perm.len()`: the
/// first entry out of range, or the first that repeats an earlier one.
fn permutation_fault(perm: &[u32]) -> Option<String> {
    let k = perm.len();
    let mut first_at = vec![u32::MAX; k];
    for (i, &p) in perm.iter().enumerate() {
        let Some(slot) = first_at.get_mut(p as usize) else {
            return Some(format!("Π({i}) = {p} is outside 0..{k}"));
        };
        if *slot != u32::MAX {
            return Some(format!("Π({slot}) = Π({i}) = {p}"));
        }
        *slot = i as u32;
    }
    None
}

/// Any interleaver of K positions, with the convention of the module: output
/// `i` reads input `index(i)`. Build a `Table` through
/// [`Interleaver::from_permutation`] or [`Interleaver::read_text`], which
/// check that it is a permutation.
///
/// # Example
/// ```
/// use gpufec::codes::turbo::qpp::{Interleaver, Qpp};
/// let q = Interleaver::Qpp(Qpp::lte(40).unwrap());
/// let t = Interleaver::from_permutation(q.permutation()).unwrap();
/// assert_eq!(t.len(), 40);
/// assert_eq!(t.index(2), q.index(2));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Interleaver {
    /// A quadratic permutation polynomial, computed on demand.
    Qpp(Qpp),
    /// An explicit permutation of `0..len`, shared between copies.
    Table(Arc<[u32]>),
}

impl From<Qpp> for Interleaver {
    fn from(qpp: Qpp) -> Self {
        Interleaver::Qpp(qpp)
    }
}

impl Interleaver {
    /// An explicit interleaver; refused unless `perm` holds every index of
    /// `0..perm.len()` exactly once, with `1 <= len <=`
    /// [`MAX_INTERLEAVER_LEN`]. The error names the first entry out of range
    /// or repeated.
    pub fn from_permutation(perm: Vec<u32>) -> CodeResult<Self> {
        let k = perm.len();
        if !(1..=MAX_INTERLEAVER_LEN).contains(&k) {
            return Err(invalid!(
                "an interleaver needs 1..={MAX_INTERLEAVER_LEN} entries, got {k}"
            ));
        }
        match permutation_fault(&perm) {
            None => Ok(Interleaver::Table(perm.into())),
            Some(m) => Err(invalid!("not a permutation: {m}")),
        }
    }

    /// Reads a permutation from a text file of decimal indices separated by
    /// whitespace and/or commas, entry 0 first, then checks it as
    /// [`Interleaver::from_permutation`] does. Files over
    /// [`MAX_FILE_BYTES`] and lists over [`MAX_INTERLEAVER_LEN`] entries are
    /// refused before they are read or stored whole.
    pub fn read_text(path: &Path) -> CodeResult<Self> {
        let shown = path.display();
        let too_big = |size: u64| {
            invalid!(
                "interleaver file {shown} has {size} bytes, more than the {MAX_FILE_BYTES} accepted"
            )
        };
        let size = std::fs::metadata(path)
            .map_err(|e| invalid!("cannot open interleaver file {shown}: {e}"))?
            .len();
        if size > MAX_FILE_BYTES {
            return Err(too_big(size));
        }
        // The size said nothing for a device or a pipe, and a file may grow
        // after it was asked: the read itself stops past the limit.
        let mut text = String::new();
        std::fs::File::open(path)
            .and_then(|f| f.take(MAX_FILE_BYTES + 1).read_to_string(&mut text))
            .map_err(|e| invalid!("cannot read interleaver file {shown}: {e}"))?;
        if text.len() as u64 > MAX_FILE_BYTES {
            return Err(too_big(text.len() as u64));
        }
        let mut perm = Vec::new();
        for (line_no, line) in text.lines().enumerate() {
            let words = line.split(|c: char| c == ',' || c.is_whitespace());
            for word in words.filter(|w| !w.is_empty()) {
                let n = perm.len();
                if n == MAX_INTERLEAVER_LEN {
                    return Err(invalid!(
                        "interleaver file {shown} has more than {MAX_INTERLEAVER_LEN} entries"
                    ));
                }
                let value = word.parse::<u32>().map_err(|_| {
                    invalid!(
                        "interleaver file {shown}, line {}: entry {n} '{word}' is not a decimal index",
                        line_no + 1
                    )
                })?;
                perm.push(value);
            }
        }
        if perm.is_empty() {
            return Err(invalid!("interleaver file {shown} holds no entries"));
        }
        match permutation_fault(&perm) {
            None => Ok(Interleaver::Table(perm.into())),
            Some(m) => Err(invalid!("interleaver file {shown} is not a permutation: {m}")),
        }
    }

    /// Number of positions K.
    // An interleaver is never empty, so an `is_empty` would always say false.
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> usize {
        match self {
            Interleaver::Qpp(q) => q.k(),
            Interleaver::Table(t) => t.len(),
        }
    }

    /// `Π(i)`: the input position that output `i` reads.
    ///
    /// # Panics
    /// If `i >= len()`.
    pub fn index(&self, i: usize) -> usize {
        match self {
            Interleaver::Qpp(q) => q.index(i),
            Interleaver::Table(t) => t[i] as usize,
        }
    }

    /// The whole permutation `[Π(0), …, Π(K-1)]`.
    pub fn permutation(&self) -> Vec<u32> {
        match self {
            Interleaver::Qpp(q) => q.permutation(),
            Interleaver::Table(t) => t.to_vec(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// Whether `perm` holds each of `0..perm.len()` exactly once, by a
    /// seen-bitmap independent of the checker under test.
    fn is_permutation(perm: &[u32]) -> bool {
        let mut seen = vec![false; perm.len()];
        for &p in perm {
            match seen.get_mut(p as usize) {
                Some(s) if !*s => *s = true,
                _ => return false,
            }
        }
        true
    }

    fn gcd(a: usize, b: usize) -> usize {
        if b == 0 { a } else { gcd(b, a % b) }
    }

    /// A file under the temp dir, unique to this test process and `tag`.
    fn temp_file(tag: &str, contents: &[u8]) -> PathBuf {
        let path =
            std::env::temp_dir().join(format!("gpufec-qpp-{}-{tag}.txt", std::process::id()));
        std::fs::write(&path, contents).unwrap();
        path
    }

    fn message(e: crate::codes::error::CodeError) -> String {
        e.to_string()
    }

    #[test]
    fn table_has_188_sorted_sizes_in_the_published_steps() {
        assert_eq!(QPP_TABLE.len(), 188);
        let ks: Vec<usize> = block_sizes().collect();
        assert_eq!((ks[0], ks[187]), (MIN_BLOCK, MAX_BLOCK));
        for w in ks.windows(2) {
            let step = match w[0] {
                40..512 => 8,
                512..1024 => 16,
                1024..2048 => 32,
                _ => 64,
            };
            assert_eq!(w[1] - w[0], step, "step after K={}", w[0]);
        }
        let count = |lo: usize, hi: usize| ks.iter().filter(|&&k| lo <= k && k <= hi).count();
        assert_eq!(count(40, 512), 60);
        assert_eq!(count(528, 1024), 32);
        assert_eq!(count(1056, 2048), 32);
        assert_eq!(count(2112, 6144), 64);
    }

    #[test]
    fn every_table_entry_is_a_permutation() {
        for &(k, f1, f2) in &QPP_TABLE {
            let q = Qpp::lte(usize::from(k)).unwrap();
            assert_eq!((q.f1(), q.f2()), (usize::from(f1), usize::from(f2)));
            let perm = q.permutation();
            assert_eq!(perm.len(), usize::from(k));
            assert!(is_permutation(&perm), "K={k}");
            // The recursion of `permutation` against the direct formula.
            for (i, &p) in perm.iter().enumerate() {
                assert_eq!(p as usize, q.index(i), "K={k}, i={i}");
            }
        }
    }

    /// For K divisible by 4 (all table sizes), `f1·x + f2·x²` permutes
    /// `0..K` exactly when f1 is coprime with K and every prime factor of K
    /// divides f2 (Sun and Takeshita, 2005): a check of the numbers that
    /// does not go through the interleaver at all.
    #[test]
    fn every_table_entry_meets_the_qpp_criterion() {
        for &(k, f1, f2) in &QPP_TABLE {
            let (k, f1, f2) = (usize::from(k), usize::from(f1), usize::from(f2));
            assert_eq!(k % 4, 0);
            assert_eq!(gcd(f1, k), 1, "K={k}: f1={f1} shares a factor with K");
            let primes = (2..=k).filter(|&p| k % p == 0 && (2..p).all(|d| p % d != 0));
            for p in primes {
                assert_eq!(f2 % p, 0, "K={k}: prime {p} of K does not divide f2={f2}");
            }
        }
    }

    /// Sums over the table as transcribed from three published copies of
    /// Table 5.1.3-3 (which agree entry for entry): a guard against an
    /// edit that keeps every row a permutation.
    #[test]
    fn table_matches_published_checksums() {
        let f1: usize = QPP_TABLE.iter().map(|&(_, f1, _)| usize::from(f1)).sum();
        let f2: usize = QPP_TABLE.iter().map(|&(_, _, f2)| usize::from(f2)).sum();
        let weighted: usize = QPP_TABLE
            .iter()
            .enumerate()
            .map(|(i, &(_, f1, f2))| i * usize::from(f1) + 7 * i * usize::from(f2))
            .sum();
        assert_eq!((f1, f2, weighted), (17068, 28162, 25083520));
    }

    #[test]
    fn hand_computed_values() {
        // K=40: Π(i) = (3i + 10i²) mod 40.
        let q = Qpp::lte(40).unwrap();
        let want = [(0, 0), (1, 13), (2, 6), (3, 19), (4, 12), (5, 25), (39, 7)];
        for (i, p) in want {
            assert_eq!(q.index(i), p, "K=40, i={i}");
        }
        // K=6144: Π(i) = (263i + 480i²) mod 6144; Π(6143) = Π(-1) = 480 - 263.
        let q = Qpp::lte(6144).unwrap();
        let want = [(1, 743), (2, 2446), (100, 3260), (6143, 217)];
        for (i, p) in want {
            assert_eq!(q.index(i), p, "K=6144, i={i}");
        }
    }

    #[test]
    fn size_lookups() {
        assert!(is_block_size(40) && is_block_size(6144) && is_block_size(1056));
        assert!(!is_block_size(0) && !is_block_size(1040) && !is_block_size(6208));
        assert_eq!(qpp_params(39), None);
        assert_eq!(qpp_params(40), Some((3, 10)));
        assert_eq!(block_size_at_least(0), Some(40));
        assert_eq!(block_size_at_least(40), Some(40));
        assert_eq!(block_size_at_least(1025), Some(1056));
        assert_eq!(block_size_at_least(6144), Some(6144));
        assert_eq!(block_size_at_least(6145), None);
        assert_eq!(block_size_below(41), Some(40));
        assert_eq!(block_size_below(3136), Some(3072));
        assert_eq!(block_size_below(usize::MAX), Some(6144));
        assert_eq!(block_size_below(0), None);
    }

    #[test]
    fn lte_refuses_sizes_outside_the_table() {
        let m = message(Qpp::lte(41).unwrap_err());
        assert!(m.contains("K=41") && m.contains("40") && m.contains("48"), "{m}");
        let m = message(Qpp::lte(0).unwrap_err());
        assert!(m.contains("smallest is 40"), "{m}");
        let m = message(Qpp::lte(7000).unwrap_err());
        assert!(m.contains("largest is 6144"), "{m}");
    }

    #[test]
    fn new_checks_the_permutation() {
        assert_eq!(Qpp::new(40, 3, 10).unwrap(), Qpp::lte(40).unwrap());
        assert!(Qpp::new(1, 0, 0).is_ok());
        // K=10 = 2·5, 2 ∥ K: f1 + f2 odd and 5 | f2 is enough.
        let q = Qpp::new(10, 1, 0).unwrap();
        assert_eq!(q.permutation(), (0..10).collect::<Vec<u32>>());
        let m = message(Qpp::new(40, 2, 10).unwrap_err());
        assert!(m.contains("not a permutation") && m.contains("Π(1) = Π(6) = 12"), "{m}");
        assert!(Qpp::new(40, 3, 3).is_err()); // 2 ∤ f2
        assert!(Qpp::new(0, 0, 0).is_err());
        assert!(Qpp::new(MAX_INTERLEAVER_LEN + 1, 1, 0).is_err());
        assert!(Qpp::new(40, 40, 0).is_err());
        assert!(Qpp::new(40, 3, 50).is_err());
        // The largest length computes Π without overflow.
        let q = Qpp::new(MAX_INTERLEAVER_LEN, 1, 2).unwrap();
        // Π(-1) = -f1 + f2.
        assert_eq!(q.index(MAX_INTERLEAVER_LEN - 1), 1);
    }

    #[test]
    #[should_panic(expected = "out of range")]
    fn index_past_k_panics() {
        Qpp::lte(40).unwrap().index(40);
    }

    #[test]
    fn interleaver_from_permutation() {
        let q = Qpp::lte(1056).unwrap();
        let t = Interleaver::from_permutation(q.permutation()).unwrap();
        let iq = Interleaver::from(q);
        assert_eq!(t.len(), iq.len());
        assert!((0..1056).all(|i| t.index(i) == iq.index(i)));
        assert_eq!(t.permutation(), iq.permutation());

        let m = message(Interleaver::from_permutation(vec![2, 0, 2]).unwrap_err());
        assert!(m.contains("Π(0) = Π(2) = 2"), "{m}");
        let m = message(Interleaver::from_permutation(vec![0, 3, 1]).unwrap_err());
        assert!(m.contains("Π(1) = 3 is outside 0..3"), "{m}");
        assert!(Interleaver::from_permutation(vec![]).is_err());
        assert!(Interleaver::from_permutation(vec![0]).is_ok());
    }

    #[test]
    fn read_text_accepts_whitespace_and_commas() {
        let path = temp_file("good", b"3, 0,2\n\t1 ,4\r\n\n");
        let t = Interleaver::read_text(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(t.permutation(), vec![3, 0, 2, 1, 4]);
    }

    #[test]
    fn read_text_refuses_bad_files() {
        let missing = std::env::temp_dir().join("gpufec-qpp-no-such-file.txt");
        let m = message(Interleaver::read_text(&missing).unwrap_err());
        assert!(m.contains("cannot open"), "{m}");

        let cases: [(&str, &[u8], &str); 4] = [
            ("word", b"0 1\n2 x3 4", "line 2: entry 3 'x3'"),
            ("negative", b"0 -1", "entry 1 '-1'"),
            ("repeat", b"0 1 1", "Π(1) = Π(2) = 1"),
            ("empty", b" ,\n", "no entries"),
        ];
        for (tag, contents, want) in cases {
            let path = temp_file(tag, contents);
            let m = message(Interleaver::read_text(&path).unwrap_err());
            std::fs::remove_file(&path).unwrap();
            assert!(m.contains(want), "{tag}: {m}");
        }

        let too_many = "0\n".repeat(MAX_INTERLEAVER_LEN + 1);
        let path = temp_file("many", too_many.as_bytes());
        let m = message(Interleaver::read_text(&path).unwrap_err());
        std::fs::remove_file(&path).unwrap();
        assert!(m.contains("more than 1048576 entries"), "{m}");

        // A sparse file: its size is refused before anything is read.
        let path = temp_file("huge", b"");
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(MAX_FILE_BYTES + 1)
            .unwrap();
        let m = message(Interleaver::read_text(&path).unwrap_err());
        std::fs::remove_file(&path).unwrap();
        assert!(m.contains("bytes, more than"), "{m}");
    }

    /// A device reports size 0; the read still stops past the limit.
    #[cfg(target_os = "linux")]
    #[test]
    fn read_text_stops_an_endless_file() {
        let m = message(Interleaver::read_text(Path::new("/dev/zero")).unwrap_err());
        assert!(m.contains("bytes, more than"), "{m}");
    }
}
