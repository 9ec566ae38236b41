//! Ctrl-C: the first one asks the running command to stop and report what
//! it counted; a second one ends the process at once.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

/// Exit status after an interrupt, as shells report a process ended by SIGINT.
pub const INTERRUPTED: u8 = 130;

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Install the handler (once per process; later calls do nothing). Without a
/// handler the default applies: Ctrl-C ends the process.
pub fn install() {
    static INSTALLED: OnceLock<()> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        let handler = || {
            if REQUESTED.swap(true, Ordering::SeqCst) {
                std::process::exit(INTERRUPTED as i32);
            }
            eprintln!("\ninterrupted: stopping and reporting what was counted (Ctrl-C again to quit at once)");
        };
        // Without a handler Ctrl-C still ends the process, only without a summary.
        if let Err(e) = ctrlc::set_handler(handler) {
            eprintln!("note: Ctrl-C will end gpufec without a summary ({e})");
        }
    });
}

/// The flag the handler sets.
pub fn flag() -> &'static AtomicBool {
    &REQUESTED
}
