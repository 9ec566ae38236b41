use super::header::{HEADER_BYTES, Header};
use super::*;
use crate::blocks::file::bytes_of;
use crate::blocks::{FirstError, Pod, Reporting, runtime};
use futuresdr::blocks::{VectorSink, VectorSource};
use futuresdr::runtime::Flowgraph;
use futuresdr::runtime::dev::CpuSample;
use std::sync::atomic::Ordering;
use std::thread::{self, JoinHandle};
use std::time::Duration;

/// A loopback address on a port free a moment ago.
fn free_address() -> ZmqAddress {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    ZmqAddress::parse(&format!("tcp://127.0.0.1:{port}")).unwrap()
}

/// Run `items` through a sink (bound at `address`) on a thread of its own.
fn send<T: Pod + CpuSample>(sink: ZmqSink<T>, items: Vec<T>) -> JoinHandle<Result<(), String>> {
    thread::spawn(move || {
        let errors = FirstError::default();
        let mut fg = Flowgraph::new();
        let snk = fg.add(sink.report_to(&errors));
        let src = fg.add(VectorSource::<T>::new(items));
        fg.stream_dyn(src, "output", snk, "input").unwrap();
        runtime().run(fg).map(drop).map_err(|e| errors.message().unwrap_or(e.to_string()))
    })
}

/// Everything `source` emits, or its error.
fn receive<T: Pod + CpuSample>(source: ZmqSource<T>) -> Result<Vec<T>, String> {
    let errors = FirstError::default();
    let mut fg = Flowgraph::new();
    let snk = fg.add(VectorSink::<T>::new(1024));
    let src = fg.add(source.report_to(&errors));
    fg.stream_dyn(src, "output", snk, "input").unwrap();
    match (runtime().run(fg), errors.message()) {
        (Ok(_), Some(e)) | (Err(_), Some(e)) => Err(e),
        (Ok(fg), None) => Ok(snk.get(&fg).unwrap().items().clone()),
        (Err(e), None) => Err(e.to_string()),
    }
}

/// A plain socket of the test's own, bound or connected at `address`.
fn plain(kind: zmq::SocketType, address: &ZmqAddress, bind: bool) -> (zmq::Context, zmq::Socket) {
    let ctx = zmq::Context::new();
    let s = ctx.socket(kind).unwrap();
    s.set_linger(5000).unwrap();
    if bind { s.bind(address.as_str()).unwrap() } else { s.connect(address.as_str()).unwrap() }
    (ctx, s)
}

fn seq(stream: u64, first: u64, end: bool, items: &[i8]) -> Vec<u8> {
    let mut m = Header { stream, first, end }.to_bytes().to_vec();
    m.extend_from_slice(bytes_of(items));
    m
}

fn ramp(n: usize) -> Vec<i8> {
    (0..n).map(|i| (i % 251) as i8).collect()
}

#[test]
fn push_to_pull_carries_every_item_in_order_in_either_framing() {
    for framing in [Framing::Raw, Framing::Seq] {
        let address = free_address();
        let items: Vec<f32> = (0..3_000_001).map(|i| i as f32 * 0.5 - 7.0).collect();
        let source = ZmqSource::<f32>::new(Pattern::PushPull, &address, false, 4, framing, 1, None).unwrap();
        let received = source.received();
        let sender = send(ZmqSink::<f32>::new(Pattern::PushPull, &address, true, 4, framing, 1).unwrap(), items.clone());
        let got = receive(source).unwrap();
        sender.join().unwrap().unwrap();
        assert_eq!(got, items, "{framing:?}");
        // 12 MB in messages of at most 1 MiB, and the end.
        assert!(received.messages.load(Ordering::Relaxed) >= 13);
        assert_eq!(received.missed.load(Ordering::Relaxed), 0);
    }
}

