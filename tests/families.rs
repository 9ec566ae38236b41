//! What must hold for every code family, written once and run for each (a
//! new family adds a line to [`cases`], not a copy of a test): its decoders
//! refuse bad batches with one clear error and go on decoding; on a GPU its
//! GPU decoder gives the CPU decoder's bits, reports and soft output on
//! fresh random inputs, from poisoned buffers; its shipped flowgraph counts
//! what its link simulator counts for the same seed.

use gpufec::codes::decode::{Batch, BatchDecoder, Decoded, UnitInput, UnitSpan};
use gpufec::codes::llr::Llr;
use gpufec::flowgraph::family::{Code, DecoderBuild, decoder, family, families, noisy};
use gpufec::flowgraph::{BuildOptions, FlowgraphFile, Override, build, run};
use gpufec::gpu::{Backend, BackendOptions, PipelineOptions};
use gpufec::codes::sim::{StopRule, run_point};
use gpufec::blocks::BerCounts;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

mod common;

/// One family's test case.
struct Case {
    /// Its name in messages.
    name: &'static str,
    /// The family.
    family: &'static str,
    /// Its settings: explicit where a backend would choose otherwise, so
    /// that both backends decode the same thing.
    settings: Value,
    /// Where its decoder makes some errors: the Eb/N0 of its noisy input.
    ebn0_db: f64,
    /// The point of the family's axis where its link makes some errors
    /// (Eb/N0 again, or a channel probability).
    x: f64,
    /// Largest relative difference between the GPU's and the CPU's soft
    /// output (0: bit for bit).
    soft_tolerance: f32,
    /// Whether the family's GPU decoder decodes it (else `gpu` is refused,
    /// with the reason, and `auto` takes the CPU).
    gpu: bool,
    /// A shipped flowgraph of the family, and runs of it: the `--set`s of
    /// each (short and noisy ones, which the link must count exactly).
    flowgraph: &'static str,
    runs: &'static [&'static [&'static str]],
}

/// Every family, one case (or a few) each.
fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "conv, rate 3/4 depunctured by the decoder",
            family: "conv",
            settings: json!({ "rate": "3/4", "tile": "63,32,40", "group": 4 }),
            ebn0_db: 3.0,
            x: 3.0,
            soft_tolerance: 0.0,
            gpu: true,
            flowgraph: "flowgraphs/viterbi_awgn.toml",
            // 300001 is not a multiple of the work unit nor of the frame.
            runs: &[
                &["source.total=300001", "vars.rate=1/2", "vars.ebn0_db=3", "vars.seed=7"],
                &["source.total=300001", "vars.rate=3/4", "vars.ebn0_db=4.5", "vars.seed=11", "conv.depuncture=block"],
                &["source.total=300001", "vars.rate=3/4", "vars.ebn0_db=4.5", "vars.seed=11"],
                &["source.total=300001", "vars.rate=2/3", "vars.ebn0_db=3.5", "vars.seed=3", "channel.llr=\"f32\"", "depuncture.llr=\"f32\"", "decoder.llr=\"f32\""],
            ],
        },
        Case {
            name: "conv, CCSDS: second output inverted, NASA-DSN order, rate 3/4",
            family: "conv",
            settings: json!({ "invert": "01", "order": "nasa-dsn", "rate": "3/4", "tile": "63,32,40", "group": 4 }),
            ebn0_db: 3.0,
            x: 3.0,
            soft_tolerance: 0.0,
            gpu: true,
            flowgraph: "flowgraphs/viterbi_awgn.toml",
            runs: &[&["source.total=300001", "vars.rate=1/2", "vars.ebn0_db=3", "vars.seed=5", "conv.invert=\"01\"", "conv.order=\"nasa-dsn\""]],
        },
        Case {
            name: "conv, terminated frames",
            family: "conv",
            settings: json!({ "mode": "terminated", "frame": 500, "rate": "1/3" }),
            ebn0_db: 1.0,
            x: 1.0,
            soft_tolerance: 0.0,
            // The GPU Viterbi decoder decodes tiles of a stream only.
            gpu: false,
            flowgraph: "flowgraphs/viterbi_awgn.toml",
            runs: &[&["vars.rate=1/3", "conv.mode=terminated", "conv.frame=500", "vars.ebn0_db=1", "source.total=200000"]],
        },
        Case {
            name: "turbo code blocks, P = 8 PIVIDSTW",
            family: "turbo",
            settings: json!({ "block": 1024, "subblocks": 8, "guard": "pividstw", "window": 8, "iterations": 4, "early_stop": "stable" }),
            ebn0_db: 0.6,
            x: 0.6,
            soft_tolerance: 0.0,
            gpu: true,
            flowgraph: "flowgraphs/turbo_awgn.toml",
            runs: &[
                &["turbo.block=1024", "vars.ebn0_db=0.6", "source.total=307200"],
                &["turbo.block=1024", "vars.ebn0_db=0.6", "source.total=307200", "channel.llr=\"f32\"", "decoder.llr=\"f32\""],
            ],
        },
        Case {
            name: "turbo transport blocks, two code blocks, rv 2",
            family: "turbo",
            settings: json!({ "tbs": 6200, "coded": 12000, "rv": 2, "iterations": 4, "early_stop": "crc", "subblocks": 4, "guard": "pivi" }),
            ebn0_db: 1.6,
            x: 1.6,
            soft_tolerance: 0.0,
            gpu: true,
            flowgraph: "flowgraphs/turbo_tb_awgn.toml",
            runs: &[
                &["vars.tbs=2000", "vars.coded=6072", "vars.rv=2", "vars.ebn0_db=0.6", "source.total=300000", "channel.llr=\"f32\"", "decoder.llr=\"f32\""],
                &["vars.tbs=7000", "vars.coded=14000", "vars.ebn0_db=1.3", "source.total=350000"],
            ],
        },
        Case {
            name: "sync, sparse codebook repeated, a stream's windows",
            family: "sync",
            // The sparse codebook's symbol 0 is the all-zero word, as the refusal test's input needs.
            settings: json!({ "q": 16, "n": 8, "N": 40, "codebook": "sparse", "pi": 0.01, "pd": 0.01, "ps": 0.005 }),
            ebn0_db: 4.0,
            x: 0.01,
            // The GPU's recursions sum in another order than the CPU's.
            soft_tolerance: 1e-5,
            gpu: true,
            flowgraph: "flowgraphs/sync_bsid.toml",
            runs: &[&["sync.q=16", "sync.n=8", "sync.N=40", "vars.p=5e-3", "source.total=16000", "vars.seed=5"]],
        },
        Case {
            name: "polar (256, 128) GA, BP i8 model",
            family: "polar",
            settings: json!({ "n": 256, "k": 128, "construction": "ga:2", "iterations": 20, "early_stop": "g" }),
            ebn0_db: 2.5,
            x: 2.5,
            soft_tolerance: 0.0,
            gpu: true,
            flowgraph: "flowgraphs/polar_awgn.toml",
            runs: &[&["polar.n=256", "polar.k=128", "vars.ebn0_db=2.5", "source.total=128000"]],
        },
        Case {
            name: "polar 5G UCI, K = 100 in E = 200, BP i8 model",
            family: "polar",
            settings: json!({ "k": 100, "e": 200, "algorithm": "bp", "iterations": 15 }),
            ebn0_db: 3.5,
            x: 3.5,
            soft_tolerance: 0.0,
            gpu: true,
            flowgraph: "flowgraphs/polar_5g_awgn.toml",
            runs: &[&["vars.k=100", "vars.e=200", "polar.algorithm=\"bp\"", "polar.iterations=15", "vars.ebn0_db=3.5", "source.total=100000"]],
        },
    ]
}

