//! A polar code as it is sent: the code, whether the information bits are
//! read from u or from x (systematic), and the CRC over them. Encoder and
//! decoders share it, so they agree on where every bit goes.

use super::check::InfoCheck;
use super::code::{BitKind, PolarCode};
use super::transform::{bit, polar_transform, unpack, words};
use crate::codes::error::{CodeError, CodeResult, invalid};
use crate::codes::packed::pack_word;
use std::cell::RefCell;
use std::sync::Arc;

/// The shift register of the 5G parity-check bits (TS 38.212 §5.3.1.2): five
/// bits y0..y4 as bits 0..4 of a byte.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PcRegister(u8);

impl PcRegister {
    /// Move to the next bit index: (y0, …, y4) ← (y1, y2, y3, y4, y0).
    #[inline]
    pub fn step(&mut self) {
        self.0 = (self.0 >> 1) | ((self.0 & 1) << 4);
    }

    /// `steps` moves at once (a run of frozen bits).
    #[inline]
    pub fn steps(&mut self, steps: usize) {
        for _ in 0..steps % 5 {
            self.step();
        }
    }

    /// y0: the value of a parity-check bit at the current index.
    #[inline]
    pub fn parity(self) -> u8 {
        self.0 & 1
    }

    /// Take in information bit `u` at the current index (y0 ^= u).
    #[inline]
    pub fn take(&mut self, u: u8) {
        self.0 ^= u & 1;
    }
}

/// What one codeword carries and where.
///
/// # Example
/// ```
/// use gpufec::codes::crc::CRC11;
/// use gpufec::codes::polar::{Construction, InfoCheck, PolarSpec};
/// use std::sync::Arc;
/// let code = Arc::new(Construction::Nr.build(128, 64).unwrap());
/// let spec = PolarSpec::new(code, false, Some(InfoCheck::new(&CRC11, 64).unwrap())).unwrap();
/// assert_eq!((spec.n(), spec.payload_len()), (128, 53));
/// let mut x = vec![0; 128];
/// spec.encode(&[1; 53], &mut x).unwrap();
/// ```
#[derive(Debug, Clone)]
pub struct PolarSpec {
    code: Arc<PolarCode>,
    systematic: bool,
    check: Option<InfoCheck>,
    /// The information positions as a packed mask: what systematic
    /// encoding keeps of x between its two transforms.
    info_mask: Arc<[u64]>,
}

impl PolarSpec {
    /// `code`, systematic or not, its K information bits carrying `check`
    /// (whose K must be the code's). A systematic code needs an information
    /// set closed under binary domination and no parity-check bits.
    pub fn new(code: Arc<PolarCode>, systematic: bool, check: Option<InfoCheck>) -> CodeResult<Self> {
        if let Some(c) = &check
            && c.k() != code.k()
        {
            return Err(invalid!("a {} over {} information bits for a code with K = {}", c.crc().name(), c.k(), code.k()));
        }
        if systematic && !code.parity().is_empty() {
            return Err(invalid!("systematic encoding of a code with parity-check bits is not defined"));
        }
        if systematic && !code.info_set_is_monotone() {
            return Err(invalid!(
                "systematic encoding needs an information set closed under binary domination (with i, every index whose binary digits include i's); this code's is not"
            ));
        }
        Ok(Self::build(code, systematic, check))
    }

    /// A plain code: non-systematic, no CRC.
    pub fn plain(code: Arc<PolarCode>) -> Self {
        Self::build(code, false, None)
    }

    /// The spec of parts that fit together.
    fn build(code: Arc<PolarCode>, systematic: bool, check: Option<InfoCheck>) -> Self {
        let mut info_mask = vec![0u64; words(code.n())];
        for &i in code.info() {
            info_mask[i as usize / 64] |= 1 << (i % 64);
        }
        Self { code, systematic, check, info_mask: info_mask.into() }
    }

    /// The code.
    pub fn code(&self) -> &Arc<PolarCode> {
        &self.code
    }

    /// N.
    pub fn n(&self) -> usize {
        self.code.n()
    }

    /// Whether the information bits are read from x.
    pub fn systematic(&self) -> bool {
        self.systematic
    }

    /// The CRC, if any.
    pub fn check(&self) -> Option<&InfoCheck> {
        self.check.as_ref()
    }

    /// Payload bits per codeword: K, less the CRC's parity bits.
    pub fn payload_len(&self) -> usize {
        self.check.as_ref().map_or(self.code.k(), InfoCheck::payload_len)
    }

    /// Payload bits over channel bits: the rate of Eb/N0.
    pub fn rate(&self) -> f64 {
        self.payload_len() as f64 / self.n() as f64
    }

