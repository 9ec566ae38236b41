//! The polar family's blocks: the encoder of bare codewords or 5G messages,
//! and the polar decoder (the shared encoder and decoder blocks under the
//! family's names).

use super::decoder::decoder_block;
use super::encoder::encoder_block;
use futuresdr::runtime::dev::prelude::*;

decoder_block! {
    /// Decodes polar codewords (one unit per codeword, N LLRs, to its
    /// payload bits) or whole 5G control messages (one unit per message, its
    /// E LLRs, rate-recovered and decoded to A bits) with a polar decoder
    /// ([`crate::codes::polar::CpuPolar`]: BP, SC or CA-SCL, or the GPU's
    /// BP): the decoder block every family shares, under this family's name;
    /// see [`ViterbiDecoder`](crate::blocks::ViterbiDecoder) for what it does
    /// around the decoder. Each unit's report holds BP's iterations and its
    /// check (the CRC's verdict, or BP's G-matrix check without a CRC).
    ///
    /// # Stream Inputs
    ///
    /// `input`: codewords or messages, or a stream to cut into them, of LLRs
    /// (`f32`, `i8`).
    ///
    /// # Stream Outputs
    ///
    /// `output`: decoded payload bits (`u8` 0/1), in order.
    ///
    /// `soft[0]` (with [`DecoderOptions::soft`](crate::blocks::DecoderOptions::soft); BP on bare codewords): one `f32`
    /// a-posteriori LLR per payload bit.
    ///
    /// # Usage
    /// ```
    /// use gpufec::blocks::PolarDecoder;
    /// use gpufec::codes::polar::{Algorithm, Construction, CpuPolar, PolarSpec};
    /// use std::sync::Arc;
    ///
    /// let spec = PolarSpec::plain(Arc::new(Construction::Nr.build(1024, 512)?));
    /// let block = PolarDecoder::new(Box::new(CpuPolar::<i8>::new(spec, Algorithm::Scl { list: 8 }, 0)?))?;
    /// assert!(block.describe().contains("SCL L=8"));
    /// # Ok::<(), anyhow::Error>(())
    /// ```
    PolarDecoder
}

encoder_block! {
    /// Encodes payload bits into polar codewords of N bits, or 5G control
    /// messages of A bits into their E sent bits through the whole chain of
    /// TS 38.212 ([`crate::codes::polar::FramesEncoder`]): the encoder block
    /// every family shares, under this family's name. A stream that ends
    /// inside a codeword or message fails the flowgraph.
    ///
    /// # Stream Inputs
    ///
    /// `input`: payload bits (`u8` 0/1); any other value fails the flowgraph.
    ///
    /// # Stream Outputs
    ///
    /// `output`: the sent bits (`u8` 0/1), codeword after codeword.
    ///
    /// # Usage
    /// ```
    /// use gpufec::blocks::PolarEncoder;
    /// use gpufec::codes::polar::nr::NrPolar;
    /// use gpufec::codes::polar::PolarFrames;
    ///
    /// let enc = PolarEncoder::new(PolarFrames::Nr(NrPolar::uci(200, 432)?).encoder());
    /// # Ok::<(), anyhow::Error>(())
    /// ```
    PolarEncoder, crate::codes::polar::FramesEncoder
}
