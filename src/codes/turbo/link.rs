//! The turbo family's link simulation: random code blocks, BPSK over AWGN,
//! any turbo decoder; each block is a counted frame.

use super::code::TurboCode;
use super::encoder::TurboEncoder;
use super::transport::TransportEncoder;
use super::transport_decoder::TransportDecoder;
use crate::codes::channel::{BpskAwgn, noise_variance};
use crate::codes::decode::{Batch, BatchDecoder, Decoded};
use crate::codes::error::{CodeResult, invalid};
use crate::codes::sim::{Link, Tally, Transmitter, noise_seed};

/// Code blocks of `code` (every bit an information bit: Eb/N0 is per code
/// block bit, at rate K / (3K + 4m)) decoded by `decoder` from `f32` LLRs.
///
/// # Example
/// ```
/// use gpufec::codes::sim::{Link, Tally};
/// use gpufec::codes::turbo::{CpuTurbo, DecoderConfig, TurboCode, TurboLink};
/// let code = TurboCode::lte(40).unwrap();
/// let dec = CpuTurbo::<f32>::new(code.clone(), DecoderConfig::default(), 1.0, 1).unwrap();
/// let mut link = TurboLink::new(code, Box::new(dec)).unwrap();
/// link.start(6.0, 1).unwrap();
/// let mut tally = Tally::new(6.0, link.frame_bits());
/// link.run(400, true, &mut tally).unwrap();
/// assert_eq!((tally.point().bits, tally.point().bit_errors, tally.point().units), (400, 0, 10));
/// ```
pub struct TurboLink {
    code: TurboCode,
    decoder: Box<dyn BatchDecoder<f32>>,
    point: Option<PointState>,
}

struct PointState {
    tx: Transmitter<TurboEncoder, BpskAwgn<f32>>,
    reference: Vec<u8>,
    received: Vec<f32>,
    decoded: Decoded,
}

impl TurboLink {
    /// A link of `code` decoded by `decoder`, which must take its blocks.
    pub fn new(code: TurboCode, decoder: Box<dyn BatchDecoder<f32>>) -> CodeResult<Self> {
        let takes = decoder.shapes()[0];
        if !takes.accepts(code.coded_len()) || takes.bits != code.k() {
            return Err(invalid!("the decoder takes units of {} LLRs to {} bits, the code sends {} to {}", takes.items, takes.bits, code.coded_len(), code.k()));
        }
        Ok(Self { code, decoder, point: None })
    }

    fn rate(&self) -> f64 {
        self.code.k() as f64 / self.code.coded_len() as f64
    }
}

impl Link for TurboLink {
    fn start(&mut self, ebn0_db: f64, seed: u64) -> CodeResult<()> {
        let channel = BpskAwgn::new(ebn0_db, self.rate(), noise_seed(seed))?;
        let encoder = TurboEncoder::new(self.code.clone());
        self.point = Some(PointState { tx: Transmitter::new(seed, encoder, channel), reference: Vec::new(), received: Vec::new(), decoded: Decoded::default() });
        Ok(())
    }

    fn check(&self, ebn0_db: f64) -> CodeResult<()> {
        noise_variance(ebn0_db, self.rate()).map(drop)
    }

    fn frame_bits(&self) -> usize {
        self.code.k()
    }

    fn run(&mut self, bits: u64, _last: bool, tally: &mut Tally) -> CodeResult<()> {
        let k = self.code.k();
        let st = self.point.as_mut().ok_or_else(|| invalid!("a link runs only after start"))?;
        let want = usize::try_from(bits).map_err(|_| invalid!("{bits} bits in one chunk"))?.next_multiple_of(k);
        st.reference.clear();
        st.received.clear();
        st.tx.send(want, &mut st.reference, &mut st.received)?;
        st.decoded.clear();
        self.decoder.decode(&Batch::uniform(&st.received, self.code.coded_len())?, &mut st.decoded)?;
        for ((got, sent), report) in st.decoded.bits.chunks(k).zip(st.reference.chunks(k)).zip(&st.decoded.reports) {
            tally.add_unit(got, sent, report);
        }
        Ok(())
    }

    fn describe(&self) -> String {
        self.decoder.describe()
    }
}

/// Transport blocks through the whole LTE chain (CRC24A, segmentation,
/// turbo coding, rate matching to G bits) over BPSK and AWGN; each transport
/// block is a counted frame, its CRC the check. Eb/N0 is per transport
/// block bit, at rate A / G.
///
/// # Example
/// ```
/// use gpufec::codes::sim::{Link, Tally};
/// use gpufec::codes::turbo::{CpuTurbo, DecoderConfig, TransportBlock, TransportDecoder, TransportLink};
/// let tb = TransportBlock::new(1000, 3000, 0).unwrap();
/// let dec = TransportDecoder::new(tb, |code| CpuTurbo::<f32>::new(code, DecoderConfig::default(), 1.0, 1).map(|d| Box::new(d) as _)).unwrap();
/// let mut link = TransportLink::new(dec);
/// link.start(4.0, 1).unwrap();
/// let mut tally = Tally::new(4.0, link.frame_bits());
/// link.run(3000, true, &mut tally).unwrap();
/// assert_eq!((tally.point().bits, tally.point().bit_errors, tally.point().units), (3000, 0, 3));
/// ```
pub struct TransportLink {
    decoder: TransportDecoder<f32>,
    point: Option<TransportState>,
}

struct TransportState {
    tx: Transmitter<TransportEncoder, BpskAwgn<f32>>,
    reference: Vec<u8>,
    received: Vec<f32>,
    decoded: Decoded,
}

impl TransportLink {
    /// A link decoding with `decoder`.
    pub fn new(decoder: TransportDecoder<f32>) -> Self {
        Self { decoder, point: None }
    }

    fn rate(&self) -> f64 {
        let tb = self.decoder.transport_block();
        tb.a() as f64 / tb.g() as f64
    }
}

impl Link for TransportLink {
    fn start(&mut self, ebn0_db: f64, seed: u64) -> CodeResult<()> {
        let channel = BpskAwgn::new(ebn0_db, self.rate(), noise_seed(seed))?;
        let encoder = TransportEncoder::new(self.decoder.transport_block().clone());
        self.point = Some(TransportState { tx: Transmitter::new(seed, encoder, channel), reference: Vec::new(), received: Vec::new(), decoded: Decoded::default() });
        Ok(())
    }

    fn check(&self, ebn0_db: f64) -> CodeResult<()> {
        noise_variance(ebn0_db, self.rate()).map(drop)
    }

    fn frame_bits(&self) -> usize {
        self.decoder.transport_block().a()
    }

    fn run(&mut self, bits: u64, _last: bool, tally: &mut Tally) -> CodeResult<()> {
        let (a, g) = (self.decoder.transport_block().a(), self.decoder.transport_block().g());
        let st = self.point.as_mut().ok_or_else(|| invalid!("a link runs only after start"))?;
        let want = usize::try_from(bits).map_err(|_| invalid!("{bits} bits in one chunk"))?.next_multiple_of(a);
        st.reference.clear();
        st.received.clear();
        st.tx.send(want, &mut st.reference, &mut st.received)?;
        st.decoded.clear();
        self.decoder.decode(&Batch::uniform(&st.received, g)?, &mut st.decoded)?;
        for ((got, sent), report) in st.decoded.bits.chunks(a).zip(st.reference.chunks(a)).zip(&st.decoded.reports) {
            tally.add_unit(got, sent, report);
        }
        Ok(())
    }

    fn describe(&self) -> String {
        self.decoder.describe()
    }
}