#[test]
fn a_slow_receiver_stalls_the_pusher_and_then_gets_everything() {
    let address = free_address();
    let items = ramp(64 << 20);
    let sink = ZmqSink::<i8>::new(Pattern::PushPull, &address, true, 1, Framing::Raw, 1).unwrap();
    let sent = sink.sent();
    let sender = send(sink, items.clone());
    let (_ctx, pull) = plain(zmq::PULL, &address, false);
    pull.set_rcvhwm(1).unwrap();
    // The receiver takes nothing for a while: the sender, which could send
    // the whole stream in a fraction of that time, stops once the queues
    // (a message a side) and the sockets' kernel buffers are full.
    thread::sleep(Duration::from_millis(1500));
    let queued = sent.load(Ordering::Relaxed);
    assert!(queued < 16 << 20, "{queued} of {} items went into the queues while nobody read", items.len());
    let mut got = Vec::with_capacity(items.len());
    loop {
        let m = pull.recv_bytes(0).unwrap();
        if m.is_empty() {
            break;
        }
        got.extend(m.iter().map(|&b| b as i8));
    }
    sender.join().unwrap().unwrap();
    assert!(got == items, "{} items of {} came, not all equal", got.len(), items.len());
}

#[test]
fn a_seq_receiver_counts_lost_items_and_keeps_every_later_one_in_place() {
    let address = free_address();
    let (_ctx, push) = plain(zmq::PUSH, &address, true);
    let source = ZmqSource::<i8>::new(Pattern::PushPull, &address, false, 16, Framing::Seq, 4, None).unwrap();
    let received = source.received();
    let stream = 99;
    // A receiver that joins at item 5 starts at the unit boundary 8; items
    // 20..30 never come.
    push.send(seq(stream, 5, false, &ramp(15)[5..]), 0).unwrap();
    push.send(seq(stream, 15, false, &ramp(20)[15..]), 0).unwrap();
    push.send(seq(stream, 30, false, &ramp(40)[30..]), 0).unwrap();
    push.send(seq(stream, 40, true, &[]), 0).unwrap();
    let got = receive(source).unwrap();
    let mut want = ramp(40)[8..].to_vec();
    want[12..22].fill(0);
    assert_eq!(got, want);
    assert_eq!(received.missed.load(Ordering::Relaxed), 10);
    assert_eq!(received.gaps.load(Ordering::Relaxed), 1);
    assert_eq!(received.joined_at.load(Ordering::Relaxed), 8);
}

#[test]
fn a_new_sender_or_a_message_from_the_past_fails_a_seq_receiver() {
    for (second, why) in [(seq(2, 10, false, &ramp(5)), "a new sender started"), (seq(1, 3, false, &ramp(5)), "before item 10, which came already")] {
        let address = free_address();
        let (_ctx, push) = plain(zmq::PUSH, &address, true);
        let source = ZmqSource::<i8>::new(Pattern::PushPull, &address, false, 16, Framing::Seq, 1, None).unwrap();
        push.send(seq(1, 0, false, &ramp(10)), 0).unwrap();
        push.send(second, 0).unwrap();
        let e = receive(source).unwrap_err();
        assert!(e.contains(why), "{e}");
    }
}

#[test]
fn a_restarted_receiver_says_where_it_joined_and_gets_the_rest_exactly() {
    let address = free_address();
    let items = ramp(24 << 20);
    let sender = send(ZmqSink::<i8>::new(Pattern::PushPull, &address, true, 2, Framing::Seq, 2).unwrap(), items.clone());
    // The first receiver takes three messages and dies; what its queue held is lost.
    {
        let (_ctx, pull) = plain(zmq::PULL, &address, false);
        pull.set_linger(0).unwrap();
        for _ in 0..3 {
            assert!(!pull.recv_bytes(0).unwrap().is_empty());
        }
    }
    let source = ZmqSource::<i8>::new(Pattern::PushPull, &address, false, 2, Framing::Seq, 2, None).unwrap();
    let received = source.received();
    let got = receive(source).unwrap();
    sender.join().unwrap().unwrap();
    let joined = received.joined_at.load(Ordering::Relaxed) as usize;
    assert!(joined >= 3 * 1000 && joined.is_multiple_of(2), "joined at {joined}");
    assert!(got == items[joined..], "{} items from {joined} on, not the stream's", got.len());
    assert_eq!(received.missed.load(Ordering::Relaxed), 0);
}

