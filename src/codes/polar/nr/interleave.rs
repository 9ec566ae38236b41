//! The input bit interleaver of TS 38.212 §5.3.1.1 (downlink polar codes):
//! c'_k = c_{Π(k)}, Π drawn from Table 5.3.1.1-1 for K ≤ 164.

use crate::codes::error::{CodeResult, invalid};

/// K_max^IL: the longest block the interleaver takes.
pub const K_MAX_IL: usize = 164;

/// Table 5.3.1.1-1: Π_IL^max(m), m = 0..163.
#[rustfmt::skip]
const PATTERN: [u16; K_MAX_IL] = [
    0, 2, 4, 7, 9, 14, 19, 20, 24, 25, 26, 28, 31, 34, 42, 45, 49, 50, 51, 53, 54, 56, 58, 59, 61, 62, 65, 66,
    67, 69, 70, 71, 72, 76, 77, 81, 82, 83, 87, 88, 89, 91, 93, 95, 98, 101, 104, 106, 108, 110, 111, 113, 115, 118, 119, 120,
    122, 123, 126, 127, 129, 132, 134, 138, 139, 140, 1, 3, 5, 8, 10, 15, 21, 27, 29, 32, 35, 43, 46, 52, 55, 57,
    60, 63, 68, 73, 78, 84, 90, 92, 94, 96, 99, 102, 105, 107, 109, 112, 114, 116, 121, 124, 128, 130, 133, 135, 141, 6,
    11, 16, 22, 30, 33, 36, 44, 47, 64, 74, 79, 85, 97, 100, 103, 117, 125, 131, 136, 142, 12, 17, 23, 37, 48, 75,
    80, 86, 137, 143, 13, 18, 38, 144, 39, 145, 40, 146, 41, 147, 148, 149, 150, 151, 152, 153, 154, 155, 156, 157, 158, 159,
    160, 161, 162, 163,
];

/// Π of §5.3.1.1 for a block of `k` bits (1..=164): the entries of the
/// table at least K_max − K, lowered by K_max − K, in table order.
///
/// # Example
/// ```
/// use gpufec::codes::polar::nr::input_interleaver;
/// let p = input_interleaver(24).unwrap();
/// assert_eq!(p[..4], [0, 1, 2, 3]); // table entries 140..143 come first
/// assert!(input_interleaver(165).is_err());
/// ```
pub fn input_interleaver(k: usize) -> CodeResult<Vec<u16>> {
    if k == 0 || k > K_MAX_IL {
        return Err(invalid!("the input bit interleaver takes blocks of 1..={K_MAX_IL} bits, not {k}"));
    }
    let drop = (K_MAX_IL - k) as u16;
    Ok(PATTERN.iter().filter(|&&p| p >= drop).map(|&p| p - drop).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes::crc::CRC24C;

    /// Table 5.3.1.1-1 is the order in which a CRC24C of 140 payload bits
    /// can be checked bit by bit: parity bit j comes right after the payload
    /// bits it depends on that have not come yet. Rebuilt here from CRC24C
    /// alone, it must be the typed table.
    #[test]
    fn the_table_follows_from_crc24c() {
        const PAYLOAD: usize = 140;
        // Column j of the parity matrix: the payload bits that parity bit j sums.
        let depends: Vec<u32> = (0..PAYLOAD)
            .map(|i| {
                let mut unit = vec![0u8; PAYLOAD];
                unit[i] = 1;
                CRC24C.parity(&unit)
            })
            .collect();
        let mut placed = [false; PAYLOAD];
        let mut rebuilt = Vec::new();
        for j in 0..24 {
            let bit = 1 << (23 - j);
            for i in 0..PAYLOAD {
                if depends[i] & bit != 0 && !placed[i] {
                    placed[i] = true;
                    rebuilt.push(i as u16);
                }
            }
            rebuilt.push((PAYLOAD + j) as u16);
        }
        assert_eq!(rebuilt, PATTERN);
    }

    #[test]
    fn every_length_is_a_permutation() {
        for k in 1..=K_MAX_IL {
            let mut p = input_interleaver(k).unwrap();
            p.sort_unstable();
            assert_eq!(p, (0..k as u16).collect::<Vec<_>>(), "K {k}");
        }
        assert!(input_interleaver(0).is_err());
    }
}
