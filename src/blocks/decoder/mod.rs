//! The one decoder block every code family's decoder plugs into.

mod engine;
mod stats;

pub use stats::{DecoderCounts, DecoderStats};

use super::{FirstError, Reporting, stream};
use crate::codes::decode::{BatchDecoder, UnitInput};
use crate::codes::framing::{BlockCutter, Cutter};
use engine::Engine;
use futuresdr::runtime::dev::prelude::*;
use std::sync::Arc;
use std::time::Duration;

/// What a decoder block ([`ViterbiDecoder`], ...) does besides decoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecoderOptions {
    /// Longest a unit waits for its batch to fill when the input stalls; then
    /// the partial batch is decoded. Bounds the latency a large GPU batch
    /// would otherwise add to a slow stream.
    pub max_latency: Duration,
    /// Tag the first bit of every unit with its report
    /// ([`UNIT_REPORT_TAG`](super::UNIT_REPORT_TAG)).
    pub report_tags: bool,
    /// Write soft output (one a-posteriori LLR per bit) to a second output,
    /// `soft[0]`; only for decoders that give it.
    pub soft: bool,
    /// Write the bits packed, eight per byte, the first in the most
    /// significant place (the stream's last byte completed with zero bits):
    /// an eighth of the bytes for the blocks after the decoder to move.
    pub packed: bool,
}

/// Bytes of the output buffer of a block with packed output: the packed bits
/// of a few batches cut in place.
const PACKED_OUTPUT_BYTES: usize = 16 << 20;

/// Latency bound unless told: a tenth of a second.
pub const DEFAULT_MAX_LATENCY: Duration = Duration::from_millis(100);

impl Default for DecoderOptions {
    fn default() -> Self {
        Self { max_latency: DEFAULT_MAX_LATENCY, report_tags: false, soft: false, packed: false }
    }
}

/// Declares a decoder block of a code family, named for it: FutureSDR names
/// block instances after their type (`ViterbiDecoder-3`), so each family's
/// block is its own type, and all of them are this one block (the engine
/// behind it is shared; a family adds one line, `decoder_block!(TurboDecoder)`).
macro_rules! decoder_block {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Block)]
        #[blocking]
        pub struct $name<T: CpuSample + Copy> {
            engine: Engine<T>,
            errors: FirstError,
            #[input]
            input: DefaultCpuReader<T>,
            #[output]
            output: DefaultCpuWriter<u8>,
            #[output]
            soft: Vec<DefaultCpuWriter<f32>>,
        }

        impl<T: CpuSample + Copy> $name<T> {
            /// Block around `decoder`, taking a framer's units, default options.
            pub fn new(decoder: Box<dyn BatchDecoder<T>>) -> anyhow::Result<Self> {
                Self::build(decoder, None, DecoderOptions::default())
            }

            /// Block around `decoder` that cuts its input with `cutter` when given
            /// (a framer's units otherwise), with `options`.
            pub fn build(decoder: Box<dyn BatchDecoder<T>>, cutter: Option<Box<dyn Cutter<T>>>, options: DecoderOptions) -> anyhow::Result<Self> {
                let (engine, input, soft) = parts(decoder, cutter, options)?;
                let mut output = stream::output();
                if options.packed {
                    // A batch's packed bits leave in one go, not a megabyte per downstream turn.
                    output.set_min_buffer_size_in_items(PACKED_OUTPUT_BYTES);
                }
                Ok(Self { engine, errors: FirstError::default(), input, output, soft })
            }

            /// The decoder's one-line description (backend and resources).
            pub fn describe(&self) -> String {
                self.engine.describe()
            }

            /// A handle on the live counts.
            pub fn stats(&self) -> Arc<DecoderStats> {
                self.engine.stats()
            }
        }

        impl<T: CpuSample + Copy> Reporting for $name<T> {
            fn first_error(&mut self) -> &mut FirstError {
                &mut self.errors
            }
        }

        impl<T: CpuSample + Copy> $crate::blocks::Counted for $name<T> {
            fn items(&self) -> u64 {
                self.engine.taken()
            }
        }

        #[doc(hidden)]
        impl<T: CpuSample + Copy> Kernel for $name<T> {
            async fn work(&mut self, io: &mut WorkIo, _mo: &mut MessageOutputs, meta: &mut BlockMeta) -> Result<()> {
                let r = self.engine.work(&mut self.input, &mut self.output, self.soft.first_mut(), io);
                self.errors.keep(meta, r)
            }
        }
    };
}

