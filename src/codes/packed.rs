//! Bits packed 32 to a `u32` word, least significant bit first: how GPU kernels
//! hand decoded bits back, 8× fewer bytes over PCIe and through host memory
//! than one `u8` per bit.

use std::mem::MaybeUninit;

/// Byte `i` of `BIT_BYTES[b]` (little endian) is bit `i` of `b`: eight bits
/// unpacked at once.
pub(crate) const BIT_BYTES: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut b = 0;
    while b < 256 {
        let mut i = 0;
        while i < 8 {
            t[b] |= ((b as u64 >> i) & 1) << (8 * i);
            i += 1;
        }
        b += 1;
    }
    t
};

/// Up to 64 unpacked bits (`u8` 0/1) packed into a word, `bits[t]` at bit `t`.
#[inline(always)]
pub(crate) fn pack_word(bits: &[u8]) -> u64 {
    debug_assert!(bits.len() <= 64);
    let mut w = 0u64;
    let mut chunks = bits.chunks_exact(8);
    for (j, c) in chunks.by_ref().enumerate() {
        let x = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        // Byte k's bit 0 lands on bit 56 + k; no two terms overlap, so no carries.
        w |= (x.wrapping_mul(0x0102_0408_1020_4080) >> 56) << (8 * j);
    }
    let done = bits.len() - chunks.remainder().len();
    for (t, &b) in chunks.remainder().iter().enumerate() {
        w |= (b as u64) << (done + t);
    }
    w
}

/// Pack bits (`u8` 0 or 1) eight to a byte, the first in the most
/// significant place, as GNU Radio's `pack_k_bits_bb(8)`; a last byte not
/// whole gets zero bits. `out` holds `bits.len().div_ceil(8)` bytes. Large
/// inputs are packed on all cores: a GPU decoder's bits come at many Gb/s.
///
/// # Panics
/// When `out` is not `bits.len().div_ceil(8)` bytes.
///
/// # Example
/// ```
/// use gpufec::codes::packed::par_pack_msb;
/// let mut out = [0u8; 2];
/// par_pack_msb(&[1, 0, 0, 0, 0, 0, 1, 1, 1, 1], &mut out);
/// assert_eq!(out, [0b1000_0011, 0b1100_0000]);
/// ```
pub fn par_pack_msb(bits: &[u8], out: &mut [u8]) {
    use rayon::prelude::*;
    // Output bytes per task: large enough that the hand-off costs little.
    const CHUNK: usize = 1 << 17;
    assert_eq!(out.len(), bits.len().div_ceil(8), "packing {} bits into {} bytes", bits.len(), out.len());
    if out.len() < 4 * CHUNK {
        pack_msb(bits, out);
    } else {
        out.par_chunks_mut(CHUNK).zip(bits.par_chunks(8 * CHUNK)).for_each(|(o, b)| pack_msb(b, o));
    }
}

/// Unpack whole bytes to bits (`u8` 0 or 1), the most significant first:
/// the inverse of [`par_pack_msb`]. Fills `out` eight bits per byte, as far
/// as both reach.
///
/// # Example
/// ```
/// use gpufec::codes::packed::unpack_msb;
/// let mut bits = [9u8; 16];
/// unpack_msb(&[0b1000_0011, 0b1100_0000], &mut bits);
/// assert_eq!(bits, [1, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0]);
/// ```
pub fn unpack_msb(bytes: &[u8], out: &mut [u8]) {
    for (o, &b) in out.chunks_exact_mut(8).zip(bytes) {
        o.copy_from_slice(&BIT_BYTES[b.reverse_bits() as usize].to_le_bytes());
    }
}

fn pack_msb(bits: &[u8], out: &mut [u8]) {
    // Byte k's bit 0 lands on bit 63 − k: the multiplier's terms 2^(63 − 9k)
    // put no two bits on one place, so nothing carries.
    let byte = |c: [u8; 8]| (u64::from_le_bytes(c).wrapping_mul(0x8040_2010_0804_0201) >> 56) as u8;
    let mut chunks = bits.chunks_exact(8);
    for (o, c) in out.iter_mut().zip(chunks.by_ref()) {
        *o = byte(c.try_into().expect("8 bytes"));
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut c = [0u8; 8];
        c[..rest.len()].copy_from_slice(rest);
        out[bits.len() / 8] = byte(c);
    }
}

