//! Live progress of long work on stderr: one line rewritten in place on a
//! terminal, a new line at each tick otherwise (a log, a pipe).

use std::io::{IsTerminal, Write};
use std::time::Duration;

/// Where progress lines go, and how often.
pub(super) struct StatusLine {
    live: bool,
}

impl StatusLine {
    /// Progress on this process's stderr.
    pub fn new() -> Self {
        Self { live: std::io::stderr().is_terminal() }
    }

    /// Time between lines: `live` on a terminal, `logged` otherwise.
    pub fn tick(&self, live: Duration, logged: Duration) -> Duration {
        if self.live { live } else { logged }
    }

    /// Show `line`.
    pub fn show(&self, line: &str) {
        if self.live {
            eprint!("\r\x1b[2K{line}");
            let _ = std::io::stderr().flush();
        } else {
            eprintln!("{line}");
        }
    }

    /// Clear the live line before other output.
    pub fn clear(&self) {
        if self.live {
            eprint!("\r\x1b[2K");
        }
    }
}
