//! A transport block through the whole LTE chain (TS 36.212 §5.1.1–5.1.4):
//! CRC24A, code-block segmentation with CRC24B, turbo encoding, rate
//! matching to the block's share of G; and back: de-rate-matching with soft
//! combining, the code blocks decoded by any turbo decoder, desegmentation
//! and the transport block's CRC.

use super::code::TurboCode;
use crate::codes::crc::CRC24A;
use super::encoder::encode_block;
use super::rate_match::RateMatch;
use super::segment::{MAX_B, Segmentation};
use crate::codes::encode::{Encoder, Pending};
use crate::codes::error::{CodeError, CodeResult, invalid};
use crate::codes::framing::MAX_UNIT_ITEMS;
use crate::codes::channel::Quantizer;
use crate::codes::llr::Llr;
use rayon::prelude::*;

/// LLR given to bits the receiver knows are 0 (the filler and the parity
/// the encoder makes of it): large against any channel LLR, small enough
/// that the decoders' metrics stay far from `f32` overflow.
pub const KNOWN_ZERO_LLR: f32 = 1e4;

/// The LLR of a known zero in a code block's layout of `T`:
/// [`KNOWN_ZERO_LLR`], which an `i8` layout saturates to 127.
pub fn known_zero<T: Llr>() -> T {
    T::from_llr(KNOWN_ZERO_LLR, &Quantizer::new(1.0).expect("a unit scale"))
}

/// Largest A accepted: B = A + 24 within [`MAX_B`] (2^20), well above the
/// largest LTE transport block (391656 bits, TS 36.213 Table 7.1.7.2.5-1).
pub const MAX_A: usize = MAX_B - 24;

/// Largest G accepted: 2^26 coded bits, the largest unit a cutter cuts
/// ([`MAX_UNIT_ITEMS`]), checked before the rate matching's index maps are
/// allocated.
pub const MAX_G: usize = MAX_UNIT_ITEMS;

/// One code block of a transport block: its code, rate matching, the index
/// of its size in [`TransportBlock::block_sizes`] and of its rate matching
/// among that size's ([`TransportBlock::rate_matchings`]), and where its E
/// bits start among the G.
#[derive(Debug, Clone)]
pub(super) struct Block {
    pub(super) code: TurboCode,
    pub(super) rm: RateMatch,
    pub(super) size: usize,
    pub(super) format: u16,
    pub(super) at: usize,
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
    /// The distinct rate matchings of each size, in [`Self::block_sizes`]' order.
    formats: Vec<Vec<RateMatch>>,
}

