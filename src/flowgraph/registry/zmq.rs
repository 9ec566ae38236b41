//! The ZeroMQ kinds: a stream sent to, or received from, another flowgraph
//! (gpufec's or GNU Radio's gr-zeromq blocks), PUSH/PULL or PUB/SUB.

use super::super::assembly::{Assembly, Node};
use super::super::params::{Args, Literal, Param, ParamType};
use super::{Kind, StreamType, io};
use crate::blocks::{Framing, Pod, Reporting, ZMQ_DEFAULT_HWM, ZMQ_MAX_HWM, ZmqAddress, ZmqPattern, ZmqSink, ZmqSource};
use crate::codes::framing::MAX_UNIT_ITEMS;
use futuresdr::runtime::dev::CpuSample;

/// The kinds of this module.
pub(super) const KINDS: &[Kind] = &[
    Kind {
        name: "ZmqPushSink",
        summary: "sends its stream over ZeroMQ PUSH (gr-zeromq's push_sink): one receiver, which slows the sender down rather than lose anything",
        groups: &[&[ADDRESS, ITEM, BIND_SINK, HWM, Param::with_default("framing", FRAMINGS, Literal::Text("raw"), FRAMING_DOC), SINK_UNIT]],
        ports: |a| Ok(io(Some(item_type(a)?), None)),
        add: |a, asm| add_sink(a, asm, ZmqPattern::PushPull),
    },
    Kind {
        name: "ZmqPullSource",
        summary: "receives a stream over ZeroMQ PULL (gr-zeromq's pull_source) from PUSH senders",
        groups: &[&[ADDRESS, ITEM, BIND_SOURCE, HWM, Param::with_default("framing", FRAMINGS, Literal::Text("raw"), FRAMING_DOC), SOURCE_UNIT, TOTAL]],
        ports: |a| Ok(io(None, Some(item_type(a)?))),
        add: |a, asm| add_source(a, asm, ZmqPattern::PushPull),
    },
    Kind {
        name: "ZmqPubSink",
        summary: "publishes its stream over ZeroMQ PUB (gr-zeromq's pub_sink) to every subscriber; one that falls behind loses messages",
        groups: &[&[ADDRESS, ITEM, BIND_SINK, HWM, Param::with_default("framing", FRAMINGS, Literal::Text("seq"), FRAMING_DOC), SINK_UNIT]],
        ports: |a| Ok(io(Some(item_type(a)?), None)),
        add: |a, asm| add_sink(a, asm, ZmqPattern::PubSub),
    },
    Kind {
        name: "ZmqSubSource",
        summary: "receives a published stream over ZeroMQ SUB (gr-zeromq's sub_source); with seq framing it counts what it missed",
        groups: &[&[ADDRESS, ITEM, BIND_SOURCE, HWM, Param::with_default("framing", FRAMINGS, Literal::Text("seq"), FRAMING_DOC), SOURCE_UNIT, TOTAL]],
        ports: |a| Ok(io(None, Some(item_type(a)?))),
        add: |a, asm| add_source(a, asm, ZmqPattern::PubSub),
    },
];