/// The engine, input port and soft output ports of a decoder block.
#[allow(clippy::type_complexity)]
fn parts<T: CpuSample + Copy>(
    decoder: Box<dyn BatchDecoder<T>>,
    cutter: Option<Box<dyn Cutter<T>>>,
    options: DecoderOptions,
) -> anyhow::Result<(Engine<T>, DefaultCpuReader<T>, Vec<DefaultCpuWriter<f32>>)> {
    let cutter = match cutter {
        Some(c) => c,
        None => {
            // Units as a framer tags them; until the first tag, those of the first format.
            let first = decoder.shapes().first().filter(|s| s.input == UnitInput::Exact).map(|s| (s.items, 0));
            let longest = decoder.shapes().iter().map(|s| s.items).max().unwrap_or(0);
            Box::new(BlockCutter::marked(first, longest)?)
        }
    };
    let engine = Engine::new(cutter, decoder, options)?;
    let mut input = DefaultCpuReader::default();
    input.set_min_buffer_size_in_items(engine.input_buffer_items());
    let soft = if options.soft { vec![stream::output()] } else { Vec::new() };
    Ok((engine, input, soft))
}

decoder_block! {
    /// Decodes work units of a convolutional code with a Viterbi decoder
    /// ([`crate::gpu::viterbi_decoder`]: the CPU reference or the GPU launcher):
    /// the decoder block every family shares, under its family's name.
    ///
    /// Its input is either a framer's units (with the framer's unit tags; see
    /// [`super::Framer`]) or a raw stream that the block cuts itself with a
    /// [`Cutter`], which a cutter that learns from the decoder (insertion/deletion
    /// codes) requires. It gathers units into batches of up to the decoder's
    /// limit, keeps up to the decoder's depth of batches in flight, and emits the
    /// bits in order. When the input stalls, a partial batch goes after
    /// [`DecoderOptions::max_latency`]. The bits of a padded last unit that are
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
    /// `soft[0]` (with [`DecoderOptions::soft`]): one `f32` a-posteriori LLR per bit.
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

decoder_block! {
    /// Decodes turbo code blocks (one unit per block, 3K + 12 LLRs in the
    /// family's [`Layout`](crate::codes::turbo::Layout)) with a turbo decoder
    /// ([`crate::codes::turbo::CpuTurbo`], or the GPU's), or whole LTE
    /// transport blocks (one unit per transport block, its G LLRs, decoded to
    /// A bits by a [`crate::codes::turbo::TransportDecoder`] around the CPU or
    /// GPU decoder): the decoder block every family shares, under this
    /// family's name; see [`ViterbiDecoder`] for what it does around the
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
    /// `soft[0]` (with [`DecoderOptions::soft`]; code blocks only): one `f32`
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
    ///     CpuTurbo::<f32>::new(code, DecoderConfig::default(), 1.0, 0).map(|d| Box::new(d) as _)
    /// })?;
    /// let cutter = BlockCutter::<i8>::fixed(18360)?.naming("transport block");
    /// let block = TurboDecoder::build(Box::new(decoder), Some(Box::new(cutter)), Default::default())?;
    /// assert!(block.describe().starts_with("transport blocks of A = 6120"));
    /// # Ok::<(), anyhow::Error>(())
    /// ```
    TurboDecoder
}

#[cfg(test)]
mod tests;
