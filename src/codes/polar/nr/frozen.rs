//! The frozen set of a 5G polar code block (TS 38.212 §5.3.1.2): the bits
//! rate matching does not send are frozen first (§5.4.1.1), then the K +
//! n_PC most reliable of the rest carry information and parity checks.

use super::rate_match::{Selection, subblock_index};
use crate::codes::error::{CodeResult, invalid};
use crate::codes::polar::code::{BitKind, PolarCode};
use crate::codes::polar::sequence::nr_reliability;

/// The parity-check bits of a code block (§5.3.1.2, §6.3.1.3.1): `total`
/// of them (n_PC), of which `weight` (n_PC^wm) go to the minimum row
/// weight position.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ParityChecks {
    /// n_PC.
    pub total: usize,
    /// n_PC^wm (at most `total`).
    pub weight: usize,
}

/// The code of a block of `k` bits (CRC included) sent in `e` bits by a
/// mother code of `n` bits, with `pc` parity-check bits.
///
/// # Example
/// ```
/// use gpufec::codes::polar::nr::{ParityChecks, nr_code};
/// let code = nr_code(56, 864, 512, ParityChecks::default()).unwrap();
/// assert_eq!((code.n(), code.k()), (512, 56));
/// assert!(nr_code(56, 40, 64, ParityChecks::default()).is_err()); // E too small for K
/// ```
pub fn nr_code(k: usize, e: usize, n: usize, pc: ParityChecks) -> CodeResult<PolarCode> {
    if pc.weight > pc.total {
        return Err(invalid!("{} of {} parity-check bits at the minimum row weight", pc.weight, pc.total));
    }
    let order = nr_reliability(n)?;
    let mut kinds = vec![BitKind::Info; n];
    // Q_F^tmp: the bits rate matching leaves out (§5.4.1.1).
    let selection = Selection::of(k, e, n);
    match selection {
        Selection::Repetition => {}
        Selection::Puncturing => {
            for j in 0..n - e {
                kinds[subblock_index(n, j)] = BitKind::Frozen;
            }
            // ⌈3N/4 − E/2⌉ or ⌈9N/16 − E/4⌉ more at the start, in integers.
            let more = if 4 * e >= 3 * n { (3 * n - 2 * e).div_ceil(4) } else { (9 * n - 4 * e).div_ceil(16) };
            kinds[..more.min(n)].fill(BitKind::Frozen);
        }
        Selection::Shortening => {
            for j in e..n {
                kinds[subblock_index(n, j)] = BitKind::Frozen;
            }
        }
    }
    let want = k + pc.total;
    let free = kinds.iter().filter(|&&b| b == BitKind::Info).count();
    if want > free || want > e {
        return Err(invalid!(
            "E = {e} is too small for K = {k}{}: rate matching to {e} bits ({}) leaves {} of the N = {n} bit channels, and each sent bit carries at most one",
            if pc.total > 0 { format!(" and {} parity-check bits", pc.total) } else { String::new() },
            selection.name(),
            free
        ));
    }
    // Q_I: the K + n_PC most reliable of the rest; ordered least reliable first.
    let chosen: Vec<usize> = order.iter().rev().map(|&q| usize::from(q)).filter(|&q| kinds[q] == BitKind::Info).take(want).collect::<Vec<_>>().into_iter().rev().collect();
    kinds.fill(BitKind::Frozen);
    for &q in &chosen {
        kinds[q] = BitKind::Info;
    }
    // n_PC − n_PC^wm at the least reliable of Q_I …
    for &q in &chosen[..pc.total - pc.weight] {
        kinds[q] = BitKind::Parity;
    }
    // … and n_PC^wm at the minimum row weight (2^popcount) among the
    // |Q_I| − n_PC most reliable, the most reliable of those on a tie.
    let mut rest: Vec<usize> = chosen[pc.total..].to_vec();
    for _ in 0..pc.weight {
        let best = rest.iter().enumerate().rev().min_by_key(|&(_, &q)| q.count_ones()).map(|(at, _)| at);
        if let Some(at) = best {
            kinds[rest.remove(at)] = BitKind::Parity;
        }
    }
    PolarCode::new(kinds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_matching_freezes_what_it_does_not_send() {
        // Shortening: K/E > 7/16; the unsent bits are frozen.
        let code = nr_code(100, 200, 256, ParityChecks::default()).unwrap();
        for j in 200..256 {
            assert_eq!(code.kind(subblock_index(256, j)), BitKind::Frozen, "shortened {j}");
        }
        // Puncturing: K/E ≤ 7/16, also the first ⌈9N/16 − E/4⌉ = 94 bits.
        let code = nr_code(40, 150, 256, ParityChecks::default()).unwrap();
        assert!((0..94).all(|i| code.kind(i) == BitKind::Frozen));
        for j in 0..106 {
            assert_eq!(code.kind(subblock_index(256, j)), BitKind::Frozen, "punctured {j}");
        }
        assert_eq!(code.k(), 40);
    }

    #[test]
    fn parity_checks_take_the_weakest_and_the_lightest_row() {
        let code = nr_code(20, 220, 256, ParityChecks { total: 3, weight: 1 }).unwrap();
        assert_eq!((code.k(), code.parity().len()), (20, 3));
        let order = nr_reliability(256).unwrap();
        let rank = |q: u32| order.iter().position(|&o| u32::from(o) == q).unwrap();
        let mut q_i: Vec<u32> = code.info().iter().chain(code.parity()).copied().collect();
        q_i.sort_by_key(|&q| rank(q));
        // The two least reliable of Q_I are parity checks …
        assert!(code.parity().contains(&q_i[0]) && code.parity().contains(&q_i[1]));
        // … and the third has the fewest ones among the 20 most reliable.
        let third = *code.parity().iter().find(|&&q| q != q_i[0] && q != q_i[1]).unwrap();
        assert!(q_i[3..].iter().all(|&q| q.count_ones() >= third.count_ones()));
        assert!(nr_code(20, 220, 256, ParityChecks { total: 1, weight: 2 }).is_err());
    }
}
