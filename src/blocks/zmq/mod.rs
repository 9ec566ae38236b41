//! ZeroMQ between flowgraphs: [`ZmqSink`] and [`ZmqSource`] carry a stream
//! of bits or LLRs from one flowgraph (a process, a host) to another, with
//! the socket patterns and raw item layout of GNU Radio's gr-zeromq stream
//! blocks, so either end may be GNU Radio.
//!
//! FutureSDR 0.0.40's own ZeroMQ blocks are not used: they have PUB/SUB
//! only, never end a stream, cut a message longer than the output room
//! without a word (`recv_into`), block an executor thread in `recv`, and
//! panic when a send fails. These use the same `zmq` crate (libzmq, built
//! from source by the crate), and run on their own threads.

mod address;
mod header;
mod sink;
mod socket;
mod source;
#[cfg(test)]
mod tests;

pub use address::ZmqAddress;
pub use header::Framing;
pub use sink::ZmqSink;
pub use socket::{DEFAULT_HWM, MAX_HWM, Pattern};
pub use source::{ZmqReceived, ZmqSource};
