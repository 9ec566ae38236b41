//! The receiving block.

use super::address::ZmqAddress;
use super::header::{Framing, HEADER_BYTES, Header};
use super::socket::{Endpoint, Pattern};
use crate::blocks::file::bytes_of_mut;
use crate::blocks::{FirstError, Pod, Reporting, stream};
use crate::codes::words::count_of;
use futuresdr::runtime::dev::prelude::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// How long one wait for a message lasts before the block hands its thread
/// back to the scheduler (which may be stopping the run).
const WAIT_MS: i64 = 100;
/// Bytes of the stream buffer behind the source.
const BUFFER_BYTES: usize = 16 << 20;

/// What a [`ZmqSource`] has received so far, readable from any thread.
#[derive(Debug, Default)]
pub struct ZmqReceived {
    /// Items emitted (erasures put in for missed items included).
    pub items: AtomicU64,
    /// Messages taken.
    pub messages: AtomicU64,
    /// Items the sender sent that never arrived (`seq` only), put back as
    /// erasures where the stream went on after them.
    pub missed: AtomicU64,
    /// Gaps those missed items fell in.
    pub gaps: AtomicU64,
    /// Stream index of the first item received (`seq` only: where this
    /// receiver joined a stream that had started without it).
    pub joined_at: AtomicU64,
}

/// Receives a stream over ZeroMQ, PULL (from PUSH senders: nothing is
/// dropped) or SUB (from PUB senders: a receiver that falls behind loses
/// messages), in gr-zeromq's raw layout or with `seq` headers ([`Framing`]).
///
/// A message's items may go on across several work calls; a message whose
/// items are not whole (its length, less a header, not a multiple of the
/// item size) fails the flowgraph, naming both. The stream ends at the
/// sender's end message, or after `total` items (GNU Radio sends no end);
/// an end message before `total` fails the run. With `seq` the receiver
/// knows where every message belongs: joining a stream that has started
/// (a receiver started or restarted after its sender), it starts at the
/// next multiple of `unit` items of the stream and says where; items lost
/// on the way (a PUB sender's dropped messages) are counted, said on
/// stderr, and put back as erasures (zero LLRs, zero bits) so that every
/// later item keeps its place in the stream; a new sender (another stream
/// id) fails the run. Raw messages carry nothing to count losses by.
///
/// # Stream Inputs
///
/// None.
///
/// # Stream Outputs
///
/// `output`: the items (`u8` bits, `i8` or `f32` LLRs).
///
/// # Usage
/// ```no_run
/// use gpufec::blocks::{Framing, ZmqAddress, ZmqPattern, ZmqSource};
/// let address = ZmqAddress::parse("tcp://127.0.0.1:5555").map_err(anyhow::Error::msg)?;
/// let source = ZmqSource::<i8>::new(ZmqPattern::PushPull, &address, false, 16, Framing::Raw, 1, None)?;
/// let received = source.received();   // read it while the flowgraph runs
/// # Ok::<(), anyhow::Error>(())
/// ```
#[derive(Block)]
#[type_name(ZmqSource)]
#[blocking]
pub struct ZmqSource<T: Pod + CpuSample> {
    endpoint: Endpoint,
    framing: Framing,
    unit: u64,
    total: Option<u64>,
    /// The message being handed on, and the bytes of it already handed.
    pending: Option<(zmq::Message, usize)>,
    /// Erasures still to emit for missed items.
    fill: u64,
    /// The sender's stream and the index of the next item expected from it
    /// (`seq`), once the first message came.
    expected: Option<(u64, u64)>,
    ended: bool,
    received: Arc<ZmqReceived>,
    errors: FirstError,
    #[output]
    output: DefaultCpuWriter<T>,
}

