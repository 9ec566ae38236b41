//! The turbo family's blocks: the encoders of LTE code blocks and of whole
//! transport blocks, and the turbo decoder (the shared encoder and decoder
//! blocks under the family's names).

use super::decoder::decoder_block;
use super::encoder::encoder_block;
use futuresdr::runtime::dev::prelude::*;

decoder_block! {
    /// Decodes turbo code blocks (one unit per block, 3K + 12 LLRs in the
    /// family's [`Layout`](crate::codes::turbo::Layout)) with a turbo decoder
    /// ([`crate::codes::turbo::CpuTurbo`], or the GPU's), or whole LTE
    /// transport blocks (one unit per transport block, its G LLRs, decoded to
    /// A bits by a [`crate::codes::turbo::TransportDecoder`] around the CPU or
    /// GPU decoder): the decoder block every family shares, under this
    /// family's name; see [`ViterbiDecoder`](crate::blocks::ViterbiDecoder) for what it does around the
    /// decoder. Each unit's report holds its iterations (a transport block's:
    /// its code blocks', summed) and whether its CRC checked (a code block's
    /// when the decoder stops on it; a transport block's CRC24A always).
    ///
    /// # Stream Inputs
    ///
    /// `input`: code blocks or transport blocks, or a stream to cut into
    /// them, of LLRs (`f32`, `i8`).
    ///
    /// # Stream Outputs
    ///
    /// `output`: decoded information bits (`u8` 0/1), K per code block or A
    /// per transport block, in order.
    ///
    /// `soft[0]` (with [`DecoderOptions::soft`](crate::blocks::DecoderOptions::soft); code blocks only): one `f32`
    /// a-posteriori LLR per bit.
    ///
    /// # Usage
    /// ```
    /// use gpufec::blocks::TurboDecoder;
    /// use gpufec::codes::framing::BlockCutter;
    /// use gpufec::codes::turbo::{CpuTurbo, DecoderConfig, TransportBlock, TransportDecoder, TurboCode};
    ///
    /// let decoder = CpuTurbo::<i8>::new(TurboCode::lte(6144)?, DecoderConfig::default(), 1.0, 0)?;
    /// let block = TurboDecoder::new(Box::new(decoder))?;
    /// assert!(block.describe().contains("K 6144"));
    ///
    /// // Transport blocks of A = 6120 in G = 18360 LLRs, cut from the stream.
    /// let tb = TransportBlock::new(6120, 18360, 0)?;
    /// let decoder = TransportDecoder::<i8>::new(tb, |code| {
    ///     CpuTurbo::<i8>::new(code, DecoderConfig::default(), 1.0, 0).map(|d| Box::new(d) as _)
    /// })?;
    /// let cutter = BlockCutter::<i8>::fixed(18360)?.naming("transport block");
    /// let block = TurboDecoder::build(Box::new(decoder), Some(Box::new(cutter)), Default::default())?;
    /// assert!(block.describe().starts_with("transport blocks of A = 6120"));
    /// # Ok::<(), anyhow::Error>(())
    /// ```
    TurboDecoder
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
    use crate::blocks::{FirstError, Reporting};
    use crate::codes::encode::Encoder;

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
}
