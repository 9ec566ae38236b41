//! BPSK mapping block.

use super::stream::{self, map_each};
use crate::codes::channel::bpsk_map;
use futuresdr::runtime::dev::prelude::*;

/// Maps bits to BPSK symbols: bit 0 → +1, bit 1 → −1 ([`bpsk_map`]).
///
/// # Stream Inputs
///
/// `input`: bits (`u8` 0/1).
///
/// # Stream Outputs
///
/// `output`: symbols (`f32` ±1), one per bit.
///
/// # Usage
/// ```
/// use gpufec::blocks::BpskMapper;
/// let mapper = BpskMapper::new();
/// ```
#[derive(Block)]
pub struct BpskMapper {
    scratch: Vec<f32>,
    #[input]
    input: DefaultCpuReader<u8>,
    #[output]
    output: DefaultCpuWriter<f32>,
}

impl BpskMapper {
    /// A mapper.
    pub fn new() -> Self {
        Self { scratch: Vec::new(), input: DefaultCpuReader::default(), output: stream::output() }
    }
}

impl Default for BpskMapper {
    fn default() -> Self {
        Self::new()
    }
}

#[doc(hidden)]
impl Kernel for BpskMapper {
    async fn work(&mut self, io: &mut WorkIo, _mo: &mut MessageOutputs, _meta: &mut BlockMeta) -> Result<()> {
        let scratch = &mut self.scratch;
        map_each(&mut self.input, &mut self.output, io, |bits, out| {
            scratch.clear();
            bpsk_map(bits, scratch);
            out.copy_from_slice(scratch);
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::FirstError;
    use crate::blocks::testing::run_through;

    #[test]
    fn maps_zero_to_plus_one() {
        let bits: Vec<u8> = (0..70_000).map(|i| (i % 3 == 0) as u8).collect();
        let got: Vec<f32> =
            run_through(bits.clone(), &FirstError::default(), |fg| fg.add(BpskMapper::new()).into()).unwrap();
        let want: Vec<f32> = bits.iter().map(|&b| if b == 0 { 1.0 } else { -1.0 }).collect();
        assert_eq!(got, want);
    }
}
