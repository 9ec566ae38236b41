//! The N-slot stream pipeline every GPU decoder uses: per slot, pinned host
//! staging in and out, device buffers, one stream and its events. While slot i
//! runs its kernel, slot i+1 copies in and slot i−1 copies out; results are
//! collected in submission order.

use super::device::cuda;
use super::memory::{DeviceBuf, Event, PinnedBuf};
use cudarc::driver::{CudaContext, CudaStream, result, sys};
use std::sync::Arc;

/// Where one batch spent its time on the device, in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BatchSplit {
    /// Host→device copy.
    pub h2d_ms: f64,
    /// Kernel.
    pub kernel_ms: f64,
    /// Device→host copy.
    pub d2h_ms: f64,
    /// Host copy of the results out of pinned staging (wall clock).
    pub host_out_ms: f64,
}

struct Slot<I: Copy, O: Copy> {
    stream: Arc<CudaStream>,
    host_in: PinnedBuf<I>,
    dev_in: DeviceBuf,
    dev_out: DeviceBuf,
    host_out: PinnedBuf<O>,
    /// Before the copy in, after it, after the kernel, after the copy out.
    marks: [Event; 4],
    out_len: usize,
}

/// Sizes of one pipeline slot.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SlotSize {
    /// Input items staged per batch.
    pub in_items: usize,
    /// Device input bytes (≥ in_items · size of I; kernels may read past the end).
    pub dev_in_bytes: usize,
    /// Output items per batch.
    pub out_items: usize,
}

/// N slots, used round robin.
pub(crate) struct Pipeline<I: Copy, O: Copy> {
    ctx: Arc<CudaContext>,
    slots: Vec<Slot<I, O>>,
    head: usize,
    in_flight: usize,
    poison: Option<u8>,
    last: BatchSplit,
}

