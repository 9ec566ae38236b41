//! Convolutional encoder block.

use super::stream::{self, Backlog, Relay, Transform};
use super::{FirstError, Reporting};
use crate::codes::conv::{self, EncoderMode};
use futuresdr::runtime::dev::prelude::*;

/// Encodes information bits with a rate-1/n convolutional code
/// ([`conv::ConvEncoder`]), streaming or in terminated frames.
///
/// In terminated mode the stream must end on a frame boundary; otherwise the
/// block fails with a message saying how much of the last frame arrived.
///
/// # Stream Inputs
///
/// `input`: information bits (`u8` 0/1); any other value fails the flowgraph.
///
/// # Stream Outputs
///
/// `output`: coded bits (`u8` 0/1), n per input bit, generator 0 first, plus
/// K−1 tail steps after each frame in terminated mode.
///
/// # Usage
/// ```
/// use gpufec::blocks::ConvEncoder;
/// use gpufec::codes::conv::{ConvCode, EncoderMode, Trellis};
/// use std::sync::Arc;
///
/// let trellis = Arc::new(Trellis::new(&ConvCode::k7_171_133()));
/// let enc = ConvEncoder::new(trellis, EncoderMode::Streaming)?;
/// # Ok::<(), anyhow::Error>(())
/// ```
#[derive(Block)]
pub struct ConvEncoder {
    encoder: Encoding,
    relay: Relay<u8>,
    errors: FirstError,
    #[input]
    input: DefaultCpuReader<u8>,
    #[output]
    output: DefaultCpuWriter<u8>,
}

struct Encoding(conv::ConvEncoder);

impl Transform<u8, u8> for Encoding {
    fn process(&mut self, input: &[u8], out: &mut Backlog<u8>) -> anyhow::Result<()> {
        Ok(self.0.encode(input, &mut out.items)?)
    }

    fn finish(&mut self, _out: &mut Backlog<u8>) -> anyhow::Result<()> {
        anyhow::ensure!(
            self.0.at_frame_boundary(),
            "the bit stream ended inside a terminated frame; send whole frames"
        );
        Ok(())
    }
}

impl ConvEncoder {
    /// Encoder of the code `trellis` in `mode`.
    pub fn new(trellis: std::sync::Arc<conv::Trellis>, mode: EncoderMode) -> anyhow::Result<Self> {
        Ok(Self {
            encoder: Encoding(conv::ConvEncoder::new(trellis, mode)?),
            relay: Relay::default(),
            errors: FirstError::default(),
            input: DefaultCpuReader::default(),
            output: stream::output(),
        })
    }
}

impl Reporting for ConvEncoder {
    fn first_error(&mut self) -> &mut FirstError {
        &mut self.errors
    }
}

#[doc(hidden)]
impl Kernel for ConvEncoder {
    async fn work(&mut self, io: &mut WorkIo, _mo: &mut MessageOutputs, meta: &mut BlockMeta) -> Result<()> {
        let r = self.relay.work(&mut self.encoder, &mut self.input, &mut self.output, io);
        self.errors.keep(meta, r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::testing::run_through;
    use crate::codes::conv::{ConvCode, Trellis};
    use std::sync::Arc;

    fn k7() -> Arc<Trellis> {
        Arc::new(Trellis::new(&ConvCode::k7_171_133()))
    }

    #[test]
    fn encodes_like_the_code_layer() {
        let bits: Vec<u8> = (0..200_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 31) as u8).collect();
        for mode in [EncoderMode::Streaming, EncoderMode::Terminated { frame: 1000 }] {
            let mut want = Vec::new();
            conv::ConvEncoder::new(k7(), mode).unwrap().encode(&bits, &mut want).unwrap();
            let errors = FirstError::default();
            let got: Vec<u8> = run_through(bits.clone(), &errors, |fg| {
                fg.add(ConvEncoder::new(k7(), mode).unwrap().report_to(&errors)).into()
            })
            .unwrap();
            assert_eq!(got, want, "{mode:?}");
        }
    }

    #[test]
    fn a_partial_frame_or_a_bad_bit_fails_with_a_message() {
        let errors = FirstError::default();
        let mode = EncoderMode::Terminated { frame: 100 };
        let err = run_through::<u8, u8>(vec![0; 150], &errors, |fg| {
            fg.add(ConvEncoder::new(k7(), mode).unwrap().report_to(&errors)).into()
        })
        .unwrap_err();
        assert!(err.contains("inside a terminated frame"), "{err}");
        let errors = FirstError::default();
        let err = run_through::<u8, u8>(vec![0, 1, 2], &errors, |fg| {
            fg.add(ConvEncoder::new(k7(), EncoderMode::Streaming).unwrap().report_to(&errors)).into()
        })
        .unwrap_err();
        assert!(err.contains("is 2, not 0 or 1"), "{err}");
    }
}
