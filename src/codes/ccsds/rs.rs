//! Reed–Solomon (255,223) of CCSDS 131.0-B §4: GF(2^8) of `gf`, generator
//! g(x) = Π_{j=112}^{143} (x − α^{11j}), symbols in the conventional or the
//! dual (Berlekamp) basis, shortened to any length from 33 to 255, interleaved
//! to depth 1–8. An errors-only decoder: Berlekamp–Massey, Chien search,
//! Forney, and the syndromes again after the correction.

use super::gf;
use crate::codes::error::{CodeResult, invalid};

/// Parity symbols of a codeword (2t).
pub const PARITY: usize = 32;
/// Symbol errors a codeword corrects (t).
pub const T: usize = 16;
/// Symbols of a whole codeword.
pub const N: usize = 255;
/// The deepest interleaving CCSDS allows.
pub const MAX_INTERLEAVE: usize = 8;
/// First root of g(x), as a power of β = α^11.
const FIRST_ROOT: usize = 112;
/// β = α^PRIM generates the roots.
const PRIM: usize = 11;

/// The rows of CCSDS 131.0-B's basis transformation (Annex F): conventional
/// bit k (the coefficient of α^k) contributes row 7 − k to the dual-basis byte.
const TAL: [u8; 8] = [0x8d, 0xef, 0xec, 0x86, 0xfa, 0x99, 0xaf, 0x7b];

/// Conventional to dual basis, and back.
const TO_DUAL: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut x = 1;
    while x < 256 {
        // Linear: x's lowest set bit k adds row 7 − k to the rest's image.
        let k = (x as u8).trailing_zeros() as usize;
        t[x] = t[x & (x - 1)] ^ TAL[7 - k];
        x += 1;
    }
    t
};
const FROM_DUAL: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut x = 0;
    while x < 256 {
        t[TO_DUAL[x] as usize] = x as u8;
        x += 1;
    }
    t
};

/// g(x), coefficient of x^j at j (monic: entry 32 is 1).
const GENERATOR: [u8; PARITY + 1] = {
    let (exp, log) = (gf::EXP, gf::LOG);
    let mut g = [0u8; PARITY + 1];
    g[0] = 1;
    let mut j = 0;
    while j < PARITY {
        let root = (PRIM * (FIRST_ROOT + j)) % 255;
        // g ← g · (x + α^root)
        let mut d = j + 1;
        while d > 0 {
            let prod = if g[d] == 0 { 0 } else { exp[(log[g[d] as usize] as usize + root) % 255] };
            g[d] = g[d - 1] ^ prod;
            d -= 1;
        }
        g[0] = if g[0] == 0 { 0 } else { exp[(log[g[0] as usize] as usize + root) % 255] };
        j += 1;
    }
    g
};

/// How the symbols are written on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Basis {
    /// The polynomial basis of α (what libfec's `rs_8` and gr-satellites call conventional).
    Conventional,
    /// Berlekamp's dual basis, as CCSDS 131.0-B specifies (the default of the standard).
    #[default]
    Dual,
}

impl Basis {
    /// The basis named `conventional` or `dual`.
    pub fn parse(text: &str) -> CodeResult<Self> {
        match text {
            "conventional" => Ok(Self::Conventional),
            "dual" => Ok(Self::Dual),
            _ => Err(invalid!("Reed–Solomon basis '{text}' is neither conventional nor dual")),
        }
    }
}

/// A symbol from the conventional to the dual basis.
pub fn to_dual(x: u8) -> u8 {
    TO_DUAL[x as usize]
}

/// A symbol from the dual to the conventional basis.
pub fn from_dual(x: u8) -> u8 {
    FROM_DUAL[x as usize]
}

/// Why a frame could not be corrected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Uncorrectable {
    /// The interleaved codeword that failed (0 for depth 1).
    pub codeword: usize,
}

impl std::fmt::Display for Uncorrectable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Reed–Solomon codeword {} has more than {T} symbol errors", self.codeword)
    }
}

impl std::error::Error for Uncorrectable {}

/// The CCSDS (255,223) code as one frame of `interleave` codewords of `n`
/// symbols each (n = 255 unshortened; the missing leading data symbols of a
/// shortened code are zeros that are never sent). A frame is the `interleave
/// · (n − 32)` data bytes, then the parity; byte j belongs to codeword
/// j mod `interleave`.
///
/// # Example
/// ```
/// use gpufec::codes::ccsds::{Basis, ReedSolomon};
/// let rs = ReedSolomon::new(146, 1, Basis::Conventional)?; // BY70-1's (146,114)
/// let mut frame = rs.encode(&[7u8; 114])?;
/// frame[3] ^= 0x55;
/// frame[140] ^= 1;
/// assert_eq!(rs.decode(&mut frame), Ok(2));
/// assert_eq!(&frame[..114], &[7u8; 114][..]);
/// # Ok::<(), gpufec::codes::CodeError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReedSolomon {
    n: usize,
    interleave: usize,
    basis: Basis,
}

