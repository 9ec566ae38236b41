//! How the items of a stream are laid out in a file, byte for byte as GNU
//! Radio's file source and sink write them (native byte order).

use crate::codes::bits::first_non_bit;
use crate::codes::packed::{par_pack_msb, unpack_msb};
use num_complex::Complex32;

/// The layout of a file's items.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileFormat {
    /// Bits, one `u8` (0 or 1) per bit (GNU Radio's unpacked bytes).
    Bits,
    /// Bits, eight per byte, the first bit in the most significant place
    /// (GNU Radio's `unpacked_to_packed_bb(1, GR_MSB_FIRST)`, `pack_k_bits_bb(8)`).
    Packed,
    /// `i8` LLRs.
    I8,
    /// `f32` LLRs or real samples.
    F32,
    /// Complex samples, `f32` real then imaginary (`gr_complex`).
    Cf32,
    /// Complex samples, `i16` real then imaginary (interleaved shorts), read
    /// as and written from `cf32` with the integer values (scale 1).
    Ci16,
}

impl FileFormat {
    /// Every format, by its name in flowgraph files.
    pub const ALL: [(&'static str, FileFormat); 6] = [
        ("bits", FileFormat::Bits),
        ("packed", FileFormat::Packed),
        ("i8", FileFormat::I8),
        ("f32", FileFormat::F32),
        ("cf32", FileFormat::Cf32),
        ("ci16", FileFormat::Ci16),
    ];

    /// The format named `name`.
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
    }

    /// Its name in flowgraph files.
    pub fn name(self) -> &'static str {
        Self::ALL.iter().find(|(_, f)| *f == self).map_or("?", |(n, _)| n)
    }

    /// Bytes of the file per group of [`Self::items_per_group`] stream items:
    /// a file's length must be a multiple of it.
    pub fn group_bytes(self) -> usize {
        match self {
            FileFormat::Bits | FileFormat::Packed | FileFormat::I8 => 1,
            FileFormat::F32 | FileFormat::Ci16 => 4,
            FileFormat::Cf32 => 8,
        }
    }

    /// Stream items per group of [`Self::group_bytes`] file bytes.
    pub fn items_per_group(self) -> usize {
        if self == FileFormat::Packed { 8 } else { 1 }
    }

    /// Whether the file holds the stream's items as they are in memory.
    pub(super) fn is_raw(self) -> bool {
        !matches!(self, FileFormat::Packed | FileFormat::Ci16)
    }
}

/// Plain data a stream item is made of: any byte pattern of its size is a
/// value, so a file's bytes can be read straight into a stream buffer.
///
/// # Safety
/// Only for types without padding or invalid bit patterns.
pub unsafe trait Pod: Copy + Default + Send + Sync + 'static {
    /// The file formats that hold items of this type.
    const FORMATS: &'static [FileFormat];

    /// Items from whole groups of file bytes in a format that is not raw
    /// (`out` holds `bytes.len() / group_bytes · items_per_group` items).
    fn decode(_format: FileFormat, _bytes: &[u8], _out: &mut [Self]) {
        unreachable!("raw formats are read as they are")
    }

    /// Append the file bytes of `items` (stream items `first`, `first + 1`,
    /// ...), whole groups, in a format that is not raw; a value the format
    /// cannot hold is an error naming its place in the stream.
    fn encode(_format: FileFormat, _items: &[Self], _first: u64, _out: &mut Vec<u8>) -> anyhow::Result<()> {
        unreachable!("raw formats are written as they are")
    }
}

// SAFETY: integers and floats: every bit pattern is a value, no padding.
unsafe impl Pod for u8 {
    const FORMATS: &'static [FileFormat] = &[FileFormat::Bits, FileFormat::Packed];

    fn decode(_format: FileFormat, bytes: &[u8], out: &mut [u8]) {
        unpack_msb(bytes, out);
    }

    fn encode(_format: FileFormat, bits: &[u8], first: u64, out: &mut Vec<u8>) -> anyhow::Result<()> {
        check_bits(bits, first)?;
        let at = out.len();
        out.resize(at + bits.len() / 8, 0);
        par_pack_msb(bits, &mut out[at..]);
        Ok(())
    }
}

/// An error naming the first value of `bits` (stream items `first`, ...) that is not 0 or 1.
pub(super) fn check_bits(bits: &[u8], first: u64) -> anyhow::Result<()> {
    match first_non_bit(bits) {
        Some(i) => anyhow::bail!("bit {} of the stream is {}, not 0 or 1", first + i as u64, bits[i]),
        None => Ok(()),
    }
}
// SAFETY: as above.
unsafe impl Pod for i8 {
    const FORMATS: &'static [FileFormat] = &[FileFormat::I8];
}
// SAFETY: as above.
unsafe impl Pod for f32 {
    const FORMATS: &'static [FileFormat] = &[FileFormat::F32];
}
// SAFETY: two f32 (`repr(C)`), no padding.
unsafe impl Pod for Complex32 {
    const FORMATS: &'static [FileFormat] = &[FileFormat::Cf32, FileFormat::Ci16];

    fn decode(_format: FileFormat, bytes: &[u8], out: &mut [Complex32]) {
        for (o, b) in out.iter_mut().zip(bytes.chunks_exact(4)) {
            let re = i16::from_ne_bytes([b[0], b[1]]);
            let im = i16::from_ne_bytes([b[2], b[3]]);
            *o = Complex32::new(re.into(), im.into());
        }
    }

    fn encode(_format: FileFormat, items: &[Complex32], first: u64, out: &mut Vec<u8>) -> anyhow::Result<()> {
        if let Some(i) = items.iter().position(|c| !(c.re.is_finite() && c.im.is_finite())) {
            anyhow::bail!("sample {} of the stream is not finite", first + i as u64);
        }
        for c in items {
            // Rounded and saturated, as GNU Radio's complex_to_interleaved_short does.
            for v in [c.re, c.im] {
                out.extend_from_slice(&(v.round().clamp(i16::MIN as f32, i16::MAX as f32) as i16).to_ne_bytes());
            }
        }
        Ok(())
    }
}

/// The bytes of `items`.
pub(crate) fn bytes_of<T: Pod>(items: &[T]) -> &[u8] {
    // SAFETY: T is plain data (Pod); the byte view covers exactly the slice.
    unsafe { std::slice::from_raw_parts(items.as_ptr().cast(), size_of_val(items)) }
}

/// The bytes of `items`, to fill.
pub(crate) fn bytes_of_mut<T: Pod>(items: &mut [T]) -> &mut [u8] {
    // SAFETY: T is plain data (Pod): any bytes written make valid items.
    unsafe { std::slice::from_raw_parts_mut(items.as_mut_ptr().cast(), size_of_val(items)) }
}

/// Whether `format` holds items of type `T`; an error naming both if not.
pub(super) fn check_format<T: Pod>(format: FileFormat) -> anyhow::Result<()> {
    anyhow::ensure!(
        T::FORMATS.contains(&format),
        "format {} does not hold this stream's items (it takes {})",
        format.name(),
        T::FORMATS.iter().map(|f| f.name()).collect::<Vec<_>>().join(" or ")
    );
    Ok(())
}
