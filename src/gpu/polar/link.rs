//! The polar link simulated on the device: counter-based information bits,
//! the polar encoder with its CRC and parity-check bits, the 5G rate
//! matching and BPSK over AWGN, and at the receiver the rate recovery
//! (`kernels/polar_link.cu`), the GPU BP decoder on the device-made LLRs,
//! the messages read back from the decoded blocks with their checks, and
//! the error count (`kernels/link.cu`); only the counts, the iterations and
//! the detected errors come back, summed.
//!
//! Message f (a bare codeword, or a 5G message of C code blocks) carries
//! information bits f·A .. (f+1)·A and noise samples f·C·E .. (f+1)·C·E
//! (E = N for bare codewords), as the host link sends them, so the link is
//! the device twin of [`PolarLink::with_counter_bits`](crate::codes::polar::PolarLink::with_counter_bits)
//! decoding by the CPU's `i8` BP model (through `NrDecoder` for 5G
//! messages): same bits, noise, LLRs after quantization and rate recovery,
//! decoded bits (the GPU decoder is that model bit for bit) and counts. The
//! kernel's steps follow the host functions named in its header:
//! `NrPolar::blocks_info`, `InfoCheck::attach` (by
//! `InfoCheck::payload_columns`), `PolarSpec::place` and `encode_info`,
//! `RateMatch::select` and `recover`, `Llr::plus`; the tables they read are
//! the host's own ([`RateMatch::map`], [`RateMatch::shortened`], the
//! interleaver of the [`InfoCheck`], the code's positions). Decoded by BP
//! only (SC and SCL run on the host), within [`GpuPolar`]'s limits.

use super::{GpuPolar, check_gpu_decodes};
use crate::codes::llr::{Llr, LlrType};
use crate::codes::polar::nr::RateMatch;
use crate::codes::polar::{Algorithm, BpConfig, EarlyStop, InfoCheck, PolarChain, PolarFrames, PolarSpec};
use crate::codes::sim::Tally;
use crate::gpu::compile::{compile_cubin, kernels};
use crate::gpu::device::{context, cuda};
use crate::gpu::link::{CountSlot, DecodedTiles, LinkKernels, PointChannel, UnitBatches, UnitLink, device_link_line, launch};
use crate::gpu::memory::{DeviceBuf, Event, PinnedBuf};
use crate::gpu::pipeline::PipelineOptions;
use cudarc::driver::{CudaFunction, result, sys};
use std::ffi::c_void;

/// One batch slot: its counts, the messages read back, the sums of their
/// reports, and the event that says they are home.
struct Slot {
    count: CountSlot,
    /// The messages' bits and meta words (codes with a CRC).
    msgs: DeviceBuf,
    meta: DeviceBuf,
    /// Iterations and detected errors of the messages counted.
    sums: DeviceBuf,
    host: PinnedBuf<u64>,
    done: Event,
    /// The words the reports read: the decoder's status words, or `meta`.
    status: sys::CUdeviceptr,
    /// Messages of the batch in the counted range.
    in_range: usize,
}

/// The polar link of bare codewords or 5G messages on a GPU, `T` LLRs at
/// the decoder (see the module documentation).
///
/// # Example
/// ```no_run
/// use gpufec::codes::polar::PolarSettings;
/// use gpufec::codes::settings::Settings;
/// use gpufec::codes::sim::{Link, StopRule, run_point};
/// use gpufec::gpu::DevicePolarLink;
/// use std::sync::atomic::AtomicBool;
/// let chain = PolarSettings { k: Some(39), e: Some(432), message: Some("dci".parse().unwrap()), ..Default::default() }.resolve().unwrap();
/// let mut link = DevicePolarLink::<i8>::new(&chain, 0).unwrap();
/// let stop = StopRule { max_bits: 1 << 24, max_errors: 1000 };
/// let p = run_point(&mut link, 3.0, 1, stop, &AtomicBool::new(false), std::time::Duration::from_secs(1), |_| {}).unwrap();
/// assert!(p.bits > 0);
/// ```
pub type DevicePolarLink<T> = UnitLink<PolarBatches<T>>;

