//! Faults on purpose, for the tests that show a GPU failure ends a chain
//! with CUDA's message and the device, never a hang and never wrong bits:
//! a kernel that traps, a kernel that never ends (the watchdog's case), a
//! device allocation that fails. A test asks through
//! [`PipelineOptions::fault`](super::PipelineOptions), a whole run through
//! the environment variable [`FAULT_VARIABLE`]; nothing else injects them.
//!
//! After a watchdog gave up on a batch its kernel still runs, and freeing
//! memory waits for the device: the device is marked [`wedged`], and its
//! buffers are left to the process's end instead of freed.

use super::compile::kernels;
use super::device::cuda;
use super::memory::DeviceBuf;
use cudarc::driver::{CudaContext, CudaFunction, result, sys};
use std::ffi::c_void;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The environment variable that injects a fault into every GPU pipeline
/// of a run: `trap:N`, `hang:N` (the N-th batch, from 1) or `oom`; with
/// `@D` after it (`trap:3@1`), into the pipelines of device D alone.
pub const FAULT_VARIABLE: &str = "GPUFEC_TEST_FAULT";

/// A fault the pipeline injects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The `batch`-th batch (from 1) runs a kernel that traps first: the
    /// context is lost, as after an illegal address.
    Trap {
        /// Which batch.
        batch: u64,
    },
    /// The `batch`-th batch runs a kernel that never ends first.
    Hang {
        /// Which batch.
        batch: u64,
    },
    /// The pipeline's device memory is asked for twice the device's memory.
    OutOfMemory,
}

impl Fault {
    /// `trap:N`, `hang:N` or `oom`.
    ///
    /// # Example
    /// ```
    /// use gpufec::gpu::Fault;
    /// assert_eq!(Fault::parse("trap:2").unwrap(), Fault::Trap { batch: 2 });
    /// assert_eq!(Fault::parse("oom").unwrap(), Fault::OutOfMemory);
    /// assert!(Fault::parse("hang:0").is_err() && Fault::parse("melt").is_err());
    /// ```
    pub fn parse(text: &str) -> anyhow::Result<Self> {
        let bad = || anyhow::anyhow!("{FAULT_VARIABLE}={text}: give trap:N, hang:N (the N-th batch, from 1) or oom, and @D for device D alone");
        match text.trim().split_once(':') {
            None if text.trim() == "oom" => Ok(Self::OutOfMemory),
            Some((kind, n)) => {
                let batch: u64 = n.trim().parse().map_err(|_| bad())?;
                anyhow::ensure!(batch >= 1, bad());
                match kind.trim() {
                    "trap" => Ok(Self::Trap { batch }),
                    "hang" => Ok(Self::Hang { batch }),
                    _ => Err(bad()),
                }
            }
            None => Err(bad()),
        }
    }

    /// A fault and the device it strikes: `trap:3@1` is `trap:3` on device 1
    /// alone; without `@D`, every device.
    ///
    /// # Example
    /// ```
    /// use gpufec::gpu::Fault;
    /// assert_eq!(Fault::parse_on("trap:3@1").unwrap(), (Fault::Trap { batch: 3 }, Some(1)));
    /// assert_eq!(Fault::parse_on("oom").unwrap(), (Fault::OutOfMemory, None));
    /// assert!(Fault::parse_on("trap:3@").is_err() && Fault::parse_on("trap:3@x").is_err());
    /// ```
    pub fn parse_on(text: &str) -> anyhow::Result<(Self, Option<usize>)> {
        let Some((fault, device)) = text.split_once('@') else { return Ok((Self::parse(text)?, None)) };
        let device = device.trim().parse().map_err(|_| anyhow::anyhow!("{FAULT_VARIABLE}={text}: @{device} is not a device index"))?;
        Ok((Self::parse(fault)?, Some(device)))
    }

    /// The fault `options` asks for, else the one [`FAULT_VARIABLE`] names
    /// if it strikes `device`.
    pub(crate) fn of(asked: Option<Fault>, device: usize) -> anyhow::Result<Option<Fault>> {
        if asked.is_some() {
            return Ok(asked);
        }
        let Some(text) = std::env::var(FAULT_VARIABLE).ok().filter(|v| !v.trim().is_empty()) else { return Ok(None) };
        Self::aimed(&text, device)
    }

    /// The fault `text` names if it strikes `device`.
    fn aimed(text: &str, device: usize) -> anyhow::Result<Option<Fault>> {
        let (fault, on) = Self::parse_on(text)?;
        Ok(on.is_none_or(|d| d == device).then_some(fault))
    }
}

/// What one pipeline needs to inject its fault.
pub(crate) struct Injector {
    fault: Fault,
    /// The trap or spin kernel.
    kernel: CudaFunction,
    /// The word the spin kernel waits on, zeroed.
    never: DeviceBuf,
    /// Batches queued so far.
    batches: u64,
}

impl Injector {
    /// The injector of `fault` on the device of `ctx` (none for a fault of
    /// allocation, which [`Self::allocate`] answers).
    pub(crate) fn new(ctx: &Arc<CudaContext>, fault: Fault) -> anyhow::Result<Option<Self>> {
        let entry = match fault {
            Fault::Trap { .. } => "fault_trap",
            Fault::Hang { .. } => "fault_spin",
            Fault::OutOfMemory => return Ok(None),
        };
        let kernel = kernels(ctx, "fault.cu", &[entry], &[])?.remove(0);
        let never = DeviceBuf::new(ctx, 4)?;
        // SAFETY: the buffer's own 4 bytes.
        unsafe { result::memset_d8_sync(never.ptr(), 0, 4) }.map_err(cuda("cuMemsetD8"))?;
        Ok(Some(Self { fault, kernel, never, batches: 0 }))
    }

