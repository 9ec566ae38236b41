//! Rate matching for turbo-coded transport channels (3GPP TS 36.212
//! §5.1.4.1) and its inverse.
//!
//! The three streams `[d0 | d1 | d2]` of a code block (D = K + 4 bits each)
//! pass the sub-block interleaver (§5.1.4.1.1), are collected into the
//! circular buffer w (§5.1.4.1.2) and E bits are read from it starting at
//! k0, skipping `<NULL>` entries and wrapping around as often as needed.
//!
//! All of that depends only on (K, F, E, rv, N_cb), never on the bits, so
//! [`RateMatch`] works it out once as a map: output bit e carries coded bit
//! `indices()[e]` of `[d0 | d1 | d2]`. Selection is then a gather and
//! de-rate-matching a scatter-add, the same map on the CPU and on a GPU.

use super::qpp::MAX_BLOCK;
use crate::codes::bits::first_non_bit;
use crate::codes::error::{CodeError, CodeResult, invalid};
use crate::codes::llr::{Llr, check_finite};

/// Columns of the sub-block interleaver (C_TC of §5.1.4.1.1).
const COLUMNS: usize = 32;

/// Inter-column permutation pattern of the sub-block interleaver (table
/// 5.1.4-1): column j of the permuted matrix is column `P[j]` of the written
/// one.
const COLUMN_PERMUTATION: [usize; COLUMNS] = [
    0, 16, 8, 24, 4, 20, 12, 28, 2, 18, 10, 26, 6, 22, 14, 30, 1, 17, 9, 25, 5, 21, 13, 29, 3, 19, 11, 27, 7, 23, 15,
    31,
];

/// Largest number of rate-matched bits E accepted: 2²². One LTE transport
/// block in a subframe (100 PRBs, 4 layers, 1024-QAM) has fewer than 700 000
/// coded bits, so this leaves room for any real E while keeping a mistaken one
/// from allocating more than the 16 MiB its index map then takes.
pub const MAX_E: usize = 1 << 22;

/// Marks a position of the layout that no transmitted bit carries, in
/// [`RateMatch::first_sent`].
pub const NOT_SENT: u32 = u32::MAX;

/// Marks a known zero (see [`RateMatch::known_zeros`]) in
/// [`RateMatch::gather_table`].
pub const KNOWN_ZERO: u32 = u32::MAX - 1;

/// The rate matching of one code block: which coded bit each of the E
/// transmitted bits carries.
///
/// Coded bits are laid out as `[d0 | d1 | d2]` (see [`crate::codes::turbo`]),
/// 3·(K + 4) of them. The first F bits of d0 and of d1 are filler (`<NULL>` in
/// the standard) and are never sent. The encoder starts in the all-zero state
/// and the filler inputs are 0, so both the filler bits and the first F
/// parity bits of d1 are known zeros: the decoder should put a confident
/// "bit 0" there itself (positions `0..filler()` and `D..D + filler()`).
///
/// # Example
/// ```
/// use gpufec::codes::turbo::rate_match::RateMatch;
/// // A 40-bit block at about rate 1/2, first transmission (rv 0).
/// let rm = RateMatch::new(40, 0, 80, 0, None).unwrap();
/// assert_eq!(rm.coded_len(), 132);
/// let coded = vec![1u8; rm.coded_len()];
/// let mut sent = Vec::new();
/// rm.select(&coded, &mut sent).unwrap();
/// assert_eq!(sent.len(), 80);
///
/// // The receiver scatters the LLRs back; the 52 punctured bits stay 0.
/// let llrs = vec![-2.0f32; 80];
/// let mut soft = vec![0.0; rm.coded_len()];
/// rm.combine(&llrs, &mut soft).unwrap();
/// assert_eq!(soft.iter().filter(|&&l| l == -2.0).count(), 80);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RateMatch {
    k: usize,
    filler: usize,
    rv: u8,
    ncb: usize,
    k0: usize,
    indices: Vec<u32>,
    /// Distinct coded bits among the E sent.
    carried: usize,
    /// Distinct information bits of d0 (F..K) among the E sent.
    systematic: usize,
}

