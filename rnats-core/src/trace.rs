//! Message tracing (ADR-41, nats-server 2.11+): publish a message with `Nats-Trace-Dest`, and
//! every server it passes through reports what it did with it, hop by hop, as typed
//! [`TraceReport`]s.
//!
//! ```no_run
//! # async fn run(client: rnats_core::Client) -> Result<(), rnats_core::Error> {
//! use futures_util::StreamExt;
//!
//! // `trace_only`: the servers report where it would go, and deliver it to nobody.
//! let mut reports = client.trace("orders.eu", "probe".into()).trace_only().await?;
//! while let Some(report) = reports.next().await {
//!     let report = report?;
//!     for event in &report.events {
//!         println!("{}: {event:?}", report.server.name);
//!     }
//! }
//! # Ok(()) }
//! ```
//!
//! The first report comes from the server the client is connected to; its `hops` says to how
//! many other servers (routes, gateways, leaf nodes) it forwarded the message, and each of those
//! reports in turn with its own `hops`. The stream ends once every announced report has come,
//! or when the time limit passes (a server that cannot trace does not report).

use std::collections::HashMap;
use std::fmt;
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use crate::datetime::DateTime;
use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use serde::{Deserialize, Deserializer, Serialize};

use crate::client::{Client, RequestError};
use crate::header::HeaderMap;
use crate::request_many::{ManyEnd, ManyLimits, Replies, checked_request_subject};
use crate::subject::{Subject, ToSubject};

/// The header naming the subject trace reports go to.
pub const NATS_TRACE_DEST: &str = "Nats-Trace-Dest";
/// The header that traces a message without delivering it to any subscriber.
pub const NATS_TRACE_ONLY: &str = "Nats-Trace-Only";
/// The header a server adds when it forwards a traced message: its place in the hop tree
/// (`1`, `2`, `1.1`, ...).
pub const NATS_TRACE_HOP: &str = "Nats-Trace-Hop";

/// How long a trace waits for its reports when the client has no request timeout.
const DEFAULT_TRACE_TIMEOUT: Duration = Duration::from_secs(2);

/// What one server did with a traced message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceReport {
    /// The server that reports.
    pub server: TraceServer,
    /// The message as this server received it.
    pub request: TraceRequest,
    /// To how many other servers this one forwarded the message (each reports too).
    #[serde(default)]
    pub hops: usize,
    /// What happened to the message on this server, in order.
    #[serde(default, deserialize_with = "null_as_default")]
    pub events: Vec<TraceEvent>,
}

impl TraceReport {
    /// This server's place in the hop tree: `None` for the server the message entered
    /// through, `"1"`, `"2"`, `"1.1"`... for the servers it was forwarded to.
    pub fn hop(&self) -> Option<&str> {
        self.request
            .header
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(NATS_TRACE_HOP))
            .and_then(|(_, values)| values.first())
            .map(String::as_str)
    }

    /// The ingress event: how the message entered this server.
    pub fn ingress(&self) -> Option<&Ingress> {
        self.events.iter().find_map(|event| match event {
            TraceEvent::Ingress(ingress) => Some(ingress),
            _ => None,
        })
    }

    /// The egress events: every connection the message left this server on.
    pub fn egresses(&self) -> impl Iterator<Item = &Egress> {
        self.events.iter().filter_map(|event| match event {
            TraceEvent::Egress(egress) => Some(egress),
            _ => None,
        })
    }
}

/// The server a report comes from (the server-info block of NATS advisories).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceServer {
    /// The server's name.
    pub name: String,
    /// The server's host.
    #[serde(default)]
    pub host: String,
    /// The server's id.
    pub id: String,
    /// Its cluster, if it is in one.
    #[serde(default)]
    pub cluster: Option<String>,
    /// Its JetStream domain, if it has one.
    #[serde(default)]
    pub domain: Option<String>,
    /// The server's version.
    #[serde(rename = "ver", default)]
    pub version: String,
    /// The server's tags.
    #[serde(default, deserialize_with = "null_as_default")]
    pub tags: Vec<String>,
    /// Whether JetStream is enabled on it.
    #[serde(default)]
    pub jetstream: bool,
    /// When the report was sent.
    #[serde(with = "crate::datetime::rfc3339")]
    pub time: DateTime,
}

