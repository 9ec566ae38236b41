//! A 5G control message through the whole polar chain of TS 38.212: UCI
//! (§6.3.1: segmentation, CRC6/CRC11, parity-check bits, n_max = 10, the
//! channel interleaver) or DCI (§7.3: padding to 12 bits, CRC24C over 24
//! leading ones with the RNTI on its last 16 bits, the input interleaver,
//! n_max = 9); the polar code of each block (§5.3.1); rate matching (§5.4.1).

use super::frozen::{ParityChecks, nr_code};
use super::interleave::{K_MAX_IL, input_interleaver};
use super::rate_match::RateMatch;
use crate::codes::llr::Llr;
use super::segment::UciSegmentation;
use super::size::mother_length;
use crate::codes::crc::CRC24C;
use crate::codes::encode::Encoder;
use crate::codes::error::{CodeError, CodeResult, invalid};
use crate::codes::polar::check::InfoCheck;
use crate::codes::polar::encoder::codeword_of_info;
use crate::codes::polar::spec::PolarSpec;
use std::sync::Arc;

/// DCI payloads are padded with zeros to at least this many bits (§7.3.1).
pub const MIN_DCI_PAYLOAD: usize = 12;
/// The longest DCI payload: K = A + 24 within the input interleaver's 164.
pub const MAX_DCI_A: usize = K_MAX_IL - 24;

/// Which control message the chain carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NrMessage {
    /// Uplink control information.
    Uci,
    /// Downlink control information, its CRC masked by an RNTI.
    Dci {
        /// The RNTI on the CRC's last 16 bits.
        rnti: u16,
    },
}

/// The chain of one control message of A bits sent in E bits.
///
/// # Example
/// ```
/// use gpufec::codes::polar::nr::NrPolar;
/// let dci = NrPolar::dci(39, 432, 0x4601).unwrap();
/// assert_eq!((dci.a(), dci.e(), dci.block_spec().n(), dci.block_spec().code().k()), (39, 432, 512, 63));
/// let mut sent = Vec::new();
/// dci.encode(&[1; 39], &mut sent).unwrap();
/// assert_eq!(sent.len(), 432);
/// let uci = NrPolar::uci(1013, 2000).unwrap();
/// assert_eq!((uci.blocks(), uci.e()), (2, 2000));
/// ```
#[derive(Debug, Clone)]
pub struct NrPolar {
    message: NrMessage,
    a: usize,
    blocks: usize,
    /// Zeros in front of the payload (UCI filler).
    lead: usize,
    check: InfoCheck,
    spec: PolarSpec,
    rm: Arc<RateMatch>,
}

impl NrPolar {
    /// A UCI message of A = `a` bits (12..=1706) sent in E_UCI = `e_uci`
    /// bits; with two code blocks each gets ⌊E_UCI/2⌋ (an odd E_UCI leaves
    /// its last bit unused, as §6.3.1.4.1 sizes E_r).
    pub fn uci(a: usize, e_uci: usize) -> CodeResult<Self> {
        let seg = UciSegmentation::new(a, e_uci)?;
        let (k, e) = (seg.block_k(), seg.block_e());
        // §6.3.1.3.1: 12 ≤ A ≤ 19 adds three parity-check bits, one of them
        // at the minimum row weight when E − K + 3 > 192.
        let pc = if a <= 19 { ParityChecks { total: 3, weight: usize::from(e + 3 > k + 192) } } else { ParityChecks::default() };
        let check = InfoCheck::new(seg.crc(), k)?;
        let (spec, rm) = block(k, e, 10, pc, &check, true).map_err(|err| invalid!("UCI of A = {a} bits in E_UCI = {e_uci}: {err}"))?;
        Ok(Self { message: NrMessage::Uci, a, blocks: seg.blocks(), lead: seg.filler(), check, spec, rm })
    }

