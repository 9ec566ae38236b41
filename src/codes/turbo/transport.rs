//! A transport block through the whole LTE chain (TS 36.212 §5.1.1–5.1.4):
//! CRC24A, code-block segmentation with CRC24B, turbo encoding, rate
//! matching to the block's share of G; and back: de-rate-matching with soft
//! combining, the code blocks decoded by any turbo decoder, desegmentation
//! and the transport block's CRC.

use super::code::TurboCode;
use super::crc::CRC24A;
use super::encoder::encode_block;
use super::rate_match::RateMatch;
use super::segment::Segmentation;
use crate::codes::decode::{Batch, BatchDecoder, Decoded};
use crate::codes::encode::Encoder;
use crate::codes::error::{CodeError, CodeResult, invalid};
use crate::codes::llr::Llr;

/// LLR given to bits the receiver knows are 0 (the filler and the parity
/// the encoder makes of it): large against any channel LLR, small enough
/// that the decoders' metrics stay far from `f32` overflow.
pub const KNOWN_ZERO_LLR: f32 = 1e4;

/// One code block of a transport block: its code, filler, rate matching.
#[derive(Debug, Clone)]
struct Block {
    code: TurboCode,
    filler: usize,
    rm: RateMatch,
}

/// The chain of a transport block of A bits sent in G coded bits with
/// redundancy version `rv`, BPSK on one layer (Q_m = N_L = 1), the whole
/// circular buffer (N_cb = K_w).
///
/// # Example
/// ```
/// use gpufec::codes::turbo::TransportBlock;
/// let tb = TransportBlock::new(7000, 21000, 0).unwrap();
/// // B = 7024 bits in two blocks, K− first; 32 filler bits.
/// assert_eq!((tb.blocks(), tb.segmentation().filler), (vec![3520, 3584], 32));
/// let bits = vec![1u8; 7000];
/// let mut sent = Vec::new();
/// tb.encode(&bits, &mut sent).unwrap();
/// assert_eq!(sent.len(), 21000);
/// assert!(TransportBlock::new(7000, 7000, 0).is_err()); // code rate above 1
/// ```
#[derive(Debug, Clone)]
pub struct TransportBlock {
    a: usize,
    g: usize,
    seg: Segmentation,
    blocks: Vec<Block>,
}

impl TransportBlock {
    /// The chain for A = `a` information bits in G = `g` coded bits (at most
    /// [`super::rate_match::MAX_E`] per code block) with redundancy version
    /// `rv` (0..=3). Refused when a code block's share of G cannot carry its
    /// information (a code rate above 1).
    pub fn new(a: usize, g: usize, rv: u8) -> CodeResult<Self> {
        if a == 0 {
            return Err(invalid!("a transport block of 0 bits"));
        }
        let seg = Segmentation::new(a + CRC24A.width())?;
        if g < seg.c {
            return Err(invalid!("G = {g} coded bits for {} code blocks: at least one bit each", seg.c));
        }
        // §5.1.4.1.2 with N_L = Q_m = 1: the last γ blocks take one bit more.
        let gamma = g % seg.c;
        let blocks = (0..seg.c)
            .map(|r| {
                let k = seg.block_len(r);
                let filler = if r == 0 { seg.filler } else { 0 };
                let e = g / seg.c + usize::from(r >= seg.c - gamma);
                let rm = RateMatch::new(k, filler, e, rv, None)?;
                rm.check_decodable().map_err(|e| invalid!("G = {g} for A = {a}: code block {r}: {e}"))?;
                Ok(Block { code: TurboCode::lte(k)?, filler, rm })
            })
            .collect::<CodeResult<Vec<_>>>()?;
        Ok(Self { a, g, seg, blocks })
    }

    /// A: information bits.
    pub fn a(&self) -> usize {
        self.a
    }

    /// G: coded bits sent.
    pub fn g(&self) -> usize {
        self.g
    }

    /// The code block sizes K_r in order.
    pub fn blocks(&self) -> Vec<usize> {
        self.blocks.iter().map(|b| b.code.k()).collect()
    }

