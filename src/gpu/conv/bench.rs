//! `gpufec bench conv --backend gpu`: kernel-only and end-to-end throughput
//! of the GPU Viterbi decoder on noisy LLRs (K=7 (171,133), Eb/N0 per
//! information bit [`BENCH_EBN0_DB`]), the paper's Table IV and V layouts, the
//! time split of one batch, end to end against the pipeline's host threads,
//! punctured rates depunctured on the host or in the kernel, and the
//! host-memory and copy-engine ceilings under the end-to-end figures (the
//! shared measurements of [`crate::gpu::bench`]). Prints markdown, ready for
//! BENCHMARKS.md.

use super::{GpuViterbi, SurvivorMemory, ViterbiTuning, kernel::lcm};
use crate::codes::conv::{ConvCode, ConvSetup, DEFAULT_GROUP, Depuncturer, NoisyLlrs, PuncturePattern, TileConfig, Traceback, Trellis, ViterbiMode};
use crate::codes::decode::{Batch, BatchDecoder};
use crate::codes::llr::Llr;
use crate::gpu::bench::{EndToEnd, GpuBench, copy_engine, end_to_end, host_floor, kernel_only};
use crate::gpu::pipeline::{BatchSplit, DEFAULT_SLOTS, PipelineOptions};
use crate::gpu::default_host_threads;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

/// Eb/N0 of the benchmarks' noisy LLRs, per information bit: the Viterbi
/// decoder's work does not depend on it, but real noise keeps every path
/// metric realistic, and the decoders to come stop early on clean input.
pub const BENCH_EBN0_DB: f64 = 3.0;

/// What to measure.
#[derive(Debug, Clone)]
pub struct GpuBenchOptions {
    /// CUDA device.
    pub device: usize,
    /// Pipeline slots for the end-to-end figures.
    pub slots: usize,
    /// Kernel launches averaged per kernel-only figure.
    pub reps: usize,
    /// Batches decoded per end-to-end figure: enough that filling and draining
    /// the pipeline (about one batch's time, not overlapped, which a long
    /// stream pays once) costs about 2 % of the figure, not 8 % as with 12.
    pub batches: usize,
    /// Also measure the Table IV and V grids.
    pub tables: bool,
    /// Tiles per work unit.
    pub group: usize,
    /// Only this punctured rate's rows of the punctured table (`2/3`, `3/4`,
    /// `7/8`): a short run that compares one configuration across builds.
    pub only_rate: Option<String>,
}

impl Default for GpuBenchOptions {
    fn default() -> Self {
        Self { device: 0, slots: DEFAULT_SLOTS, reps: 20, batches: 48, tables: true, group: DEFAULT_GROUP, only_rate: None }
    }
}

impl<T: Llr> GpuBench<T> for GpuViterbi<T> {
    fn time_kernel(&mut self, batch: &Batch<'_, T>, reps: usize) -> anyhow::Result<f64> {
        GpuViterbi::time_kernel(self, batch, reps)
    }

    fn last_split(&self) -> BatchSplit {
        GpuViterbi::last_split(self)
    }
}

fn k7() -> Arc<Trellis> {
    Arc::new(Trellis::new(&ConvCode::k7_171_133()))
}

/// The noisy LLR streams of the run, one per rate and LLR type, generated once
/// and cut into each configuration's units.
struct Inputs<T: Llr> {
    streams: HashMap<String, NoisyLlrs<T>>,
}

impl<T: Llr> Inputs<T> {
    fn new() -> Self {
        Self { streams: HashMap::new() }
    }

    /// The stream of `rate`.
    fn stream(&mut self, rate: &str) -> anyhow::Result<&mut NoisyLlrs<T>> {
        Ok(match self.streams.entry(rate.to_string()) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(v) => {
                let tile = TileConfig::new(256, 20, 20, Traceback::Serial)?;
                let puncture = PuncturePattern::standard(rate)?;
                let setup = ConvSetup { trellis: k7(), puncture, mode: ViterbiMode::Tiled(tile), frame_bits: tile.f, i8_scale: None };
                v.insert(NoisyLlrs::new(&setup, BENCH_EBN0_DB, 1)?)
            }
        })
    }

    /// Two batches of `dec`'s units of `tile` at `rate` (`on_load`: as sent),
    /// or one when `one`.
    fn for_decoder(&mut self, dec: &GpuViterbi<T>, tile: TileConfig, rate: &str, on_load: bool, one: bool) -> anyhow::Result<Vec<T>> {
        let batches = if one { 1 } else { 2 };
        let bits = (batches * dec.limit().units * tile.unit_bits()) as u64;
        Ok(self.stream(rate)?.units(ViterbiMode::Tiled(tile), on_load, bits)?.0)
    }
}

