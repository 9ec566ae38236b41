//! A polar code: its length N = 2^m and what each bit u_i of x = u·G
//! carries (frozen zero, information, or a 5G parity-check bit).

use super::{MAX_LOG_N, MAX_N, MIN_LOG_N, MIN_N};
use crate::codes::error::{CodeResult, invalid};

/// What bit u_i of a polar code carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BitKind {
    /// Always 0.
    Frozen,
    /// An information bit (a payload or CRC bit).
    Info,
    /// A parity-check bit of TS 38.212 §5.3.1.2: the parity of earlier
    /// information bits, known to the decoder once those are decided.
    Parity,
}

/// A polar code of N = 2^m bits, x = u·G with G = F^⊗m (F = [[1, 0], [1, 1]],
/// no bit reversal), and the kind of every bit of u.
///
/// # Example
/// ```
/// use gpufec::codes::polar::{BitKind, PolarCode};
/// // The (8, 4) code of the seed paper: information set {3, 5, 6, 7}.
/// let code = PolarCode::from_reliability(8, 4, &[0u16, 1, 2, 4, 3, 5, 6, 7]).unwrap();
/// assert_eq!(code.info(), &[3, 5, 6, 7]);
/// assert_eq!(code.kind(4), BitKind::Frozen);
/// assert!(PolarCode::from_reliability(12, 4, &[0u16; 12]).is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolarCode {
    m: u32,
    kinds: Vec<BitKind>,
    info: Vec<u32>,
    parity: Vec<u32>,
}

/// Check N (a power of two in [`MIN_N`]..=[`MAX_N`]) and K (1..=N), the
/// sizes every construction takes; returns m = log2 N.
pub fn check_sizes(n: usize, k: usize) -> CodeResult<u32> {
    if !n.is_power_of_two() || !(MIN_N..=MAX_N).contains(&n) {
        return Err(invalid!("a polar code of N = {n} bits: N must be a power of two from {MIN_N} to {MAX_N} (2^{MIN_LOG_N} to 2^{MAX_LOG_N})"));
    }
    if k == 0 || k > n {
        return Err(invalid!("a polar code of N = {n} bits carrying K = {k} information bits: K must be 1..={n}"));
    }
    Ok(n.trailing_zeros())
}

impl PolarCode {
    /// A code of N = `kinds.len()` bits with the given bit kinds; it must
    /// carry at least one information bit.
    pub fn new(kinds: Vec<BitKind>) -> CodeResult<Self> {
        let n = kinds.len();
        let k = kinds.iter().filter(|&&b| b == BitKind::Info).count();
        let m = check_sizes(n, k.max(1))?;
        if k == 0 {
            return Err(invalid!("a polar code of N = {n} bits with no information bit carries nothing"));
        }
        let positions = |want| (0..n as u32).filter(|&i| kinds[i as usize] == want).collect();
        let (info, parity) = (positions(BitKind::Info), positions(BitKind::Parity));
        Ok(Self { m, kinds, info, parity })
    }

    /// The code of N = `n` bits whose K = `k` most reliable bits carry
    /// information, the rest frozen; `order` lists the bit indices least
    /// reliable first and must be a permutation of 0..N (checked).
    pub fn from_reliability<Q: Copy + Into<u64>>(n: usize, k: usize, order: &[Q]) -> CodeResult<Self> {
        check_sizes(n, k)?;
        if order.len() != n {
            return Err(invalid!("a reliability order of {} indices for a code of N = {n} bits", order.len()));
        }
        let mut kinds = vec![BitKind::Frozen; n];
        let mut seen = vec![false; n];
        for (rank, &q) in order.iter().enumerate() {
            let q = q.into();
            let i = usize::try_from(q).ok().filter(|&i| i < n).ok_or_else(|| invalid!("bit index {q} in a reliability order of N = {n} bits"))?;
            if std::mem::replace(&mut seen[i], true) {
                return Err(invalid!("bit index {i} appears twice in a reliability order"));
            }
            if rank >= n - k {
                kinds[i] = BitKind::Info;
            }
        }
        Self::new(kinds)
    }

    /// The code whose frozen bits are the indices `frozen` (each below N,
    /// no index twice); every other bit carries information.
    pub fn from_frozen(n: usize, frozen: &[usize]) -> CodeResult<Self> {
        check_sizes(n, n.saturating_sub(frozen.len()).max(1))?;
        let mut kinds = vec![BitKind::Info; n];
        for &i in frozen {
            match kinds.get_mut(i) {
                None => return Err(invalid!("frozen bit index {i} is outside a code of N = {n} bits")),
                Some(BitKind::Frozen) => return Err(invalid!("frozen bit index {i} is given twice")),
                Some(kind) => *kind = BitKind::Frozen,
            }
        }
        Self::new(kinds)
    }

