//! Code block segmentation and code block CRC attachment, 3GPP TS 36.212
//! §5.1.2: a transport block of B bits (its CRC24A included) becomes C code
//! blocks whose sizes K_r are turbo block sizes of Table 5.1.3-3.
//!
//! Filler bits: §5.1.2 puts F `<NULL>` bits at the start of block 0. Here
//! they are 0 in the blocks [`Segmentation::segment`] writes, and
//! [`Segmentation::filler`] says how many there are, so the encoder and the
//! rate matcher can treat those positions as `<NULL>` (§5.1.3.2 and
//! §5.1.4.1 do).

use crate::codes::crc::{CRC24A, CRC24B};
use super::qpp::{MAX_BLOCK, block_size_at_least, block_size_below};
use crate::codes::bits::first_non_bit;
use crate::codes::error::{CodeResult, invalid};

/// Largest B accepted: 2^20 bits, well above any LTE transport block, so a
/// wrong size is refused before anything is allocated for it.
pub const MAX_B: usize = 1 << 20;
/// L of §5.1.2: the CRC24B each code block carries when C > 1.
pub const BLOCK_CRC_LEN: usize = 24;

/// The segmentation of a B-bit transport block, computed by
/// [`Segmentation::new`] as §5.1.2 does. The first `c_minus` blocks have
/// `k_minus` bits and the other `c_plus` have `k_plus`.
///
/// # Example
/// ```
/// use gpufec::codes::turbo::segment::Segmentation;
/// let s = Segmentation::new(6145).unwrap();
/// assert_eq!((s.c, s.k_minus, s.k_plus, s.filler), (2, 3072, 3136, 15));
/// assert_eq!(s.blocks().collect::<Vec<_>>(), [3072, 3136]);
/// let bits = vec![1u8; 6145];
/// let blocks = s.segment(&bits).unwrap();
/// assert!((0..2).all(|r| s.block_crc_ok(r, &blocks[r])));
/// let mut back = Vec::new();
/// s.desegment(&blocks, &mut back).unwrap();
/// assert_eq!(back, bits);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segmentation {
    /// B: bits in, the transport block's CRC included.
    pub b: usize,
    /// C: number of code blocks.
    pub c: usize,
    /// K+: the larger block size.
    pub k_plus: usize,
    /// K-: the smaller block size (0 when C = 1).
    pub k_minus: usize,
    /// C+: number of blocks of K+ bits.
    pub c_plus: usize,
    /// C-: number of blocks of K- bits.
    pub c_minus: usize,
    /// F: filler bits at the start of block 0.
    pub filler: usize,
    /// L: CRC bits per block, 0 when C = 1 and [`BLOCK_CRC_LEN`] otherwise.
    pub crc_len: usize,
}

impl Segmentation {
    /// The segmentation of `b` bits, `1..=`[`MAX_B`], by §5.1.2 with
    /// Z = 6144. Below 40 bits, the filler makes up the smallest block.
    pub fn new(b: usize) -> CodeResult<Self> {
        if b == 0 {
            return Err(invalid!("code block segmentation of an empty transport block (B = 0)"));
        }
        if b > MAX_B {
            return Err(invalid!("transport block of B = {b} bits is above the {MAX_B} accepted"));
        }
        let (c, crc_len) = if b <= MAX_BLOCK {
            (1, 0)
        } else {
            (b.div_ceil(MAX_BLOCK - BLOCK_CRC_LEN), BLOCK_CRC_LEN)
        };
        let b_prime = b + c * crc_len;
        // C·K ≥ B' for the smallest table K ≥ ⌈B'/C⌉, which is at most 6144
        // because C ≥ B/(Z - L) makes B' ≤ C·Z.
        let k_plus = block_size_at_least(b_prime.div_ceil(c)).expect("B'/C <= Z");
        let (k_minus, c_minus) = if c == 1 {
            (0, 0)
        } else {
            // With C > 1, B > (C - 1)(Z - L) so B'/C > 3084: K+ is far above 40.
            let k_minus = block_size_below(k_plus).expect("K+ > 40 when C > 1");
            (k_minus, (c * k_plus - b_prime) / (k_plus - k_minus))
        };
        let c_plus = c - c_minus;
        let filler = c_plus * k_plus + c_minus * k_minus - b_prime;
        Ok(Self { b, c, k_plus, k_minus, c_plus, c_minus, filler, crc_len })
    }

    /// B' = B + C·L: the bits the blocks carry besides the filler.
    pub fn b_prime(&self) -> usize {
        self.b + self.c * self.crc_len
    }

    /// K_r, the size of block `r`: K- for the first C- blocks, then K+.
    ///
    /// # Panics
    /// If `r >= C`.
    pub fn block_len(&self, r: usize) -> usize {
        assert!(r < self.c, "code block {r} of a segmentation into {} blocks", self.c);
        if r < self.c_minus { self.k_minus } else { self.k_plus }
    }

