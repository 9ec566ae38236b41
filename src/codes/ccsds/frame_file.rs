//! How decoded frames are written to a file: hex lines (as gr-satellites
//! lists them), KISS (the TNC framing amateur packet software reads: each
//! frame between FENDs, a data frame on port 0, FEND and FESC escaped), or
//! the bytes back to back.

/// KISS's frame end.
pub const FEND: u8 = 0xC0;
/// KISS's escape.
pub const FESC: u8 = 0xDB;
/// An escaped FEND (after FESC).
pub const TFEND: u8 = 0xDC;
/// An escaped FESC (after FESC).
pub const TFESC: u8 = 0xDD;
/// The command byte of a data frame on TNC port 0.
const DATA_PORT_0: u8 = 0x00;

/// A file of frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameFile {
    /// One frame a line, lowercase hex, no spaces.
    Hex,
    /// KISS: FEND, 0x00 (data, port 0), the escaped bytes, FEND.
    Kiss,
    /// The frames' bytes back to back.
    Binary,
}

impl FrameFile {
    /// Every kind, by its name in flowgraph files.
    pub const ALL: [(&'static str, FrameFile); 3] = [("hex", FrameFile::Hex), ("kiss", FrameFile::Kiss), ("binary", FrameFile::Binary)];

    /// The kind named `name`.
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
    }

    /// Appends `frame` to `out` as this file holds it.
    ///
    /// ```
    /// use gpufec::codes::ccsds::FrameFile;
    /// let mut out = Vec::new();
    /// FrameFile::Kiss.append(&[0x01, 0xC0, 0xDB], &mut out);
    /// assert_eq!(out, [0xC0, 0x00, 0x01, 0xDB, 0xDC, 0xDB, 0xDD, 0xC0]);
    /// ```
    pub fn append(self, frame: &[u8], out: &mut Vec<u8>) {
        match self {
            FrameFile::Hex => {
                const DIGITS: &[u8; 16] = b"0123456789abcdef";
                out.extend(frame.iter().flat_map(|&b| [DIGITS[usize::from(b >> 4)], DIGITS[usize::from(b & 15)]]));
                out.push(b'\n');
            }
            FrameFile::Kiss => {
                out.extend([FEND, DATA_PORT_0]);
                for &b in frame {
                    match b {
                        FEND => out.extend([FESC, TFEND]),
                        FESC => out.extend([FESC, TFESC]),
                        _ => out.push(b),
                    }
                }
                out.push(FEND);
            }
            FrameFile::Binary => out.extend_from_slice(frame),
        }
    }
}

/// The data frames of a KISS stream, unescaped: what a TNC's reader takes
/// from [`FrameFile::Kiss`]. Empty frames (FENDs back to back) are skipped,
/// as are frames for other ports or commands; an escape followed by anything
/// but TFEND or TFESC, or a stream that ends inside a frame, is an error.
pub fn kiss_frames(stream: &[u8]) -> Result<Vec<Vec<u8>>, String> {
    let mut frames = Vec::new();
    let mut pieces = stream.split(|&b| b == FEND).peekable();
    while let Some(piece) = pieces.next() {
        if pieces.peek().is_none() {
            if !piece.is_empty() {
                return Err(format!("the stream ends inside a frame ({} bytes after the last FEND)", piece.len()));
            }
            break;
        }
        let Some((&command, body)) = piece.split_first() else { continue };
        if command != DATA_PORT_0 {
            continue;
        }
        let mut frame = Vec::with_capacity(body.len());
        let mut bytes = body.iter();
        while let Some(&b) = bytes.next() {
            if b != FESC {
                frame.push(b);
                continue;
            }
            frame.push(match bytes.next() {
                Some(&TFEND) => FEND,
                Some(&TFESC) => FESC,
                other => return Err(format!("FESC followed by {other:02x?}, not TFEND or TFESC")),
            });
        }
        frames.push(frame);
    }
    Ok(frames)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kiss_escapes_fend_and_fesc_and_reads_back() {
        let frames: [&[u8]; 4] = [&[0xC0], &[0xDB, 0xDC, 0xDD, 0xC0, 0xC0], &[1, 2, 3], &[0xDB]];
        let mut out = Vec::new();
        for f in frames {
            FrameFile::Kiss.append(f, &mut out);
        }
        assert_eq!(&out[..5], [FEND, 0x00, FESC, TFEND, FEND]);
        assert!(!out.split(|&b| b == FEND).any(|p| p.windows(1).any(|w| w[0] == FEND)));
        assert_eq!(kiss_frames(&out).unwrap(), frames.map(<[u8]>::to_vec));
        // Another port's frame and empty frames are skipped; broken streams are errors.
        let mut mixed = vec![FEND, FEND, 0x10, 7, FEND];
        mixed.extend(&out);
        assert_eq!(kiss_frames(&mixed).unwrap().len(), 4);
        assert!(kiss_frames(&out[..out.len() - 1]).unwrap_err().contains("ends inside a frame"));
        assert!(kiss_frames(&[FEND, 0, FESC, 5, FEND]).unwrap_err().contains("FESC followed by Some(05)"));
    }

    #[test]
    fn hex_and_binary_files() {
        let mut out = Vec::new();
        FrameFile::Hex.append(&[0xab, 0x00, 0xC0], &mut out);
        FrameFile::Binary.append(&[0xC0, 0xDB], &mut out);
        assert_eq!(out, b"ab00c0\n\xc0\xdb");
        assert_eq!(FrameFile::named("kiss"), Some(FrameFile::Kiss));
        assert_eq!(FrameFile::named("ax25"), None);
    }
}