impl TransportBlock {
    /// The chain for A = `a` information bits (1..=[`MAX_A`]) in G = `g`
    /// coded bits (at most [`MAX_G`], and [`super::rate_match::MAX_E`] per
    /// code block) with redundancy version `rv` (0..=3). Refused when a code
    /// block's share of G cannot carry its information (a code rate above 1).
    pub fn new(a: usize, g: usize, rv: u8) -> CodeResult<Self> {
        if a == 0 {
            return Err(invalid!("a transport block of 0 bits"));
        }
        if a > MAX_A {
            return Err(invalid!("a transport block of A = {a} bits is above the {MAX_A} accepted (the largest LTE TBS is 391656)"));
        }
        if g > MAX_G {
            return Err(invalid!("G = {g} coded bits is above the {MAX_G} accepted per transport block"));
        }
        let seg = Segmentation::new(a + CRC24A.width())?;
        if g < seg.c {
            return Err(invalid!("G = {g} coded bits for {} code blocks: at least one bit each", seg.c));
        }
        let mut sizes: Vec<usize> = seg.blocks().collect();
        sizes.dedup();
        // §5.1.4.1.2 with N_L = Q_m = 1: the last γ blocks take one bit more.
        let gamma = g % seg.c;
        let mut at = 0;
        let mut blocks = (0..seg.c)
            .map(|r| {
                let k = seg.block_len(r);
                let filler = if r == 0 { seg.filler } else { 0 };
                let e = g / seg.c + usize::from(r >= seg.c - gamma);
                let rm = RateMatch::new(k, filler, e, rv, None)?;
                rm.check_decodable().map_err(|e| invalid!("G = {g} for A = {a}: code block {r}: {e}"))?;
                let size = sizes.iter().position(|&s| s == k).expect("a size of the segmentation");
                at += e;
                Ok(Block { code: TurboCode::lte(k)?, rm, size, format: 0, at: at - e })
            })
            .collect::<CodeResult<Vec<_>>>()?;
        // At most four per size: E or E + 1 bits, with filler (block 0) or not.
        let mut formats: Vec<Vec<RateMatch>> = vec![Vec::new(); sizes.len()];
        for b in &mut blocks {
            let of_size = &mut formats[b.size];
            b.format = match of_size.iter().position(|rm| *rm == b.rm) {
                Some(f) => f as u16,
                None => {
                    of_size.push(b.rm.clone());
                    (of_size.len() - 1) as u16
                }
            };
        }
        Ok(Self { a, g, seg, blocks, formats })
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

    /// The code blocks in order.
    pub(super) fn code_blocks(&self) -> &[Block] {
        &self.blocks
    }

    /// Encode one transport block (A bits, 0 or 1), appending its G bits;
    /// its code blocks on all cores.
    pub fn encode(&self, bits: &[u8], out: &mut Vec<u8>) -> CodeResult<()> {
        if bits.len() != self.a {
            return Err(CodeError::LengthMismatch(format!("a transport block of A = {} bits was given {}", self.a, bits.len())));
        }
        let at = out.len();
        out.resize(at + self.g, 0);
        let r = self.encode_into(bits, &mut out[at..]);
        if r.is_err() {
            out.truncate(at);
        }
        r
    }

    /// [`Self::encode`] into `out` (G entries) of A bits.
    fn encode_into(&self, bits: &[u8], out: &mut [u8]) -> CodeResult<()> {
        let mut with_crc = Vec::with_capacity(self.seg.b);
        CRC24A.attach(bits, &mut with_crc);
        let infos = self.seg.segment(&with_crc)?;
        // Each code block's E bits, cut in order: the blocks are independent.
        let mut shares = Vec::with_capacity(self.blocks.len());
        let mut rest = out;
        for b in &self.blocks {
            let (share, tail) = rest.split_at_mut(b.rm.e());
            shares.push(share);
            rest = tail;
        }
        self.blocks.par_iter().zip(infos).zip(shares).for_each(|((block, info), share)| {
            let mut coded = vec![0; block.code.coded_len()];
            encode_block(&block.code, &info, &mut coded);
            block.rm.gather(&coded, share);
        });
        Ok(())
    }

    /// Code block `r`'s decoder input: its 3K + 12 LLRs in `out`,
    /// de-rate-matched from its share of `llrs`, one transport block's G
    /// LLRs, each converted by `to` (soft-combined as [`RateMatch::combine`]
    /// adds, the known zeros at [`known_zero`]). The lengths and the LLRs'
    /// finiteness are the caller's to check.
    pub(super) fn dematch_block<T: Llr, L: Llr>(&self, r: usize, llrs: &[T], out: &mut [L], to: impl Fn(T) -> L) {
        let b = &self.blocks[r];
        b.rm.scatter(&llrs[b.at..b.at + b.rm.e()], out, to);
        for z in b.rm.known_zeros() {
            out[z].fill(known_zero());
        }
    }

    /// Whether LLRs of `T` are de-rate-matched into `f32` layouts, not
    /// layouts of `T`: `i8` LLRs when a code block sends some bit more than
    /// once, whose sums (up to E / 3K of them) an `i8` would saturate.
    pub fn wide_layouts<T: Llr>(&self) -> bool {
        T::TYPE == crate::codes::llr::LlrType::I8 && self.blocks.iter().any(|b| b.rm.repeats())
    }

    /// The distinct rate matchings of the code blocks of each size, in
    /// [`Self::block_sizes`]' order: the unit formats of an inner decoder
    /// that takes rate-matched LLRs (see [`super::TransportDecoder::rate_matched`]).
    pub fn rate_matchings(&self) -> &[Vec<RateMatch>] {
        &self.formats
    }

    /// The distinct code block sizes, K− first.
    pub fn block_sizes(&self) -> Vec<usize> {
        self.codes().iter().map(TurboCode::k).collect()
    }

    /// The TurboCode of each distinct size, in [`Self::block_sizes`]' order.
    pub fn codes(&self) -> Vec<TurboCode> {
        let mut codes: Vec<TurboCode> = Vec::new();
        for b in &self.blocks {
            if codes.len() == b.size {
                codes.push(b.code.clone());
            }
        }
        codes
    }

    /// Code blocks of each distinct size, in [`Self::block_sizes`]' order.
    pub fn blocks_per_size(&self) -> Vec<usize> {
        let mut n = Vec::new();
        for b in &self.blocks {
            n.resize(b.size + 1, 0);
            n[b.size] += 1;
        }
        n
    }
}

/// Information bits to transport blocks of G bits; an unfinished block
/// waits for its remaining bits.
pub struct TransportEncoder {
    tb: TransportBlock,
    pending: Pending,
}

impl TransportEncoder {
    /// The encoder of `tb`'s chain.
    pub fn new(tb: TransportBlock) -> Self {
        Self { tb, pending: Pending::default() }
    }
}

impl Encoder for TransportEncoder {
    /// The transport blocks of a call on all cores, and within each its code
    /// blocks.
    fn encode(&mut self, bits: &[u8], out: &mut Vec<u8>) -> CodeResult<()> {
        let tb = &self.tb;
        self.pending.encode(bits, (tb.a, tb.g), 1, out, |info, sent| tb.encode_into(info, sent))
    }