/// What the device link sends: messages of `a` bits, each in `c` blocks of
/// `spec` (`lead` zeros before the first bit), each block sent in `e` bits,
/// rate matched by `rm` (5G) or not (bare codewords, e = N).
#[derive(Debug, Clone)]
struct Shape {
    spec: PolarSpec,
    a: usize,
    c: usize,
    lead: usize,
    e: usize,
    rm: Option<RateMatch>,
    rate: f64,
}

impl Shape {
    fn of(frames: &PolarFrames) -> Self {
        match frames {
            PolarFrames::Codewords(spec) => Self { spec: spec.clone(), a: spec.payload_len(), c: 1, lead: 0, e: spec.n(), rm: None, rate: spec.rate() },
            PolarFrames::Nr(nr) => Self {
                spec: nr.block_spec().clone(),
                a: nr.a(),
                c: nr.blocks(),
                lead: nr.lead(),
                e: nr.rate_match().e(),
                rm: Some(nr.rate_match().clone()),
                rate: nr.rate(),
            },
        }
    }

    /// Whether the blocks carry a CRC: then the messages are read back from
    /// the decoded blocks and checked by it.
    fn checked(&self) -> bool {
        self.spec.check().is_some()
    }

    /// ⌈A/32⌉: words of a message read back.
    fn a_words(&self) -> usize {
        self.a.div_ceil(32)
    }
}

/// The batches of [`DevicePolarLink`]: the decoder, the link's kernels and
/// table, and the slots' counts.
pub struct PolarBatches<T: Llr> {
    shape: Shape,
    g_stop: bool,
    decoder: GpuPolar<T>,
    llrs: CudaFunction,
    messages: CudaFunction,
    reports: CudaFunction,
    common: LinkKernels,
    /// The link's table (`lt` of the kernels).
    table: DeviceBuf,
    slots: Vec<Slot>,
}

/// What the device link sends and its BP configuration for `chain` if it
/// simulates it, else why not (checked before any device is touched).
fn device_link_code(chain: &PolarChain) -> anyhow::Result<(PolarFrames, BpConfig)> {
    let Algorithm::Bp(cfg) = chain.algorithm() else {
        anyhow::bail!("the device link decodes BP on the GPU; {} runs on the host", chain.algorithm().describe());
    };
    check_gpu_decodes(chain.spec(), &cfg)?;
    Ok((chain.frames().clone(), cfg))
}

impl<T: Llr> DevicePolarLink<T> {
    /// The device link of `chain` on GPU `device`: bare codewords (with a
    /// CRC or parity-check bits or none) or 5G messages, decoded by BP
    /// within [`GpuPolar`]'s limits.
    pub fn new(chain: &PolarChain, device: usize) -> anyhow::Result<Self> {
        let (frames, cfg) = device_link_code(chain)?;
        Self::of_frames(&frames, cfg, device)
    }

    /// The device link of `spec`'s codewords (systematic or not, with a CRC
    /// or parity-check bits or none) decoded by BP as `cfg` says, on GPU `device`.
    pub fn of_spec(spec: PolarSpec, cfg: BpConfig, device: usize) -> anyhow::Result<Self> {
        Self::of_frames(&PolarFrames::Codewords(spec), cfg, device)
    }

    /// The device link of `frames` decoded by BP as `cfg` says, on GPU `device`.
    pub fn of_frames(frames: &PolarFrames, cfg: BpConfig, device: usize) -> anyhow::Result<Self> {
        check_gpu_decodes(frames.spec(), &cfg)?;
        PolarBatches::new(Shape::of(frames), cfg, device).map(UnitLink::of)
    }
}