#[test]
fn a_publisher_drops_for_a_slow_subscriber_and_its_headers_say_what() {
    let address = free_address();
    let sink = ZmqSink::<i8>::new(Pattern::PubSub, &address, true, 1, Framing::Seq, 1).unwrap();
    let ctx = zmq::Context::new();
    let sub = ctx.socket(zmq::SUB).unwrap();
    sub.set_rcvhwm(1).unwrap();
    sub.set_subscribe(b"").unwrap();
    // The end message may be dropped too: stop after a second of silence.
    sub.set_rcvtimeo(1000).unwrap();
    sub.connect(address.as_str()).unwrap();
    // A publisher drops everything until the subscription has reached it.
    thread::sleep(Duration::from_millis(300));
    let items = ramp(32 << 20);
    let sender = send(sink, items.clone());
    let (mut next, mut missed, mut got) = (None, 0, 0);
    while let Ok(m) = sub.recv_bytes(0) {
        let h = Header::parse(&m).unwrap();
        let body: Vec<i8> = m[HEADER_BYTES..].iter().map(|&b| b as i8).collect();
        assert!(body == items[h.first as usize..h.first as usize + body.len()], "a message's items are not the stream's at {}", h.first);
        if let Some(n) = next {
            missed += h.first - n;
        }
        next = Some(h.first + body.len() as u64);
        got += body.len();
        if h.end {
            break;
        }
        thread::sleep(Duration::from_millis(20));
    }
    sender.join().unwrap().unwrap();
    assert!(missed > 0, "a subscriber reading 50 messages a second kept up with a publisher of 32 MiB");
    assert!(got < items.len());
}

#[test]
fn a_message_of_partial_items_fails_the_receiver_naming_bytes_and_item_size() {
    let address = free_address();
    let (_ctx, push) = plain(zmq::PUSH, &address, true);
    let source = ZmqSource::<f32>::new(Pattern::PushPull, &address, false, 16, Framing::Raw, 1, None).unwrap();
    push.send(vec![0u8; 1001], 0).unwrap();
    let e = receive(source).unwrap_err();
    assert!(e.contains("holds 1001 bytes of items, not a whole number of 4-byte f32 items (1 bytes left over)"), "{e}");
}

#[test]
fn framings_that_differ_are_named() {
    let address = free_address();
    let (_ctx, push) = plain(zmq::PUSH, &address, true);
    let source = ZmqSource::<i8>::new(Pattern::PushPull, &address, false, 16, Framing::Raw, 1, None).unwrap();
    push.send(seq(1, 0, false, &ramp(8)), 0).unwrap();
    let e = receive(source).unwrap_err();
    assert!(e.contains("starts with a seq header"), "{e}");
    // A sender of its own: PUSH could deal the next message to the first
    // receiver's connection while it closes, and it would be lost.
    let address = free_address();
    let (_ctx2, push) = plain(zmq::PUSH, &address, true);
    let source = ZmqSource::<i8>::new(Pattern::PushPull, &address, false, 16, Framing::Seq, 1, Some(10)).unwrap();
    push.send(vec![1u8; 40], 0).unwrap();
    let e = receive(source).unwrap_err();
    assert!(e.contains("has no seq header"), "{e}");
}

#[test]
fn an_end_before_the_total_fails_the_receiver() {
    let address = free_address();
    let (_ctx, push) = plain(zmq::PUSH, &address, true);
    let source = ZmqSource::<i8>::new(Pattern::PushPull, &address, false, 16, Framing::Raw, 1, Some(100)).unwrap();
    push.send(vec![1u8; 40], 0).unwrap();
    push.send(Vec::<u8>::new(), 0).unwrap();
    let e = receive(source).unwrap_err();
    assert!(e.contains("ended its stream after 40 items, before the 100"), "{e}");
}

#[test]
fn a_bound_address_is_refused_when_the_block_is_made() {
    let address = free_address();
    let _first = ZmqSink::<u8>::new(Pattern::PushPull, &address, true, 16, Framing::Raw, 1).unwrap();
    let e = ZmqSink::<u8>::new(Pattern::PubSub, &address, true, 16, Framing::Raw, 1).err().unwrap().to_string();
    assert!(e.contains(&format!("cannot bind {address}: the address is already in use")), "{e}");
}
