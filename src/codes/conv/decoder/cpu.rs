//! Multi-threaded CPU Viterbi decoder: tiles or frames spread over all cores
//! on rayon's threads, each task with its own reusable scratch memory, the
//! forward pass on the fastest SIMD level the CPU has.

use crate::codes::conv::code::Trellis;
use crate::codes::conv::decoder::config::ViterbiMode;
use crate::codes::conv::decoder::llr::ViterbiLlr;
use crate::codes::conv::decoder::scalar;
use crate::codes::conv::decoder::simd::{Kernel, Workspace};
use crate::codes::simd::SimdLevel;
use crate::codes::threads::decoder_threads;
use crate::codes::decode::{Batch, BatchDecoder, BatchLimit, Decoded, UnitReport, UnitShape, check_batch};
use crate::codes::error::{CodeError, CodeResult};
use std::collections::VecDeque;
use std::sync::Arc;

/// Default units per batch: enough to keep every core busy for a millisecond
/// or so, small enough to keep latency low.
pub const DEFAULT_BATCH_UNITS: usize = 256;

/// Pieces of a batch per decoder thread, handed to whichever thread is free.
const PIECES_PER_THREAD: usize = 8;

/// Most LLRs in one batch (whatever the units per batch), so that a batch of
/// long units does not hold gigabytes: 2^26 LLRs, 256 MiB of `f32`.
pub const MAX_BATCH_LLRS: usize = 1 << 26;

/// CPU Viterbi decoder over tiles ([`ViterbiMode::Tiled`]) or whole frames
/// ([`ViterbiMode::Frame`]).
///
/// The forward pass runs on [`SimdLevel::detect`]'s level unless
/// [`with_simd`](Self::with_simd) says otherwise; every level gives the bits of
/// the scalar reference model.
///
/// # Example
/// ```
/// use gpufec::codes::conv::{ConvCode, CpuViterbi, FrameConfig, Trellis, ViterbiMode};
/// use gpufec::codes::BatchDecoder;
/// use std::sync::Arc;
/// let t = Arc::new(Trellis::new(&ConvCode::k7_171_133()));
/// let mode = ViterbiMode::Frame(FrameConfig::new(10, true).unwrap());
/// let mut dec = CpuViterbi::<f32>::new(t, mode, 1).unwrap();
/// let mut bits = Vec::new();
/// dec.decode_all(&[1.0; 32], &mut bits).unwrap();   // the all-zero codeword
/// assert_eq!(bits, vec![0; 10]);
/// ```
pub struct CpuViterbi<T: ViterbiLlr> {
    trellis: Arc<Trellis>,
    mode: ViterbiMode,
    shape: [UnitShape; 1],
    record: Vec<usize>,
    kernel: Kernel,
    scratch: Vec<Workspace<T::Metric>>,
    batch_units: usize,
    /// Bits and unit count of each decoded, uncollected batch.
    done: VecDeque<(Vec<u8>, usize)>,
    spare: Vec<Vec<u8>>,
}

impl<T: ViterbiLlr> CpuViterbi<T> {
    /// Decoder running up to `threads` tasks at once on rayon's threads (0 =
    /// all available cores, at most [`MAX_THREADS`](crate::codes::threads::MAX_THREADS)); with 1 it decodes on
    /// the caller's thread.
    pub fn new(trellis: Arc<Trellis>, mode: ViterbiMode, threads: usize) -> CodeResult<Self> {
        let threads = decoder_threads(threads)?;
        let record = match mode {
            ViterbiMode::Tiled(tile) => scalar::tile_record_points(&tile),
            ViterbiMode::Frame(_) => Vec::new(),
        };
        let kernel = Kernel::new(&trellis, SimdLevel::detect())?;
        let shape = UnitShape::exact(mode.unit_stages(trellis.k()) * trellis.n(), mode.unit_bits());
        Ok(Self {
            trellis,
            mode,
            shape: [shape],
            record,
            kernel,
            scratch: (0..threads).map(|_| Workspace::default()).collect(),
            batch_units: DEFAULT_BATCH_UNITS,
            done: VecDeque::new(),
            spare: Vec::new(),
        })
    }

    /// Run the forward pass at `level` (for tests and benchmarks); an error if
    /// this CPU cannot.
    pub fn with_simd(mut self, level: SimdLevel) -> CodeResult<Self> {
        self.kernel = Kernel::new(&self.trellis, level)?;
        Ok(self)
    }

    /// The SIMD level the forward pass runs at.
    pub fn simd(&self) -> SimdLevel {
        self.kernel.level()
    }

    /// Set the units per batch (at least 1).
    pub fn with_batch_units(mut self, units: usize) -> Self {
        self.batch_units = units.max(1);
        self
    }

    /// Tasks a batch is decoded by (at most rayon's threads run at once).
    pub fn threads(&self) -> usize {
        self.scratch.len()
    }

    /// What this decoder decodes.
    pub fn mode(&self) -> &ViterbiMode {
        &self.mode
    }

