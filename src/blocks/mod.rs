//! Layer 3: FutureSDR blocks (`#[derive(Block)]`) for channel-coding chains.
//!
//! The blocks are thin: the codes, channels and decoders live in
//! [`codes`](crate::codes) (and [`gpu`](crate::gpu)); a block moves items between
//! FutureSDR stream buffers and calls them. Streams carry bits as unpacked `u8`
//! 0/1, channel samples as `f32`, and LLRs (positive means bit 0) as `f32`, or
//! `i8` after [`Quantize`].
//!
//! A receive chain: [`RandomBits`] → [`ConvEncoder`] → [`Puncture`] →
//! [`BpskMapper`] → [`Awgn`] → [`LlrDemapper`] → [`Quantize`] → [`Depuncture`] →
//! [`Framer`] → [`ViterbiDecoder`] → [`ThroughputProbe`] → [`BerSink`] (whose
//! second input takes the bits of [`RandomBits`]).
//!
//! Every code family uses the same two blocks around its code, under its own
//! names: an encoder block over its [`Encoder`](crate::codes::encode::Encoder)
//! ([`ConvEncoder`]) and the decoder block over its
//! [`BatchDecoder`](crate::codes::BatchDecoder) ([`ViterbiDecoder`]), fed by
//! a [`Framer`] over its [`Cutter`](crate::codes::framing::Cutter) or cutting
//! its input itself.
//!
//! Add a flowgraph's blocks readers first (a sink before the blocks that feed
//! it): FutureSDR 0.0.40 initializes blocks in the order they were added and
//! starts each one as soon as it is initialized, and a block that is told "your
//! input is finished" before its own initialization drops that message and
//! then waits forever. The [`flowgraph`](crate::flowgraph) builder does this.
//!
//! Blocks that can fail at run time (bad input, a truncated stream) take a
//! [`FirstError`] through `report_to`, because FutureSDR 0.0.40 does not hand a
//! block's error to the caller.

mod awgn;
mod ber_sink;
mod bpsk_awgn;
mod bpsk_mapper;
mod ccsds;
mod conv;
mod decoder;
mod encoder;
mod file;
mod first_error;
mod framer;
mod llr_demapper;
mod polar;
mod profile;
mod quantize;
mod radio;
mod random_bits;
mod stream;
mod sync;
#[cfg(test)]
mod testing;
mod throughput_probe;
mod turbo;
mod unit_tags;
mod zmq;

pub use awgn::Awgn;
pub use ber_sink::{BerCounters, BerCounts, BerSink, BerStop};
pub use bpsk_awgn::BpskAwgn;
pub use bpsk_mapper::BpskMapper;
pub use ccsds::{AsmSync, CcsdsDecoder, CcsdsEncoder, FrameCounts, HexFrameSink, MarkerInserter, SoftAsmSync};
pub use conv::{ConvEncoder, Depuncture, PairSync, Puncture, ViterbiDecoder};
pub use decoder::{DEFAULT_MAX_LATENCY, DecoderCounts, DecoderOptions, DecoderStats};
pub use file::{FileFormat, FileSink, FileSource, FileWritten, Pod};
pub use first_error::{FirstError, Reporting};
pub use framer::Framer;
pub use llr_demapper::LlrDemapper;
pub use polar::{PolarDecoder, PolarEncoder};
pub use profile::{BlockLoad, Counted, Profiled};
pub use quantize::Quantize;
pub use radio::{
    Agc, BitDifferentialDecoder, CarrierRecovery, ChannelModel, DifferentialDecoder, DifferentialEncoder, FskDemodulator, MatchedFilter, PskMapper, PskReceiver, PulseShaper, RealToComplex,
    SigmfSink, SigmfSource, SoftDemapper, TimingRecovery, WavItem, WavSource,
};
#[cfg(feature = "seify")]
pub use radio::{SdrSettings, SdrSource};
pub use random_bits::RandomBits;
pub use throughput_probe::{Throughput, ThroughputMeter, ThroughputProbe};
pub use sync::{BsidChannel, SyncDecoder, SyncEncoder};
pub use turbo::{TransportEncoder, TurboDecoder, TurboEncoder};
pub use unit_tags::{UNIT_FORMAT_TAG, UNIT_LLRS_TAG, UNIT_REPORT_TAG, VALID_BITS_TAG};
pub use zmq::{DEFAULT_HWM as ZMQ_DEFAULT_HWM, Framing, MAX_HWM as ZMQ_MAX_HWM, Pattern as ZmqPattern, ZmqAddress, ZmqReceived, ZmqSink, ZmqSource};

