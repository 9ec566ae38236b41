//! Viterbi decoding block, on whichever backend its decoder runs.

use super::batcher::Batcher;
use super::{FirstError, Reporting};
use crate::codes::{BatchDecoder, Llr};
use super::stream;
use futuresdr::runtime::dev::prelude::*;

/// Decodes Viterbi work units (tiles of a stream, or terminated frames) with
/// any [`BatchDecoder`]: the CPU reference or the GPU launcher, as
/// [`gpu::viterbi_decoder`](crate::gpu::viterbi_decoder) chose. The backend is
/// the decoder's, never a different block.
///
/// It gathers up to `batch_units()` whole units, keeps up to `depth()` batches
/// in flight before collecting the oldest, emits bits in order, and drains at
/// the end of the stream, dropping the padding bits of a last unit that the
/// [`Framer`](super::Framer) marked. Its input buffer holds a full batch. The
/// block runs on its own thread, since a decoder may block while it works.
///
/// A NaN or infinite LLR, a decoder error, or a stream that ends inside a unit
/// fails the flowgraph.
///
/// # Stream Inputs
///
/// `input`: whole work units of LLRs (`f32` or `i8`), as the framer cuts them.
///
/// # Stream Outputs
///
/// `output`: decoded information bits (`u8` 0/1), in stream order.
///
/// # Usage
/// ```
/// use gpufec::blocks::ViterbiDecoder;
/// use gpufec::codes::conv::{ConvCode, TileConfig, Traceback, Trellis, ViterbiMode};
/// use gpufec::gpu::{Backend, GpuOptions, viterbi_decoder};
/// use std::sync::Arc;
///
/// let trellis = Arc::new(Trellis::new(&ConvCode::k7_171_133()));
/// let tile = TileConfig::new(256, 20, 20, Traceback::Serial)?.with_group(64)?;
/// let (decoder, _why_not_gpu) =
///     viterbi_decoder::<i8>(trellis, ViterbiMode::Tiled(tile), None, Backend::Cpu, 0, &GpuOptions::default())?;
/// let block = ViterbiDecoder::new(decoder);
/// assert!(block.describe().starts_with("cpu"));
/// # Ok::<(), anyhow::Error>(())
/// ```
#[derive(Block)]
#[blocking]
pub struct ViterbiDecoder<T: Llr> {
    batcher: Batcher<T>,
    errors: FirstError,
    #[input]
    input: DefaultCpuReader<T>,
    #[output]
    output: DefaultCpuWriter<u8>,
}

impl<T: Llr> ViterbiDecoder<T> {
    /// Block around `decoder`.
    pub fn new(decoder: Box<dyn BatchDecoder<T>>) -> Self {
        let batcher = Batcher::new(decoder);
        let mut input = DefaultCpuReader::default();
        input.set_min_buffer_size_in_items(batcher.batch_llrs());
        Self { batcher, errors: FirstError::default(), input, output: stream::output() }
    }

    /// The decoder's one-line description (backend and resources).
    pub fn describe(&self) -> String {
        self.batcher.describe()
    }
}

impl<T: Llr> Reporting for ViterbiDecoder<T> {
    fn first_error(&mut self) -> &mut FirstError {
        &mut self.errors
    }
}

