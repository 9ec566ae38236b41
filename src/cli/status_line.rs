//! Live progress of long work on stderr: one line rewritten in place on a
//! terminal, a new line at each tick otherwise (a log, a pipe), none with
//! `--quiet`. Nothing is coloured (so `NO_COLOR` has nothing to turn off).

use std::io::{IsTerminal, Write};
use std::time::Duration;

/// Where progress lines go, and how often.
pub(super) struct StatusLine {
    live: bool,
    quiet: bool,
}

impl StatusLine {
    /// Progress on this process's stderr, or none when `quiet`.
    pub fn new(quiet: bool) -> Self {
        Self { live: std::io::stderr().is_terminal(), quiet }
    }

    /// Time between lines: `live` on a terminal, `logged` otherwise.
    pub fn tick(&self, live: Duration, logged: Duration) -> Duration {
        if self.live { live } else { logged }
    }

    /// Show `line`.
    pub fn show(&self, line: &str) {
        if self.quiet {
            return;
        }
        if self.live {
            eprint!("\r\x1b[2K{line}");
            let _ = std::io::stderr().flush();
        } else {
            eprintln!("{line}");
        }
    }

    /// Clear the live line before other output.
    pub fn clear(&self) {
        if self.live && !self.quiet {
            eprint!("\r\x1b[2K");
        }
    }
}