use futuresdr::runtime::Runtime;

/// A FutureSDR runtime for batch runs and tests: no control-port web server
/// (it would bind 127.0.0.1:1337), and no log output unless `FUTURESDR_LOG`
/// asks for it, since errors reach the caller through [`FirstError`].
pub fn runtime() -> Runtime<futuresdr::runtime::scheduler::SmolScheduler> {
    runtime_on(0, None)
}

/// FutureSDR's control port (its REST interface to the running flowgraphs,
/// `/api/fg/`), served at `addr` with more `routes` beside it.
pub struct ControlPort {
    /// Where it listens.
    pub addr: std::net::SocketAddr,
    /// Routes served beside FutureSDR's own (a dashboard's).
    pub routes: axum::Router,
}

/// [`runtime`] with `executors` threads running the blocks (0:
/// [`default_executors`]), and FutureSDR's control port where `control`
/// says (none when it is `None`). The blocks' heavy work runs on rayon's
/// threads and the GPU host pool; FutureSDR's stream buffers guard their
/// indices with spin locks, so executor threads beyond what the blocks need
/// only contend there.
pub fn runtime_on(executors: usize, control: Option<ControlPort>) -> Runtime<futuresdr::runtime::scheduler::SmolScheduler> {
    use futuresdr::runtime::config::set as config;
    let routes = match control {
        Some(c) => {
            config("ctrlport_bind", c.addr.to_string());
            config("ctrlport_enable", "true");
            c.routes
        }
        None => {
            config("ctrlport_enable", "false");
            axum::Router::new()
        }
    };
    if std::env::var_os("FUTURESDR_LOG").is_none() {
        config("log_level", "off");
    }
    let executors = if executors == 0 { default_executors() } else { executors };
    Runtime::with_config(futuresdr::runtime::scheduler::SmolScheduler::new(executors, false), routes)
}

impl ControlPort {
    /// Wait until FutureSDR's control port, started with the runtime, takes
    /// connections: it binds on a thread of its own and only logs a failure.
    pub fn wait_until_served(addr: std::net::SocketAddr) -> anyhow::Result<()> {
        let mut at = addr;
        if at.ip().is_unspecified() {
            at.set_ip(std::net::Ipv4Addr::LOCALHOST.into());
        }
        let until = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while std::net::TcpStream::connect_timeout(&at, std::time::Duration::from_millis(200)).is_err() {
            anyhow::ensure!(std::time::Instant::now() < until, "FutureSDR's control port did not start listening at {addr} (another program took the address?)");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        Ok(())
    }
}

/// FutureSDR executor threads when none are asked for: a quarter of the
/// cores, 1 to 4. The blocks' own threads do little (the heavy work is on
/// rayon and the GPU host pool), and fewer executors meet less on the
/// buffers' spin locks: one per core (FutureSDR's default) cost the 2-core
/// development machine 7–10 % more CPU time on the AWGN flowgraph than one
/// (up to 40 % with 1 MiB buffers), and on the lent H200 (16 cores) 4
/// decoded a file 20 % faster than 16, the AWGN flowgraph within 2 %
/// (BENCHMARKS.md, issue 13).
pub fn default_executors() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    (cores / 4).clamp(1, 4)
}
