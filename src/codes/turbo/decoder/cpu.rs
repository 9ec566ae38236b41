//! The CPU turbo decoder: code blocks in groups of [`LANES`] on all cores.

use super::config::{DecoderConfig, EarlyStop, MaxStar};
use super::group::{BlockOut, BlockResult, Group};
use super::siso::{Metric, Tables};
use crate::codes::simd::SimdLevel;
use crate::codes::threads::decoder_threads;
use crate::codes::decode::{Batch, BatchDecoder, BatchLimit, Decoded, UnitReport, UnitShape, check_batch};
use crate::codes::error::{CodeResult, invalid};
use crate::codes::llr::{Llr, LlrType};
use crate::codes::turbo::code::TurboCode;
use std::collections::VecDeque;

/// Blocks decoded in lockstep by one thread with `f32` metrics: two AVX2
/// registers per metric.
pub const LANES: usize = 16;

/// Blocks decoded in lockstep with `i16` metrics: two AVX2 registers too.
pub const LANES_I16: usize = 32;

/// The number type of the CPU decoder's recursions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// `f32`: the reference, and what the GPU computes.
    F32,
    /// `i16` with saturating arithmetic: twice the blocks per instruction;
    /// max-log-MAP only, LLRs rounded to integers as they are loaded (`i8`
    /// LLRs exactly), extrinsic scaling to a multiple of 1/256.
    I16,
}

/// Factor on `f32` LLRs decoded with `i16` metrics before they are rounded:
/// channel LLRs are a few units, so this keeps about four fractional bits
/// (the matched `i8` quantizer's 16·σ² is of the same order); max-log-MAP
/// does not depend on the factor otherwise.
pub const I16_GAIN: f32 = 16.0;

/// Each thread's scratch memory, of the decoder's precision.
enum Groups {
    F32(Vec<Group<f32, LANES>>),
    I16(Vec<Group<i16, LANES_I16>>),
}

/// Default code blocks per batch.
pub const DEFAULT_BATCH_BLOCKS: usize = 256;

/// CPU turbo decoder: the serial decoder when `subblocks` is 1, otherwise the
/// sub-block model the GPU computes.
///
/// A unit is one sent block in the family's [`Layout`](crate::codes::turbo::Layout)
/// (3K + 4m LLRs); it decodes to K bits. `i8` LLRs are divided by the
/// quantizer's scale first (`input_scale`), which only log-MAP needs:
/// max-log-MAP gives the same bits at any scale.
///
/// # Example
/// ```
/// use gpufec::codes::BatchDecoder;
/// use gpufec::codes::turbo::{CpuTurbo, DecoderConfig, TurboCode};
/// let code = TurboCode::lte(40).unwrap();
/// let mut dec = CpuTurbo::<f32>::new(code, DecoderConfig::default(), 1.0, 1).unwrap();
/// let mut bits = Vec::new();
/// dec.decode_all(&[4.0; 132], &mut bits).unwrap(); // the all-zero block, confidently received
/// assert_eq!(bits, vec![0; 40]);
/// ```
pub struct CpuTurbo<T: Llr> {
    code: TurboCode,
    cfg: DecoderConfig,
    tables: Tables,
    input_scale: f32,
    shape: [UnitShape; 1],
    threads: usize,
    /// One per thread that has worked, made when first needed.
    groups: Groups,
    soft: bool,
    /// The level asked for; `None` takes [`default_simd`]'s.
    simd: Option<SimdLevel>,
    batch_units: usize,
    done: VecDeque<Decoded>,
    _llr: std::marker::PhantomData<T>,
}

impl<T: Llr> CpuTurbo<T> {
    /// A decoder of `code` computing `cfg`, on `threads` threads (0: every
    /// core, at most [`MAX_THREADS`](crate::codes::threads::MAX_THREADS)); LLRs are divided by `input_scale`
    /// (finite, > 0) as they are loaded.
    pub fn new(code: TurboCode, cfg: DecoderConfig, input_scale: f32, threads: usize) -> CodeResult<Self> {
        cfg.validate(code.k())?;
        if !(input_scale.is_finite() && input_scale > 0.0) {
            return Err(invalid!("LLR scale {input_scale}: give a finite factor > 0"));
        }
        let threads = decoder_threads(threads)?;
        let tables = Tables::new(code.trellis());
        let shape = [UnitShape::exact(code.coded_len(), code.k())];
        Ok(Self { code, cfg, tables, input_scale, shape, threads, groups: Groups::F32(Vec::new()), soft: false, simd: None, batch_units: DEFAULT_BATCH_BLOCKS, done: VecDeque::new(), _llr: Default::default() })
    }

