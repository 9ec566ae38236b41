//! The CCSDS pseudo-randomizer (131.0-B §10): the sequence of
//! h(x) = x^8 + x^7 + x^5 + x^3 + 1 from the all-ones state, XORed onto each
//! frame from its first byte after the sync marker, restarting every frame.
//! Applying it twice gives the frame back, so one type randomizes and
//! derandomizes.

/// Bytes before the sequence repeats.
pub const PERIOD: usize = 255;

/// One period of the sequence, eight bits to a byte, the first in the most
/// significant place.
const SEQUENCE: [u8; PERIOD] = {
    let mut t = [0u8; PERIOD];
    // s(n+8) = s(n+7) + s(n+5) + s(n+3) + s(n): the state holds s(n) in bit 7 … s(n+7) in bit 0.
    let mut state: u8 = 0xff;
    let mut i = 0;
    while i < 8 * PERIOD {
        let bit = state >> 7;
        t[i / 8] |= bit << (7 - i % 8);
        let next = (state ^ (state >> 2) ^ (state >> 4) ^ (state >> 7)) & 1;
        state = (state << 1) | next;
        i += 1;
    }
    t
};

/// XOR the sequence onto `frame` from its first byte (frames longer than a
/// period see it repeat).
///
/// # Example
/// ```
/// use gpufec::codes::ccsds::randomize;
/// let mut frame = [0u8; 4];
/// randomize(&mut frame);
/// assert_eq!(frame, [0xff, 0x48, 0x0e, 0xc0]);
/// randomize(&mut frame);
/// assert_eq!(frame, [0; 4]);
/// ```
pub fn randomize(frame: &mut [u8]) {
    for (b, r) in frame.iter_mut().zip(SEQUENCE.iter().cycle()) {
        *b ^= r;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sequence_starts_as_the_standard_prints_it_and_has_period_255() {
        // CCSDS 131.0-B §10: the first 40 bits 1111 1111 0100 1000 0000 1110 1100 0000 1001 1010.
        assert_eq!(SEQUENCE[..5], [0xff, 0x48, 0x0e, 0xc0, 0x9a]);
        // A maximal-length sequence of degree 8: 128 ones in each 255 bits (eight periods here).
        assert_eq!(SEQUENCE.iter().map(|b| b.count_ones()).sum::<u32>(), 8 * 128);
        assert_ne!(SEQUENCE[0..5], SEQUENCE[85..90]);
    }
}
