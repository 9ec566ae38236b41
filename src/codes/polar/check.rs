//! The CRC a polar codeword's information bits carry, as the encoder
//! attaches it and the decoders check it: a plain CRC after the payload, or
//! the 5G downlink's CRC24C (24 leading ones, an RNTI mask, and the input
//! bit interleaver spreading the CRC among the payload).

use crate::codes::crc::Crc;
use crate::codes::error::{CodeError, CodeResult, invalid};
use std::sync::Arc;

/// A CRC over the K information bits of a codeword: c = [payload | parity],
/// placed into u in the order c' = (c_{Π(0)}, …, c_{Π(K−1)}).
///
/// # Example
/// ```
/// use gpufec::codes::crc::CRC11;
/// use gpufec::codes::polar::InfoCheck;
/// let check = InfoCheck::new(&CRC11, 40).unwrap();
/// let payload = vec![1u8; 29];
/// let mut info = Vec::new();
/// check.attach(&payload, &mut info).unwrap();
/// assert!(check.passes(&info));
/// let mut back = vec![0; 29];
/// check.payload(&info, &mut back);
/// assert_eq!(back, payload);
/// info[3] ^= 1;
/// assert!(!check.passes(&info));
/// ```
#[derive(Debug, Clone)]
pub struct InfoCheck {
    crc: &'static Crc,
    k: usize,
    /// Π: position k of c' holds c_{Π(k)}; `None` is the identity.
    order: Option<Arc<[u16]>>,
    /// XOR on the parity of the payload: the parity the leading ones add
    /// (the CRC is linear and starts from 0), and the RNTI mask.
    xor: u32,
}

impl InfoCheck {
    /// `crc` after a payload of K − L bits, K = `k` information bits in all.
    pub fn new(crc: &'static Crc, k: usize) -> CodeResult<Self> {
        if k <= crc.width() {
            return Err(invalid!("{k} information bits cannot carry a payload and {} parity bits of {}", crc.width(), crc.name()));
        }
        Ok(Self { crc, k, order: None, xor: 0 })
    }

    /// Also compute the CRC as if `ones` bits of value 1 came before the
    /// payload (DCI: 24), and XOR `mask` onto the parity (an RNTI onto its
    /// last 16 bits: `mask` < 2^L).
    pub fn with_prefix_and_mask(mut self, ones: usize, mask: u32) -> CodeResult<Self> {
        let l = self.crc.width();
        if l < 32 && mask >> l != 0 {
            return Err(invalid!("mask {mask:#x} is wider than the {l} parity bits of {}", self.crc.name()));
        }
        // parity([1^ones, a]) = parity([1^ones, 0^|a|]) ^ parity(a).
        let mut prefixed = vec![1u8; ones];
        prefixed.resize(ones + self.payload_len(), 0);
        self.xor = self.crc.parity(&prefixed) ^ mask;
        Ok(self)
    }

    /// Place c into u in the order `order` (a permutation of 0..K, checked).
    pub fn with_order(mut self, order: Vec<u16>) -> CodeResult<Self> {
        if order.len() != self.k {
            return Err(CodeError::LengthMismatch(format!("an interleaver of {} positions for {} information bits", order.len(), self.k)));
        }
        let mut seen = vec![false; self.k];
        for &p in &order {
            match seen.get_mut(usize::from(p)) {
                Some(s) if !*s => *s = true,
                _ => return Err(invalid!("interleaver position {p} is out of range or repeated")),
            }
        }
        self.order = Some(order.into());
        Ok(self)
    }

