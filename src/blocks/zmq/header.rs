//! How the items of a stream travel in ZeroMQ messages.
//!
//! `raw` is gr-zeromq's layout with `pass_tags = false`: each message is
//! the items as they lie in memory, any whole number of them, one message
//! per send (GNU Radio sends one per work call, and its sources hand a
//! message's items on across as many work calls as the output needs). An
//! empty message ends the stream (gpufec sends one at its end; GNU Radio
//! sends none, and its sources take an empty message as nothing).
//!
//! `seq` is gpufec to gpufec: each message starts with a 24-byte header,
//! little-endian: the magic `gfq1`, a flags word (bit 0: the stream ends
//! here), the sending block's stream id (random per run) and the stream
//! index of the message's first item, then the items. The receiver knows
//! where every message belongs: it counts what it missed, and which
//! sender it hears.

/// The layout of the messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// gr-zeromq's raw items; losses cannot be counted.
    Raw,
    /// A [`Header`] before the items of every message.
    Seq,
}

impl Framing {
    /// Every framing, by its name in flowgraph files.
    pub const ALL: [(&'static str, Framing); 2] = [("raw", Framing::Raw), ("seq", Framing::Seq)];

    /// The framing named `name`.
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
    }
}

/// The bytes of a [`Header`].
pub const HEADER_BYTES: usize = 24;
const MAGIC: &[u8; 4] = b"gfq1";
const END: u32 = 1;

/// The header of a `seq` message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// The sender's stream: a new one each time a sender starts.
    pub stream: u64,
    /// Stream index of the message's first item.
    pub first: u64,
    /// The stream ends after this message's items.
    pub end: bool,
}

impl Header {
    /// The header's bytes.
    pub fn to_bytes(self) -> [u8; HEADER_BYTES] {
        let mut b = [0u8; HEADER_BYTES];
        b[..4].copy_from_slice(MAGIC);
        b[4..8].copy_from_slice(&(if self.end { END } else { 0 }).to_le_bytes());
        b[8..16].copy_from_slice(&self.stream.to_le_bytes());
        b[16..24].copy_from_slice(&self.first.to_le_bytes());
        b
    }

    /// The header at the start of `message`; an error when there is none
    /// (a raw sender, or another program).
    pub fn parse(message: &[u8]) -> Result<Self, String> {
        let word = |at: usize| u64::from_le_bytes(message[at..at + 8].try_into().expect("8 bytes"));
        if message.len() < HEADER_BYTES || &message[..4] != MAGIC {
            return Err(format!(
                "a message of {} bytes has no seq header (24 bytes starting 'gfq1'): the sender sends raw items (GNU Radio's layout); set framing = \"raw\" on both sides, or \"seq\" on both",
                message.len()
            ));
        }
        let flags = u32::from_le_bytes(message[4..8].try_into().expect("4 bytes"));
        if flags & !END != 0 {
            return Err(format!("a seq header has flags {flags:#x}, which this version does not know"));
        }
        Ok(Self { stream: word(8), first: word(16), end: flags & END != 0 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_round_trip_and_raw_messages_are_told_apart() {
        let h = Header { stream: 0x0123_4567_89ab_cdef, first: 1 << 40, end: true };
        let bytes = h.to_bytes();
        assert_eq!(&bytes[..4], b"gfq1");
        assert_eq!(Header::parse(&bytes), Ok(h));
        let e = Header::parse(&[0u8; 100]).unwrap_err();
        assert!(e.contains("a message of 100 bytes has no seq header"), "{e}");
        let mut odd = bytes;
        odd[5] = 1;
        assert!(Header::parse(&odd).unwrap_err().contains("flags 0x101"));
    }
}
