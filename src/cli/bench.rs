//! `gpufec bench <family>`: the options every family's benchmark shares, the
//! decoder timing, and the table rows; each family's measurement is in its
//! own module.

use super::count::{count_usize, parse_count};
use crate::codes::threads::MAX_THREADS;
use crate::codes::decode::{Batch, BatchDecoder, Decoded};
use crate::codes::llr::LlrType;
use crate::gpu::{Backend, DEFAULT_SLOTS, DeviceList, MAX_SLOTS, select};
use clap::{Args, ValueEnum};
use std::time::{Duration, Instant};

/// Most information bits per repetition: the noisy inputs take up to 8 bytes
/// a bit (f32 LLRs at rate 1/2), so 2^28 bits hold 2 GiB.
pub const MAX_BENCH_BITS: u64 = 1 << 28;
/// Longest time per row, seconds.
pub const MAX_BENCH_SECONDS: f64 = 3600.0;

/// Options every family's bench takes.
#[derive(Args, Debug, Clone)]
pub struct BenchArgs {
    /// Where the decoder runs: cpu, gpu, or auto (the GPU when one is usable).
    #[arg(long, default_value = "cpu")]
    pub backend: Backend,
    /// Information bits per repetition, rounded up to whole work units
    /// (default 2^20 on the CPU, 2^26 on a GPU; at most 2^28).
    #[arg(long, value_parser = parse_count)]
    pub bits: Option<u64>,
    /// Seconds of repetitions per row (at most 3600); the fastest of at least three counts.
    #[arg(long, default_value_t = 1.0, allow_hyphen_values = true)]
    pub seconds: f64,
    /// CPU threads (1..=1024); without it, one thread and all cores are
    /// measured. On a GPU, the host threads that stage and unpack its
    /// batches (as `gpu_host_threads` in a flowgraph; default three quarters of the cores).
    #[arg(long, value_parser = count_usize)]
    pub threads: Option<usize>,
    /// On a GPU, skip the paper's Table IV and V grids (they take a minute or two).
    #[arg(long)]
    pub no_tables: bool,
    /// On a GPU, pipeline slots (batches in flight), 1..=16 (default 3).
    #[arg(long, value_parser = count_usize)]
    pub slots: Option<usize>,
    /// On a GPU, work units per batch of the rows and the devices' figures
    /// (default: each family's, from the device's size; not the paper's
    /// Viterbi tables); refused when a batch would pass a decoder's buffer limit.
    #[arg(long, value_parser = count_usize)]
    pub batch_units: Option<usize>,
    /// GPUs to spread the decoding over: indices (0,1) or all; a decoder per device, batches to the least busy, measured end to end (default: GPU 0 alone, with the GPU's own tables).
    #[arg(long, value_parser = DeviceList::parse)]
    pub gpu_devices: Option<DeviceList>,
    /// With --gpu-devices: keep a copy of each batch so that a failed device
    /// is taken out and the others decode its batches (as `gpu_take_out =
    /// true` in a flowgraph; without it a device failure fails the run).
    #[arg(long)]
    pub take_out: bool,
    /// LLR types to measure: i8, f32 or both (default: the family's: both
    /// for conv; for turbo i8 on a GPU, f32 on the CPU).
    #[arg(long, value_enum)]
    pub llr: Option<LlrSet>,
    /// Eb/N0 of the noisy inputs, dB (default: the family's; early stopping
    /// makes a decoder's speed depend on it).
    #[arg(long, allow_hyphen_values = true)]
    pub ebn0: Option<f64>,
    /// Also write every row's figures, with their units, the machine and the
    /// devices, as JSON to this file (rewritten after each row).
    #[arg(long)]
    pub json: Option<std::path::PathBuf>,
    /// Do not say on stderr which row is being measured.
    #[arg(short, long)]
    pub quiet: bool,
}

/// LLR types a bench measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LlrSet {
    /// `i8` only.
    I8,
    /// `f32` only.
    F32,
    /// Both.
    Both,
}

impl LlrSet {
    /// The types, `i8` first.
    pub fn types(self) -> Vec<LlrType> {
        match self {
            LlrSet::I8 => vec![LlrType::I8],
            LlrSet::F32 => vec![LlrType::F32],
            LlrSet::Both => vec![LlrType::I8, LlrType::F32],
        }
    }
}

