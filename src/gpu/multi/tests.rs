use super::*;
use crate::codes::decode::UnitReport;

/// A decoder whose bits say which device decoded each unit, with a depth of 2.
struct Tagged {
    tag: u8,
    shape: [UnitShape; 1],
    queue: VecDeque<usize>,
}

impl BatchDecoder<u8> for Tagged {
    fn shapes(&self) -> &[UnitShape] {
        &self.shape
    }
    fn limit(&self) -> BatchLimit {
        BatchLimit { units: 3, items: 3 }
    }
    fn depth(&self) -> usize {
        2
    }
    fn submit(&mut self, batch: &Batch<'_, u8>) -> CodeResult<()> {
        self.queue.push_back(batch.items()[0] as usize);
        Ok(())
    }
    fn collect(&mut self, out: &mut Decoded) -> CodeResult<bool> {
        let Some(first) = self.queue.pop_front() else { return Ok(false) };
        out.bits.extend([first as u8, self.tag]);
        out.reports.push(UnitReport { bits: 2, iterations: 0, blocks: 1, check: None, consumed: 1 });
        Ok(true)
    }
    fn in_flight(&self) -> usize {
        self.queue.len()
    }
    fn describe(&self) -> String {
        format!("tag {}", self.tag)
    }
}

/// Batches go to the least busy device and come back in submission order.
#[test]
fn batches_are_dealt_and_collected_in_order() {
    let dev = |tag| Box::new(Tagged { tag, shape: [UnitShape::exact(1, 2)], queue: VecDeque::new() }) as Box<dyn BatchDecoder<u8>>;
    let mut m = MultiDevice::new(vec![dev(10), dev(11)], vec![0, 1]).unwrap();
    assert_eq!(m.depth(), 4);
    let items: Vec<u8> = (0..9).collect();
    // Batch by batch (a stream's decoder block): dealt to 10, 11, 10, collected in order.
    let mut out = Decoded::default();
    for first in [0, 3, 6] {
        m.submit(&Batch::uniform(&items[first..first + 3], 1).unwrap()).unwrap();
    }
    while m.collect(&mut out).unwrap() {}
    assert_eq!(out.bits, vec![0, 10, 3, 11, 6, 10]);
    assert_eq!(m.dealt(), vec![(0, 2, 6), (1, 1, 3)]);
    assert!(m.describe().starts_with("2 GPUs"));
}

/// A fake GPU decoder: units of 4 items decode to their 4 items (so every
/// bit shows where it came from), after `delay` of work on its own thread;
/// with `fail_at`, the batch it was submitted that many-th fails when
/// collected with `failure` after the device's name, and every call after
/// fails too; `ready`: it says its oldest batch is finished whenever it
/// holds one, so that its thread collects ahead of the caller.
struct Fake {
    device: usize,
    queue: VecDeque<Vec<u8>>,
    submitted: u64,
    fail_at: Option<u64>,
    failed: bool,
    failure: &'static str,
    delay: std::time::Duration,
    ready: bool,
}

/// A watchdog's failure: the device is lost, the process is not.
const WATCHDOG: &str = "a batch was still on the GPU after the watchdog's 1.000 s (gpu_watchdog_ms); its kernel is left running";
/// A kernel fault: CUDA serves no device of the process after it.
const TRAPPED: &str = "CUDA work on the GPU failed: DriverError(CUDA_ERROR_LAUNCH_FAILED, \"unspecified launch failure\")";

const UNIT: usize = 4;

/// A fake of `device` that does not fail.
fn fake(device: usize) -> Box<Fake> {
    Box::new(Fake { device, queue: VecDeque::new(), submitted: 0, fail_at: None, failed: false, failure: WATCHDOG, delay: std::time::Duration::from_micros(200), ready: true })
}

impl Fake {
    fn trap(&mut self) -> CodeResult<()> {
        self.failed = true;
        Err(CodeError::Device(format!("GPU {}: {}", self.device, self.failure)))
    }
}