fn code(case: &Case) -> Arc<dyn Code> {
    let f = family(case.family).unwrap_or_else(|| panic!("no family {}", case.family));
    let Value::Object(values) = case.settings.clone() else { panic!("settings are a JSON object") };
    (f.resolve)(values).unwrap_or_else(|e| panic!("{}: {e}", case.name))
}

#[test]
fn every_family_has_a_case() {
    for f in families() {
        assert!(cases().iter().any(|c| c.family == f.name), "family {} has no case here", f.name);
    }
}

/// Small batches, so that a batch over the limit is small too, and output
/// buffers poisoned before every kernel.
fn build_on(backend: Backend) -> DecoderBuild {
    let pipeline = PipelineOptions { batch_units: 3, poison: Some(0xA5), ..Default::default() };
    DecoderBuild { options: BackendOptions { backend, cpu_threads: 0, pipeline }, ..Default::default() }
}

/// The backends this machine has.
fn backends(test: &str) -> Vec<Backend> {
    if common::have_gpu(test) { vec![Backend::Cpu, Backend::Gpu] } else { vec![Backend::Cpu] }
}

fn refuses<T: Llr + From<i8>>(case: &Case, backend: Backend) {
    let code = code(case);
    let what = format!("{} on {backend}, {} LLRs", case.name, T::NAME);
    let built = decoder::<T>(code.as_ref(), &build_on(backend));
    if backend == Backend::Gpu && !case.gpu {
        let e = built.err().unwrap_or_else(|| panic!("{what}: the GPU decoded a case it does not take"));
        assert!(!format!("{e:#}").is_empty(), "{what}");
        return;
    }
    let (mut d, _) = built.unwrap_or_else(|e| panic!("{what}: {e:#}"));
    let unit = d.shapes()[0].items;
    let good = T::from(8);
    if T::NAME == "f32" {
        let mut nan = vec![good; unit];
        nan[17] = T::from_llr(f32::NAN, &gpufec::codes::channel::Quantizer::new(1.0).unwrap());
        let e = d.submit(&Batch::uniform(&nan, unit).unwrap()).unwrap_err();
        assert!(e.to_string().contains("index 17"), "{what}: {e}");
    }
    // One LLR short of a unit of exact length, or one over a unit of up to
    // its items (one over an exact one could exceed a batch of one unit's items first).
    let wrong = if d.shapes()[0].input == UnitInput::Exact { unit - 1 } else { unit + 1 };
    let items = vec![good; wrong];
    let spans = [UnitSpan { start: 0, len: wrong, format: 0 }];
    let e = d.submit(&Batch::spans(&items, &spans).unwrap()).unwrap_err();
    assert!(e.to_string().contains("does not fit the decoder"), "{what}: {e}");
    let over = d.limit().units + 1;
    let many = vec![good; over * unit];
    let e = d.submit(&Batch::uniform(&many, unit).unwrap()).unwrap_err();
    assert!(e.to_string().contains("exceeds the decoder's limit"), "{what}: {e}");
    // Still decoding after the refusals: the all-zero codeword (all LLRs
    // "0" is it, unless the code sends outputs inverted).
    let mut out = Decoded::default();
    assert!(!d.collect(&mut out).unwrap(), "{what}: a refused batch is in flight");
    let mut out = Decoded::default();
    d.decode(&Batch::uniform(&vec![good; 2 * unit], unit).unwrap(), &mut out).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(!out.bits.is_empty(), "{what}");
    if case.settings.get("invert").is_none() {
        assert!(out.bits.iter().all(|&b| b == 0), "{what}");
    }
}

