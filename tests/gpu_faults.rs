//! A GPU that fails ends the chain with CUDA's message and the device, in
//! one line and exit status 1, and in bounded time: never a hang, never
//! bits reported from a failed batch. Each fault is injected on purpose
//! (`GPUFEC_TEST_FAULT`, which every GPU pipeline reads) into a real run of
//! every family's shipped flowgraph on the GPU: a kernel that traps (the
//! context is lost, as after an illegal address), a device allocation that
//! fails, and a kernel that never ends, which the decoder's watchdog ends.
//! Needs a GPU: prints `SKIPPED <name>` and passes without one, unless
//! `GPUFEC_REQUIRE_GPU=1`.

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Each family's shipped flowgraph, with settings that make many small
/// batches so that the fault strikes mid-stream.
const RUNS: &[(&str, &[&str])] = &[
    ("flowgraphs/viterbi_awgn.toml", &["source.total=2e7", "decoder.gpu_batch_units=16"]),
    ("flowgraphs/turbo_awgn.toml", &["decoder.gpu_batch_units=16"]),
    ("flowgraphs/polar_awgn.toml", &["decoder.gpu_batch_units=256"]),
    ("flowgraphs/sync_bsid.toml", &["decoder.gpu_batch_units=64"]),
];

/// Longest a failing run may take, start-up and kernel compilation included.
const LIMIT: Duration = Duration::from_secs(120);

/// Run `gpufec run FILE --backend gpu` with `sets`, `extra` arguments and
/// the fault `fault` (none: ""), within [`LIMIT`].
fn run_with(file: &str, sets: &[&str], extra: &[&str], fault: &str) -> std::process::Output {
    let mut args = vec!["run".to_string(), file.to_string(), "--backend".into(), "gpu".into(), "--quiet".into()];
    for s in sets {
        args.extend(["--set".to_string(), s.to_string()]);
    }
    args.extend(extra.iter().map(|a| a.to_string()));
    let child = Command::new(env!("CARGO_BIN_EXE_gpufec"))
        .args(&args)
        .env("GPUFEC_TEST_FAULT", fault)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("gpufec starts");
    common::finish_within(child, LIMIT)
}

/// Run `gpufec run FILE --backend gpu` with `sets`, `extra` arguments and
/// the fault `fault`; the run must fail with one `error:` line holding each
/// of `want`, in time.
fn fails_with(file: &str, sets: &[&str], extra: &[&str], fault: &str, want: &[&str]) -> Duration {
    let started = Instant::now();
    let o = run_with(file, sets, extra, fault);
    let took = started.elapsed();
    let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    let what = format!("{file} with {fault}: status {:?}, stdout:\n{out}\nstderr:\n{err}", o.status.code());
    assert_eq!(o.status.code(), Some(1), "{what}");
    let error = err.lines().filter(|l| l.starts_with("error: ")).collect::<Vec<_>>();
    assert_eq!(error.len(), 1, "{what}");
    for w in want {
        assert!(error[0].contains(w), "lacks {w:?}: {what}");
    }
    // No summary claims bits from a run that failed.
    assert!(!out.contains("summary:"), "{what}");
    common::say(&format!("{file}, {fault}: exit 1 after {:.1} s: {}", took.as_secs_f64(), error[0]));
    took
}

#[test]
fn a_kernel_that_traps_fails_the_run_naming_the_device() {
    if !common::have_gpu("a_kernel_that_traps_fails_the_run_naming_the_device") {
        return;
    }
    for (file, sets) in RUNS {
        fails_with(file, sets, &[], "trap:3", &["GPU 0", "CUDA_ERROR"]);
    }
}

#[test]
fn a_device_allocation_that_fails_fails_the_run_naming_the_device() {
    if !common::have_gpu("a_device_allocation_that_fails_fails_the_run_naming_the_device") {
        return;
    }
    for (file, sets) in RUNS {
        fails_with(file, sets, &[], "oom", &["GPU 0", "CUDA_ERROR_OUT_OF_MEMORY"]);
    }
}

