//! [`CpuPolar`]: any of the CPU polar decoders as a [`BatchDecoder`], its
//! codewords spread over all cores on rayon's threads, each thread with its
//! own scratch.

use super::bp::{Bp, BpResult, F32Arith, I8Arith};
use super::plan::Plan;
use super::sc::{LANES, ScLanes};
use super::scl::ListDecoder;
use super::{Algorithm, BpPrecision, i8_model_f32_quantizer};
use crate::codes::polar::finished::Finished;
use crate::codes::decode::{Batch, BatchDecoder, BatchLimit, Decoded, UnitReport, UnitShape, check_batch};
use crate::codes::error::CodeResult;
use crate::codes::llr::Llr;
use crate::codes::polar::spec::PolarSpec;
use crate::codes::polar::transform::words;
use crate::codes::simd::SimdLevel;
use crate::codes::threads::decoder_threads;
use std::sync::{Arc, Mutex, PoisonError};

/// Default codewords per batch.
pub const DEFAULT_BATCH_CODEWORDS: usize = 1024;

/// Pieces of a batch per decoder thread, handed to whichever thread is free
/// (BP's codewords take as many iterations as they need).
const PIECES_PER_THREAD: usize = 8;

/// One thread's scratch, of the decoder's algorithm.
enum Scratch {
    Sc(ScLanes),
    Scl(Box<ListDecoder>),
    BpF32(Bp<F32Arith>),
    BpI8(Bp<I8Arith>),
}

/// A CPU polar decoder: units of N LLRs (`f32`, or `i8` in quantized
/// units: min-sum does not depend on their scale) to the payload bits of
/// a [`PolarSpec`]; each unit's report has the CRC's verdict (or, for BP
/// with the G-matrix stop and no CRC, whether û·G = x̂ held) and BP's
/// iterations. BP gives soft output when asked.
///
/// # Example
/// ```
/// use gpufec::codes::BatchDecoder;
/// use gpufec::codes::polar::{Algorithm, Construction, CpuPolar, PolarSpec};
/// use std::sync::Arc;
/// let spec = PolarSpec::plain(Arc::new(Construction::Nr.build(128, 64).unwrap()));
/// let mut dec = CpuPolar::<f32>::new(spec, Algorithm::Sc, 1).unwrap();
/// let mut bits = Vec::new();
/// dec.decode_all(&[3.0; 128], &mut bits).unwrap(); // the all-zero codeword
/// assert_eq!(bits, vec![0; 64]);
/// ```
pub struct CpuPolar<T: Llr> {
    spec: Arc<PolarSpec>,
    plan: Arc<Plan>,
    algorithm: Algorithm,
    shape: [UnitShape; 1],
    threads: usize,
    scratch: Vec<Scratch>,
    soft: bool,
    simd: SimdLevel,
    batch_units: usize,
    done: Finished,
    _llr: std::marker::PhantomData<T>,
}

impl<T: Llr> CpuPolar<T> {
    /// A decoder of `spec`'s codewords by `algorithm` (checked) on
    /// `threads` threads (0: every core, at most
    /// [`MAX_THREADS`](crate::codes::threads::MAX_THREADS)).
    pub fn new(spec: PolarSpec, algorithm: Algorithm, threads: usize) -> CodeResult<Self> {
        algorithm.validate(&spec)?;
        let threads = decoder_threads(threads)?;
        let shape = [UnitShape::exact(spec.n(), spec.payload_len())];
        let plan = Arc::new(Plan::new(spec.code(), true));
        Ok(Self {
            spec: Arc::new(spec),
            plan,
            algorithm,
            shape,
            threads,
            scratch: Vec::new(),
            soft: false,
            simd: SimdLevel::detect(),
            batch_units: DEFAULT_BATCH_CODEWORDS,
            done: Finished::default(),
            _llr: std::marker::PhantomData,
        })
    }

    /// Also give each payload bit's a-posteriori LLR (BP only).
    pub fn with_soft_output(mut self) -> CodeResult<Self> {
        if !matches!(self.algorithm, Algorithm::Bp(_)) {
            return Err(crate::codes::error::CodeError::Unsupported(format!("soft output from {}: only BP gives it", self.algorithm.describe())));
        }
        self.soft = true;
        Ok(self)
    }