    /// Also give the a-posteriori LLR of every decoded bit.
    pub fn with_soft_output(mut self) -> Self {
        self.soft = true;
        self
    }

    /// Compile the lane loops for `level` instead of the best this CPU has
    /// (the results do not change); a level the CPU lacks is refused.
    pub fn with_simd(mut self, level: SimdLevel) -> CodeResult<Self> {
        if !level.is_supported() {
            return Err(invalid!("SIMD level {level} is not supported by this CPU"));
        }
        self.simd = Some(level);
        Ok(self)
    }

    /// Run the recursions in `precision`; 16-bit metrics take max-log-MAP only.
    pub fn with_precision(mut self, precision: Precision) -> CodeResult<Self> {
        if precision == Precision::I16 && self.cfg.max_star != MaxStar::Max {
            return Err(invalid!("16-bit metrics decode with max-log-MAP only, not {}", self.cfg.max_star.name()));
        }
        self.groups = match precision {
            Precision::F32 => Groups::F32(Vec::new()),
            Precision::I16 => Groups::I16(Vec::new()),
        };
        Ok(self)
    }

    /// The SIMD level the lane loops run at.
    pub fn simd(&self) -> SimdLevel {
        let precision = match self.groups {
            Groups::F32(_) => Precision::F32,
            Groups::I16(_) => Precision::I16,
        };
        self.simd.unwrap_or_else(|| default_simd(precision))
    }

    /// Set the code blocks per batch (at least 1).
    pub fn with_batch_units(mut self, units: usize) -> Self {
        self.batch_units = units.max(1);
        self
    }

    /// The code decoded.
    pub fn code(&self) -> &TurboCode {
        &self.code
    }

    /// Decode `batch` into `out`.
    fn decode_batch(&mut self, batch: &Batch<'_, T>, out: &mut Decoded) -> CodeResult<()> {
        let units = check_batch(batch, &self.shape, self.limit())?;
        batch.check_finite(0..units)?;
        let (k, n) = (self.code.k(), self.code.coded_len());
        let bits_at = out.bits.len();
        out.bits.resize(bits_at + units * k, 0);
        let soft_at = out.soft.len();
        if self.soft {
            out.soft.resize(soft_at + units * k, 0.0);
        }
        let mut results = vec![BlockResult::default(); units];
        let gain = match (&self.groups, T::TYPE) {
            (Groups::I16(_), LlrType::F32) => I16_GAIN,
            _ => 1.0,
        };
        let run = Run { code: &self.code, cfg: &self.cfg, tables: &self.tables, scale: gain / self.input_scale, simd: self.simd(), threads: self.threads, batch };
        let soft = self.soft.then(|| &mut out.soft[soft_at..]);
        match &mut self.groups {
            Groups::F32(g) => run.jobs(g, &mut out.bits[bits_at..], soft, &mut results),
            Groups::I16(g) => run.jobs(g, &mut out.bits[bits_at..], soft, &mut results),
        }
        let with_crc = matches!(self.cfg.early_stop, EarlyStop::Crc24A | EarlyStop::Crc24B);
        out.reports.extend(results.iter().map(|r| UnitReport { bits: k, iterations: r.iterations, blocks: 1, check: if with_crc { r.check } else { None }, consumed: n }));
        Ok(())
    }
}

/// The best level for the lane loops of `precision`. `f32` stops at AVX2:
/// with AVX-512, LLVM turns its lane transposes into gathers and scatters
/// (1920 in the function), microcoded on AMD EPYC, where the 512-bit build
/// ran at 3.5 Mb/s per core against AVX2's 5.7. `i16` takes AVX-512 (21.3
/// Mb/s per core against AVX2's 10.1; K = 6144, 8 iterations, BENCHMARKS.md).
fn default_simd(precision: Precision) -> SimdLevel {
    match (SimdLevel::detect(), precision) {
        (SimdLevel::Avx512, Precision::F32) => SimdLevel::Avx2,
        (level, _) => level,
    }
}

/// What every thread of one batch reads.
struct Run<'a, 'b, T: Llr> {
    code: &'a TurboCode,
    cfg: &'a DecoderConfig,
    tables: &'a Tables,
    /// Factor on the loaded LLRs.
    scale: f32,
    simd: SimdLevel,
    threads: usize,
    batch: &'a Batch<'b, T>,
}

