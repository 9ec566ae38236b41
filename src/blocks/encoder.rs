//! The encoder block, for any code family's [`Encoder`]: the shared work
//! and the macro a family declares its named block with.

use super::stream::{Backlog, Transform};
use crate::codes::encode::Encoder;
use futuresdr::runtime::dev::prelude::*;

/// Declares the encoder block of a code family around its [`Encoder`], named
/// for it (FutureSDR names block instances after their type); the work is the
/// shared [`Encoding`]. A family declares its block in its own module,
/// `blocks/<family>`, with the block's docs: `encoder_block! { /// docs ...
/// ConvEncoder, conv::ConvEncoder }`. The calling module must import
/// `futuresdr::runtime::dev::prelude::*`, as every block module does.
macro_rules! encoder_block {
    ($(#[$doc:meta])* $name:ident, $encoder:ty) => {
        $(#[$doc])*
        #[derive(Block)]
        pub struct $name {
            encoder: $crate::blocks::encoder::Encoding<$encoder>,
            relay: $crate::blocks::stream::Relay<u8>,
            errors: $crate::blocks::FirstError,
            #[input]
            input: DefaultCpuReader<u8>,
            #[output]
            output: DefaultCpuWriter<u8>,
        }

        impl $name {
            /// Block around `encoder`.
            pub fn new(encoder: $encoder) -> Self {
                Self {
                    encoder: $crate::blocks::encoder::Encoding(encoder),
                    relay: $crate::blocks::stream::Relay::default(),
                    errors: $crate::blocks::FirstError::default(),
                    input: DefaultCpuReader::default(),
                    output: $crate::blocks::stream::output(),
                }
            }
        }

        impl $crate::blocks::Reporting for $name {
            fn first_error(&mut self) -> &mut $crate::blocks::FirstError {
                &mut self.errors
            }
        }

        impl $crate::blocks::Counted for $name {
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
pub(crate) use encoder_block;

/// Any family's encoder, driven chunk by chunk.
pub(crate) struct Encoding<E>(pub(crate) E);

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