    /// N: bits of a codeword.
    pub fn n(&self) -> usize {
        self.kinds.len()
    }

    /// m = log2 N: stages of the encoder.
    pub fn m(&self) -> u32 {
        self.m
    }

    /// K: information bits (payload and CRC; parity-check bits not counted).
    pub fn k(&self) -> usize {
        self.info.len()
    }

    /// What bit u_i carries.
    pub fn kind(&self, i: usize) -> BitKind {
        self.kinds[i]
    }

    /// Every bit's kind, u_0 first.
    pub fn kinds(&self) -> &[BitKind] {
        &self.kinds
    }

    /// The information bit indices, ascending: the order in which the
    /// information bits are placed into u.
    pub fn info(&self) -> &[u32] {
        &self.info
    }

    /// The parity-check bit indices, ascending (empty for most codes).
    pub fn parity(&self) -> &[u32] {
        &self.parity
    }

    /// Whether the information set is closed under binary domination: with
    /// i an information bit, so is every j whose binary digits include i's.
    /// The systematic encoder's two passes need this (a code built from a
    /// reliability order that respects the partial order of polar bit
    /// channels has it: the 5G sequence and Gaussian approximation do).
    pub fn info_set_is_monotone(&self) -> bool {
        let n = self.n();
        self.info.iter().all(|&i| (0..self.m).map(|b| i as usize | 1 << b).all(|j| j >= n || self.kinds[j] == BitKind::Info))
    }

    /// `(N, K)` with the parity-check bits, e.g. `(1024, 512)` or `(64, 20 + 3 PC)`.
    pub fn describe(&self) -> String {
        match self.parity.len() {
            0 => format!("({}, {})", self.n(), self.k()),
            p => format!("({}, {} + {p} PC)", self.n(), self.k()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_checked_first() {
        for (n, k, says) in [
            (12, 4, "power of two"),
            (4, 2, "power of two from 8"),
            (MAX_N * 2, 4, "power of two"),
            (0, 0, "power of two"),
            (16, 0, "K must be 1..=16"),
            (16, 17, "K must be 1..=16"),
        ] {
            let e = check_sizes(n, k).unwrap_err().to_string();
            assert!(e.contains(says), "N {n} K {k}: {e}");
        }
        assert_eq!(check_sizes(MAX_N, MAX_N).unwrap(), MAX_LOG_N);
        assert_eq!(check_sizes(MIN_N, 1).unwrap(), MIN_LOG_N);
    }

    #[test]
    fn orders_and_frozen_sets_are_checked() {
        let e = PolarCode::from_reliability(8, 4, &[0u16, 1, 2, 3]).unwrap_err().to_string();
        assert!(e.contains("4 indices"), "{e}");
        let e = PolarCode::from_reliability(8, 4, &[0u16, 1, 2, 3, 4, 5, 6, 6]).unwrap_err().to_string();
        assert!(e.contains("twice"), "{e}");
        let e = PolarCode::from_reliability(8, 4, &[0u16, 1, 2, 3, 4, 5, 6, 8]).unwrap_err().to_string();
        assert!(e.contains("bit index 8"), "{e}");
        let e = PolarCode::from_frozen(8, &[0, 9]).unwrap_err().to_string();
        assert!(e.contains("index 9"), "{e}");
        let e = PolarCode::from_frozen(8, &[0, 1, 1]).unwrap_err().to_string();
        assert!(e.contains("twice"), "{e}");
        let e = PolarCode::from_frozen(8, &[0, 1, 2, 3, 4, 5, 6, 7]).unwrap_err().to_string();
        assert!(e.contains("no information bit"), "{e}");
        let code = PolarCode::from_frozen(8, &[0, 1, 2, 4]).unwrap();
        assert_eq!((code.n(), code.k(), code.m(), code.info()), (8, 4, 3, &[3, 5, 6, 7][..]));
        assert!(code.info_set_is_monotone());
        assert!(!PolarCode::from_frozen(8, &[0, 1, 2, 7]).unwrap().info_set_is_monotone());
        assert_eq!(code.describe(), "(8, 4)");
    }
}