#[test]
fn every_decoder_refuses_bad_batches_and_goes_on() {
    for case in cases() {
        for backend in backends("every_decoder_refuses_bad_batches_and_goes_on") {
            refuses::<i8>(&case, backend);
            refuses::<f32>(&case, backend);
        }
    }
}

/// A seed that differs from run to run, so that every run checks new
/// inputs; a failure names it.
fn fresh_seed() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64)
}

fn decode<T: Llr>(d: &mut dyn BatchDecoder<T>, llrs: &[T]) -> Decoded {
    let mut out = Decoded::default();
    d.decode(&Batch::uniform(llrs, d.shapes()[0].items).unwrap(), &mut out).unwrap();
    out
}

fn gpu_equals_cpu<T: Llr>(case: &Case, seed: u64) {
    let code = code(case);
    let what = format!("{} ({} LLRs, seed {seed})", case.name, T::NAME);
    let input = noisy::<T>(code.as_ref(), 40_000, case.ebn0_db, seed).unwrap();
    let (mut cpu, mut gpu) = (build_on(Backend::Cpu), build_on(Backend::Gpu));
    for b in [&mut cpu, &mut gpu] {
        b.input_scale = input.scale;
        b.soft = true;
    }
    // Soft output where the family gives it, hard decisions otherwise.
    let soft = decoder::<T>(code.as_ref(), &cpu).is_ok();
    for b in [&mut cpu, &mut gpu] {
        b.soft = soft;
    }
    let (mut c, _) = decoder::<T>(code.as_ref(), &cpu).unwrap();
    let (mut g, choice) = decoder::<T>(code.as_ref(), &gpu).unwrap_or_else(|e| panic!("{what}: {e:#}"));
    assert!(choice.gpu, "{what}");
    let (want, got) = (decode(c.as_mut(), &input.llrs), decode(g.as_mut(), &input.llrs));
    assert_eq!(got.bits.len() as u64, input.info_bits, "{what}");
    assert!(got.bits == want.bits, "{what}: the GPU's bits differ from the CPU's");
    assert_eq!(got.reports, want.reports, "{what}");
    if case.soft_tolerance == 0.0 {
        assert!(got.soft == want.soft, "{what}: the GPU's soft output differs from the CPU's");
    } else {
        assert_eq!(got.soft.len(), want.soft.len(), "{what}");
        for (i, (g, w)) in got.soft.iter().zip(&want.soft).enumerate() {
            assert!((g - w).abs() <= case.soft_tolerance * w.abs().max(1.0), "{what}: soft output {i}: GPU {g}, CPU {w}");
        }
    }
    assert!(want.bits.contains(&1), "{what}: the input is not random");
}

