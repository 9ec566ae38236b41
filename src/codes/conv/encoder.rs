//! Convolutional encoder over the shared [`Trellis`].

use crate::codes::conv::code::Trellis;
use crate::codes::encode::Encoder;
use crate::codes::error::{CodeError, CodeResult, invalid};
use crate::codes::bits::first_non_bit;
use crate::codes::packed::{BIT_BYTES, pack_word};
use rayon::prelude::*;
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
/// It encodes 64 bits at a time: each generator's output is the XOR of the
/// input word shifted by that generator's tap delays (read once from the
/// trellis's impulse response), so the cost per bit is a few word operations
/// and table lookups, not a trellis step.
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
    /// Per generator, bit d set when the output depends on the input d stages back.
    taps: Vec<u64>,
    /// The last 64 input bits of the stream (frame), the most recent at bit 63.
    history: u64,
    pos_in_frame: usize,
}

/// `SPREAD[n][b]`: the 8 bits of `b` moved to bits 0, n, 2n, ... (n = 1..4),
/// to interleave the generators' outputs.
static SPREAD: [[u32; 256]; 5] = {
    let mut t = [[0u32; 256]; 5];
    let mut n = 1;
    while n <= 4 {
        let mut b = 0;
        while b < 256 {
            let mut k = 0;
            while k < 8 {
                t[n][b] |= (((b >> k) & 1) as u32) << (k * n);
                k += 1;
            }
            b += 1;
        }
        n += 1;
    }
    t
};

impl ConvEncoder {
    /// New encoder in state 0.
    pub fn new(trellis: Arc<Trellis>, mode: EncoderMode) -> CodeResult<Self> {
        if let EncoderMode::Terminated { frame: 0 } = mode {
            return Err(invalid!("terminated encoder needs a frame of at least 1 bit"));
        }
        // The impulse response: a single 1 shifted through the register.
        let mut taps = vec![0u64; trellis.n()];
        let mut state = 0;
        for d in 0..trellis.k() as usize {
            let u = usize::from(d == 0);
            // The taps are the generators'; the inversions go on after them.
            let sym = trellis.output(state, u) ^ trellis.code().inverted();
            for (i, t) in taps.iter_mut().enumerate() {
                *t |= u64::from((sym >> i) & 1) << d;
            }
            state = trellis.next_state(state, u);
        }
        Ok(Self { trellis, mode, taps, history: 0, pos_in_frame: 0 })
    }

