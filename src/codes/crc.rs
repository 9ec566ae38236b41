//! The cyclic redundancy checks of 3GPP TS 36.212 §5.1.1 on unpacked bits:
//! CRC24A (transport blocks), CRC24B (code blocks), CRC16 and CRC8, and any
//! other generator through [`Crc::new`]. Shared by every family and chain
//! that checks frames.
//! The 5G CRCs of TS 38.212 §5.1 that polar codes use, CRC24C, CRC11 and
//! CRC6, are defined the same way.
//!
//! As §5.1.1 defines them: the parity bits are the remainder of
//! `a(D)·D^L` divided by `g(D)`, with no initial value, no reflection and no
//! final XOR, and they follow the bits MSB first (`p_0` is the coefficient
//! of `D^{L-1}`). A block with its parity bits appended therefore divides
//! to remainder zero, which is what [`Crc::check`] tests.

use std::fmt;

use crate::codes::error::{CodeResult, invalid};

/// CRC24A, `g = D^24 + D^23 + D^18 + D^17 + D^14 + D^11 + D^10 + D^7 + D^6 +
/// D^5 + D^4 + D^3 + D + 1`: the transport block CRC.
pub static CRC24A: Crc = Crc::build("CRC24A", 0x86_4CFB, 24);
/// CRC24B, `g = D^24 + D^23 + D^6 + D^5 + D + 1`: the code block CRC of
/// segmentation (§5.1.2).
pub static CRC24B: Crc = Crc::build("CRC24B", 0x80_0063, 24);
/// CRC16, `g = D^16 + D^12 + D^5 + 1`.
pub static CRC16: Crc = Crc::build("CRC16", 0x1021, 16);
/// CRC8, `g = D^8 + D^7 + D^4 + D^3 + D + 1`.
pub static CRC8: Crc = Crc::build("CRC8", 0x9B, 8);
/// CRC24C of TS 38.212 §5.1, `g = D^24 + D^23 + D^21 + D^20 + D^17 + D^15 +
/// D^13 + D^12 + D^8 + D^4 + D^2 + D + 1`: the CRC of DCI and BCH (polar codes).
pub static CRC24C: Crc = Crc::build("CRC24C", 0xB2_B117, 24);
/// CRC11 of TS 38.212 §5.1, `g = D^11 + D^10 + D^9 + D^5 + 1`: the CRC of UCI
/// of 20 bits or more (polar codes).
pub static CRC11: Crc = Crc::build("CRC11", 0x621, 11);
/// CRC6 of TS 38.212 §5.1, `g = D^6 + D^5 + 1`: the CRC of UCI of 12 to 19
/// bits (polar codes).
pub static CRC6: Crc = Crc::build("CRC6", 0x21, 6);

/// Spreads 8 unpacked bits (one per byte, first bit in the lowest byte of a
/// little-endian load) into one byte, first bit in the MSB: the 64 products
/// land on distinct bit positions, so no carries mix them.
const GATHER: u64 = 0x8040_2010_0804_0201;
/// The lowest bit of every byte: only that bit of an unpacked value counts.
const LOW_BITS: u64 = 0x0101_0101_0101_0101;

/// A CRC of `width` = L parity bits with generator `g(D) = D^L + poly(D)`
/// (`poly` holds the coefficients of `D^{L-1}` … `D^0`), computed 32 bits
/// per step by four independent table look-ups (slicing by four: the
/// look-ups of a step do not wait on each other, only the steps do).
///
/// # Example
/// ```
/// use gpufec::codes::crc::CRC24B;
/// let bits = [1, 0, 1, 1, 0, 0, 1];
/// let mut block = Vec::new();
/// CRC24B.attach(&bits, &mut block);
/// assert_eq!(block.len(), 7 + 24);
/// assert!(CRC24B.check(&block));
/// block[3] ^= 1;
/// assert!(!CRC24B.check(&block));
/// ```
#[derive(Clone)]
pub struct Crc {
    name: &'static str,
    poly: u32,
    width: u32,
    /// `tables[0][x]`: the register change of shifting byte `x` through a
    /// register left-aligned in a `u32` (the remainder's `D^{L-1}` in bit 31);
    /// `tables[n][x]`: that of `x` followed by n zero bytes.
    tables: [[u32; 256]; 4],
}

impl fmt::Debug for Crc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Crc")
            .field("name", &self.name)
            .field("poly", &format_args!("{:#x}", self.poly))
            .field("width", &self.width)
            .finish_non_exhaustive()
    }
}

