//! Several GPUs behind one decoder: a family's GPU decoder built once per
//! device, each on a host thread of its own ([`worker`]), so that one
//! device's staging and unpacking run while another's are waited on; each
//! batch dealt round robin among the devices with the fewest batches in
//! flight, results collected in the order the batches came. A device that
//! fails is taken out and its batches in flight decoded again by the others
//! from the input kept for them ([`kept`]), unless the failure is a kernel
//! fault, after which CUDA serves no device of the process. Each device's
//! thread collects the batches its device has finished ahead of the
//! caller ([`ahead`]), so that the devices' host parts of collecting run
//! side by side. Every family gets it through [`on_devices`], which its
//! decoder builder calls.

mod ahead;
mod kept;
mod worker;

use super::device::devices;
use super::pipeline::PipelineOptions;
use crate::codes::decode::{Batch, BatchDecoder, BatchLimit, Decoded, UnitShape, check_batch};
use crate::codes::error::{CodeError, CodeResult, invalid};
use ahead::Ahead;
use kept::Kept;
use std::collections::VecDeque;
use worker::Worker;
/// Most devices in a list (a host has at most a few dozen).
pub const MAX_GPU_DEVICES: usize = 64;

/// The devices a GPU decoder runs on, as a user names them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceList {
    /// Every device the driver finds.
    All,
    /// These device indices, in this order.
    Listed(Vec<usize>),
}

impl DeviceList {
    /// `all`, or indices separated by commas (`0,1`); empty lists,
    /// duplicates and more than [`MAX_GPU_DEVICES`] are refused.
    ///
    /// # Example
    /// ```
    /// use gpufec::gpu::DeviceList;
    /// assert_eq!(DeviceList::parse("0, 2").unwrap(), DeviceList::Listed(vec![0, 2]));
    /// assert_eq!(DeviceList::parse("all").unwrap(), DeviceList::All);
    /// assert!(DeviceList::parse("1,1").is_err() && DeviceList::parse("").is_err() && DeviceList::parse("-1").is_err());
    /// ```
    pub fn parse(text: &str) -> anyhow::Result<Self> {
        let text = text.trim();
        if text == "all" {
            return Ok(Self::All);
        }
        anyhow::ensure!(!text.is_empty(), "an empty device list: give device indices (0,1) or all");
        let mut list = Vec::new();
        for part in text.split(',') {
            let part = part.trim();
            let d: usize = part.parse().map_err(|_| anyhow::anyhow!("'{part}' is not a device index: give indices (0,1) or all"))?;
            anyhow::ensure!(!list.contains(&d), "device {d} is listed twice");
            list.push(d);
        }
        anyhow::ensure!(list.len() <= MAX_GPU_DEVICES, "{} devices listed; at most {MAX_GPU_DEVICES}", list.len());
        Ok(Self::Listed(list))
    }

    /// The device indices, each checked against the devices found.
    pub fn resolve(&self) -> anyhow::Result<Vec<usize>> {
        let found = devices()?.len();
        match self {
            Self::All => {
                anyhow::ensure!(found > 0, "no CUDA device found");
                Ok((0..found.min(MAX_GPU_DEVICES)).collect())
            }
            Self::Listed(list) => {
                for &d in list {
                    anyhow::ensure!(d < found, "CUDA device {d} does not exist ({found} found)");
                }
                Ok(list.clone())
            }
        }
    }
}

/// The GPU decoder `options` asks for: `build` called with the options of
/// each of its devices (`options.devices`, else `options.device` alone),
/// behind a [`MultiDevice`] when there are several.
pub(crate) fn on_devices<T: Copy + Send + Sync + 'static>(
    options: &PipelineOptions,
    build: impl Fn(&PipelineOptions) -> anyhow::Result<Box<dyn BatchDecoder<T>>>,
) -> anyhow::Result<Box<dyn BatchDecoder<T>>> {
    let Some(list) = &options.devices else {
        return build(options);
    };
    let devices = list.resolve()?;
    if let [one] = devices[..] {
        return build(&PipelineOptions { device: one, devices: None, ..options.clone() });
    }
    let inner = devices
        .iter()
        .map(|&device| build(&PipelineOptions { device, devices: None, ..options.clone() }).map_err(|e| e.context(format!("GPU {device}"))))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let multi = MultiDevice::new(inner, devices)?;
    Ok(Box::new(if options.take_out { multi } else { multi.without_take_out() }))
}