/// Write the first `out.len()` bits of `words` to `out`, one `u8` (0 or 1) per
/// bit, bit `i` of the stream being bit `i % 32` of word `i / 32`. `out` may be
/// uninitialised (the spare capacity of a `Vec`): every item is written.
///
/// # Panics
/// When `words` holds fewer than `out.len()` bits.
///
/// # Example
/// ```
/// use gpufec::codes::packed::unpack_bits;
/// use std::mem::MaybeUninit;
/// let mut out = [MaybeUninit::new(7u8); 35];
/// unpack_bits(&[0x8000_0005, 0b110], &mut out);
/// let bits: Vec<u8> = out.iter().map(|b| unsafe { b.assume_init() }).collect();
/// assert_eq!(&bits[..4], &[1, 0, 1, 0]);
/// assert_eq!(&bits[31..], &[1, 0, 1, 1]);
/// ```
pub fn unpack_bits(words: &[u32], out: &mut [MaybeUninit<u8>]) {
    let bits = out.len();
    unpack_units(words, words.len(), out, bits);
}

/// [`unpack_bits`] for a sequence of units: unit `u` holds `unit_bits` bits
/// packed in `words[u · unit_words ..]` (spare bits of its last word ignored)
/// and unpacks to `out[u · unit_bits ..]`; `out` holds whole units.
///
/// Large outputs are written with non-temporal stores: they go past the
/// cache, so memory is not read before it is overwritten.
///
/// # Panics
/// When `out` is not a whole number of units, or `words` holds fewer of them,
/// or a unit's words hold fewer than `unit_bits` bits.
pub fn unpack_units(words: &[u32], unit_words: usize, out: &mut [MaybeUninit<u8>], unit_bits: usize) {
    assert!(unit_bits <= unit_words * 32, "{unit_bits} bits asked of {unit_words} words");
    let units = out.len().checked_div(unit_bits).unwrap_or(0);
    assert!(units * unit_bits == out.len(), "{} bits are not whole units of {unit_bits}", out.len());
    assert!(units * unit_words <= words.len(), "{units} units asked of {} words", words.len());
    if units == 0 {
        return;
    }
    const STREAM_BYTES: usize = 256 << 10;
    let stream = out.len() >= STREAM_BYTES;
    if unit_bits == unit_words * 32 {
        // No spare bits: the units form one continuous bit stream.
        spread(as_bytes(&words[..units * unit_words]), out, stream);
    } else {
        for (o, w) in out.chunks_mut(unit_bits).zip(words.chunks(unit_words)) {
            spread(as_bytes(w), o, stream);
        }
    }
}

/// Repack units of whole bytes from LSB-first words to MSB-first bytes:
/// the first `unit_bytes` bytes of each unit of `unit_words` words in
/// `words`, each byte's bits reversed, appended to `out` (the layout of
/// [`par_pack_msb`]'s output). A decoder's packed output goes this way
/// straight to a packed stream, without a byte per bit in between.
///
/// # Panics
/// When a unit asks more bytes than its words hold, or no bytes at all.
///
/// # Example
/// ```
/// use gpufec::codes::packed::units_to_msb_bytes;
/// let mut out = Vec::new();
/// // Two units of one word, 16 bits each: bits 0 and 9 set, then bit 15.
/// units_to_msb_bytes(&[0b10_0000_0001, 1 << 15], 1, 2, &mut out);
/// assert_eq!(out, [0b1000_0000, 0b0100_0000, 0, 0b0000_0001]);
/// ```
pub fn units_to_msb_bytes(words: &[u32], unit_words: usize, unit_bytes: usize, out: &mut Vec<u8>) {
    use rayon::prelude::*;
    assert!(unit_bytes > 0 && unit_bytes <= 4 * unit_words, "{unit_bytes} bytes asked of units of {unit_words} words");
    let units = words.len() / unit_words.max(1);
    let bytes = units * unit_bytes;
    // Written into the spare capacity: every byte is set below, none needs zeroing first.
    out.reserve(bytes);
    let spare = &mut out.spare_capacity_mut()[..bytes];
    let repack = |o: &mut [MaybeUninit<u8>], w: &[u32]| {
        for (o, w) in o.chunks_mut(unit_bytes).zip(w.chunks(unit_words)) {
            for (o, b) in o.iter_mut().zip(as_bytes(w)) {
                *o = MaybeUninit::new(b.reverse_bits());
            }
        }
    };
    // Units per task: about 256 KiB of output, so that the hand-off costs little.
    let per = ((256 << 10) / unit_bytes.max(1)).max(1);
    if units <= per {
        repack(spare, &words[..units * unit_words]);
    } else {
        spare.par_chunks_mut(per * unit_bytes).zip(words.par_chunks(per * unit_words)).for_each(|(o, w)| repack(o, w));
    }
    // SAFETY: `repack` wrote each of the first `bytes` spare bytes: every unit's
    // `unit_bytes` (no more than its words hold, asserted above).
    unsafe { out.set_len(out.len() + bytes) };
}

