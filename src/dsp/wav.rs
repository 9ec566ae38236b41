//! WAV files: the header read and checked, then samples as `f32` in
//! −1..1, 16-bit PCM or 32-bit float, mono or stereo.

use super::sigmf::{Datatype, Scalar};
use crate::codes::error::{CodeError, CodeResult, invalid};
use std::io::Read;

/// Channels a WAV source accepts: mono (real) or stereo (I and Q).
pub const MAX_WAV_CHANNELS: u16 = 2;
/// Bytes of header chunks a reader skips before the data (other chunks than
/// `fmt ` and `data`, such as `LIST`): more is not a WAV file we read.
const MAX_SKIPPED_BYTES: u64 = 1 << 20;

/// How a WAV file's samples are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WavSamples {
    /// 16-bit signed PCM.
    Pcm16,
    /// 32-bit IEEE float.
    Float32,
}

/// A WAV file's format, from its `fmt ` chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WavFormat {
    /// 1 (real samples) or 2 (I and Q).
    pub channels: u16,
    /// Frames per second.
    pub sample_rate: u32,
    /// How samples are stored.
    pub samples: WavSamples,
    /// Bytes of sample data the `data` chunk holds.
    pub data_bytes: u64,
}

impl WavFormat {
    fn sample_bytes(&self) -> usize {
        match self.samples {
            WavSamples::Pcm16 => 2,
            WavSamples::Float32 => 4,
        }
    }
}

/// Reads a WAV stream: [`WavReader::new`] reads and checks the header,
/// [`WavReader::read`] the samples, interleaved as the file holds them.
///
/// ```
/// use gpufec::dsp::{WavReader, WavSamples};
/// let file = b"RIFF\x28\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x80\xbb\x00\x00\x00\x77\x01\x00\x02\x00\x10\x00data\x04\x00\x00\x00\x00\x40\x00\xc0".to_vec();
/// let mut wav = WavReader::new(&file[..]).unwrap();
/// assert_eq!(wav.format().samples, WavSamples::Pcm16);
/// let mut out = Vec::new();
/// wav.read(&mut out, 16).unwrap();
/// assert_eq!(out, vec![0.5, -0.5]);
/// ```
pub struct WavReader<R: Read> {
    reader: R,
    format: WavFormat,
    left: u64,
    bytes: Vec<u8>,
}

impl<R: Read> WavReader<R> {
    /// Reads the header up to the start of the samples. A file that is not
    /// RIFF/WAVE, whose samples are neither 16-bit PCM nor 32-bit float,
    /// with more than two channels, or that ends inside its header is an
    /// error saying which.
    pub fn new(mut reader: R) -> CodeResult<Self> {
        let mut riff = [0u8; 12];
        read_exact(&mut reader, &mut riff, "the RIFF header")?;
        if &riff[0..4] != b"RIFF" || &riff[8..12] != b"WAVE" {
            return Err(invalid!("not a WAV file: it does not start with RIFF....WAVE"));
        }
        let mut fmt: Option<(u16, u16, u32, u16)> = None;
        let mut skipped = 0u64;
        loop {
            let mut head = [0u8; 8];
            read_exact(&mut reader, &mut head, "a chunk header")?;
            let size = u32::from_le_bytes(head[4..8].try_into().unwrap()) as u64;
            match &head[0..4] {
                b"fmt " => {
                    if !(16..=64).contains(&size) {
                        return Err(invalid!("WAV fmt chunk of {size} bytes: expected 16 to 64"));
                    }
                    let mut body = vec![0u8; size as usize + (size as usize & 1)];
                    read_exact(&mut reader, &mut body, "the fmt chunk")?;
                    let u16_at = |i: usize| u16::from_le_bytes([body[i], body[i + 1]]);
                    let mut tag = u16_at(0);
                    // WAVE_FORMAT_EXTENSIBLE: the real format is the sub-format GUID's first two bytes.
                    if tag == 0xFFFE && size >= 26 {
                        tag = u16_at(24);
                    }
                    fmt = Some((tag, u16_at(2), u32::from_le_bytes(body[4..8].try_into().unwrap()), u16_at(14)));
                }
                b"data" => {
                    let (tag, channels, sample_rate, bits) =
                        fmt.ok_or_else(|| invalid!("WAV data chunk before its fmt chunk"))?;
                    let samples = match (tag, bits) {
                        (1, 16) => WavSamples::Pcm16,
                        (3, 32) => WavSamples::Float32,
                        _ => {
                            return Err(invalid!(
                                "WAV samples of format {tag} with {bits} bits are not supported: \
                                 only 16-bit PCM (format 1) and 32-bit float (format 3)"
                            ));
                        }
                    };
                    if channels == 0 || channels > MAX_WAV_CHANNELS {
                        return Err(invalid!("a WAV file of {channels} channels: only mono (real) or stereo (I/Q)"));
                    }
                    if sample_rate == 0 {
                        return Err(invalid!("a WAV file with sample rate 0"));
                    }
                    let format = WavFormat { channels, sample_rate, samples, data_bytes: size };
                    return Ok(Self { reader, format, left: size, bytes: Vec::new() });
                }
                _ => {
                    skipped += size + (size & 1);
                    if skipped > MAX_SKIPPED_BYTES {
                        return Err(invalid!("WAV header chunks over {MAX_SKIPPED_BYTES} bytes before the data"));
                    }
                    let copied = std::io::copy(&mut (&mut reader).take(size + (size & 1)), &mut std::io::sink())
                        .map_err(|e| invalid!("reading a WAV file: {e}"))?;
                    if copied < size {
                        return Err(CodeError::Truncated("the WAV file ends inside a header chunk".into()));
                    }
                }
            }
        }
    }

