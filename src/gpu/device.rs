//! Device discovery through the dynamically loaded CUDA driver.

/// One CUDA device as `gpufec info` lists it.
#[derive(Debug, Clone)]
pub struct DeviceInfo {
    /// Device index.
    pub index: usize,
    /// Marketing name.
    pub name: String,
    /// Streaming multiprocessors.
    pub sms: u32,
    /// Global memory, bytes.
    pub memory_bytes: u64,
    /// Compute capability (major, minor).
    pub compute_capability: (u32, u32),
}

/// The CUDA devices found; an error says in one sentence why CUDA is unusable
/// (no driver library, driver too old, ...).
pub fn devices() -> anyhow::Result<Vec<DeviceInfo>> {
    anyhow::bail!("GPU support is not built into this version of gpufec")
}

/// `Ok` when at least one CUDA device is usable, otherwise the reason in one sentence.
pub fn available() -> anyhow::Result<()> {
    match devices()? {
        d if d.is_empty() => anyhow::bail!("no CUDA device found"),
        _ => Ok(()),
    }
}