#[test]
fn a_kernel_that_never_ends_is_ended_by_the_watchdog() {
    if !common::have_gpu("a_kernel_that_never_ends_is_ended_by_the_watchdog") {
        return;
    }
    for (file, sets) in RUNS {
        let sets: Vec<&str> = sets.iter().copied().chain(["decoder.gpu_watchdog_ms=2000"]).collect();
        fails_with(file, &sets, &[], "hang:3", &["GPU 0", "watchdog", "2.000 s"]);
    }
}

/// The switch itself is checked: a value that is not a fault is refused
/// before any batch runs (the pipeline reads it as it is built).
#[test]
fn a_bad_fault_switch_is_refused() {
    if !common::have_gpu("a_bad_fault_switch_is_refused") {
        return;
    }
    fails_with(RUNS[0].0, RUNS[0].1, &[], "melt", &["GPUFEC_TEST_FAULT=melt", "trap:N"]);
}

/// The GPUs found, when there are two or more; else the test `name` says
/// it is skipped.
fn several_gpus(name: &str) -> Option<usize> {
    if !common::have_gpu(name) {
        return None;
    }
    let found = gpufec::gpu::devices().unwrap().len();
    if found < 2 {
        common::say(&format!("SKIPPED {name}: {found} GPU, needs 2"));
        return None;
    }
    Some(found)
}

/// Over several GPUs with `gpu_take_out`, a device that fails is taken out
/// and the others decode its batches: each family's shipped flowgraph on every GPU with
/// GPU 1's third batch never ending (the watchdog gives up on it after 1 s)
/// ends as the fault-free run does (the same BER line), and stderr names
/// GPU 1 and the watchdog. Needs two GPUs. (A kernel that traps cannot be
/// taken out so: after it CUDA serves no device of the process, see the
/// next test.)
#[test]
fn a_gpu_that_fails_among_several_is_taken_out_and_no_bit_is_lost() {
    let Some(found) = several_gpus("a_gpu_that_fails_among_several_is_taken_out_and_no_bit_is_lost") else { return };
    for (file, sets) in RUNS {
        let runs = ["", "hang:3@1"].map(|fault| {
            let o = run_with(file, sets, &["--gpu-devices", "all", "--set", "decoder.gpu_watchdog_ms=1000", "--set", "decoder.gpu_take_out=true"], fault);
            let (out, err) = (String::from_utf8_lossy(&o.stdout).to_string(), String::from_utf8_lossy(&o.stderr).to_string());
            assert!(o.status.success(), "{file} with {fault:?}: status {:?}\n{out}\n{err}", o.status.code());
            (out, err)
        });
        let [(clean, _), (faulted, err)] = &runs;
        assert_eq!(common::ber_line(clean), common::ber_line(faulted), "{file}: fault-free:\n{clean}\nGPU 1 hanging:\n{faulted}\n{err}");
        let said = err.lines().find(|l| l.contains("GPU 1 taken out")).unwrap_or_else(|| panic!("{file}: stderr names no device taken out:\n{err}"));
        assert!(said.contains("watchdog"), "{said}");
        common::say(&format!("{file}, hang:3@1 over {found} GPUs: {said}"));
    }
}

/// Over several GPUs with `gpu_take_out`, a kernel that traps on GPU 1
/// fails the run at once with CUDA's error and says why the others cannot
/// take over (without take-out no other is asked to): CUDA
/// documents that the process can then use no device again (on the lent
/// H200s the other GPUs' next waits failed with CUDA_ERROR_LAUNCH_FAILED).
/// Needs two GPUs.
#[test]
fn a_kernel_fault_among_several_gpus_fails_the_run_saying_why() {
    if several_gpus("a_kernel_fault_among_several_gpus_fails_the_run_saying_why").is_none() {
        return;
    }
    for (file, sets) in RUNS {
        fails_with(file, sets, &["--gpu-devices", "all", "--set", "decoder.gpu_take_out=true"], "trap:3@1", &["CUDA_ERROR_LAUNCH_FAILED", "serves no GPU of the process", "cannot take over"]);
    }
}