    /// The block sizes K_0, …, K_{C-1}.
    pub fn blocks(&self) -> impl Iterator<Item = usize> + use<> {
        let s = *self;
        (0..s.c).map(move |r| s.block_len(r))
    }

    /// How many of the B transport block bits block `r` carries: K_r less
    /// its CRC and, for block 0, the filler.
    ///
    /// # Panics
    /// If `r >= C`.
    pub fn data_len(&self, r: usize) -> usize {
        let filler = if r == 0 { self.filler } else { 0 };
        self.block_len(r) - self.crc_len - filler
    }

    /// Cuts `bits` (exactly B values, each 0 or 1) into the C code blocks,
    /// replacing what `out` held and reusing its vectors: F zeros (the
    /// filler) at the start of block 0, and a CRC24B at the end of every
    /// block when C > 1.
    pub fn segment_into(&self, bits: &[u8], out: &mut Vec<Vec<u8>>) -> CodeResult<()> {
        if bits.len() != self.b {
            return Err(invalid!(
                "segmentation for B = {} bits was given {} bits",
                self.b,
                bits.len()
            ));
        }
        if let Some(i) = first_non_bit(bits) {
            return Err(invalid!("transport block bit {i} is {}, not 0 or 1", bits[i]));
        }
        out.truncate(self.c);
        out.resize_with(self.c, Vec::new);
        let mut rest = bits;
        for (r, block) in out.iter_mut().enumerate() {
            let (data, tail) = rest.split_at(self.data_len(r));
            rest = tail;
            block.clear();
            block.reserve(self.block_len(r));
            if r == 0 {
                block.resize(self.filler, 0);
            }
            if self.crc_len == 0 {
                block.extend_from_slice(data);
            } else {
                // §5.1.2 computes the CRC with the filler as 0; leading zeros
                // leave a zero-initialised CRC register at zero, so the CRC
                // of the data alone is the same.
                CRC24B.attach(data, block);
            }
        }
        Ok(())
    }

    /// [`Segmentation::segment_into`] into new vectors.
    pub fn segment(&self, bits: &[u8]) -> CodeResult<Vec<Vec<u8>>> {
        let mut out = Vec::with_capacity(self.c);
        self.segment_into(bits, &mut out)?;
        Ok(out)
    }

    /// The inverse of [`Segmentation::segment`]: appends to `out` the B bits
    /// that `blocks` (C blocks of K_r bits each) carry, dropping the filler
    /// and the code block CRCs without checking them
    /// ([`Segmentation::block_crc_ok`] does).
    pub fn desegment<B: AsRef<[u8]>>(&self, blocks: &[B], out: &mut Vec<u8>) -> CodeResult<()> {
        if blocks.len() != self.c {
            return Err(invalid!(
                "desegmentation into B = {} bits needs {} code blocks, got {}",
                self.b,
                self.c,
                blocks.len()
            ));
        }
        for (r, block) in blocks.iter().enumerate() {
            let (got, want) = (block.as_ref().len(), self.block_len(r));
            if got != want {
                return Err(invalid!("code block {r} has {got} bits, not K_{r} = {want}"));
            }
        }
        out.reserve(self.b);
        for (r, block) in blocks.iter().enumerate() {
            out.extend_from_slice(self.data(r, block.as_ref()));
        }
        Ok(())
    }

