//! Keeps the message of the first error a block raised, for the caller.
//!
//! FutureSDR 0.0.40 logs a failing block's error and then ends the run with the
//! generic "A block raised an error": the block's own message never reaches the
//! caller. Blocks that can fail hold a clone of one [`FirstError`] and record
//! their message there before failing, so that the caller can say what went wrong.

use futuresdr::runtime::dev::BlockMeta;
use std::sync::{Arc, Mutex};

/// The first error raised by any block sharing this handle; clones share it.
///
/// # Example
/// ```
/// use gpufec::blocks::FirstError;
/// let errors = FirstError::default();
/// errors.record("decoder", &anyhow::anyhow!("LLR at index 3 is NaN or infinite"));
/// errors.record("sink", &anyhow::anyhow!("a later error"));
/// assert_eq!(errors.message().unwrap(), "block 'decoder': LLR at index 3 is NaN or infinite");
/// ```
#[derive(Debug, Clone, Default)]
pub struct FirstError(Arc<Mutex<Option<String>>>);

impl FirstError {
    /// Record `error` raised by `block`, unless an earlier error is already kept.
    pub fn record(&self, block: &str, error: &anyhow::Error) {
        // A poisoned lock only means another thread panicked while recording;
        // the slot itself is still a plain Option.
        let mut slot = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some(format!("block '{block}': {error:#}"));
        }
    }

    /// Pass `result` on, recording its error under the block's instance name.
    pub fn keep<T>(&self, meta: &BlockMeta, result: anyhow::Result<T>) -> anyhow::Result<T> {
        if let Err(e) = &result {
            self.record(meta.instance_name().unwrap_or("unnamed"), e);
        }
        result
    }

    /// The kept message, if a block failed.
    pub fn message(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// A block that records its failure in a [`FirstError`] shared with the caller.
pub trait Reporting: Sized {
    /// The handle the block records into.
    fn first_error(&mut self) -> &mut FirstError;

    /// Record failures in `errors` instead of the block's own handle.
    fn report_to(mut self, errors: &FirstError) -> Self {
        *self.first_error() = errors.clone();
        self
    }
}