impl<T: Llr> Run<'_, '_, T> {
    /// Decode the batch in groups of L blocks, in up to `threads` tasks on rayon's threads
    /// (making the groups' scratch as needed), into `bits`, `soft` and `results`.
    fn jobs<M: Metric, const L: usize>(&self, groups: &mut Vec<Group<M, L>>, bits: &mut [u8], soft: Option<&mut [f32]>, results: &mut [BlockResult]) {
        let (k, n) = (self.code.k(), self.code.coded_len());
        let mut soft = soft.map(|s| s.chunks_mut(L * k)).into_iter().flatten();
        let mut jobs: Vec<Job<'_>> = bits
            .chunks_mut(L * k)
            .zip(results.chunks_mut(L))
            .enumerate()
            .map(|(g, (bits, results))| Job { first: g * L, bits, soft: soft.next(), results })
            .collect();
        let per_thread = jobs.len().div_ceil(self.threads).max(1);
        let workers = jobs.len().div_ceil(per_thread);
        while groups.len() < workers {
            groups.push(Group::new(self.code, self.cfg));
        }
        // On rayon's threads, as the Viterbi decoder (`CpuViterbi`), not
        // threads spawned for every batch.
        rayon::scope(|s| {
            for (mine, group) in jobs.chunks_mut(per_thread).zip(groups.iter_mut()) {
                s.spawn(move |_| {
                    let mut llrs: Vec<Vec<f32>> = (0..L).map(|_| Vec::with_capacity(n)).collect();
                    for job in mine {
                        let lanes = job.results.len();
                        for (l, v) in llrs.iter_mut().take(lanes).enumerate() {
                            load(self.batch.unit(job.first + l), self.scale, v);
                        }
                        let views: Vec<&[f32]> = llrs[..lanes].iter().map(|v| &v[..]).collect();
                        let mut soft = job.soft.as_deref_mut().map(|s| s.chunks_mut(k));
                        let mut outs: Vec<BlockOut<'_>> =
                            job.bits.chunks_mut(k).map(|bits| BlockOut { bits, soft: soft.as_mut().and_then(Iterator::next) }).collect();
                        let r = group.decode(self.simd, self.code, self.tables, self.cfg, &views, &mut outs);
                        job.results.copy_from_slice(&r[..lanes]);
                    }
                });
            }
        });
    }
}

/// One group of up to L blocks and where its results go.
struct Job<'a> {
    /// Its first unit in the batch.
    first: usize,
    bits: &'a mut [u8],
    soft: Option<&'a mut [f32]>,
    results: &'a mut [BlockResult],
}

/// `unit` as `f32` LLRs times `scale`, into `out`.
fn load<T: Llr>(unit: &[T], scale: f32, out: &mut Vec<f32>) {
    out.clear();
    out.extend(unit.iter().map(|&x| x.to_f32() * scale));
}

impl<T: Llr> BatchDecoder<T> for CpuTurbo<T> {
    fn shapes(&self) -> &[UnitShape] {
        &self.shape
    }

    fn limit(&self) -> BatchLimit {
        BatchLimit { units: self.batch_units, items: self.batch_units * self.shape[0].items }
    }

    fn depth(&self) -> usize {
        1
    }

    fn submit(&mut self, batch: &Batch<'_, T>) -> CodeResult<()> {
        let mut out = Decoded::default();
        self.decode_batch(batch, &mut out)?;
        self.done.push_back(out);
        Ok(())
    }

    fn collect(&mut self, out: &mut Decoded) -> CodeResult<bool> {
        let Some(d) = self.done.pop_front() else { return Ok(false) };
        out.bits.extend_from_slice(&d.bits);
        out.soft.extend_from_slice(&d.soft);
        out.reports.extend_from_slice(&d.reports);
        Ok(true)
    }

    fn in_flight(&self) -> usize {
        self.done.len()
    }

    fn describe(&self) -> String {
        let lanes = match self.groups {
            Groups::F32(_) => format!("{LANES} f32 lanes"),
            Groups::I16(_) => format!("{LANES_I16} i16 lanes"),
        };
        format!("cpu ({}, {} LLRs, {lanes}, {}), {}, {}", crate::codes::words::count_of(self.threads as u64, "thread"), T::NAME, self.simd(), self.code.describe(), self.cfg.describe())
    }

    fn gives_soft(&self) -> bool {
        self.soft
    }
}