    /// The CRC.
    pub fn crc(&self) -> &'static Crc {
        self.crc
    }

    /// K: information bits, parity included.
    pub fn k(&self) -> usize {
        self.k
    }

    /// K − L: payload bits.
    pub fn payload_len(&self) -> usize {
        self.k - self.crc.width()
    }

    /// Append the K information bits c' of `payload` (K − L bits, 0 or 1)
    /// to `out`.
    pub fn attach(&self, payload: &[u8], out: &mut Vec<u8>) -> CodeResult<()> {
        if payload.len() != self.payload_len() {
            return Err(CodeError::LengthMismatch(format!("a payload of {} bits where {} + {} carries {}", payload.len(), self.crc.name(), self.payload_len(), self.payload_len())));
        }
        let parity = self.crc.parity(payload) ^ self.xor;
        let l = self.crc.width();
        let c: Vec<u8> = payload.iter().copied().chain((0..l).rev().map(|j| ((parity >> j) & 1) as u8)).collect();
        match &self.order {
            None => out.extend_from_slice(&c),
            Some(order) => out.extend(order.iter().map(|&p| c[usize::from(p)])),
        }
        Ok(())
    }

    /// Whether the K information bits `info` (in u's order, c') pass.
    pub fn passes(&self, info: &[u8]) -> bool {
        debug_assert_eq!(info.len(), self.k);
        let l = self.crc.width();
        match &self.order {
            None => self.crc.parity(&info[..self.k - l]) ^ self.xor == tail(&info[self.k - l..]),
            Some(_) => {
                let mut c = vec![0u8; self.k];
                self.deinterleave(info, &mut c);
                self.crc.parity(&c[..self.k - l]) ^ self.xor == tail(&c[self.k - l..])
            }
        }
    }

    /// Whether c is placed into u as it is (no interleaver): the payload is
    /// then the first K − L information bits.
    pub fn in_order(&self) -> bool {
        self.order.is_none()
    }

    /// The check as a linear map, for a decoder that tests it where bits
    /// are packed (the GPU): the syndrome of K information bits (u's order)
    /// is the XOR of the columns, one per bit, of the bits that are 1, and
    /// they pass exactly when it equals the second value. (The payload's
    /// parity is linear, bit j of a payload of P bits adding D^(P−1−j+L)
    /// mod g; a parity bit adds its own place; the leading ones and the
    /// mask are the constant.)
    pub fn syndrome_columns(&self) -> (Vec<u32>, u32) {
        let l = self.crc.width();
        let payload = self.payload_columns();
        // c's columns: the payload's, then the parity bits, p_0 the most significant.
        let c: Vec<u32> = payload.into_iter().chain((0..l).rev().map(|j| 1u32 << j)).collect();
        let columns = match &self.order {
            None => c,
            Some(order) => order.iter().map(|&o| c[usize::from(o)]).collect(),
        };
        (columns, self.xor)
    }

    /// The payload's columns in c's order: the CRC's parity of a payload
    /// of K − L bits is the XOR of the columns of its bits that are 1, so
    /// that the parity an encoder attaches is that XOR with the constant of
    /// [`Self::syndrome_columns`] (the device link's encoder computes it so).
    pub(crate) fn payload_columns(&self) -> Vec<u32> {
        let (l, p) = (self.crc.width(), self.payload_len());
        let top = 1u64 << l;
        // D^(L+n) mod g for n = 0, 1, …: the parity of a 1 followed by n zeros.
        let mut r = u64::from(self.crc.poly());
        let mut payload = vec![0u32; p];
        for col in payload.iter_mut().rev() {
            *col = r as u32;
            r <<= 1;
            if r & top != 0 {
                r ^= top | u64::from(self.crc.poly());
            }
        }
        payload
    }

    /// Π, where c is placed into u interleaved: position k of c' holds c_{Π(k)}.
    pub(crate) fn order(&self) -> Option<&[u16]> {
        self.order.as_deref()
    }

    /// The payload of `info` (values in u's order c': bits, or their soft
    /// values) into `out` (K − L long).
    pub fn payload<V: Copy + Default>(&self, info: &[V], out: &mut [V]) {
        match &self.order {
            None => out.copy_from_slice(&info[..out.len()]),
            Some(_) => {
                let mut c = vec![V::default(); self.k];
                self.deinterleave(info, &mut c);
                out.copy_from_slice(&c[..out.len()]);
            }
        }
    }

    /// c from c'.
    fn deinterleave<V: Copy>(&self, info: &[V], c: &mut [V]) {
        match &self.order {
            None => c.copy_from_slice(info),
            Some(order) => {
                for (&p, &v) in order.iter().zip(info) {
                    c[usize::from(p)] = v;
                }
            }
        }
    }
}

