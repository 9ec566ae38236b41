//! LLR quantizing block, `f32 → i8`.

use super::stream::{self, map_finite};
use super::{FirstError, Reporting};
use crate::codes::channel::Quantizer;
use futuresdr::runtime::dev::prelude::*;

/// Quantizes LLRs to `i8` as round(llr · scale), saturated to ±127
/// ([`Quantizer`]). The scale is explicit; [`Quantizer::matched`] gives the
/// usual one: 16·σ² while the noise is weak (a noiseless ±1 sample becomes
/// ±32, saturating beyond ±4), less as it grows (±127 at 1 + 4σ).
///
/// A NaN or infinite LLR fails the flowgraph.
///
/// # Stream Inputs
///
/// `input`: LLRs (`f32`).
///
/// # Stream Outputs
///
/// `output`: LLRs (`i8`).
///
/// # Usage
/// ```
/// use gpufec::blocks::Quantize;
/// use gpufec::codes::channel::Quantizer;
/// let q = Quantize::new(Quantizer::new(6.37)?);
/// # Ok::<(), anyhow::Error>(())
/// ```
#[derive(Block)]
pub struct Quantize {
    quantizer: Quantizer,
    position: u64,
    errors: FirstError,
    #[input]
    input: DefaultCpuReader<f32>,
    #[output]
    output: DefaultCpuWriter<i8>,
}

impl Quantize {
    /// Block quantizing with `quantizer`.
    pub fn new(quantizer: Quantizer) -> Self {
        Self { quantizer, position: 0, errors: FirstError::default(), input: DefaultCpuReader::default(), output: stream::output() }
    }
}

impl Reporting for Quantize {
    fn first_error(&mut self) -> &mut FirstError {
        &mut self.errors
    }
}

impl super::Counted for Quantize {
    fn items(&self) -> u64 {
        self.position
    }
}

#[doc(hidden)]
impl Kernel for Quantize {
    async fn work(&mut self, io: &mut WorkIo, _mo: &mut MessageOutputs, meta: &mut BlockMeta) -> Result<()> {
        let q = self.quantizer;
        let r = map_finite(&mut self.input, &mut self.output, io, &mut self.position, |llr| q.one(llr));
        self.errors.keep(meta, r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::testing::run_through;

    #[test]
    fn quantizes_like_the_code_layer_and_rejects_infinity() {
        let llr: Vec<f32> = (0..50_000).map(|i| (i as f32 - 25_000.0) * 0.01).collect();
        let errors = FirstError::default();
        let got: Vec<i8> = run_through(llr.clone(), &errors, |fg| fg.add(Quantize::new(Quantizer::new(2.5).unwrap())).into()).unwrap();
        let mut want = Vec::new();
        Quantizer::new(2.5).unwrap().quantize(&llr, &mut want).unwrap();
        assert_eq!(got, want);
        let mut bad = llr;
        bad[7] = f32::NEG_INFINITY;
        let err =
            run_through::<f32, i8>(bad, &errors, |fg| fg.add(Quantize::new(Quantizer::new(2.5).unwrap()).report_to(&errors)).into())
                .unwrap_err();
        assert!(err.contains("value 7 of the stream is NaN or infinite"), "{err}");
    }
}