    /// A DCI message of A = `a` bits (1..=140) sent in `e` bits, its CRC
    /// masked by `rnti`.
    pub fn dci(a: usize, e: usize, rnti: u16) -> CodeResult<Self> {
        if a == 0 || a > MAX_DCI_A {
            return Err(invalid!("a DCI payload of A = {a} bits: 1..={MAX_DCI_A} fit the input interleaver"));
        }
        let k = a.max(MIN_DCI_PAYLOAD) + CRC24C.width();
        let check = InfoCheck::new(&CRC24C, k)?.with_prefix_and_mask(24, u32::from(rnti))?.with_order(input_interleaver(k)?)?;
        let (spec, rm) = block(k, e, 9, ParityChecks::default(), &check, false).map_err(|err| invalid!("DCI of A = {a} bits in E = {e}: {err}"))?;
        Ok(Self { message: NrMessage::Dci { rnti }, a, blocks: 1, lead: 0, check, spec, rm })
    }

    /// What it carries.
    pub fn message(&self) -> NrMessage {
        self.message
    }

    /// A: payload bits of the message.
    pub fn a(&self) -> usize {
        self.a
    }

    /// Bits sent: E_r for each of the code blocks.
    pub fn e(&self) -> usize {
        self.blocks * self.rm.e()
    }

    /// Zeros in front of the payload in the first block (UCI filler).
    pub(crate) fn lead(&self) -> usize {
        self.lead
    }

    /// Code blocks (1, or 2 for long UCI).
    pub fn blocks(&self) -> usize {
        self.blocks
    }

    /// The polar code of every block, its CRC (and for DCI, its mask and
    /// interleaver) included: what an inner decoder decodes.
    pub fn block_spec(&self) -> &PolarSpec {
        &self.spec
    }

    /// The rate matching of every block.
    pub fn rate_match(&self) -> &RateMatch {
        &self.rm
    }

    /// A over E: the rate of Eb/N0.
    pub fn rate(&self) -> f64 {
        self.a as f64 / self.e() as f64
    }

    /// e.g. `DCI A=39 E=216: (256, 63) + CRC24C, puncturing`.
    pub fn describe(&self) -> String {
        let what = match self.message {
            NrMessage::Uci => "UCI",
            NrMessage::Dci { .. } => "DCI",
        };
        let blocks = if self.blocks > 1 { format!("{} blocks of ", self.blocks) } else { String::new() };
        format!("{what} A={} E={}: {blocks}{}, {}", self.a, self.e(), self.spec.describe(), self.rm.selection().name())
    }

    /// The K information bits of every block of the A bits `a`, end to
    /// end, into `out`: the payload (after the UCI filler, or padded to 12
    /// DCI bits), its CRC, and for DCI the input interleaver (c' of §5.3.1.1).
    pub fn blocks_info(&self, a: &[u8], out: &mut Vec<u8>) -> CodeResult<()> {
        if a.len() != self.a {
            return Err(CodeError::LengthMismatch(format!("a message of A = {} bits was given {}", self.a, a.len())));
        }
        let per_block = self.check.payload_len();
        let mut payloads = Vec::with_capacity(self.blocks * per_block);
        payloads.extend(std::iter::repeat_n(0, self.lead));
        payloads.extend_from_slice(a);
        payloads.resize(self.blocks * per_block, 0);
        payloads.chunks(per_block).try_for_each(|p| self.check.attach(p, out))
    }

    /// Append the E sent bits of the A bits `a` (0 or 1) to `out`.
    pub fn encode(&self, a: &[u8], out: &mut Vec<u8>) -> CodeResult<()> {
        let mut info = Vec::with_capacity(self.blocks * self.check.k());
        self.blocks_info(a, &mut info)?;
        let mut d = vec![0u8; self.spec.n()];
        for c in info.chunks(self.check.k()) {
            codeword_of_info(&self.spec, c, &mut d);
            self.rm.select(&d, out)?;
        }
        Ok(())
    }

