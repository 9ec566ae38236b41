//! Owned device and pinned host buffers over cudarc's driver calls, each freed
//! on drop, every call checked.

use super::device::cuda;
use cudarc::driver::{CudaContext, result, sys};
use std::sync::Arc;

/// Device memory of `bytes` bytes.
pub(crate) struct DeviceBuf {
    ctx: Arc<CudaContext>,
    ptr: sys::CUdeviceptr,
    bytes: usize,
}

impl DeviceBuf {
    /// Allocate `bytes` (at least 1) bytes on the device of `ctx`.
    pub(crate) fn new(ctx: &Arc<CudaContext>, bytes: usize) -> anyhow::Result<Self> {
        ctx.bind_to_thread().map_err(cuda("cuCtxSetCurrent"))?;
        // SAFETY: plain allocation; freed in Drop.
        let ptr = unsafe { result::malloc_sync(bytes.max(1)) }
            .map_err(|e| anyhow::anyhow!("CUDA could not allocate {bytes} bytes of device memory: {e}"))?;
        Ok(Self { ctx: ctx.clone(), ptr, bytes })
    }

    /// Device address.
    pub(crate) fn ptr(&self) -> sys::CUdeviceptr {
        self.ptr
    }

    /// Size in bytes.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }
}

impl Drop for DeviceBuf {
    fn drop(&mut self) {
        if super::fault::wedged(self.ctx.ordinal()) {
            // Freeing would wait for a kernel that never ends.
            return;
        }
        // SAFETY: allocated by malloc_sync; streams using it were synchronised by
        // their owner before the buffer is dropped.
        let _ = self.ctx.bind_to_thread().and_then(|()| unsafe { result::free_sync(self.ptr) });
    }
}

/// Page-locked host memory of `len` items, so that copies run asynchronously at
/// PCIe speed.
pub(crate) struct PinnedBuf<T: Copy> {
    ctx: Arc<CudaContext>,
    ptr: *mut T,
    len: usize,
}

// SAFETY: the buffer is plain memory owned by this value.
unsafe impl<T: Copy + Send> Send for PinnedBuf<T> {}

impl<T: Copy + Default> PinnedBuf<T> {
    /// Allocate `len` items. `write_combined` suits buffers the host only writes
    /// (faster host→device); the host must not read those.
    pub(crate) fn new(ctx: &Arc<CudaContext>, len: usize, write_combined: bool) -> anyhow::Result<Self> {
        ctx.bind_to_thread().map_err(cuda("cuCtxSetCurrent"))?;
        let flags = if write_combined { sys::CU_MEMHOSTALLOC_WRITECOMBINED } else { 0 };
        let bytes = len.max(1) * std::mem::size_of::<T>();
        // SAFETY: plain allocation; freed in Drop.
        let ptr = unsafe { result::malloc_host(bytes, flags) }
            .map_err(|e| anyhow::anyhow!("CUDA could not pin {bytes} bytes of host memory: {e}"))? as *mut T;
        // SAFETY: freshly allocated, `len` items, initialised before any read.
        unsafe { std::slice::from_raw_parts_mut(ptr, len) }.fill(T::default());
        Ok(Self { ctx: ctx.clone(), ptr, len })
    }
}

impl<T: Copy> PinnedBuf<T> {
    /// The items; the caller must not touch a range a pending copy uses.
    pub(crate) fn as_slice(&self) -> &[T] {
        // SAFETY: `len` initialised items owned by self.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// The items, mutably; as for [`Self::as_slice`].
    pub(crate) fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: as above, uniquely borrowed.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl<T: Copy> Drop for PinnedBuf<T> {
    fn drop(&mut self) {
        if super::fault::wedged(self.ctx.ordinal()) {
            // Freeing would wait for a kernel that never ends.
            return;
        }
        // SAFETY: allocated by malloc_host; no copy is pending (owners synchronise first).
        let _ = self.ctx.bind_to_thread().and_then(|()| unsafe { result::free_host(self.ptr as _) });
    }
}

/// A CUDA event, for completion and timing.
pub(crate) struct Event {
    ev: sys::CUevent,
}

// SAFETY: CUDA events may be used from any thread of the process.
unsafe impl Send for Event {}

impl Event {
    /// A timing-capable event.
    pub(crate) fn new(ctx: &Arc<CudaContext>) -> anyhow::Result<Self> {
        ctx.bind_to_thread().map_err(cuda("cuCtxSetCurrent"))?;
        let ev = result::event::create(sys::CUevent_flags::CU_EVENT_BLOCKING_SYNC).map_err(cuda("cuEventCreate"))?;
        Ok(Self { ev })
    }

    /// Record on `stream`.
    pub(crate) fn record(&self, stream: sys::CUstream) -> anyhow::Result<()> {
        // SAFETY: live event and stream.
        unsafe { result::event::record(self.ev, stream) }.map_err(cuda("cuEventRecord"))
    }

    /// Wait for the recorded work; the error of any failed work in it surfaces here.
    pub(crate) fn wait(&self) -> anyhow::Result<()> {
        // SAFETY: live event.
        unsafe { result::event::synchronize(self.ev) }.map_err(cuda("work on the GPU"))
    }

    /// Like [`Self::wait`], giving up after `limit` with an error that says
    /// so (the work goes on; the caller marks the device wedged).
    pub(crate) fn wait_within(&self, limit: std::time::Duration) -> anyhow::Result<()> {
        let started = std::time::Instant::now();
        let mut nap = std::time::Duration::from_micros(20);
        loop {
            // SAFETY: live event.
            match unsafe { result::event::query(self.ev) } {
                Ok(()) => return Ok(()),
                Err(e) if e.0 == sys::cudaError_enum::CUDA_ERROR_NOT_READY => {}
                Err(e) => return Err(cuda("work on the GPU")(e)),
            }
            if started.elapsed() >= limit {
                anyhow::bail!("a batch was still on the GPU after the watchdog's {:.3} s (gpu_watchdog_ms); its kernel is left running", limit.as_secs_f64());
            }
            std::thread::sleep(nap);
            // Short naps first (a batch takes milliseconds), then at most 1 ms.
            nap = (nap * 2).min(std::time::Duration::from_millis(1));
        }
    }

    /// Whether the recorded work is still running (an error of it counts as done).
    pub(crate) fn pending(&self) -> bool {
        // SAFETY: live event.
        matches!(unsafe { result::event::query(self.ev) }, Err(e) if e.0 == sys::cudaError_enum::CUDA_ERROR_NOT_READY)
    }

    /// Milliseconds from `self` to `end` (both completed).
    pub(crate) fn ms_to(&self, end: &Event) -> anyhow::Result<f32> {
        // SAFETY: live events.
        unsafe { result::event::elapsed(self.ev, end.ev) }.map_err(cuda("cuEventElapsedTime"))
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: created by event::create, destroyed once.
        let _ = unsafe { result::event::destroy(self.ev) };
    }
}
