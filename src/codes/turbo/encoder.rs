//! The turbo encoder: blocks of K information bits to sent blocks of
//! 3K + 4m bits in the family's [`Layout`].

use super::code::{Layout, TurboCode};
use crate::codes::encode::{Encoder, Pending};
use crate::codes::error::CodeResult;

/// Encodes a stream of information bits block by block; bits of an
/// unfinished block wait for the rest.
///
/// # Example
/// ```
/// use gpufec::codes::encode::Encoder;
/// use gpufec::codes::turbo::qpp::Interleaver;
/// use gpufec::codes::turbo::{Rsc, TurboCode, TurboEncoder};
/// let code = TurboCode::new(Rsc::lte(), &Interleaver::from_permutation(vec![0, 3, 2, 1]).unwrap()).unwrap();
/// let mut enc = TurboEncoder::new(code);
/// let mut out = Vec::new();
/// enc.encode(&[1, 0, 1], &mut out).unwrap();
/// assert!(out.is_empty() && !enc.at_boundary());
/// enc.encode(&[1], &mut out).unwrap();
/// assert_eq!(out.len(), 3 * 4 + 12);
/// assert_eq!(&out[..4], &[1, 0, 1, 1]); // d0 starts with the systematic bits
/// ```
#[derive(Debug, Clone)]
pub struct TurboEncoder {
    code: TurboCode,
    pending: Pending,
}

impl TurboEncoder {
    /// An encoder of `code`.
    pub fn new(code: TurboCode) -> Self {
        Self { code, pending: Pending::default() }
    }

    /// The code.
    pub fn code(&self) -> &TurboCode {
        &self.code
    }
}

/// Encode one block of K bits into `out` (`Layout::len` bits).
pub fn encode_block(code: &TurboCode, bits: &[u8], out: &mut [u8]) {
    let l: Layout = code.layout();
    let (k, t) = (l.k, code.trellis());
    let interleaved: Vec<u8> = code.permutation().iter().map(|&p| bits[p as usize]).collect();
    let (mut tail1, mut tail2) = (Vec::with_capacity(l.m), Vec::with_capacity(l.m));
    out[..k].copy_from_slice(bits);
    t.encode(bits, &mut out[l.stream_start(1)..][..k], &mut tail1);
    t.encode(&interleaved, &mut out[l.stream_start(2)..][..k], &mut tail2);
    for (j, &(x, z)) in tail1.iter().chain(&tail2).enumerate() {
        out[l.tail(2 * j)] = x;
        out[l.tail(2 * j + 1)] = z;
    }
}

/// [`encode_block`] of `code` as [`Pending`] takes it.
fn block_of(code: &TurboCode) -> impl Fn(&[u8], &mut [u8]) -> CodeResult<()> + Sync + '_ {
    move |info, coded| {
        encode_block(code, info, coded);
        Ok(())
    }
}

impl Encoder for TurboEncoder {
    fn encode(&mut self, bits: &[u8], out: &mut Vec<u8>) -> CodeResult<()> {
        let code = &self.code;
        self.pending.encode(bits, (code.k(), code.coded_len()), 1, out, block_of(code))
    }

    fn encode_into(&mut self, bits: &[u8], out: &mut [u8]) -> CodeResult<Option<(usize, usize)>> {
        let code = &self.code;
        self.pending.encode_into(bits, (code.k(), code.coded_len()), 1, out, block_of(code)).map(Some)
    }

    fn at_boundary(&self) -> bool {
        self.pending.is_empty()
    }

    fn unit_bits(&self) -> u64 {
        self.code.k() as u64
    }

    fn rate(&self) -> f64 {
        self.code.k() as f64 / self.code.coded_len() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes::turbo::test_bits;

    /// One LTE constituent encoder as 36.212's figure draws it: parity
    /// bits, then the three tail pairs (x, z).
    fn rsc_by_hand(bits: impl Iterator<Item = u8>) -> (Vec<u8>, Vec<(u8, u8)>) {
        let (mut d1, mut d2, mut d3) = (0u8, 0u8, 0u8);
        let mut z = Vec::new();
        for u in bits {
            let a = u ^ d2 ^ d3;
            z.push(a ^ d1 ^ d3);
            (d3, d2, d1) = (d2, d1, a);
        }
        let tail = (0..3)
            .map(|_| {
                let x = d2 ^ d3;
                let zt = d1 ^ d3;
                (d3, d2, d1) = (d2, d1, 0);
                (x, zt)
            })
            .collect();
        (z, tail)
    }

    /// The 36.212 block written out independently: d0 = x, d1 = z, d2 = z'
    /// with the interleaver Π(i) = (f1·i + f2·i²) mod K, and the tails as
    /// §5.1.3.2.2 lists them.
    fn lte_by_hand(bits: &[u8], f1: usize, f2: usize) -> Vec<u8> {
        let k = bits.len();
        let (z, t) = rsc_by_hand(bits.iter().copied());
        let (z2, t2) = rsc_by_hand((0..k).map(|i| bits[(f1 * i + f2 * i * i) % k]));
        let mut d = [bits.to_vec(), z, z2];
        let tails = [
            [t[0].0, t[1].1, t2[0].0, t2[1].1],
            [t[0].1, t[2].0, t2[0].1, t2[2].0],
            [t[1].0, t[2].1, t2[1].0, t2[2].1],
        ];
        for (s, tail) in d.iter_mut().zip(tails) {
            s.extend_from_slice(&tail);
        }
        d.concat()
    }

    #[test]
    fn lte_blocks_are_the_standards() {
        for (k, f1, f2) in [(40, 3, 10), (1024, 31, 64), (6144, 263, 480)] {
            let code = TurboCode::lte(k).unwrap();
            let bits = test_bits(3 * k, k as u64);
            let mut out = Vec::new();
            let mut enc = TurboEncoder::new(code);
            // Fed in uneven pieces: blocks wait for their bits.
            enc.encode(&bits[..k / 2], &mut out).unwrap();
            enc.encode(&bits[k / 2..2 * k + 7], &mut out).unwrap();
            enc.encode(&bits[2 * k + 7..], &mut out).unwrap();
            assert!(enc.at_boundary());
            let want: Vec<u8> = bits.chunks(k).flat_map(|b| lte_by_hand(b, f1, f2)).collect();
            assert_eq!(out, want, "K {k}");
        }
    }

    #[test]
    fn bad_bits_are_refused_and_nothing_is_appended() {
        let mut enc = TurboEncoder::new(TurboCode::lte(40).unwrap());
        let mut out = Vec::new();
        let e = enc.encode(&[0, 1, 2], &mut out).unwrap_err().to_string();
        assert!(e.contains("index 2") && out.is_empty() && enc.at_boundary(), "{e}");
    }
}
