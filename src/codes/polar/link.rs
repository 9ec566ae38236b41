//! The polar family's link simulation: random payloads → bare codewords or
//! whole 5G messages → BPSK over AWGN (the shared [`BpskAwgn`], `f32` LLRs or
//! `i8` after the quantizer) → any decoder of the units → error counts; each
//! codeword or message is a counted frame and its report's check tells
//! detected from undetected errors.

use super::encoder::PolarEncoder;
use super::nr::{NrEncoder, NrPolar};
use super::spec::PolarSpec;
use crate::codes::channel::{BpskAwgn, Quantizer, noise_variance};
use crate::codes::decode::{Batch, BatchDecoder, Decoded, UnitShape};
use crate::codes::encode::Encoder;
use crate::codes::error::{CodeResult, invalid};
use crate::codes::bits::BitSource;
use crate::codes::llr::Llr;
use crate::codes::sim::{Link, Tally, Transmitter, noise_seed};

/// What a polar link sends.
#[derive(Debug, Clone)]
pub enum PolarFrames {
    /// Codewords of N bits, each carrying a payload.
    Codewords(PolarSpec),
    /// 5G control messages of A bits sent in E.
    Nr(NrPolar),
}

impl PolarFrames {
    /// The decoder's unit: items in, bits out.
    pub fn unit(&self) -> UnitShape {
        match self {
            PolarFrames::Codewords(s) => UnitShape::exact(s.n(), s.payload_len()),
            PolarFrames::Nr(c) => UnitShape::exact(c.e(), c.a()),
        }
    }

    /// Payload bits over channel bits: the rate of Eb/N0.
    pub fn rate(&self) -> f64 {
        match self {
            PolarFrames::Codewords(s) => s.rate(),
            PolarFrames::Nr(c) => c.rate(),
        }
    }

    /// The code of every codeword a block decoder sees: the codewords', or
    /// a message's code blocks'.
    pub fn spec(&self) -> &PolarSpec {
        match self {
            PolarFrames::Codewords(s) => s,
            PolarFrames::Nr(c) => c.block_spec(),
        }
    }

    /// The encoder of the frames.
    pub fn encoder(&self) -> FramesEncoder {
        FramesEncoder(match self {
            PolarFrames::Codewords(s) => Box::new(PolarEncoder::new(s.clone())),
            PolarFrames::Nr(c) => Box::new(NrEncoder::new(c.clone())),
        })
    }
}

/// The encoder of either kind of frame: payloads to bare codewords, or 5G
/// messages to their E sent bits.
pub struct FramesEncoder(Box<dyn Encoder>);

impl Encoder for FramesEncoder {
    fn encode(&mut self, bits: &[u8], out: &mut Vec<u8>) -> CodeResult<()> {
        self.0.encode(bits, out)
    }

    fn encode_into(&mut self, bits: &[u8], out: &mut [u8]) -> CodeResult<Option<(usize, usize)>> {
        self.0.encode_into(bits, out)
    }

    fn at_boundary(&self) -> bool {
        self.0.at_boundary()
    }

    fn unit_bits(&self) -> u64 {
        self.0.unit_bits()
    }

    fn rate(&self) -> f64 {
        self.0.rate()
    }
}

/// A polar link: frames through BPSK and AWGN at Eb/N0 per payload bit,
/// decoded from `T` LLRs by any decoder of its units.
///
/// # Example
/// ```
/// use gpufec::codes::polar::{Algorithm, Construction, CpuPolar, PolarFrames, PolarLink, PolarSpec};
/// use gpufec::codes::sim::{Link, Tally};
/// use std::sync::Arc;
/// let spec = PolarSpec::plain(Arc::new(Construction::Nr.build(256, 128).unwrap()));
/// let dec = CpuPolar::<f32>::new(spec.clone(), Algorithm::Sc, 1).unwrap();
/// let mut link = PolarLink::new(PolarFrames::Codewords(spec), Box::new(dec), None).unwrap();
/// link.start(8.0, 1).unwrap();
/// let mut tally = Tally::new(8.0, link.frame_bits());
/// link.run(1280, true, &mut tally).unwrap();
/// assert_eq!((tally.point().bits, tally.point().bit_errors, tally.point().frames), (1280, 0, 10));
/// ```
pub struct PolarLink<T: Llr> {
    frames: PolarFrames,
    decoder: Box<dyn BatchDecoder<T>>,
    i8_scale: Option<f32>,
    /// Bits from [`BitSource::counter`] instead of [`BitSource::new`].
    counter_bits: bool,
    point: Option<PointState<T>>,
}

/// The streams and buffers of the point being run.
struct PointState<T: Llr> {
    tx: Transmitter<FramesEncoder, BpskAwgn<T>>,
    reference: Vec<u8>,
    received: Vec<T>,
    decoded: Decoded,
}

