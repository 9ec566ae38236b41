//! The turbo encoder: blocks of K information bits to sent blocks of
//! 3K + 4m bits in the family's [`Layout`].

use super::code::{Layout, TurboCode};
use crate::codes::encode::{Encoder, Pending};
use crate::codes::error::CodeResult;
use crate::codes::packed::{BIT_BYTES, pack_word};

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

/// Encode one block of K bits into `out` (`Layout::len` bits), allocating
/// nothing: the two constituent encoders step together, eight inputs per
/// table look-up each (two independent chains of look-ups, which is what
/// limits an encoder), the interleaved inputs gathered straight into bytes
/// and the parity bytes unpacked eight bits a store.
pub fn encode_block(code: &TurboCode, bits: &[u8], out: &mut [u8]) {
    let l: Layout = code.layout();
    let (k, t, perm) = (l.k, code.trellis(), code.permutation());
    let (d0, rest) = out.split_at_mut(l.stream_start(1));
    let (d1, d2) = rest.split_at_mut(l.stream_len(1));
    d0[..k].copy_from_slice(bits);
    let (z1, z2) = (&mut d1[..k], &mut d2[..k]);
    let mut s = (0, 0);
    let whole = k / 8 * 8;
    let steps = bits[..whole].chunks_exact(8).zip(perm.chunks_exact(8)).zip(z1.chunks_exact_mut(8).zip(z2.chunks_exact_mut(8)));
    for ((x, p), (o1, o2)) in steps {
        let x2 = p.iter().enumerate().fold(0u8, |acc, (j, &i)| acc | (bits[i as usize] & 1) << j);
        let ((s1, y1), (s2, y2)) = (t.step8(s.0, pack_word(x) as u8), t.step8(s.1, x2));
        o1.copy_from_slice(&BIT_BYTES[usize::from(y1)].to_le_bytes());
        o2.copy_from_slice(&BIT_BYTES[usize::from(y2)].to_le_bytes());
        s = (s1, s2);
    }
    for i in whole..k {
        let (u1, u2) = (usize::from(bits[i] & 1), usize::from(bits[perm[i] as usize] & 1));
        (z1[i], z2[i]) = (t.parity(s.0, u1), t.parity(s.1, u2));
        s = (t.next(s.0, u1), t.next(s.1, u2));
    }
    let (tail1, tail2) = (t.terminate(s.0), t.terminate(s.1));
    for (j, &(x, z)) in tail1[..l.m].iter().chain(&tail2[..l.m]).enumerate() {
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

    /// Any permutation, any length (bytes and a remainder) and every
    /// memory: the block is what stepping each constituent encoder one bit
    /// at a time through the trellis gives.
    #[test]
    fn every_length_and_memory_is_the_stepwise_encoder() {
        use crate::codes::turbo::qpp::Interleaver;
        use crate::codes::turbo::{Rsc, RscTrellis};
        fn stepwise(t: &RscTrellis, bits: impl Iterator<Item = u8>) -> (Vec<u8>, Vec<(u8, u8)>) {
            let mut s = 0;
            let z = bits.map(|u| (t.parity(s, u.into()), s = t.next(s, u.into())).0).collect();
            (z, t.terminate(s)[..t.memory()].to_vec())
        }
        for (fb, ff) in [("7", "5"), ("13", "15"), ("31", "27")] {
            for k in [1, 4, 13, 64, 101, 1027] {
                // A scrambled permutation: the indices sorted by a hash of each.
                let mut perm: Vec<u32> = (0..k as u32).collect();
                perm.sort_by_key(|&i| i.wrapping_mul(2_654_435_761).rotate_left(11));
                let il = Interleaver::from_permutation(perm.clone()).unwrap();
                let code = TurboCode::new(Rsc::from_octal(fb, ff).unwrap(), &il).unwrap();
                let bits = test_bits(k, k as u64 + 5);
                let mut out = vec![9u8; code.coded_len()];
                encode_block(&code, &bits, &mut out);
                let (l, t) = (code.layout(), code.trellis());
                let (z1, t1) = stepwise(t, bits.iter().copied());
                let (z2, t2) = stepwise(t, perm.iter().map(|&p| bits[p as usize]));
                let mut want = vec![9u8; code.coded_len()];
                want[..k].copy_from_slice(&bits);
                want[l.stream_start(1)..][..k].copy_from_slice(&z1);
                want[l.stream_start(2)..][..k].copy_from_slice(&z2);
                for (j, &(x, z)) in t1.iter().chain(&t2).enumerate() {
                    (want[l.tail(2 * j)], want[l.tail(2 * j + 1)]) = (x, z);
                }
                assert_eq!(out, want, "{fb}/{ff} K {k}");
            }
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
