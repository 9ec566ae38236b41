//! BPSK mapping block.

use super::stream::{self, map_each};
use crate::codes::channel::Sample;
use futuresdr::runtime::dev::prelude::*;

/// Maps bits to BPSK symbols: bit 0 → +1, bit 1 → −1, as real samples (`f32`)
/// or on the in-phase axis of complex baseband samples (`cf32`, quadrature 0).
///
/// # Stream Inputs
///
/// `input`: bits (`u8` 0/1).
///
/// # Stream Outputs
///
/// `output`: symbols (`f32` or `Complex32`), one per bit.
///
/// # Usage
/// ```
/// use gpufec::blocks::BpskMapper;
/// let real = BpskMapper::<f32>::new();
/// let complex = BpskMapper::<num_complex::Complex32>::new();
/// ```
#[derive(Block)]
#[type_name(BpskMapper)]
pub struct BpskMapper<S: Sample> {
    taken: u64,
    #[input]
    input: DefaultCpuReader<u8>,
    #[output]
    output: DefaultCpuWriter<S>,
}

impl<S: Sample> BpskMapper<S> {
    /// A mapper.
    pub fn new() -> Self {
        Self { taken: 0, input: DefaultCpuReader::default(), output: stream::output() }
    }
}

impl<S: Sample> Default for BpskMapper<S> {
    fn default() -> Self {
        Self::new()
    }
}

impl<S: Sample> super::Counted for BpskMapper<S> {
    fn items(&self) -> u64 {
        self.taken
    }
}

#[doc(hidden)]
impl<S: Sample> Kernel for BpskMapper<S> {
    async fn work(&mut self, io: &mut WorkIo, _mo: &mut MessageOutputs, _meta: &mut BlockMeta) -> Result<()> {
        map_each(&mut self.input, &mut self.output, io, &mut self.taken, |bits, out| {
            for (o, &b) in out.iter_mut().zip(bits) {
                *o = S::bpsk(b);
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::FirstError;
    use crate::blocks::testing::run_through;
    use num_complex::Complex32;

    #[test]
    fn maps_bits_to_real_or_complex_symbols() {
        let got: Vec<f32> = run_through(vec![0u8, 1, 1, 0], &FirstError::default(), |fg| fg.add(BpskMapper::<f32>::new()).into()).unwrap();
        assert_eq!(got, vec![1.0, -1.0, -1.0, 1.0]);
        let got: Vec<Complex32> = run_through(vec![1u8, 0], &FirstError::default(), |fg| fg.add(BpskMapper::<Complex32>::new()).into()).unwrap();
        assert_eq!(got, vec![Complex32::new(-1.0, 0.0), Complex32::new(1.0, 0.0)]);
    }
}