impl BatchDecoder<u8> for Fake {
    fn shapes(&self) -> &[UnitShape] {
        const SHAPE: [UnitShape; 1] = [UnitShape::exact(UNIT, UNIT)];
        &SHAPE
    }
    fn limit(&self) -> BatchLimit {
        BatchLimit { units: 3, items: 3 * UNIT }
    }
    fn depth(&self) -> usize {
        2
    }
    fn submit(&mut self, batch: &Batch<'_, u8>) -> CodeResult<()> {
        if self.failed {
            self.trap()?;
        }
        if batch.spans_iter().flat_map(|s| &batch.items()[s.start..s.start + s.len]).any(|&x| x == 255) {
            return Err(CodeError::NonFiniteLlr { index: 0 });
        }
        assert!(self.queue.len() < 2, "submitted past its depth");
        std::thread::sleep(self.delay);
        self.submitted += 1;
        let mut items: Vec<u8> = batch.spans_iter().flat_map(|s| batch.items()[s.start..s.start + s.len].to_vec()).collect();
        if self.fail_at == Some(self.submitted) {
            // Its results are garbage: the failure must keep them out.
            items.fill(254);
            items.push(0);
        }
        self.queue.push_back(items);
        Ok(())
    }
    fn collect(&mut self, out: &mut Decoded) -> CodeResult<bool> {
        let Some(items) = self.queue.pop_front() else { return Ok(false) };
        if self.failed || items.len() % UNIT != 0 {
            // Half written, then the failure.
            out.bits.extend(&items[..items.len() / 2]);
            self.trap()?;
        }
        std::thread::sleep(self.delay);
        out.reports.extend(std::iter::repeat_n(UnitReport { bits: UNIT, iterations: 0, blocks: 1, check: None, consumed: UNIT }, items.len() / UNIT));
        out.bits.extend(items);
        Ok(true)
    }
    fn in_flight(&self) -> usize {
        self.queue.len()
    }
    fn oldest_ready(&mut self) -> bool {
        self.ready && !self.queue.is_empty()
    }
    fn describe(&self) -> String {
        format!("fake {}", self.device)
    }
}

/// `devices` fakes, those in `failing` failing at their `at`-th batch.
fn fakes(devices: usize, failing: &[(usize, u64)]) -> MultiDevice<u8> {
    fakes_ready(devices, failing, true)
}

/// [`fakes`] that say whether their oldest batch is finished (`ready`:
/// their threads collect ahead) or cannot tell (the caller's turn collects).
fn fakes_ready(devices: usize, failing: &[(usize, u64)], ready: bool) -> MultiDevice<u8> {
    let inner = (0..devices).map(|d| Box::new(Fake { fail_at: failing.iter().find(|f| f.0 == d).map(|f| f.1), ready, ..*fake(d) }) as Box<dyn BatchDecoder<u8>>).collect();
    MultiDevice::new(inner, (0..devices).collect()).unwrap()
}

/// `units` units of distinct items (none 255).
fn items(units: usize) -> Vec<u8> {
    (0..units * UNIT).map(|i| (i * 7 % 251) as u8).collect()
}

/// How `m` is driven: as a stream's decoder block does (submit a batch, or
/// submit it where it lies and overwrite it once read), or by `decode`.
#[derive(Clone, Copy, Debug)]
enum Drive {
    Submit,
    InPlace,
    Decode,
}

/// Decode `input` through `m`, three units a batch, driven as `drive` says.
fn run(m: &mut MultiDevice<u8>, input: &[u8], drive: Drive) -> CodeResult<Decoded> {
    let mut out = Decoded::default();
    if let Drive::Decode = drive {
        m.decode(&Batch::uniform(input, UNIT)?, &mut out)?;
        return Ok(out);
    }
    // One buffer the in-place drive reuses batch after batch, as a stream's input buffer.
    let mut buffer = [0u8; 3 * UNIT];
    for part in input.chunks(3 * UNIT) {
        if m.in_flight() >= m.depth() {
            m.collect(&mut out)?;
        }
        let batch = &mut buffer[..part.len()];
        batch.copy_from_slice(part);
        match drive {
            Drive::InPlace => {
                // SAFETY: `buffer` outlives `m`'s use of it: it is overwritten
                // only after `reused_read`, and forgotten before it is dropped.
                unsafe { m.submit_reused(&Batch::uniform(batch, UNIT)?) }?;
                m.reused_read()?;
                batch.fill(253);
            }
            _ => m.submit(&Batch::uniform(batch, UNIT)?)?,
        }
    }
    while m.collect(&mut out)? {}
    m.forget_reused();
    Ok(out)
}

