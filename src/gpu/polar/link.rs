//! The polar link simulated on the device: counter-based information bits,
//! the polar encoder and BPSK over AWGN (`kernels/polar_link.cu`), the GPU
//! BP decoder on the device-made LLRs, and the error count
//! (`kernels/link.cu`); only the counts, the iterations and the detected
//! errors come back, summed.
//!
//! Codeword f carries information bits f·K .. (f+1)·K and noise samples
//! f·N .. (f+1)·N, as the host link sends them, so the link is the device
//! twin of [`PolarLink::with_counter_bits`](crate::codes::polar::PolarLink::with_counter_bits)
//! decoding by the CPU's `i8` BP model: same bits, noise, LLRs, decoded bits
//! (the GPU decoder is that model bit for bit) and counts. Bare codewords
//! only, without a CRC or parity-check bits (which the device does not
//! make), decoded by BP.

use super::GpuPolar;
use crate::codes::llr::{Llr, LlrType};
use crate::codes::polar::{Algorithm, BpConfig, EarlyStop, PolarChain, PolarFrames, PolarSpec};
use crate::codes::sim::Tally;
use crate::gpu::compile::{compile_cubin, kernels};
use crate::gpu::device::{context, cuda};
use crate::gpu::link::{CountSlot, DecodedTiles, LinkKernels, PointChannel, UnitBatches, UnitLink, device_link_line, launch};
use crate::gpu::memory::{DeviceBuf, Event, PinnedBuf};
use crate::gpu::pipeline::PipelineOptions;
use cudarc::driver::{CudaFunction, result, sys};
use std::ffi::c_void;

/// One batch slot: its counts, the sums of its reports, and the event that
/// says they are home.
struct Slot {
    count: CountSlot,
    /// Iterations and detected errors of the codewords counted.
    sums: DeviceBuf,
    host: PinnedBuf<u64>,
    done: Event,
    /// The decoder's status words of the batch.
    status: sys::CUdeviceptr,
    /// Codewords of the batch in the counted range.
    in_range: usize,
}

/// The polar link of bare codewords on a GPU, `T` LLRs at the decoder
/// (see the module documentation).
///
/// # Example
/// ```no_run
/// use gpufec::codes::polar::PolarSettings;
/// use gpufec::codes::settings::Settings;
/// use gpufec::codes::sim::{Link, StopRule, run_point};
/// use gpufec::gpu::DevicePolarLink;
/// use std::sync::atomic::AtomicBool;
/// let chain = PolarSettings { n: Some(1024), k: Some(512), ..Default::default() }.resolve().unwrap();
/// let mut link = DevicePolarLink::<i8>::new(&chain, 0).unwrap();
/// let stop = StopRule { max_bits: 1 << 30, max_errors: 1000 };
/// let p = run_point(&mut link, 3.0, 1, stop, &AtomicBool::new(false), std::time::Duration::from_secs(1), |_| {}).unwrap();
/// assert!(p.bits > 0);
/// ```
pub type DevicePolarLink<T> = UnitLink<PolarBatches<T>>;

/// The batches of [`DevicePolarLink`]: the decoder, the channel kernel and
/// the slots' counts.
pub struct PolarBatches<T: Llr> {
    spec: PolarSpec,
    g_stop: bool,
    decoder: GpuPolar<T>,
    llrs: CudaFunction,
    reports: CudaFunction,
    common: LinkKernels,
    slots: Vec<Slot>,
}

/// The code and BP configuration of `chain` if the device link simulates
/// it, else why not (checked before any device is touched).
fn device_link_code(chain: &PolarChain) -> anyhow::Result<(PolarSpec, BpConfig)> {
    let PolarFrames::Codewords(spec) = chain.frames() else {
        anyhow::bail!("the device link sends bare codewords; 5G messages (--e) run on the host");
    };
    let Algorithm::Bp(cfg) = chain.algorithm() else {
        anyhow::bail!("the device link decodes BP on the GPU; {} runs on the host", chain.algorithm().describe());
    };
    check_spec(spec)?;
    Ok((spec.clone(), cfg))
}

/// Whether the device encoder makes `spec`'s codewords.
fn check_spec(spec: &PolarSpec) -> anyhow::Result<()> {
    anyhow::ensure!(spec.check().is_none(), "the device link does not attach a CRC; a code with a CRC runs on the host");
    anyhow::ensure!(spec.code().parity().is_empty(), "the device link does not make parity-check bits; such a code runs on the host");
    Ok(())
}

impl<T: Llr> DevicePolarLink<T> {
    /// The device link of `chain` on GPU `device`: bare codewords without a
    /// CRC or parity-check bits, decoded by BP within [`GpuPolar`]'s limits.
    pub fn new(chain: &PolarChain, device: usize) -> anyhow::Result<Self> {
        let (spec, cfg) = device_link_code(chain)?;
        Self::of_spec(spec, cfg, device)
    }