/// How a batch's input is kept while it is in flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Keep {
    /// Copied on submit: the caller's batch is borrowed only for the call.
    Copy,
    /// Read where it lies until [`BatchDecoder::reused_read`], and copied
    /// meanwhile by the device's thread.
    Lent,
    /// Read where it lies: a part of the batch [`BatchDecoder::decode`]
    /// holds until every part is collected.
    Held,
}

/// Where a batch in flight stands.
enum State {
    /// Submitted to the decoder of this lane.
    On(usize),
    /// Its device was taken out: to be submitted to another.
    Orphan,
    /// Collected ahead of its turn (a batch submitted again went to its
    /// device behind it), waiting for its turn.
    Done(Decoded),
}

/// A batch in flight.
struct Flight<T> {
    seq: u64,
    units: usize,
    kept: Box<Kept<T>>,
    /// Submitted with [`Keep::Lent`] and not yet read.
    lent: bool,
    state: State,
}

/// One device: its decoder's thread and the batches it holds.
struct Lane<T: Copy + Send + Sync + 'static> {
    device: usize,
    worker: Worker<T>,
    depth: usize,
    /// The batches submitted to its decoder, oldest first: its collect order.
    fifo: VecDeque<u64>,
    /// Submissions posted whose answers were not read yet.
    unanswered: usize,
    /// The results of its oldest batches, collected by its thread ahead of
    /// the caller: the first of `fifo`, in order.
    ahead: Ahead,
    /// Why it was taken out: the device failure.
    out: Option<String>,
    /// Batches and units it decoded.
    dealt: (u64, u64),
}

/// A pointer to a flight's kept input, for the device thread that submits it.
struct KeptPtr<T>(*mut Kept<T>);
// SAFETY: the kept input is used by one thread at a time (see `MultiDevice::send`).
unsafe impl<T: Send + Sync> Send for KeptPtr<T> {}

/// One decoder per device behind one [`BatchDecoder`], each on a host thread
/// of its own: a batch goes, round robin, to a device with the fewest
/// batches in flight (so equal devices get within one batch of each
/// other), where that device's thread stages it while the caller goes on;
/// [`collect`](BatchDecoder::collect) has the oldest batch's device unpack
/// its results straight into the caller's output, so the output is in
/// submission order whatever the dealing.
///
/// Each batch's input is kept until its results are collected (a copy on
/// [`submit`](BatchDecoder::submit): one pass over the input at host memory
/// speed, and one batch of input per batch in flight; none for the parts of
/// [`decode`](BatchDecoder::decode), whose batch outlives them), so that
/// when a device fails (a [`CodeError::Device`]) it is taken out, a line on
/// stderr says so with CUDA's message, and its batches are decoded again by
/// the others: no bit lost or wrong. When the last device fails, the error
/// is the decoder's, as with one device; so is a kernel fault (an illegal
/// address, a trap: CUDA documents that the process can then use no device
/// again, and the lent H200s showed it), which says so.
pub struct MultiDevice<T: Copy + Send + Sync + 'static> {
    // Declared first, dropped first: the device threads finish what reads the kept inputs.
    lanes: Vec<Lane<T>>,
    shapes: Vec<UnitShape>,
    limit: BatchLimit,
    soft: bool,
    /// Batches in flight, oldest first.
    flights: VecDeque<Flight<T>>,
    /// Kept inputs of collected batches, for later batches (their allocations reused).
    /// Boxed, as in a flight: a device's thread points at one while it submits it.
    #[allow(clippy::vec_box)]
    spare: Vec<Box<Kept<T>>>,
    next_seq: u64,
    /// Where the round robin looks first.
    next_lane: usize,
    /// Makes the copies of the batches' input: the GPU pipelines' host threads.
    host: std::sync::Arc<rayon::ThreadPool>,
    /// Whether batches keep their input, so that a failed device can be
    /// taken out ([`Self::without_take_out`]).
    take_out: bool,
}