/// What a bench run measures, its options checked.
#[derive(Debug, Clone)]
pub struct Run {
    /// Whether the decoders run on the GPU.
    pub gpu: bool,
    /// The backend the decoders are built with.
    pub backend: Backend,
    /// CPU thread counts to measure (0 on a GPU: not applicable).
    pub threads: Vec<usize>,
    /// Information bits per repetition.
    pub bits: u64,
    /// Time per row.
    pub budget: Duration,
    /// GPU pipeline slots.
    pub slots: usize,
    /// Work units per GPU batch (0: the family's).
    pub batch_units: usize,
    /// GPUs to spread the decoding over.
    pub devices: Option<DeviceList>,
    /// Whether several GPUs keep each batch to take a failed one out.
    pub take_out: bool,
    /// Host threads of the GPU pipelines (0: their default).
    pub host_threads: usize,
}

impl Run {
    /// The pipeline of one GPU decoder on `device`: the run's slots, batch and host threads.
    pub fn pipeline(&self, device: usize) -> crate::gpu::PipelineOptions {
        crate::gpu::PipelineOptions { device, slots: self.slots, batch_units: self.batch_units, host_threads: self.host_threads, ..Default::default() }
    }

    /// The pipeline of the run's decoder: [`Self::pipeline`] over the run's devices.
    pub fn devices_pipeline(&self) -> crate::gpu::PipelineOptions {
        crate::gpu::PipelineOptions { devices: self.devices.clone(), take_out: self.take_out, ..self.pipeline(0) }
    }
}

impl BenchArgs {
    /// Check every option against its limit and decide where the decoders run.
    pub fn resolve(&self) -> anyhow::Result<Run> {
        anyhow::ensure!(self.bits != Some(0), "--bits 0 measures nothing");
        if let Some(b) = self.bits {
            anyhow::ensure!(b <= MAX_BENCH_BITS, "--bits {b}: at most {MAX_BENCH_BITS} bits per repetition");
        }
        anyhow::ensure!(
            self.seconds.is_finite() && (0.0..=MAX_BENCH_SECONDS).contains(&self.seconds),
            "--seconds must be a number of seconds from 0 to {MAX_BENCH_SECONDS}"
        );
        if let Some(x) = self.ebn0 {
            anyhow::ensure!(x.is_finite(), "--ebn0 {x}: give a finite Eb/N0 in dB");
        }
        if let Some(t) = self.threads {
            anyhow::ensure!((1..=MAX_THREADS).contains(&t), "--threads {t}: give 1..={MAX_THREADS}, or leave it out for 1 and all cores");
        }
        let slots = self.slots.unwrap_or(DEFAULT_SLOTS);
        anyhow::ensure!((1..=MAX_SLOTS).contains(&slots), "--slots {slots}: give 1..={MAX_SLOTS}");
        anyhow::ensure!(self.batch_units != Some(0), "--batch-units 0: a batch holds at least one unit");
        let ((), choice) = select(self.backend, crate::gpu::available, || Ok(())).map_err(|e| anyhow::anyhow!("--backend gpu: {e:#}"))?;
        if let Some(why) = &choice.why_not_gpu {
            println!("backend auto: no GPU ({why}); measuring the CPU");
        }
        if !choice.gpu {
            anyhow::ensure!(
                self.slots.is_none() && self.batch_units.is_none() && !self.no_tables && self.gpu_devices.is_none(),
                "--slots, --batch-units, --no-tables and --gpu-devices apply to the GPU, which this run does not use"
            );
        }
        anyhow::ensure!(!self.take_out || self.gpu_devices.is_some(), "--take-out applies to several GPUs: give --gpu-devices too");
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let threads = match (choice.gpu, self.threads) {
            (true, _) => vec![0],
            (false, Some(t)) => vec![t],
            (false, None) if cores > 1 => vec![1, cores],
            (false, None) => vec![1],
        };
        Ok(Run {
            gpu: choice.gpu,
            backend: if choice.gpu { self.backend } else { Backend::Cpu },
            threads,
            bits: self.bits.unwrap_or(if choice.gpu { 1 << 26 } else { 1 << 20 }),
            budget: Duration::from_secs_f64(self.seconds),
            slots,
            batch_units: self.batch_units.unwrap_or(0),
            devices: self.gpu_devices.clone(),
            take_out: self.take_out,
            host_threads: if choice.gpu { self.threads.unwrap_or(0) } else { 0 },
        })
    }
}

/// One timed decode.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timing {
    /// Information bits decoded.
    pub info_bits: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
}

