//! BPSK over AWGN on a GPU: the LLRs of the host channel
//! ([`BpskAwgn`](crate::codes::channel::BpskAwgn)) bit for bit, since
//! `kernels/link.cuh` is the exact port of its noise, map and quantizer.
//!
//! A chain that simulates the channel spends most of its host cores on the
//! noise (three normals per information bit at rate 1/3, each a Philox block
//! share and a Box–Muller pair); on the GPU the same numbers cost the host one
//! copy. Where the caller's bits and LLRs lie in stream buffers
//! ([`GpuBpskAwgn::set_in_place`], as the block's do), the bits go to the
//! device from where they lie and the LLRs come back straight into their
//! place (both page-locked in place, the LLRs' pages shared with the decoder
//! that reads them next; staged where the driver refuses); otherwise both go
//! through pinned memory. The bits are checked on the device. Pieces of a
//! call alternate between two streams, so that one piece's copy in overlaps
//! the last one's copy out and the host's copy of its LLRs.

use super::compile::kernels;
use super::device::{context, cuda};
use super::link::{PointChannel, launch};
use super::memory::{DeviceBuf, Event, PinnedBuf};
use super::registered::Registered;
use crate::codes::channel::Quantizer;
use crate::codes::error::{CodeError, CodeResult, invalid};
use crate::codes::llr::Llr;
use crate::codes::threads::par_copy;
use cudarc::driver::{CudaContext, CudaFunction, CudaStream, result, sys};
use std::ffi::c_void;
use std::sync::Arc;

/// Channel bits per piece: 4 Mi, a fraction of a millisecond of copies each
/// way (on the lent H200's host 1 Mi pieces ran the turbo chain 20 % slower).
const PIECE: usize = 1 << 22;

/// One piece in flight: its buffers, its stream and where its LLRs go.
struct Slot<T: Copy> {
    stream: Arc<CudaStream>,
    /// Channel bits staged where they cannot be page-locked in place.
    bits: PinnedBuf<u8>,
    dev_bits: DeviceBuf,
    dev_llrs: DeviceBuf,
    /// The least index of a bad channel bit in the piece (all ones: none).
    dev_bad: DeviceBuf,
    llrs: PinnedBuf<T>,
    bad: PinnedBuf<u64>,
    done: Event,
    /// Offset in the call's output and length of the piece in flight.
    pending: Option<(usize, usize)>,
    /// The piece's LLRs go straight into the call's output (else through `llrs`).
    direct: bool,
}

/// BPSK over AWGN to `T` LLRs on one GPU, the host channel's numbers (see
/// the module documentation).
///
/// # Example
/// ```no_run
/// use gpufec::codes::channel::Quantizer;
/// use gpufec::gpu::GpuBpskAwgn;
/// let mut ch = GpuBpskAwgn::<i8>::new(0, 1.0, 1.0 / 3.0, 7, Quantizer::new(4.0)?)?;
/// let mut llrs = vec![0i8; 3];
/// ch.transmit_into(&[0, 1, 1], &mut llrs)?;
/// # Ok::<(), anyhow::Error>(())
/// ```
pub struct GpuBpskAwgn<T: Llr> {
    ctx: Arc<CudaContext>,
    kernel: CudaFunction,
    point: PointChannel,
    slots: [Slot<T>; 2],
    /// The stream buffer's pages locked for the copies in.
    registered: Registered,
    /// Stream position of the next channel bit.
    position: u64,
    /// The caller's bits and output lie in memory it keeps mapped until [`Self::release`].
    in_place: bool,
}

