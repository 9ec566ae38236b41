//! `gpufec run --dashboard`: a page in the browser that charts a running
//! flowgraph live, and the same values as JSON.
//!
//! The dashboard records the [`Progress`] the runner reads each tick, the
//! one source of the status line's figures too, and serves it on
//! FutureSDR's control port, whose own REST interface (`/api/fg/`) stays
//! there beside it: `/` the page (its script and styles are inside the
//! binary), `/api/dashboard` the values (`gpufec-dashboard/1`).

mod server;
mod values;

use crate::blocks::ControlPort;
use crate::flowgraph::Progress;
use server::Listening;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use values::History;
pub(super) use values::rates;

/// How often the dashboard records the run's figures.
pub(super) const TICK: Duration = Duration::from_millis(250);

/// A dashboard: where it listens and what it recorded.
pub(super) struct Dashboard {
    at: Listening,
    history: Arc<Mutex<History>>,
}

impl Dashboard {
    /// A dashboard at `addr` (IP:PORT or a port, on 127.0.0.1), refused
    /// unless it is a loopback address or `public`, and unless it is free.
    pub fn open(addr: &str, public: bool) -> anyhow::Result<Self> {
        Ok(Self { at: Listening::check(addr, public)?, history: Arc::default() })
    }

    /// The page's address.
    pub fn url(&self) -> String {
        self.at.url()
    }

    /// FutureSDR's control port at the dashboard's address, serving the
    /// dashboard of the flowgraph `title`, described by the lines of
    /// `about`, beside its own routes.
    pub fn serve(&mut self, title: String, about: Vec<String>) -> ControlPort {
        if let Ok(mut h) = self.history.lock() {
            h.describe(title, about);
        }
        ControlPort { addr: self.at.release(), routes: server::routes(self.history.clone()) }
    }

    /// Record the run's figures now.
    pub fn record(&self, p: &Progress) {
        if let Ok(mut h) = self.history.lock() {
            h.record(p);
        }
    }
}