/// The words' bytes in stream order (least significant first).
fn as_bytes(words: &[u32]) -> &[u8] {
    const { assert!(cfg!(target_endian = "little"), "packed bits are read as little-endian words") };
    // SAFETY: any u32 is four valid bytes; u8 needs no alignment.
    unsafe { std::slice::from_raw_parts(words.as_ptr().cast(), std::mem::size_of_val(words)) }
}

/// Unpack the first `out.len()` bits of `packed` to one byte each.
fn spread(packed: &[u8], out: &mut [MaybeUninit<u8>], stream: bool) {
    let full = out.len() / 8;
    let mut i = 0;
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // Scalar up to the first 32-byte boundary, then 32 bytes a store.
        while i < full && !(out.as_ptr() as usize + 8 * i).is_multiple_of(32) {
            put8(out, i, packed[i]);
            i += 1;
        }
        let n = (full - i) / 4 * 4;
        // SAFETY: AVX2 is present; bytes i..i+n of `packed` and 8·i..8·(i+n)
        // of `out` exist, and out + 8·i is 32-byte aligned.
        unsafe { spread_avx2(&packed[i..i + n], out[8 * i..8 * (i + n)].as_mut_ptr().cast(), stream) };
        i += n;
    }
    for (j, &b) in packed.iter().enumerate().take(full).skip(i) {
        put8(out, j, b);
    }
    if let Some(&b) = packed.get(full) {
        for (k, o) in out[8 * full..].iter_mut().enumerate() {
            o.write((b >> k) & 1);
        }
    }
}

/// Bits of `b` to bytes 8·i .. 8·i + 8 of `out`.
fn put8(out: &mut [MaybeUninit<u8>], i: usize, b: u8) {
    for (o, v) in out[8 * i..8 * i + 8].iter_mut().zip(BIT_BYTES[b as usize].to_le_bytes()) {
        o.write(v);
    }
}