/// Four equal devices: the bits in the input's order, every device within
/// one batch of the others, however the decoder is driven.
#[test]
fn four_equal_devices_share_fairly_and_keep_the_order() {
    for (drive, ready) in [Drive::Submit, Drive::InPlace, Drive::Decode].into_iter().flat_map(|d| [(d, false), (d, true)]) {
        for units in [3 * 41, 3 * 40 + 2, 3 * 2] {
            let mut m = fakes_ready(4, &[], ready);
            let input = items(units);
            let out = run(&mut m, &input, drive).unwrap();
            assert_eq!(out.bits, input, "{drive:?}, {units} units, ready {ready}");
            assert_eq!(out.reports.len(), units);
            let batches: Vec<u64> = m.dealt().iter().map(|d| d.1).collect();
            let (lo, hi) = (batches.iter().min().unwrap(), batches.iter().max().unwrap());
            assert!(hi - lo <= 1, "{drive:?}, {units} units: batches dealt {batches:?}");
            assert_eq!(batches.iter().sum::<u64>(), units.div_ceil(3) as u64);
        }
    }
}

/// Each device's thread stages its batches while the caller waits on
/// another's results: four fakes that each take a while to stage and to
/// unpack decode well within the time one thread doing both for all would take.
#[test]
fn devices_stage_while_the_caller_collects() {
    let delay = std::time::Duration::from_millis(5);
    let inner = (0..4).map(|d| Box::new(Fake { delay, ..*fake(d) }) as Box<dyn BatchDecoder<u8>>).collect();
    let mut m = MultiDevice::new(inner, (0..4).collect()).unwrap();
    let input = items(3 * 40);
    let t = std::time::Instant::now();
    assert_eq!(run(&mut m, &input, Drive::Decode).unwrap().bits, input);
    let serial = 40 * 2 * delay;
    assert!(t.elapsed() < serial * 4 / 5, "{:?} against {serial:?} one after the other", t.elapsed());
}

/// Each device's thread unpacks the batches its device has finished while
/// the caller waits on another's: four fakes whose unpacking takes 5 ms a
/// batch decode 40 batches, in the input's order, well within the 200 ms
/// of unpacking one after the other, which fakes that cannot tell whether a
/// batch is finished take (each collected on the caller's turn).
#[test]
fn devices_unpack_side_by_side() {
    let delay = std::time::Duration::from_millis(5);
    let serial = 40 * delay;
    for ready in [true, false] {
        let inner = (0..4).map(|d| Box::new(Fake { delay, ready, ..*fake(d) }) as Box<dyn BatchDecoder<u8>>).collect();
        let mut m = MultiDevice::new(inner, (0..4).collect()).unwrap();
        let input = items(3 * 40);
        let t = std::time::Instant::now();
        // Batch by batch, as a stream's decoder block.
        assert_eq!(run(&mut m, &input, Drive::Submit).unwrap().bits, input);
        let took = t.elapsed();
        match ready {
            true => assert!(took < serial * 3 / 4, "{took:?} against {serial:?} one after the other"),
            false => assert!(took >= serial, "{took:?}: the caller's turn alone unpacked faster than one after the other"),
        }
    }
}