    /// `(N, K)`, systematic or not, and the CRC.
    pub fn describe(&self) -> String {
        let mut s = self.code.describe();
        if self.systematic {
            s.push_str(" systematic");
        }
        if let Some(c) = &self.check {
            s.push_str(&format!(" + {}", c.crc().name()));
        }
        s
    }

    /// The codeword of `payload` (`payload_len` bits, 0 or 1) into `x` (N bits).
    pub fn encode(&self, payload: &[u8], x: &mut [u8]) -> CodeResult<()> {
        if x.len() != self.n() {
            return Err(CodeError::LengthMismatch(format!("a codeword of {} bits into {}", self.n(), x.len())));
        }
        thread_local! {
            // A stream encodes codeword after codeword on each thread: no allocation per codeword.
            static SCRATCH: RefCell<(Vec<u8>, Vec<u64>)> = const { RefCell::new((Vec::new(), Vec::new())) };
        }
        SCRATCH.with_borrow_mut(|(with_crc, v)| {
            let info = match &self.check {
                Some(c) => {
                    with_crc.clear();
                    c.attach(payload, with_crc)?;
                    &with_crc[..]
                }
                None if payload.len() == self.code.k() => payload,
                None => return Err(CodeError::LengthMismatch(format!("a payload of {} bits for a code with K = {}", payload.len(), self.code.k()))),
            };
            v.resize(words(self.n()), 0);
            self.encode_info(info, v);
            unpack(v, x);
            Ok(())
        })?;
        Ok(())
    }

    /// x of the K information bits `info` (u's order, CRC attached), packed
    /// into `v` (`words(N)` words).
    pub fn encode_info(&self, info: &[u8], v: &mut [u64]) {
        let n = self.n();
        self.place(info, v);
        polar_transform(v, n);
        if self.systematic {
            // x_A = info: u' = (x with the frozen bits cleared)·G, x = u'·G.
            for (w, k) in v.iter_mut().zip(self.info_mask.iter()) {
                *w &= k;
            }
            polar_transform(v, n);
        }
    }

    /// u of the information bits, packed into `v`: them in the information
    /// positions, the parity-check bits from the register, zeros elsewhere
    /// (§5.3.1.2).
    fn place(&self, info: &[u8], v: &mut [u64]) {
        let code = &self.code;
        if code.parity().is_empty() && info.len() == code.k() {
            deposit_words(info, &self.info_mask, v);
            return;
        }
        v.fill(0);
        let mut set = |i: usize, b: u8| v[i / 64] |= u64::from(b & 1) << (i % 64);
        let mut y = PcRegister::default();
        let mut next = info.iter();
        for (i, kind) in code.kinds().iter().enumerate() {
            y.step();
            match kind {
                BitKind::Frozen => {}
                BitKind::Parity => set(i, y.parity()),
                BitKind::Info => {
                    let b = next.next().copied().unwrap_or(0);
                    set(i, b);
                    y.take(b);
                }
            }
        }
    }

    /// The information bits (u's order) of a decoded codeword given by its
    /// packed u: read there, or, systematic, from x = u·G; into `info`.
    pub fn info_of_u(&self, u: &[u64], info: &mut [u8]) {
        self.read_info(u, self.systematic, info);
    }

    /// The information bits (u's order) of a decoded codeword given by its
    /// packed x: read from u = x·G, or, systematic, from x; into `info`.
    pub fn info_of_x(&self, x: &[u64], info: &mut [u8]) {
        self.read_info(x, !self.systematic, info);
    }

    /// The information positions of `v`, or of `v`·G with `transform`.
    fn read_info(&self, v: &[u64], transform: bool, info: &mut [u8]) {
        let moved;
        let v = if transform {
            let mut w = v.to_vec();
            polar_transform(&mut w, self.n());
            moved = w;
            &moved[..]
        } else {
            v
        };
        for (b, &i) in info.iter_mut().zip(self.code.info()) {
            *b = bit(v, i as usize);
        }
    }

    /// The payload of the K information bits `info` (u's order) into `out`
    /// and whether the CRC passes (`None` without one). Works on soft values
    /// too ([`InfoCheck::payload`]), which have no check.
    pub fn payload_of(&self, info: &[u8], out: &mut [u8]) -> Option<bool> {
        match &self.check {
            None => {
                out.copy_from_slice(info);
                None
            }
            Some(c) => {
                c.payload(info, out);
                Some(c.passes(info))
            }
        }
    }
}