/// Bits MSB first as a number.
fn tail(bits: &[u8]) -> u32 {
    bits.iter().fold(0, |acc, &b| (acc << 1) | u32::from(b & 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes::crc::{CRC6, CRC24C};

    #[test]
    fn the_syndrome_columns_tell_what_passes_tells() {
        use rand::{Rng, SeedableRng, rngs::SmallRng};
        let mut rng = SmallRng::seed_from_u64(7);
        let checks = [
            InfoCheck::new(&CRC24C, 40).unwrap().with_prefix_and_mask(24, 0xBEEF).unwrap().with_order((0..40).rev().collect()).unwrap(),
            InfoCheck::new(&CRC6, 19).unwrap(),
            InfoCheck::new(&crate::codes::crc::CRC11, 200).unwrap(),
        ];
        for check in &checks {
            let (columns, target) = check.syndrome_columns();
            assert_eq!(columns.len(), check.k());
            let syndrome = |info: &[u8]| info.iter().zip(&columns).filter(|(b, _)| **b == 1).fold(0, |s, (_, c)| s ^ c);
            for _ in 0..200 {
                let payload: Vec<u8> = (0..check.payload_len()).map(|_| rng.random_range(0..2)).collect();
                let mut info = Vec::new();
                check.attach(&payload, &mut info).unwrap();
                assert_eq!(syndrome(&info), target);
                // The parity attached is the payload columns' XOR with the constant.
                let parity = payload.iter().zip(check.payload_columns()).filter(|(b, _)| **b == 1).fold(target, |s, (_, c)| s ^ c);
                let mut c = vec![0u8; check.k()];
                check.deinterleave(&info, &mut c);
                assert_eq!(tail(&c[check.payload_len()..]), parity);
                let flip = rng.random_range(0..check.k());
                info[flip] ^= 1;
                assert_eq!(syndrome(&info) == target, check.passes(&info));
            }
        }
    }

    #[test]
    fn prefix_mask_and_order_round_trip() {
        let check = InfoCheck::new(&CRC24C, 40).unwrap().with_prefix_and_mask(24, 0xBEEF).unwrap().with_order((0..40).rev().collect()).unwrap();
        let payload: Vec<u8> = (0..16).map(|i| (i % 3 == 0) as u8).collect();
        let mut info = Vec::new();
        check.attach(&payload, &mut info).unwrap();
        assert!(check.passes(&info));
        // The CRC of the 24 ones and the payload, its last 16 bits masked, in reverse.
        let mut with_ones = vec![1u8; 24];
        with_ones.extend_from_slice(&payload);
        let parity = CRC24C.parity(&with_ones) ^ 0xBEEF;
        let reversed: Vec<u8> = info.iter().rev().copied().collect();
        assert_eq!(tail(&reversed[16..]), parity);
        let mut back = vec![0; 16];
        check.payload(&info, &mut back);
        assert_eq!(back, payload);
        for i in 0..40 {
            info[i] ^= 1;
            assert!(!check.passes(&info), "flip {i}");
            info[i] ^= 1;
        }
    }

    #[test]
    fn bad_checks_are_refused() {
        assert!(InfoCheck::new(&CRC6, 6).is_err());
        assert!(InfoCheck::new(&CRC6, 7).unwrap().with_prefix_and_mask(0, 64).is_err());
        assert!(InfoCheck::new(&CRC6, 8).unwrap().with_order(vec![0, 1, 2]).is_err());
        assert!(InfoCheck::new(&CRC6, 8).unwrap().with_order(vec![0, 1, 2, 3, 4, 5, 6, 6]).is_err());
        assert!(InfoCheck::new(&CRC6, 8).unwrap().attach(&[0; 3], &mut Vec::new()).is_err());
    }
}