    /// The segmentation.
    pub fn segmentation(&self) -> &Segmentation {
        &self.seg
    }

    /// Encode one transport block (A bits, 0 or 1), appending its G bits.
    pub fn encode(&self, bits: &[u8], out: &mut Vec<u8>) -> CodeResult<()> {
        if bits.len() != self.a {
            return Err(CodeError::LengthMismatch(format!("a transport block of A = {} bits was given {}", self.a, bits.len())));
        }
        let mut with_crc = Vec::with_capacity(self.seg.b);
        CRC24A.attach(bits, &mut with_crc);
        let mut coded = Vec::new();
        for (block, info) in self.blocks.iter().zip(self.seg.segment(&with_crc)?) {
            coded.clear();
            coded.resize(block.code.coded_len(), 0);
            encode_block(&block.code, &info, &mut coded);
            block.rm.select(&coded, out)?;
        }
        Ok(())
    }

    /// The decoder inputs of one transport block's G LLRs: for each code
    /// block, its 3K + 12 de-rate-matched LLRs (soft-combined, the known
    /// zeros set to [`KNOWN_ZERO_LLR`]) appended to `units[i]`, where `i`
    /// indexes [`Self::block_sizes`].
    fn dematch<T: Llr>(&self, llrs: &[T], units: &mut [Vec<f32>]) -> CodeResult<()> {
        if llrs.len() != self.g {
            return Err(CodeError::LengthMismatch(format!("a transport block of G = {} coded bits was given {} LLRs", self.g, llrs.len())));
        }
        let sizes = self.block_sizes();
        let mut at = 0;
        for b in &self.blocks {
            let e = b.rm.e();
            let out = &mut units[sizes.iter().position(|&k| k == b.code.k()).expect("a size of the block list")];
            let start = out.len();
            out.resize(start + b.code.coded_len(), 0.0);
            let unit = &mut out[start..];
            b.rm.combine(&llrs[at..at + e], unit).map_err(|err| match err {
                CodeError::NonFiniteLlr { index } => CodeError::NonFiniteLlr { index: at + index },
                other => other,
            })?;
            let d1 = b.code.layout().stream_start(1);
            unit[..b.filler].fill(KNOWN_ZERO_LLR);
            unit[d1..d1 + b.filler].fill(KNOWN_ZERO_LLR);
            at += e;
        }
        Ok(())
    }

    /// The distinct code block sizes, K− first.
    pub fn block_sizes(&self) -> Vec<usize> {
        let mut k: Vec<usize> = self.blocks.iter().map(|b| b.code.k()).collect();
        k.dedup();
        k
    }

    /// The TurboCode of each distinct size, in [`Self::block_sizes`]' order.
    pub fn codes(&self) -> Vec<TurboCode> {
        self.block_sizes().into_iter().map(|k| self.blocks.iter().find(|b| b.code.k() == k).expect("a listed size").code.clone()).collect()
    }
}

/// Information bits to transport blocks of G bits; an unfinished block
/// waits for its remaining bits.
pub struct TransportEncoder {
    tb: TransportBlock,
    pending: Vec<u8>,
}

impl TransportEncoder {
    /// The encoder of `tb`'s chain.
    pub fn new(tb: TransportBlock) -> Self {
        Self { tb, pending: Vec::new() }
    }
}

impl Encoder for TransportEncoder {
    fn encode(&mut self, bits: &[u8], out: &mut Vec<u8>) -> CodeResult<()> {
        if let Some(i) = crate::codes::bits::first_non_bit(bits) {
            return Err(invalid!("input bit at index {i} is {}, not 0 or 1", bits[i]));
        }
        self.pending.extend_from_slice(bits);
        let a = self.tb.a;
        let whole = self.pending.len() / a * a;
        for block in self.pending[..whole].chunks(a) {
            self.tb.encode(block, out)?;
        }
        self.pending.drain(..whole);
        Ok(())
    }