impl<T: Pod + CpuSample> ZmqSource<T> {
    /// A source of `pattern` at `address` (bound if `bind`, else connected),
    /// queueing at most `hwm` messages; a joining `seq` receiver starts at a
    /// multiple of `unit` items; ends after `total` items if given.
    pub fn new(pattern: Pattern, address: &ZmqAddress, bind: bool, hwm: u64, framing: Framing, unit: u64, total: Option<u64>) -> anyhow::Result<Self> {
        anyhow::ensure!(unit >= 1, "unit must be at least 1 item");
        let endpoint = Endpoint::open(pattern, false, address, bind, hwm)?;
        let mut output = stream::output::<T>();
        output.set_min_buffer_size_in_items(BUFFER_BYTES / size_of::<T>());
        Ok(Self {
            endpoint,
            framing,
            unit,
            total,
            pending: None,
            fill: 0,
            expected: None,
            ended: false,
            received: Arc::default(),
            errors: FirstError::default(),
            output,
        })
    }

    /// A handle on what it has received.
    pub fn received(&self) -> Arc<ZmqReceived> {
        self.received.clone()
    }

    fn emitted(&self) -> u64 {
        self.received.items.load(Ordering::Relaxed)
    }

    fn step(&mut self, io: &mut WorkIo, name: &str) -> anyhow::Result<()> {
        let size = size_of::<T>();
        let mut produced = 0;
        loop {
            let left = self.total.map_or(u64::MAX, |t| t - self.emitted());
            if left == 0 || (self.ended && self.fill == 0 && self.pending.is_none()) {
                io.finished = true;
                eprintln!("block '{name}': {}", self.report());
                return Ok(());
            }
            let room = (self.output.slice().len() as u64).min(left) as usize;
            if room == 0 {
                return Ok(());
            }
            let n = if self.fill > 0 {
                let n = room.min(self.fill as usize);
                self.output.slice()[..n].fill(T::default());
                self.fill -= n as u64;
                n
            } else if let Some((message, at)) = &mut self.pending {
                let n = room.min((message.len() - *at) / size);
                bytes_of_mut(&mut self.output.slice()[..n]).copy_from_slice(&message[*at..*at + n * size]);
                *at += n * size;
                if *at == message.len() {
                    self.pending = None;
                }
                n
            } else {
                // Wait for a message only when this call has handed on nothing yet.
                let wait = if produced == 0 { WAIT_MS } else { 0 };
                if self.endpoint.socket.poll(zmq::POLLIN, wait)? == 0 {
                    io.call_again = true;
                    return Ok(());
                }
                let message = self.endpoint.socket.recv_msg(0).map_err(|e| anyhow::anyhow!("receiving from {}: {e}", self.endpoint.address))?;
                self.take(message, name)?;
                continue;
            };
            self.output.produce(n);
            self.received.items.fetch_add(n as u64, Ordering::Relaxed);
            produced += n;
        }
    }