/// The traced message as a server received it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TraceRequest {
    /// Its headers, each name with its values, case as sent.
    #[serde(default, deserialize_with = "null_as_default")]
    pub header: HashMap<String, Vec<String>>,
    /// Its size in bytes, headers included.
    #[serde(rename = "msgsize", default)]
    pub msg_size: usize,
}

/// One thing a server did with a traced message.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum TraceEvent {
    /// How the message entered the server.
    #[serde(rename = "in")]
    Ingress(Ingress),
    /// A subject mapping changed the message's subject.
    #[serde(rename = "sm")]
    SubjectMapping(SubjectMapping),
    /// The message crossed a stream export into another account.
    #[serde(rename = "se")]
    StreamExport(StreamExport),
    /// The message crossed a service import into another account.
    #[serde(rename = "si")]
    ServiceImport(ServiceImport),
    /// The message reached a JetStream stream.
    #[serde(rename = "js")]
    JetStream(JetStreamEvent),
    /// The message left the server on a connection.
    #[serde(rename = "eg")]
    Egress(Egress),
    /// An event type this version of rnats does not know (from a newer server).
    #[serde(other)]
    Unknown,
}

/// How the message entered a server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ingress {
    /// When.
    #[serde(rename = "ts", with = "crate::datetime::rfc3339")]
    pub timestamp: DateTime,
    /// The kind of connection it came on.
    pub kind: ConnectionKind,
    /// That connection's id on the server.
    pub cid: u64,
    /// That connection's name (a client's name, or the remote server's).
    #[serde(default)]
    pub name: String,
    /// The account it was published in.
    #[serde(rename = "acc", default)]
    pub account: String,
    /// The subject it was published to.
    #[serde(rename = "subj", default)]
    pub subject: String,
    /// Why the server refused it here (a publish permission, for example).
    #[serde(default)]
    pub error: Option<String>,
}

/// A subject mapping applied to the message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubjectMapping {
    /// When.
    #[serde(rename = "ts", with = "crate::datetime::rfc3339")]
    pub timestamp: DateTime,
    /// The subject it was mapped to.
    #[serde(rename = "to")]
    pub mapped_to: String,
}

/// A stream export the message crossed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamExport {
    /// When.
    #[serde(rename = "ts", with = "crate::datetime::rfc3339")]
    pub timestamp: DateTime,
    /// The importing account.
    #[serde(rename = "acc")]
    pub account: String,
    /// The subject in that account.
    pub to: String,
}

/// A service import the message crossed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServiceImport {
    /// When.
    #[serde(rename = "ts", with = "crate::datetime::rfc3339")]
    pub timestamp: DateTime,
    /// The exporting account.
    #[serde(rename = "acc")]
    pub account: String,
    /// The subject it was imported from.
    pub from: String,
    /// The subject in the exporting account.
    pub to: String,
}

/// The message reaching a JetStream stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JetStreamEvent {
    /// When.
    #[serde(rename = "ts", with = "crate::datetime::rfc3339")]
    pub timestamp: DateTime,
    /// The stream.
    pub stream: String,
    /// The subject it was stored under.
    #[serde(default)]
    pub subject: Option<String>,
    /// An interest-retention stream did not store it: nothing was interested.
    #[serde(rename = "nointerest", default)]
    pub no_interest: bool,
    /// Why the stream did not store it.
    #[serde(default)]
    pub error: Option<String>,
}

