//! The request builder both clients take: what one request carries besides its subject.

use std::time::Duration;

use bytes::Bytes;
use rnats_proto::HeaderMap;

/// A request to send with [`Client::send_request`](crate::Client::send_request): payload,
/// headers, timeout and inbox, each optional.
///
/// ```no_run
/// # async fn run(client: rnats_core::Client) -> Result<(), rnats_core::Error> {
/// use std::time::Duration;
/// let request = rnats_core::Request::new()
///     .payload("ping".into())
///     .timeout(Some(Duration::from_millis(500)));
/// let reply = client.send_request("service.ping", request).await?;
/// # drop(reply); Ok(()) }
/// ```
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// The body; empty when `None`.
    pub payload: Option<Bytes>,
    /// Headers to send with the request.
    pub headers: Option<HeaderMap>,
    /// `Some(None)` waits for ever, `Some(Some(d))` waits `d`, `None` uses the client's
    /// request timeout.
    pub timeout: Option<Option<Duration>>,
    /// A reply subject of the caller's choosing, subscribed for this one request, instead of
    /// the client's shared request inbox.
    pub inbox: Option<String>,
}

impl Request {
    /// A request with an empty body and the client's defaults.
    pub fn new() -> Request {
        Request::default()
    }

    /// Sets the body.
    pub fn payload(mut self, payload: Bytes) -> Request {
        self.payload = Some(payload);
        self
    }

    /// Sets the headers.
    pub fn headers(mut self, headers: HeaderMap) -> Request {
        self.headers = Some(headers);
        self
    }

    /// Sets the timeout: `None` waits until a reply comes or the client closes.
    pub fn timeout(mut self, timeout: Option<Duration>) -> Request {
        self.timeout = Some(timeout);
        self
    }

    /// Sends the reply to this subject instead of the shared request inbox.
    pub fn inbox(mut self, inbox: String) -> Request {
        self.inbox = Some(inbox);
        self
    }
}