fn decoder<T: Llr>(tile: TileConfig, survivors: SurvivorMemory, punctured: Option<&PuncturePattern>, o: &GpuBenchOptions) -> anyhow::Result<GpuViterbi<T>> {
    let pipeline = PipelineOptions { device: o.device, slots: o.slots, ..Default::default() };
    GpuViterbi::<T>::new(k7(), tile, punctured, &pipeline, ViterbiTuning { survivors, ..Default::default() })
}

/// Run the GPU Viterbi benchmark and print its report.
pub fn bench_viterbi(o: &GpuBenchOptions) -> anyhow::Result<()> {
    let info = crate::gpu::devices()?.into_iter().nth(o.device).ok_or_else(|| anyhow::anyhow!("CUDA device {} does not exist", o.device))?;
    println!(
        "# GPU Viterbi, K=7 (171,133) r=1/2, on {} ({} SMs, sm_{}{}), {} tiles per work unit, noisy LLRs at Eb/N0 {BENCH_EBN0_DB} dB",
        info.name, info.sms, info.compute_capability.0, info.compute_capability.1, o.group
    );
    let tile = |f, v2, tb| -> anyhow::Result<TileConfig> { Ok(TileConfig::new(f, 20, v2, tb)?.with_group(o.group)?) };
    let (mut i8s, mut f32s) = (Inputs::<i8>::new(), Inputs::<f32>::new());
    if let Some(rate) = &o.only_rate {
        return punctured(o, &[rate.as_str()], &mut i8s);
    }

    println!("\n## Headline: f=256, v1=20 (kernel-only = device-resident LLRs; end-to-end = pageable host memory in and out, {} slots)\n", o.slots);
    println!("| traceback | v2 | LLR | survivors | tiles/batch | kernel-only Gb/s | end-to-end Gb/s | {} |", EndToEnd::SPLIT_HEADER);
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    // Serial v2=20 and parallel f0=32 v2=30 lose ≤ 0.05 dB against the full-frame
    // decoder (BENCHMARKS.md, Tables II and III); f0=32 v2=45 is the paper's pick.
    // The floors go under the headline's first row: one batch of its bits.
    let mut first_batch_bits = None;
    for (tb, v2) in [(Traceback::Serial, 20), (Traceback::Parallel { f0: 32 }, 30), (Traceback::Parallel { f0: 32 }, 45)] {
        for survivors in [SurvivorMemory::Auto, SurvivorMemory::Shared, SurvivorMemory::Global] {
            let bits = headline(tile(256, v2, tb)?, survivors, o, &mut i8s)?;
            first_batch_bits = first_batch_bits.or(bits);
        }
        headline(tile(256, v2, tb)?, SurvivorMemory::Auto, o, &mut f32s)?;
    }
    drop(f32s);
    host_threads(tile(256, 20, Traceback::Serial)?, o, &mut i8s)?;
    if let Some(bits) = first_batch_bits {
        // 2 bytes of i8 LLRs per bit.
        host_floor(o.device, 2, bits)?;
        copy_engine(o.device, 2 * bits)?;
    }
    punctured(o, &["2/3", "3/4", "7/8"], &mut i8s)?;
    if o.tables {
        table(o, &mut i8s, "Table IV layout: serial traceback, f × v2, i8, kernel-only Gb/s", "v2 \\ f", &[10, 20, 30, 40], &[32, 64, 128, 256, 512], |v2, f| {
            tile(f, v2, Traceback::Serial)
        })?;
        table(o, &mut i8s, "Table V layout: parallel traceback, f=256, f0 × v2, i8, kernel-only Gb/s", "v2 \\ f0", &[25, 30, 35, 40, 45], &[8, 16, 24, 32, 40, 48, 56], |v2, f0| {
            tile(256, v2, Traceback::Parallel { f0 })
        })?;
    }
    Ok(())
}