#[doc(hidden)]
impl<T: Llr> Kernel for ViterbiDecoder<T> {
    async fn work(&mut self, io: &mut WorkIo, _mo: &mut MessageOutputs, meta: &mut BlockMeta) -> Result<()> {
        let r = self.batcher.work(&mut self.input, &mut self.output, io);
        self.errors.keep(meta, r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::testing::run_through;
    use crate::codes::conv::{ConvCode, CpuViterbi, FrameConfig, TileConfig, Tiler, Traceback, Trellis, ViterbiMode};
    use std::sync::Arc;

    fn k7() -> Arc<Trellis> {
        Arc::new(Trellis::new(&ConvCode::k7_171_133()))
    }

    fn cpu(mode: ViterbiMode, batch: usize) -> Box<dyn BatchDecoder<f32>> {
        Box::new(CpuViterbi::<f32>::new(k7(), mode, 2).unwrap().with_batch_units(batch))
    }

    #[test]
    fn decodes_units_in_order_like_the_decoder_alone() {
        let tile = TileConfig::new(32, 8, 12, Traceback::Serial).unwrap().with_group(2).unwrap();
        let mode = ViterbiMode::Tiled(tile);
        let llrs: Vec<f32> = (0..2 * 64 * 37).map(|i| ((i * 7919 % 200) as f32 - 100.0) * 0.05).collect();
        let mut units = Vec::new();
        Tiler::new(tile, 2).push(&llrs, &mut units);
        let mut want = Vec::new();
        cpu(mode, 3).decode_all(&units, &mut want).unwrap();
        let errors = FirstError::default();
        let got: Vec<u8> = run_through(units, &errors, |fg| fg.add(ViterbiDecoder::new(cpu(mode, 3))).into()).unwrap();
        assert_eq!(got, want);
    }

    #[test]
    fn nan_and_partial_units_fail_the_flowgraph() {
        let mode = ViterbiMode::Frame(FrameConfig::new(10, true).unwrap());
        let mut llrs = vec![1.0f32; 32 * 5];
        llrs[40] = f32::NAN;
        let errors = FirstError::default();
        let err = run_through::<f32, u8>(llrs, &errors, |fg| {
            fg.add(ViterbiDecoder::new(cpu(mode, 2)).report_to(&errors)).into()
        })
        .unwrap_err();
        assert!(err.contains("NaN or infinite"), "{err}");
        let errors = FirstError::default();
        let err = run_through::<f32, u8>(vec![1.0; 32 * 2 + 5], &errors, |fg| {
            fg.add(ViterbiDecoder::new(cpu(mode, 2)).report_to(&errors)).into()
        })
        .unwrap_err();
        assert!(err.contains("inside a work unit (5 of 32 LLRs present)"), "{err}");
    }

    /// Decodes every unit to its first LLR's sign, like a GPU keeping batches in
    /// flight, and fails with a CUDA-like message at its `fail_at`-th call of
    /// `collect` (`on_collect`) or of `submit`.
    struct Failing {
        queue: std::collections::VecDeque<Vec<u8>>,
        calls: usize,
        fail_at: usize,
        on_collect: bool,
    }

    impl BatchDecoder<f32> for Failing {
        fn unit(&self) -> crate::codes::UnitShape {
            crate::codes::UnitShape { llrs_in: 4, bits_out: 1 }
        }
        fn batch_units(&self) -> usize {
            8
        }
        fn depth(&self) -> usize {
            2
        }
        fn submit(&mut self, llrs: &[f32]) -> anyhow::Result<()> {
            self.calls += usize::from(!self.on_collect);
            anyhow::ensure!(self.on_collect || self.calls != self.fail_at, "host→device copy: CUDA_ERROR_ILLEGAL_ADDRESS");
            self.queue.push_back(llrs.chunks(4).map(|u| u8::from(u[0] < 0.0)).collect());
            Ok(())
        }
        fn collect(&mut self, out: &mut Vec<u8>) -> anyhow::Result<bool> {
            let Some(bits) = self.queue.pop_front() else { return Ok(false) };
            self.calls += usize::from(self.on_collect);
            anyhow::ensure!(!self.on_collect || self.calls != self.fail_at, "cuEventSynchronize: CUDA_ERROR_LAUNCH_FAILED");
            out.extend(bits);
            Ok(true)
        }
        fn in_flight(&self) -> usize {
            self.queue.len()
        }
        fn describe(&self) -> String {
            "failing test decoder".into()
        }
    }

    #[test]
    fn a_decoder_error_mid_stream_fails_the_flowgraph_with_its_message() {
        // 40 batches; the failure comes with batches in flight and more input waiting.
        let llrs = vec![1.0f32; 4 * 8 * 40];
        for (on_collect, fail_at, want) in
            [(false, 7, "CUDA_ERROR_ILLEGAL_ADDRESS"), (true, 5, "CUDA_ERROR_LAUNCH_FAILED"), (false, 1, "ILLEGAL_ADDRESS")]
        {
            let errors = FirstError::default();
            let dec = Failing { queue: Default::default(), calls: 0, fail_at, on_collect };
            let err = run_through::<f32, u8>(llrs.clone(), &errors, |fg| {
                fg.add(ViterbiDecoder::new(Box::new(dec)).report_to(&errors)).into()
            })
            .unwrap_err();
            assert!(err.contains(want), "{err}");
        }
        // The same decoder without a failure passes every bit.
        let errors = FirstError::default();
        let dec = Failing { queue: Default::default(), calls: 0, fail_at: usize::MAX, on_collect: true };
        let got: Vec<u8> =
            run_through(llrs, &errors, |fg| fg.add(ViterbiDecoder::new(Box::new(dec)).report_to(&errors)).into()).unwrap();
        assert_eq!(got, vec![0u8; 8 * 40]);
    }
}