#[test]
fn gpu_decoders_give_the_cpu_decoders_results_on_fresh_inputs() {
    if !common::have_gpu("gpu_decoders_give_the_cpu_decoders_results_on_fresh_inputs") {
        return;
    }
    let seed = fresh_seed();
    for case in cases().into_iter().filter(|c| c.gpu) {
        gpu_equals_cpu::<i8>(&case, seed);
        gpu_equals_cpu::<f32>(&case, seed);
    }
}

#[test]
fn shipped_flowgraphs_count_what_the_link_simulators_count() {
    for case in cases() {
        for sets in case.runs {
            let what = format!("{} {sets:?}", case.name);
            let mut file = FlowgraphFile::load(std::path::Path::new(case.flowgraph)).unwrap();
            for s in *sets {
                file.apply(&s.parse::<Override>().unwrap()).unwrap();
            }
            let built = build(&file, &BuildOptions { backend: Some(Backend::Cpu), profile: false, ..Default::default() }).unwrap_or_else(|e| panic!("{what}: {e:#}"));
            let (_, code) = built.codes.first().cloned().unwrap_or_else(|| panic!("{what}: the flowgraph names no code"));
            let var = |name: &str| file.vars.get(name).and_then(|v| v.as_float().or(v.as_integer().map(|i| i as f64))).unwrap_or_else(|| panic!("{what}: no vars.{name}"));
            let axis = family(case.family).map_or("ebn0_db", |f| f.axis.key);
            let (seed, x) = (var("seed") as u64, var(axis));
            let llr = match file.blocks.iter().find(|b| b.name == "decoder").and_then(|b| b.fields.get("llr")).and_then(|v| v.as_str()) {
                Some("f32") => gpufec::codes::LlrType::F32,
                _ => gpufec::codes::LlrType::I8,
            };
            let s = run(built, Duration::from_secs(600), &AtomicBool::new(false), |_| {}).unwrap_or_else(|e| panic!("{what}: {e:#}"));
            let got = s.ber[0].1;
            let (mut link, _) = code.link(llr, &BackendOptions { backend: Backend::Cpu, ..Default::default() }).unwrap();
            let stop = StopRule { max_bits: got.bits, max_errors: u64::MAX };
            let p = run_point(link.as_mut(), x, seed, stop, &AtomicBool::new(false), Duration::MAX, |_| {}).unwrap();
            let want = BerCounts { bits: p.bits, bit_errors: p.bit_errors, frames: p.frames, frame_errors: p.frame_errors, partial_bits: p.partial_bits };
            assert_eq!(got, want, "{what}");
            assert!(want.bit_errors >= 10 && want.frame_errors < want.frames, "{what}: {want:?}: too few errors, or nothing but errors, proves little");
        }
    }
}

/// Run `f` on a rayon pool of `threads` threads, as a machine of that many cores would.
fn on_threads<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
    rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(f)
}

#[test]
fn a_link_counts_the_same_errors_on_any_number_of_threads() {
    for case in cases() {
        let code = code(&case);
        let count = |threads: usize| {
            on_threads(threads, || {
                let options = BackendOptions { backend: Backend::Cpu, cpu_threads: threads, ..Default::default() };
                let (mut link, _) = code.link(code_llr(&case), &options).unwrap();
                let stop = StopRule { max_bits: 400_000, max_errors: u64::MAX };
                let p = run_point(link.as_mut(), case.x, 9, stop, &AtomicBool::new(false), Duration::MAX, |_| {}).unwrap();
                (p.bits, p.bit_errors, p.frame_errors, p.iterations)
            })
        };
        let one = count(1);
        assert!(one.1 >= 10, "{}: too few errors to mean anything: {one:?}", case.name);
        assert_eq!(count(2), one, "{}", case.name);
        assert_eq!(count(5), one, "{}", case.name);
    }
}

/// The LLR type a case's link decodes: the family's own.
fn code_llr(case: &Case) -> gpufec::codes::LlrType {
    family(case.family).map_or(gpufec::codes::LlrType::F32, |f| f.default_llr)
}