/// End to end against the pipeline's host threads, for `tile` with i8 LLRs
/// and survivors in global memory: staging must outrun the copy engine, and
/// every thread more takes host memory bandwidth from it.
fn host_threads(tile: TileConfig, o: &GpuBenchOptions, inputs: &mut Inputs<i8>) -> anyhow::Result<()> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "\n## Host threads: {} v2={}, i8, global survivors, end to end ({} slots; the default is {} of the {cores} cores)\n",
        tile.traceback,
        tile.v2,
        o.slots,
        default_host_threads()
    );
    println!("| host threads | end-to-end Gb/s | H2D ms | stage ms | unpack ms | wall ms/batch |");
    println!("|---|---|---|---|---|---|");
    let mut counts = vec![4, 6, 8, 12, 16, cores];
    counts.retain(|&n| n <= cores);
    counts.sort_unstable();
    counts.dedup();
    for n in counts {
        let label = format!("{} v2={} i8, {}", tile.traceback, tile.v2, crate::codes::words::count_of(n as u64, "host thread"));
        crate::figures::measuring(&label);
        let pipeline = PipelineOptions { device: o.device, slots: o.slots, host_threads: n, ..Default::default() };
        let tuning = ViterbiTuning { survivors: SurvivorMemory::Global, ..Default::default() };
        let mut dec = GpuViterbi::<i8>::new(k7(), tile, None, &pipeline, tuning)?;
        let units = inputs.for_decoder(&dec, tile, "1/2", false, false)?;
        let e = end_to_end(&mut dec, &units, o.batches)?;
        crate::figures::row("host threads", label, &e.figures())?;
        println!("| {n} | {:.1} | {:.2} | {:.2} | {:.2} | {:.2} |", e.gbps, e.h2d_ms, e.stage_ms, e.unpack_ms, e.wall_ms);
    }
    Ok(())
}

/// Punctured rates both ways: depunctured on the host (the Depuncture block,
/// one thread, then the decoder takes n LLRs per stage) and by the kernel as it
/// loads (only the sent LLRs cross PCIe). i8 LLRs, serial traceback v2=20, f
/// the multiple of both the period and 32 nearest 256 (tiles start on the
/// period, and whole output words keep the host's unpacking on its fast path).
fn punctured(o: &GpuBenchOptions, rates: &[&str], inputs: &mut Inputs<i8>) -> anyhow::Result<()> {
    println!("\n## Punctured K=7, i8, serial v2=20: depunctured on the host or by the kernel ({} slots)\n", o.slots);
    println!("| rate | f | depunctured by | LLR bytes/bit | kernel-only Gb/s | end-to-end Gb/s | H2D ms | kernel ms | stage ms | host depuncture Gb/s (1 thread) |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for &rate in rates {
        let pattern = PuncturePattern::standard(rate)?;
        let step = lcm(32, pattern.period());
        let f = (256 + step / 2) / step * step;
        let tile = TileConfig::new(f, 20, 20, Traceback::Serial)?.with_group(o.group)?;
        for (by, on_load) in [("host", false), ("kernel", true)] {
            let label = format!("rate {rate} f={f} depunctured by the {by}");
            crate::figures::measuring(&label);
            let mut dec = decoder::<i8>(tile, SurvivorMemory::Auto, on_load.then_some(&pattern), o)?;
            let units = inputs.for_decoder(&dec, tile, rate, on_load, false)?;
            let mut host_gbps = None;
            let host_col = if on_load {
                "—".to_string()
            } else {
                // What the Depuncture block costs per information bit, on one thread.
                let bits = 64 << 20;
                let sent = inputs.stream(rate)?.sent(bits)?;
                let mut full = Vec::with_capacity(2 * bits);
                let t = Instant::now();
                Depuncturer::new(pattern.clone()).depuncture(sent, &mut full);
                let gbps = bits as f64 / t.elapsed().as_secs_f64() / 1e9;
                host_gbps = Some(gbps);
                format!("{gbps:.2}")
            };
            let k = kernel_only(&mut dec, &units, o.reps)?;
            let e = end_to_end(&mut dec, &units, o.batches)?;
            let bytes = dec.shapes()[0].items as f64 / dec.shapes()[0].bits as f64;
            let mut figures = vec![("LLR bytes per bit", bytes, "B/bit"), ("kernel-only", k, "Gb/s")];
            figures.extend(e.figures());
            figures.extend(host_gbps.map(|g| ("host depuncture, 1 thread", g, "Gb/s")));
            crate::figures::row("punctured", label, &figures)?;
            println!(
                "| {rate} | {f} | {by} | {bytes:.2} | {k:.1} | {:.1} | {:.2} | {:.2} | {:.2} | {host_col} |",
                e.gbps, e.h2d_ms, e.kernel_ms, e.stage_ms
            );
        }
    }
    Ok(())
}

