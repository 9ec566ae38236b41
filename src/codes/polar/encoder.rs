//! The polar encoder of a stream: payloads of [`PolarSpec::payload_len`]
//! bits to codewords of N bits, on all cores when there are many.

use super::spec::PolarSpec;
use super::transform::{unpack, words};
use crate::codes::encode::{Encoder, Pending};
use crate::codes::error::CodeResult;

/// Codewords below this many are encoded on the calling thread.
const PAR_MIN_CODEWORDS: usize = 64;

/// Encodes a stream of payload bits codeword by codeword; the bits of an
/// unfinished codeword wait for the rest.
///
/// # Example
/// ```
/// use gpufec::codes::encode::Encoder;
/// use gpufec::codes::polar::{Construction, PolarEncoder, PolarSpec};
/// use std::sync::Arc;
/// let spec = PolarSpec::plain(Arc::new(Construction::Nr.build(8, 4).unwrap()));
/// let mut enc = PolarEncoder::new(spec);
/// let mut x = Vec::new();
/// enc.encode(&[0, 0, 0], &mut x).unwrap();
/// assert!(x.is_empty() && !enc.at_boundary());
/// enc.encode(&[1], &mut x).unwrap(); // u_7 = 1: the all-ones row of G
/// assert_eq!(x, vec![1; 8]);
/// ```
#[derive(Debug, Clone)]
pub struct PolarEncoder {
    spec: PolarSpec,
    pending: Pending,
}

impl PolarEncoder {
    /// An encoder of `spec`'s codewords.
    pub fn new(spec: PolarSpec) -> Self {
        Self { spec, pending: Pending::default() }
    }

    /// What it encodes.
    pub fn spec(&self) -> &PolarSpec {
        &self.spec
    }
}

impl Encoder for PolarEncoder {
    fn encode(&mut self, bits: &[u8], out: &mut Vec<u8>) -> CodeResult<()> {
        let spec = &self.spec;
        self.pending.encode(bits, (spec.payload_len(), spec.n()), PAR_MIN_CODEWORDS, out, |p, x| spec.encode(p, x))
    }

    fn encode_into(&mut self, bits: &[u8], out: &mut [u8]) -> CodeResult<Option<(usize, usize)>> {
        let spec = &self.spec;
        self.pending.encode_into(bits, (spec.payload_len(), spec.n()), PAR_MIN_CODEWORDS, out, |p, x| spec.encode(p, x)).map(Some)
    }

    fn at_boundary(&self) -> bool {
        self.pending.is_empty()
    }

    fn unit_bits(&self) -> u64 {
        self.spec.payload_len() as u64
    }

    fn rate(&self) -> f64 {
        self.spec.rate()
    }
}

/// The codeword of the information bits `info` (u's order) as unpacked
/// bits into `x`: what the decoders' tests compare against.
pub fn codeword_of_info(spec: &PolarSpec, info: &[u8], x: &mut [u8]) {
    let mut v = vec![0u64; words(spec.n())];
    spec.encode_info(info, &mut v);
    unpack(&v, x);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes::polar::{Construction, PolarCode, test_bits};
    use std::sync::Arc;

    /// x = u·G by the definition: x_j = XOR of u_i over the rows i ⊇ j.
    fn by_definition(u: &[u8]) -> Vec<u8> {
        let n = u.len();
        (0..n).map(|j| (0..n).filter(|&i| i & j == j).fold(0, |acc, i| acc ^ u[i])).collect()
    }

    #[test]
    fn codewords_are_u_times_g_in_any_chunking() {
        for (n, k) in [(8, 4), (64, 33), (256, 128), (2048, 1000)] {
            let code = Arc::new(Construction::Ga { design_ebn0_db: 1.0 }.build(n, k).unwrap());
            let bits = test_bits(k * 70, n as u64);
            let mut want = Vec::new();
            for p in bits.chunks(k) {
                let mut u = vec![0; n];
                for (&i, &b) in code.info().iter().zip(p) {
                    u[i as usize] = b;
                }
                want.extend(by_definition(&u));
            }
            let mut enc = PolarEncoder::new(PolarSpec::plain(code));
            let mut out = Vec::new();
            enc.encode(&bits[..k / 2], &mut out).unwrap();
            enc.encode(&bits[k / 2..k * 3 + 1], &mut out).unwrap();
            enc.encode(&bits[k * 3 + 1..], &mut out).unwrap();
            assert!(enc.at_boundary());
            assert_eq!(out, want, "({n}, {k})");
        }
    }

    #[test]
    fn bad_bits_are_refused_and_nothing_is_appended() {
        let mut enc = PolarEncoder::new(PolarSpec::plain(Arc::new(PolarCode::from_frozen(8, &[0, 1, 2, 4]).unwrap())));
        let mut out = Vec::new();
        let e = enc.encode(&[0, 1, 2], &mut out).unwrap_err().to_string();
        assert!(e.contains("index 2") && out.is_empty() && enc.at_boundary(), "{e}");
    }
}
