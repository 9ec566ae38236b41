//! The turbo link simulated on the device: counter-based information bits,
//! the turbo encoder and BPSK over AWGN (`kernels/turbo_link.cu`), the GPU
//! turbo decoder on the device-made layouts, and the error count
//! (`kernels/link.cu`); only the counts and the blocks' iterations come back.
//!
//! Code block b holds information bits b·K .. (b+1)·K and noise samples
//! b·n .. (b+1)·n (n = 3K + 4m), as the host link sends them, so the link is
//! the device twin of [`TurboLink::with_counter_bits`](crate::codes::turbo::TurboLink::with_counter_bits)
//! with the decoder configuration the GPU takes: same bits, noise, LLRs,
//! decoded bits (the GPU decoder is the CPU sub-block model bit for bit) and
//! counts. Each chunk sends whole blocks, as the host link does.

use super::GpuTurbo;
use crate::codes::decode::UnitReport;
use crate::codes::llr::{Llr, LlrType};
use crate::codes::sim::Tally;
use crate::codes::turbo::{EarlyStop, MaxStar, Sent, TurboChain, TurboCode};
use crate::gpu::compile::kernel;
use crate::gpu::device::{context, cuda};
use crate::gpu::link::{CountSlot, DecodedTiles, LinkKernels, PointChannel, UnitBatches, UnitLink, device_link_line};
use crate::gpu::memory::PinnedBuf;
use crate::gpu::pipeline::PipelineOptions;
use cudarc::driver::{CudaFunction, result, sys};
use std::ffi::c_void;

/// Threads of the channel kernel's CTA (one CTA per code block); `LINK_NT` there.
const LINK_THREADS: u32 = 256;

/// One batch slot's counts and the blocks' status words.
struct Slot {
    count: CountSlot,
    status: PinnedBuf<u32>,
    /// First block and blocks of the batch in the slot.
    first: i64,
    blocks: usize,
}

/// The turbo link of a chain of code blocks on a GPU, `T` LLRs at the
/// decoder (see the module documentation).
pub type DeviceTurboLink<T> = UnitLink<TurboBatches<T>>;

/// The batches of [`DeviceTurboLink`]: the decoder, the channel kernel and
/// the slots' counts.
pub struct TurboBatches<T: Llr> {
    code: TurboCode,
    decoder: GpuTurbo<T>,
    llrs: CudaFunction,
    common: LinkKernels,
    slots: Vec<Slot>,
}

impl<T: Llr> DeviceTurboLink<T> {
    /// The device link of `chain` (code blocks without a CRC stop) on GPU `device`.
    pub fn new(chain: &TurboChain, device: usize) -> anyhow::Result<Self> {
        TurboBatches::new(chain, device).map(UnitLink::of)
    }
}

impl<T: Llr> TurboBatches<T> {
    fn new(chain: &TurboChain, device: usize) -> anyhow::Result<Self> {
        let Sent::Blocks(code) = chain.sent() else {
            anyhow::bail!("the device link simulates code blocks; transport blocks run on the host");
        };
        let cfg = chain.config_for(code.k(), true);
        anyhow::ensure!(!matches!(cfg.early_stop, EarlyStop::Crc24A | EarlyStop::Crc24B), "a CRC stop needs transport blocks, which run on the host");
        anyhow::ensure!(
            T::TYPE == LlrType::F32 || cfg.max_star == MaxStar::Max,
            "{} on i8 LLRs needs the quantizer's scale, which changes with Eb/N0 in a curve: decode f32 LLRs, or max-log-MAP",
            cfg.max_star.name()
        );
        let pipeline = PipelineOptions { device, ..Default::default() };
        let decoder = GpuTurbo::<T>::new(code.clone(), cfg, 1.0, &pipeline)?;
        let ctx = context(device)?;
        let llrs = kernel(&ctx, "turbo_link.cu", "turbo_link_llrs", &llr_defines::<T>(code))?;
        let common = LinkKernels::new(&ctx)?;
        let blocks = decoder.batch_units();
        let info_words = (blocks * code.k() + 512) / 32 + 2;
        let slots = (0..decoder.slots())
            .map(|_| Ok(Slot { count: CountSlot::new(&ctx, info_words, blocks + 2)?, status: PinnedBuf::new(&ctx, blocks, false)?, first: 0, blocks: 0 }))
            .collect::<anyhow::Result<Vec<_>>>()?;
        Ok(Self { code: code.clone(), decoder, llrs, common, slots })
    }
}

impl<T: Llr> UnitBatches for TurboBatches<T> {
    fn unit_bits(&self) -> usize {
        self.code.k()
    }

    fn rate(&self) -> f64 {
        self.code.k() as f64 / self.code.coded_len() as f64
    }

    fn batch_units(&self) -> usize {
        self.decoder.batch_units()
    }

    fn slots(&self) -> usize {
        self.slots.len()
    }

