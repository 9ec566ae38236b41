//! What the integration tests share (each test binary uses part of it): a
//! shipped flowgraph file run on the CPU with some fields replaced, and
//! whether a GPU test can run here.
#![allow(dead_code)]

use gpufec::flowgraph::{BuildOptions, FlowgraphFile, Override, Summary, build, run};
use gpufec::gpu::Backend;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// Run the flowgraph file at `path` on the CPU with each `--set` of `sets` applied.
pub fn run_file(path: &str, sets: &[&str]) -> anyhow::Result<Summary> {
    let mut file = FlowgraphFile::parse(path, &std::fs::read_to_string(path)?)?;
    for s in sets {
        file.apply(&s.parse::<Override>()?)?;
    }
    let built = build(&file, &BuildOptions { backend: Some(Backend::Cpu), profile: false })?;
    run(built, Duration::from_secs(3600), &AtomicBool::new(false), |_| {})
}

/// Whether the GPU tests can run; says `SKIPPED <test>` otherwise, and
/// fails when `GPUFEC_REQUIRE_GPU=1`.
pub fn have_gpu(test: &str) -> bool {
    match gpufec::gpu::available() {
        Ok(()) => true,
        Err(e) if std::env::var("GPUFEC_REQUIRE_GPU").as_deref() == Ok("1") => panic!("{test}: GPUFEC_REQUIRE_GPU=1 but {e:#}"),
        Err(e) => {
            skipped(test, &e);
            false
        }
    }
}

/// Whether NVRTC can compile kernels here (no GPU needed); as [`have_gpu`] otherwise.
pub fn have_nvrtc(test: &str) -> bool {
    match gpufec::gpu::nvrtc_available() {
        Ok(()) => true,
        Err(e) if std::env::var("GPUFEC_REQUIRE_GPU").as_deref() == Ok("1") => panic!("{test}: GPUFEC_REQUIRE_GPU=1 but {e:#}"),
        Err(e) => {
            skipped(test, &e);
            false
        }
    }
}

/// Say something where the harness does not swallow it (it captures
/// `eprintln!`, not writes to the stderr handle).
pub fn say(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Say that a test was skipped, and why.
pub fn skipped(test: &str, why: &anyhow::Error) {
    say(&format!("SKIPPED {test}: {why:#}"));
}