/// A device's thread unpacks each batch as soon as its device has finished
/// it, not when the caller next asks: after two batches on each of two
/// fakes have had time to be staged and unpacked (50 ms each), the caller's
/// four collections wait for no unpacking.
#[test]
fn finished_batches_are_unpacked_before_the_caller_asks() {
    let delay = std::time::Duration::from_millis(50);
    let inner = (0..2).map(|d| Box::new(Fake { delay, ..*fake(d) }) as Box<dyn BatchDecoder<u8>>).collect();
    let mut m = MultiDevice::new(inner, vec![0, 1]).unwrap();
    let input = items(3 * 4);
    for batch in input.chunks(3 * UNIT) {
        m.submit(&Batch::uniform(batch, UNIT).unwrap()).unwrap();
    }
    // Each thread: two stagings and two unpackings, 200 ms.
    std::thread::sleep(8 * delay);
    let t = std::time::Instant::now();
    let mut out = Decoded::default();
    while m.collect(&mut out).unwrap() {}
    assert!(t.elapsed() < delay, "{:?} to collect what was unpacked already", t.elapsed());
    assert_eq!(out.bits, input);
}

/// Calls of one batch each go round the devices, not always to the first.
#[test]
fn single_batches_go_round_the_devices() {
    let mut m = fakes(4, &[]);
    for _ in 0..8 {
        run(&mut m, &items(3), Drive::Decode).unwrap();
    }
    assert_eq!(m.dealt().iter().map(|d| d.1).collect::<Vec<_>>(), vec![2, 2, 2, 2]);
}

/// A device that fails at its third batch is taken out, the others decode
/// its batches in flight again: every bit as without the fault, and the
/// decoder says which device left and why.
#[test]
fn a_failing_device_is_taken_out_and_no_bit_is_lost() {
    for (drive, ready) in [Drive::Submit, Drive::InPlace, Drive::Decode].into_iter().flat_map(|d| [(d, false), (d, true)]) {
        for devices in [2, 3, 4] {
            let input = items(3 * 30 + 1);
            let mut m = fakes_ready(devices, &[(1, 3)], ready);
            let out = run(&mut m, &input, drive).unwrap_or_else(|e| panic!("{drive:?}, {devices} devices, ready {ready}: {e}"));
            assert_eq!(out.bits, input, "{drive:?}, {devices} devices");
            assert_eq!(out.reports.len(), 3 * 30 + 1);
            let said = m.describe();
            assert!(said.contains(&format!("GPU 1 taken out (GPU 1: {WATCHDOG})")), "{said}");
            assert_eq!(m.depth(), 2 * (devices - 1));
            // The failed device decoded two batches (or one, when its second was
            // collected ahead and so decoded again elsewhere); the rest went elsewhere.
            let dealt = m.dealt();
            assert!((1..=2).contains(&dealt[1].1) && (ready || dealt[1].1 == 2), "{dealt:?}");
            assert_eq!(dealt.iter().map(|d| d.1).sum::<u64>(), 31, "{dealt:?}");
        }
    }
}

/// A kernel fault on one of several devices fails the decoder, saying that
/// no device can take over, however it is driven.
#[test]
fn a_kernel_fault_fails_the_decoder_on_every_device() {
    for drive in [Drive::Submit, Drive::InPlace, Drive::Decode] {
        let inner = (0..3).map(|d| Box::new(Fake { fail_at: (d == 1).then_some(3), failure: TRAPPED, ..*fake(d) }) as Box<dyn BatchDecoder<u8>>).collect();
        let mut m = MultiDevice::new(inner, vec![0, 1, 2]).unwrap();
        let e = run(&mut m, &items(3 * 30), drive).unwrap_err().to_string();
        assert!(e.contains("GPU 1: CUDA work on the GPU failed") && e.contains("serves no GPU of the process") && e.contains("GPU 0, 2 cannot take over"), "{drive:?}: {e}");
        assert!(!m.describe().contains("taken out"), "{drive:?}");
    }
}

