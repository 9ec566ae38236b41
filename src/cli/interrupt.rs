//! Ctrl-C and SIGTERM: the first one asks the running command to stop and
//! report what it counted (or, for a command whose results are already
//! printed, ends it at once); a second one ends the process at once.
//!
//! The handlers are plain `sigaction` handlers that only touch atomics, read
//! the monotonic clock and write(2) a fixed line, all async-signal-safe. A
//! signal that repeats within [`SAME_REQUEST`] of the first is taken as the
//! same request: `timeout` and `kill` on a process group deliver one signal
//! twice, and a quit at once on that duplicate lost the summary of about
//! half of all interrupted runs.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicI64, Ordering};

/// Exit status after Ctrl-C (SIGINT), as shells report a process ended by it.
pub const INTERRUPTED: u8 = 130;

/// A repeat of the signal sooner than this after the first is the same
/// request, not a second one.
const SAME_REQUEST_NS: i64 = 250_000_000;

static REQUESTED: AtomicBool = AtomicBool::new(false);
/// The first signal received (0: none).
static SIGNAL: AtomicI32 = AtomicI32::new(0);
/// When the first arrived, monotonic nanoseconds.
static FIRST_NS: AtomicI64 = AtomicI64::new(0);
/// Whether the first signal ends the process at once.
static QUIT_AT_ONCE: AtomicBool = AtomicBool::new(false);

/// What the first signal does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnSignal {
    /// Set the flag ([`flag`]); the command stops and reports what it counted.
    Report,
    /// End the process at once: what the command measured is printed already.
    Quit,
}

/// Install the handlers for SIGINT and SIGTERM (once per process; a later
/// call only changes what the first signal does).
pub fn install(on: OnSignal) {
    QUIT_AT_ONCE.store(on == OnSignal::Quit, Ordering::SeqCst);
    static INSTALLED: OnceLock<()> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        for sig in [libc::SIGINT, libc::SIGTERM] {
            // SAFETY: sigaction is plain data (all zero is a value); the handler
            // only uses async-signal-safe calls and atomics.
            let ok = unsafe {
                let mut act: libc::sigaction = std::mem::zeroed();
                act.sa_sigaction = handler as *const () as libc::sighandler_t;
                act.sa_flags = libc::SA_RESTART;
                libc::sigemptyset(&mut act.sa_mask);
                libc::sigaction(sig, &act, std::ptr::null_mut()) == 0
            };
            if !ok {
                eprintln!("note: signal {sig} will end gpufec without a summary ({})", std::io::Error::last_os_error());
            }
        }
    });
}

/// The flag the first signal sets.
pub fn flag() -> &'static AtomicBool {
    &REQUESTED
}

/// The exit status for an interrupted command: 128 + the signal (130 after
/// Ctrl-C, 143 after SIGTERM).
pub fn exit_status() -> u8 {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => INTERRUPTED,
        s => (128 + s).clamp(0, 255) as u8,
    }
}

fn now_ns() -> i64 {
    // SAFETY: timespec is plain data; clock_gettime is async-signal-safe.
    let mut t: libc::timespec = unsafe { std::mem::zeroed() };
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    t.tv_sec as i64 * 1_000_000_000 + t.tv_nsec as i64
}

fn say(line: &[u8]) {
    // SAFETY: write(2) of a static buffer is async-signal-safe; a failed
    // write to stderr has nobody to tell.
    unsafe { libc::write(2, line.as_ptr().cast(), line.len()) };
}

extern "C" fn handler(sig: libc::c_int) {
    let now = now_ns();
    if SIGNAL.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst).is_ok() {
        FIRST_NS.store(now, Ordering::SeqCst);
        if QUIT_AT_ONCE.load(Ordering::SeqCst) {
            say(b"\ninterrupted: the rows above are what was measured\n");
            // SAFETY: _exit is async-signal-safe; stdout is line-buffered, so every row is out.
            unsafe { libc::_exit(128 + sig) };
        }
        REQUESTED.store(true, Ordering::SeqCst);
        say(b"\ninterrupted: stopping and reporting what was counted (Ctrl-C again to quit at once)\n");
        return;
    }
    if now - FIRST_NS.load(Ordering::SeqCst) >= SAME_REQUEST_NS {
        say(b"\ninterrupted twice: quitting at once\n");
        // SAFETY: as above.
        unsafe { libc::_exit(128 + SIGNAL.load(Ordering::SeqCst)) };
    }
}