impl RateMatch {
    /// The rate matching of a block of `k` information bits (filler
    /// included) whose first `filler` bits are filler, sending `e` bits with
    /// redundancy version `rv`.
    ///
    /// `ncb` is N_cb, the part of the circular buffer the receiver can keep
    /// (limited-buffer rate matching of DL-SCH: N_cb = min(⌊N_IR/C⌋, K_w)).
    /// Only the first N_cb entries of w are ever sent, wrapping at N_cb
    /// instead of K_w. `None` means the whole buffer, N_cb = K_w = 3·K_Π
    /// (UL-SCH, PCH, MCH); otherwise 1 ≤ N_cb ≤ K_w, and those entries must
    /// hold at least one bit that is neither dummy nor filler.
    ///
    /// E may be anything from 1 to [`MAX_E`]: more bits than the buffer
    /// holds repeat it, fewer puncture it. Puncturing is legal even below K
    /// (LTE sends code rates up to about 0.93, and rv 0 always skips the
    /// systematic bits among the 2R entries before k0 unless E wraps
    /// around), so `new` does not
    /// ask whether the block can still be decoded; [`Self::check_decodable`]
    /// does.
    ///
    /// Errors: K outside 1..=[`MAX_BLOCK`], F ≥ K, rv above 3, E outside
    /// 1..=[`MAX_E`], or an N_cb as above. All are checked before the
    /// E-long map is allocated.
    pub fn new(k: usize, filler: usize, e: usize, rv: u8, ncb: Option<usize>) -> CodeResult<Self> {
        if k == 0 {
            return Err(invalid!("K 0: a turbo code block holds at least one bit"));
        }
        if k > MAX_BLOCK {
            return Err(invalid!(
                "K {k}: above {MAX_BLOCK}, the largest LTE turbo code block (Z of TS 36.212 §5.1.2); segment the transport block first"
            ));
        }
        if filler >= k {
            return Err(invalid!("{filler} filler bits in a block of K {k}: there must be fewer filler bits than K"));
        }
        if rv > 3 {
            return Err(invalid!("rv {rv}: the redundancy version is 0..=3"));
        }
        if e == 0 {
            return Err(invalid!("E 0: rate matching must send at least one bit"));
        }
        if e > MAX_E {
            return Err(invalid!("E {e}: above {MAX_E}, more than any LTE transport block's coded bits"));
        }
        let sub = SubBlock::new(k + 4, filler);
        let kw = 3 * sub.len();
        let ncb = match ncb {
            None => kw,
            Some(n) if (1..=kw).contains(&n) => n,
            Some(n) => {
                return Err(invalid!(
                    "N_cb {n}: the soft buffer of K {k} holds 1..={kw} bits (K_w = 3·K_Π = 3·{})",
                    sub.len()
                ));
            }
        };
        let k0 = sub.rows * (2 * ncb.div_ceil(8 * sub.rows) * usize::from(rv) + 2);
        // k0 may exceed a small N_cb; the standard reads w at (k0 + j) mod N_cb.
        let window: Vec<u32> = (0..ncb).filter_map(|j| sub.entry((k0 + j) % ncb)).collect();
        if window.is_empty() {
            return Err(invalid!(
                "N_cb {ncb}: the first {ncb} entries of the circular buffer of K {k} are all <NULL> (dummy or filler), so there is no bit to send"
            ));
        }
        let mut indices = Vec::with_capacity(e);
        indices.extend(window.iter().copied().cycle().take(e));
        // What `gather` reads without bounds checks rests on this.
        assert!(indices.iter().all(|&i| (i as usize) < 3 * (k + 4)), "a rate-matching index past the layout");
        // Window entries are distinct coded bits, so the first min(E, window)
        // of them are exactly the distinct bits sent.
        let carried = e.min(window.len());
        let systematic = window[..carried].iter().filter(|&&i| (i as usize) < k).count();
        Ok(Self { k, filler, rv, ncb, k0, indices, carried, systematic })
    }

    /// For each transmitted bit, in order, its index in `[d0 | d1 | d2]`
    /// (below [`Self::coded_len`], never a filler position).
    pub fn indices(&self) -> &[u32] {
        &self.indices
    }

    /// E, the number of transmitted bits.
    pub fn e(&self) -> usize {
        self.indices.len()
    }

    /// K, the information bits of the block (filler included).
    pub fn k(&self) -> usize {
        self.k
    }

    /// F, the filler bits at the start of the block. Positions `0..F` of d0
    /// and of d1 are never sent and are known to be 0.
    pub fn filler(&self) -> usize {
        self.filler
    }

    /// The redundancy version, 0..=3.
    pub fn rv(&self) -> u8 {
        self.rv
    }

    /// N_cb, the length of the circular buffer that is read.
    pub fn ncb(&self) -> usize {
        self.ncb
    }