    /// Run SC's lane loops at `level` instead of the best this CPU has
    /// (the bits do not change); a level the CPU lacks is refused.
    pub fn with_simd(mut self, level: SimdLevel) -> CodeResult<Self> {
        if !level.is_supported() {
            return Err(crate::codes::error::invalid!("SIMD level {level} is not supported by this CPU"));
        }
        self.simd = level;
        Ok(self)
    }

    /// Set the codewords per batch (at least 1).
    pub fn with_batch_units(mut self, units: usize) -> Self {
        self.batch_units = units.max(1);
        self
    }

    /// Decide no node whole beyond Rate-0: the bit-by-bit SC and SCL the
    /// tests compare the node decisions with.
    #[cfg(test)]
    pub(super) fn unpruned(mut self) -> Self {
        self.plan = Arc::new(Plan::new(self.spec.code(), false));
        self
    }

    /// What it decodes.
    pub fn spec(&self) -> &PolarSpec {
        &self.spec
    }

    /// The algorithm.
    pub fn algorithm(&self) -> Algorithm {
        self.algorithm
    }

    /// Codewords one task decodes together.
    fn group(&self) -> usize {
        match self.algorithm {
            Algorithm::Sc => LANES,
            _ => 1,
        }
    }

    fn new_scratch(&self) -> Scratch {
        let (m, k) = (self.spec.code().m(), self.spec.code().k());
        match self.algorithm {
            Algorithm::Sc => Scratch::Sc(ScLanes::new(m)),
            Algorithm::Scl { list } => Scratch::Scl(Box::new(ListDecoder::new(m, list))),
            Algorithm::Bp(cfg) => match cfg.precision {
                BpPrecision::F32 { alpha } => Scratch::BpF32(Bp::new(F32Arith { alpha }, cfg.iterations, cfg.early_stop, m, k)),
                BpPrecision::I8 => Scratch::BpI8(Bp::new(I8Arith { f32_in: i8_model_f32_quantizer() }, cfg.iterations, cfg.early_stop, m, k)),
            },
        }
    }

    /// Decode `batch` into `out`.
    fn decode_batch(&mut self, batch: &Batch<'_, T>, out: &mut Decoded) -> CodeResult<()> {
        let units = check_batch(batch, &self.shape, self.limit())?;
        batch.check_finite(0..units)?;
        let p = self.spec.payload_len();
        let bits_at = out.bits.len();
        out.bits.resize(bits_at + units * p, 0);
        let soft_at = out.soft.len();
        if self.soft {
            out.soft.resize(soft_at + units * p, 0.0);
        }
        let mut reports = vec![UnitReport { bits: p, iterations: 0, blocks: 1, check: None, consumed: self.spec.n() }; units];
        let group = self.group();
        let groups = units.div_ceil(group);
        let per_piece = groups.div_ceil(PIECES_PER_THREAD * self.threads).max(1) * group;
        let tasks = units.div_ceil(per_piece).min(self.threads);
        while self.scratch.len() < tasks {
            let s = self.new_scratch();
            self.scratch.push(s);
        }
        let mut soft = self.soft.then(|| out.soft[soft_at..].chunks_mut(per_piece * p)).into_iter().flatten();
        let pieces: Vec<Piece<'_>> = out.bits[bits_at..]
            .chunks_mut(per_piece * p)
            .zip(reports.chunks_mut(per_piece))
            .enumerate()
            .map(|(i, (bits, reports))| Piece { first: i * per_piece, bits, soft: soft.next(), reports })
            .collect();
        let pieces = Mutex::new(pieces.into_iter());
        let run = Run { spec: &self.spec, plan: &self.plan, simd: self.simd, batch };
        let work = |scratch: &mut Scratch| {
            loop {
                let next = pieces.lock().unwrap_or_else(PoisonError::into_inner).next();
                let Some(mut piece) = next else { break };
                run.piece(scratch, &mut piece);
            }
        };
        if tasks <= 1 {
            work(&mut self.scratch[0]);
        } else {
            // On rayon's threads, as the other CPU decoders: a flowgraph's
            // other blocks share the pool, so the chain never runs more
            // threads than cores.
            rayon::scope(|s| {
                let work = &work;
                for scratch in self.scratch.iter_mut().take(tasks) {
                    s.spawn(move |_| work(scratch));
                }
            });
        }
        out.reports.extend_from_slice(&reports);
        Ok(())
    }
}