/// Each word of `v` takes the next bits of `info` (0/1 bytes) at the set
/// places of its mask, in order: the information positions ascend, so a
/// word's bits are packed and deposited at once (BMI2's PDEP, one
/// instruction, where the CPU has it).
fn deposit_words(info: &[u8], masks: &[u64], v: &mut [u64]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("bmi2") {
        // SAFETY: the CPU has BMI2, checked just above.
        unsafe { deposit_words_bmi2(info, masks, v) };
        return;
    }
    deposit_words_with(info, masks, v, deposit_portable);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "bmi2")]
fn deposit_words_bmi2(info: &[u8], masks: &[u64], v: &mut [u64]) {
    deposit_words_with(info, masks, v, |bits, mask| std::arch::x86_64::_pdep_u64(bits, mask));
}

#[inline(always)]
fn deposit_words_with(info: &[u8], masks: &[u64], v: &mut [u64], deposit: impl Fn(u64, u64) -> u64) {
    let mut at = 0;
    for (w, &mask) in v.iter_mut().zip(masks) {
        let count = mask.count_ones() as usize;
        *w = deposit(pack_word(&info[at..at + count]), mask);
        at += count;
    }
}

/// PDEP bit by bit.
fn deposit_portable(bits: u64, mask: u64) -> u64 {
    let (mut out, mut rest, mut b) = (0, mask, bits);
    while rest != 0 {
        let low = rest & rest.wrapping_neg();
        if b & 1 != 0 {
            out |= low;
        }
        b >>= 1;
        rest &= rest - 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_take_the_next_bits_at_their_mask_places() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..200 {
            let masks: Vec<u64> = (0..4).map(|_| next() & next()).collect();
            let info: Vec<u8> = (0..masks.iter().map(|m| m.count_ones()).sum::<u32>()).map(|_| (next() & 1) as u8).collect();
            let mut want = vec![0u64; 4];
            let mut bits = info.iter();
            for i in 0..256 {
                if masks[i / 64] >> (i % 64) & 1 == 1 {
                    want[i / 64] |= u64::from(*bits.next().unwrap()) << (i % 64);
                }
            }
            let (mut got, mut portable) = (vec![7u64; 4], vec![7u64; 4]);
            deposit_words(&info, &masks, &mut got);
            deposit_words_with(&info, &masks, &mut portable, deposit_portable);
            assert_eq!(got, want);
            assert_eq!(portable, want);
        }
    }
    use crate::codes::crc::CRC11;
    use crate::codes::polar::transform::pack;
    use crate::codes::polar::{Construction, test_bits};

    #[test]
    fn systematic_codewords_carry_the_information_bits() {
        for (n, k) in [(8, 4), (64, 20), (1024, 512), (4096, 1000)] {
            let code = Arc::new(Construction::Ga { design_ebn0_db: 2.0 }.build(n, k).unwrap());
            let check = (k > CRC11.width()).then(|| InfoCheck::new(&CRC11, k).unwrap());
            let spec = PolarSpec::new(code.clone(), true, check).unwrap();
            let payload = test_bits(spec.payload_len(), n as u64);
            let mut x = vec![0; n];
            spec.encode(&payload, &mut x).unwrap();
            let mut info = Vec::new();
            match spec.check() {
                Some(c) => c.attach(&payload, &mut info).unwrap(),
                None => info = payload.clone(),
            }
            let at: Vec<u8> = code.info().iter().map(|&i| x[i as usize]).collect();
            assert_eq!(at, info, "({n}, {k})");
            // And x is a codeword: its u = x·G has zeros where frozen.
            let mut v = vec![0; words(n)];
            pack(&x, &mut v);
            polar_transform(&mut v, n);
            assert!((0..n).all(|i| code.kind(i) != BitKind::Frozen || bit(&v, i) == 0));
            let mut back = vec![0; k];
            spec.info_of_u(&v, &mut back);
            assert_eq!(back, info);
        }
    }

    #[test]
    fn bad_specs_are_refused() {
        let code = Arc::new(PolarCode::from_frozen(8, &[0, 1, 2, 7]).unwrap());
        let e = PolarSpec::new(code.clone(), true, None).unwrap_err().to_string();
        assert!(e.contains("binary domination"), "{e}");
        let e = PolarSpec::new(code.clone(), false, Some(InfoCheck::new(&CRC11, 12).unwrap())).unwrap_err().to_string();
        assert!(e.contains("K = 4"), "{e}");
        let spec = PolarSpec::plain(code);
        assert!(spec.encode(&[0; 3], &mut [0; 8]).is_err());
        assert!(spec.encode(&[0; 4], &mut [0; 7]).is_err());
    }
}