impl<T: Llr> GpuBpskAwgn<T> {
    /// The channel of [`BpskAwgn::with_quantizer`](crate::codes::channel::BpskAwgn::with_quantizer)`(ebn0_db,
    /// rate, seed, quantizer)` on GPU `device`.
    pub fn new(device: usize, ebn0_db: f64, rate: f64, seed: u64, quantizer: Quantizer) -> anyhow::Result<Self> {
        let ctx = context(device)?;
        let name = if T::NAME == "i8" { "link_bpsk_awgn_i8" } else { "link_bpsk_awgn_f32" };
        let kernel = kernels(&ctx, "link.cu", &[name], &[])?.remove(0);
        // The host channel's constants, computed as it computes them.
        let point = PointChannel::with_noise_seed(ebn0_db, rate, seed, quantizer.scale())?;
        let slot = || -> anyhow::Result<Slot<T>> {
            Ok(Slot {
                stream: ctx.new_stream().map_err(cuda("cuStreamCreate"))?,
                bits: PinnedBuf::new(&ctx, PIECE, true)?,
                dev_bits: DeviceBuf::new(&ctx, PIECE)?,
                dev_llrs: DeviceBuf::new(&ctx, PIECE * size_of::<T>())?,
                dev_bad: DeviceBuf::new(&ctx, size_of::<u64>())?,
                llrs: PinnedBuf::new(&ctx, PIECE, false)?,
                bad: PinnedBuf::new(&ctx, 1, false)?,
                done: Event::new(&ctx)?,
                pending: None,
                direct: false,
            })
        };
        Ok(Self { kernel, point, slots: [slot()?, slot()?], registered: Registered::new(&ctx), position: 0, in_place: false, ctx })
    }

    /// Whether the caller's bits and LLRs lie in memory it keeps mapped until
    /// [`Self::release`] (stream buffers): the device then reads the bits and
    /// writes the LLRs there itself, page-locked in place, with no host
    /// copy; otherwise both go through pinned memory.
    pub fn set_in_place(&mut self, yes: bool) {
        self.in_place = yes;
    }

    /// The LLRs of `bits` (0/1; anything else is an error naming the first
    /// bad index, as the host channel's) into `out`, of the same length.
    pub fn transmit_into(&mut self, bits: &[u8], out: &mut [T]) -> CodeResult<()> {
        assert_eq!(bits.len(), out.len(), "one LLR per channel bit");
        let mut bad = None;
        let run = self.run(bits, out, &mut bad);
        // Whatever happened, nothing stays in flight past the call: the
        // stream buffer may be rewritten once it returns.
        let drained = self.slots.iter_mut().try_for_each(|slot| finish(slot, out, &mut bad));
        match drained.and(run) {
            // What fails here is CUDA work (copies, launches, waits): the device's failure.
            Err(e) => Err(CodeError::Device(format!("GPU {}: the channel: {e:#}", self.ctx.ordinal()))),
            Ok(()) => match bad {
                Some(i) => Err(invalid!("channel bit at index {i} is {}, not 0 or 1", bits[i])),
                None => {
                    self.position = self.position.wrapping_add(bits.len() as u64);
                    Ok(())
                }
            },
        }
    }

    /// Unlock the stream buffer's pages: it is about to go.
    pub fn release(&mut self) {
        self.registered.clear();
    }

    /// Queue every piece, two in flight.
    fn run(&mut self, bits: &[u8], out: &mut [T], bad: &mut Option<usize>) -> anyhow::Result<()> {
        for (k, piece) in bits.chunks(PIECE).enumerate() {
            finish(&mut self.slots[k % 2], out, bad)?;
            let at = k * PIECE;
            self.queue(k % 2, at, piece, &mut out[at..at + piece.len()])?;
        }
        Ok(())
    }