    /// The device link of `spec`'s codewords (systematic or not; no CRC or
    /// parity-check bits) decoded by BP as `cfg` says, on GPU `device`.
    pub fn of_spec(spec: PolarSpec, cfg: BpConfig, device: usize) -> anyhow::Result<Self> {
        PolarBatches::new(spec, cfg, device).map(UnitLink::of)
    }
}

impl<T: Llr> PolarBatches<T> {
    fn new(spec: PolarSpec, cfg: BpConfig, device: usize) -> anyhow::Result<Self> {
        check_spec(&spec)?;
        let pipeline = PipelineOptions { device, ..Default::default() };
        let decoder = GpuPolar::<T>::new(spec.clone(), cfg, false, &pipeline)?;
        let ctx = context(device)?;
        let mut f = kernels(&ctx, "polar_link.cu", &["polar_link_llrs", "polar_link_reports"], &llr_defines::<T>(&spec))?.into_iter();
        let (llrs, reports) = (f.next().expect("two kernels"), f.next().expect("two kernels"));
        let common = LinkKernels::new(&ctx)?;
        let codewords = decoder.batch_units();
        let info_words = (codewords * spec.payload_len() + 512) / 32 + 2;
        let slots = (0..decoder.slots())
            .map(|_| {
                Ok(Slot {
                    count: CountSlot::new(&ctx, info_words, codewords + 2)?,
                    sums: DeviceBuf::new(&ctx, 2 * 8)?,
                    host: PinnedBuf::new(&ctx, 2, false)?,
                    done: Event::new(&ctx)?,
                    status: 0,
                    in_range: 0,
                })
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        Ok(Self { spec, g_stop: cfg.early_stop == EarlyStop::GMatrix, decoder, llrs, reports, common, slots })
    }
}

impl<T: Llr> UnitBatches for PolarBatches<T> {
    fn unit_bits(&self) -> usize {
        self.spec.payload_len()
    }

    fn rate(&self) -> f64 {
        self.spec.rate()
    }

    fn batch_units(&self) -> usize {
        self.decoder.batch_units()
    }

    fn slots(&self) -> usize {
        self.slots.len()
    }

    fn queue(&mut self, i: usize, ch: &PointChannel, first: i64, codewords: usize, a: i64, b: i64) -> anyhow::Result<()> {
        let (k, n) = (self.spec.payload_len(), self.spec.n());
        let (llrs, reports, common) = (&self.llrs, &self.reports, &self.common);
        let (tables, words, g_stop) = (self.decoder.tables_ptr(), self.decoder.out_words(), u32::from(self.g_stop));
        let slot = &mut self.slots[i];
        slot.in_range = ((b - a) as usize).div_ceil(k);
        self.decoder.resident(i, |s, buffers, decode| {
            let k64 = k as i64;
            let info_first = slot.count.bits(common, s, first * k64, (first + codewords as i64) * k64, ch.bits_key)?;
            let (mut out, mut pitch, mut count, mut firstv, mut info, mut info_firstv, mut tablesv) =
                (buffers.input.ptr(), n as u64, codewords as u32, first, slot.count.info_ptr(), info_first, tables);
            let ([mut k0, mut k1], mut sigma, mut gain, mut scale) = (ch.noise_key, ch.sigma, ch.gain, ch.scale);
            let mut p: [*mut c_void; 12] = [
                (&mut out as *mut sys::CUdeviceptr).cast(),
                (&mut pitch as *mut u64).cast(),
                (&mut count as *mut u32).cast(),
                (&mut firstv as *mut i64).cast(),
                (&mut info as *mut sys::CUdeviceptr).cast(),
                (&mut info_firstv as *mut i64).cast(),
                (&mut tablesv as *mut sys::CUdeviceptr).cast(),
                (&mut k0 as *mut u32).cast(),
                (&mut k1 as *mut u32).cast(),
                (&mut sigma as *mut f32).cast(),
                (&mut gain as *mut f32).cast(),
                (&mut scale as *mut f32).cast(),
            ];
            // SAFETY: polar_link_llrs' signature; the slot's input holds a
            // batch of N-LLR codewords, the information words cover them,
            // the tables are the decoder's.
            unsafe { result::launch_kernel(llrs.cu_function(), (codewords as u32, 1, 1), (link_threads(n), 1, 1), 0, s, &mut p) }
                .map_err(cuda("polar channel kernel launch"))?;
            decode(codewords)?;
            let dec = DecodedTiles { ptr: buffers.output.ptr(), tiles: codewords, f: k, words, first_bit: first * k64 };
            slot.count.count(common, s, dec, a, b, k)?;
            slot.status = buffers.status.ok_or_else(|| anyhow::anyhow!("polar slot without status words"))?.ptr();
            // SAFETY: two u64 sums this slot owns.
            unsafe { result::memset_d8_async(slot.sums.ptr(), 0, 16, s) }.map_err(cuda("cuMemsetD8Async"))?;
            let (mut counts, mut statusv, mut in_range, mut g, mut sums) = (slot.count.counts_ptr(), slot.status, slot.in_range as u32, g_stop, slot.sums.ptr());
            let mut p: [*mut c_void; 5] = [
                (&mut counts as *mut sys::CUdeviceptr).cast(),
                (&mut statusv as *mut sys::CUdeviceptr).cast(),
                (&mut in_range as *mut u32).cast(),
                (&mut g as *mut u32).cast(),
                (&mut sums as *mut sys::CUdeviceptr).cast(),
            ];
            // SAFETY: polar_link_reports' signature: `in_range` counts (one a
            // counted codeword, from the first) and status words, two sums.
            unsafe { launch(reports, slot.in_range as u64, s, &mut p, "polar reports kernel") }?;
            // SAFETY: two u64 into pinned memory this slot owns; read only after `done`.
            unsafe { result::memcpy_dtoh_async(slot.host.as_mut_slice(), slot.sums.ptr(), s) }.map_err(cuda("cuMemcpyDtoHAsync"))?;
            slot.done.record(s)
        })
    }

    /// With the units, iterations and detected errors of the codewords counted.
    fn collect(&mut self, i: usize, tally: &mut Tally) -> anyhow::Result<()> {
        let k = self.spec.payload_len() as u64;
        let before = tally.point().bits;
        let slot = &mut self.slots[i];
        slot.done.wait()?;
        slot.count.collect(tally)?;
        let counted = tally.point().bits - before;
        // A codeword is a unit once any of its bits was counted, as the host
        // link counts it, and its errors are detected only if counted whole.
        let (units, whole) = (counted.div_ceil(k) as usize, (counted / k) as usize);
        if units == slot.in_range && whole == units {
            let h = slot.host.as_slice();
            tally.count_unit_sums(units as u64, h[0], h[1]);
            return Ok(());
        }
        // A stop rule fell inside the batch: the sums cover codewords the
        // tally did not count, so add up those it did from every codeword's.
        let (mut counts, mut status) = (vec![0u32; units], vec![0u32; units]);
        if units > 0 {
            // SAFETY: `units` ≤ the batch's counts and status words, written by the finished batch.
            unsafe {
                result::memcpy_dtoh_sync(&mut counts, slot.count.counts_ptr()).map_err(cuda("cuMemcpyDtoH"))?;
                result::memcpy_dtoh_sync(&mut status, slot.status).map_err(cuda("cuMemcpyDtoH"))?;
            }
        }
        let iterations = status.iter().map(|&st| u64::from(st & 0xffff)).sum();
        let detected = if self.g_stop { counts[..whole].iter().zip(&status).filter(|&(&e, &st)| e > 0 && (st >> 16) & 1 == 0).count() as u64 } else { 0 };
        tally.count_unit_sums(units as u64, iterations, detected);
        Ok(())
    }

    fn wait(&self, i: usize) -> anyhow::Result<()> {
        self.slots[i].done.wait()
    }

    fn describe(&self) -> String {
        device_link_line(&crate::codes::decode::BatchDecoder::describe(&self.decoder), "polar encoder", T::NAME)
    }
}

/// Threads of the channel kernel's CTA (one codeword each): a thread per
/// four LLRs (one Philox block's normals), from a warp to 256.
fn link_threads(n: usize) -> u32 {
    (n / 4).clamp(32, 256) as u32
}

/// The channel kernel's constants: the code's sizes and kind, the LLR type.
fn llr_defines<T: Llr>(spec: &PolarSpec) -> Vec<(String, String)> {
    let n = spec.n();
    [
        ("PN", n),
        ("PK", spec.payload_len()),
        ("PUW", n.div_ceil(32)),
        ("PSYS", usize::from(spec.systematic())),
        ("PLT", link_threads(n) as usize),
        ("LLR_F32", usize::from(T::TYPE == LlrType::F32)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// Compile the device link's kernels for `spec`'s codewords with `T` LLRs
/// for architecture `arch` (e.g. `sm_90`) with NVRTC alone, no GPU needed:
/// lets a machine without a GPU check that they build.
pub fn compile_polar_link_kernel<T: Llr>(spec: &PolarSpec, arch: &str) -> anyhow::Result<()> {
    check_spec(spec)?;
    compile_cubin("polar_link.cu", arch, &llr_defines::<T>(spec)).map(drop)
}
