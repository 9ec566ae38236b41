//! The sending half of every link: seeded bits, an encoder, a channel.

use crate::codes::bits::BitSource;
use crate::codes::channel::Channel;
use crate::codes::encode::Encoder;
use crate::codes::error::CodeResult;

/// Seeded information bits through an [`Encoder`] and a [`Channel`] that takes
/// channel bits: what a receiver gets, and the bits it should decode.
///
/// # Example
/// ```
/// use gpufec::codes::channel::BpskAwgn;
/// use gpufec::codes::encode::Encoder;
/// use gpufec::codes::sim::Transmitter;
/// /// Each bit sent twice.
/// struct Twice;
/// impl Encoder for Twice {
///     fn encode(&mut self, bits: &[u8], out: &mut Vec<u8>) -> gpufec::codes::CodeResult<()> {
///         out.extend(bits.iter().flat_map(|&b| [b, b]));
///         Ok(())
///     }
///     fn at_boundary(&self) -> bool { true }
///     fn unit_bits(&self) -> u64 { 1 }
///     fn rate(&self) -> f64 { 0.5 }
/// }
/// let mut tx = Transmitter::new(1, Twice, BpskAwgn::new(4.0, 0.5, 2).unwrap());
/// let (mut info, mut llrs) = (Vec::new(), Vec::new());
/// tx.send(100, &mut info, &mut llrs).unwrap();
/// assert_eq!((info.len(), llrs.len()), (100, 200));
/// ```
#[derive(Debug, Clone)]
pub struct Transmitter<E, C> {
    source: BitSource,
    encoder: E,
    channel: C,
    coded: Vec<u8>,
}

impl<E: Encoder, C: Channel<In = u8>> Transmitter<E, C> {
    /// Bits drawn from `seed`, through `encoder` and `channel`.
    pub fn new(seed: u64, encoder: E, channel: C) -> Self {
        Self::with_source(BitSource::new(seed), encoder, channel)
    }

    /// Bits from `source` (the counter-based stream of a device link's host
    /// model, say), through `encoder` and `channel`.
    pub fn with_source(source: BitSource, encoder: E, channel: C) -> Self {
        Self { source, encoder, channel, coded: Vec::new() }
    }

    /// Send the next `bits` information bits: append them to `info` and what
    /// the channel delivers to `received`.
    pub fn send(&mut self, bits: usize, info: &mut Vec<u8>, received: &mut Vec<C::Out>) -> CodeResult<()> {
        let at = info.len();
        info.resize(at + bits, 0);
        self.source.fill(&mut info[at..]);
        self.coded.clear();
        self.encoder.encode(&info[at..], &mut self.coded)?;
        self.channel.transmit(&self.coded, received)
    }
}
