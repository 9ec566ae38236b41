//! Copying LLRs into write-combined pinned staging with streaming stores.
//!
//! A plain `memcpy` into write-combined memory moves about 5 GB/s per core on
//! the lent machines (glibc picks `rep movsb` or cached stores for 1 MiB
//! pieces), so staging alone held end-to-end decoding to 17.5–19.2 Gb/s on
//! 16 cores. Whole 64-byte lines written with non-temporal stores, the source
//! prefetched a few KiB ahead, move 13–15 GB/s per core and about 90–100 GB/s
//! on 16 (BENCHMARKS.md, fifth session).

use crate::codes::llr::Llr;

/// Copy `src` to `dst` (of equal length), writing whole cache lines with
/// non-temporal stores where the CPU has AVX-512 or AVX2, and fence them, so
/// that a copy engine queued afterwards sees every byte. For destinations the
/// CPU does not read back soon: pinned staging, write-combined or not.
///
/// # Panics
/// When the lengths differ.
pub(crate) fn stream_copy<T: Llr>(dst: &mut [T], src: &[T]) {
    assert_eq!(dst.len(), src.len(), "stream_copy between slices of different lengths");
    copy_bytes(Path::best(), as_bytes_mut(dst), as_bytes(src));
}

/// The copy loops this CPU can run, fastest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Path {
    #[cfg(target_arch = "x86_64")]
    Avx512,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    Plain,
}

impl Path {
    fn best() -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") {
                return Self::Avx512;
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                return Self::Avx2;
            }
        }
        Self::Plain
    }
}

fn copy_bytes(path: Path, dst: &mut [u8], src: &[u8]) {
    const LINE: usize = 64;
    let head = dst.as_ptr().align_offset(LINE).min(dst.len());
    let lines = (dst.len() - head) / LINE;
    let body = head..head + lines * LINE;
    // SAFETY (both arms): `body` lies inside both slices, which have equal
    // lengths; dst + head is 64-byte aligned; the CPU has the feature
    // (Path::best, or the tests, checked it).
    match path {
        #[cfg(target_arch = "x86_64")]
        Path::Avx512 => unsafe { x86::lines_avx512(dst[body.clone()].as_mut_ptr(), src[body.clone()].as_ptr(), lines) },
        #[cfg(target_arch = "x86_64")]
        Path::Avx2 => unsafe { x86::lines_avx2(dst[body.clone()].as_mut_ptr(), src[body.clone()].as_ptr(), lines) },
        Path::Plain => dst[body.clone()].copy_from_slice(&src[body.clone()]),
    }
    dst[..head].copy_from_slice(&src[..head]);
    dst[body.end..].copy_from_slice(&src[body.end..]);
}

fn as_bytes<T: Llr>(s: &[T]) -> &[u8] {
    // SAFETY: LLRs are plain numbers (i8, f32) without padding, so every byte
    // is initialised; u8 needs no alignment.
    unsafe { std::slice::from_raw_parts(s.as_ptr().cast(), std::mem::size_of_val(s)) }
}

fn as_bytes_mut<T: Llr>(s: &mut [T]) -> &mut [u8] {
    // SAFETY: as above; only whole values' bytes copied from values of the same
    // type at the same offsets are written, so every T stays valid.
    unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr().cast(), std::mem::size_of_val(s)) }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// How far ahead the source is prefetched, measured best on the lent
    /// machines' Xeons (BENCHMARKS.md, fifth session).
    const AHEAD_AVX512: usize = 4096;
    const AHEAD_AVX2: usize = 2048;

    /// Copy `lines` 64-byte lines from `src` to 64-byte aligned `dst` with
    /// non-temporal stores, then fence.
    ///
    /// # Safety
    /// AVX-512F present; `lines` lines readable at `src` and writable at `dst`.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn lines_avx512(dst: *mut u8, src: *const u8, lines: usize) {
        for l in 0..lines {
            let at = 64 * l;
            // A prefetch never faults, so it may look past the source's end.
            _mm_prefetch::<_MM_HINT_T0>(src.wrapping_add(at + AHEAD_AVX512).cast());
            // SAFETY: line l of both, as the caller promises.
            unsafe { _mm512_stream_si512(dst.add(at).cast(), _mm512_loadu_si512(src.add(at).cast())) };
        }
        _mm_sfence();
    }

    /// As [`lines_avx512`] with two 32-byte stores a line.
    ///
    /// # Safety
    /// AVX2 present; `lines` lines readable at `src` and writable at `dst`.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn lines_avx2(dst: *mut u8, src: *const u8, lines: usize) {
        for l in 0..lines {
            let at = 64 * l;
            _mm_prefetch::<_MM_HINT_T0>(src.wrapping_add(at + AHEAD_AVX2).cast());
            // SAFETY: line l of both, as the caller promises.
            unsafe {
                let (a, b) = (_mm256_loadu_si256(src.add(at).cast()), _mm256_loadu_si256(src.add(at + 32).cast()));
                _mm256_stream_si256(dst.add(at).cast(), a);
                _mm256_stream_si256(dst.add(at + 32).cast(), b);
            }
        }
        _mm_sfence();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths() -> Vec<Path> {
        let mut p = vec![Path::Plain];
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                p.push(Path::Avx2);
            }
            if std::arch::is_x86_feature_detected!("avx512f") {
                p.push(Path::Avx512);
            }
        }
        p
    }

    #[test]
    fn every_path_copies_every_length_and_alignment_exactly() {
        let src: Vec<u8> = (0..1200u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
        for path in paths() {
            for len in (0..300).chain([511, 512, 513, 1000]) {
                for (so, d_off) in [(0, 0), (1, 0), (0, 1), (3, 63), (17, 5), (64, 32)] {
                    let mut dst = vec![0xA5u8; len + 130];
                    copy_bytes(path, &mut dst[d_off..d_off + len], &src[so..so + len]);
                    assert_eq!(&dst[d_off..d_off + len], &src[so..so + len], "{path:?}, {len} bytes, offsets {so}/{d_off}");
                    assert!(dst[..d_off].iter().chain(&dst[d_off + len..]).all(|&b| b == 0xA5), "{path:?} wrote outside its {len} bytes");
                }
            }
        }
    }

    #[test]
    fn typed_copy_keeps_values() {
        let src: Vec<f32> = (0..5000).map(|i| i as f32 * 0.25 - 7.0).collect();
        let mut dst = vec![f32::NAN; 5001];
        stream_copy(&mut dst[1..], &src);
        assert_eq!(&dst[1..], &src[..]);
    }

    #[test]
    #[should_panic(expected = "different lengths")]
    fn unequal_lengths_are_refused() {
        stream_copy(&mut [0i8; 3], &[1i8; 4]);
    }
}