    /// Per generator, bit d set when its output depends on the input d
    /// stages back: what a GPU encoder computes each output from.
    pub fn taps(&self) -> &[u64] {
        &self.taps
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

    /// Encode `bits` of one frame (or of the stream) after the current
    /// history, appending `bits.len() · n` coded bits; long runs on all cores,
    /// each piece starting from the 64 input bits before it.
    fn encode_run(&mut self, bits: &[u8], out: &mut Vec<u8>) {
        let start = out.len();
        out.resize(start + bits.len() * self.taps.len(), 0);
        self.encode_run_into(bits, &mut out[start..]);
    }

    /// [`encode_run`](Self::encode_run) into `dst`, of `bits.len() · n` items.
    fn encode_run_into(&mut self, bits: &[u8], dst: &mut [u8]) {
        self.encode_plain_into(bits, dst);
        let inverted = self.trellis.code().inverted();
        if inverted != 0 {
            let flips: Vec<u8> = (0..self.taps.len()).map(|i| inverted >> i & 1).collect();
            for stage in dst.chunks_exact_mut(flips.len()) {
                stage.iter_mut().zip(&flips).for_each(|(b, f)| *b ^= f);
            }
        }
    }

    /// [`encode_run_into`](Self::encode_run_into) before any inversion: the generators' outputs.
    fn encode_plain_into(&mut self, bits: &[u8], dst: &mut [u8]) {
        let n = self.taps.len();
        if bits.len() < PAR_MIN_BITS {
            self.history = encode_slice(&self.taps, self.history, bits, dst);
            return;
        }
        let (taps, first) = (&self.taps, self.history);
        bits.par_chunks(PAR_PIECE_BITS).zip(dst.par_chunks_mut(PAR_PIECE_BITS * n)).enumerate().for_each(|(i, (piece, o))| {
            let prev = if i == 0 { first } else { pack_word(&bits[i * PAR_PIECE_BITS - 64..i * PAR_PIECE_BITS]) };
            encode_slice(taps, prev, piece, o);
        });
        self.history = pack_word(&bits[bits.len() - 64..]);
    }

    /// Encode `bits`, appending the coded bits to `out`. In terminated mode the
    /// tail follows every completed frame. A value other than 0 or 1 is an error
    /// and nothing is appended.
    pub fn encode(&mut self, bits: &[u8], out: &mut Vec<u8>) -> CodeResult<()> {
        if let Some(i) = first_non_bit(bits) {
            return Err(non_bit(bits, i));
        }
        out.reserve(self.coded_len(bits.len()));
        match self.mode {
            EncoderMode::Streaming => self.encode_run(bits, out),
            EncoderMode::Terminated { frame } => {
                let mut rest = bits;
                while !rest.is_empty() {
                    let take = rest.len().min(frame - self.pos_in_frame);
                    self.encode_run(&rest[..take], out);
                    rest = &rest[take..];
                    self.pos_in_frame += take;
                    if self.pos_in_frame == frame {
                        let tail = [0u8; 8];
                        self.encode_run(&tail[..self.trellis.k() as usize - 1], out);
                        self.history = 0;
                        self.pos_in_frame = 0;
                    }
                }
            }
        }
        Ok(())
    }

    /// [`Encoder::encode_into`]: a streaming encoder writes the `n` coded
    /// bits of each of the first `out.len() / n` input bits straight into
    /// `out`; a terminated one says `None` (its tails do not fit a fixed ratio).
    pub fn encode_into(&mut self, bits: &[u8], out: &mut [u8]) -> CodeResult<Option<(usize, usize)>> {
        if self.mode != EncoderMode::Streaming {
            return Ok(None);
        }
        let n = self.taps.len();
        let take = bits.len().min(out.len() / n);
        let bits = &bits[..take];
        if let Some(i) = first_non_bit(bits) {
            return Err(non_bit(bits, i));
        }
        self.encode_run_into(bits, &mut out[..take * n]);
        Ok(Some((take, take * n)))
    }

    /// Whether the input so far ended on a frame boundary (always true when streaming).
    pub fn at_frame_boundary(&self) -> bool {
        self.pos_in_frame == 0
    }
}

/// The error for input bit `i`, which is neither 0 nor 1.
fn non_bit(bits: &[u8], i: usize) -> CodeError {
    CodeError::InvalidParameter(format!("input bit at index {i} is {}, not 0 or 1", bits[i]))
}

/// Runs shorter than this are encoded on the calling thread.
const PAR_MIN_BITS: usize = 1 << 18;
/// Bits per piece encoded on one thread (a multiple of 64).
const PAR_PIECE_BITS: usize = 1 << 16;

/// Encode `bits` after the input history `prev` (the 64 bits before them,
/// the most recent at bit 63) into `out` (`bits.len() · n` coded bits);
/// returns the history after them.
fn encode_slice(taps: &[u64], prev: u64, bits: &[u8], out: &mut [u8]) -> u64 {
    // With n a constant the loops over the generators unroll and the
    // output goes out in whole 8-byte stores, not through memcpy calls.
    match taps.len() {
        #[cfg(target_arch = "x86_64")]
        2 if has_avx512_vbmi() => {
            // SAFETY: the CPU has every feature `encode_2_avx512` enables, checked just above.
            unsafe { encode_2_avx512(taps, prev, bits, out) }
        }
        2 => encode_n::<2>(taps, prev, bits, out),
        3 => encode_n::<3>(taps, prev, bits, out),
        _ => encode_n::<4>(taps, prev, bits, out),
    }
}

/// [`encode_slice`] for a code of `N` generators (`taps.len()`; a
/// [`ConvCode`](super::ConvCode) has 2 to 4).
fn encode_n<const N: usize>(taps: &[u64], mut prev: u64, bits: &[u8], out: &mut [u8]) -> u64 {
    let taps: &[u64; N] = taps.try_into().expect("a ConvCode has 2 to 4 generators");
    for (c, o) in bits.chunks(64).zip(out.chunks_mut(64 * N)) {
        prev = encode_word(taps, prev, pack_word(c), c.len(), o);
    }
    prev
}

/// Encode up to 64 bits (`len` of them packed in `w`) after the history
/// `prev` into `out` (`len · N` coded bits); returns the history after them.
#[inline(always)]
fn encode_word<const N: usize>(taps: &[u64; N], prev: u64, w: u64, len: usize, out: &mut [u8]) -> u64 {
    let coded = coded_words(taps, prev, w);
    // Interleave the generators a byte (8 stages) at a time and unpack
    // eight coded bits to a u64 of 0/1 bytes.
    for (j, dst) in out.chunks_mut(8 * N).enumerate() {
        let mut mixed = 0u32;
        for (i, c) in coded.iter().enumerate() {
            mixed |= SPREAD[N][((c >> (8 * j)) & 0xff) as usize] << i;
        }
        for (k, d) in dst.chunks_mut(8).enumerate() {
            let bytes = BIT_BYTES[((mixed >> (8 * k)) & 0xff) as usize].to_le_bytes();
            match <&mut [u8; 8]>::try_from(&mut *d) {
                Ok(d) => *d = bytes,
                Err(_) => d.copy_from_slice(&bytes[..d.len()]),
            }
        }
    }
    if len == 64 { w } else { (w << (64 - len)) | (prev >> len) }
}

/// Each generator's output bits for the input word `w` after the history
/// `prev`: bit s is the output at stage s.
#[inline(always)]
fn coded_words<const N: usize>(taps: &[u64; N], prev: u64, w: u64) -> [u64; N] {
    let mut coded = [0u64; N];
    for (c, &taps) in coded.iter_mut().zip(taps) {
        let mut t = taps;
        while t != 0 {
            let d = t.trailing_zeros();
            *c ^= if d == 0 { w } else { (w << d) | (prev >> (64 - d)) };
            t &= t - 1;
        }
    }
    coded
}

/// Whether the CPU has what `encode_2_avx512` enables.
#[cfg(target_arch = "x86_64")]
fn has_avx512_vbmi() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512vbmi")
}