impl ReedSolomon {
    /// Codewords of `n` symbols (33..=255: at least one data symbol),
    /// `interleave` (1..=8) of them to a frame, written in `basis`.
    pub fn new(n: usize, interleave: usize, basis: Basis) -> CodeResult<Self> {
        if !(PARITY + 1..=N).contains(&n) {
            return Err(invalid!("a Reed–Solomon codeword of {n} symbols is outside {}..={N} (32 parity and at least one data symbol)", PARITY + 1));
        }
        if !(1..=MAX_INTERLEAVE).contains(&interleave) {
            return Err(invalid!("interleaving depth {interleave} is outside 1..={MAX_INTERLEAVE}"));
        }
        Ok(Self { n, interleave, basis })
    }

    /// The code whose frames carry `data` bytes at depth `interleave`:
    /// `data` must be a multiple of the depth and shorten each codeword to
    /// at most 223 data symbols.
    pub fn for_data(data: usize, interleave: usize, basis: Basis) -> CodeResult<Self> {
        if interleave == 0 || !data.is_multiple_of(interleave) || data / interleave > N - PARITY || data == 0 {
            return Err(invalid!(
                "{data} data bytes do not fit Reed–Solomon codewords at depth {interleave}: give a multiple of the depth, at most {} per codeword",
                N - PARITY
            ));
        }
        Self::new(data / interleave + PARITY, interleave, basis)
    }

    /// Data bytes of a frame.
    pub fn data_len(&self) -> usize {
        self.interleave * (self.n - PARITY)
    }

    /// Bytes of a whole frame, data and parity.
    pub fn frame_len(&self) -> usize {
        self.interleave * self.n
    }

    /// Interleaving depth.
    pub fn interleave(&self) -> usize {
        self.interleave
    }

    /// The symbol basis.
    pub fn basis(&self) -> Basis {
        self.basis
    }

    /// `(146,114) conventional`, `(255,223)×4 dual`.
    pub fn describe(&self) -> String {
        let depth = if self.interleave > 1 { format!("×{}", self.interleave) } else { String::new() };
        let basis = match self.basis {
            Basis::Conventional => "conventional",
            Basis::Dual => "dual",
        };
        format!("({},{}){depth} {basis}", self.n, self.n - PARITY)
    }

    /// The frame of `data` (exactly [`data_len`](Self::data_len) bytes): the data, then the parity.
    pub fn encode(&self, data: &[u8]) -> CodeResult<Vec<u8>> {
        if data.len() != self.data_len() {
            return Err(invalid!("Reed–Solomon {} encodes {} data bytes, not {}", self.describe(), self.data_len(), data.len()));
        }
        let mut frame = data.to_vec();
        frame.resize(self.frame_len(), 0);
        let (depth, k) = (self.interleave, self.n - PARITY);
        for c in 0..depth {
            let mut rem = [0u8; PARITY];
            for j in 0..k {
                let fb = self.conventional(data[j * depth + c]) ^ rem[0];
                rem.copy_within(1.., 0);
                rem[PARITY - 1] = 0;
                if fb != 0 {
                    for (i, r) in rem.iter_mut().enumerate() {
                        *r ^= gf::mul(fb, GENERATOR[PARITY - 1 - i]);
                    }
                }
            }
            for (i, &p) in rem.iter().enumerate() {
                frame[(k + i) * depth + c] = self.wire(p);
            }
        }
        Ok(frame)
    }

    /// Correct `frame` (exactly [`frame_len`](Self::frame_len) bytes) in
    /// place: the symbols corrected in all, or the first codeword with more
    /// errors than the code corrects (the frame is then left as it came).
    pub fn decode(&self, frame: &mut [u8]) -> Result<usize, Uncorrectable> {
        assert_eq!(frame.len(), self.frame_len(), "a Reed–Solomon frame of the wrong length");
        let depth = self.interleave;
        let mut words = Vec::with_capacity(depth);
        for c in 0..depth {
            let mut word: Vec<u8> = (0..self.n).map(|b| self.conventional(frame[b * depth + c])).collect();
            let fixed = correct(&mut word).ok_or(Uncorrectable { codeword: c })?;
            words.push((word, fixed));
        }
        for (c, (word, _)) in words.iter().enumerate().filter(|(_, (_, fixed))| *fixed > 0) {
            for (b, &x) in word.iter().enumerate() {
                frame[b * depth + c] = self.wire(x);
            }
        }
        Ok(words.iter().map(|(_, fixed)| fixed).sum())
    }