impl<T: Llr> PolarBatches<T> {
    fn new(shape: Shape, cfg: BpConfig, device: usize) -> anyhow::Result<Self> {
        let pipeline = PipelineOptions { device, ..Default::default() };
        let decoder = GpuPolar::<T>::new(shape.spec.clone(), cfg, false, &pipeline)?;
        let ctx = context(device)?;
        let (defines, table) = layout::<T>(&shape);
        let mut f = kernels(&ctx, "polar_link.cu", &["polar_link_llrs", "polar_link_messages", "polar_link_reports"], &defines)?.into_iter();
        let mut next = || f.next().expect("three kernels");
        let (llrs, messages, reports) = (next(), next(), next());
        let common = LinkKernels::new(&ctx)?;
        let table_buf = DeviceBuf::new(&ctx, 4 * table.len().max(1))?;
        // SAFETY: the buffer holds the table; the copy is synchronous.
        unsafe { result::memcpy_htod_sync(table_buf.ptr(), &table) }.map_err(cuda("polar link table copy"))?;
        let msgs = (decoder.batch_units() / shape.c).max(1);
        let info_words = (msgs * shape.a + 512) / 32 + 2;
        let (msg_words, meta_words) = if shape.checked() { (msgs * shape.a_words(), msgs) } else { (1, 1) };
        let slots = (0..decoder.slots())
            .map(|_| {
                Ok(Slot {
                    count: CountSlot::new(&ctx, info_words, msgs + 2)?,
                    msgs: DeviceBuf::new(&ctx, 4 * msg_words)?,
                    meta: DeviceBuf::new(&ctx, 4 * meta_words)?,
                    sums: DeviceBuf::new(&ctx, 2 * 8)?,
                    host: PinnedBuf::new(&ctx, 2, false)?,
                    done: Event::new(&ctx)?,
                    status: 0,
                    in_range: 0,
                })
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        Ok(Self { shape, g_stop: cfg.early_stop == EarlyStop::GMatrix, decoder, llrs, messages, reports, common, table: table_buf, slots })
    }
}

impl<T: Llr> UnitBatches for PolarBatches<T> {
    fn unit_bits(&self) -> usize {
        self.shape.a
    }

    fn rate(&self) -> f64 {
        self.shape.rate
    }

    fn batch_units(&self) -> usize {
        (self.decoder.batch_units() / self.shape.c).max(1)
    }

    fn slots(&self) -> usize {
        self.slots.len()
    }

    fn queue(&mut self, i: usize, ch: &PointChannel, first: i64, messages: usize, a: i64, b: i64) -> anyhow::Result<()> {
        let shape = &self.shape;
        let (k, n, c) = (shape.a, shape.spec.n(), shape.c);
        let (llrs, msgs_kernel, reports, common, table) = (&self.llrs, &self.messages, &self.reports, &self.common, self.table.ptr());
        let (tables, words, checked) = (self.decoder.tables_ptr(), self.decoder.out_words(), shape.checked());
        let has_check = u32::from(checked || self.g_stop);
        let slot = &mut self.slots[i];
        slot.in_range = ((b - a) as usize).div_ceil(k);
        let blocks = messages * c;
        self.decoder.resident(i, |s, buffers, decode| {
            let k64 = k as i64;
            let info_first = slot.count.bits(common, s, first * k64, (first + messages as i64) * k64, ch.bits_key)?;
            let (mut out, mut pitch, mut count, mut firstv, mut info, mut info_firstv, mut tablesv, mut tablev) =
                (buffers.input.ptr(), n as u64, blocks as u32, first * c as i64, slot.count.info_ptr(), info_first, tables, table);
            let ([mut k0, mut k1], mut sigma, mut gain, mut scale) = (ch.noise_key, ch.sigma, ch.gain, ch.scale);
            let mut p: [*mut c_void; 13] = [
                (&mut out as *mut sys::CUdeviceptr).cast(),
                (&mut pitch as *mut u64).cast(),
                (&mut count as *mut u32).cast(),
                (&mut firstv as *mut i64).cast(),
                (&mut info as *mut sys::CUdeviceptr).cast(),
                (&mut info_firstv as *mut i64).cast(),
                (&mut tablesv as *mut sys::CUdeviceptr).cast(),
                (&mut tablev as *mut sys::CUdeviceptr).cast(),
                (&mut k0 as *mut u32).cast(),
                (&mut k1 as *mut u32).cast(),
                (&mut sigma as *mut f32).cast(),
                (&mut gain as *mut f32).cast(),
                (&mut scale as *mut f32).cast(),
            ];
            // SAFETY: polar_link_llrs' signature; the slot's input holds a
            // batch of N-LLR blocks, the information words cover their
            // messages, the tables are the decoder's and the link's.
            unsafe { result::launch_kernel(llrs.cu_function(), (blocks as u32, 1, 1), (link_threads(n), 1, 1), 0, s, &mut p) }
                .map_err(cuda("polar channel kernel launch"))?;
            decode(blocks)?;
            let status = buffers.status.ok_or_else(|| anyhow::anyhow!("polar slot without status words"))?.ptr();
            let dec = if checked {
                let (mut dp, mut wordsv, mut st, mut count, mut tablesv, mut tablev, mut msgs, mut meta) =
                    (buffers.output.ptr(), words as u32, status, messages as u32, tables, table, slot.msgs.ptr(), slot.meta.ptr());
                let mut p: [*mut c_void; 8] = [
                    (&mut dp as *mut sys::CUdeviceptr).cast(),
                    (&mut wordsv as *mut u32).cast(),
                    (&mut st as *mut sys::CUdeviceptr).cast(),
                    (&mut count as *mut u32).cast(),
                    (&mut tablesv as *mut sys::CUdeviceptr).cast(),
                    (&mut tablev as *mut sys::CUdeviceptr).cast(),
                    (&mut msgs as *mut sys::CUdeviceptr).cast(),
                    (&mut meta as *mut sys::CUdeviceptr).cast(),
                ];
                // SAFETY: polar_link_messages' signature: the batch's decoded
                // blocks and status words, room for its messages' words and meta.
                unsafe { launch(msgs_kernel, (messages * shape.a_words()) as u64, s, &mut p, "polar messages kernel") }?;
                slot.status = slot.meta.ptr();
                DecodedTiles { ptr: slot.msgs.ptr(), tiles: messages, f: k, words: shape.a_words(), first_bit: first * k64 }
            } else {
                slot.status = status;
                DecodedTiles { ptr: buffers.output.ptr(), tiles: messages, f: k, words, first_bit: first * k64 }
            };
            slot.count.count(common, s, dec, a, b, k)?;
            // SAFETY: two u64 sums this slot owns.
            unsafe { result::memset_d8_async(slot.sums.ptr(), 0, 16, s) }.map_err(cuda("cuMemsetD8Async"))?;
            let (mut counts, mut statusv, mut in_range, mut g, mut sums) = (slot.count.counts_ptr(), slot.status, slot.in_range as u32, has_check, slot.sums.ptr());
            let mut p: [*mut c_void; 5] = [
                (&mut counts as *mut sys::CUdeviceptr).cast(),
                (&mut statusv as *mut sys::CUdeviceptr).cast(),
                (&mut in_range as *mut u32).cast(),
                (&mut g as *mut u32).cast(),
                (&mut sums as *mut sys::CUdeviceptr).cast(),
            ];
            // SAFETY: polar_link_reports' signature: `in_range` counts (one a
            // counted message, from the first) and meta words, two sums.
            unsafe { launch(reports, slot.in_range as u64, s, &mut p, "polar reports kernel") }?;
            // SAFETY: two u64 into pinned memory this slot owns; read only after `done`.
            unsafe { result::memcpy_dtoh_async(slot.host.as_mut_slice(), slot.sums.ptr(), s) }.map_err(cuda("cuMemcpyDtoHAsync"))?;
            slot.done.record(s)
        })
    }

    /// With the units (code blocks), iterations and detected errors of the messages counted.
    fn collect(&mut self, i: usize, tally: &mut Tally) -> anyhow::Result<()> {
        let (k, c) = (self.shape.a as u64, self.shape.c as u64);
        let has_check = self.shape.checked() || self.g_stop;
        let before = tally.point().bits;
        let slot = &mut self.slots[i];
        slot.done.wait()?;
        slot.count.collect(tally)?;
        let counted = tally.point().bits - before;
        // A message is counted once any of its bits was, as the host link
        // counts it, and its errors are detected only if counted whole.
        let (units, whole) = (counted.div_ceil(k) as usize, (counted / k) as usize);
        if units == slot.in_range && whole == units {
            let h = slot.host.as_slice();
            tally.count_unit_sums(units as u64 * c, h[0], h[1]);
            return Ok(());
        }
        // A stop rule fell inside the batch: the sums cover messages the
        // tally did not count, so add up those it did from every message's.
        let (mut counts, mut status) = (vec![0u32; units], vec![0u32; units]);
        if units > 0 {
            // SAFETY: `units` ≤ the batch's counts and meta words, written by the finished batch.
            unsafe {
                result::memcpy_dtoh_sync(&mut counts, slot.count.counts_ptr()).map_err(cuda("cuMemcpyDtoH"))?;
                result::memcpy_dtoh_sync(&mut status, slot.status).map_err(cuda("cuMemcpyDtoH"))?;
            }
        }
        let iterations = status.iter().map(|&st| u64::from(st & 0xffff)).sum();
        let detected = if has_check { counts[..whole].iter().zip(&status).filter(|&(&e, &st)| e > 0 && (st >> 16) & 1 == 0).count() as u64 } else { 0 };
        tally.count_unit_sums(units as u64 * c, iterations, detected);
        Ok(())
    }

    fn wait(&self, i: usize) -> anyhow::Result<()> {
        self.slots[i].done.wait()
    }

    fn describe(&self) -> String {
        let encoder = match &self.shape.rm {
            Some(rm) => {
                let blocks = if self.shape.c > 1 { format!("{} blocks of ", self.shape.c) } else { String::new() };
                format!("5G polar chain ({blocks}{}, {}, rate recovery)", self.shape.spec.describe(), rm.selection().name())
            }
            None => format!("polar encoder ({})", self.shape.spec.describe()),
        };
        device_link_line(&crate::codes::decode::BatchDecoder::describe(&self.decoder), &encoder, T::NAME)
    }
}

/// Threads of the channel kernel's CTA (one block each): a thread per
/// four LLRs (one Philox block's normals), from a warp to 256.
fn link_threads(n: usize) -> u32 {
    (n / 4).clamp(32, 256) as u32
}

/// The kernels' constants (the code's sizes and kind, the message's shape,
/// the LLR type, the table's offsets) and the link's table (`lt`): the
/// payload's CRC columns, where each bit of c goes among the information
/// bits, the parity-check positions, and the rate recovery's sent indices
/// of each coded bit (ascending) with the shortened bits.
fn layout<T: Llr>(shape: &Shape) -> (Vec<(String, String)>, Vec<u32>) {
    let spec = &shape.spec;
    let (n, k) = (spec.n(), spec.code().k());
    let mut t: Vec<u32> = Vec::new();
    let t_cols = t.len();
    let (crc_bits, xor) = match spec.check() {
        Some(check) => {
            t.extend(check.payload_columns());
            (check.crc().width(), check.syndrome_columns().1)
        }
        None => (0, 0),
    };
    let t_cidx = t.len();
    t.extend(info_slots(spec.check(), k));
    let t_pc = t.len();
    t.extend_from_slice(spec.code().parity());
    let (t_rstart, t_ridx, t_short) = match &shape.rm {
        Some(rm) => {
            // Coded bit j's sent indices, ascending: a stable counting sort of the map.
            let mut start = vec![0u32; n + 1];
            for &j in rm.map() {
                start[usize::from(j) + 1] += 1;
            }
            for j in 0..n {
                start[j + 1] += start[j];
            }
            let mut at = start.clone();
            let mut sent = vec![0u32; rm.e()];
            for (i, &j) in rm.map().iter().enumerate() {
                sent[at[usize::from(j)] as usize] = i as u32;
                at[usize::from(j)] += 1;
            }
            let mut short = vec![0u32; n.div_ceil(32)];
            for j in rm.shortened() {
                short[j / 32] |= 1 << (j % 32);
            }
            let t_rstart = t.len();
            t.extend(start);
            let t_ridx = t.len();
            t.extend(sent);
            let t_short = t.len();
            t.extend(short);
            (t_rstart, t_ridx, t_short)
        }
        None => (t.len(), t.len(), t.len()),
    };
    let defines = [
        ("PN", n),
        ("PK", k),
        ("PUW", n.div_ceil(32)),
        ("PSYS", usize::from(spec.systematic())),
        ("PLT", link_threads(n) as usize),
        ("LLR_F32", usize::from(T::TYPE == LlrType::F32)),
        ("PP", spec.payload_len()),
        ("PA", shape.a),
        ("PC", shape.c),
        ("PLEAD", shape.lead),
        ("PCRC", crc_bits),
        ("PNPC", spec.code().parity().len()),
        ("PRM", usize::from(shape.rm.is_some())),
        ("PE", shape.e),
        ("T_COLS", t_cols),
        ("T_CIDX", t_cidx),
        ("T_PC", t_pc),
        ("T_RSTART", t_rstart),
        ("T_RIDX", t_ridx),
        ("T_SHORT", t_short),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .chain([("PXOR".to_string(), format!("{xor:#x}u"))])
    .collect();
    (defines, t)
}

/// cidx(i): the information bit (u's order) that bit i of c goes to, the
/// inverse of the check's interleaver (identity without one).
fn info_slots(check: Option<&InfoCheck>, k: usize) -> Vec<u32> {
    let mut slots: Vec<u32> = (0..k as u32).collect();
    if let Some(order) = check.and_then(InfoCheck::order) {
        for (slot, &ci) in order.iter().enumerate() {
            slots[usize::from(ci)] = slot as u32;
        }
    }
    slots
}

/// Compile the device link's kernels for `frames` (bare codewords or 5G
/// messages) with `T` LLRs for architecture `arch` (e.g. `sm_90`) with
/// NVRTC alone, no GPU needed: lets a machine without a GPU check that they
/// build.
pub fn compile_polar_link_kernel<T: Llr>(frames: &PolarFrames, arch: &str) -> anyhow::Result<()> {
    compile_cubin("polar_link.cu", arch, &layout::<T>(&Shape::of(frames)).0).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes::polar::PolarSettings;
    use crate::codes::settings::Settings;

    fn shape(settings: serde_json::Value) -> Shape {
        Shape::of(serde_json::from_value::<PolarSettings>(settings).unwrap().resolve().unwrap().frames())
    }

    /// The table the kernels read: c's bits land where the check's
    /// interleaver puts them, and each coded bit's sent indices are the
    /// map's, ascending, with the shortened bits marked.
    #[test]
    fn the_link_table_is_the_host_chain_s() {
        for s in [
            serde_json::json!({ "k": 39, "e": 100, "message": "dci", "rnti": 17 }),
            serde_json::json!({ "k": 39, "e": 432, "message": "dci" }),
            serde_json::json!({ "k": 16, "e": 300 }),
            serde_json::json!({ "k": 401, "e": 1201 }),
            serde_json::json!({ "n": 256, "k": 128, "crc": "crc11" }),
        ] {
            let shape = shape(s.clone());
            let (defines, t) = layout::<i8>(&shape);
            let at = |name: &str| defines.iter().find(|(k, _)| k == name).unwrap().1.parse::<usize>().unwrap();
            let (spec, k, n) = (&shape.spec, shape.spec.code().k(), shape.spec.n());
            // Information bit slot cidx(i) holds c_i: the check's order maps it back.
            let cidx = &t[at("T_CIDX")..at("T_CIDX") + k];
            match spec.check().and_then(InfoCheck::order) {
                Some(order) => assert!((0..k).all(|i| usize::from(order[cidx[i] as usize]) == i), "{s}"),
                None => assert!((0..k).all(|i| cidx[i] as usize == i), "{s}"),
            }
            assert_eq!(&t[at("T_PC")..at("T_PC") + at("PNPC")], spec.code().parity(), "{s}");
            let Some(rm) = &shape.rm else { continue };
            let (start, sent) = (&t[at("T_RSTART")..at("T_RSTART") + n + 1], &t[at("T_RIDX")..at("T_RIDX") + rm.e()]);
            for j in 0..n {
                let want: Vec<u32> = (0..rm.e() as u32).filter(|&i| usize::from(rm.map()[i as usize]) == j).collect();
                assert_eq!(&sent[start[j] as usize..start[j + 1] as usize], &want[..], "{s}: coded bit {j}");
                let short = t[at("T_SHORT") + j / 32] >> (j % 32) & 1 == 1;
                assert_eq!(short, rm.shortened().any(|x| x == j), "{s}: coded bit {j}");
            }
        }
    }
}