    fn at_boundary(&self) -> bool {
        self.pending.is_empty()
    }

    fn rate(&self) -> f64 {
        self.tb.a as f64 / self.tb.g as f64
    }
}

/// What decoding one transport block found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransportReport {
    /// Whether the transport block's CRC24A checks.
    pub crc_ok: bool,
    /// Iterations of its code blocks, summed.
    pub iterations: u32,
}

/// Decodes whole transport blocks with one decoder per code block size
/// (made by `make` for each [`TurboCode`]).
pub struct TransportDecoder {
    tb: TransportBlock,
    decoders: Vec<Box<dyn BatchDecoder<f32>>>,
    units: Vec<Vec<f32>>,
    decoded: Vec<Decoded>,
}

impl TransportDecoder {
    /// A decoder of `tb`'s blocks; `make` builds the decoder of one code.
    pub fn new(tb: TransportBlock, make: impl Fn(TurboCode) -> CodeResult<Box<dyn BatchDecoder<f32>>>) -> CodeResult<Self> {
        let decoders = tb.codes().into_iter().map(make).collect::<CodeResult<Vec<_>>>()?;
        let n = decoders.len();
        Ok(Self { tb, decoders, units: vec![Vec::new(); n], decoded: vec![Decoded::default(); n] })
    }

    /// The chain decoded.
    pub fn transport_block(&self) -> &TransportBlock {
        &self.tb
    }

    /// The transport block and the decoder of its largest code blocks.
    pub fn describe(&self) -> String {
        let tb = &self.tb;
        let last = self.decoders.last().map_or(String::new(), |d| d.describe());
        format!("transport block A = {}, G = {}, code blocks {:?}; {last}", tb.a, tb.g, tb.blocks())
    }