/// Bits of `packed` to bytes at `out` (32-byte aligned, `packed.len()` a
/// multiple of 4, 8 bytes per packed byte), non-temporal when `stream`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn spread_avx2(packed: &[u8], out: *mut std::arch::x86_64::__m256i, stream: bool) {
    use std::arch::x86_64::*;
    // Byte k of the word to bytes 8k .. 8k + 7, then one bit of it per byte.
    let fan = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
    let select = _mm256_set1_epi64x(0x8040_2010_0804_0201u64 as i64);
    let one = _mm256_set1_epi8(1);
    for (k, b) in packed.chunks_exact(4).enumerate() {
        let w = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        let v = _mm256_min_epu8(_mm256_and_si256(_mm256_shuffle_epi8(_mm256_set1_epi32(w as i32), fan), select), one);
        // SAFETY: the caller's bounds and alignment.
        unsafe {
            if stream {
                _mm256_stream_si256(out.add(k), v);
            } else {
                _mm256_store_si256(out.add(k), v);
            }
        }
    }
    if stream {
        _mm_sfence();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unpack(words: &[u32], n: usize) -> Vec<u8> {
        let mut out = vec![MaybeUninit::new(9u8); n];
        unpack_bits(words, &mut out);
        out.into_iter().map(|b| unsafe { b.assume_init() }).collect()
    }

    /// Units repacked to MSB-first bytes are the units unpacked, then packed
    /// by `par_pack_msb`: one unit, many units, units with spare words, and
    /// enough units for the parallel path.
    #[test]
    fn units_to_msb_bytes_is_unpack_then_pack() {
        let mut x = 0x9E37_79B9u32;
        let words: Vec<u32> = (0..300_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x
            })
            .collect();
        for (unit_words, unit_bytes, units) in [(1, 4, 1), (1, 2, 7), (8, 32, 100), (3, 9, 1000), (8, 32, 37_000)] {
            let w = &words[..units * unit_words];
            let mut bits = vec![MaybeUninit::new(0u8); units * 8 * unit_bytes];
            unpack_units(w, unit_words, &mut bits, 8 * unit_bytes);
            let bits: Vec<u8> = bits.into_iter().map(|b| unsafe { b.assume_init() }).collect();
            let mut want = vec![0u8; units * unit_bytes];
            par_pack_msb(&bits, &mut want);
            let mut got = vec![0xAB];
            units_to_msb_bytes(w, unit_words, unit_bytes, &mut got);
            assert_eq!(got[0], 0xAB, "appends");
            assert!(got[1..] == want[..], "{units} units of {unit_bytes} bytes in {unit_words} words");
        }
    }

    #[test]
    fn every_bit_lands_at_its_stream_position() {
        // A single set bit walked over two words, and every length from 0 to 64.
        for at in 0..64 {
            let mut w = [0u32; 2];
            w[at / 32] = 1 << (at % 32);
            for n in 0..=64 {
                let got = unpack(&w, n);
                let want: Vec<u8> = (0..n).map(|i| u8::from(i == at)).collect();
                assert_eq!(got, want, "bit {at}, length {n}");
            }
        }
        assert_eq!(unpack(&[0xdead_beef], 32).iter().rev().fold(0u32, |a, &b| a << 1 | b as u32), 0xdead_beef);
    }

    #[test]
    fn units_skip_the_spare_bits_of_their_last_word() {
        // Units of 12 bits in 1 word and of 40 bits (streamed: 8 MiB) in 2 words.
        for (unit_bits, unit_words, units) in [(12usize, 1usize, 5usize), (40, 2, 1 << 18)] {
            let words: Vec<u32> = (0..units * unit_words).map(|i| (i as u32).wrapping_mul(0x9e37_79b9)).collect();
            let mut out = vec![MaybeUninit::new(9u8); units * unit_bits];
            unpack_units(&words, unit_words, &mut out, unit_bits);
            for u in (0..units).step_by(units / 5) {
                for j in 0..unit_bits {
                    let want = (words[u * unit_words + j / 32] >> (j % 32)) as u8 & 1;
                    assert_eq!(unsafe { out[u * unit_bits + j].assume_init() }, want, "unit {u} bit {j}");
                }
            }
        }
    }

    #[test]
    fn every_alignment_and_path_gives_the_same_bits() {
        // Streamed (≥ 256 KiB) and cached, starting at every output offset mod 32.
        let words: Vec<u32> = (0..(1 << 16) + 3).map(|i| (i as u32).wrapping_mul(0x9e37_79b9) ^ 0x5a5a).collect();
        for n in [1000usize, (1 << 21) + 56] {
            for skew in 0..32 {
                let mut out = vec![MaybeUninit::new(9u8); n + 32];
                unpack_bits(&words, &mut out[skew..skew + n]);
                for j in (0..n).step_by(7).chain(n - 70..n) {
                    let want = (words[j / 32] >> (j % 32)) as u8 & 1;
                    assert_eq!(unsafe { out[skew + j].assume_init() }, want, "n {n} skew {skew} bit {j}");
                }
                assert!(out[..skew].iter().chain(&out[skew + n..]).all(|b| unsafe { b.assume_init() } == 9));
            }
        }
    }

    #[test]
    #[should_panic(expected = "33 bits asked of 1 words")]
    fn too_few_words_panic() {
        unpack(&[0], 33);
    }
}