impl Crc {
    /// A CRC of `width` bits (1..=32) with generator `D^width + poly(D)`;
    /// `poly` must fit in `width` bits. For the CRCs of §5.1.1 use
    /// [`CRC24A`], [`CRC24B`], [`CRC16`] or [`CRC8`].
    pub fn new(name: &'static str, poly: u32, width: u32) -> CodeResult<Self> {
        if !(1..=32).contains(&width) {
            return Err(invalid!("CRC {name}: width {width} is outside 1..=32"));
        }
        if width < 32 && poly >> width != 0 {
            return Err(invalid!(
                "CRC {name}: polynomial {poly:#x} has terms at or above D^{width}"
            ));
        }
        Ok(Self::build(name, poly, width))
    }

    /// The tables of `Crc::new`, at compile time for the statics.
    const fn build(name: &'static str, poly: u32, width: u32) -> Self {
        let aligned = poly << (32 - width);
        let mut tables = [[0u32; 256]; 4];
        let mut x = 0;
        while x < 256 {
            let mut reg = (x as u32) << 24;
            let mut b = 0;
            while b < 8 {
                reg = if reg & 0x8000_0000 != 0 { (reg << 1) ^ aligned } else { reg << 1 };
                b += 1;
            }
            tables[0][x] = reg;
            x += 1;
        }
        let mut n = 1;
        while n < 4 {
            let mut x = 0;
            while x < 256 {
                let prev = tables[n - 1][x];
                tables[n][x] = (prev << 8) ^ tables[0][(prev >> 24) as usize];
                x += 1;
            }
            n += 1;
        }
        Self { name, poly, width, tables }
    }

    /// The register after shifting `bits` (only each value's lowest bit
    /// read) through `reg`, left-aligned: 32 bits a step, the rest a byte,
    /// then a bit at a time. Continuing from where a previous piece left the
    /// register computes the CRC of the pieces' concatenation.
    fn shift_in(&self, mut reg: u32, bits: &[u8]) -> u32 {
        let t = &self.tables;
        let mut words = bits.chunks_exact(32);
        for chunk in &mut words {
            let mut word = 0u32;
            for byte in chunk.chunks_exact(8) {
                word = (word << 8) | gather_byte(byte);
            }
            reg ^= word;
            reg = t[3][(reg >> 24) as usize] ^ t[2][((reg >> 16) & 0xff) as usize] ^ t[1][((reg >> 8) & 0xff) as usize] ^ t[0][(reg & 0xff) as usize];
        }
        let mut bytes = words.remainder().chunks_exact(8);
        for chunk in &mut bytes {
            reg = (reg << 8) ^ t[0][((reg >> 24) ^ gather_byte(chunk)) as usize];
        }
        let aligned = self.poly << (32 - self.width);
        for &bit in bytes.remainder() {
            let top = (reg >> 31) ^ u32::from(bit & 1);
            reg <<= 1;
            if top != 0 {
                reg ^= aligned;
            }
        }
        reg
    }

    /// The name given at construction ("CRC24A", …).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The generator without its leading `D^L` term.
    pub fn poly(&self) -> u32 {
        self.poly
    }

    /// Number of parity bits L.
    pub fn width(&self) -> usize {
        self.width as usize
    }

    /// The L parity bits of `bits` as a number, `p_0` in the most significant
    /// of its L bits. Only the lowest bit of each value of `bits` is read.
    ///
    /// # Example
    /// ```
    /// use gpufec::codes::crc::CRC24A;
    /// // "123456789" in ASCII, each byte MSB first: the catalogued check value.
    /// let bits: Vec<u8> = b"123456789".iter().flat_map(|&c| (0..8).rev().map(move |i| (c >> i) & 1)).collect();
    /// assert_eq!(CRC24A.parity(&bits), 0xCD_E703);
    /// ```
    pub fn parity(&self, bits: &[u8]) -> u32 {
        self.shift_in(0, bits) >> (32 - self.width)
    }

    /// Appends `bits` and then their L parity bits, `p_0` first, to `out`
    /// (whatever `out` held before stays in front).
    pub fn attach(&self, bits: &[u8], out: &mut Vec<u8>) {
        let parity = self.parity(bits);
        out.reserve(bits.len() + self.width());
        out.extend_from_slice(bits);
        out.extend((0..self.width).rev().map(|j| ((parity >> j) & 1) as u8));
    }

