//! The convolutional family's blocks: its encoder and Viterbi decoder (the
//! shared encoder and decoder blocks under the family's names), and the
//! puncturer and depuncturer of its punctured rates.

mod depuncture;
mod pair_sync;
mod puncture;
#[cfg(test)]
mod tests;

pub use depuncture::Depuncture;
pub use pair_sync::PairSync;
pub use puncture::Puncture;

use super::decoder::decoder_block;
use super::encoder::encoder_block;
use crate::codes::conv;
use futuresdr::runtime::dev::prelude::*;

decoder_block! {
    /// Decodes work units of a convolutional code with a Viterbi decoder
    /// ([`crate::gpu::viterbi_decoder`]: the CPU reference or the GPU launcher):
    /// the decoder block every family shares, under its family's name.
    ///
    /// Its input is either a framer's units (with the framer's unit tags; see
    /// [`super::Framer`]) or a raw stream that the block cuts itself with a
    /// [`Cutter`](crate::codes::framing::Cutter), which a cutter that learns from the decoder (insertion/deletion
    /// codes) requires. It gathers units into batches of up to the decoder's
    /// limit, keeps up to the decoder's depth of batches in flight, and emits the
    /// bits in order. When the input stalls, a partial batch goes after
    /// [`DecoderOptions::max_latency`](crate::blocks::DecoderOptions::max_latency). The bits of a padded last unit that are
    /// not real are dropped.
    ///
    /// Tags of the input travel to the bits decoded from the items they were on
    /// (for a framer's units, to the first bit of the unit). On request each
    /// unit's first bit carries its report. The live counts of units,
    /// iterations and failed checks are on `stats`.
    ///
    /// A NaN or infinite LLR, a decoder error, a unit the decoder does not take,
    /// or a stream that ends inside a unit fails the flowgraph. The block runs on
    /// its own thread, since a decoder may block while it works.
    ///
    /// # Stream Inputs
    ///
    /// `input`: work units, or a stream to cut, of LLRs (`f32`, `i8`).
    ///
    /// # Stream Outputs
    ///
    /// `output`: decoded information bits (`u8` 0/1), in stream order.
    ///
    /// `soft[0]` (with [`DecoderOptions::soft`](crate::blocks::DecoderOptions::soft)): one `f32` a-posteriori LLR per bit.
    ///
    /// # Usage
    /// ```
    /// use gpufec::blocks::ViterbiDecoder;
    /// use gpufec::codes::conv::{ConvCode, CpuViterbi, TileConfig, Traceback, Trellis, ViterbiMode};
    /// use std::sync::Arc;
    ///
    /// let trellis = Arc::new(Trellis::new(&ConvCode::k7_171_133()));
    /// let tile = TileConfig::new(256, 20, 20, Traceback::Serial)?.with_group(64)?;
    /// let decoder = CpuViterbi::<i8>::new(trellis, ViterbiMode::Tiled(tile), 0)?;
    /// let block = ViterbiDecoder::new(Box::new(decoder))?;
    /// assert!(block.describe().starts_with("cpu"));
    /// # Ok::<(), anyhow::Error>(())
    /// ```
    ViterbiDecoder
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

#[cfg(test)]
mod encoder_tests {
    use super::*;
    use crate::blocks::testing::run_through;
    use crate::blocks::{FirstError, Reporting};
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
