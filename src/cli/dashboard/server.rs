//! Where the dashboard listens, checked before the run, and what it serves.

use super::values::History;
use axum::Router;
use axum::http::header;
use axum::response::{Html, IntoResponse};
use axum::routing::get;
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::sync::{Arc, Mutex};

/// The page, its script and its styles, inside the binary: the page works
/// with no internet access.
const PAGE: &str = include_str!("page.html");
const SCRIPT: &str = include_str!("page.js");
const STYLE: &str = include_str!("page.css");

/// An address the dashboard may listen on, held until FutureSDR takes it.
pub(super) struct Listening {
    addr: SocketAddr,
    held: Option<TcpListener>,
}

impl Listening {
    /// Check `text` (IP:PORT, or a port on 127.0.0.1; port 0 takes a free
    /// one): it must be loopback unless `public`, and free.
    pub fn check(text: &str, public: bool) -> anyhow::Result<Self> {
        let asked: SocketAddr = match text.parse::<u16>() {
            Ok(port) => (Ipv4Addr::LOCALHOST, port).into(),
            Err(_) => text.parse().map_err(|_| {
                anyhow::anyhow!("--dashboard '{text}': not an address (give IP:PORT such as 127.0.0.1:8080, [::1]:8080, or a port)")
            })?,
        };
        anyhow::ensure!(
            public || asked.ip().is_loopback(),
            "--dashboard {asked}: not a loopback address, so anyone who reaches it would see the run and could call into the \
             flowgraph through FutureSDR's control port; add --dashboard-public to serve it there"
        );
        let held = TcpListener::bind(asked).map_err(|e| anyhow::anyhow!("--dashboard {asked}: cannot listen there: {e}"))?;
        let addr = held.local_addr().map_err(|e| anyhow::anyhow!("--dashboard {asked}: {e}"))?;
        Ok(Self { addr, held: Some(held) })
    }

    /// The page's address.
    pub fn url(&self) -> String {
        let host = match self.addr.ip() {
            ip if ip.is_unspecified() => Ipv4Addr::LOCALHOST.to_string(),
            std::net::IpAddr::V6(ip) => format!("[{ip}]"),
            ip => ip.to_string(),
        };
        format!("http://{host}:{}/", self.addr.port())
    }

    /// Give the address up for FutureSDR's control port to bind. FutureSDR
    /// binds its own listener and only logs a failure, so the address was
    /// held until now: another program could take it only in the moment
    /// between.
    pub fn release(&mut self) -> SocketAddr {
        self.held = None;
        self.addr
    }
}

/// The dashboard's routes: the page, its script and styles, and the values.
pub(super) fn routes(history: Arc<Mutex<History>>) -> Router {
    let values = move || {
        let json = history.lock().map(|h| h.json().to_string()).unwrap_or_else(|_| "{}".into());
        async move { ([(header::CONTENT_TYPE, "application/json"), (header::CACHE_CONTROL, "no-store")], json) }
    };
    Router::new()
        .route("/", get(|| async { Html(PAGE) }))
        .route("/dashboard.js", get(|| async { text("text/javascript; charset=utf-8", SCRIPT) }))
        .route("/dashboard.css", get(|| async { text("text/css; charset=utf-8", STYLE) }))
        .route("/api/dashboard", get(values))
}

fn text(kind: &'static str, body: &'static str) -> impl IntoResponse {
    ([(header::CONTENT_TYPE, kind)], body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_read_and_checked() {
        let a = Listening::check("0", false).unwrap();
        assert!(a.url().starts_with("http://127.0.0.1:") && !a.url().ends_with(":0/"), "{}", a.url());
        assert!(Listening::check("[::1]:0", false).map(|a| a.url().starts_with("http://[::1]:")).unwrap_or(true));
        let e = Listening::check("localhost:http", false).err().unwrap().to_string();
        assert!(e.contains("not an address"), "{e}");
        let e = Listening::check("0.0.0.0:0", false).err().unwrap().to_string();
        assert!(e.contains("--dashboard-public"), "{e}");
        let taken = a.held.as_ref().unwrap().local_addr().unwrap().to_string();
        let e = Listening::check(&taken, false).err().unwrap().to_string();
        assert!(e.contains("cannot listen there"), "{e}");
    }
}
