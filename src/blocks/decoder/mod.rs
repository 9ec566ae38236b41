//! The one decoder block every code family's decoder plugs into: its
//! engine, and the macro a family declares its named block with.

mod engine;
mod stats;

pub use stats::{DecoderCounts, DecoderStats};

use super::stream;
use crate::codes::decode::{BatchDecoder, UnitInput};
use crate::codes::framing::{BlockCutter, Cutter};
pub(crate) use engine::Engine;
use futuresdr::runtime::dev::prelude::*;
use std::time::Duration;

/// What a decoder block ([`ViterbiDecoder`](crate::blocks::ViterbiDecoder), ...) does besides decoding.
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
    /// A stream that ends inside a unit (a receiver's last symbols, cut off
    /// wherever the recording stops) ends normally, its whole units decoded
    /// and the rest dropped with a note on stderr, instead of failing the
    /// run (what a file cut short must do: nothing is lost silently).
    pub drop_partial_end: bool,
}

/// Bytes of the output buffer of a block with packed output: the packed bits
/// of a few batches cut in place.
const PACKED_OUTPUT_BYTES: usize = 16 << 20;

/// Latency bound unless told: a tenth of a second.
pub const DEFAULT_MAX_LATENCY: Duration = Duration::from_millis(100);

impl Default for DecoderOptions {
    fn default() -> Self {
        Self { max_latency: DEFAULT_MAX_LATENCY, report_tags: false, soft: false, packed: false, drop_partial_end: false }
    }
}

/// Declares a decoder block of a code family, named for it: FutureSDR names
/// block instances after their type (`ViterbiDecoder-3`), so each family's
/// block is its own type, and all of them are this one block (the engine
/// behind it is shared). A family declares its block in its own module,
/// `blocks/<family>`, with the block's docs:
/// `decoder_block! { /// docs ... ViterbiDecoder }`. The calling module must
/// import `futuresdr::runtime::dev::prelude::*`, as every block module does.
macro_rules! decoder_block {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Block)]
        #[blocking]
        pub struct $name<T: CpuSample + Copy> {
            engine: $crate::blocks::decoder::Engine<T>,
            errors: $crate::blocks::FirstError,
            #[input]
            input: DefaultCpuReader<T>,
            #[output]
            output: DefaultCpuWriter<u8>,
            #[output]
            soft: Vec<DefaultCpuWriter<f32>>,
        }

        impl<T: CpuSample + Copy> $name<T> {
            /// Block around `decoder`, taking a framer's units, default options.
            pub fn new(decoder: Box<dyn $crate::codes::BatchDecoder<T>>) -> anyhow::Result<Self> {
                Self::build(decoder, None, $crate::blocks::DecoderOptions::default())
            }

            /// Block around `decoder` that cuts its input with `cutter` when given
            /// (a framer's units otherwise), with `options`.
            pub fn build(
                decoder: Box<dyn $crate::codes::BatchDecoder<T>>,
                cutter: Option<Box<dyn $crate::codes::framing::Cutter<T>>>,
                options: $crate::blocks::DecoderOptions,
            ) -> anyhow::Result<Self> {
                let (engine, input, output, soft) = $crate::blocks::decoder::parts(decoder, cutter, options)?;
                Ok(Self { engine, errors: $crate::blocks::FirstError::default(), input, output, soft })
            }

            /// The decoder's one-line description (backend and resources).
            pub fn describe(&self) -> String {
                self.engine.describe()
            }

            /// A handle on the live counts.
            pub fn stats(&self) -> std::sync::Arc<$crate::blocks::DecoderStats> {
                self.engine.stats()
            }
        }

        impl<T: CpuSample + Copy> $crate::blocks::Reporting for $name<T> {
            fn first_error(&mut self) -> &mut $crate::blocks::FirstError {
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
                if let Some(e) = io.finished.then(|| self.engine.cut_off()).flatten() {
                    let name = meta.instance_name().unwrap_or("decoder");
                    if self.engine.drops_partial_end() {
                        eprintln!("note: block '{name}': {e:#}; the rest is dropped (partial_end = \"drop\")");
                    } else {
                        self.errors.record(name, &e);
                    }
                }
                self.errors.keep(meta, r)
            }
        }
    };
}
pub(crate) use decoder_block;

/// The engine and the ports of a decoder block.
#[allow(clippy::type_complexity)]
pub(crate) fn parts<T: CpuSample + Copy>(
    decoder: Box<dyn BatchDecoder<T>>,
    cutter: Option<Box<dyn Cutter<T>>>,
    options: DecoderOptions,
) -> anyhow::Result<(Engine<T>, DefaultCpuReader<T>, DefaultCpuWriter<u8>, Vec<DefaultCpuWriter<f32>>)> {
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
    let mut output = stream::output();
    if options.packed {
        // A batch's packed bits leave in one go, not a megabyte per downstream turn.
        output.set_min_buffer_size_in_items(PACKED_OUTPUT_BYTES);
    }
    let soft = if options.soft { vec![stream::output()] } else { Vec::new() };
    Ok((engine, input, output, soft))
}

#[cfg(test)]
mod tests;
