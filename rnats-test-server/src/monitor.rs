//! The servers' HTTP monitoring endpoints (`/varz`, `/routez`, `/gatewayz`, `/leafz`,
//! `/jsz`, ...), read with a one-shot HTTP/1.0 `GET` over loopback, and polled until a
//! topology is what a test needs.
//!
//! Polling a server's own view of its connections is the readiness signal of the multi-server
//! builders: nothing there waits on a fixed timer.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::error::TestServerError;

/// Pause between two polls of an endpoint: short, since a topology forms in milliseconds
/// on loopback, yet long enough not to busy the two cores the servers share.
const POLL_INTERVAL: Duration = Duration::from_millis(25);
/// Bound on one request to a monitoring endpoint.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);

/// `GET path` from the monitoring listener on `127.0.0.1:port` and its JSON body.
pub(crate) fn get(port: u16, path: &str) -> Result<Value, TestServerError> {
    let failed = |reason: String| TestServerError::Monitoring {
        path: path.to_owned(),
        reason,
    };
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let mut stream = TcpStream::connect_timeout(&addr, REQUEST_TIMEOUT)?;
    stream.set_read_timeout(Some(REQUEST_TIMEOUT))?;
    stream.set_write_timeout(Some(REQUEST_TIMEOUT))?;
    // HTTP/1.0: the server closes the connection after the body, so reading to the end of
    // the stream is the whole response, whatever its framing.
    write!(
        stream,
        "GET {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n"
    )?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response)?;
    let text = String::from_utf8_lossy(&response);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| failed("response without a header end".to_owned()))?;
    let status = head.lines().next().unwrap_or_default();
    if status.split_whitespace().nth(1) != Some("200") {
        return Err(failed(format!("{status}: {}", body.trim())));
    }
    serde_json::from_str(body).map_err(|e| failed(format!("body is not JSON ({e}): {body}")))
}

/// Calls `check` until it returns `Some`, an error, or `deadline` passes; then
/// [`TestServerError::NotFormed`] names `what` was awaited and what `check` saw last
/// (through `last_seen`).
pub(crate) fn poll_until<T>(
    deadline: Instant,
    what: &str,
    mut check: impl FnMut(&mut String) -> Result<Option<T>, TestServerError>,
) -> Result<T, TestServerError> {
    let mut last_seen = String::new();
    loop {
        if let Some(found) = check(&mut last_seen)? {
            return Ok(found);
        }
        let now = Instant::now();
        if now >= deadline {
            return Err(TestServerError::NotFormed {
                what: what.to_owned(),
                last_seen,
            });
        }
        std::thread::sleep(POLL_INTERVAL.min(deadline - now));
    }
}

/// The string at `pointer` (RFC 6901) in `value`, or `""`.
pub(crate) fn str_at<'a>(value: &'a Value, pointer: &str) -> &'a str {
    value.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// The keys of the object at `pointer` (none if it is not an object).
pub(crate) fn keys_at(value: &Value, pointer: &str) -> Vec<String> {
    match value.pointer(pointer) {
        Some(Value::Object(map)) => map.keys().cloned().collect(),
        _ => Vec::new(),
    }
}
