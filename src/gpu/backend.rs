//! Where a decoder runs, and the one place that decides it for every family.

/// Where a decoder runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Backend {
    /// The GPU when one is usable, otherwise the CPU.
    #[default]
    Auto,
    /// The CPU reference decoder on all cores.
    Cpu,
    /// The GPU; an error when none is usable.
    Gpu,
}

impl std::str::FromStr for Backend {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> anyhow::Result<Self> {
        match s.trim() {
            "auto" => Ok(Backend::Auto),
            "cpu" => Ok(Backend::Cpu),
            "gpu" => Ok(Backend::Gpu),
            other => anyhow::bail!("backend '{other}' is not one of auto, cpu, gpu"),
        }
    }
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Backend::Auto => "auto",
            Backend::Cpu => "cpu",
            Backend::Gpu => "gpu",
        })
    }
}

/// Where a decoder ended up, and why not on the GPU when `auto` fell back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// Whether it runs on the GPU.
    pub gpu: bool,
    /// Why `auto` did not take the GPU.
    pub why_not_gpu: Option<String>,
}

impl Choice {
    /// `cpu` or `gpu`.
    pub fn name(&self) -> &'static str {
        if self.gpu { "gpu" } else { "cpu" }
    }
}

impl std::fmt::Display for Choice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.why_not_gpu {
            Some(why) => write!(f, "cpu (no GPU: {why})"),
            None => f.write_str(self.name()),
        }
    }
}

/// Build what runs on `backend`: `gpu()` for [`Backend::Gpu`] (its error is
/// the caller's), `cpu()` for [`Backend::Cpu`], and for [`Backend::Auto`]
/// `gpu()` when it succeeds, else `cpu()` with the GPU's error as the reason.
/// Every family's decoders, and the benchmarks, choose through this.
///
/// # Example
/// ```
/// use gpufec::gpu::{Backend, select};
/// let (what, choice) = select(Backend::Auto, || anyhow::bail!("no CUDA driver"), || Ok("cpu decoder")).unwrap();
/// assert_eq!(what, "cpu decoder");
/// assert_eq!(choice.to_string(), "cpu (no GPU: no CUDA driver)");
/// assert!(select(Backend::Gpu, || anyhow::bail!("no CUDA driver"), || Ok("cpu decoder")).is_err());
/// ```
pub fn select<D>(
    backend: Backend,
    gpu: impl FnOnce() -> anyhow::Result<D>,
    cpu: impl FnOnce() -> anyhow::Result<D>,
) -> anyhow::Result<(D, Choice)> {
    match backend {
        Backend::Cpu => Ok((cpu()?, Choice { gpu: false, why_not_gpu: None })),
        Backend::Gpu => Ok((gpu()?, Choice { gpu: true, why_not_gpu: None })),
        Backend::Auto => match gpu() {
            Ok(d) => Ok((d, Choice { gpu: true, why_not_gpu: None })),
            Err(e) => Ok((cpu()?, Choice { gpu: false, why_not_gpu: Some(format!("{e:#}")) })),
        },
    }
}

/// Where and how a decoder runs: the options every family's decoder takes
/// beside its own code parameters.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BackendOptions {
    /// Where it runs.
    pub backend: Backend,
    /// CPU decoder threads (0 = all cores).
    pub cpu_threads: usize,
    /// The GPU pipeline.
    pub pipeline: super::PipelineOptions,
}