const ADDRESS: Param = Param::required("address", ParamType::Text, "tcp://HOST:PORT (tcp://*:PORT binds every interface) or ipc://PATH");
const ITEM: Param = Param::required("item", ParamType::Choice(&["i8", "f32", "u8"]), "the items: i8 or f32 LLRs, or u8 bits (0/1); GNU Radio's item size 1, 4 or 1");
const BIND_SINK: Param = Param::with_default("bind", ParamType::Flag, Literal::Flag(true), "bind the address (as gr-zeromq's sinks do), or connect to it");
const BIND_SOURCE: Param = Param::with_default("bind", ParamType::Flag, Literal::Flag(false), "bind the address, or connect to it (as gr-zeromq's sources do)");
const HWM: Param = Param::with_default("hwm", ParamType::Count, Literal::Count(ZMQ_DEFAULT_HWM), "messages (of up to 1 MiB) the socket queues, 1..=2^20");
const FRAMINGS: ParamType = ParamType::Choice(&["raw", "seq"]);
const FRAMING_DOC: &str = "raw: the items alone (gr-zeromq's layout, pass_tags off): losses cannot be counted; seq: a 24-byte header with the items' place in the stream (gpufec to gpufec)";
const SINK_UNIT: Param = Param::with_default("unit", ParamType::Count, Literal::Count(1), "items a message holds a whole number of (the stream's units: a frame of LLRs), up to a 1 MiB message");
const SOURCE_UNIT: Param = Param::with_default("unit", ParamType::Count, Literal::Count(1), "seq: a receiver joining a started stream starts at a multiple of this many items (a frame of LLRs), at most 2^26");
const TOTAL: Param = Param::optional("total", ParamType::Count, "items to receive, then end (GNU Radio's sinks send no end of stream)");

fn item_type(a: &Args) -> anyhow::Result<StreamType> {
    Ok(match a.text("item")? {
        "i8" => StreamType::I8,
        "f32" => StreamType::F32,
        _ => StreamType::U8,
    })
}

/// The address, hwm and framing every ZeroMQ kind takes.
fn common(a: &Args) -> anyhow::Result<(ZmqAddress, u64, Framing)> {
    let address = a.about("address", ZmqAddress::parse(a.text("address")?))?;
    let hwm = a.count("hwm")?;
    if !(1..=ZMQ_MAX_HWM).contains(&hwm) {
        return Err(a.invalid("hwm", format!("{hwm} is outside 1..={ZMQ_MAX_HWM}")));
    }
    let framing = Framing::named(a.text("framing")?).expect("a checked choice");
    Ok((address, hwm, framing))
}

/// Add the block with the items its `item` parameter names, by the one of
/// `add` (for `i8`, `f32`, `u8`).
fn by_item(a: &Args, asm: &mut Assembly, pattern: ZmqPattern, add: [Adder; 3]) -> anyhow::Result<Node> {
    let i = match item_type(a)? {
        StreamType::I8 => 0,
        StreamType::F32 => 1,
        _ => 2,
    };
    add[i](a, asm, pattern)
}

type Adder = fn(&Args, &mut Assembly, ZmqPattern) -> anyhow::Result<Node>;

fn add_sink(a: &Args, asm: &mut Assembly, pattern: ZmqPattern) -> anyhow::Result<Node> {
    fn add<T: Pod + CpuSample>(a: &Args, asm: &mut Assembly, pattern: ZmqPattern) -> anyhow::Result<Node> {
        let (address, hwm, framing) = common(a)?;
        let unit = a.size_in("unit", 1..=ZmqSink::<T>::MAX_UNIT)?;
        let block = a.about("address", ZmqSink::<T>::new(pattern, &address, a.flag("bind")?, hwm, framing, unit))?;
        asm.add(block.report_to(&asm.errors))
    }
    by_item(a, asm, pattern, [add::<i8>, add::<f32>, add::<u8>])
}

fn add_source(a: &Args, asm: &mut Assembly, pattern: ZmqPattern) -> anyhow::Result<Node> {
    fn add<T: Pod + CpuSample>(a: &Args, asm: &mut Assembly, pattern: ZmqPattern) -> anyhow::Result<Node> {
        let (address, hwm, framing) = common(a)?;
        let (unit, total) = (a.size_in("unit", 1..=MAX_UNIT_ITEMS)?, a.count_opt("total")?);
        let block = a.about("address", ZmqSource::<T>::new(pattern, &address, a.flag("bind")?, hwm, framing, unit as u64, total))?;
        asm.add(block.report_to(&asm.errors))
    }
    by_item(a, asm, pattern, [add::<i8>, add::<f32>, add::<u8>])
}
