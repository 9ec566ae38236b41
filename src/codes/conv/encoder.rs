//! Convolutional encoder over the shared [`Trellis`].

use crate::codes::conv::code::Trellis;
use crate::codes::encode::Encoder;
use crate::codes::error::{CodeError, CodeResult, invalid};
use std::sync::Arc;

/// How an encoder treats the end of its input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EncoderMode {
    /// One endless stream: the register state carries over from call to call.
    Streaming,
    /// Frames of `frame` information bits, each followed by K−1 zero tail bits
    /// that return the register to state 0.
    Terminated {
        /// Information bits per frame.
        frame: usize,
    },
}

/// Rate-1/n convolutional encoder. Bits in and out are unpacked `u8` 0/1; each
/// input bit yields n output bits, generator 0 first.
///
/// # Example
/// ```
/// use gpufec::codes::conv::{ConvCode, ConvEncoder, EncoderMode, Trellis};
/// use std::sync::Arc;
/// let t = Arc::new(Trellis::new(&ConvCode::k7_171_133()));
/// let mut enc = ConvEncoder::new(t, EncoderMode::Streaming).unwrap();
/// let mut out = Vec::new();
/// enc.encode(&[1, 0, 0], &mut out).unwrap();
/// assert_eq!(out, vec![1, 1, 1, 0, 1, 1]);
/// ```
#[derive(Debug, Clone)]
pub struct ConvEncoder {
    trellis: Arc<Trellis>,
    mode: EncoderMode,
    state: usize,
    pos_in_frame: usize,
}

impl ConvEncoder {
    /// New encoder in state 0.
    pub fn new(trellis: Arc<Trellis>, mode: EncoderMode) -> CodeResult<Self> {
        if let EncoderMode::Terminated { frame: 0 } = mode {
            return Err(invalid!("terminated encoder needs a frame of at least 1 bit"));
        }
        Ok(Self { trellis, mode, state: 0, pos_in_frame: 0 })
    }

    /// The trellis this encoder walks.
    pub fn trellis(&self) -> &Arc<Trellis> {
        &self.trellis
    }

    /// Output bits produced for `info` input bits (tails included in terminated mode).
    pub fn coded_len(&self, info: usize) -> usize {
        let n = self.trellis.n();
        match self.mode {
            EncoderMode::Streaming => info * n,
            EncoderMode::Terminated { frame } => {
                let tails = (self.pos_in_frame + info) / frame;
                (info + tails * (self.trellis.k() as usize - 1)) * n
            }
        }
    }

    #[inline(always)]
    fn step(&mut self, u: usize, out: &mut Vec<u8>) {
        let sym = self.trellis.output(self.state, u);
        for i in 0..self.trellis.n() {
            out.push((sym >> i) & 1);
        }
        self.state = self.trellis.next_state(self.state, u);
    }

    /// Encode `bits`, appending the coded bits to `out`. In terminated mode the
    /// tail follows every completed frame. A value other than 0 or 1 is an error
    /// and nothing is appended.
    pub fn encode(&mut self, bits: &[u8], out: &mut Vec<u8>) -> CodeResult<()> {
        if let Some(i) = bits.iter().position(|&b| b > 1) {
            return Err(CodeError::InvalidParameter(format!(
                "input bit at index {i} is {}, not 0 or 1",
                bits[i]
            )));
        }
        out.reserve(self.coded_len(bits.len()));
        for &b in bits {
            self.step(b as usize, out);
            if let EncoderMode::Terminated { frame } = self.mode {
                self.pos_in_frame += 1;
                if self.pos_in_frame == frame {
                    for _ in 0..self.trellis.k() - 1 {
                        self.step(0, out);
                    }
                    debug_assert_eq!(self.state, 0);
                    self.pos_in_frame = 0;
                }
            }
        }
        Ok(())
    }

    /// Whether the input so far ended on a frame boundary (always true when streaming).
    pub fn at_frame_boundary(&self) -> bool {
        self.pos_in_frame == 0
    }
}

impl Encoder for ConvEncoder {
    fn encode(&mut self, bits: &[u8], out: &mut Vec<u8>) -> CodeResult<()> {
        ConvEncoder::encode(self, bits, out)
    }

    fn at_boundary(&self) -> bool {
        self.at_frame_boundary()
    }

    fn rate(&self) -> f64 {
        let n = self.trellis.n() as f64;
        match self.mode {
            EncoderMode::Streaming => 1.0 / n,
            EncoderMode::Terminated { frame } => frame as f64 / ((frame + self.trellis.k() as usize - 1) as f64 * n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes::conv::ConvCode;

    fn k7() -> Arc<Trellis> {
        Arc::new(Trellis::new(&ConvCode::k7_171_133()))
    }

    #[test]
    fn impulse_response_171_133() {
        // A single 1 walks through the register: output pairs are the generator
        // taps read from the most significant octal digit down.
        // 171 = 1 111 001, 133 = 1 011 011.
        let mut enc = ConvEncoder::new(k7(), EncoderMode::Streaming).unwrap();
        let mut out = Vec::new();
        enc.encode(&[1, 0, 0, 0, 0, 0, 0, 0], &mut out).unwrap();
        assert_eq!(out, vec![1, 1, 1, 0, 1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0]);
    }

    #[test]
    fn ieee_802_11a_annex_g_prefix() {
        // IEEE 802.11a-1999 Annex G: the scrambled SIGNAL field bits
        // 1101 0 001 0000 0000 0000 0 000000 (RATE 36 Mb/s, LENGTH 100) encode, with
        // generators A=133, B=171 sent A first, to the coded SIGNAL of Table G.13:
        // 11 01 00 01 10 10 00 01 00 10 11 00 11 10 01 00 ...
        let t = Arc::new(Trellis::new(&ConvCode::new(7, &[0o133, 0o171]).unwrap()));
        let mut enc = ConvEncoder::new(t, EncoderMode::Streaming).unwrap();
        let signal: Vec<u8> = "101100010011000000000000".bytes().map(|b| b - b'0').collect();
        let mut out = Vec::new();
        enc.encode(&signal, &mut out).unwrap();
        let expect: Vec<u8> = "110100011010000100000010001111100111000000000000"
            .bytes()
            .map(|b| b - b'0')
            .collect();
        assert_eq!(out, expect);
    }

    #[test]
    fn streaming_state_carries_across_calls() {
        let bits: Vec<u8> = (0..100u32).map(|i| ((i * 7 + 3) % 5 % 2) as u8).collect();
        let mut one = ConvEncoder::new(k7(), EncoderMode::Streaming).unwrap();
        let mut a = Vec::new();
        one.encode(&bits, &mut a).unwrap();
        let mut two = ConvEncoder::new(k7(), EncoderMode::Streaming).unwrap();
        let mut b = Vec::new();
        for c in bits.chunks(13) {
            two.encode(c, &mut b).unwrap();
        }
        assert_eq!(a, b);
    }

    #[test]
    fn terminated_appends_tail_and_returns_to_zero() {
        let mut enc = ConvEncoder::new(k7(), EncoderMode::Terminated { frame: 10 }).unwrap();
        let mut out = Vec::new();
        enc.encode(&[1; 25], &mut out).unwrap();
        assert_eq!(out.len(), (20 + 2 * 6 + 5) * 2);
        assert!(!enc.at_frame_boundary());
        assert_eq!(enc.coded_len(5), (5 + 6) * 2);
        assert!(enc.encode(&[2], &mut out).is_err());
        assert!(ConvEncoder::new(k7(), EncoderMode::Terminated { frame: 0 }).is_err());
    }
}
