//! BPSK mapping: bit 0 → +1, bit 1 → −1.

/// Map unpacked bits to BPSK symbols, appending to `out`.
///
/// # Example
/// ```
/// let mut s = Vec::new();
/// gpufec::codes::channel::bpsk_map(&[0, 1, 1], &mut s);
/// assert_eq!(s, vec![1.0, -1.0, -1.0]);
/// ```
pub fn bpsk_map(bits: &[u8], out: &mut Vec<f32>) {
    out.extend(bits.iter().map(|&b| if b & 1 == 0 { 1.0 } else { -1.0 }));
}

/// Hard decision on an LLR: positive (or zero) means bit 0.
#[inline]
pub fn hard_bit(llr: f32) -> u8 {
    (llr < 0.0) as u8
}