impl Timing {
    /// Information throughput in Mb/s.
    pub fn mbps(&self) -> f64 {
        self.info_bits as f64 / self.seconds.max(1e-12) / 1e6
    }

    /// The figures of a row timed on `threads` CPU threads (0: a GPU): the
    /// throughput, per thread on the CPU, and the repetition's size.
    pub fn figures(&self, threads: usize) -> Vec<(&'static str, f64, &'static str)> {
        let mut f = vec![("throughput", self.mbps(), "Mb/s")];
        if threads > 0 {
            f.push(("per thread", self.mbps() / threads as f64, "Mb/s"));
        }
        f.push(("bits per repetition", self.info_bits as f64, "bits"));
        f.push(("fastest repetition", self.seconds, "s"));
        f
    }
}

/// Decode `batch` (`info_bits` information bits) with `decoder`, keeping up to
/// its depth of batches in flight: once untimed (to warm caches, threads and
/// the device up), then repeatedly, at least three times and for at least
/// `budget`. Returns the fastest repetition, the one least disturbed by other
/// work on the machine.
pub fn time_decoder<T: Copy + Send + Sync>(decoder: &mut dyn BatchDecoder<T>, batch: &Batch<'_, T>, info_bits: u64, budget: Duration) -> anyhow::Result<Timing> {
    let mut out = Decoded::default();
    decoder.decode(batch, &mut out)?;
    anyhow::ensure!(out.bits.len() as u64 == info_bits, "the decoder returned {} bits for {info_bits} information bits", out.bits.len());
    fastest(info_bits, budget, || {
        out.clear();
        Ok(decoder.decode(batch, &mut out)?)
    })
}

/// Time `work` (`info_bits` information bits each time; run once already,
/// untimed) repeatedly, at least three times and for at least `budget`;
/// returns the fastest repetition.
pub fn fastest(info_bits: u64, budget: Duration, mut work: impl FnMut() -> anyhow::Result<()>) -> anyhow::Result<Timing> {
    let mut best = f64::INFINITY;
    repeat_for(budget, || {
        let t = Instant::now();
        work()?;
        best = best.min(t.elapsed().as_secs_f64());
        Ok(())
    })?;
    Ok(Timing { info_bits, seconds: best })
}

/// Run `once` again and again, at least three times and until `budget` has
/// passed: how every bench figure is repeated.
fn repeat_for(budget: Duration, mut once: impl FnMut() -> anyhow::Result<()>) -> anyhow::Result<()> {
    let (started, mut reps) = (Instant::now(), 0);
    while reps < 3 || started.elapsed() < budget {
        once()?;
        reps += 1;
    }
    Ok(())
}

/// Where a row ran, for its label: the GPU (0 threads) or a count of CPU threads.
pub fn where_run(threads: usize) -> String {
    if threads == 0 { "GPU".to_string() } else { crate::codes::words::count_of(threads as u64, "thread") }
}

/// One row of a bench table.
pub struct Row<'a> {
    /// Configuration name.
    pub setup: &'a str,
    /// LLR type.
    pub llr: &'a str,
    /// CPU threads (0: a GPU).
    pub threads: usize,
    /// Information bits decoded per repetition (whole units: at least those asked).
    pub bits: u64,
    /// Information Mb/s.
    pub mbps: f64,
    /// The decoder's description.
    pub describe: String,
}

impl Row<'_> {
    /// The table's header line.
    pub fn header() -> String {
        format!("{:<38} {:>4} {:>7} {:>10} {:>9} {:>10}  decoder", "configuration", "llr", "threads", "bits/rep", "Mb/s", "Mb/s/core")
    }
}

impl std::fmt::Display for Row<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (threads, per_core) = match self.threads {
            0 => ("-".to_string(), "-".to_string()),
            t => (t.to_string(), format!("{:.1}", self.mbps / t as f64)),
        };
        write!(f, "{:<38} {:>4} {threads:>7} {:>10} {:>9.1} {per_core:>10}  {}", self.setup, self.llr, self.bits, self.mbps, self.describe)
    }
}