impl<T: Copy + Send + Sync + 'static> MultiDevice<T> {
    /// `inner[i]` runs on device `devices[i]`; all must take the same units.
    pub fn new(inner: Vec<Box<dyn BatchDecoder<T>>>, devices: Vec<usize>) -> anyhow::Result<Self> {
        anyhow::ensure!(!inner.is_empty() && inner.len() == devices.len(), "one decoder per device");
        let shapes = inner[0].shapes().to_vec();
        anyhow::ensure!(inner.iter().all(|d| d.shapes() == shapes.as_slice()), "the devices' decoders take different units");
        let l = inner.iter().map(|d| d.limit());
        let limit = BatchLimit { units: l.clone().map(|l| l.units).min().unwrap_or(0), items: l.map(|l| l.items).min().unwrap_or(0) };
        let soft = inner.iter().all(|d| d.gives_soft());
        let lanes = inner
            .into_iter()
            .zip(devices)
            .map(|(d, device)| {
                let depth = d.depth();
                let ahead = Ahead::default();
                let worker = Worker::start(device, d, ahead.clone())?;
                Ok(Lane { device, worker, depth, fifo: VecDeque::new(), unanswered: 0, ahead, out: None, dealt: (0, 0) })
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        let host = super::host_pool::host_pool(0)?;
        Ok(Self { lanes, shapes, limit, soft, flights: VecDeque::new(), spare: Vec::new(), next_seq: 0, next_lane: 0, host, take_out: true })
    }

    /// No batch keeps its input: a submitted batch is staged by its
    /// device's thread while the caller waits, a batch in memory the caller
    /// reuses goes to its device as it lies, and a device failure is the
    /// decoder's error. No host copy of the input is made, which is what
    /// several devices gain where the host's memory sets the pace.
    pub fn without_take_out(mut self) -> Self {
        self.take_out = false;
        self
    }

    /// The lane that takes the next batch: round robin among those with the
    /// fewest batches in flight, of those in service with room.
    fn pick(&mut self) -> Option<usize> {
        let n = self.lanes.len();
        let lane = (0..n)
            .map(|k| (self.next_lane + k) % n)
            .filter(|&i| self.lanes[i].out.is_none() && self.lanes[i].fifo.len() < self.lanes[i].depth)
            .min_by_key(|&i| self.lanes[i].fifo.len())?;
        self.next_lane = (lane + 1) % n;
        Some(lane)
    }

    /// The flight of `seq`, if in flight.
    fn flight(&mut self, seq: u64) -> Option<&mut Flight<T>> {
        self.flights.iter_mut().find(|f| f.seq == seq)
    }

    /// Take `batch` in, kept as `keep` says, and post it to a device.
    fn put(&mut self, batch: &Batch<'_, T>, keep: Keep) -> CodeResult<()> {
        let units = check_batch(batch, &self.shapes, self.limit)?;
        // Batches of a device taken out are older: they go first.
        self.place_orphans()?;
        // A caller that kept to the depth before a device was taken out
        // may go on so: room is made for it.
        if self.in_flight() >= self.lanes.iter().map(|l| l.depth).sum() {
            return Err(invalid!("every device has its batches in flight: collect first"));
        }
        let lane = self.room()?;
        if !self.take_out && keep == Keep::Copy {
            return self.submit_now(batch, units, lane);
        }
        let mut kept = self.spare.pop().unwrap_or_else(|| Box::new(Kept::new()));
        match keep {
            Keep::Copy => self.host.install(|| kept.copy_of(batch)),
            // SAFETY: a lent batch stays until `reused_read` ends the loan (the
            // caller's promise to `submit_reused`); a held one until `decode`
            // has collected it, or `abandon` forgot it.
            Keep::Lent | Keep::Held => unsafe { kept.lend(batch) },
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        self.flights.push_back(Flight { seq, units, kept, lent: keep == Keep::Lent, state: State::Orphan });
        let at = self.flights.len() - 1;
        match self.send(at, lane, keep == Keep::Lent) {
            Ok(()) => Ok(()),
            // Left an orphan if the device is taken out: collected in its turn.
            Err(e) => self.fail(lane, e),
        }
    }

    /// Without take-out: `lane`'s thread stages `batch` while the caller
    /// waits, so that nothing of it need be kept.
    fn submit_now(&mut self, batch: &Batch<'_, T>, units: usize, lane: usize) -> CodeResult<()> {
        let l = &mut self.lanes[lane];
        let submitted = l.worker.call(|d| d.submit(batch)).and_then(|r| r);
        submitted?;
        let seq = self.next_seq;
        self.next_seq += 1;
        l.fifo.push_back(seq);
        let kept = self.spare.pop().unwrap_or_else(|| Box::new(Kept::new()));
        self.flights.push_back(Flight { seq, units, kept, lent: false, state: State::On(lane) });
        Ok(())
    }

    /// Post the submission of flight `at` to `lane`'s decoder (`reused`: as
    /// [`BatchDecoder::submit_reused`], its kept input copied first).
    fn send(&mut self, at: usize, lane: usize, reused: bool) -> CodeResult<()> {
        let f = &mut self.flights[at];
        f.state = State::On(lane);
        let (seq, kept) = (f.seq, KeptPtr(&mut *f.kept as *mut Kept<T>));
        let host = self.host.clone();
        let keep = self.take_out;
        let l = &mut self.lanes[lane];
        l.fifo.push_back(seq);
        l.unanswered += 1;
        l.worker.post(seq, move |d| {
            let kept = kept;
            // SAFETY: the flight keeps its input until its results are
            // collected, which waits for this answer first; nothing else
            // touches it meanwhile (`settle` comes first everywhere).
            let kept = unsafe { &mut *kept.0 };
            if reused {
                if keep {
                    host.install(|| kept.copy_lent());
                }
                // SAFETY: the caller of `submit_reused` keeps the lent items
                // until `reused_read`, which waits for this decoder's reads.
                unsafe { d.submit_reused(&kept.batch()) }.map(|_| ())
            } else {
                d.submit(&kept.batch())
            }
        })
    }

    /// Read the answers of every submission posted to `lane`; the first
    /// error among them. A batch the decoder refused (its input, not the
    /// device) is no longer in flight.
    fn settle(&mut self, lane: usize) -> CodeResult<()> {
        let mut first = Ok(());
        while self.lanes[lane].unanswered > 0 {
            self.lanes[lane].unanswered -= 1;
            let (seq, result) = match self.lanes[lane].worker.answer() {
                Ok(a) => a,
                Err(gone) => {
                    self.lanes[lane].unanswered = 0;
                    return first.and(Err(gone));
                }
            };
            let Err(e) = result else { continue };
            if !matches!(e, CodeError::Device(_)) {
                self.lanes[lane].fifo.retain(|&s| s != seq);
                if let Some(at) = self.flights.iter().position(|f| f.seq == seq) {
                    let f = self.flights.remove(at).expect("a flight found");
                    self.spare.push(f.kept);
                }
            }
            first = first.and(Err(e));
        }
        first
    }

    /// After `e` from `lane`: a device failure with another device in
    /// service takes the lane out (its batches become orphans for the
    /// others, and stderr says so); any other error is the caller's, and so
    /// is a kernel fault, after which CUDA serves no device of the process.
    fn fail(&mut self, lane: usize, e: CodeError) -> CodeResult<()> {
        let CodeError::Device(why) = &e else { return Err(e) };
        if !self.take_out {
            return Err(e);
        }
        let others: Vec<String> = self.lanes.iter().enumerate().filter(|&(i, l)| i != lane && l.out.is_none()).map(|(_, l)| l.device.to_string()).collect();
        if others.is_empty() {
            return Err(e);
        }
        if super::fault::ends_the_process(why) {
            return Err(CodeError::Device(format!(
                "{why}; after this error CUDA serves no GPU of the process (it may be reported first by a GPU other than the one that failed), so GPU {} cannot take over: run again, without the failing GPU if it fails again",
                others.join(", ")
            )));
        }
        // What it was sent reads the kept inputs: over before they go elsewhere.
        while self.lanes[lane].unanswered > 0 {
            self.lanes[lane].unanswered -= 1;
            if self.lanes[lane].worker.answer().is_err() {
                self.lanes[lane].unanswered = 0;
            }
        }
        let l = &mut self.lanes[lane];
        l.out = Some(why.clone());
        l.fifo.clear();
        // What it collected ahead goes too (decoded again with the rest):
        // which batches they are is known only while every submission it
        // was sent reached its decoder, which a failed one did not.
        l.ahead.stop();
        l.ahead.forget();
        let device = l.device;
        let mut moved = 0;
        for f in self.flights.iter_mut().filter(|f| matches!(f.state, State::On(i) if i == lane)) {
            f.state = State::Orphan;
            moved += 1;
        }
        eprintln!(
            "warning: GPU {device} taken out after a device failure ({why}); its {} in flight decoded again on GPU {}",
            crate::codes::words::count_of(moved as u64, "batch"),
            others.join(", ")
        );
        Ok(())
    }

    /// Post the orphans, oldest first, to devices with room.
    fn place_orphans(&mut self) -> CodeResult<()> {
        let mut at = 0;
        while at < self.flights.len() {
            if matches!(self.flights[at].state, State::Orphan) && !self.place(at, false)? {
                break;
            }
            at += 1;
        }
        Ok(())
    }

    /// A lane in service with room, made if need be: after a device was
    /// taken out, the batches in flight may fill the others, and one sets
    /// its oldest batch's results aside.
    fn room(&mut self) -> CodeResult<usize> {
        loop {
            if let Some(lane) = self.pick() {
                return Ok(lane);
            }
            let Some(full) = self.lanes.iter().position(|l| l.out.is_none() && !l.fifo.is_empty()) else {
                return Err(invalid!("no device left to decode on"));
            };
            self.stash(full)?;
        }
    }

    /// Post the orphan at `at` to a device in service (with `make_room`,
    /// made as [`Self::room`] does); whether it went.
    fn place(&mut self, at: usize, make_room: bool) -> CodeResult<bool> {
        loop {
            let lane = match self.pick() {
                Some(lane) => lane,
                None if !make_room => return Ok(false),
                None => self.room()?,
            };
            match self.send(at, lane, false) {
                Ok(()) => return Ok(true),
                Err(e) => self.fail(lane, e)?,
            }
        }
    }

    /// Collect `lane`'s oldest batch into `out`, waiting for it; on an error
    /// `out` is as it was.
    fn collect_front(&mut self, lane: usize, out: &mut Decoded) -> CodeResult<()> {
        self.settle(lane)?;
        let lens = (out.bits.len(), out.packed.len(), out.soft.len(), out.reports.len());
        let l = &mut self.lanes[lane];
        let got = match l.ahead.take(out) {
            true => Ok(true),
            // On its thread: what it may be collecting ahead right now comes first.
            false => l.worker.call(|d| l.ahead.collect(d, out)).and_then(|r| r),
        };
        if !matches!(got, Ok(true)) {
            out.bits.truncate(lens.0);
            out.packed.truncate(lens.1);
            out.soft.truncate(lens.2);
            out.reports.truncate(lens.3);
            got?;
            return Err(CodeError::Device(format!("GPU {}: no batch to collect although one was in flight", l.device)));
        }
        let seq = l.fifo.pop_front().expect("a batch in flight");
        let units = self.flight(seq).map_or(0, |f| f.units);
        let l = &mut self.lanes[lane];
        l.dealt = (l.dealt.0 + 1, l.dealt.1 + units as u64);
        Ok(())
    }

    /// Set `lane`'s oldest batch's results aside until its turn (or take
    /// the lane out if it fails).
    fn stash(&mut self, lane: usize) -> CodeResult<()> {
        let Some(&seq) = self.lanes[lane].fifo.front() else { return Ok(()) };
        let mut aside = Decoded::default();
        match self.collect_front(lane, &mut aside) {
            Ok(()) => {
                if let Some(f) = self.flight(seq) {
                    f.state = State::Done(aside);
                }
                Ok(())
            }
            Err(e) => self.fail(lane, e),
        }
    }

    /// The default [`BatchDecoder::decode`], its parts held where they lie.
    fn decode_held(&mut self, batch: &Batch<'_, T>, out: &mut Decoded) -> CodeResult<()> {
        let mut rest = *batch;
        while rest.units() > 0 {
            let (part, later) = rest.split_within(self.limit)?;
            if self.in_flight() >= self.depth() {
                self.collect(out)?;
            }
            self.put(&part, Keep::Held)?;
            rest = later;
        }
        while self.collect(out)? {}
        Ok(())
    }

    /// Forget every batch in flight after `decode` failed: nothing may read
    /// its batch once it returns.
    fn abandon(&mut self) {
        for lane in 0..self.lanes.len() {
            let _ = self.settle(lane);
            let l = &mut self.lanes[lane];
            if l.out.is_none() {
                let (ahead, left) = (&l.ahead, l.fifo.len());
                // On its thread, so that nothing is collected ahead meanwhile.
                let _ = l.worker.call(|d| {
                    let mut scratch = Decoded::default();
                    for _ in ahead.forget()..left {
                        if !matches!(d.collect(&mut scratch), Ok(true)) {
                            break;
                        }
                        scratch.clear();
                    }
                });
            }
            l.fifo.clear();
        }
        let flights = std::mem::take(&mut self.flights);
        self.spare.extend(flights.into_iter().map(|f| f.kept));
    }
}

impl<T: Copy + Send + Sync + 'static> BatchDecoder<T> for MultiDevice<T> {
    fn shapes(&self) -> &[UnitShape] {
        &self.shapes
    }

    fn limit(&self) -> BatchLimit {
        self.limit
    }

    fn depth(&self) -> usize {
        self.lanes.iter().filter(|l| l.out.is_none()).map(|l| l.depth).sum()
    }

    fn submit(&mut self, batch: &Batch<'_, T>) -> CodeResult<()> {
        self.put(batch, Keep::Copy)
    }

    /// The batch goes to its device's thread, which copies it (to decode it
    /// again should the device fail) and submits it where it lies, while
    /// the caller goes on: it is read after this returns, until
    /// [`reused_read`](BatchDecoder::reused_read).
    unsafe fn submit_reused(&mut self, batch: &Batch<'_, T>) -> CodeResult<bool> {
        self.put(batch, Keep::Lent).map(|()| true)
    }

    fn reused_read(&mut self) -> CodeResult<()> {
        // Every device is waited on, whatever another says: the caller may
        // overwrite the items once this returns, even with an error.
        let mut first = Ok(());
        for lane in 0..self.lanes.len() {
            if self.lanes[lane].out.is_some() {
                continue;
            }
            let read = self.settle(lane).and_then(|()| self.lanes[lane].worker.call(|d| d.reused_read()).and_then(|r| r));
            if let Err(e) = read.or_else(|e| self.fail(lane, e)) {
                first = first.and(Err(e));
            }
        }
        first?;
        let keep = self.take_out;
        for f in self.flights.iter_mut().filter(|f| f.lent) {
            // Without take-out the lent items were read where they lay, and nothing keeps them.
            if keep {
                f.kept.end_loan();
            } else {
                f.kept.forget_loan();
            }
            f.lent = false;
        }
        Ok(())
    }

    fn forget_reused(&mut self) {
        // A device taken out may never answer (a kernel the watchdog left running).
        for l in self.lanes.iter().filter(|l| l.out.is_none()) {
            let _ = l.worker.call(|d| d.forget_reused());
        }
    }

    fn collect(&mut self, out: &mut Decoded) -> CodeResult<bool> {
        loop {
            let Some(front) = self.flights.front_mut() else { return Ok(false) };
            let seq = front.seq;
            match front.state {
                State::Done(ref mut aside) => {
                    ahead::hand_over(aside, out);
                    let f = self.flights.pop_front().expect("the front flight");
                    self.spare.push(f.kept);
                    return Ok(true);
                }
                State::Orphan => {
                    self.place(0, true)?;
                }
                State::On(lane) => {
                    if let Err(e) = self.settle(lane) {
                        self.fail(lane, e)?;
                        continue;
                    }
                    if self.lanes[lane].fifo.front() != Some(&seq) {
                        // Submitted again behind younger batches of its new device.
                        self.stash(lane)?;
                        continue;
                    }
                    match self.collect_front(lane, out) {
                        Ok(()) => {
                            let f = self.flights.pop_front().expect("the front flight");
                            self.spare.push(f.kept);
                            return Ok(true);
                        }
                        Err(e) => self.fail(lane, e)?,
                    }
                }
            }
        }
    }

    fn in_flight(&self) -> usize {
        self.flights.len()
    }

    fn describe(&self) -> String {
        let each: Vec<String> = self.lanes.iter().map(|l| l.worker.call(|d| d.describe()).unwrap_or_else(|e| e.to_string())).collect();
        let dealt: Vec<String> = self.dealt().iter().map(|(d, b, u)| format!("gpu {d}: {b} batches, {u} units")).collect();
        let out: String = self.lanes.iter().filter_map(|l| l.out.as_ref().map(|why| format!("; GPU {} taken out ({why})", l.device))).collect();
        format!(
            "{} GPUs, a host thread each, batches round robin to the least busy: [{}]; so far {}{out}",
            self.lanes.len(),
            each.join("] + ["),
            dealt.join(", ")
        )
    }

    fn pack_bits(&mut self) -> bool {
        let packs: Vec<bool> = self.lanes.iter().map(|l| l.worker.call(|d| d.pack_bits()).unwrap_or(false)).collect();
        packs.iter().all(|&p| p)
    }

    fn gives_soft(&self) -> bool {
        self.soft
    }

    fn dealt(&self) -> Vec<(usize, u64, u64)> {
        self.lanes.iter().map(|l| (l.device, l.dealt.0, l.dealt.1)).collect()
    }

    /// Every part of `batch` stays where it lies until collected (no copy):
    /// each device's thread stages its parts while the caller collects
    /// another's.
    fn decode(&mut self, batch: &Batch<'_, T>, out: &mut Decoded) -> CodeResult<()> {
        let done = self.decode_held(batch, out);
        if done.is_err() {
            self.abandon();
        }
        done
    }
}

#[cfg(test)]
mod tests;