    /// The N LLRs of every block from the E received `llrs`, appended to `out`.
    pub fn recover<T: Llr>(&self, llrs: &[T], out: &mut Vec<T>) -> CodeResult<()> {
        if llrs.len() != self.e() {
            return Err(CodeError::LengthMismatch(format!("a message sent in E = {} bits was given {} LLRs", self.e(), llrs.len())));
        }
        let (n, e) = (self.spec.n(), self.rm.e());
        let at = out.len();
        out.resize(at + self.blocks * n, T::default());
        for (r, (o, l)) in out[at..].chunks_mut(n).zip(llrs.chunks(e)).enumerate() {
            self.rm.recover(l, o).map_err(|err| match err {
                CodeError::NonFiniteLlr { index } => CodeError::NonFiniteLlr { index: r * e + index },
                other => other,
            })?;
        }
        Ok(())
    }

    /// The A bits of the blocks' decoded payloads end to end.
    pub fn message_of<'a>(&self, payloads: &'a [u8]) -> &'a [u8] {
        &payloads[self.lead..self.lead + self.a]
    }
}

/// The spec and rate matching of a block of `k` bits sent in `e`.
fn block(k: usize, e: usize, n_max: u32, pc: ParityChecks, check: &InfoCheck, uplink: bool) -> CodeResult<(PolarSpec, Arc<RateMatch>)> {
    let n = mother_length(k, e, n_max)?;
    // The rate matching first: it checks E against its limit before the
    // code is built.
    let rm = RateMatch::new(k, e, n, uplink)?;
    let code = nr_code(k, e, n, pc)?;
    Ok((PolarSpec::new(Arc::new(code), false, Some(check.clone()))?, Arc::new(rm)))
}

/// Messages of A bits to E sent bits; an unfinished message waits for its
/// remaining bits.
#[derive(Debug, Clone)]
pub struct NrEncoder {
    chain: NrPolar,
    pending: Vec<u8>,
}

impl NrEncoder {
    /// The encoder of `chain`.
    pub fn new(chain: NrPolar) -> Self {
        Self { chain, pending: Vec::new() }
    }
}

impl Encoder for NrEncoder {
    fn encode(&mut self, bits: &[u8], out: &mut Vec<u8>) -> CodeResult<()> {
        if let Some(i) = crate::codes::bits::first_non_bit(bits) {
            return Err(invalid!("input bit at index {i} is {}, not 0 or 1", bits[i]));
        }
        self.pending.extend_from_slice(bits);
        let a = self.chain.a();
        let whole = self.pending.len() / a * a;
        for m in self.pending[..whole].chunks(a) {
            self.chain.encode(m, out)?;
        }
        self.pending.drain(..whole);
        Ok(())
    }

    fn at_boundary(&self) -> bool {
        self.pending.is_empty()
    }

    fn unit_bits(&self) -> u64 {
        self.chain.a() as u64
    }

    fn rate(&self) -> f64 {
        self.chain.rate()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_messages_are_refused_with_the_reason() {
        for (r, says) in [
            (NrPolar::uci(11, 100), "12..=1706"),
            (NrPolar::uci(100, 100), "too small"),
            (NrPolar::uci(20, 8193), "1..=8192"),
            (NrPolar::dci(0, 100, 1), "1..=140"),
            (NrPolar::dci(141, 1000, 1), "1..=140"),
            (NrPolar::dci(40, 60, 1), "too small"),
        ] {
            let e = r.unwrap_err().to_string();
            assert!(e.contains(says), "{e}");
        }
        let c = NrPolar::dci(5, 100, 7).unwrap();
        assert_eq!(c.block_spec().code().k(), 36);
        assert!(c.encode(&[0; 6], &mut Vec::new()).is_err());
        assert!(c.recover(&[0.0f32; 99], &mut Vec::new()).is_err());
    }
}