    /// Decode the units of `batch` into `out` (exactly units × bits per unit long).
    pub fn decode_units(&mut self, batch: &Batch<'_, T>, out: &mut [u8]) -> CodeResult<()> {
        let shape = self.shape[0];
        let units = check_batch(batch, &self.shape, BatchLimit { units: usize::MAX, items: usize::MAX })?;
        if out.len() != units * shape.bits {
            return Err(CodeError::LengthMismatch(format!(
                "{units} units decode to {} bits, not the {} asked for",
                units * shape.bits,
                out.len()
            )));
        }
        batch.check_finite(0..units)?;
        // The pieces a thread may take: tiles (each independent) or frames.
        let (jobs, job_bits) = match self.mode {
            ViterbiMode::Tiled(t) => (units * t.group, t.f),
            ViterbiMode::Frame(f) => (units, f.frame),
        };
        // Pieces of a few jobs each, taken by whichever thread is free: a
        // thread whose core is shared with other blocks of a flowgraph then
        // takes fewer, instead of leaving the other core idle at the end of
        // every batch while it finishes a fixed half (the 2-core machine's
        // AWGN flowgraph: BENCHMARKS.md, tenth session).
        let threads = self.scratch.len();
        let per_piece = jobs.div_ceil(PIECES_PER_THREAD * threads).max(1);
        let (trellis, mode, record, kernel) = (&*self.trellis, &self.mode, &self.record[..], &self.kernel);
        let n = trellis.n();
        let pieces = std::sync::Mutex::new(out.chunks_mut(per_piece * job_bits).enumerate());
        let run = |ws: &mut Workspace<T::Metric>| {
            // The LLRs of a job: one tile of a unit, or one frame.
            let job_llrs = |job: usize| match mode {
                ViterbiMode::Tiled(tile) => {
                    let (unit, k) = (job / tile.group, job % tile.group);
                    let at = k * tile.f * n;
                    &batch.unit(unit)[at..at + tile.stages() * n]
                }
                ViterbiMode::Frame(_) => batch.unit(job),
            };
            loop {
                let next = pieces.lock().unwrap_or_else(std::sync::PoisonError::into_inner).next();
                let Some((piece, outp)) = next else { break };
                let mut jobs = outp.chunks_mut(job_bits).enumerate().map(|(i, bits)| (job_llrs(piece * per_piece + i), bits));
                // Two jobs at a time (see `simd::STREAMS`).
                while let Some((a, bits_a)) = jobs.next() {
                    match jobs.next() {
                        Some((b, bits_b)) => kernel.decode(trellis, mode, record, [a, b], ws, [bits_a, bits_b]),
                        None => kernel.decode(trellis, mode, record, [a], ws, [bits_a]),
                    }
                }
            }
        };
        if jobs <= per_piece || threads == 1 {
            run(&mut self.scratch[0]);
        } else {
            // On rayon's threads, which live as long as the process: threads
            // spawned for every batch cost the 2-core machine 8 % of the
            // decoder's own `bench` figure and 9 % of the AWGN flowgraph
            // (BENCHMARKS.md, eleventh session). A flowgraph's channel shares
            // the pool, so the two never run more threads than cores.
            rayon::scope(|s| {
                let run = &run;
                for ws in self.scratch.iter_mut().take(jobs.div_ceil(per_piece)) {
                    s.spawn(move |_| run(ws));
                }
            });
        }
        Ok(())
    }
}

impl<T: ViterbiLlr> BatchDecoder<T> for CpuViterbi<T> {
    fn shapes(&self) -> &[UnitShape] {
        &self.shape
    }

    fn limit(&self) -> BatchLimit {
        let items = self.shape[0].items;
        let units = self.batch_units.min(MAX_BATCH_LLRS / items).max(1);
        BatchLimit { units, items: units * items }
    }

    fn depth(&self) -> usize {
        1
    }

    fn submit(&mut self, batch: &Batch<'_, T>) -> CodeResult<()> {
        let units = check_batch(batch, &self.shape, self.limit())?;
        let mut out = self.spare.pop().unwrap_or_default();
        out.resize(units * self.shape[0].bits, 0);
        if let Err(e) = self.decode_units(batch, &mut out) {
            self.spare.push(out);
            return Err(e);
        }
        self.done.push_back((out, units));
        Ok(())
    }

    fn collect(&mut self, out: &mut Decoded) -> CodeResult<bool> {
        let Some((bits, units)) = self.done.pop_front() else { return Ok(false) };
        out.bits.extend_from_slice(&bits);
        let shape = self.shape[0];
        out.reports.extend(std::iter::repeat_n(UnitReport { bits: shape.bits, iterations: 0, blocks: 1, check: None, consumed: shape.items }, units));
        self.spare.push(bits);
        Ok(true)
    }

    fn in_flight(&self) -> usize {
        self.done.len()
    }

    fn describe(&self) -> String {
        format!("cpu ({}, {} LLRs, {})", crate::codes::words::count_of(self.threads() as u64, "thread"), T::NAME, self.simd())
    }
}