impl BenchArgs {
    /// Start keeping the bench's rows ([`crate::figures`]): for `--json` (its
    /// path checked now, not after minutes of measuring) and for the progress
    /// on stderr.
    pub fn start_figures(&self) -> anyhow::Result<()> {
        if let Some(path) = &self.json {
            crate::files::check_writable(path).map_err(|e| anyhow::anyhow!("--json: {e}"))?;
        }
        anyhow::ensure!(!self.take_out || self.gpu_devices.is_some(), "--take-out applies to several GPUs: give --gpu-devices too");
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        // The devices as the driver lists them; none where there is no driver.
        let devices: Vec<serde_json::Value> = crate::gpu::devices()
            .unwrap_or_default()
            .iter()
            .map(|d| serde_json::json!({ "index": d.index, "name": d.name, "sms": d.sms, "memory_bytes": d.memory_bytes, "compute_capability": format!("{}.{}", d.compute_capability.0, d.compute_capability.1) }))
            .collect();
        let head = crate::figures::head([
            ("command", std::env::args().collect::<Vec<_>>().join(" ").into()),
            ("machine", serde_json::json!({ "cpu": cpu_model(), "cores": cores })),
            ("devices", devices.into()),
        ]);
        crate::figures::start(head, self.json.clone(), self.quiet);
        Ok(())
    }
}

/// The machine: CPU model and cores.
pub fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    format!("{}, {cores} cores", cpu_model())
}

/// The CPU's model name as Linux reports it.
pub fn cpu_model() -> String {
    use std::io::Read;
    // A bounded read, as for every file: the first model line is near the top.
    let mut cpuinfo = String::new();
    if let Ok(f) = std::fs::File::open("/proc/cpuinfo") {
        let _ = f.take(1 << 20).read_to_string(&mut cpuinfo);
    }
    let model = cpuinfo.lines().find_map(|l| l.strip_prefix("model name").and_then(|r| r.split(':').nth(1)));
    model.map_or_else(|| "unknown CPU".to_string(), |m| m.trim().to_string())
}

/// Batches each device decodes in the streaming figures of [`devices_report`].
const STREAM_BATCHES_PER_DEVICE: usize = 16;
/// Bytes of the copy that measures each device's PCIe link.
const PCIE_BYTES: usize = 256 << 20;