/// A run of consecutive units of a batch and where their results go.
struct Piece<'a> {
    first: usize,
    bits: &'a mut [u8],
    soft: Option<&'a mut [f32]>,
    reports: &'a mut [UnitReport],
}

/// What every thread of one batch reads.
struct Run<'a, 'b, T: Llr> {
    spec: &'a PolarSpec,
    plan: &'a Plan,
    simd: SimdLevel,
    batch: &'a Batch<'b, T>,
}

impl<T: Llr> Run<'_, '_, T> {
    fn piece(&self, scratch: &mut Scratch, piece: &mut Piece<'_>) {
        let (spec, p) = (self.spec, self.spec.payload_len());
        let units = piece.reports.len();
        let mut info = vec![0u8; spec.code().k()];
        let mut soft_info = vec![0f32; spec.code().k()];
        match scratch {
            Scratch::Sc(lanes) => {
                let mut x = vec![vec![0u64; words(spec.n())]; LANES];
                for g in (0..units).step_by(LANES) {
                    let count = (units - g).min(LANES);
                    let llrs: Vec<&[T]> = (0..count).map(|l| self.batch.unit(piece.first + g + l)).collect();
                    lanes.decode(self.simd, self.plan, &llrs, &mut x);
                    for (l, x) in x.iter().enumerate().take(count) {
                        spec.info_of_x(x, &mut info);
                        piece.reports[g + l].check = spec.payload_of(&info, &mut piece.bits[(g + l) * p..(g + l + 1) * p]);
                    }
                }
            }
            Scratch::Scl(list) => {
                let mut x = vec![0u64; words(spec.n())];
                for i in 0..units {
                    let check = list.decode(self.plan, spec, self.batch.unit(piece.first + i), &mut x);
                    spec.info_of_x(&x, &mut info);
                    spec.payload_of(&info, &mut piece.bits[i * p..(i + 1) * p]);
                    piece.reports[i].check = check;
                }
            }
            Scratch::BpF32(bp) => self.bp(bp, piece, &mut info, &mut soft_info),
            Scratch::BpI8(bp) => self.bp(bp, piece, &mut info, &mut soft_info),
        }
    }

    fn bp<A: super::bp::Arith>(&self, bp: &mut Bp<A>, piece: &mut Piece<'_>, info: &mut [u8], soft_info: &mut [f32]) {
        let (spec, p) = (self.spec, self.spec.payload_len());
        let mut u = vec![0u64; words(spec.n())];
        for i in 0..piece.reports.len() {
            let want_soft = piece.soft.is_some();
            let BpResult { iterations, check } = bp.decode(spec, self.batch.unit(piece.first + i), &mut u, want_soft.then_some(&mut *soft_info));
            spec.info_of_u(&u, info);
            spec.payload_of(info, &mut piece.bits[i * p..(i + 1) * p]);
            if let Some(soft) = piece.soft.as_deref_mut() {
                match spec.check() {
                    Some(c) => c.payload(soft_info, &mut soft[i * p..(i + 1) * p]),
                    None => soft[i * p..(i + 1) * p].copy_from_slice(soft_info),
                }
            }
            piece.reports[i].iterations = iterations;
            piece.reports[i].check = check;
        }
    }
}

impl<T: Llr> BatchDecoder<T> for CpuPolar<T> {
    fn shapes(&self) -> &[UnitShape] {
        &self.shape
    }

    fn limit(&self) -> BatchLimit {
        BatchLimit { units: self.batch_units, items: self.batch_units * self.spec.n() }
    }

    fn depth(&self) -> usize {
        1
    }

    fn submit(&mut self, batch: &Batch<'_, T>) -> CodeResult<()> {
        let mut out = Decoded::default();
        self.decode_batch(batch, &mut out)?;
        self.done.push(out);
        Ok(())
    }

    fn collect(&mut self, out: &mut Decoded) -> CodeResult<bool> {
        Ok(self.done.collect(out))
    }

    fn in_flight(&self) -> usize {
        self.done.len()
    }

    fn describe(&self) -> String {
        let simd = if self.algorithm == Algorithm::Sc { format!(", {LANES} lanes, {}", self.simd) } else { String::new() };
        format!("cpu ({}, {} LLRs{simd}), {}, {}", crate::codes::words::count_of(self.threads as u64, "thread"), T::NAME, self.spec.describe(), self.algorithm.describe())
    }

    fn gives_soft(&self) -> bool {
        self.soft
    }
}