/// One headline row; the information bits of one batch when the decoder could be built.
fn headline<T: Llr>(tile: TileConfig, survivors: SurvivorMemory, o: &GpuBenchOptions, inputs: &mut Inputs<T>) -> anyhow::Result<Option<usize>> {
    let mut dec = match decoder::<T>(tile, survivors, None, o) {
        Ok(d) => d,
        Err(e) => {
            println!("| {} | {} | {} | {survivors:?} | — | {e:#} |", tile.traceback, tile.v2, T::NAME);
            return Ok(None);
        }
    };
    let units = inputs.for_decoder(&dec, tile, "1/2", false, false)?;
    let survivors_at = if dec.ring_global() { "global" } else { "shared" };
    let label = format!("{} v2={} {} {survivors:?} survivors ({survivors_at})", tile.traceback, tile.v2, T::NAME);
    crate::figures::measuring(&label);
    let k = kernel_only(&mut dec, &units, o.reps)?;
    let e = end_to_end(&mut dec, &units, o.batches)?;
    let mut figures = vec![("kernel-only", k, "Gb/s")];
    figures.extend(e.figures());
    crate::figures::row("headline f=256 v1=20", label, &figures)?;
    println!(
        "| {} | {} | {} | {} | {} | {k:.1} | {:.1} | {} |",
        tile.traceback,
        tile.v2,
        T::NAME,
        survivors_at,
        dec.limit().units * tile.group,
        e.gbps,
        e.split_cells()
    );
    Ok(Some(dec.limit().units * tile.unit_bits()))
}

#[allow(clippy::too_many_arguments)]
fn table(
    o: &GpuBenchOptions,
    inputs: &mut Inputs<i8>,
    title: &str,
    corner: &str,
    rows: &[usize],
    cols: &[usize],
    tile: impl Fn(usize, usize) -> anyhow::Result<TileConfig> + Sync,
) -> anyhow::Result<()> {
    // Compile every cell's kernel in parallel first (NVRTC takes seconds each),
    // with one-unit batches so that little memory is held meanwhile.
    let cells: Vec<TileConfig> = rows.iter().flat_map(|&r| cols.iter().map(move |&c| (r, c))).map(|(r, c)| tile(r, c)).collect::<anyhow::Result<_>>()?;
    std::thread::scope(|s| {
        for chunk in cells.chunks(cells.len().div_ceil(16)) {
            s.spawn(move || {
                for &t in chunk {
                    let pipeline = PipelineOptions { device: o.device, slots: 1, batch_units: 1, ..Default::default() };
                    let _ = GpuViterbi::<i8>::new(k7(), t, None, &pipeline, ViterbiTuning::default());
                }
            });
        }
    });
    println!("\n## {title}\n");
    println!("| {corner} | {} |", cols.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(" | "));
    println!("|---|{}", "---|".repeat(cols.len()));
    for (i, r) in rows.iter().enumerate() {
        let mut line = format!("| {r} |");
        for (t, c) in cells[i * cols.len()..(i + 1) * cols.len()].iter().zip(cols) {
            let (row_name, col_name) = corner.split_once(" \\ ").unwrap_or((corner, ""));
            let label = format!("{row_name}={r} {col_name}={c}");
            crate::figures::measuring(&format!("{title}: {label}"));
            let mut dec = decoder::<i8>(*t, SurvivorMemory::Auto, None, o)?;
            let units = inputs.for_decoder(&dec, *t, "1/2", false, true)?;
            let g = kernel_only(&mut dec, &units, o.reps)?;
            crate::figures::row(title, label, &[("kernel-only", g, "Gb/s")])?;
            line += &format!(" {g:.1}{} |", if dec.ring_global() { "ᵍ" } else { "" });
        }
        println!("{line}");
    }
    println!("\nᵍ: survivors in global memory (Auto placement).");
    Ok(())
}