    /// Whether `bits_with_crc` (bits followed by their L parity bits) passes
    /// the check. Fewer than L bits cannot carry the CRC and fail.
    pub fn check(&self, bits_with_crc: &[u8]) -> bool {
        bits_with_crc.len() >= self.width() && self.parity(bits_with_crc) == 0
    }

    /// [`Self::check`] of the concatenation of `pieces`, without making it
    /// (a transport block's CRC over its code blocks' data where they lie).
    ///
    /// # Example
    /// ```
    /// use gpufec::codes::crc::CRC24A;
    /// let mut block = Vec::new();
    /// CRC24A.attach(&[1, 0, 1, 1, 0, 1, 1, 1, 0, 0, 1], &mut block);
    /// let (a, b) = block.split_at(5);
    /// assert!(CRC24A.check_pieces([a, b]));
    /// ```
    pub fn check_pieces<'a>(&self, pieces: impl IntoIterator<Item = &'a [u8]>) -> bool {
        let (mut reg, mut len) = (0, 0);
        for piece in pieces {
            reg = self.shift_in(reg, piece);
            len += piece.len();
        }
        len >= self.width() && reg == 0
    }
}

/// 8 unpacked bits (one per byte, only the lowest bit of each read) as one
/// byte, the first bit in the MSB.
fn gather_byte(bits: &[u8]) -> u32 {
    let word = u64::from_le_bytes(bits.try_into().expect("8 bits")) & LOW_BITS;
    (word.wrapping_mul(GATHER) >> 56) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng, rngs::SmallRng};

    const ALL: [&Crc; 4] = [&CRC24A, &CRC24B, &CRC16, &CRC8];

    /// `g(D)` without its leading term, from the exponents §5.1.1 lists.
    fn from_exponents(exps: &[u32]) -> u32 {
        exps.iter().fold(0, |acc, &e| acc | 1 << e)
    }

    /// ASCII bytes as bits, each byte MSB first.
    fn ascii_bits(s: &[u8]) -> Vec<u8> {
        s.iter().flat_map(|&c| (0..8).rev().map(move |i| (c >> i) & 1)).collect()
    }

    /// Polynomial long division of `bits·D^L` by `g`, one bit at a time on a
    /// vector of bits: the definition of §5.1.1, nothing shared with the
    /// table-driven code.
    fn reference_parity(crc: &Crc, bits: &[u8]) -> u32 {
        let l = crc.width();
        let g: Vec<u8> =
            (0..=l).map(|j| if j == 0 { 1 } else { ((crc.poly() >> (l - j)) & 1) as u8 }).collect();
        let mut m: Vec<u8> = bits.iter().copied().chain(std::iter::repeat_n(0, l)).collect();
        for i in 0..bits.len() {
            if m[i] == 1 {
                for (j, &gj) in g.iter().enumerate() {
                    m[i + j] ^= gj;
                }
            }
        }
        m[bits.len()..].iter().fold(0, |acc, &b| (acc << 1) | u32::from(b))
    }

    fn random_bits(rng: &mut SmallRng, n: usize) -> Vec<u8> {
        (0..n).map(|_| rng.random_range(0..2u8)).collect()
    }

    #[test]
    fn generators_match_the_spec_exponents() {
        assert_eq!(CRC24A.poly(), from_exponents(&[23, 18, 17, 14, 11, 10, 7, 6, 5, 4, 3, 1, 0]));
        assert_eq!(CRC24B.poly(), from_exponents(&[23, 6, 5, 1, 0]));
        assert_eq!(CRC16.poly(), from_exponents(&[12, 5, 0]));
        assert_eq!(CRC8.poly(), from_exponents(&[7, 4, 3, 1, 0]));
        assert_eq!([CRC24A.width(), CRC24B.width(), CRC16.width(), CRC8.width()], [24, 24, 16, 8]);
    }

    /// Check values of the reveng CRC catalogue: CRC-24/LTE-A, CRC-24/LTE-B,
    /// CRC-16/XMODEM (same parameters as CRC16 here), CRC-8/LTE.
    #[test]
    fn catalogue_check_values() {
        let bits = ascii_bits(b"123456789");
        assert_eq!(CRC24A.parity(&bits), 0xCD_E703);
        assert_eq!(CRC24B.parity(&bits), 0x23_EF52);
        assert_eq!(CRC16.parity(&bits), 0x31C3);
        assert_eq!(CRC8.parity(&bits), 0xEA);
    }

    #[test]
    fn table_driven_matches_bitwise_reference() {
        let mut rng = SmallRng::seed_from_u64(0x24A);
        for crc in ALL {
            for len in 0..600 {
                let bits = random_bits(&mut rng, len);
                assert_eq!(
                    crc.parity(&bits),
                    reference_parity(crc, &bits),
                    "{} len {len}",
                    crc.name()
                );
            }
        }
    }

    /// A block cut into pieces anywhere (inside a 32-bit step, a byte, at a
    /// bit) checks as the whole does.
    #[test]
    fn pieces_check_as_the_whole() {
        let mut rng = SmallRng::seed_from_u64(99);
        for crc in ALL {
            let mut block = Vec::new();
            crc.attach(&random_bits(&mut rng, 300), &mut block);
            for cuts in [vec![], vec![0], vec![1], vec![7, 40], vec![33, 34, 100, 301], vec![64, 200]] {
                let mut pieces = Vec::new();
                let mut at = 0;
                for &c in &cuts {
                    pieces.push(&block[at..c]);
                    at = c;
                }
                pieces.push(&block[at..]);
                assert!(crc.check_pieces(pieces.iter().copied()), "{} cuts {cuts:?}", crc.name());
                let mut bad = block.clone();
                bad[150] ^= 1;
                let (a, b) = bad.split_at(cuts.first().copied().unwrap_or(0));
                assert!(!crc.check_pieces([a, b]), "{} cuts {cuts:?}", crc.name());
            }
        }
        assert!(!CRC24A.check_pieces([&[0u8; 10][..], &[0; 13]]), "23 bits carry no CRC");
    }

    #[test]
    fn attach_then_check() {
        let mut rng = SmallRng::seed_from_u64(7);
        for crc in ALL {
            for len in [0, 1, 7, 8, 9, 40, 6120, 6121] {
                let bits = random_bits(&mut rng, len);
                let mut out = vec![1, 0];
                crc.attach(&bits, &mut out);
                assert_eq!(out.len(), 2 + len + crc.width());
                assert_eq!(&out[2..2 + len], &bits[..]);
                assert!(crc.check(&out[2..]), "{} len {len}", crc.name());
                let p = crc.parity(&bits);
                let tail: u32 = out[2 + len..].iter().fold(0, |acc, &b| (acc << 1) | u32::from(b));
                assert_eq!(tail, p, "parity bits go MSB first");
            }
        }
    }

    #[test]
    fn every_single_bit_flip_fails() {
        let mut rng = SmallRng::seed_from_u64(200);
        let bits = random_bits(&mut rng, 200);
        for crc in ALL {
            let mut block = Vec::new();
            crc.attach(&bits, &mut block);
            for i in 0..block.len() {
                block[i] ^= 1;
                assert!(!crc.check(&block), "{}: flip at {i} passed", crc.name());
                block[i] ^= 1;
            }
            assert!(crc.check(&block));
        }
    }

    /// The CRCs of TS 38.212 §5.1 that the polar family uses: generators
    /// from the exponents the standard lists, and the bitwise division.
    #[test]
    fn nr_polar_crcs() {
        assert_eq!(CRC24C.poly(), from_exponents(&[23, 21, 20, 17, 15, 13, 12, 8, 4, 2, 1, 0]));
        assert_eq!(CRC11.poly(), from_exponents(&[10, 9, 5, 0]));
        assert_eq!(CRC6.poly(), from_exponents(&[5, 0]));
        assert_eq!([CRC24C.width(), CRC11.width(), CRC6.width()], [24, 11, 6]);
        let mut rng = SmallRng::seed_from_u64(0x24C);
        for crc in [&CRC24C, &CRC11, &CRC6] {
            for len in [0, 1, 5, 12, 140, 1013] {
                let bits = random_bits(&mut rng, len);
                assert_eq!(crc.parity(&bits), reference_parity(crc, &bits), "{} len {len}", crc.name());
            }
        }
    }

    #[test]
    fn short_inputs_and_bad_parameters() {
        assert!(!CRC24A.check(&[0; 23]));
        assert!(CRC24A.check(&[0; 24]));
        assert_eq!(CRC24A.parity(&[]), 0);
        assert!(Crc::new("w0", 1, 0).is_err());
        assert!(Crc::new("w33", 1, 33).is_err());
        assert!(Crc::new("wide", 0x100, 8).is_err());
        let custom = Crc::new("custom", 0xB2_B117, 24).unwrap();
        assert_eq!(custom.width(), 24);
        assert!(Crc::new("w32", u32::MAX, 32).is_ok());
        assert!(format!("{:?}", CRC24A).contains("0x864cfb"));
    }
}
