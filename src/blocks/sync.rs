//! The sync family's blocks: the encoder of time-varying block codes, the
//! BSID channel (hard bits, or LLRs of BPSK over AWGN after its events), and
//! the MAP decoder (the shared encoder and decoder blocks under the family's
//! names), which cuts the received stream itself as it learns where each
//! frame ended.

use super::decoder::decoder_block;
use super::encoder::encoder_block;
use super::stream::{self, Backlog, Relay, Transform};
use super::{Counted, FirstError, Reporting};
use crate::codes::channel::{Channel, Quantizer};
use crate::codes::llr::Llr;
use crate::codes::sim::noise_seed;
use crate::codes::sync::{Bsid, BsidAwgn, BsidParams};
use futuresdr::runtime::dev::prelude::*;

decoder_block! {
    /// Decodes frames of a time-varying block code received over the BSID
    /// channel with the MAP decoder ([`crate::codes::sync::SyncMapDecoder`],
    /// or the GPU's): the decoder block every family shares, under this
    /// family's name; see [`ViterbiDecoder`](crate::blocks::ViterbiDecoder)
    /// for what it does around the decoder. With the family's window cutter
    /// ([`crate::codes::framing::WindowCutter`]) it cuts the received stream
    /// itself: each unit is a window from where the last frame ended, and the
    /// decoder's report says how many received items the frame took. A frame
    /// whose drift left the limits reports a failed check.
    ///
    /// # Stream Inputs
    ///
    /// `input`: received hard bits (`u8` 0/1) or LLRs (`f32`, `i8`).
    ///
    /// # Stream Outputs
    ///
    /// `output`: decoded information bits (`u8` 0/1), N·log2 q per frame.
    ///
    /// `soft[0]` (with [`DecoderOptions::soft`](crate::blocks::DecoderOptions::soft)):
    /// one `f32` LLR per bit, from the symbol APPs.
    ///
    /// # Usage
    /// ```
    /// use gpufec::blocks::{DecoderOptions, SyncDecoder};
    /// use gpufec::codes::framing::WindowCutter;
    /// use gpufec::codes::sync::{BsidParams, DecoderConfig, Framing, SyncCode, SyncMapDecoder};
    /// let code = SyncCode::random(16, 8, 30, 1)?;
    /// let cfg = DecoderConfig { framing: Framing::Stream, ..DecoderConfig::default() };
    /// let decoder = SyncMapDecoder::<u8>::new(code, BsidParams::new(1e-3, 1e-3, 0.0)?, cfg, 0)?;
    /// let window = gpufec::codes::BatchDecoder::shapes(&decoder)[0].items;
    /// let block = SyncDecoder::build(Box::new(decoder), Some(Box::new(WindowCutter::new(window)?)), DecoderOptions::default())?;
    /// assert!(block.describe().contains("q=16 n=8 N=30"));
    /// # Ok::<(), anyhow::Error>(())
    /// ```
    SyncDecoder
}

encoder_block! {
    /// Encodes information bits in frames of a time-varying block code
    /// ([`crate::codes::sync::SyncEncoder`]: N symbols of log2 q bits, each
    /// sent as its codeword of n bits in its index's codebook): the encoder
    /// block every family shares, under this family's name. A stream that
    /// ends inside a frame fails the flowgraph.
    ///
    /// # Stream Inputs
    ///
    /// `input`: information bits (`u8` 0/1); any other value fails the flowgraph.
    ///
    /// # Stream Outputs
    ///
    /// `output`: the sent bits (`u8` 0/1), frame after frame.
    ///
    /// # Usage
    /// ```
    /// use gpufec::blocks::SyncEncoder;
    /// use gpufec::codes::sync::{self, SyncCode};
    /// let enc = SyncEncoder::new(sync::SyncEncoder::new(SyncCode::random(32, 10, 210, 1)?));
    /// # Ok::<(), anyhow::Error>(())
    /// ```
    SyncEncoder, crate::codes::sync::SyncEncoder
}

/// A channel of bits in, driven chunk by chunk.
struct Sending<O>(Box<dyn Channel<In = u8, Out = O>>);

impl<O: Copy> Transform<u8, O> for Sending<O> {
    fn process(&mut self, input: &[u8], _tags: &[ItemTag], out: &mut Backlog<O>) -> anyhow::Result<()> {
        Ok(self.0.transmit(input, &mut out.items)?)
    }
}