    fn conventional(&self, wire: u8) -> u8 {
        match self.basis {
            Basis::Conventional => wire,
            Basis::Dual => from_dual(wire),
        }
    }

    fn wire(&self, conventional: u8) -> u8 {
        match self.basis {
            Basis::Conventional => conventional,
            Basis::Dual => to_dual(conventional),
        }
    }
}

/// The 32 syndromes of `word` (conventional symbols, the first the highest power).
fn syndromes(word: &[u8]) -> [u8; PARITY] {
    let mut s = [0u8; PARITY];
    for (j, sj) in s.iter_mut().enumerate() {
        let root = gf::exp(PRIM * (FIRST_ROOT + j));
        *sj = word.iter().fold(0, |acc, &b| gf::mul(acc, root) ^ b);
    }
    s
}

/// Correct one codeword in place: the symbols corrected, or `None` when it
/// has more errors than the code corrects (then `word` is unchanged).
fn correct(word: &mut [u8]) -> Option<usize> {
    let s = syndromes(word);
    if s.iter().all(|&x| x == 0) {
        return Some(0);
    }
    let lambda = berlekamp_massey(&s);
    let degree = lambda.iter().rposition(|&x| x != 0).unwrap_or(0);
    if degree > T {
        return None;
    }
    // Ω(x) = S(x)·Λ(x) mod x^32.
    let mut omega = [0u8; PARITY];
    for (i, o) in omega.iter_mut().enumerate() {
        *o = (0..=i.min(degree)).fold(0, |acc, d| acc ^ gf::mul(lambda[d], s[i - d]));
    }
    let n = word.len();
    let mut found = Vec::with_capacity(degree);
    for b in 0..n {
        // Byte b holds the coefficient of x^p; its locator is X = β^p.
        let p = n - 1 - b;
        let x_inv = gf::exp(255 - (PRIM * p) % 255);
        if eval(&lambda[..=degree], x_inv) != 0 {
            continue;
        }
        // Forney: Y = X^(1−b0) · Ω(X⁻¹) / Λ'(X⁻¹), b0 the first root.
        let derivative = (1..=degree).step_by(2).fold(0, |acc, i| acc ^ gf::mul(lambda[i], pow(x_inv, i - 1)));
        if derivative == 0 {
            return None;
        }
        let scale = gf::exp((PRIM * p % 255) * ((255 + 1 - FIRST_ROOT % 255) % 255));
        found.push((b, gf::mul(scale, gf::div(eval(&omega, x_inv), derivative))));
    }
    // Roots outside the sent symbols (a shortened code's zeros) or missing: too many errors.
    if found.len() != degree {
        return None;
    }
    for &(b, y) in &found {
        word[b] ^= y;
    }
    if syndromes(word).iter().any(|&x| x != 0) {
        for &(b, y) in &found {
            word[b] ^= y;
        }
        return None;
    }
    Some(found.len())
}

/// Λ(x), the error locator, coefficient of x^i at i (Λ(0) = 1).
fn berlekamp_massey(s: &[u8; PARITY]) -> [u8; PARITY + 1] {
    let (mut lambda, mut prev) = ([0u8; PARITY + 1], [0u8; PARITY + 1]);
    lambda[0] = 1;
    prev[0] = 1;
    let (mut l, mut shift, mut last) = (0usize, 1usize, 1u8);
    for r in 0..PARITY {
        let delta = (0..=l).fold(0, |acc, i| acc ^ gf::mul(lambda[i], s[r - i]));
        if delta == 0 {
            shift += 1;
            continue;
        }
        let factor = gf::div(delta, last);
        let old = lambda;
        for i in shift..=PARITY {
            lambda[i] ^= gf::mul(factor, prev[i - shift]);
        }
        if 2 * l <= r {
            l = r + 1 - l;
            prev = old;
            last = delta;
            shift = 1;
        } else {
            shift += 1;
        }
    }
    lambda
}

/// p(x) at x, coefficient of x^i at i.
fn eval(p: &[u8], x: u8) -> u8 {
    p.iter().rev().fold(0, |acc, &c| gf::mul(acc, x) ^ c)
}

/// x^e.
fn pow(x: u8, e: usize) -> u8 {
    if e == 0 { 1 } else if x == 0 { 0 } else { gf::exp(gf::log(x) * e) }
}