/// Without take-out: the same bits in the same order however the decoder
/// is driven, no copy of any batch kept, and a failing device fails the
/// decoder instead of being taken out.
#[test]
fn without_take_out_nothing_is_kept_and_a_failure_is_the_decoders() {
    for drive in [Drive::Submit, Drive::InPlace, Drive::Decode] {
        let input = items(3 * 30 + 1);
        let mut m = fakes(3, &[]).without_take_out();
        let out = run(&mut m, &input, drive).unwrap_or_else(|e| panic!("{drive:?}: {e}"));
        assert_eq!(out.bits, input, "{drive:?}");
        assert_eq!(out.reports.len(), 3 * 30 + 1);
        assert!(m.spare.iter().all(|k| k.copied_nothing()), "{drive:?}: a batch was copied");
        let batches: Vec<u64> = m.dealt().iter().map(|d| d.1).collect();
        assert!(batches.iter().max().unwrap() - batches.iter().min().unwrap() <= 1, "{drive:?}: {batches:?}");
        let mut m = fakes(3, &[(1, 3)]).without_take_out();
        let e = run(&mut m, &input, drive).unwrap_err();
        assert!(matches!(&e, CodeError::Device(w) if w.contains(WATCHDOG)), "{drive:?}: {e}");
        assert!(!m.describe().contains("taken out"), "{drive:?}");
    }
}

/// With the last device failing, the decoder fails with the device's error.
#[test]
fn the_last_device_failing_fails_the_decoder() {
    let mut m = fakes(2, &[(0, 2), (1, 4)]);
    let e = run(&mut m, &items(3 * 30), Drive::Submit).unwrap_err();
    assert!(matches!(&e, CodeError::Device(m) if m.contains("GPU 1")), "{e}");
    let mut m = fakes(2, &[(0, 2), (1, 4)]);
    let e = run(&mut m, &items(3 * 30), Drive::Decode).unwrap_err();
    assert!(matches!(&e, CodeError::Device(_)), "{e}");
    // Nothing stays in flight after a failed decode.
    assert_eq!(m.in_flight(), 0);
}

/// A batch a device refuses for its input (not a device failure) fails the
/// call, however the decoder is driven (a refusal its thread answers while
/// the caller collects another device's batch included), and takes no
/// device out; the decoder goes on.
#[test]
fn bad_input_is_the_callers_error_not_the_devices() {
    for drive in [Drive::Submit, Drive::InPlace, Drive::Decode] {
        for bad in [0, 5, 9] {
            let mut m = fakes(2, &[]);
            let mut input = items(3 * 10);
            input[bad * 3 * UNIT] = 255;
            let e = run(&mut m, &input, drive).unwrap_err();
            assert!(matches!(e, CodeError::NonFiniteLlr { .. }), "{drive:?}, batch {bad}: {e}");
            let mut out = Decoded::default();
            while m.collect(&mut out).unwrap() {}
            m.forget_reused();
            assert_eq!(m.depth(), 4);
            let input = items(3 * 10);
            assert_eq!(run(&mut m, &input, drive).unwrap().bits, input, "{drive:?}, batch {bad}");
            assert!(!m.describe().contains("taken out"));
        }
    }
}

/// A refusal that a device's thread answered before the caller's next
/// collect still fails a call (that of the refused batch's turn, which
/// reads it), and the good batch before it still comes.
#[test]
fn a_refusal_read_between_collects_is_still_said() {
    let mut m = fakes(2, &[]);
    let good = items(3);
    let mut bad = items(3);
    bad[0] = 255;
    m.submit(&Batch::uniform(&good, UNIT).unwrap()).unwrap();
    m.submit(&Batch::uniform(&bad, UNIT).unwrap()).unwrap();
    // Both answered before the caller looks.
    std::thread::sleep(std::time::Duration::from_millis(50));
    let mut out = Decoded::default();
    let mut said = Vec::new();
    for _ in 0..4 {
        match m.collect(&mut out) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => said.push(e),
        }
    }
    assert!(matches!(said[..], [CodeError::NonFiniteLlr { .. }]), "{said:?}");
    assert_eq!(out.bits, good);
}

#[test]
fn device_lists_are_checked() {
    for bad in ["", " ", "0,", "a", "0,0", "1e3", "-1"] {
        assert!(DeviceList::parse(bad).is_err(), "{bad:?} accepted");
    }
    let many = (0..65).map(|d| d.to_string()).collect::<Vec<_>>().join(",");
    assert!(DeviceList::parse(&many).unwrap_err().to_string().contains("at most 64"));
}