    /// The bits of the transport block (of B) that decoded block `r` (K_r
    /// bits) carries: past the filler, before the CRC24B. Desegmentation
    /// is these of every block in order.
    ///
    /// # Panics
    /// If `r >= C` or the block is shorter than K_r.
    pub fn data<'a>(&self, r: usize, block: &'a [u8]) -> &'a [u8] {
        let start = if r == 0 { self.filler } else { 0 };
        &block[start..start + self.data_len(r)]
    }

    /// Whether decoded block `r` passes its CRC, for a decoder to stop
    /// early: the block's CRC24B when C > 1, and when C = 1 the CRC24A of
    /// the transport block, which B includes (§5.3.2.1 attaches it before
    /// segmentation). Filler positions are not read, so whatever a decoder
    /// left there does not matter. A block of the wrong length fails.
    ///
    /// # Panics
    /// If `r >= C`.
    pub fn block_crc_ok(&self, r: usize, block: &[u8]) -> bool {
        if block.len() != self.block_len(r) {
            return false;
        }
        // Skipping the filler equals reading it as 0, as in `segment_into`.
        let carried = if r == 0 { &block[self.filler..] } else { block };
        if self.crc_len == 0 { CRC24A.check(carried) } else { CRC24B.check(carried) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes::turbo::qpp::{MIN_BLOCK, is_block_size};
    use rand::{Rng, SeedableRng, rngs::SmallRng};

    fn random_bits(rng: &mut SmallRng, n: usize) -> Vec<u8> {
        (0..n).map(|_| rng.random_range(0..2u8)).collect()
    }

    fn fields(s: &Segmentation) -> [usize; 7] {
        [s.c, s.k_plus, s.k_minus, s.c_plus, s.c_minus, s.filler, s.crc_len]
    }

    /// Sizes worked by hand from §5.1.2, as [C, K+, K-, C+, C-, F, L].
    #[test]
    fn hand_worked_sizes() {
        let cases: [(usize, [usize; 7]); 9] = [
            // B < 40: one block of 40, filled up.
            (1, [1, 40, 0, 1, 0, 39, 0]),
            (40, [1, 40, 0, 1, 0, 0, 0]),
            // Past 512 the sizes step by 16: K+ = 528, F = 528 - 513.
            (513, [1, 528, 0, 1, 0, 15, 0]),
            (6144, [1, 6144, 0, 1, 0, 0, 0]),
            // C = ⌈6145/6120⌉ = 2, B' = 6193, K+ = 3136 (2·3072 < 6193),
            // K- = 3072, C- = ⌊(6272 - 6193)/64⌋ = 1, F = 3136 + 3072 - 6193.
            (6145, [2, 3136, 3072, 1, 1, 15, 24]),
            // B' = 6248, K+ = 3136, C- = ⌊24/64⌋ = 0, F = 6272 - 6248.
            (6200, [2, 3136, 3072, 2, 0, 24, 24]),
            // B = 2·6120 fills two blocks of 6144 exactly.
            (12240, [2, 6144, 6080, 2, 0, 0, 24]),
            // C = 3, B' = 12313, K+ = 4160 (3·4096 < 12313), C- = ⌊167/64⌋ = 2.
            (12241, [3, 4160, 4096, 1, 2, 39, 24]),
            // C = ⌈100000/6120⌉ = 17, B' = 100408, K+ = 5952 (17·5888 < B'),
            // C·K+ - B' = 776, C- = 12, F = 776 - 12·64.
            (100000, [17, 5952, 5888, 5, 12, 8, 24]),
        ];
        for (b, want) in cases {
            let s = Segmentation::new(b).unwrap();
            assert_eq!(fields(&s), want, "B = {b}");
        }
    }

    /// The invariants §5.1.2 guarantees, over B = 1..20000 step 7 and a
    /// list of large sizes.
    #[test]
    fn invariants_hold_across_sizes() {
        let large = [6143, 6144, 6145, 6146, 12240, 12241, 18360, 18361, 75376, 97896, 100000];
        let bs = (1..=20000).step_by(7).chain(large).chain([MAX_B - 1, MAX_B]);
        for b in bs {
            let s = Segmentation::new(b).unwrap();
            let ks: Vec<usize> = s.blocks().collect();
            assert_eq!(ks.len(), s.c);
            assert_eq!(s.c_plus + s.c_minus, s.c, "B = {b}");
            assert!(s.c_plus >= 1, "B = {b}");
            assert_eq!(ks.iter().sum::<usize>(), s.b_prime() + s.filler, "B = {b}");
            assert_eq!((0..s.c).map(|r| s.data_len(r)).sum::<usize>(), b, "B = {b}");
            assert!(ks.iter().all(|&k| is_block_size(k)), "B = {b}");
            if s.c == 1 {
                assert_eq!(s.crc_len, 0);
                assert_eq!(s.k_plus, block_size_at_least(b).unwrap(), "B = {b}");
                assert_eq!(s.filler, s.k_plus - b);
                assert!(b >= MIN_BLOCK || s.k_plus == MIN_BLOCK);
            } else {
                assert!(b > MAX_BLOCK);
                assert_eq!(s.crc_len, BLOCK_CRC_LEN);
                // The fewest blocks of at most Z - L data bits each.
                assert!(s.c * (MAX_BLOCK - 24) >= b && (s.c - 1) * (MAX_BLOCK - 24) < b);
                assert_eq!(Some(s.k_minus), block_size_below(s.k_plus), "B = {b}");
                // K+ is the smallest size that C blocks of it hold B'.
                assert!(s.c * s.k_plus >= s.b_prime() && s.c * s.k_minus < s.b_prime());
                assert!(s.filler < s.k_plus - s.k_minus, "B = {b}: F = {}", s.filler);
                assert!(s.data_len(0) > 0);
            }
        }
    }

    #[test]
    fn segment_desegment_round_trip() {
        let mut rng = SmallRng::seed_from_u64(5120);
        let edges = [1, 39, 40, 41, 6143, 6144, 6145, 12240, 12241, 30000, 75376];
        let sizes: Vec<usize> =
            edges.into_iter().chain((0..40).map(|_| rng.random_range(1..40000))).collect();
        let mut blocks = Vec::new();
        for b in sizes {
            let s = Segmentation::new(b).unwrap();
            let bits = random_bits(&mut rng, b);
            s.segment_into(&bits, &mut blocks).unwrap();
            assert_eq!(blocks.len(), s.c);
            for (r, block) in blocks.iter().enumerate() {
                assert_eq!(block.len(), s.block_len(r), "B = {b}, r = {r}");
            }
            assert!(blocks[0][..s.filler].iter().all(|&x| x == 0), "filler is 0");
            if s.c > 1 {
                for (r, block) in blocks.iter().enumerate() {
                    assert!(s.block_crc_ok(r, block), "B = {b}, r = {r}");
                    // The CRC over the whole block, filler included as 0.
                    assert!(CRC24B.check(block), "B = {b}, r = {r}");
                }
            }
            let mut back = vec![9];
            s.desegment(&blocks, &mut back).unwrap();
            assert_eq!(back[0], 9, "desegment appends");
            assert_eq!(&back[1..], &bits[..], "B = {b}");
        }
    }

    /// Data bits go in order: block 0 after the filler, then block 1, …
    #[test]
    fn bits_land_where_the_spec_puts_them() {
        let s = Segmentation::new(6145).unwrap();
        let mut bits = vec![0u8; 6145];
        bits[0] = 1;
        bits[6144] = 1;
        let blocks = s.segment(&bits).unwrap();
        assert_eq!(blocks[0][s.filler], 1);
        assert_eq!(s.data_len(0), 3072 - 24 - 15);
        // The last bit of B is the last data bit of the last block.
        assert_eq!(blocks[1][3136 - 24 - 1], 1);
    }

    #[test]
    fn crc_catches_errors() {
        let mut rng = SmallRng::seed_from_u64(24);
        // C > 1: each block's CRC24B.
        // C = 4, B' = 20097, K+ = 5056, C·K+ - B' = 127: C- = 1, F = 63.
        let s = Segmentation::new(20001).unwrap();
        assert_eq!((s.c, s.c_minus, s.filler), (4, 1, 63));
        let mut blocks = s.segment(&random_bits(&mut rng, 20001)).unwrap();
        blocks[1][100] ^= 1;
        assert!(s.block_crc_ok(0, &blocks[0]));
        assert!(!s.block_crc_ok(1, &blocks[1]));
        assert!(!s.block_crc_ok(0, &blocks[0][1..]), "wrong length");
        // A decoder's guess at the filler does not matter.
        blocks[0][0] ^= 1;
        assert!(s.block_crc_ok(0, &blocks[0]));

        // C = 1: the transport block's own CRC24A.
        let mut tb = Vec::new();
        CRC24A.attach(&random_bits(&mut rng, 1001), &mut tb);
        let s = Segmentation::new(tb.len()).unwrap();
        assert_eq!((s.c, s.k_plus, s.filler), (1, 1056, 31));
        let mut blocks = s.segment(&tb).unwrap();
        assert!(s.block_crc_ok(0, &blocks[0]));
        blocks[0][500] ^= 1;
        assert!(!s.block_crc_ok(0, &blocks[0]));
    }

    #[test]
    fn bad_inputs_are_refused() {
        let m = Segmentation::new(0).unwrap_err().to_string();
        assert!(m.contains("B = 0"), "{m}");
        let m = Segmentation::new(MAX_B + 1).unwrap_err().to_string();
        assert!(m.contains("above"), "{m}");

        let s = Segmentation::new(100).unwrap();
        let m = s.segment(&[0; 99]).unwrap_err().to_string();
        assert!(m.contains("B = 100") && m.contains("99 bits"), "{m}");
        let mut bits = vec![0u8; 100];
        bits[42] = 2;
        let m = s.segment(&bits).unwrap_err().to_string();
        assert!(m.contains("bit 42 is 2"), "{m}");

        let s = Segmentation::new(6145).unwrap();
        let blocks = s.segment(&[0; 6145]).unwrap();
        let mut out = Vec::new();
        let m = s.desegment(&blocks[..1], &mut out).unwrap_err().to_string();
        assert!(m.contains("needs 2 code blocks, got 1"), "{m}");
        let short = [&blocks[0][..], &blocks[1][1..]];
        let m = s.desegment(&short, &mut out).unwrap_err().to_string();
        assert!(m.contains("code block 1 has 3135 bits"), "{m}");
        assert!(out.is_empty(), "nothing written on error");
    }

    #[test]
    #[should_panic(expected = "code block 2")]
    fn block_len_past_c_panics() {
        Segmentation::new(6145).unwrap().block_len(2);
    }
}
