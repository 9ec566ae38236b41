//! Device discovery and contexts, through the CUDA driver loaded at run time.

use cudarc::driver::{CudaContext, DriverError, result, sys};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

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
    /// CUDA driver version as the driver reports it (e.g. 13000 for 13.0).
    pub driver_version: i32,
    /// Shared memory of one SM, bytes: what all resident blocks share, so it
    /// bounds how many blocks of a given shared-memory size fit an SM.
    pub smem_per_sm: usize,
    /// Shared memory one block may use after opting in
    /// (`CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`), bytes: the most a
    /// single block can be given.
    pub smem_per_block_optin: usize,
    /// Shared memory one block may use without opting in, bytes (48 KiB on
    /// every GPU so far): beyond it a kernel must set the attribute above.
    pub smem_per_block: usize,
    /// Shared memory the system reserves per resident block, bytes: to be
    /// added to each block's own when counting blocks per SM.
    pub smem_reserved_per_block: usize,
    /// L2 cache, bytes: data reused across blocks (survivors in global memory,
    /// lookup tables) stays on chip when it fits.
    pub l2_bytes: usize,
}

/// A CUDA failure as the decoder contract reports it; an input error found
/// while staging keeps its own type.
pub(crate) fn device_error(e: anyhow::Error) -> crate::codes::CodeError {
    match e.downcast::<crate::codes::CodeError>() {
        Ok(c) => c,
        Err(e) => crate::codes::CodeError::Device(format!("{e:#}")),
    }
}

/// Turn a driver error into one sentence naming the call that failed.
pub(crate) fn cuda(what: &'static str) -> impl FnOnce(DriverError) -> anyhow::Error {
    move |e| anyhow::anyhow!("CUDA {what} failed: {e}")
}

/// Run a discovery step, turning a panic of the dynamic loader (a driver too old
/// to have a symbol) into an error instead of a crash. (The panic hook is left
/// alone: swapping a process-wide hook races with other threads.)
fn guarded<T>(f: impl FnOnce() -> anyhow::Result<T> + std::panic::UnwindSafe) -> anyhow::Result<T> {
    match std::panic::catch_unwind(f) {
        Ok(r) => r,
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            anyhow::bail!("the CUDA driver could not be used: {msg}")
        }
    }
}

fn driver_loaded() -> anyhow::Result<()> {
    // SAFETY: only tries to open the library; no symbol is called.
    if !unsafe { sys::is_culib_present() } {
        anyhow::bail!("no CUDA driver on this machine (libcuda.so not found)");
    }
    Ok(())
}

/// The CUDA devices found. An error says in one sentence why CUDA is unusable
/// (no driver library, driver too old, ...); no devices is `Ok(vec![])`.
pub fn devices() -> anyhow::Result<Vec<DeviceInfo>> {
    driver_loaded()?;
    guarded(|| {
        if let Err(e) = result::init() {
            if e.0 == sys::cudaError_enum::CUDA_ERROR_NO_DEVICE {
                return Ok(Vec::new());
            }
            return Err(cuda("cuInit")(e));
        }
        let mut version = 0;
        // SAFETY: writes one int.
        unsafe { sys::cuDriverGetVersion(&mut version) }.result().map_err(cuda("cuDriverGetVersion"))?;
        let count = result::device::get_count().map_err(cuda("cuDeviceGetCount"))?;
        (0..count.max(0))
            .map(|i| {
                let dev = result::device::get(i).map_err(cuda("cuDeviceGet"))?;
                // SAFETY: `dev` is a valid device handle from cuDeviceGet.
                let attr = |a| unsafe { result::device::get_attribute(dev, a) }.map_err(cuda("cuDeviceGetAttribute"));
                // Limits are never negative; a driver saying otherwise is read as 0.
                let bytes = |a| attr(a).map(|v| v.max(0) as usize);
                use sys::CUdevice_attribute::*;
                Ok(DeviceInfo {
                    index: i as usize,
                    name: result::device::get_name(dev).map_err(cuda("cuDeviceGetName"))?,
                    sms: attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32,
                    // SAFETY: as above.
                    memory_bytes: unsafe { result::device::total_mem(dev) }.map_err(cuda("cuDeviceTotalMem"))? as u64,
                    compute_capability: (
                        attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)? as u32,
                        attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)? as u32,
                    ),
                    driver_version: version,
                    smem_per_sm: bytes(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)?,
                    smem_per_block_optin: bytes(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?,
                    smem_per_block: bytes(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)?,
                    smem_reserved_per_block: bytes(CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK)?,
                    l2_bytes: bytes(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)?,
                })
            })
            .collect()
    })
}

/// `Ok` when at least one CUDA device is usable, otherwise the reason in one sentence.
pub fn available() -> anyhow::Result<()> {
    match devices()? {
        d if d.is_empty() => anyhow::bail!("no CUDA device found"),
        _ => Ok(()),
    }
}

/// The (primary) context of device `index`, shared by every decoder on it.
pub(crate) fn context(index: usize) -> anyhow::Result<Arc<CudaContext>> {
    static CONTEXTS: OnceLock<Mutex<HashMap<usize, Arc<CudaContext>>>> = OnceLock::new();
    let found = devices()?;
    if index >= found.len() {
        anyhow::bail!("CUDA device {index} does not exist ({} found)", found.len());
    }
    let mut map = CONTEXTS.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    if let Some(c) = map.get(&index) {
        return Ok(c.clone());
    }
    let ctx = CudaContext::new(index).map_err(cuda("context creation"))?;
    map.insert(index, ctx.clone());
    Ok(ctx)
}

/// Information on the device of an existing context.
pub(crate) fn info_of(ctx: &CudaContext) -> anyhow::Result<DeviceInfo> {
    devices()?
        .into_iter()
        .nth(ctx.ordinal())
        .ok_or_else(|| anyhow::anyhow!("CUDA device {} disappeared", ctx.ordinal()))
}