/// The binary substitution, insertion and deletion channel
/// ([`crate::codes::sync::Bsid`]), counter-based: the same seed gives the
/// same received stream whatever the chunks the flowgraph moves, and the one
/// a link simulation of the same seed receives. Hard bits out, or the LLRs
/// of BPSK over AWGN after the events ([`crate::codes::sync::BsidAwgn`]).
///
/// # Stream Inputs
///
/// `input`: sent bits (`u8` 0/1); any other value fails the flowgraph.
///
/// # Stream Outputs
///
/// `output`: received bits (`u8` 0/1), or LLRs (`f32`, `i8` quantized);
/// as many as the insertions and deletions leave.
///
/// # Usage
/// ```
/// use gpufec::blocks::BsidChannel;
/// use gpufec::codes::channel::Quantizer;
/// use gpufec::codes::sync::BsidParams;
/// let p = BsidParams::new(1e-2, 1e-2, 0.0)?;
/// let hard = BsidChannel::<u8>::hard(p, 1);
/// let soft = BsidChannel::<f32>::soft(p, 6.0, 0.5, 1, Quantizer::new(1.0)?)?;
/// # Ok::<(), anyhow::Error>(())
/// ```
#[derive(Block)]
#[type_name(BsidChannel)]
pub struct BsidChannel<O: CpuSample + Copy> {
    channel: Sending<O>,
    relay: Relay<O>,
    errors: FirstError,
    #[input]
    input: DefaultCpuReader<u8>,
    #[output]
    output: DefaultCpuWriter<O>,
}

impl<O: CpuSample + Copy> BsidChannel<O> {
    fn around(channel: Box<dyn Channel<In = u8, Out = O>>) -> Self {
        Self { channel: Sending(channel), relay: Relay::default(), errors: FirstError::default(), input: DefaultCpuReader::default(), output: stream::output() }
    }
}

impl BsidChannel<u8> {
    /// Hard bits through the channel of `params`, its events drawn from `seed`.
    pub fn hard(params: BsidParams, seed: u64) -> Self {
        Self::around(Box::new(Bsid::new(params, noise_seed(seed))))
    }
}

impl<T: Llr + CpuSample> BsidChannel<T> {
    /// The LLRs of BPSK over AWGN at `ebn0_db` (for code rate `rate`) after
    /// the events of `params`, all drawn from `seed`; `i8` ones quantized by
    /// `quantizer`.
    pub fn soft(params: BsidParams, ebn0_db: f64, rate: f64, seed: u64, quantizer: Quantizer) -> anyhow::Result<Self> {
        Ok(Self::around(Box::new(BsidAwgn::<T>::with_quantizer(params, ebn0_db, rate, noise_seed(seed), quantizer)?)))
    }
}

impl<O: CpuSample + Copy> Reporting for BsidChannel<O> {
    fn first_error(&mut self) -> &mut FirstError {
        &mut self.errors
    }
}

impl<O: CpuSample + Copy> Counted for BsidChannel<O> {
    fn items(&self) -> u64 {
        self.relay.taken()
    }
}

#[doc(hidden)]
impl<O: CpuSample + Copy> Kernel for BsidChannel<O> {
    async fn work(&mut self, io: &mut WorkIo, _mo: &mut MessageOutputs, meta: &mut BlockMeta) -> Result<()> {
        let r = self.relay.work(&mut self.channel, &mut self.input, &mut self.output, io);
        self.errors.keep(meta, r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::testing::run_through;

    #[test]
    fn the_channel_block_receives_what_the_code_layer_receives() {
        let bits: Vec<u8> = (0..300_001u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 31) as u8).collect();
        let p = BsidParams::new(2e-2, 3e-2, 1e-2).unwrap();
        let mut want = Vec::new();
        Bsid::new(p, noise_seed(4)).transmit(&bits, &mut want).unwrap();
        let errors = FirstError::default();
        let got: Vec<u8> = run_through(bits.clone(), &errors, |fg| fg.add(BsidChannel::<u8>::hard(p, 4).report_to(&errors)).into()).unwrap();
        assert_eq!(got, want);
        let errors = FirstError::default();
        let err = run_through::<u8, u8>(vec![0, 1, 7], &errors, |fg| fg.add(BsidChannel::<u8>::hard(p, 4).report_to(&errors)).into()).unwrap_err();
        assert!(err.contains("not 0 or 1"), "{err}");
    }
}
