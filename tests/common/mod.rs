//! What the flowgraph tests share: a shipped flowgraph file run on the CPU
//! with some fields replaced.

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