/// The message leaving a server on a connection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Egress {
    /// When.
    #[serde(rename = "ts", with = "crate::datetime::rfc3339")]
    pub timestamp: DateTime,
    /// The kind of connection it left on.
    pub kind: ConnectionKind,
    /// That connection's id on the server.
    pub cid: u64,
    /// That connection's name.
    #[serde(default)]
    pub name: String,
    /// For a route, gateway or leaf node: the hop the next server reports as.
    #[serde(default)]
    pub hop: Option<String>,
    /// The account it was delivered in.
    #[serde(rename = "acc", default)]
    pub account: Option<String>,
    /// For a client: the subscription that matched.
    #[serde(rename = "sub", default)]
    pub subscription: Option<String>,
    /// For a client: the queue group that matched.
    #[serde(default)]
    pub queue: Option<String>,
    /// Why it was not delivered here.
    #[serde(default)]
    pub error: Option<String>,
}

/// The kinds of connection a server has (its `kind` numbers).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConnectionKind {
    /// A client connection.
    Client,
    /// A route to another server of the cluster.
    Router,
    /// A gateway to another cluster.
    Gateway,
    /// The server's system connection.
    System,
    /// A leaf node connection.
    Leaf,
    /// JetStream inside the server.
    JetStream,
    /// An account's internal connection.
    Account,
    /// A kind this version of rnats does not know.
    Other(u8),
}

impl ConnectionKind {
    fn code(self) -> u8 {
        match self {
            ConnectionKind::Client => 0,
            ConnectionKind::Router => 1,
            ConnectionKind::Gateway => 2,
            ConnectionKind::System => 3,
            ConnectionKind::Leaf => 4,
            ConnectionKind::JetStream => 5,
            ConnectionKind::Account => 6,
            ConnectionKind::Other(code) => code,
        }
    }

    fn from_code(code: u8) -> ConnectionKind {
        match code {
            0 => ConnectionKind::Client,
            1 => ConnectionKind::Router,
            2 => ConnectionKind::Gateway,
            3 => ConnectionKind::System,
            4 => ConnectionKind::Leaf,
            5 => ConnectionKind::JetStream,
            6 => ConnectionKind::Account,
            other => ConnectionKind::Other(other),
        }
    }
}

impl Serialize for ConnectionKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u8(self.code())
    }
}

impl<'de> Deserialize<'de> for ConnectionKind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        u8::deserialize(deserializer).map(ConnectionKind::from_code)
    }
}

/// Why a trace report could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The report was not the JSON ADR-41 describes.
    #[error("malformed trace report: {0}")]
    Decode(#[from] serde_json::Error),
    /// A reply that is not a report came to the trace's inbox (a status, for example).
    #[error("unexpected message on the trace inbox")]
    Request(#[from] RequestError),
}

/// A traced publish being set up by [`Client::trace`]; await it to send.
#[must_use = "nothing is sent until the trace is awaited"]
pub struct Trace {
    client: Client,
    subject: Result<Subject, RequestError>,
    payload: Bytes,
    headers: HeaderMap,
    trace_only: bool,
    timeout: Option<Duration>,
}

impl Trace {
    /// Headers to publish the message with (the trace headers are added to them).
    pub fn headers(mut self, headers: HeaderMap) -> Self {
        self.headers = headers;
        self
    }

    /// Traces the message without delivering it: every server reports where it would have
    /// gone (`Nats-Trace-Only`), and no subscriber receives it.
    pub fn trace_only(mut self) -> Self {
        self.trace_only = true;
        self
    }

    /// How long to wait for reports (default: the client's request timeout, or 2 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Subscribes to a fresh inbox, publishes the message with the trace headers, and returns
    /// the reports as a stream.
    pub async fn send(mut self) -> Result<Traces, RequestError> {
        let subject = self.subject?;
        let timeout = self
            .timeout
            .or(self.client.timeout())
            .unwrap_or(DEFAULT_TRACE_TIMEOUT);
        let limits = ManyLimits::default().timeout(timeout);
        let (replies, inbox) = Replies::open(&self.client, &limits).await?;
        self.headers.insert(NATS_TRACE_DEST, inbox.as_str());
        if self.trace_only {
            self.headers.insert(NATS_TRACE_ONLY, "true");
        }
        self.client
            .publish_with_headers(subject, self.headers, self.payload)
            .await?;
        Ok(Traces {
            replies,
            tally: Tally::default(),
        })
    }
}

impl IntoFuture for Trace {
    type Output = Result<Traces, RequestError>;
    type IntoFuture = Pin<Box<dyn Future<Output = Self::Output> + Send>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.send())
    }
}