    /// The file's format.
    pub fn format(&self) -> WavFormat {
        self.format
    }

    /// Appends up to `max` samples (interleaved channels) to `out`, scaled
    /// to −1..1; returns how many, 0 at the end of the data. A file that
    /// ends before its `data` chunk's size, or inside a frame, is
    /// [`CodeError::Truncated`].
    pub fn read(&mut self, out: &mut Vec<f32>, max: usize) -> CodeResult<usize> {
        let width = self.format.sample_bytes();
        let frame = width * self.format.channels as usize;
        let want = (self.left as usize).min(max * width) / frame * frame;
        if want == 0 {
            if self.left >= frame as u64 || self.left == 0 || max * width < frame {
                return Ok(0);
            }
            return Err(CodeError::Truncated(format!("the WAV data ends {} bytes into a frame", self.left)));
        }
        self.bytes.resize(want, 0);
        read_exact(&mut self.reader, &mut self.bytes, "its samples")
            .map_err(|_| CodeError::Truncated(format!("the WAV file ends before the {} bytes its data chunk declares", self.format.data_bytes)))?;
        self.left -= want as u64;
        let scalar = match self.format.samples {
            WavSamples::Pcm16 => Scalar::I16,
            WavSamples::Float32 => Scalar::F32,
        };
        Datatype { complex: false, scalar, big_endian: false }.decode(&self.bytes, out);
        Ok(want / width)
    }
}

fn read_exact(reader: &mut impl Read, buf: &mut [u8], what: &str) -> CodeResult<()> {
    reader.read_exact(buf).map_err(|e| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => CodeError::Truncated(format!("the WAV file ends inside {what}")),
        _ => invalid!("reading a WAV file: {e}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(tag: u16, channels: u16, bits: u16, data_bytes: u32) -> Vec<u8> {
        let mut h = b"RIFF\0\0\0\0WAVE".to_vec();
        h.extend(b"LIST\x04\0\0\0abcd");
        h.extend(b"fmt \x10\0\0\0");
        h.extend(tag.to_le_bytes());
        h.extend(channels.to_le_bytes());
        h.extend(48_000u32.to_le_bytes());
        h.extend((48_000u32 * channels as u32 * bits as u32 / 8).to_le_bytes());
        h.extend((channels * bits / 8).to_le_bytes());
        h.extend(bits.to_le_bytes());
        h.extend(b"data");
        h.extend(data_bytes.to_le_bytes());
        h
    }

    #[test]
    fn float_stereo_is_read_across_calls() {
        let mut file = header(3, 2, 32, 16);
        for v in [0.25f32, -0.5, 1.0, 0.0] {
            file.extend(v.to_le_bytes());
        }
        let mut wav = WavReader::new(&file[..]).unwrap();
        assert_eq!(wav.format().channels, 2);
        let mut out = Vec::new();
        // Whole frames only: 3 asked, 2 read.
        assert_eq!(wav.read(&mut out, 3).unwrap(), 2);
        assert_eq!(wav.read(&mut out, 100).unwrap(), 2);
        assert_eq!(wav.read(&mut out, 100).unwrap(), 0);
        assert_eq!(out, vec![0.25, -0.5, 1.0, 0.0]);
    }

    #[test]
    fn a_wav_that_is_not_pcm_or_float_is_refused() {
        // μ-law (format 7), 8 bits.
        let Err(e) = WavReader::new(&header(7, 1, 8, 4)[..]) else { panic!("μ-law accepted") };
        assert!(e.to_string().contains("only 16-bit PCM"), "{e}");
        assert!(WavReader::new(&header(1, 3, 16, 4)[..]).is_err());
        assert!(WavReader::new(&b"RIFX\0\0\0\0WAVE"[..]).is_err());
    }

    #[test]
    fn a_truncated_file_is_an_error() {
        let mut file = header(1, 1, 16, 100);
        file.extend([0u8; 10]);
        let mut wav = WavReader::new(&file[..]).unwrap();
        let mut out = Vec::new();
        assert!(matches!(wav.read(&mut out, 1000), Err(CodeError::Truncated(_))));
        let cut = &header(1, 1, 16, 100)[..30];
        assert!(matches!(WavReader::new(cut), Err(CodeError::Truncated(_))));
    }
}
