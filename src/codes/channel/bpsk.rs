//! BPSK mapping: bit 0 → +1, bit 1 → −1.

/// The BPSK symbol of one bit (its lowest bit).
#[inline(always)]
pub fn bpsk_symbol(bit: u8) -> f32 {
    if bit & 1 == 0 { 1.0 } else { -1.0 }
}

/// Map unpacked bits to BPSK symbols, appending to `out`.
///
/// # Example
/// ```
/// let mut s = Vec::new();
/// gpufec::codes::channel::bpsk_map(&[0, 1, 1], &mut s);
/// assert_eq!(s, vec![1.0, -1.0, -1.0]);
/// ```
pub fn bpsk_map(bits: &[u8], out: &mut Vec<f32>) {
    out.extend(bits.iter().map(|&b| bpsk_symbol(b)));
}