    /// Copy `piece`, the call's bits from `at` on, in, transmit it and copy
    /// its LLRs out on slot `s`'s stream: into `llrs`, their place in the
    /// output, where that is page-locked in place, else into pinned memory.
    fn queue(&mut self, s: usize, at: usize, piece: &[u8], llrs: &mut [T]) -> anyhow::Result<()> {
        let slot = &mut self.slots[s];
        let stream = slot.stream.cu_stream();
        let len = piece.len();
        let lying = if self.in_place { self.registered.pieces(piece.as_ptr() as usize, len, false, true) } else { None };
        match lying {
            Some(ranges) => {
                let base = piece.as_ptr() as usize;
                for r in ranges {
                    let (from, to) = (r.start - base, r.end - base);
                    // SAFETY: the range lies in `piece` and in one registration; the
                    // call waits for the copy (`finish`) before the buffer can change.
                    unsafe { result::memcpy_htod_async(slot.dev_bits.ptr() + from as u64, &piece[from..to], stream) }.map_err(cuda("host→device copy"))?;
                }
            }
            None => {
                par_copy(piece, &mut slot.bits.as_mut_slice()[..len]);
                // SAFETY: `len` ≤ PIECE bytes; the pinned source stays untouched until `done`.
                unsafe { result::memcpy_htod_async(slot.dev_bits.ptr(), &slot.bits.as_slice()[..len], stream) }.map_err(cuda("host→device copy"))?;
            }
        }
        // SAFETY: the 8 bytes of `dev_bad`, set to all ones before the kernel reads them.
        unsafe { result::memset_d8_async(slot.dev_bad.ptr(), 0xFF, size_of::<u64>(), stream) }.map_err(cuda("cuMemsetD8Async"))?;
        let first = self.position.wrapping_add(at as u64);
        let groups = ((first % 64) as usize + len).div_ceil(64);
        let p = self.point;
        let (mut bits_ptr, mut llrs_ptr, mut bad_ptr) = (slot.dev_bits.ptr(), slot.dev_llrs.ptr(), slot.dev_bad.ptr());
        let (mut first, mut n) = (first, len as u64);
        let ([mut k0, mut k1], mut sigma, mut gain, mut scale) = (p.noise_key, p.sigma, p.gain, p.scale);
        let mut params: [*mut c_void; 10] = [
            (&mut bits_ptr as *mut sys::CUdeviceptr).cast(),
            (&mut llrs_ptr as *mut sys::CUdeviceptr).cast(),
            (&mut bad_ptr as *mut sys::CUdeviceptr).cast(),
            (&mut first as *mut u64).cast(),
            (&mut n as *mut u64).cast(),
            (&mut k0 as *mut u32).cast(),
            (&mut k1 as *mut u32).cast(),
            (&mut sigma as *mut f32).cast(),
            (&mut gain as *mut f32).cast(),
            (&mut scale as *mut f32).cast(),
        ];
        // SAFETY: link_bpsk_awgn_*(const u8*, T*, u64*, u64, u64, u32, u32, float, float, float)
        // over `len` items of PIECE-item buffers; one thread per (group, lane).
        unsafe { launch(&self.kernel, 16 * groups as u64, stream, &mut params, "channel kernel") }?;
        let item = size_of::<T>();
        let direct = if self.in_place { self.registered.pieces(llrs.as_ptr() as usize, len * item, true, true) } else { None };
        slot.direct = direct.is_some();
        match direct {
            Some(ranges) => {
                let base = llrs.as_ptr() as usize;
                for r in ranges {
                    // Registrations start and end on page boundaries, which items never straddle.
                    let (from, to) = ((r.start - base) / item, (r.end - base) / item);
                    // SAFETY: the range lies in `llrs` and in one writable registration;
                    // the call waits for the copy (`finish`) before it returns.
                    unsafe { result::memcpy_dtoh_async(&mut llrs[from..to], slot.dev_llrs.ptr() + (from * item) as u64, stream) }
                        .map_err(cuda("device→host copy"))?;
                }
            }
            // SAFETY: `len` LLRs into the pinned buffer, read after `done`.
            None => unsafe { result::memcpy_dtoh_async(&mut slot.llrs.as_mut_slice()[..len], slot.dev_llrs.ptr(), stream) }
                .map_err(cuda("device→host copy"))?,
        }
        // SAFETY: the bad index into its pinned word, read after `done`.
        unsafe { result::memcpy_dtoh_async(slot.bad.as_mut_slice(), slot.dev_bad.ptr(), stream) }.map_err(cuda("device→host copy"))?;
        slot.done.record(stream)?;
        slot.pending = Some((at, len));
        Ok(())
    }
}

/// Wait for the slot's piece, if any, copy its LLRs to their place in `out`
/// (unless the device wrote them there) and keep the least bad index seen.
fn finish<T: Llr>(slot: &mut Slot<T>, out: &mut [T], bad: &mut Option<usize>) -> anyhow::Result<()> {
    if let Some((at, len)) = slot.pending.take() {
        slot.done.wait()?;
        if !slot.direct {
            par_copy(&slot.llrs.as_slice()[..len], &mut out[at..at + len]);
        }
        let b = slot.bad.as_slice()[0];
        if b != u64::MAX {
            let i = at + b as usize;
            *bad = Some(bad.map_or(i, |was| was.min(i)));
        }
    }
    Ok(())
}

impl<T: Llr> Drop for GpuBpskAwgn<T> {
    fn drop(&mut self) {
        // The pinned and device buffers of a piece in flight must outlive its copies.
        for slot in &self.slots {
            if slot.pending.is_some() {
                let _ = slot.done.wait();
            }
        }
    }
}