    /// k0 = R·(2·⌈N_cb/(8R)⌉·rv + 2), the buffer position the reading starts
    /// at, taken mod N_cb (k0 ≤ 3·N_cb/4 + 8R, so the wrap happens only for
    /// N_cb below K_Π).
    pub fn k0(&self) -> usize {
        self.k0
    }

    /// 3·(K + 4), the length of the `[d0 | d1 | d2]` layout.
    pub fn coded_len(&self) -> usize {
        3 * (self.k + 4)
    }

    /// How many distinct coded bits the E transmitted bits carry: E, or,
    /// when E repeats the buffer, its entries that are not `<NULL>`.
    pub fn carried(&self) -> usize {
        self.carried
    }

    /// For each of the 3·(K + 4) positions of the layout, the first
    /// transmitted bit that carries it, or [`NOT_SENT`]. The bits that carry
    /// a position are that one and every [`Self::carried`]-th after it
    /// below E (E beyond the buffer's window of distinct bits repeats the
    /// window), so de-rate-matching can gather, each position summing its
    /// own LLRs in the order [`Self::combine`] adds them, instead of
    /// scatter-adding: what a GPU does as it loads a code block.
    pub fn first_sent(&self) -> Vec<u32> {
        let mut first = vec![NOT_SENT; self.coded_len()];
        for (e, &i) in self.indices[..self.carried].iter().enumerate() {
            first[i as usize] = e as u32;
        }
        first
    }

    /// [`Self::first_sent`] with the known zeros marked [`KNOWN_ZERO`]:
    /// what a GPU reads to de-rate-match by gathering as it loads a code
    /// block, each position adding its own LLRs in [`Self::combine`]'s order.
    pub fn gather_table(&self) -> Vec<u32> {
        let mut table = self.first_sent();
        for z in self.known_zeros() {
            table[z].fill(KNOWN_ZERO);
        }
        table
    }

    /// The positions of the known zeros in the layout: the filler bits of
    /// d0 and the parity bits of d1 the encoder makes of them (see the type's
    /// documentation).
    pub fn known_zeros(&self) -> [std::ops::Range<usize>; 2] {
        let d = self.k + 4;
        [0..self.filler, d..d + self.filler]
    }

    /// How many distinct information bits of d0 (positions F..K) are sent.
    /// Below K − F even at moderate rates: rv 0 starts after the first two
    /// columns of the systematic sub-block.
    pub fn systematic_carried(&self) -> usize {
        self.systematic
    }

    /// Check that the transmission can be decoded at all: the E bits must
    /// carry at least K − F distinct coded bits, or the code rate is above 1
    /// and even a noiseless channel leaves the block ambiguous.
    ///
    /// Sending every systematic bit is not required (LTE punctures some at
    /// every rate where rv 0 does not wrap around); see
    /// [`Self::systematic_carried`] for callers who want that stricter rule.
    ///
    /// # Example
    /// ```
    /// use gpufec::codes::turbo::rate_match::RateMatch;
    /// assert!(RateMatch::new(1024, 0, 3000, 0, None).unwrap().check_decodable().is_ok());
    /// assert!(RateMatch::new(1024, 0, 500, 0, None).unwrap().check_decodable().is_err());
    /// ```
    pub fn check_decodable(&self) -> CodeResult<()> {
        let information = self.k - self.filler;
        if self.carried >= information {
            return Ok(());
        }
        Err(invalid!(
            "E {} sends {} distinct coded bits ({} of them systematic) for K {} with {} filler bits: fewer than its {information} information bits, so no decoder can recover them",
            self.e(),
            self.carried,
            self.systematic,
            self.k,
            self.filler
        ))
    }

    /// Rate-match `coded`, the 3·(K + 4) bits `[d0 | d1 | d2]` (one bit per
    /// byte, filler positions ignored), appending the E transmitted bits to
    /// `out`. A wrong length or a value other than 0 or 1 is an error and
    /// nothing is appended.
    pub fn select(&self, coded: &[u8], out: &mut Vec<u8>) -> CodeResult<()> {
        self.check_coded_len(coded.len(), "coded bits")?;
        if let Some(i) = first_non_bit(coded) {
            return Err(invalid!("coded bit at index {i} is {}, not 0 or 1", coded[i]));
        }
        let at = out.len();
        out.resize(at + self.e(), 0);
        self.gather(coded, &mut out[at..]);
        Ok(())
    }

