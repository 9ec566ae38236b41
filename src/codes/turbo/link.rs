//! The turbo family's link simulation: random code blocks, or transport
//! blocks through the whole LTE chain, BPSK over AWGN, any turbo decoder;
//! each block is a counted frame (a transport block's CRC24A its check).

use super::decoder::MaxStar;
use super::settings::TurboChain;
use crate::codes::settings::Chain;
use crate::codes::channel::{BpskAwgn, Quantizer, noise_variance};
use crate::codes::decode::{Batch, BatchDecoder, Decoded};
use crate::codes::encode::Encoder;
use crate::codes::error::{CodeResult, invalid};
use crate::codes::llr::{Llr, LlrType};
use crate::codes::bits::BitSource;
use crate::codes::sim::{Link, Tally, Transmitter, noise_seed};

/// The chain's blocks (every bit of a code block an information bit, at
/// rate K / (3K + 4m); a transport block's A bits in G, at rate A / G)
/// decoded by `decoder` from LLRs of `T` (`i8` quantized with the matched
/// matched scale of each point).
///
/// # Example
/// ```
/// use gpufec::codes::settings::Settings;
/// use gpufec::codes::sim::{Link, Tally};
/// use gpufec::codes::turbo::{CpuTurbo, TransportDecoder, TurboLink, TurboSettings};
/// let chain = TurboSettings { block: Some(40), ..Default::default() }.resolve()?;
/// let dec = CpuTurbo::<f32>::new(chain.codes()[0].clone(), chain.config(), 1.0, 1)?;
/// let mut link = TurboLink::new(&chain, Box::new(dec))?;
/// link.start(6.0, 1)?;
/// let mut tally = Tally::new(6.0, link.frame_bits());
/// link.run(400, true, &mut tally)?;
/// assert_eq!((tally.point().bits, tally.point().bit_errors, tally.point().units), (400, 0, 10));
///
/// let chain = TurboSettings { tbs: Some(1000), coded: Some(3000), ..Default::default() }.resolve()?;
/// let gpufec::codes::turbo::Sent::Transport(tb) = chain.sent() else { unreachable!() };
/// let dec = TransportDecoder::<i8>::new(tb.clone(), |code| {
///     CpuTurbo::<i8>::new(code, chain.config(), 1.0, 1).map(|d| Box::new(d) as _)
/// })?;
/// let mut link = TurboLink::new(&chain, Box::new(dec))?;
/// link.start(4.0, 1)?;
/// let mut tally = Tally::new(4.0, link.frame_bits());
/// link.run(3000, true, &mut tally)?;
/// assert_eq!((tally.point().bits, tally.point().bit_errors, tally.point().units), (3000, 0, 3));
/// # anyhow::Ok(())
/// ```
pub struct TurboLink<T: Llr> {
    chain: TurboChain,
    decoder: Box<dyn BatchDecoder<T>>,
    /// Bits from [`BitSource::counter`] instead of [`BitSource::new`].
    counter_bits: bool,
    point: Option<PointState<T>>,
}

struct PointState<T: Llr> {
    tx: Transmitter<Box<dyn Encoder>, BpskAwgn<T>>,
    reference: Vec<u8>,
    received: Vec<T>,
    decoded: Decoded,
}

impl<T: Llr> TurboLink<T> {
    /// A link of `chain` decoded by `decoder`, which must take its units.
    /// With `i8` LLRs the decoder must be max-log-MAP: the matched scale
    /// changes with Eb/N0, and only max-log-MAP does not depend on it.
    pub fn new(chain: &TurboChain, decoder: Box<dyn BatchDecoder<T>>) -> CodeResult<Self> {
        let takes = decoder.shapes()[0];
        if !takes.accepts(chain.unit_llrs()) || takes.bits != chain.frame_bits() {
            return Err(invalid!(
                "the decoder takes units of {} LLRs to {} bits, the chain sends {} to {}",
                takes.items,
                takes.bits,
                chain.unit_llrs(),
                chain.frame_bits()
            ));
        }
        if T::TYPE == LlrType::I8 && chain.config().max_star != MaxStar::Max {
            return Err(invalid!(
                "{} on i8 LLRs needs the quantizer's scale, which changes with Eb/N0 in a curve: decode f32 LLRs, or max-log-MAP",
                chain.config().max_star.name()
            ));
        }
        Ok(Self { chain: chain.clone(), decoder, counter_bits: false, point: None })
    }

    /// Draw the bits by counter, as the device link simulator does
    /// (`gpu::DeviceTurboLink`): with the same seed and decoder model, this
    /// link is that simulator's host model and counts the same errors.
    pub fn with_counter_bits(mut self) -> Self {
        self.counter_bits = true;
        self
    }
}

impl<T: Llr> Link for TurboLink<T> {
    fn start(&mut self, ebn0_db: f64, seed: u64) -> CodeResult<()> {
        let rate = self.chain.rate();
        let quantizer = Quantizer::matched(noise_variance(ebn0_db, rate)?)?;
        let channel = BpskAwgn::with_quantizer(ebn0_db, rate, noise_seed(seed), quantizer)?;
        let source = if self.counter_bits { BitSource::counter(seed) } else { BitSource::new(seed) };
        let tx = Transmitter::with_source(source, self.chain.encoder(), channel);
        self.point = Some(PointState { tx, reference: Vec::new(), received: Vec::new(), decoded: Decoded::default() });
        Ok(())
    }

    fn check(&self, ebn0_db: f64) -> CodeResult<()> {
        noise_variance(ebn0_db, self.chain.rate()).map(drop)
    }

    fn frame_bits(&self) -> usize {
        self.chain.frame_bits()
    }

    fn run(&mut self, bits: u64, _last: bool, tally: &mut Tally) -> CodeResult<()> {
        let (k, unit) = (self.chain.frame_bits(), self.chain.unit_llrs());
        let st = self.point.as_mut().ok_or_else(|| invalid!("a link runs only after start"))?;
        let want = usize::try_from(bits).map_err(|_| invalid!("{bits} bits in one chunk"))?.next_multiple_of(k);
        st.reference.clear();
        st.received.clear();
        st.tx.send(want, &mut st.reference, &mut st.received)?;
        st.decoded.clear();
        self.decoder.decode(&Batch::uniform(&st.received, unit)?, &mut st.decoded)?;
        for ((got, sent), report) in st.decoded.bits.chunks(k).zip(st.reference.chunks(k)).zip(&st.decoded.reports) {
            tally.add_unit(got, sent, report);
        }
        Ok(())
    }

    fn describe(&self) -> String {
        self.decoder.describe()
    }
}