/// Byte k of the first 64 output bytes of a rate-1/2 word: the byte of
/// stage k/2 of generator k mod 2, as an index into the two generators'
/// spread bits (the second's from 64 on). The second 64 bytes take the
/// same pattern 32 stages on.
#[cfg(target_arch = "x86_64")]
const INTERLEAVE_2: [u8; 64] = {
    let mut t = [0u8; 64];
    let mut k = 0;
    while k < 64 {
        t[k] = (k / 2 + 64 * (k % 2)) as u8;
        k += 1;
    }
    t
};

/// [`encode_n`]`::<2>` with AVX-512, bit for bit (the encoder's tests run
/// whichever this CPU takes; `avx512_encoder_matches_the_portable_one` both):
/// a word of 64 input bits is one byte-to-mask test, each generator's 64
/// output bits are spread to 0/1 bytes by a masked move, and one two-source
/// byte permutation per 64 output bytes interleaves the generators.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
fn encode_2_avx512(taps: &[u64], mut prev: u64, bits: &[u8], out: &mut [u8]) -> u64 {
    use std::arch::x86_64::*;
    let taps: &[u64; 2] = taps.try_into().expect("a rate-1/2 code");
    let one = _mm512_set1_epi8(1);
    // SAFETY: INTERLEAVE_2 is 64 bytes, one unaligned vector load.
    let lo = unsafe { _mm512_loadu_si512(INTERLEAVE_2.as_ptr().cast()) };
    let hi = _mm512_add_epi8(lo, _mm512_set1_epi8(32));
    let whole = bits.len() / 64 * 64;
    for (c, o) in bits[..whole].chunks_exact(64).zip(out.chunks_exact_mut(128)) {
        // SAFETY: `c` holds 64 bytes, one unaligned vector load.
        let w = _mm512_test_epi8_mask(unsafe { _mm512_loadu_si512(c.as_ptr().cast()) }, one);
        let [c0, c1] = coded_words(taps, prev, w);
        let (g0, g1) = (_mm512_maskz_mov_epi8(c0, one), _mm512_maskz_mov_epi8(c1, one));
        // SAFETY: `o` holds 128 bytes, two unaligned vector stores.
        unsafe {
            _mm512_storeu_si512(o.as_mut_ptr().cast(), _mm512_permutex2var_epi8(g0, lo, g1));
            _mm512_storeu_si512(o[64..].as_mut_ptr().cast(), _mm512_permutex2var_epi8(g0, hi, g1));
        }
        prev = w;
    }
    encode_n::<2>(taps, prev, &bits[whole..], &mut out[2 * whole..])
}

