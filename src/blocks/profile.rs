//! Per-block load for `gpufec run --profile`: the busy time, work calls and
//! items of every block, the way GNU Radio's performance counters show which
//! block sets the pace of a chain.

use futuresdr::runtime::__private::KernelInterface;
use futuresdr::runtime::buffer::BufferReader;
use futuresdr::runtime::dev::prelude::*;
use futuresdr::runtime::dev::{BlockInbox, MaybeSend};
use futuresdr::runtime::{BlockId, Error, Pmt, PortId};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A block that says how many items it has handled: taken from its first
/// input, or, for a source, emitted.
pub trait Counted {
    /// Items handled so far.
    fn items(&self) -> u64;
}

/// The load of one block so far, updated after each of its work calls.
#[derive(Debug, Default)]
pub struct BlockLoad {
    busy_ns: AtomicU64,
    cpu_ns: AtomicU64,
    calls: AtomicU64,
    items: AtomicU64,
}

impl BlockLoad {
    /// Time spent in the block's work calls.
    pub fn busy(&self) -> Duration {
        Duration::from_nanos(self.busy_ns.load(Ordering::Relaxed))
    }

    /// CPU time of the block's own thread in its work calls: below the busy
    /// time when the thread waited (for other threads' work, or for a core
    /// while others ran on it).
    pub fn cpu(&self) -> Duration {
        Duration::from_nanos(self.cpu_ns.load(Ordering::Relaxed))
    }

    /// Work calls so far.
    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }

    /// Items handled so far ([`Counted`]).
    pub fn items(&self) -> u64 {
        self.items.load(Ordering::Relaxed)
    }
}

/// Any block, timed: every work call adds its duration to a [`BlockLoad`]
/// (work handed to other threads from within the call, such as the CPU
/// decoder's or the channel's, counts as the block's busy time, since the
/// block waits for it). Ports, messages and the block's type name are the
/// block's own, so a flowgraph connects it as it would the block.
///
/// # Usage
/// ```
/// use gpufec::blocks::{Profiled, RandomBits};
/// let block = Profiled::new(RandomBits::new(1, Some(1000)));
/// let load = block.load();
/// assert_eq!(load.calls(), 0);
/// ```
pub struct Profiled<K> {
    inner: K,
    load: Arc<BlockLoad>,
}

impl<K> Profiled<K> {
    /// `inner`, timed.
    pub fn new(inner: K) -> Self {
        Self { inner, load: Arc::default() }
    }

    /// A handle on the load, for reading while the flowgraph runs.
    pub fn load(&self) -> Arc<BlockLoad> {
        self.load.clone()
    }
}

/// CPU time of the calling thread, ns.
fn thread_cpu_ns() -> u64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given; the clock exists on Linux.
    let ok = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) } == 0;
    if ok { t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64 } else { 0 }
}

#[doc(hidden)]
impl<K: Kernel + Counted + Send> Kernel for Profiled<K> {
    async fn work(&mut self, io: &mut WorkIo, mo: &mut MessageOutputs, meta: &mut BlockMeta) -> Result<()> {
        let (started, cpu) = (Instant::now(), thread_cpu_ns());
        let r = self.inner.work(io, mo, meta).await;
        let load = &self.load;
        load.busy_ns.fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
        load.cpu_ns.fetch_add(thread_cpu_ns().saturating_sub(cpu), Ordering::Relaxed);
        load.calls.fetch_add(1, Ordering::Relaxed);
        load.items.store(self.inner.items(), Ordering::Relaxed);
        r
    }

    async fn init(&mut self, mo: &mut MessageOutputs, meta: &mut BlockMeta) -> Result<()> {
        self.inner.init(mo, meta).await
    }

    async fn deinit(&mut self, mo: &mut MessageOutputs, meta: &mut BlockMeta) -> Result<()> {
        self.inner.deinit(mo, meta).await
    }
}

// Everything FutureSDR asks of a block's ports goes to the block itself.
#[doc(hidden)]
impl<K: KernelInterface> KernelInterface for Profiled<K> {
    fn is_blocking() -> bool {
        K::is_blocking()
    }
    fn type_name() -> &'static str {
        K::type_name()
    }
    fn stream_inputs(&self) -> Vec<String> {
        self.inner.stream_inputs()
    }
    fn stream_outputs(&self) -> Vec<String> {
        self.inner.stream_outputs()
    }
    fn stream_ports_init(&mut self, block_id: BlockId, inbox: BlockInbox) {
        self.inner.stream_ports_init(block_id, inbox)
    }
    fn stream_ports_validate(&self) -> Result<(), Error> {
        self.inner.stream_ports_validate()
    }
    fn stream_input_finish(&mut self, port_id: PortId) -> Result<(), Error> {
        self.inner.stream_input_finish(port_id)
    }
    fn stream_ports_notify_finished(&mut self) -> impl Future<Output = ()> + MaybeSend {
        self.inner.stream_ports_notify_finished()
    }
    fn stream_input(&mut self, id: &PortId) -> Result<&mut dyn BufferReader, Error> {
        self.inner.stream_input(id)
    }
    fn connect_stream_output(&mut self, id: &PortId, reader: &mut dyn BufferReader) -> Result<(), Error> {
        self.inner.connect_stream_output(id, reader)
    }
    fn message_inputs() -> &'static [&'static str] {
        K::message_inputs()
    }
    fn message_outputs() -> &'static [&'static str] {
        K::message_outputs()
    }
    fn call_handler(
        &mut self,
        io: &mut WorkIo,
        mo: &mut MessageOutputs,
        meta: &mut BlockMeta,
        id: PortId,
        p: Pmt,
    ) -> impl Future<Output = Result<Pmt, Error>> + MaybeSend {
        self.inner.call_handler(io, mo, meta, id, p)
    }
}
