//! BPSK over AWGN to LLRs in one block.

use super::stream::{self, map_each};
use super::{FirstError, Reporting};
use crate::codes::channel::{self, Quantizer};
use crate::codes::llr::Llr;
use crate::codes::sim::noise_seed;
use crate::gpu::{Backend, Choice, GpuBpskAwgn, select};
use futuresdr::runtime::dev::prelude::*;

/// Channel bits to the LLRs a receiver sees after BPSK over AWGN: what
/// [`BpskMapper`](super::BpskMapper) → [`Awgn`](super::Awgn) →
/// [`LlrDemapper`](super::LlrDemapper) (→ [`Quantize`](super::Quantize))
/// give, bit for bit, in one pass over each piece of the stream and on all
/// cores ([`channel::BpskAwgn`], the link simulator's channel): a chain that
/// needs no samples in between saves three stream buffers and their copies.
///
/// The noise is drawn from [`noise_seed`]`(seed)` by stream position, so a
/// flowgraph whose bit source shares the seed of a `gpufec ber` run counts the
/// same errors.
///
/// On a GPU ([`BpskAwgn::on`]) the block sends the same LLRs, bit for bit
/// ([`GpuBpskAwgn`]), and leaves the host's cores to the rest of the chain.
///
/// A channel bit other than 0 or 1 fails the flowgraph.
///
/// # Stream Inputs
///
/// `input`: channel bits (`u8` 0/1).
///
/// # Stream Outputs
///
/// `output`: LLRs (`f32`, or `i8` quantized by the given [`Quantizer`]), one per bit.
///
/// # Usage
/// ```
/// use gpufec::blocks::BpskAwgn;
/// use gpufec::codes::channel::Quantizer;
/// let ch = BpskAwgn::<i8>::new(4.0, 0.5, 1, Quantizer::new(6.37)?)?;
/// # Ok::<(), anyhow::Error>(())
/// ```
#[derive(Block)]
#[type_name(BpskAwgn)]
pub struct BpskAwgn<T: Llr + CpuSample> {
    channel: Engine<T>,
    errors: FirstError,
    taken: u64,
    #[input]
    input: DefaultCpuReader<u8>,
    #[output]
    output: DefaultCpuWriter<T>,
}

impl<T: Llr + CpuSample> BpskAwgn<T> {
    /// LLRs at `ebn0_db` for effective rate `rate`, noise drawn from `seed`,
    /// quantized (for `i8`) by `quantizer`.
    pub fn new(ebn0_db: f64, rate: f64, seed: u64, quantizer: Quantizer) -> anyhow::Result<Self> {
        Ok(Self::with(Engine::Host(channel::BpskAwgn::with_quantizer(ebn0_db, rate, noise_seed(seed), quantizer)?)))
    }

    /// [`Self::new`] on `backend`: GPU `device` ([`GpuBpskAwgn`]) or the
    /// host's cores, the same LLRs either way; where it ended up and why not
    /// on the GPU when `auto` fell back.
    pub fn on(backend: Backend, device: usize, ebn0_db: f64, rate: f64, seed: u64, quantizer: Quantizer) -> anyhow::Result<(Self, Choice)> {
        let (engine, choice) = select(
            backend,
            || {
                let mut gpu = GpuBpskAwgn::new(device, ebn0_db, rate, noise_seed(seed), quantizer)?;
                // The block's bits and LLRs lie in stream buffers, which live until `release`.
                gpu.set_in_place(true);
                Ok(Engine::Gpu(Box::new(gpu)))
            },
            || Ok(Engine::Host(channel::BpskAwgn::with_quantizer(ebn0_db, rate, noise_seed(seed), quantizer)?)),
        )?;
        Ok((Self::with(engine), choice))
    }

    fn with(channel: Engine<T>) -> Self {
        Self { channel, errors: FirstError::default(), taken: 0, input: DefaultCpuReader::default(), output: stream::output() }
    }
}

/// Where the block's LLRs are made.
enum Engine<T: Llr> {
    Host(channel::BpskAwgn<T>),
    Gpu(Box<GpuBpskAwgn<T>>),
}

impl<T: Llr> Engine<T> {
    fn transmit_into(&mut self, bits: &[u8], out: &mut [T]) -> crate::codes::error::CodeResult<()> {
        match self {
            Engine::Host(c) => c.transmit_into(bits, out),
            Engine::Gpu(c) => c.transmit_into(bits, out),
        }
    }

    fn release(&mut self) {
        if let Engine::Gpu(c) = self {
            c.release();
        }
    }
}

impl<T: Llr + CpuSample> Reporting for BpskAwgn<T> {
    fn first_error(&mut self) -> &mut FirstError {
        &mut self.errors
    }
}

impl<T: Llr + CpuSample> super::Counted for BpskAwgn<T> {
    fn items(&self) -> u64 {
        self.taken
    }
}

#[doc(hidden)]
impl<T: Llr + CpuSample> Kernel for BpskAwgn<T> {
    async fn work(&mut self, io: &mut WorkIo, _mo: &mut MessageOutputs, meta: &mut BlockMeta) -> Result<()> {
        let channel = &mut self.channel;
        let r = map_each(&mut self.input, &mut self.output, io, &mut self.taken, |bits, llrs| Ok(channel.transmit_into(bits, llrs)?));
        if io.finished || r.is_err() {
            // The stream buffer the GPU read in place goes with the flowgraph.
            self.channel.release();
        }
        self.errors.keep(meta, r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::testing::run_through;
    use crate::blocks::{Awgn, BpskMapper, LlrDemapper, Quantize};

    #[test]
    fn gives_the_llrs_of_the_separate_blocks() {
        let bits: Vec<u8> = (0..300_001u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 31) as u8).collect();
        let q = Quantizer::new(5.1).unwrap();
        let errors = FirstError::default();
        let fused: Vec<i8> =
            run_through(bits.clone(), &errors, |fg| fg.add(BpskAwgn::<i8>::new(3.0, 0.75, 5, q).unwrap().report_to(&errors)).into())
                .unwrap();
        // The separate blocks, one run each.
        let e = FirstError::default();
        let y: Vec<f32> = run_through(bits, &e, |fg| fg.add(BpskMapper::<f32>::new()).into()).unwrap();
        let y: Vec<f32> = run_through(y, &e, |fg| fg.add(Awgn::<f32>::new(3.0, 0.75, 5).unwrap()).into()).unwrap();
        let l: Vec<f32> = run_through(y, &e, |fg| fg.add(LlrDemapper::<f32>::new(3.0, 0.75).unwrap()).into()).unwrap();
        let chain: Vec<i8> = run_through(l, &e, |fg| fg.add(Quantize::new(q)).into()).unwrap();
        assert_eq!(fused, chain);
        let errors = FirstError::default();
        let err = run_through::<u8, f32>(vec![0, 1, 7], &errors, |fg| {
            fg.add(BpskAwgn::<f32>::new(3.0, 0.5, 1, q).unwrap().report_to(&errors)).into()
        })
        .unwrap_err();
        assert!(err.contains("is 7, not 0 or 1"), "{err}");
    }
}