impl<I: Copy + Default + Send + Sync, O: Copy + Default + Send + Sync> Pipeline<I, O> {
    /// `slots` slots of `size` on the device of `ctx`. With `poison`, every
    /// output buffer is filled with that byte before each kernel, so that an
    /// output the kernel failed to write shows.
    pub(crate) fn new(ctx: &Arc<CudaContext>, slots: usize, size: SlotSize, poison: Option<u8>) -> anyhow::Result<Self> {
        anyhow::ensure!(slots >= 1, "a GPU pipeline needs at least one slot");
        let slots = (0..slots)
            .map(|_| {
                Ok(Slot {
                    stream: ctx.new_stream().map_err(cuda("cuStreamCreate"))?,
                    host_in: PinnedBuf::new(ctx, size.in_items, true)?,
                    dev_in: DeviceBuf::new(ctx, size.dev_in_bytes.max(size.in_items * std::mem::size_of::<I>()))?,
                    dev_out: DeviceBuf::new(ctx, size.out_items * std::mem::size_of::<O>())?,
                    host_out: PinnedBuf::new(ctx, size.out_items, false)?,
                    marks: [Event::new(ctx)?, Event::new(ctx)?, Event::new(ctx)?, Event::new(ctx)?],
                    out_len: 0,
                })
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        Ok(Self { ctx: ctx.clone(), slots, head: 0, in_flight: 0, poison, last: BatchSplit::default() })
    }

    /// Slots in the pipeline.
    pub(crate) fn depth(&self) -> usize {
        self.slots.len()
    }

    /// Batches submitted and not yet collected.
    pub(crate) fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// Stage a batch with `fill` (which writes the slot's pinned input and returns
    /// how many items it wrote), copy them in, run `launch(stream, slot index, input, output)`
    /// and copy `out_len` items back, all asynchronously on the slot's stream.
    pub(crate) fn submit(
        &mut self,
        fill: impl FnOnce(&mut [I]) -> anyhow::Result<usize>,
        out_len: usize,
        launch: impl FnOnce(sys::CUstream, usize, &DeviceBuf, &DeviceBuf) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        anyhow::ensure!(self.in_flight < self.slots.len(), "every pipeline slot is busy; collect a batch first");
        self.ctx.bind_to_thread().map_err(cuda("cuCtxSetCurrent"))?;
        let poison = self.poison;
        let slot = &mut self.slots[self.head];
        anyhow::ensure!(out_len <= slot.host_out.as_slice().len(), "batch output larger than the slot");
        let used = fill(slot.host_in.as_mut_slice())?;
        anyhow::ensure!(used <= slot.host_in.as_slice().len(), "batch input larger than the slot");
        let s = slot.stream.cu_stream();
        slot.marks[0].record(s)?;
        // SAFETY: pinned source and device destination are owned by the slot and
        // sized above; neither is touched again until the slot's last event.
        unsafe { result::memcpy_htod_async(slot.dev_in.ptr(), &slot.host_in.as_slice()[..used], s) }.map_err(cuda("host→device copy"))?;
        slot.marks[1].record(s)?;
        if let Some(b) = poison {
            // SAFETY: the slot's own device buffer, on its stream.
            unsafe { result::memset_d8_async(slot.dev_out.ptr(), b, slot.dev_out.bytes(), s) }.map_err(cuda("cuMemsetD8Async"))?;
        }
        launch(s, self.head, &slot.dev_in, &slot.dev_out)?;
        slot.marks[2].record(s)?;
        // SAFETY: as for the copy in.
        unsafe { result::memcpy_dtoh_async(&mut slot.host_out.as_mut_slice()[..out_len], slot.dev_out.ptr(), s) }
            .map_err(cuda("device→host copy"))?;
        slot.marks[3].record(s)?;
        slot.out_len = out_len;
        self.head = (self.head + 1) % self.slots.len();
        self.in_flight += 1;
        Ok(())
    }

    /// Wait for the oldest batch and append its output to `out`; `false` when
    /// nothing is in flight. A failure of any CUDA work of the batch is reported
    /// here with CUDA's message.
    pub(crate) fn collect(&mut self, out: &mut Vec<O>) -> anyhow::Result<bool> {
        if self.in_flight == 0 {
            return Ok(false);
        }
        let n = self.slots.len();
        let slot = &self.slots[(self.head + n - self.in_flight) % n];
        slot.marks[3].wait()?;
        let t = std::time::Instant::now();
        par_extend(out, &slot.host_out.as_slice()[..slot.out_len]);
        let m = &slot.marks;
        self.last = BatchSplit {
            h2d_ms: m[0].ms_to(&m[1])? as f64,
            kernel_ms: m[1].ms_to(&m[2])? as f64,
            d2h_ms: m[2].ms_to(&m[3])? as f64,
            host_out_ms: t.elapsed().as_secs_f64() * 1e3,
        };
        self.in_flight -= 1;
        Ok(true)
    }

    /// Run `launch` `reps` times on slot 0's data, already staged and copied in by
    /// `fill`, and return the mean milliseconds per launch (kernel only, device
    /// resident data). Needs an empty pipeline.
    pub(crate) fn time_launches(
        &mut self,
        fill: impl FnOnce(&mut [I]) -> anyhow::Result<usize>,
        reps: usize,
        mut launch: impl FnMut(sys::CUstream, usize, &DeviceBuf, &DeviceBuf) -> anyhow::Result<()>,
    ) -> anyhow::Result<f64> {
        anyhow::ensure!(self.in_flight == 0, "kernel timing needs an idle pipeline");
        self.ctx.bind_to_thread().map_err(cuda("cuCtxSetCurrent"))?;
        let slot = &mut self.slots[0];
        let used = fill(slot.host_in.as_mut_slice())?;
        let s = slot.stream.cu_stream();
        // SAFETY: as in submit; synchronised below before the buffers are reused.
        unsafe { result::memcpy_htod_async(slot.dev_in.ptr(), &slot.host_in.as_slice()[..used], s) }.map_err(cuda("host→device copy"))?;
        launch(s, 0, &slot.dev_in, &slot.dev_out)?; // warm-up
        slot.marks[0].record(s)?;
        for _ in 0..reps.max(1) {
            launch(s, 0, &slot.dev_in, &slot.dev_out)?;
        }
        slot.marks[1].record(s)?;
        slot.marks[1].wait()?;
        Ok(slot.marks[0].ms_to(&slot.marks[1])? as f64 / reps.max(1) as f64)
    }

    /// Time split of the batch collected last.
    pub(crate) fn last_split(&self) -> BatchSplit {
        self.last
    }
}

impl<I: Copy, O: Copy> Drop for Pipeline<I, O> {
    fn drop(&mut self) {
        // Buffers may only go once no copy or kernel can touch them.
        for s in &self.slots {
            let _ = s.marks[3].wait();
            let _ = s.stream.synchronize();
        }
    }
}

/// Copy `src` to the end of `out`, split over threads when it is large: one
/// core copies pinned memory at about 10 GB/s, well below PCIe.
pub(crate) fn par_extend<T: Copy + Send + Sync>(out: &mut Vec<T>, src: &[T]) {
    out.reserve(src.len());
    let spare = &mut out.spare_capacity_mut()[..src.len()];
    par_chunks(spare, src, |d, c| {
        for (d, &c) in d.iter_mut().zip(c) {
            d.write(c);
        }
    });
    // SAFETY: the first src.len() spare items were all written just above.
    unsafe { out.set_len(out.len() + src.len()) };
}

/// Run `copy` over matching chunks of `dst` and `src`, split over threads when
/// the data is large.
pub(crate) fn par_chunks<D: Send, T: Sync>(dst: &mut [D], src: &[T], copy: impl Fn(&mut [D], &[T]) + Sync) {
    par_units(dst, 1, src, 1, copy);
}

/// Like [`par_chunks`] for data made of units, `dst_unit` items each in `dst`
/// and `src_unit` in `src` (a padded pitch on one side): every chunk holds
/// whole units.
pub(crate) fn par_units<D: Send, T: Sync>(
    dst: &mut [D],
    dst_unit: usize,
    src: &[T],
    src_unit: usize,
    copy: impl Fn(&mut [D], &[T]) + Sync,
) {
    const PAR_BYTES: usize = 4 << 20;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(16);
    let units = src.len().div_ceil(src_unit);
    if std::mem::size_of_val(src) < PAR_BYTES || threads < 2 || units < 2 {
        copy(dst, src);
        return;
    }
    let per = units.div_ceil(threads);
    std::thread::scope(|s| {
        for (d, c) in dst.chunks_mut(per * dst_unit).zip(src.chunks(per * src_unit)) {
            let copy = &copy;
            s.spawn(move || copy(d, c));
        }
    });
}