    /// [`Self::select`] into `out` (E entries) for coded bits the encoder
    /// just made, unchecked: the transport chain's inner loop.
    pub(super) fn gather(&self, coded: &[u8], out: &mut [u8]) {
        assert_eq!((coded.len(), out.len()), (self.coded_len(), self.e()));
        // Without a bounds check per bit: this gather is a sixth of the
        // transport-block transmit side's time otherwise.
        for (o, &i) in out.iter_mut().zip(&self.indices) {
            // SAFETY: every index is below `coded_len` (asserted in `new`),
            // which is `coded.len()` (asserted above).
            *o = unsafe { *coded.get_unchecked(i as usize) };
        }
    }

    /// De-rate-match: set `out` (3·(K + 4) entries, the `[d0 | d1 | d2]`
    /// layout) to the sum of the received `llrs` (E of them) at the positions
    /// they were sent from, 0 plus each in the order sent ([`Llr::plus`]:
    /// `i8` saturates at every step). Repeated bits add up (soft combining);
    /// punctured bits and filler stay 0, which is "unknown" for punctured
    /// bits but not for filler: see [`Self::filler`].
    ///
    /// To combine several transmissions (HARQ), call this per transmission
    /// into scratch buffers and add them. A wrong length or a NaN or infinite
    /// LLR is an error and `out` is left as it was.
    pub fn combine<T: Llr>(&self, llrs: &[T], out: &mut [T]) -> CodeResult<()> {
        if llrs.len() != self.e() {
            return Err(CodeError::LengthMismatch(format!(
                "{} LLRs for a rate matching that sends E {} bits",
                llrs.len(),
                self.e()
            )));
        }
        self.check_coded_len(out.len(), "LLR outputs")?;
        check_finite(llrs)?;
        self.scatter(llrs, out, |l| l);
        Ok(())
    }

    /// [`Self::combine`] unchecked, each LLR converted by `to` before it is
    /// added, for callers that checked the lengths and the LLRs already.
    pub(super) fn scatter<T: Llr, L: Llr>(&self, llrs: &[T], out: &mut [L], to: impl Fn(T) -> L) {
        out.fill(L::default());
        for (&i, &l) in self.indices.iter().zip(llrs) {
            let o = &mut out[i as usize];
            *o = o.plus(to(l));
        }
    }

    /// Whether some coded bit is sent more than once (E beyond the distinct
    /// bits the buffer holds): its sum can then outgrow an `i8` LLR.
    pub fn repeats(&self) -> bool {
        self.e() > self.carried
    }

    fn check_coded_len(&self, len: usize, what: &str) -> CodeResult<()> {
        if len == self.coded_len() {
            return Ok(());
        }
        Err(CodeError::LengthMismatch(format!(
            "{len} {what} for a block of K {}, whose [d0 | d1 | d2] layout has 3·(K + 4) = {}",
            self.k,
            self.coded_len()
        )))
    }
}

/// The sub-block interleaver of §5.1.4.1.1 for streams of D bits, and the
/// circular buffer w of §5.1.4.1.2 built from its three outputs.
struct SubBlock {
    /// D, bits per stream.
    d: usize,
    /// F, filler bits at the start of d0 and d1.
    filler: usize,
    /// R_TC, the fewest rows of 32 columns that hold D bits.
    rows: usize,
    /// N_D, the dummy bits padded in front of each stream to fill the rows.
    dummies: usize,
}

impl SubBlock {
    fn new(d: usize, filler: usize) -> Self {
        let rows = d.div_ceil(COLUMNS);
        Self { d, filler, rows, dummies: rows * COLUMNS - d }
    }

    /// K_Π, the length of each interleaved stream v⁽ⁱ⁾.
    fn len(&self) -> usize {
        self.rows * COLUMNS
    }