impl<T: Llr> PolarLink<T> {
    /// A link sending `frames`, decoded by `decoder` (which must take its
    /// units). `i8` LLRs are quantized with scale `i8_scale`, or, `None`,
    /// by the matched quantizer of each point ([`Quantizer::matched`]);
    /// `f32` LLRs ignore it.
    pub fn new(frames: PolarFrames, decoder: Box<dyn BatchDecoder<T>>, i8_scale: Option<f32>) -> CodeResult<Self> {
        let (want, takes) = (frames.unit(), decoder.shapes()[0]);
        if !takes.accepts(want.items) || takes.bits != want.bits {
            return Err(invalid!("the decoder takes units of {} LLRs to {} bits; the link sends {} carrying {}", takes.items, takes.bits, want.items, want.bits));
        }
        if let Some(s) = i8_scale {
            Quantizer::new(s)?;
        }
        Ok(Self { frames, decoder, i8_scale, counter_bits: false, point: None })
    }

    /// Draw the bits by counter, as the device link simulator does
    /// (`gpu::DevicePolarLink`): with the same seed and decoder model, this
    /// link is that simulator's host model and counts the same errors.
    pub fn with_counter_bits(mut self) -> Self {
        self.counter_bits = true;
        self
    }

    /// The quantizer of `i8` LLRs at `ebn0_db`.
    fn quantizer(&self, ebn0_db: f64) -> CodeResult<Quantizer> {
        match self.i8_scale {
            Some(s) => Quantizer::new(s),
            None => Quantizer::matched(noise_variance(ebn0_db, self.frames.rate())?),
        }
    }
}

impl<T: Llr> Link for PolarLink<T> {
    fn start(&mut self, ebn0_db: f64, seed: u64) -> CodeResult<()> {
        let channel = BpskAwgn::with_quantizer(ebn0_db, self.frames.rate(), noise_seed(seed), self.quantizer(ebn0_db)?)?;
        let source = if self.counter_bits { BitSource::counter(seed) } else { BitSource::new(seed) };
        let tx = Transmitter::with_source(source, self.frames.encoder(), channel);
        self.point = Some(PointState { tx, reference: Vec::new(), received: Vec::new(), decoded: Decoded::default() });
        Ok(())
    }

    fn check(&self, ebn0_db: f64) -> CodeResult<()> {
        noise_variance(ebn0_db, self.frames.rate()).map(drop)
    }

    fn frame_bits(&self) -> usize {
        self.frames.unit().bits
    }

    fn run(&mut self, bits: u64, _last: bool, tally: &mut Tally) -> CodeResult<()> {
        let unit = self.frames.unit();
        let st = self.point.as_mut().ok_or_else(|| invalid!("a link runs only after start"))?;
        let want = usize::try_from(bits).map_err(|_| invalid!("{bits} bits in one chunk"))?.next_multiple_of(unit.bits);
        st.reference.clear();
        st.received.clear();
        st.tx.send(want, &mut st.reference, &mut st.received)?;
        st.decoded.clear();
        self.decoder.decode(&Batch::uniform(&st.received, unit.items)?, &mut st.decoded)?;
        for ((got, sent), report) in st.decoded.bits.chunks(unit.bits).zip(st.reference.chunks(unit.bits)).zip(&st.decoded.reports) {
            tally.add_unit(got, sent, report);
        }
        Ok(())
    }

    fn describe(&self) -> String {
        self.decoder.describe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes::polar::{Algorithm, Construction, CpuPolar};
    use std::sync::Arc;

    /// The bits, errors and frames of `bits` bits of `link` at `ebn0` from seed 7.
    fn counts(link: &mut dyn Link, ebn0: f64, bits: u64) -> (u64, u64, u64, u64) {
        link.start(ebn0, 7).unwrap();
        let mut tally = Tally::new(ebn0, link.frame_bits());
        link.run(bits, true, &mut tally).unwrap();
        let p = tally.point();
        (p.bits, p.bit_errors, p.frames, p.frame_errors)
    }

    #[test]
    fn counter_bits_are_sent_and_counted_against() {
        let spec = PolarSpec::plain(Arc::new(Construction::Nr.build(128, 64).unwrap()));
        let link = || PolarLink::<f32>::new(PolarFrames::Codewords(spec.clone()), Box::new(CpuPolar::<f32>::new(spec.clone(), Algorithm::Sc, 1).unwrap()), None).unwrap();
        let (ebn0, bits) = (1.5, 64 * 200);
        let counter = counts(&mut link().with_counter_bits(), ebn0, bits);
        // By hand: the counter's bits through the same encoder, channel and decoder.
        let channel = BpskAwgn::<f32>::with_quantizer(ebn0, spec.rate(), noise_seed(7), Quantizer::matched(noise_variance(ebn0, spec.rate()).unwrap()).unwrap()).unwrap();
        let mut tx = Transmitter::with_source(BitSource::counter(7), PolarEncoder::new(spec.clone()), channel);
        let (mut sent, mut received, mut decoded) = (Vec::new(), Vec::new(), Vec::new());
        tx.send(bits as usize, &mut sent, &mut received).unwrap();
        CpuPolar::<f32>::new(spec.clone(), Algorithm::Sc, 1).unwrap().decode_all(&received, &mut decoded).unwrap();
        let mut tally = Tally::new(ebn0, 64);
        tally.add(&decoded, &sent);
        let p = tally.point();
        assert_eq!(counter, (p.bits, p.bit_errors, p.frames, p.frame_errors));
        assert!(counter.1 > 0, "{counter:?}");
        // And the sequential bits are another stream: other codewords, other errors.
        assert_ne!(counts(&mut link(), ebn0, bits), counter);
    }
}
