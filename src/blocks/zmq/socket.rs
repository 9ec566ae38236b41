//! Opening a block's socket: its pattern, queue limit, and bind or connect,
//! with errors that name the endpoint.

use super::address::ZmqAddress;

/// The socket patterns of gr-zeromq's stream blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    /// PUSH → PULL: every message reaches one receiver; a sender with no
    /// room in its queue waits (backpressure), nothing is dropped.
    PushPull,
    /// PUB → SUB: every subscriber gets every message while it keeps up; a
    /// subscriber's full queue drops messages.
    PubSub,
}

impl Pattern {
    /// (sending socket, receiving socket).
    fn types(self) -> (zmq::SocketType, zmq::SocketType) {
        match self {
            Pattern::PushPull => (zmq::PUSH, zmq::PULL),
            Pattern::PubSub => (zmq::PUB, zmq::SUB),
        }
    }
}

/// Messages a socket queues by default (libzmq's is 1000: with messages of
/// up to a few MiB that would hide a slow receiver behind gigabytes).
pub const DEFAULT_HWM: u64 = 16;
/// The most messages a socket may be asked to queue.
pub const MAX_HWM: u64 = 1 << 20;

/// How long a sender that ended waits for its queue to drain to the
/// receiver before the process may exit (libzmq's linger).
pub const LINGER_MS: i32 = 10_000;

/// One end of a connection: its socket, and the context that must outlive it.
pub struct Endpoint {
    pub socket: zmq::Socket,
    pub address: ZmqAddress,
    pub pattern: Pattern,
    // Dropped after the socket (field order): its end waits for the linger.
    _context: zmq::Context,
}

impl Endpoint {
    /// The sending (`sends`) or receiving socket of `pattern` at `address`,
    /// bound (`bind`) or connected, queueing at most `hwm` messages.
    pub fn open(pattern: Pattern, sends: bool, address: &ZmqAddress, bind: bool, hwm: u64) -> anyhow::Result<Self> {
        anyhow::ensure!((1..=MAX_HWM).contains(&hwm), "hwm {hwm} is outside 1..={MAX_HWM}");
        let context = zmq::Context::new();
        let (tx, rx) = pattern.types();
        let socket = context.socket(if sends { tx } else { rx })?;
        let hwm = hwm as i32;
        if sends {
            socket.set_sndhwm(hwm)?;
            socket.set_linger(LINGER_MS)?;
        } else {
            socket.set_rcvhwm(hwm)?;
            socket.set_linger(0)?;
        }
        if pattern == Pattern::PubSub && !sends {
            socket.set_subscribe(b"")?;
        }
        if bind {
            socket.bind(address.as_str()).map_err(|e| match e {
                zmq::Error::EADDRINUSE => anyhow::anyhow!("cannot bind {address}: the address is already in use (another program, or another block, is bound there)"),
                e => anyhow::anyhow!("cannot bind {address}: {e}"),
            })?;
        } else {
            socket.connect(address.as_str()).map_err(|e| anyhow::anyhow!("cannot connect to {address}: {e}"))?;
        }
        Ok(Self { socket, address: address.clone(), pattern, _context: context })
    }
}
