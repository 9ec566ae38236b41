//! The encoder block, for any code family's [`Encoder`].

use super::stream::{self, Backlog, Relay, Transform};
use super::{FirstError, Reporting};
use crate::codes::conv;
use crate::codes::encode::Encoder;
use futuresdr::runtime::dev::prelude::*;

/// Declares the encoder block of a code family around its [`Encoder`], named
/// for it (FutureSDR names block instances after their type); the work is the
/// shared [`Encoding`].
macro_rules! encoder_block {
    ($(#[$doc:meta])* $name:ident, $encoder:ty) => {
        $(#[$doc])*
        #[derive(Block)]
        pub struct $name {
            encoder: Encoding<$encoder>,
            relay: Relay<u8>,
            errors: FirstError,
            #[input]
            input: DefaultCpuReader<u8>,
            #[output]
            output: DefaultCpuWriter<u8>,
        }

        impl $name {
            /// Block around `encoder`.
            pub fn new(encoder: $encoder) -> Self {
                Self {
                    encoder: Encoding(encoder),
                    relay: Relay::default(),
                    errors: FirstError::default(),
                    input: DefaultCpuReader::default(),
                    output: stream::output(),
                }
            }
        }

        impl Reporting for $name {
            fn first_error(&mut self) -> &mut FirstError {
                &mut self.errors
            }
        }

        impl super::Counted for $name {
            fn items(&self) -> u64 {
                self.relay.taken()
            }
        }

        #[doc(hidden)]
        impl Kernel for $name {
            async fn work(&mut self, io: &mut WorkIo, _mo: &mut MessageOutputs, meta: &mut BlockMeta) -> Result<()> {
                let r = self.relay.work(&mut self.encoder, &mut self.input, &mut self.output, io);
                self.errors.keep(meta, r)
            }
        }
    };
}

/// Any family's encoder, driven chunk by chunk.
struct Encoding<E>(E);

impl<E: Encoder> Transform<u8, u8> for Encoding<E> {
    fn process(&mut self, input: &[u8], _tags: &[ItemTag], out: &mut Backlog<u8>) -> anyhow::Result<()> {
        Ok(self.0.encode(input, &mut out.items)?)
    }

    fn direct(&mut self, input: &[u8], out: &mut [u8]) -> anyhow::Result<Option<(usize, usize)>> {
        Ok(self.0.encode_into(input, out)?)
    }

    fn finish(&mut self, _out: &mut Backlog<u8>) -> anyhow::Result<()> {
        anyhow::ensure!(
            self.0.at_boundary(),
            "the bit stream ended inside a terminated frame (or code block, or transport block); send whole frames"
        );
        Ok(())
    }
}

encoder_block! {
    /// Encodes information bits with a rate-1/n convolutional code
    /// ([`conv::ConvEncoder`]), streaming or in terminated frames: the encoder
    /// block every family shares, under its family's name.
    ///
    /// A stream that ends inside a terminated frame fails the flowgraph with a
    /// message saying so.
    ///
    /// # Stream Inputs
    ///
    /// `input`: information bits (`u8` 0/1); any other value fails the flowgraph.
    ///
    /// # Stream Outputs
    ///
    /// `output`: coded bits (`u8` 0/1), n per input bit, generator 0 first,
    /// plus K−1 tail steps after each terminated frame.
    ///
    /// # Usage
    /// ```
    /// use gpufec::blocks::ConvEncoder;
    /// use gpufec::codes::conv::{self, ConvCode, EncoderMode, Trellis};
    /// use std::sync::Arc;
    ///
    /// let trellis = Arc::new(Trellis::new(&ConvCode::k7_171_133()));
    /// let enc = ConvEncoder::new(conv::ConvEncoder::new(trellis, EncoderMode::Streaming)?);
    /// # Ok::<(), anyhow::Error>(())
    /// ```
    ConvEncoder, conv::ConvEncoder
}

encoder_block! {
    /// Encodes information bits in turbo code blocks of K bits
    /// ([`crate::codes::turbo::TurboEncoder`]), 3K + 12 bits each in the
    /// family's layout: the encoder block every family shares, under this
    /// family's name. A stream that ends inside a block fails the flowgraph.
    ///
    /// # Stream Inputs
    ///
    /// `input`: information bits (`u8` 0/1); any other value fails the flowgraph.
    ///
    /// # Stream Outputs
    ///
    /// `output`: the coded bits (`u8` 0/1), block after block.
    ///
    /// # Usage
    /// ```
    /// use gpufec::blocks::TurboEncoder;
    /// use gpufec::codes::turbo::{self, TurboCode};
    ///
    /// let enc = TurboEncoder::new(turbo::TurboEncoder::new(TurboCode::lte(6144)?));
    /// # Ok::<(), anyhow::Error>(())
    /// ```
    TurboEncoder, crate::codes::turbo::TurboEncoder
}

encoder_block! {
    /// Encodes information bits in LTE transport blocks of A bits through
    /// the whole chain of TS 36.212 ([`crate::codes::turbo::TransportEncoder`]:
    /// CRC24A, segmentation with CRC24B, turbo coding, rate matching with
    /// redundancy version rv), G bits each: the encoder block every family
    /// shares, under the turbo family's transport-block name. A stream that
    /// ends inside a transport block fails the flowgraph.
    ///
    /// # Stream Inputs
    ///
    /// `input`: information bits (`u8` 0/1); any other value fails the flowgraph.
    ///
    /// # Stream Outputs
    ///
    /// `output`: the G rate-matched bits (`u8` 0/1) of each transport block, in order.
    ///
    /// # Usage
    /// ```
    /// use gpufec::blocks::TransportEncoder;
    /// use gpufec::codes::turbo::{self, TransportBlock};
    ///
    /// // A = 6120 bits (one code block of 6144) in G = 18432 bits, rv 0.
    /// let enc = TransportEncoder::new(turbo::TransportEncoder::new(TransportBlock::new(6120, 18432, 0)?));
    /// # Ok::<(), anyhow::Error>(())
    /// ```
    TransportEncoder, crate::codes::turbo::TransportEncoder
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::testing::run_through;
    use crate::codes::conv::{ConvCode, EncoderMode, Trellis};
    use std::sync::Arc;

    fn k7() -> Arc<Trellis> {
        Arc::new(Trellis::new(&ConvCode::k7_171_133()))
    }

    fn block(mode: EncoderMode) -> ConvEncoder {
        ConvEncoder::new(conv::ConvEncoder::new(k7(), mode).unwrap())
    }

    #[test]
    fn encodes_like_the_code_layer() {
        let bits: Vec<u8> = (0..200_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 31) as u8).collect();
        for mode in [EncoderMode::Streaming, EncoderMode::Terminated { frame: 1000 }] {
            let mut want = Vec::new();
            conv::ConvEncoder::new(k7(), mode).unwrap().encode(&bits, &mut want).unwrap();
            let errors = FirstError::default();
            let got: Vec<u8> = run_through(bits.clone(), &errors, |fg| fg.add(block(mode).report_to(&errors)).into()).unwrap();
            assert_eq!(got, want, "{mode:?}");
        }
    }

    #[test]
    fn transport_blocks_encode_like_the_code_layer() {
        use crate::codes::turbo::{self, TransportBlock};
        let tb = TransportBlock::new(1000, 3100, 2).unwrap();
        let bits: Vec<u8> = (0..5000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 31) as u8).collect();
        let mut want = Vec::new();
        turbo::TransportEncoder::new(tb.clone()).encode(&bits, &mut want).unwrap();
        let block = |errors: &FirstError| TransportEncoder::new(turbo::TransportEncoder::new(tb.clone())).report_to(errors);
        let errors = FirstError::default();
        let got: Vec<u8> = run_through(bits.clone(), &errors, |fg| fg.add(block(&errors)).into()).unwrap();
        assert_eq!((got.len(), got), (5 * 3100, want));
        let errors = FirstError::default();
        let err = run_through::<u8, u8>(bits[..1500].to_vec(), &errors, |fg| fg.add(block(&errors)).into()).unwrap_err();
        assert!(err.contains("inside a terminated frame (or code block, or transport block)"), "{err}");
    }

    #[test]
    fn a_partial_frame_or_a_bad_bit_fails_with_a_message() {
        let errors = FirstError::default();
        let mode = EncoderMode::Terminated { frame: 100 };
        let err = run_through::<u8, u8>(vec![0; 150], &errors, |fg| fg.add(block(mode).report_to(&errors)).into()).unwrap_err();
        assert!(err.contains("inside a terminated frame"), "{err}");
        let errors = FirstError::default();
        let err = run_through::<u8, u8>(vec![0, 1, 2], &errors, |fg| {
            fg.add(block(EncoderMode::Streaming).report_to(&errors)).into()
        })
        .unwrap_err();
        assert!(err.contains("is 2, not 0 or 1"), "{err}");
    }
}