impl Encoder for ConvEncoder {
    fn encode(&mut self, bits: &[u8], out: &mut Vec<u8>) -> CodeResult<()> {
        ConvEncoder::encode(self, bits, out)
    }

    fn encode_into(&mut self, bits: &[u8], out: &mut [u8]) -> CodeResult<Option<(usize, usize)>> {
        ConvEncoder::encode_into(self, bits, out)
    }

    fn at_boundary(&self) -> bool {
        self.at_frame_boundary()
    }

    fn unit_bits(&self) -> u64 {
        match self.mode {
            EncoderMode::Streaming => 1,
            EncoderMode::Terminated { frame } => frame as u64,
        }
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

    /// The trellis walked one bit at a time, the definition the word encoder must match.
    fn walk(t: &Trellis, bits: &[u8], frame: Option<usize>) -> Vec<u8> {
        let (mut out, mut state) = (Vec::new(), 0);
        let mut step = |u: usize, out: &mut Vec<u8>| {
            let sym = t.output(state, u);
            out.extend((0..t.n()).map(|i| (sym >> i) & 1));
            state = t.next_state(state, u);
        };
        for (i, &b) in bits.iter().enumerate() {
            step(b as usize, &mut out);
            if frame.is_some_and(|f| (i + 1) % f == 0) {
                (1..t.k()).for_each(|_| step(0, &mut out));
            }
        }
        out
    }

    /// Bits that are 0 or 1 (as the encoder checks first) and lengths
    /// around whole words.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx512_encoder_matches_the_portable_one() {
        if !has_avx512_vbmi() {
            eprintln!("skipped: this CPU lacks AVX-512 VBMI");
            return;
        }
        let bits: Vec<u8> = (0..5000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 29 & 1) as u8).collect();
        for code in [ConvCode::k7_171_133(), ConvCode::new(3, &[0o7, 0o5]).unwrap(), ConvCode::new(9, &[0o753, 0o561]).unwrap()] {
            let enc = ConvEncoder::new(Arc::new(Trellis::new(&code)), EncoderMode::Streaming).unwrap();
            for (len, prev) in [(5000, 0), (64, u64::MAX), (63, 0x1234_5678_9abc_def0), (129, 7), (1, 1 << 63), (0, 5)] {
                let (mut want, mut got) = (vec![0u8; 2 * len], vec![0u8; 2 * len]);
                let h_want = encode_n::<2>(&enc.taps, prev, &bits[..len], &mut want);
                // SAFETY: the CPU has the features, checked above.
                let h_got = unsafe { encode_2_avx512(&enc.taps, prev, &bits[..len], &mut got) };
                assert_eq!((h_got, &got), (h_want, &want), "{} {len} bits", code.polys_octal());
            }
        }
    }

    #[test]
    fn encode_into_fills_the_room_it_is_given() {
        let bits: Vec<u8> = (0..3000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 29 & 1) as u8).collect();
        for code in [ConvCode::k7_171_133(), ConvCode::k7_standard(3).unwrap(), ConvCode::k7_standard(4).unwrap()] {
            let t = Arc::new(Trellis::new(&code));
            let n = t.n();
            let want = walk(&t, &bits, None);
            let mut enc = ConvEncoder::new(t, EncoderMode::Streaming).unwrap();
            let (mut got, mut at) = (Vec::new(), 0);
            // Rooms that are not multiples of n, one too small for a bit, and
            // more than the input needs.
            for room in [n - 1, 7, 130, 1, 64 * n + 1, 10_000].into_iter().cycle() {
                if at == bits.len() {
                    break;
                }
                let mut out = vec![9u8; room];
                let (took, wrote) = enc.encode_into(&bits[at..], &mut out).unwrap().unwrap();
                assert_eq!((took, wrote), ((bits.len() - at).min(room / n), (bits.len() - at).min(room / n) * n));
                assert!(out[wrote..].iter().all(|&b| b == 9), "wrote past its count");
                got.extend_from_slice(&out[..wrote]);
                at += took;
            }
            assert_eq!(got, want, "{}", code.polys_octal());
            let err = enc.encode_into(&[0, 1, 2], &mut [0u8; 64]).unwrap_err();
            assert!(err.to_string().contains("index 2 is 2"), "{err}");
            // A bad bit beyond the room is not read yet.
            assert_eq!(enc.encode_into(&[0, 2], &mut vec![0u8; n]).unwrap(), Some((1, n)));
        }
        let mut framed = ConvEncoder::new(k7(), EncoderMode::Terminated { frame: 10 }).unwrap();
        assert_eq!(framed.encode_into(&[0, 1], &mut [0u8; 8]).unwrap(), None);
    }

    #[test]
    fn word_encoder_equals_the_trellis_walk_for_every_code_and_split() {
        let bits: Vec<u8> = (0..5000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 29 & 1) as u8).collect();
        let codes = [
            ConvCode::k7_171_133(),
            ConvCode::new(3, &[0o7, 0o5]).unwrap(),
            ConvCode::new(9, &[0o753, 0o561]).unwrap(),
            ConvCode::k7_standard(3).unwrap(),
            ConvCode::k7_standard(4).unwrap(),
            // CCSDS (second output inverted) and its NASA-DSN order.
            ConvCode::k7_171_133().with_inverted(0b10).unwrap(),
            ConvCode::k7_171_133().with_inverted(0b10).unwrap().reversed(),
            ConvCode::k7_standard(3).unwrap().with_inverted(0b101).unwrap(),
        ];
        for code in codes {
            let t = Arc::new(Trellis::new(&code));
            for (mode, frame) in [(EncoderMode::Streaming, None), (EncoderMode::Terminated { frame: 100 }, Some(100)), (EncoderMode::Terminated { frame: 7 }, Some(7))] {
                let want = walk(&t, &bits, frame);
                for split in [5000, 64, 63, 1, 200, 17] {
                    let mut enc = ConvEncoder::new(t.clone(), mode).unwrap();
                    let mut got = Vec::new();
                    for c in bits.chunks(split) {
                        enc.encode(c, &mut got).unwrap();
                    }
                    assert_eq!(got, want, "{} {mode:?} split {split}", code.polys_octal());
                }
            }
        }
    }

    #[test]
    fn long_runs_on_all_cores_equal_the_trellis_walk() {
        let bits: Vec<u8> = (0..700_001u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 30 & 1) as u8).collect();
        for code in [ConvCode::k7_171_133(), ConvCode::k7_standard(3).unwrap(), ConvCode::k7_171_133().with_inverted(0b10).unwrap()] {
            let t = Arc::new(Trellis::new(&code));
            for (mode, frame) in [(EncoderMode::Streaming, None), (EncoderMode::Terminated { frame: 300_000 }, Some(300_000))] {
                let want = walk(&t, &bits, frame);
                for split in [700_001, 333_333, 262_144] {
                    let mut enc = ConvEncoder::new(t.clone(), mode).unwrap();
                    let mut got = Vec::new();
                    for c in bits.chunks(split) {
                        enc.encode(c, &mut got).unwrap();
                    }
                    assert!(got == want, "{} {mode:?} split {split}", code.polys_octal());
                }
            }
        }
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
