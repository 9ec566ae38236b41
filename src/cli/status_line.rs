//! Live progress of long work on stderr: one line rewritten in place on a
//! terminal (with a bar where the work's share done is known, coloured
//! unless `NO_COLOR` is set), a new line at each tick otherwise (a log, a
//! pipe: no bar, no colour), none with `--quiet`.

use std::io::{IsTerminal, Write};
use std::time::Duration;

/// Where progress lines go, and how often.
pub(super) struct StatusLine {
    live: bool,
    quiet: bool,
    colour: bool,
}

/// Cells of a progress bar.
const BAR_CELLS: usize = 24;

impl StatusLine {
    /// Progress on this process's stderr, or none when `quiet`.
    pub fn new(quiet: bool) -> Self {
        let live = std::io::stderr().is_terminal();
        Self { live, quiet, colour: live && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) }
    }

    /// A bar for `done` (0 to 1) of the work, with its percentage, where the
    /// line is live; nothing in a log.
    pub fn bar(&self, done: f64) -> String {
        if !self.live {
            return String::new();
        }
        bar(done, self.colour)
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

/// `[#####·······]  42%`: `done` (0 to 1; NaN as 0) of [`BAR_CELLS`] cells,
/// the done part green when `colour`.
fn bar(done: f64, colour: bool) -> String {
    let done = if done.is_nan() { 0.0 } else { done.clamp(0.0, 1.0) };
    let full = ((done * BAR_CELLS as f64).floor() as usize).min(BAR_CELLS);
    let (on, off) = if colour { ("\x1b[32m", "\x1b[0m") } else { ("", "") };
    format!("[{on}{}{off}{}] {:>3.0}% ", "#".repeat(full), "·".repeat(BAR_CELLS - full), done * 100.0)
}

#[cfg(test)]
mod tests {
    use super::bar;

    #[test]
    fn bars_fill_with_the_work_and_colour_only_when_asked() {
        assert_eq!(bar(0.0, false), format!("[{}]   0% ", "·".repeat(24)));
        assert_eq!(bar(0.5, false), format!("[{}{}]  50% ", "#".repeat(12), "·".repeat(12)));
        assert_eq!(bar(1.0, false), format!("[{}] 100% ", "#".repeat(24)));
        // Out of range and NaN never panic or overflow the bar.
        assert_eq!(bar(7.0, false), bar(1.0, false));
        assert_eq!(bar(f64::NAN, false), bar(0.0, false));
        assert_eq!(bar(-1.0, false), bar(0.0, false));
        assert!(bar(0.5, true).contains("\x1b[32m") && !bar(0.5, false).contains('\x1b'));
    }
}