/// The figures of a bench over several GPUs (`--gpu-devices`), after its
/// row: `total` (the decoder over every device, which decoded that row)
/// streaming many batches of the uniform `units` (whole batches, taken
/// round robin, so that no pipeline fills or drains inside the figure); each
/// device alone, built by `one`, kernel-only and end to end, with its PCIe
/// host→device rate and the batches the row dealt it; the host's memory
/// limits on its pipeline threads (with the run's take-out, the copy that
/// keeps each batch besides); and which limit binds. Then the same in place
/// ([`in_place_report`]), as a stream's decoder block decodes. Each
/// end-to-end figure is streamed again and again for the run's time (at
/// least three times; [`Repeated`]): a stream of a few dozen batches lasts
/// tens of milliseconds, within which one hiccup of the host shows.
pub fn devices_report<T: Copy + Send + Sync>(
    total: &mut dyn BatchDecoder<T>,
    devices: &[usize],
    run: &Run,
    one: impl Fn(usize) -> anyhow::Result<Box<dyn crate::gpu::bench::GpuBench<T>>>,
    units: &[T],
) -> anyhow::Result<()> {
    let take_out = run.take_out;
    use crate::gpu::bench::{end_to_end, end_to_end_gbps, host_floor, kernel_only, pinned_h2d_gbps};
    let Some(&lead) = devices.first() else { return Ok(()) };
    let shape = total.shapes()[0];
    let batch_items = total.limit().units * shape.items;
    if units.len() < batch_items {
        println!("per device: not measured: --bits holds less than one batch ({} units)", total.limit().units);
        return Ok(());
    }
    // One device's decoder deals nothing: it took every batch.
    let dealt: Vec<(usize, u64, u64)> = match total.dealt() {
        d if d.is_empty() => devices.iter().map(|&d| (d, 0, 0)).collect(),
        d => d,
    };
    let n = dealt.len();
    crate::figures::measuring("all devices, streaming");
    let batches = STREAM_BATCHES_PER_DEVICE * n;
    let all = Repeated::measure(run.budget, || end_to_end_gbps(total, units, batches))?;
    // Input bytes per information bit, rounded up (2 for i8 LLRs at rate 1/2).
    let in_bytes = (shape.items * std::mem::size_of::<T>()).div_ceil(shape.bits.max(1));
    let mut alone = Vec::new();
    let mut kernels = Vec::new();
    let mut pcie = Vec::new();
    let mut links_gb = 0.0;
    println!("\nper device (each alone: kernel-only on device-resident input, end to end streaming {STREAM_BATCHES_PER_DEVICE} batches; dealt: what the row above gave it):");
    for &(d, b, u) in &dealt {
        crate::figures::measuring(&format!("GPU {d} alone"));
        let mut dec = one(d)?;
        let kernel = kernel_only(dec.as_mut(), units, 5)?;
        let e2e = Repeated::measure(run.budget, || Ok(end_to_end(dec.as_mut(), units, STREAM_BATCHES_PER_DEVICE)?.gbps))?;
        drop(dec);
        let link = pinned_h2d_gbps(d, PCIE_BYTES)?;
        let link_bits = link / in_bytes as f64;
        crate::figures::row(
            "devices",
            format!("GPU {d}"),
            &[
                ("kernel-only", kernel, "Gb/s"),
                ("end-to-end alone", e2e.best, "Gb/s"),
                ("end-to-end alone, median", e2e.median, "Gb/s"),
                ("PCIe host→device", link, "GB/s"),
                ("batches dealt", b as f64, "batches"),
                ("units dealt", u as f64, "units"),
            ],
        )?;
        println!("GPU {d}: kernel-only {kernel:.1} Gb/s, end to end alone {e2e}, PCIe host→device {link:.1} GB/s ({link_bits:.1} Gb/s of information), dealt {b} batches, {u} units");
        alone.push(e2e);
        kernels.push(kernel);
        links_gb += link;
        pcie.push(link_bits);
    }
    let first = alone.first().copied().unwrap_or(Repeated::NONE);
    crate::figures::row("devices", format!("all {n}"), &all.speed_up_figures(first))?;
    println!("all {}, streaming {batches} batches: end to end {all}, {} GPU {} alone", crate::codes::words::count_of(n as u64, "GPU"), all.speed_up(first), lead);
    let floor = host_floor(lead, in_bytes, total.limit().units * shape.bits)?;
    let (devices, links) = (alone.iter().map(|a| a.best).sum::<f64>(), pcie.iter().sum::<f64>());
    let all = all.best;
    // With take-out each batch's input is also copied once, to be kept for
    // another device should its own fail: that pass is the host's too.
    let (cap, kept) = match take_out {
        true => (1.0 / (in_bytes as f64 / floor.copy_gb + 1.0 / floor.cap_gbps), format!("keeping each batch's input (a copy at {:.1} GB/s), ", floor.copy_gb)),
        false => (floor.cap_gbps, String::new()),
    };
    let limits = [
        (devices, format!("the {n} devices alone add up to {devices:.1} Gb/s")),
        (links, format!("{n} × PCIe carry {links:.1} Gb/s of information")),
        (
            cap,
            format!(
                "host memory caps end to end at {cap:.1} Gb/s: {kept}staging at {:.1} GB/s and unpacking at {:.1} GB/s, one after the other, on {} threads",
                floor.stage_gb, floor.unpack_gb, floor.threads
            ),
        ),
    ];
    let binds = limits.iter().min_by(|a, b| a.0.total_cmp(&b.0)).expect("three limits");
    let others: Vec<&str> = limits.iter().filter(|l| l.0 != binds.0).map(|l| l.1.as_str()).collect();
    println!("binding limit: {} ({:.0} % of it measured); beside it {}", binds.1, 100.0 * all / binds.0, others.join(", "));
    // In place a batch's bytes cross PCIe as they lie: its exact bytes per bit.
    let exact_bytes = (shape.items * std::mem::size_of::<T>()) as f64 / shape.bits.max(1) as f64;
    let devices: Vec<usize> = dealt.iter().map(|d| d.0).collect();
    in_place_report(total, &devices, run, one, units, (kernels.iter().sum(), links_gb / exact_bytes), exact_bytes)
}

/// An end-to-end figure measured again and again: the fastest (as every
/// bench row gives) and the median, Gb/s.
#[derive(Debug, Clone, Copy)]
struct Repeated {
    best: f64,
    median: f64,
    times: usize,
}

impl Repeated {
    /// No figure.
    const NONE: Repeated = Repeated { best: f64::NAN, median: f64::NAN, times: 0 };

    /// `figure` taken until `budget` has passed, at least three times.
    fn measure(budget: Duration, mut figure: impl FnMut() -> anyhow::Result<f64>) -> anyhow::Result<Self> {
        let mut got = Vec::new();
        repeat_for(budget, || {
            got.push(figure()?);
            Ok(())
        })?;
        got.sort_by(f64::total_cmp);
        let n = got.len();
        Ok(Self { best: got[n - 1], median: (got[(n - 1) / 2] + got[n / 2]) / 2.0, times: n })
    }

