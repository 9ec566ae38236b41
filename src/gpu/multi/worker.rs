//! A host thread per device: it owns the device's decoder, so that one
//! device's staging and unpacking run while the calling thread waits on
//! another's. Work reaches it as closures, run one at a time in the order
//! they were posted; between them it collects the batches its device has
//! finished ([`Ahead`]).

use super::ahead::Ahead;
use crate::codes::decode::BatchDecoder;
use crate::codes::error::{CodeError, CodeResult};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

/// How often a thread whose device holds batches looks whether the oldest
/// is finished, when no job comes: a query of an event, against batches of
/// milliseconds.
const LOOK_EVERY: Duration = Duration::from_micros(100);

/// Work for the thread that may borrow for `'a`.
type Borrowing<'a, T> = Box<dyn FnOnce(&mut dyn BatchDecoder<T>) + Send + 'a>;
type Job<T> = Borrowing<'static, T>;
type Posted<T> = Box<dyn FnOnce(&mut dyn BatchDecoder<T>) -> CodeResult<()> + Send + 'static>;

/// What the thread is sent.
enum Message<T> {
    /// Run, answering itself.
    Call(Job<T>),
    /// Run, answering through the thread's answer channel with the tag.
    Post(u64, Posted<T>),
}

/// A device's decoder on a thread of its own.
pub(super) struct Worker<T: Copy + Send + Sync + 'static> {
    device: usize,
    jobs: Option<mpsc::Sender<Message<T>>>,
    /// What posted jobs ([`Self::post`]) answered, each with its tag; closed
    /// when the thread ends.
    answers: mpsc::Receiver<(u64, CodeResult<()>)>,
    thread: Option<JoinHandle<()>>,
}

impl<T: Copy + Send + Sync + 'static> Worker<T> {
    /// Start `decoder`'s thread for `device`, collecting ahead into `ahead`.
    pub(super) fn start(device: usize, mut decoder: Box<dyn BatchDecoder<T>>, ahead: Ahead) -> anyhow::Result<Self> {
        let (jobs, inbox) = mpsc::channel::<Message<T>>();
        let (answer_to, answers) = mpsc::channel();
        let thread = std::thread::Builder::new().name(format!("gpufec-gpu{device}")).spawn(move || {
            // A batch was just collected ahead: another may be ready at once.
            let mut more = false;
            loop {
                // Err(true): the caller is gone; Err(false): nothing came.
                let message = if more {
                    inbox.try_recv().map_err(|e| e == mpsc::TryRecvError::Disconnected)
                } else if ahead.pending(decoder.as_ref()) {
                    inbox.recv_timeout(LOOK_EVERY).map_err(|e| e == mpsc::RecvTimeoutError::Disconnected)
                } else {
                    inbox.recv().map_err(|_| true)
                };
                match message {
                    Ok(Message::Call(job)) => job(decoder.as_mut()),
                    Ok(Message::Post(tag, job)) => {
                        let _ = answer_to.send((tag, job(decoder.as_mut())));
                    }
                    Err(true) => break,
                    Err(false) => {}
                }
                more = ahead.collect_one(decoder.as_mut());
            }
        })?;
        Ok(Self { device, jobs: Some(jobs), answers, thread: Some(thread) })
    }

    /// The error of a thread that is gone (a job panicked).
    fn gone(&self) -> CodeError {
        CodeError::Device(format!("GPU {}: its host thread ended", self.device))
    }

    /// Run `job` on the thread and wait for its answer.
    pub(super) fn call<'a, R: Send + 'static>(&self, job: impl FnOnce(&mut dyn BatchDecoder<T>) -> R + Send + 'a) -> CodeResult<R> {
        let (tx, rx) = mpsc::sync_channel(1);
        let job: Borrowing<'a, T> = Box::new(move |d| {
            let _ = tx.send(job(d));
        });
        // SAFETY: the job is run or dropped before `tx`, which it owns, is
        // dropped, and `recv` below returns only then: whatever it borrows
        // outlives its use. (It borrows only references, whose drop does nothing.)
        let job: Job<T> = unsafe { std::mem::transmute::<Borrowing<'a, T>, Job<T>>(job) };
        let sent = self.jobs.as_ref().is_some_and(|j| j.send(Message::Call(job)).is_ok());
        match (sent, rx.recv()) {
            (true, Ok(r)) => Ok(r),
            _ => Err(self.gone()),
        }
    }

    /// Queue `job` without waiting; its answer comes from [`Self::answer`]
    /// with `tag`, in the order posted.
    pub(super) fn post(&self, tag: u64, job: impl FnOnce(&mut dyn BatchDecoder<T>) -> CodeResult<()> + Send + 'static) -> CodeResult<()> {
        let sent = self.jobs.as_ref().is_some_and(|j| j.send(Message::Post(tag, Box::new(job))).is_ok());
        if sent { Ok(()) } else { Err(self.gone()) }
    }

    /// The answer of the oldest posted job not yet answered, waiting for it.
    pub(super) fn answer(&self) -> CodeResult<(u64, CodeResult<()>)> {
        self.answers.recv().map_err(|_| self.gone())
    }
}

impl<T: Copy + Send + Sync + 'static> Drop for Worker<T> {
    fn drop(&mut self) {
        // The thread runs what was posted, drops the decoder and ends.
        drop(self.jobs.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