impl fmt::Debug for Trace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Trace")
            .field("subject", &self.subject)
            .field("trace_only", &self.trace_only)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// Counts reports against the hops announced: the origin (the server the message entered
/// through, whose report has no hop) announces its hops, and each server it forwarded to
/// reports and announces its own. Reports come from different servers, so a forwarded one can
/// arrive before the origin's: the count is complete only once the origin's is in and there
/// is one report for it plus one per announced hop.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Tally {
    received: usize,
    announced: usize,
    origin_seen: bool,
}

impl Tally {
    fn handle_report(&mut self, hops: usize, is_origin: bool) {
        self.received = self.received.saturating_add(1);
        // A report's count, as its server wrote it: a bogus one must not overflow.
        self.announced = self.announced.saturating_add(hops);
        self.origin_seen |= is_origin;
    }

    /// Every report announced so far has come, the origin's included.
    fn is_complete(&self) -> bool {
        self.origin_seen && self.received > self.announced
    }
}

/// The reports of a traced message, as a [`Stream`]. It ends when every server that the
/// message was announced to reach has reported, or at the time limit (see
/// [`Traces::ended`]). Dropping it unsubscribes.
pub struct Traces {
    replies: Replies,
    tally: Tally,
}

impl Traces {
    /// Why the stream ended: `Some(ManyEnd::Closed)` when every announced report came (the
    /// inbox is closed then), `Some(ManyEnd::Timeout)` when the time ran out first.
    pub fn ended(&self) -> Option<ManyEnd> {
        self.replies.ended()
    }

    /// Whether every announced report has come.
    pub fn is_complete(&self) -> bool {
        self.tally.is_complete()
    }
}

impl Stream for Traces {
    type Item = Result<TraceReport, TraceError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if this.tally.is_complete() {
            this.replies.cancel();
            return Poll::Ready(None);
        }
        let Some(reply) = std::task::ready!(this.replies.poll_next_unpin(cx)) else {
            return Poll::Ready(None);
        };
        let report = reply
            .map_err(TraceError::from)
            .and_then(|message| Ok(serde_json::from_slice::<TraceReport>(&message.payload)?));
        if let Ok(report) = &report {
            this.tally
                .handle_report(report.hops, report.hop().is_none());
        }
        Poll::Ready(Some(report))
    }
}

impl fmt::Debug for Traces {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Traces")
            .field("tally", &self.tally)
            .field("ended", &self.replies.ended())
            .finish()
    }
}

impl Client {
    /// Publishes `payload` to `subject` traced (ADR-41): the servers it passes through
    /// report what they did with it, read as [`TraceReport`]s from the returned stream. Add
    /// [`Trace::trace_only`] to find out where a message would go without delivering it.
    /// Needs nats-server 2.11 or later.
    pub fn trace<S: ToSubject>(&self, subject: S, payload: Bytes) -> Trace {
        Trace {
            client: self.clone(),
            subject: checked_request_subject(&subject),
            payload,
            headers: HeaderMap::new(),
            trace_only: false,
            timeout: None,
        }
    }
}

fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A report shaped as ADR-41's example: a client's ingress, one client egress and a
    /// route egress.
    const REPORT: &str = r#"{
      "server": {"name": "n3", "host": "h", "id": "NCC", "cluster": "lon", "ver": "2.11.0",
                 "tags": ["lon"], "jetstream": true, "flags": 3, "seq": 151861,
                 "time": "2024-02-22T13:18:48.400821739Z"},
      "request": {"header": {"Nats-Trace-Dest": ["demo"]}, "msgsize": 36},
      "hops": 1,
      "events": [
        {"type": "in", "ts": "2024-02-22T13:18:48.400595984Z", "kind": 0, "cid": 5390,
         "name": "cli", "acc": "one", "subj": "x"},
        {"type": "eg", "ts": "2024-02-22T13:18:48.40062456Z", "kind": 0, "cid": 5376,
         "name": "cli", "sub": "x"},
        {"type": "eg", "ts": "2024-02-22T13:18:48.400649361Z", "kind": 1, "cid": 492,
         "name": "n1", "hop": "1"},
        {"type": "zz", "ts": "2024-02-22T13:18:48.400649361Z"}
      ]
    }"#;

    #[test]
    fn a_report_reads_into_typed_events() {
        let report: TraceReport = serde_json::from_str(REPORT).unwrap();
        assert_eq!(report.server.name, "n3");
        assert_eq!(report.server.cluster.as_deref(), Some("lon"));
        assert_eq!(report.hops, 1);
        assert_eq!(report.hop(), None);
        assert_eq!(report.request.msg_size, 36);
        let ingress = report.ingress().unwrap();
        assert_eq!(ingress.kind, ConnectionKind::Client);
        assert_eq!(ingress.subject, "x");
        assert_eq!(ingress.account, "one");
        let egresses: Vec<&Egress> = report.egresses().collect();
        assert_eq!(egresses.len(), 2);
        assert_eq!(egresses[0].subscription.as_deref(), Some("x"));
        assert_eq!(egresses[1].kind, ConnectionKind::Router);
        assert_eq!(egresses[1].hop.as_deref(), Some("1"));
        // A type from a newer server is kept as Unknown, not an error.
        assert_eq!(report.events[3], TraceEvent::Unknown);
    }

    #[test]
    fn a_forwarded_report_tells_its_hop() {
        let mut report: TraceReport = serde_json::from_str(REPORT).unwrap();
        report
            .request
            .header
            .insert("Nats-Trace-Hop".into(), vec!["1.2".into()]);
        assert_eq!(report.hop(), Some("1.2"));
    }

    #[test]
    fn the_tally_completes_when_every_announced_hop_reported() {
        let mut tally = Tally::default();
        assert!(!tally.is_complete());
        tally.handle_report(2, true); // the origin forwarded to two servers
        assert!(!tally.is_complete());
        tally.handle_report(1, false); // one of them forwarded again
        assert!(!tally.is_complete());
        tally.handle_report(0, false);
        assert!(!tally.is_complete());
        tally.handle_report(0, false);
        assert!(tally.is_complete());
        let mut alone = Tally::default();
        alone.handle_report(0, true);
        assert!(alone.is_complete());
    }

    #[test]
    fn hop_counts_at_the_top_of_their_range_do_not_overflow() {
        let mut tally = Tally::default();
        tally.handle_report(usize::MAX, true);
        tally.handle_report(usize::MAX, false);
        assert!(
            !tally.is_complete(),
            "more hops announced than can ever report"
        );
    }

    #[test]
    fn a_forwarded_report_that_comes_first_does_not_end_the_trace() {
        // Seen on a 3-node cluster: the remote server's report overtook the origin's.
        let mut tally = Tally::default();
        tally.handle_report(0, false);
        assert!(!tally.is_complete(), "the origin has not reported yet");
        tally.handle_report(1, true);
        assert!(tally.is_complete());
    }

    #[test]
    fn connection_kinds_keep_unknown_codes() {
        for code in 0..=9u8 {
            let kind = ConnectionKind::from_code(code);
            assert_eq!(kind.code(), code);
        }
        assert_eq!(ConnectionKind::from_code(9), ConnectionKind::Other(9));
    }
}