    /// Check a new message and make it the pending one (or the end).
    fn take(&mut self, message: zmq::Message, name: &str) -> anyhow::Result<()> {
        let size = size_of::<T>();
        self.received.messages.fetch_add(1, Ordering::Relaxed);
        let (mut at, header) = match self.framing {
            Framing::Raw => (0, None),
            Framing::Seq => (HEADER_BYTES, Some(Header::parse(&message).map_err(anyhow::Error::msg)?)),
        };
        let payload = message.len() - at;
        anyhow::ensure!(
            payload.is_multiple_of(size),
            "a message from {} holds {payload} bytes of items, not a whole number of {size}-byte {} items ({} bytes left over): the sender sends another item type",
            self.endpoint.address,
            std::any::type_name::<T>(),
            payload % size
        );
        let items = (payload / size) as u64;
        let Some(h) = header else {
            if self.received.messages.load(Ordering::Relaxed) == 1 && Header::parse(&message).is_ok() {
                anyhow::bail!("the first message from {} starts with a seq header: the sender frames its messages (framing = \"seq\"); set the same framing here", self.endpoint.address);
            }
            self.ended = payload == 0;
            self.pending = (payload > 0).then_some((message, 0));
            return self.check_end();
        };
        let expected = match self.expected {
            None => {
                // The first message: start at the stream's next unit boundary.
                let start = h.first.div_ceil(self.unit) * self.unit;
                if h.first > 0 {
                    eprintln!("block '{name}': joined a stream that had started: its first {} were not received here; starting at item {start}", count_of(h.first, "item"));
                }
                self.received.joined_at.store(start, Ordering::Relaxed);
                start
            }
            Some((stream, _)) if stream != h.stream => {
                anyhow::bail!("a new sender started (another stream) after {} were received: restart this receiver too", count_of(self.emitted(), "item"))
            }
            Some((_, next)) if h.first < next => {
                anyhow::bail!("a message starts at item {} of the stream, before item {next}, which came already", h.first)
            }
            Some((_, next)) => next,
        };
        let end = h.first + items;
        if h.first > expected {
            let missed = h.first - expected;
            self.fill = missed;
            self.received.missed.fetch_add(missed, Ordering::Relaxed);
            self.received.gaps.fetch_add(1, Ordering::Relaxed);
            eprintln!("block '{name}': lost {} before item {} (messages dropped on the way): put back as erasures", count_of(missed, "item"), h.first);
        }
        // A joining receiver skips the items before its unit boundary.
        at += (expected.saturating_sub(h.first).min(items) as usize) * size;
        self.expected = Some((h.stream, end.max(expected)));
        self.ended = h.end;
        self.pending = (at < message.len()).then_some((message, at));
        self.check_end()
    }

    /// What it received, in a line: items, messages, and for `seq` what it missed.
    fn report(&self) -> String {
        let r = &self.received;
        let (items, messages) = (r.items.load(Ordering::Relaxed), r.messages.load(Ordering::Relaxed));
        let mut line = format!("received {} in {} from {}", count_of(items, "item"), count_of(messages, "message"), self.endpoint.address);
        match self.framing {
            Framing::Seq => {
                let (missed, gaps) = (r.missed.load(Ordering::Relaxed), r.gaps.load(Ordering::Relaxed));
                line += &format!(", {} lost in {} (put back as erasures)", count_of(missed, "item"), count_of(gaps, "gap"));
            }
            Framing::Raw if self.endpoint.pattern == Pattern::PubSub => line += " (raw PUB/SUB: losses cannot be counted)",
            Framing::Raw => {}
        }
        line
    }

    /// An end before `total` items is an error.
    fn check_end(&self) -> anyhow::Result<()> {
        match self.total {
            Some(total) if self.ended => {
                let coming = self.emitted() + self.fill + self.pending.as_ref().map_or(0, |(m, at)| ((m.len() - at) / size_of::<T>()) as u64);
                anyhow::ensure!(coming >= total, "the sender ended its stream after {}, before the {total} this source's total asks for", count_of(coming, "item"));
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

impl<T: Pod + CpuSample> Reporting for ZmqSource<T> {
    fn first_error(&mut self) -> &mut FirstError {
        &mut self.errors
    }
}

impl<T: Pod + CpuSample> crate::blocks::Counted for ZmqSource<T> {
    fn items(&self) -> u64 {
        self.emitted()
    }
}

#[doc(hidden)]
impl<T: Pod + CpuSample> Kernel for ZmqSource<T> {
    async fn init(&mut self, _mo: &mut MessageOutputs, meta: &mut BlockMeta) -> Result<()> {
        if self.framing == Framing::Raw && self.endpoint.pattern == Pattern::PubSub {
            let name = meta.instance_name().unwrap_or("unnamed");
            eprintln!("block '{name}': raw PUB/SUB (GNU Radio's layout) carries no sequence numbers: items lost on the way cannot be counted (framing = \"seq\" counts them, between gpufec flowgraphs)");
        }
        Ok(())
    }

    async fn work(&mut self, io: &mut WorkIo, _mo: &mut MessageOutputs, meta: &mut BlockMeta) -> Result<()> {
        let name = meta.instance_name().unwrap_or("unnamed").to_string();
        let r = self.step(io, &name);
        self.errors.keep(meta, r)
    }
}