    /// Queue the fault on `stream` when the batch being queued is the one it strikes.
    pub(crate) fn before_batch(&mut self, stream: sys::CUstream) -> anyhow::Result<()> {
        self.batches += 1;
        let (Fault::Trap { batch } | Fault::Hang { batch }) = self.fault else { return Ok(()) };
        if batch != self.batches {
            return Ok(());
        }
        let mut never = self.never.ptr();
        let mut params: [*mut c_void; 1] = [(&mut never as *mut sys::CUdeviceptr).cast()];
        let count = if matches!(self.fault, Fault::Trap { .. }) { 0 } else { 1 };
        // SAFETY: fault_trap takes no parameter, fault_spin one device pointer to a live word.
        unsafe { result::launch_kernel(self.kernel.cu_function(), (1, 1, 1), (1, 1, 1), 0, stream, &mut params[..count]) }
            .map_err(cuda("fault kernel launch"))
    }
}

/// The allocation a pipeline of `ctx` makes for a fault of memory: twice
/// the device's memory, which fails as a real shortage does.
pub(crate) fn allocate_too_much(ctx: &Arc<CudaContext>) -> anyhow::Result<DeviceBuf> {
    let total = super::device::info_of(ctx)?.memory_bytes;
    DeviceBuf::new(ctx, usize::try_from(total.saturating_mul(2)).unwrap_or(usize::MAX))
}

/// The CUDA errors after which, as CUDA documents each of them, the process
/// is left in an inconsistent state: later CUDA work of the process fails
/// the same way, on every device (seen on the lent H200s: a kernel that
/// trapped on one GPU failed the other GPUs' next waits), and only a new
/// process can use CUDA again.
const ENDS_THE_PROCESS: [&str; 10] = [
    "CUDA_ERROR_ILLEGAL_ADDRESS",
    "CUDA_ERROR_LAUNCH_TIMEOUT",
    "CUDA_ERROR_ASSERT",
    "CUDA_ERROR_HARDWARE_STACK_ERROR",
    "CUDA_ERROR_ILLEGAL_INSTRUCTION",
    "CUDA_ERROR_MISALIGNED_ADDRESS",
    "CUDA_ERROR_INVALID_ADDRESS_SPACE",
    "CUDA_ERROR_INVALID_PC",
    "CUDA_ERROR_LAUNCH_FAILED",
    "CUDA_ERROR_EXTERNAL_DEVICE",
];

/// Whether a device failure's message names one of the errors that leave
/// the whole process unable to use CUDA: no other device can take over.
pub(crate) fn ends_the_process(message: &str) -> bool {
    ENDS_THE_PROCESS.iter().any(|e| message.contains(e))
}

/// Devices whose work a watchdog gave up on, one bit each (indices ≥ 64 are never marked).
static WEDGED: AtomicU64 = AtomicU64::new(0);

/// Mark `device` wedged: a kernel of it runs that nobody waits for.
pub(crate) fn mark_wedged(device: usize) {
    if device < 64 {
        WEDGED.fetch_or(1 << device, Ordering::SeqCst);
    }
}

/// Whether a watchdog gave up on work of `device`: its memory is not freed
/// (freeing waits for the device, which would hang).
pub(crate) fn wedged(device: usize) -> bool {
    device < 64 && WEDGED.load(Ordering::SeqCst) & (1 << device) != 0
}

#[cfg(test)]
mod tests {
    use super::Fault;

    /// `@D` aims a fault at device D alone; without it, every device is struck.
    /// A kernel fault ends the process's CUDA; a watchdog's or an
    /// allocation's failure does not.
    #[test]
    fn kernel_faults_end_the_process_and_others_do_not() {
        assert!(super::ends_the_process("GPU 1: CUDA work on the GPU failed: DriverError(CUDA_ERROR_LAUNCH_FAILED, \"unspecified launch failure\")"));
        assert!(super::ends_the_process("GPU 0: CUDA host→device copy failed: DriverError(CUDA_ERROR_ILLEGAL_ADDRESS, \"an illegal memory access was encountered\")"));
        assert!(!super::ends_the_process("GPU 1: a batch was still on the GPU after the watchdog's 1.000 s (gpu_watchdog_ms); its kernel is left running"));
        assert!(!super::ends_the_process("GPU 0: CUDA could not allocate 1 bytes of device memory: DriverError(CUDA_ERROR_OUT_OF_MEMORY, \"out of memory\")"));
    }

    #[test]
    fn a_fault_strikes_the_device_it_names() {
        let trap = Some(Fault::Trap { batch: 3 });
        assert_eq!(Fault::aimed("trap:3@1", 1).unwrap(), trap);
        assert_eq!(Fault::aimed("trap:3@1", 0).unwrap(), None);
        assert_eq!(Fault::aimed("trap:3", 5).unwrap(), trap);
        assert_eq!(Fault::aimed(" hang:2 @ 0 ", 0).unwrap(), Some(Fault::Hang { batch: 2 }));
        for bad in ["trap:3@", "trap:3@-1", "melt@1", "trap:0@1"] {
            assert!(Fault::aimed(bad, 1).is_err(), "{bad} accepted");
        }
    }
}
