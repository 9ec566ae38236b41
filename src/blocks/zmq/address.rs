//! ZeroMQ endpoints as a flowgraph file names them, checked before any
//! socket is made: libzmq itself takes `tcp://host:99999` without a word.

use std::fmt;

/// Longest `ipc://` path: the `sun_path` of a Unix socket address, less its
/// terminating zero.
const MAX_IPC_PATH: usize = 107;

/// A checked ZeroMQ endpoint: `tcp://HOST:PORT` or `ipc://PATH`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZmqAddress(String);

impl ZmqAddress {
    /// `text` if it is an endpoint that the block can bind or connect:
    /// `tcp://HOST:PORT` with a port in 1..=65535 (HOST `*` binds every
    /// interface; an IPv6 host in brackets), or `ipc://PATH` (at most 107
    /// bytes). `inproc://` is refused: it joins sockets of one process, and
    /// every block has its own context.
    pub fn parse(text: &str) -> Result<Self, String> {
        let expected = "expected tcp://HOST:PORT (such as tcp://127.0.0.1:5555, or tcp://*:5555 to bind every interface) or ipc://PATH";
        if let Some(rest) = text.strip_prefix("tcp://") {
            let Some((host, port)) = rest.rsplit_once(':') else {
                return Err(format!("'{text}' names no port: {expected}"));
            };
            let host_ok = match host.strip_prefix('[') {
                Some(v6) => v6.strip_suffix(']').is_some_and(|h| !h.is_empty() && h.chars().all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.')),
                None => host == "*" || (!host.is_empty() && host.chars().all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')),
            };
            if !host_ok {
                return Err(format!("'{text}': '{host}' is not a host name or address: {expected}"));
            }
            match port.parse::<u32>() {
                Ok(p) if (1..=65535).contains(&p) => Ok(Self(text.to_string())),
                _ => Err(format!("'{text}': port '{port}' is not a number in 1..=65535")),
            }
        } else if let Some(path) = text.strip_prefix("ipc://") {
            match path.len() {
                0 => Err(format!("'{text}' names no path: {expected}")),
                n if n > MAX_IPC_PATH => Err(format!("'{text}': the path is {n} bytes; a Unix socket's path holds at most {MAX_IPC_PATH}")),
                _ => Ok(Self(text.to_string())),
            }
        } else if text.starts_with("inproc://") {
            Err(format!("'{text}': inproc endpoints join sockets of one process only; use tcp:// or ipc:// between flowgraphs"))
        } else {
            Err(format!("'{text}' is not a ZeroMQ address: {expected}"))
        }
    }

    /// The endpoint as libzmq takes it.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ZmqAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_are_checked() {
        for good in ["tcp://127.0.0.1:5555", "tcp://*:1", "tcp://localhost:65535", "tcp://[::1]:5555", "ipc:///tmp/gpufec.sock"] {
            assert_eq!(ZmqAddress::parse(good).unwrap().as_str(), good);
        }
        let bad = |t: &str| ZmqAddress::parse(t).unwrap_err();
        assert!(bad("tcp://127.0.0.1:99999").contains("port '99999' is not a number in 1..=65535"), "{}", bad("tcp://127.0.0.1:99999"));
        assert!(bad("tcp://127.0.0.1:0").contains("port '0'"));
        assert!(bad("tcp://127.0.0.1").contains("names no port"));
        assert!(bad("tcp://no host:5555").contains("'no host' is not a host name"));
        assert!(bad("localhost:5555").contains("is not a ZeroMQ address"));
        assert!(bad("inproc://x").contains("one process only"));
        assert!(bad("ipc://").contains("names no path"));
        assert!(bad(&format!("ipc://{}", "x".repeat(200))).contains("at most 107"));
    }
}