    fn queue(&mut self, i: usize, ch: &PointChannel, first: i64, blocks: usize, a: i64, b: i64) -> anyhow::Result<()> {
        let (k, n) = (self.code.k() as i64, self.code.coded_len());
        let (llrs, common) = (&self.llrs, &self.common);
        let perm = self.decoder.permutation_ptr();
        let words = self.decoder.out_words();
        let slot = &mut self.slots[i];
        slot.first = first;
        slot.blocks = blocks;
        self.decoder.resident(i, |s, buffers, decode| {
            let info_first = slot.count.bits(common, s, first * k, (first + blocks as i64) * k, ch.bits_key)?;
            let (mut out, mut pitch, mut count, mut first_block, mut info, mut info_firstv, mut permv) =
                (buffers.input.ptr(), n as u64, blocks as u32, first, slot.count.info_ptr(), info_first, perm);
            let ([mut k0, mut k1], mut sigma, mut gain, mut scale) = (ch.noise_key, ch.sigma, ch.gain, ch.scale);
            let mut p: [*mut c_void; 12] = [
                (&mut out as *mut sys::CUdeviceptr).cast(),
                (&mut pitch as *mut u64).cast(),
                (&mut count as *mut u32).cast(),
                (&mut first_block as *mut i64).cast(),
                (&mut info as *mut sys::CUdeviceptr).cast(),
                (&mut info_firstv as *mut i64).cast(),
                (&mut permv as *mut sys::CUdeviceptr).cast(),
                (&mut k0 as *mut u32).cast(),
                (&mut k1 as *mut u32).cast(),
                (&mut sigma as *mut f32).cast(),
                (&mut gain as *mut f32).cast(),
                (&mut scale as *mut f32).cast(),
            ];
            // SAFETY: turbo_link_llrs' signature; the slot's input holds a
            // batch of n-LLR layouts, the information words cover the blocks,
            // the interleaver is the decoder's (K words).
            unsafe { result::launch_kernel(llrs.cu_function(), (blocks as u32, 1, 1), (LINK_THREADS, 1, 1), 0, s, &mut p) }.map_err(cuda("turbo channel kernel launch"))?;
            decode(blocks)?;
            let status = buffers.status.ok_or_else(|| anyhow::anyhow!("turbo slot without status words"))?;
            // SAFETY: `blocks` status words into this slot's pinned buffer, read after the count's event.
            unsafe { result::memcpy_dtoh_async(&mut slot.status.as_mut_slice()[..blocks], status.ptr(), s) }.map_err(cuda("cuMemcpyDtoHAsync"))?;
            let dec = DecodedTiles { ptr: buffers.output.ptr(), tiles: blocks, f: k as usize, words, first_bit: first * k };
            slot.count.count(common, s, dec, a, b, k as usize)
        })
    }

    /// With the iterations of the blocks counted.
    fn collect(&mut self, i: usize, tally: &mut Tally) -> anyhow::Result<()> {
        let k = self.code.k() as u64;
        let before = tally.point().bits;
        let slot = &mut self.slots[i];
        slot.count.collect(tally)?;
        // A block is a unit once any of its bits was counted, as the host link counts it.
        let counted = (tally.point().bits - before).div_ceil(k) as usize;
        let reports: Vec<UnitReport> = slot.status.as_slice()[..counted.min(slot.blocks)]
            .iter()
            .map(|&st| UnitReport { bits: k as usize, iterations: st & 0xffff, blocks: 1, check: None, consumed: self.code.coded_len() })
            .collect();
        tally.count_units(&reports);
        Ok(())
    }

    fn wait(&self, i: usize) -> anyhow::Result<()> {
        self.slots[i].count.wait()
    }

    fn describe(&self) -> String {
        device_link_line(&crate::codes::decode::BatchDecoder::describe(&self.decoder), "turbo encoder", T::NAME)
    }
}

/// The channel kernel's constants: the code's trellis tables and layout.
fn llr_defines<T: Llr>(code: &TurboCode) -> Vec<(String, String)> {
    let (t, l) = (code.trellis(), code.layout());
    let list = |v: &mut dyn Iterator<Item = usize>| v.map(|x| x.to_string()).collect::<Vec<_>>().join(",");
    let states = t.states();
    let chunks = encoder_chunks(code);
    let chunk = code.k().div_ceil(chunks);
    vec![
        ("TK".into(), code.k().to_string()),
        ("TM".into(), t.memory().to_string()),
        ("TS".into(), states.to_string()),
        ("TN".into(), code.coded_len().to_string()),
        ("TS1".into(), l.stream_start(1).to_string()),
        ("TS2".into(), l.stream_start(2).to_string()),
        ("TNEXT".into(), list(&mut (0..2 * states).map(|i| t.next(i / 2, i % 2)))),
        ("TPAR".into(), list(&mut (0..2 * states).map(|i| t.parity(i / 2, i % 2) as usize))),
        ("TTAILIN".into(), list(&mut (0..states).map(|s| t.tail_input(s)))),
        ("TTAILPOS".into(), list(&mut (0..4 * t.memory()).map(|j| l.tail(j)))),
        ("NCH".into(), chunks.to_string()),
        ("TZERORUN".into(), list(&mut (0..states).map(|s| (0..chunk).fold(s, |s, _| t.next(s, 0))))),
        ("LLR_F32".into(), usize::from(T::TYPE == LlrType::F32).to_string()),
    ]
}

/// Chunks the device encoder may split a block into: 64 when the trellis is
/// linear over GF(2) (states XOR as the register contents they are, which
/// every RSC code's are), else 1, the serial encoder.
fn encoder_chunks(code: &TurboCode) -> usize {
    let t = code.trellis();
    let s = t.states();
    let linear = (0..s).all(|a| (0..s).all(|b| (0..2).all(|u| (0..2).all(|v| t.next(a ^ b, u ^ v) == t.next(a, u) ^ t.next(b, v)))));
    if linear { 64 } else { 1 }
}

/// Compile the device link's channel kernel for `chain`'s code blocks with
/// `T` LLRs for architecture `arch` with NVRTC alone, no GPU needed.
pub fn compile_turbo_link_kernel<T: Llr>(chain: &TurboChain, arch: &str) -> anyhow::Result<()> {
    let Sent::Blocks(code) = chain.sent() else {
        anyhow::bail!("the device link simulates code blocks");
    };
    crate::gpu::compile::compile_cubin("turbo_link.cu", arch, &llr_defines::<T>(code)).map(drop)
}