    /// How much faster than `one`: fastest over fastest, median over median.
    fn speed_up(&self, one: Repeated) -> String {
        format!("{:.2}× (median {:.2}×)", self.best / one.best, self.median / one.median)
    }

    /// The figures of a row of all devices against `one` alone.
    fn speed_up_figures(&self, one: Repeated) -> [(&'static str, f64, &'static str); 4] {
        [
            ("end-to-end", self.best, "Gb/s"),
            ("end-to-end, median", self.median, "Gb/s"),
            ("speed-up over the first alone", self.best / one.best, "×"),
            ("speed-up over the first alone, medians", self.median / one.median, "×"),
        ]
    }
}

impl std::fmt::Display for Repeated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:.1} Gb/s (fastest of {}; median {:.1})", self.best, self.times, self.median)
    }
}

/// The figures of [`devices_report`] as a stream's decoder block gets them:
/// each batch page-locked where it lies and copied to its device from there,
/// the bits handed packed where the decoder can (as to a packed output): no
/// host pass over the input (but the copy that keeps each batch, with
/// `take_out`) or the output. Each device alone, then all
/// together, with `limits` (the devices' kernels added up, and what the
/// PCIe links carry at the rate of one copy at a time, in information
/// Gb/s: the pipeline's overlapped copies may pass it) beside them, and
/// what every link carries copying at once (`bytes_per_bit` of input per
/// information bit).
fn in_place_report<T: Copy + Send + Sync>(
    total: &mut dyn BatchDecoder<T>,
    devices: &[usize],
    run: &Run,
    one: impl Fn(usize) -> anyhow::Result<Box<dyn crate::gpu::bench::GpuBench<T>>>,
    units: &[T],
    (kernels, links): (f64, f64),
    bytes_per_bit: f64,
) -> anyhow::Result<()> {
    use crate::gpu::bench::{end_to_end_in_place, end_to_end_in_place_gbps};
    let Some(&lead) = devices.first() else { return Ok(()) };
    let n = devices.len();
    let packed = total.pack_bits();
    let how = if packed { "bits handed packed" } else { "bits a byte each (this decoder does not pack them)" };
    let copy = if run.take_out { "together, each batch also copied to be kept for --take-out" } else { "no host copy of the input" };
    println!("\nin place (as a stream's decoder block: each batch page-locked where it lies; {copy}; {how}):");
    let mut alone = Vec::new();
    for &d in devices {
        crate::figures::measuring(&format!("GPU {d} alone, in place"));
        let mut dec = one(d)?;
        dec.pack_bits();
        let e2e = Repeated::measure(run.budget, || Ok(end_to_end_in_place(dec.as_mut(), units, STREAM_BATCHES_PER_DEVICE)?.gbps))?;
        drop(dec);
        crate::figures::row("devices in place", format!("GPU {d}"), &[("end-to-end alone", e2e.best, "Gb/s"), ("end-to-end alone, median", e2e.median, "Gb/s")])?;
        println!("GPU {d} alone: end to end {e2e}");
        alone.push(e2e);
    }
    crate::figures::measuring("all devices, in place");
    let batches = STREAM_BATCHES_PER_DEVICE * n;
    let all = Repeated::measure(run.budget, || end_to_end_in_place_gbps(total, units, batches))?;
    crate::figures::measuring("PCIe, every device at once");
    let together = crate::gpu::bench::pinned_h2d_together_gbps(devices, PCIE_BYTES)?;
    let first = alone.first().copied().unwrap_or(Repeated::NONE);
    let mut figures = all.speed_up_figures(first).to_vec();
    figures.push(("PCIe, every link at once", together, "GB/s"));
    crate::figures::row("devices in place", format!("all {n}"), &figures)?;
    println!(
        "all {}, in place, streaming {batches} batches: end to end {all}, {} GPU {lead} alone; beside it the devices' kernels add up to {kernels:.1} Gb/s ({:.0} %), {n} × PCIe carry {links:.1} Gb/s of information ({:.0} %), the {n} links copying at once {together:.1} GB/s, {:.1} Gb/s of information ({:.0} %)",
        crate::codes::words::count_of(n as u64, "GPU"),
        all.speed_up(first),
        100.0 * all.best / kernels,
        100.0 * all.best / links,
        together / bytes_per_bit,
        100.0 * all.best * bytes_per_bit / together
    );
    Ok(())
}