    fn encode_into(&mut self, bits: &[u8], out: &mut [u8]) -> CodeResult<Option<(usize, usize)>> {
        let tb = &self.tb;
        self.pending.encode_into(bits, (tb.a, tb.g), 1, out, |info, sent| tb.encode_into(info, sent)).map(Some)
    }

    fn at_boundary(&self) -> bool {
        self.pending.is_empty()
    }

    fn unit_bits(&self) -> u64 {
        self.tb.a as u64
    }

    fn rate(&self) -> f64 {
        self.tb.a as f64 / self.tb.g as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes::turbo::test_bits as bits;

    #[test]
    fn bad_transport_blocks_are_refused() {
        for (a, g, rv, says) in [
            (0, 100, 0, "0 bits"),
            (100, 100, 0, "code block 0"),
            (20000, 3, 0, "at least one bit each"),
            (100, 400, 4, "rv"),
            (MAX_A + 1, 1 << 23, 0, "above the 1048552 accepted"),
            (100, MAX_G + 1, 0, "G = 67108865 coded bits is above"),
            (100, usize::MAX, 0, "is above"),
        ] {
            let e = TransportBlock::new(a, g, rv).unwrap_err().to_string();
            assert!(e.contains(says), "A {a} G {g} rv {rv}: {e}");
        }
        // The largest A still makes a chain: 172 code blocks.
        assert_eq!(TransportBlock::new(MAX_A, 3_200_000, 3).unwrap().segmentation().c, 172);
        let tb = TransportBlock::new(100, 400, 0).unwrap();
        let e = tb.encode(&[1, 0, 2], &mut Vec::new()).unwrap_err().to_string();
        assert!(e.contains("100"), "{e}");
    }

    #[test]
    fn sizes_and_their_blocks() {
        let tb = TransportBlock::new(20000, 60000, 0).unwrap();
        assert_eq!(tb.blocks(), [4992, 5056, 5056, 5056]);
        assert_eq!((tb.block_sizes(), tb.blocks_per_size()), (vec![4992, 5056], vec![1, 3]));
        let mut coded = Vec::new();
        TransportEncoder::new(tb.clone()).encode(&bits(20000, 3), &mut coded).unwrap();
        assert_eq!(tb.code_blocks().iter().map(|b| (b.at, b.code.coded_len())).collect::<Vec<_>>(), [(0, 3 * 4992 + 12), (15000, 15180), (30000, 15180), (45000, 15180)]);
    }

    /// Each code block's layout is what `combine` makes of its share of G,
    /// with the known zeros set: f32 sums, i8 sums saturated at ±127 at
    /// every step (repetition at rate 1/5 makes them large); filler, E and
    /// E + 1, rv 2.
    #[test]
    fn dematching_a_block_is_combining_its_share() {
        let tb = TransportBlock::new(7000, 35001, 2).unwrap();
        let es: Vec<usize> = tb.code_blocks().iter().map(|b| b.rm.e()).collect();
        assert!(tb.segmentation().filler > 0 && es == [17500, 17501], "{es:?}");
        assert!(tb.wide_layouts::<i8>() && !tb.wide_layouts::<f32>() && !TransportBlock::new(7000, 21000, 0).unwrap().wide_layouts::<i8>());
        let f: Vec<f32> = bits(35001, 4).iter().zip(bits(35001, 5)).map(|(&b, c)| (1.0 - 2.0 * f32::from(b)) * (1.0 + 100.0 * f32::from(c))).collect();
        let i: Vec<i8> = f.iter().map(|&l| l as i8).collect();
        for (r, b) in tb.code_blocks().iter().enumerate() {
            let n = b.code.coded_len();
            let mut want = vec![0.0f32; n];
            b.rm.combine(&f[b.at..b.at + b.rm.e()], &mut want).unwrap();
            let mut want_i8 = vec![0i8; n];
            b.rm.combine(&i[b.at..b.at + b.rm.e()], &mut want_i8).unwrap();
            for z in b.rm.known_zeros() {
                want[z.clone()].fill(KNOWN_ZERO_LLR);
                want_i8[z].fill(127);
            }
            let (mut got, mut got_i8) = (vec![f32::NAN; n], vec![7i8; n]);
            tb.dematch_block(r, &f, &mut got, |l| l);
            tb.dematch_block(r, &i, &mut got_i8, |l| l);
            let mut wide = vec![f32::NAN; n];
            tb.dematch_block(r, &i, &mut wide, |l: i8| l.to_f32());
            let mut exact = vec![0.0f32; n];
            for (&j, &l) in b.rm.indices().iter().zip(&i[b.at..b.at + b.rm.e()]) {
                exact[j as usize] += f32::from(l);
            }
            for z in b.rm.known_zeros() {
                exact[z].fill(KNOWN_ZERO_LLR);
            }
            assert_eq!(wide, exact, "block {r}: f32 layouts of i8 LLRs hold the sums whole");
            assert!(got.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()), "block {r}");
            assert_eq!(got_i8, want_i8, "block {r}");
            assert!(want_i8.contains(&127) && want_i8.contains(&-127), "saturated sums");
        }
    }

    /// Transport blocks encoded together (on all cores) and fed in uneven
    /// pieces send what each encoded alone sends.
    #[test]
    fn a_stream_of_transport_blocks_is_each_block_in_turn() {
        let tb = TransportBlock::new(20000, 30000, 1).unwrap();
        let info = bits(5 * 20000, 9);
        let mut want = Vec::new();
        for block in info.chunks(20000) {
            tb.encode(block, &mut want).unwrap();
        }
        let (mut enc, mut got) = (TransportEncoder::new(tb), Vec::new());
        for piece in [&info[..7], &info[7..45000], &info[45000..]] {
            enc.encode(piece, &mut got).unwrap();
        }
        assert!(enc.at_boundary());
        assert_eq!(got, want);
    }
}