    /// Where w_k comes from in `[d0 | d1 | d2]`, or `None` for `<NULL>`.
    fn entry(&self, k: usize) -> Option<u32> {
        // w is v⁽⁰⁾, then v⁽¹⁾ and v⁽²⁾ interlaced.
        let (stream, k) = match k.checked_sub(self.len()) {
            None => (0, k),
            Some(j) => (1 + j % 2, j / 2),
        };
        // Reading the permuted matrix column by column: row k mod R of
        // column P(⌊k/R⌋) of the matrix written row by row.
        let y = COLUMN_PERMUTATION[k / self.rows] + COLUMNS * (k % self.rows);
        // d⁽²⁾ is read one position further on (π(k) of §5.1.4.1.1), so its
        // dummies land elsewhere in w than those of d⁽⁰⁾ and d⁽¹⁾.
        let y = if stream == 2 { (y + 1) % self.len() } else { y };
        let bit = y.checked_sub(self.dummies)?;
        if stream < 2 && bit < self.filler {
            return None;
        }
        Some((stream * self.d + bit) as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rate matching done the long way: the interleaver matrices written out
    /// (with the column pattern derived as 5-bit bit reversal, not the table),
    /// w assembled, then the literal selection loop of §5.1.4.1.2. Returns
    /// the indices and k0.
    fn reference(k: usize, f: usize, e: usize, rv: usize, ncb: Option<usize>) -> (Vec<u32>, usize) {
        let d = k + 4;
        let rows = d.div_ceil(32);
        let kp = rows * 32;
        let nd = kp - d;
        let stream = |i: usize| -> Vec<Option<u32>> {
            let y: Vec<Option<u32>> = (0..kp)
                .map(|m| if m < nd || (i < 2 && m - nd < f) { None } else { Some((i * d + m - nd) as u32) })
                .collect();
            let mut v = Vec::new();
            for col in 0..32u32 {
                let p = (col.reverse_bits() >> 27) as usize;
                for row in 0..rows {
                    let m = row * 32 + p;
                    v.push(if i == 2 { y[(m + 1) % kp] } else { y[m] });
                }
            }
            v
        };
        let (v0, v1, v2) = (stream(0), stream(1), stream(2));
        let mut w = v0;
        for (a, b) in v1.into_iter().zip(v2) {
            w.push(a);
            w.push(b);
        }
        let ncb = ncb.unwrap_or(w.len());
        let k0 = rows * (2 * ncb.div_ceil(8 * rows) * rv + 2);
        let mut out = Vec::new();
        let mut j = 0;
        while out.len() < e {
            if let Some(x) = w[(k0 + j) % ncb] {
                out.push(x);
            }
            j += 1;
        }
        (out, k0)
    }

    /// Whether position `i` of `[d0 | d1 | d2]` is filler.
    fn is_filler(i: u32, k: usize, f: usize) -> bool {
        let (i, d) = (i as usize, k + 4);
        i < f || (d..d + f).contains(&i)
    }

    /// Deterministic 0/1 bits.
    fn bits(n: usize, seed: u64) -> Vec<u8> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (s >> 63) as u8
            })
            .collect()
    }

    /// Gathering by `first_sent` (each position's LLRs at the first bit and
    /// every `carried()`-th after it, summed in that order) gives `combine`'s
    /// sums bit for bit, repeats and punctures, filler, limited buffers and
    /// every rv included; and no known zero is ever sent.
    #[test]
    fn gathering_by_first_sent_is_combine() {
        let mut s = 7u64;
        for (k, f, e, ncb) in [(40, 0, 80, None), (40, 8, 500, None), (1024, 0, 1500, None), (1024, 24, 9000, None), (6144, 0, 8300, None), (6144, 63, 40000, None), (512, 0, 3000, Some(700)), (104, 4, 1000, Some(200))] {
            for rv in 0..4 {
                let rm = RateMatch::new(k, f, e, rv, ncb).unwrap();
                let llrs: Vec<f32> = (0..e)
                    .map(|_| {
                        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                        ((s >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 17.0
                    })
                    .collect();
                let mut want = vec![0.0f32; rm.coded_len()];
                rm.combine(&llrs, &mut want).unwrap();
                let first = rm.first_sent();
                let got: Vec<f32> = first
                    .iter()
                    .map(|&t| (t as usize..e).step_by(rm.carried()).fold(0.0f32, |acc, i| acc + llrs[i]))
                    .collect();
                assert!(got.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()), "K {k} F {f} E {e} rv {rv} N_cb {ncb:?}");
                // i8 saturates at every step, so only the same order gives the same sums.
                let quantized: Vec<i8> = llrs.iter().map(|&l| (l * 9.0) as i8).collect();
                let mut want = vec![0i8; rm.coded_len()];
                rm.combine(&quantized, &mut want).unwrap();
                let got: Vec<i8> = first.iter().map(|&t| (t as usize..e).step_by(rm.carried()).fold(0i8, |acc, i| acc.plus(quantized[i]))).collect();
                assert_eq!(got, want, "i8: K {k} F {f} E {e} rv {rv} N_cb {ncb:?}");
                let [z0, z1] = rm.known_zeros();
                assert!(z0.chain(z1).all(|i| first[i] == NOT_SENT && is_filler(i as u32, k, f)), "K {k} F {f}");
            }
        }
    }

    #[test]
    fn column_pattern_is_five_bit_reversal() {
        for (j, &p) in COLUMN_PERMUTATION.iter().enumerate() {
            assert_eq!(p, ((j as u32).reverse_bits() >> 27) as usize, "column {j}");
        }
    }

    /// (1) One pass over the whole buffer sends every non-filler bit once:
    /// the interleaver is a permutation and exactly the `<NULL>` entries are skipped.
    #[test]
    fn one_pass_is_a_permutation_of_the_non_filler_bits() {
        for (k, f) in [(1, 0), (28, 0), (40, 0), (40, 8), (41, 5), (1024, 0), (1024, 24), (6144, 0), (6144, 63)] {
            let d = k + 4;
            let e = 3 * d - 2 * f;
            let rm = RateMatch::new(k, f, e, 0, None).unwrap();
            let mut sent = rm.indices().to_vec();
            sent.sort_unstable();
            let expected: Vec<u32> = (0..3 * d as u32).filter(|&i| !is_filler(i, k, f)).collect();
            assert_eq!(sent, expected, "K {k} F {f}");
            assert_eq!(rm.carried(), e);
            assert!(rm.check_decodable().is_ok());
        }
    }

    /// (2) A case worked by hand. K = 40: D = 44, R = ⌈44/32⌉ = 2, K_Π = 64,
    /// N_D = 20, so y_m is `<NULL>` for m < 20 and d_{m−20} after.
    /// v⁽⁰⁾_k = y at row k mod 2 of column P(⌊k/2⌋), i.e. y_{P(⌊k/2⌋) + 32·(k mod 2)}:
    ///   k=0,1: P(0)=0  → y0 (NULL), y32 = d12
    ///   k=2,3: P(1)=16 → y16 (NULL), y48 = d28
    ///   k=4,5: P(2)=8  → y8 (NULL), y40 = d20
    ///   k=6,7: P(3)=24 → y24 = d4, y56 = d36
    ///   k=8,9: P(4)=4  → y4 (NULL), y36 = d16
    ///   k=10,11: P(5)=20 → y20 = d0, y52 = d32
    ///   k=12,13: P(6)=12 → y12 (NULL), y44 = d24
    ///   k=14,15: P(7)=28 → y28 = d8, y60 = d40 (the first tail bit)
    /// K_w = 192, ⌈192/16⌉ = 12, k0 = 2·(24·rv + 2) = 4, 52, 100, 148.
    /// rv 0 starts at w_4 = v⁽⁰⁾_4, so it sends d0 bits 20, 4, 36, 16, 0, 32,
    /// 24, 8, 40 first, and the skipped w_1 = d12, w_3 = d28 last.
    #[test]
    fn hand_computed_k40() {
        let rm = RateMatch::new(40, 0, 132, 0, None).unwrap();
        assert_eq!(rm.k0(), 4);
        assert_eq!(&rm.indices()[..9], &[20, 4, 36, 16, 0, 32, 24, 8, 40]);
        assert_eq!(&rm.indices()[130..], &[12, 28]);

        // With F = 8, d0 bits 0..8 are <NULL> too: d4 and d0 drop out.
        let rm = RateMatch::new(40, 8, 7, 0, None).unwrap();
        assert_eq!(rm.indices(), &[20, 36, 16, 32, 24, 8, 40]);

        // rv 1 starts at w_52 = v⁽⁰⁾_52: P(26) = 11, so y11 (NULL), then
        // w_53 = y43 = d23.
        let rm = RateMatch::new(40, 0, 1, 1, None).unwrap();
        assert_eq!(rm.k0(), 52);
        assert_eq!(rm.indices(), &[23]);

        // v⁽¹⁾ and v⁽²⁾ interlaced from w_64: v⁽¹⁾_0 = y0 (NULL); v⁽²⁾_0 =
        // y_{π(0)} = y1 (NULL); v⁽¹⁾_1 = y32 = d1 bit 12 (index 44 + 12);
        // v⁽²⁾_1 = y_{(0 + 32 + 1)} = y33 = d2 bit 13 (88 + 13); v⁽¹⁾_2 = y16
        // and v⁽²⁾_2 = y17 (NULL); v⁽¹⁾_3 = y48 = d1 bit 28 (72); v⁽²⁾_3 =
        // y_{16 + 32 + 1} = y49 = d2 bit 29 (117). rv 0 reaches them after the
        // 42 bits of v⁽⁰⁾ from w_4 on (44, less d12 and d28 before k0).
        let rm = RateMatch::new(40, 0, 46, 0, None).unwrap();
        assert_eq!(&rm.indices()[42..], &[56, 101, 72, 117]);
    }

    /// (3) Selecting, then combining ±1 LLRs, gives back every sent bit with
    /// its multiplicity; E = 2·3D (F = 0) sends each bit exactly twice.
    #[test]
    fn select_then_combine_round_trip() {
        for (k, f, e, rv) in [(40, 0, 264, 0), (1024, 0, 6168, 2), (1024, 16, 1500, 1), (6144, 40, 9000, 3)] {
            let rm = RateMatch::new(k, f, e, rv, None).unwrap();
            let coded = bits(rm.coded_len(), k as u64);
            let mut sent = Vec::new();
            rm.select(&coded, &mut sent).unwrap();
            assert_eq!(sent.len(), e);
            let llrs: Vec<f32> = sent.iter().map(|&b| 1.0 - 2.0 * f32::from(b)).collect();
            let mut soft = vec![f32::NAN; rm.coded_len()];
            rm.combine(&llrs, &mut soft).unwrap();
            let mut times = vec![0u32; rm.coded_len()];
            for &i in rm.indices() {
                times[i as usize] += 1;
            }
            for (i, (&l, &n)) in soft.iter().zip(&times).enumerate() {
                let sign = 1.0 - 2.0 * f32::from(coded[i]);
                assert_eq!(l, n as f32 * sign, "K {k} position {i}");
                if f == 0 && e == 2 * rm.coded_len() {
                    assert_eq!(n, 2, "K {k} position {i}");
                }
            }
            // The i8 path adds the same values while they stay within ±127.
            let quantized: Vec<i8> = llrs.iter().map(|&l| l as i8 * 3).collect();
            let mut soft_i8 = vec![0; rm.coded_len()];
            rm.combine(&quantized, &mut soft_i8).unwrap();
            assert!(soft.iter().zip(&soft_i8).all(|(a, &b)| 3.0 * a == f32::from(b)));
        }
    }

    /// (4) Every rv, several K, E and N_cb: the map equals the long-way
    /// reference, stays in range, never sends filler (dummies have no index,
    /// so matching the reference shows they are skipped), and k0 follows
    /// the formula.
    #[test]
    fn all_versions_match_the_reference() {
        for (k, f) in [(40usize, 0), (40, 16), (1024, 0), (1024, 32), (6144, 0), (6144, 60)] {
            let d = k + 4;
            let kw = 3 * d.div_ceil(32) * 32;
            for ncb in [None, Some(kw), Some(kw * 2 / 3), Some(kw / 3 + 1)] {
                for rv in 0..=3u8 {
                    for e in [1, 17, k / 2, k - 1, k, k + 1, 3 * d - 2 * f, kw + 7, 2 * kw + 3] {
                        let rm = RateMatch::new(k, f, e, rv, ncb).unwrap();
                        let (expected, k0) = reference(k, f, e, usize::from(rv), ncb);
                        let what = format!("K {k} F {f} E {e} rv {rv} N_cb {ncb:?}");
                        assert_eq!(rm.k0(), k0, "{what}");
                        assert_eq!(rm.indices(), &expected[..], "{what}");
                        assert!(rm.indices().iter().all(|&i| (i as usize) < 3 * d && !is_filler(i, k, f)), "{what}");
                    }
                }
            }
        }
    }

    #[test]
    fn k0_formula() {
        // K = 6144: D = 6148, R = 193, K_w = 18528, ⌈18528/1544⌉ = 12.
        for rv in 0..=3u8 {
            let rm = RateMatch::new(6144, 0, 100, rv, None).unwrap();
            assert_eq!(rm.k0(), 193 * (24 * usize::from(rv) + 2));
        }
        // Limited buffer N_cb = 10000: ⌈10000/1544⌉ = 7.
        let rm = RateMatch::new(6144, 0, 100, 3, Some(10_000)).unwrap();
        assert_eq!(rm.k0(), 193 * (2 * 7 * 3 + 2));
        // A tiny buffer puts k0 past its end; reading starts at k0 mod N_cb.
        let rm = RateMatch::new(40, 0, 3, 3, Some(30)).unwrap();
        assert_eq!(rm.k0(), 2 * (2 * 2 * 3 + 2));
        assert_eq!(rm.indices(), &reference(40, 0, 3, 3, Some(30)).0[..]);
    }

    /// (5) Bad parameters and inputs, each with a message that names the
    /// value and the limit.
    #[test]
    fn bad_inputs_are_clear_errors() {
        let message = |r: CodeResult<RateMatch>| match r {
            Err(CodeError::InvalidParameter(m)) => m,
            other => panic!("expected InvalidParameter, got {other:?}"),
        };
        assert!(message(RateMatch::new(40, 0, 100, 4, None)).contains("rv 4: the redundancy version is 0..=3"));
        assert!(message(RateMatch::new(40, 0, 0, 0, None)).contains("E 0"));
        assert!(message(RateMatch::new(40, 0, MAX_E + 1, 0, None)).contains(&format!("E {}", MAX_E + 1)));
        assert!(RateMatch::new(40, 0, MAX_E, 0, None).is_ok());
        assert!(message(RateMatch::new(40, 40, 100, 0, None)).contains("40 filler bits in a block of K 40"));
        assert!(message(RateMatch::new(0, 0, 100, 0, None)).contains("K 0"));
        assert!(message(RateMatch::new(6145, 0, 100, 0, None)).contains("K 6145: above 6144"));
        assert!(message(RateMatch::new(40, 0, 100, 0, Some(0))).contains("N_cb 0"));
        assert!(message(RateMatch::new(40, 0, 100, 0, Some(193))).contains("1..=192"));
        // w_0 = y0 is a dummy bit: nothing to send.
        assert!(message(RateMatch::new(40, 0, 100, 0, Some(1))).contains("all <NULL>"));

        let rm = RateMatch::new(40, 0, 100, 0, None).unwrap();
        let mut out = vec![7u8];
        match rm.select(&[0; 131], &mut out) {
            Err(CodeError::LengthMismatch(m)) => assert!(m.contains("131") && m.contains("132"), "{m}"),
            other => panic!("{other:?}"),
        }
        let mut coded = vec![0u8; 132];
        coded[5] = 2;
        assert!(matches!(rm.select(&coded, &mut out), Err(CodeError::InvalidParameter(m)) if m.contains("index 5")));
        assert_eq!(out, [7], "nothing appended on error");

        let mut soft = vec![9.0f32; 132];
        let mut llrs = vec![1.0f32; 100];
        llrs[42] = f32::NAN;
        assert_eq!(rm.combine(&llrs, &mut soft), Err(CodeError::NonFiniteLlr { index: 42 }));
        llrs[42] = f32::NEG_INFINITY;
        assert_eq!(rm.combine(&llrs, &mut soft), Err(CodeError::NonFiniteLlr { index: 42 }));
        match rm.combine(&[1.0f32; 99], &mut soft) {
            Err(CodeError::LengthMismatch(m)) => assert!(m.contains("99") && m.contains("100"), "{m}"),
            other => panic!("{other:?}"),
        }
        match rm.combine(&[1.0f32; 100], &mut soft[..130]) {
            Err(CodeError::LengthMismatch(m)) => assert!(m.contains("130") && m.contains("132"), "{m}"),
            other => panic!("{other:?}"),
        }
        assert!(soft.iter().all(|&l| l == 9.0), "output untouched on error");
    }

    /// (6) Decodability asks for K − F distinct coded bits, not for every
    /// systematic bit: rv 0 at rate 1/2 skips some systematic bits yet is a
    /// normal LTE transmission.
    #[test]
    fn check_decodable() {
        let rm = RateMatch::new(1024, 0, 100, 0, None).unwrap();
        match rm.check_decodable() {
            Err(CodeError::InvalidParameter(m)) => {
                assert!(m.contains("E 100") && m.contains("K 1024") && m.contains("100 of them systematic"), "{m}")
            }
            other => panic!("{other:?}"),
        }
        let rm = RateMatch::new(1024, 0, 1023, 0, None).unwrap();
        assert!(rm.check_decodable().is_err());
        let rm = RateMatch::new(1024, 24, 1000, 0, None).unwrap();
        assert!(rm.check_decodable().is_ok());
        let rm = RateMatch::new(1024, 0, 3 * 1028, 0, None).unwrap();
        assert!(rm.check_decodable().is_ok());
        assert_eq!(rm.systematic_carried(), 1024);

        // K = 1024: R = 33, N_D = 28. The 2R = 66 entries before k0 hold
        // columns 0 and 16, rows 0..=32: y0 and y16 are dummies; y 32..=1024
        // and y 48..=1040 (step 32) are d0 bits 4..=996 and 20..=1012, all
        // information bits, 32 + 32 = 64 of them.
        let rm = RateMatch::new(1024, 0, 2 * 1028, 0, None).unwrap();
        assert!(rm.check_decodable().is_ok());
        assert_eq!(rm.systematic_carried(), 1024 - 64);
    }
}
