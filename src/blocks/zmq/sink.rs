//! The sending block.

use super::address::ZmqAddress;
use super::header::{Framing, HEADER_BYTES, Header};
use super::socket::{Endpoint, Pattern};
use crate::blocks::file::bytes_of;
use crate::blocks::{FirstError, Pod, Reporting};
use futuresdr::runtime::dev::prelude::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Largest message the sink sends: a stream is cut into messages of at most
/// this many bytes of items (whole units), so that a queue of `hwm`
/// messages bounds what waits between the two flowgraphs.
pub const MAX_MESSAGE_BYTES: usize = 1 << 20;
/// How long one wait for room in the queue lasts before the block hands its
/// thread back to the scheduler (which may be stopping the run).
const WAIT_MS: i64 = 100;

/// Sends its input stream over ZeroMQ, PUSH (to one receiver, waiting while
/// the receiver's queue is full: nothing is dropped) or PUB (to every
/// subscriber; a subscriber that falls behind loses messages), in
/// gr-zeromq's raw layout or with a `seq` header ([`Framing`]).
///
/// The socket is bound (or connected) when the block is made, so a busy
/// address fails the flowgraph before it runs. Messages hold whole `unit`s
/// of items, at most 1 MiB; the last one also holds what is left of a
/// partial unit. At the end of its input the block sends an end message
/// (empty when raw, which GNU Radio's sources ignore) and the process waits
/// up to 10 s for its queue to reach the receiver.
///
/// # Stream Inputs
///
/// `input`: the items (`u8` bits, `i8` or `f32` LLRs).
///
/// # Stream Outputs
///
/// None.
///
/// # Usage
/// ```no_run
/// use gpufec::blocks::{Framing, ZmqAddress, ZmqPattern, ZmqSink};
/// let address = ZmqAddress::parse("tcp://*:5555").map_err(anyhow::Error::msg)?;
/// let sink = ZmqSink::<i8>::new(ZmqPattern::PushPull, &address, true, 16, Framing::Raw, 1)?;
/// # Ok::<(), anyhow::Error>(())
/// ```
#[derive(Block)]
#[type_name(ZmqSink)]
#[blocking]
pub struct ZmqSink<T: Pod + CpuSample> {
    endpoint: Endpoint,
    framing: Framing,
    /// Items a message holds a whole number of.
    unit: usize,
    stream: u64,
    sent: Arc<AtomicU64>,
    message: Vec<u8>,
    errors: FirstError,
    #[input]
    input: DefaultCpuReader<T>,
}

impl<T: Pod + CpuSample> ZmqSink<T> {
    /// The most items a `unit` may hold: a message's items after its header.
    pub const MAX_UNIT: usize = (MAX_MESSAGE_BYTES - HEADER_BYTES) / size_of::<T>();

    /// A sink of `pattern` at `address` (bound if `bind`, else connected),
    /// queueing at most `hwm` messages of whole `unit`s of items.
    pub fn new(pattern: Pattern, address: &ZmqAddress, bind: bool, hwm: u64, framing: Framing, unit: usize) -> anyhow::Result<Self> {
        anyhow::ensure!((1..=Self::MAX_UNIT).contains(&unit), "unit {unit} is outside 1..={} (items of a 1 MiB message)", Self::MAX_UNIT);
        let endpoint = Endpoint::open(pattern, true, address, bind, hwm)?;
        Ok(Self {
            endpoint,
            framing,
            unit,
            stream: rand::random(),
            sent: Arc::default(),
            message: Vec::new(),
            errors: FirstError::default(),
            input: DefaultCpuReader::default(),
        })
    }

    /// A handle on the count of items sent, readable while the flowgraph runs.
    pub fn sent(&self) -> Arc<AtomicU64> {
        self.sent.clone()
    }

    /// Send the message in `self.message` if the queue has room within
    /// [`WAIT_MS`]; whether it went.
    fn send(&self) -> anyhow::Result<bool> {
        let socket = &self.endpoint.socket;
        if socket.poll(zmq::POLLOUT, WAIT_MS)? == 0 {
            return Ok(false);
        }
        match socket.send(&self.message[..], zmq::DONTWAIT) {
            Ok(()) => Ok(true),
            Err(zmq::Error::EAGAIN) => Ok(false),
            Err(e) => Err(anyhow::anyhow!("sending to {}: {e}", self.endpoint.address)),
        }
    }

    fn step(&mut self, io: &mut WorkIo) -> anyhow::Result<()> {
        let most = Self::MAX_UNIT / self.unit * self.unit;
        loop {
            let finished = self.input.finished();
            let n = self.input.slice().len();
            let whole = if finished { n } else { n / self.unit * self.unit };
            let take = whole.min(most);
            if take == 0 && !(finished && n == 0) {
                return Ok(());
            }
            // At the end, with nothing left: the end message (raw: empty;
            // seq: a header alone, flagged).
            let input = self.input.slice();
            let chunk = &input[..take];
            let (framing, stream, first) = (self.framing, self.stream, self.sent.load(Ordering::Relaxed));
            self.message.clear();
            if framing == Framing::Seq {
                self.message.extend_from_slice(&Header { stream, first, end: take == 0 }.to_bytes());
            }
            self.message.extend_from_slice(bytes_of(chunk));
            if !self.send()? {
                // The receiver's queue is full, or there is none yet: wait.
                io.call_again = true;
                return Ok(());
            }
            if take == 0 {
                io.finished = true;
                return Ok(());
            }
            self.input.consume(take);
            self.sent.fetch_add(take as u64, Ordering::Relaxed);
        }
    }
}

impl<T: Pod + CpuSample> Reporting for ZmqSink<T> {
    fn first_error(&mut self) -> &mut FirstError {
        &mut self.errors
    }
}

impl<T: Pod + CpuSample> crate::blocks::Counted for ZmqSink<T> {
    fn items(&self) -> u64 {
        self.sent.load(Ordering::Relaxed)
    }
}

#[doc(hidden)]
impl<T: Pod + CpuSample> Kernel for ZmqSink<T> {
    async fn work(&mut self, io: &mut WorkIo, _mo: &mut MessageOutputs, meta: &mut BlockMeta) -> Result<()> {
        let r = self.step(io);
        self.errors.keep(meta, r)
    }
}