    /// Decode whole transport blocks of G LLRs each from `llrs`, appending
    /// A bits per block to `bits` and a report per block to `reports`.
    pub fn decode<T: Llr>(&mut self, llrs: &[T], bits: &mut Vec<u8>, reports: &mut Vec<TransportReport>) -> CodeResult<()> {
        let g = self.tb.g;
        if !llrs.len().is_multiple_of(g) {
            return Err(CodeError::LengthMismatch(format!("{} LLRs are not whole transport blocks of G = {g}", llrs.len())));
        }
        self.units.iter_mut().for_each(Vec::clear);
        for tb in llrs.chunks(g) {
            self.tb.dematch(tb, &mut self.units)?;
        }
        let sizes = self.tb.block_sizes();
        for ((dec, units), (out, &k)) in self.decoders.iter_mut().zip(&self.units).zip(self.decoded.iter_mut().zip(&sizes)) {
            out.clear();
            dec.decode(&Batch::uniform(units, 3 * k + 12)?, out)?;
        }
        // Walk the blocks in order, taking each from its size's results.
        let mut next = vec![0usize; sizes.len()];
        let mut blocks: Vec<&[u8]> = Vec::with_capacity(self.tb.seg.c);
        let mut with_crc = Vec::with_capacity(self.tb.seg.b);
        for _ in 0..llrs.len() / g {
            blocks.clear();
            let mut iterations = 0;
            for b in &self.tb.blocks {
                let s = sizes.iter().position(|&k| k == b.code.k()).expect("a listed size");
                let k = b.code.k();
                blocks.push(&self.decoded[s].bits[next[s] * k..][..k]);
                iterations += self.decoded[s].reports[next[s]].iterations;
                next[s] += 1;
            }
            with_crc.clear();
            self.tb.seg.desegment(&blocks, &mut with_crc)?;
            let crc_ok = CRC24A.check(&with_crc);
            bits.extend_from_slice(&with_crc[..self.tb.a]);
            reports.push(TransportReport { crc_ok, iterations });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes::turbo::{CpuTurbo, DecoderConfig, EarlyStop, test_bits as bits};

    fn decoder(tb: &TransportBlock, stop: EarlyStop) -> TransportDecoder {
        let cfg = DecoderConfig { early_stop: stop, ..Default::default() };
        TransportDecoder::new(tb.clone(), |code| Ok(Box::new(CpuTurbo::<f32>::new(code, cfg, 1.0, 1)?))).unwrap()
    }

    #[test]
    fn clean_transport_blocks_come_back_for_every_size_and_rv() {
        // One block, filler below 40, two sizes with filler, several blocks;
        // rates from 1/7 to 0.83. Every rv alone decodes at rates up to
        // about 1/2; above, rv 1..3 puncture systematic bits that only a
        // combination with rv 0 brings back, so rv 0 only.
        for (a, g, rvs) in [(16, 120, 0..4), (100, 400, 0..4), (1000, 1200, 0..1), (6120, 13000, 0..4), (7000, 21000, 0..4), (20000, 45000, 0..4)] {
            let stop = if TransportBlock::new(a, g, 0).unwrap().segmentation().c > 1 { EarlyStop::Crc24B } else { EarlyStop::Crc24A };
            for rv in rvs {
                let tb = TransportBlock::new(a, g, rv).unwrap();
                let sent = bits(2 * a, a as u64 + rv as u64);
                let mut coded = Vec::new();
                TransportEncoder::new(tb.clone()).encode(&sent, &mut coded).unwrap();
                assert_eq!(coded.len(), 2 * g);
                let llrs: Vec<f32> = coded.iter().map(|&b| if b == 0 { 3.0 } else { -3.0 }).collect();
                let (mut got, mut reports) = (Vec::new(), Vec::new());
                decoder(&tb, stop).decode(&llrs, &mut got, &mut reports).unwrap();
                assert_eq!(got, sent, "A {a} G {g} rv {rv}");
                assert!(reports.iter().all(|r| r.crc_ok), "A {a} G {g} rv {rv}: {reports:?}");
                // Clean input stops on the first iteration's CRC.
                assert!(reports.iter().all(|r| r.iterations as usize == tb.blocks().len()), "{reports:?}");
            }
        }
    }

    #[test]
    fn a_wrong_block_fails_its_crc() {
        let tb = TransportBlock::new(500, 1600, 0).unwrap();
        let mut coded = Vec::new();
        tb.encode(&bits(500, 9), &mut coded).unwrap();
        // Send the opposite of every bit: the decoder finds some codeword, not this one.
        let llrs: Vec<f32> = coded.iter().map(|&b| if b == 0 { -3.0 } else { 3.0 }).collect();
        let (mut got, mut reports) = (Vec::new(), Vec::new());
        decoder(&tb, EarlyStop::Never).decode(&llrs, &mut got, &mut reports).unwrap();
        assert!(!reports[0].crc_ok);
    }

    #[test]
    fn bad_transport_blocks_are_refused() {
        for (a, g, rv, says) in [(0, 100, 0, "0 bits"), (100, 100, 0, "code block 0"), (20000, 3, 0, "at least one bit each"), (100, 400, 4, "rv"), (1 << 21, 1 << 23, 0, "above")] {
            let e = TransportBlock::new(a, g, rv).unwrap_err().to_string();
            assert!(e.contains(says), "A {a} G {g} rv {rv}: {e}");
        }
        let tb = TransportBlock::new(100, 400, 0).unwrap();
        let mut dec = decoder(&tb, EarlyStop::Never);
        let (mut got, mut reports) = (Vec::new(), Vec::new());
        let e = dec.decode(&[0.0f32; 399], &mut got, &mut reports).unwrap_err().to_string();
        assert!(e.contains("399"), "{e}");
        let mut nan = vec![1.0f32; 800];
        nan[555] = f32::NAN;
        let e = dec.decode(&nan, &mut got, &mut reports).unwrap_err().to_string();
        assert!(e.contains("155"), "the NaN's place in its transport block: {e}");
        assert!(got.is_empty() && reports.is_empty());
        let e = tb.encode(&[1, 0, 2], &mut Vec::new()).unwrap_err().to_string();
        assert!(e.contains("100"), "{e}");
    }
}
