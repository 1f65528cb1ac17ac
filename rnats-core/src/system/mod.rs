//! The system account's monitoring requests, typed: every server's (or one server's)
//! statistics, variables, connections, JetStream usage and health, asked over NATS as
//! nats-server's HTTP monitoring endpoints answer them, without an HTTP port.
//!
//! A connection in the system account sends `$SYS.REQ.SERVER.PING.<KIND>` (`VARZ`,
//! `CONNZ`, `JSZ`, `HEALTHZ`, ...) to every server, or `$SYS.REQ.SERVER.<ID>.<KIND>` to one,
//! with the kind's options as a JSON body, and each server answers with a
//! [`ServerAnswer`]: who answered, and the data or an error. A ping
//! (`$SYS.REQ.SERVER.PING`) gets each server's [`ServerStats`].
//!
//! [`System`] gathers the answers. It stops waiting when the servers it expects have
//! answered, or when the timeout passes:
//!
//! - [`System::expect`]: that many answers;
//! - [`System::server`]: the one server asked;
//! - otherwise a ping ends once as many servers answered as the answers count up
//!   (`statsz.active_servers`, which lags just after a server joins, so the ping still
//!   takes what comes within 300 ms of the last answer), or a second after the last answer
//!   while they are fewer (a server the others still count but that is gone costs that
//!   second, not the timeout; a filtered ping, which has nothing to count by, always ends
//!   so). Any other request first pings the servers (with the same [`ServerFilter`]) and
//!   then waits for every server that answered that ping, as the `rnats` CLI's
//!   `server request` does.
//!
//! The answers come in the order they arrived. [`System::gather`] and
//! [`System::gather_ping`] also tell how many of the servers waited for did not answer
//! ([`Gathered::missing`]); [`System::gather_account`] asks what nats-server answers any
//! account about itself (`$SYS.REQ.ACCOUNT.PING.CONNZ`), for a user outside the system
//! account.
//!
//! One answer that does not decode costs that answer, not the gathering. Each is decoded
//! in two steps: the envelope (who answered, the error), then its data as the type asked
//! for. Data of another shape leaves that answer with `data: None` and a
//! [`ServerAnswer::decode_error`] with the data's text; an answer that is not an envelope
//! at all is kept as one from an unknown server (an empty [`ServerAnswer::server`]), with
//! its text in the same field; it stands for no server, so it neither counts toward
//! [`System::expect`]'s count nor for a server a ping counted or found. The other answers
//! stay as they are. Only when no
//! answer's envelope decoded does the request fail, with [`SystemErrorKind::Decode`].
//! [`ServerAnswer::into_result`] tells the two kinds of missing data apart:
//! [`AnswerError::Server`] or [`AnswerError::Decode`].
//!
//! ```no_run
//! use rnats_core::system::{ConnzOptions, System};
//!
//! # async fn run() -> Result<(), rnats_core::Error> {
//! let client = rnats_core::ConnectOptions::with_user_and_password("sys".into(), "pw".into())
//!     .connect("nats://127.0.0.1:4222")
//!     .await?;
//! let system = System::new(client);
//! for answer in system.varz().await? {
//!     if let Some(varz) = answer.data {
//!         println!("{} {}: {} connections", varz.server_name, varz.version, varz.connections);
//!     }
//! }
//! // One server, by the ID a ping told.
//! let first = system.ping().await?.remove(0);
//! let connz = system
//!     .server(first.server.id)
//!     .connz(ConnzOptions::new().subscriptions(true).limit(10))
//!     .await?;
//! println!("{:?}", connz[0].data.as_ref().map(|c| c.total));
//! # Ok(()) }
//! ```
//!
//! The typed answers hold the fields most used; every field this version does not know
//! lands in the struct's `extra` map, so a newer server never breaks decoding. Every other
//! kind (`ROUTEZ`, `GATEWAYZ`, `LEAFZ`, `SUBSZ`, `ACCOUNTZ`, `IPQUEUESZ`, `RAFTZ`, ...) is
//! [`System::request_raw`], or [`System::request`] into a type of your own; a ping's
//! statistics as JSON are [`System::ping_raw`]. Each answer also tells how long it took to
//! come ([`ServerAnswer::rtt`]).
//!
//! A user outside the system account gets [`SystemErrorKind::NotSystemAccount`] at once:
//! the servers answer "no responders" to it. (nats-server imports `CONNZ` into every
//! account, so `connz` on [`System::server`] or with [`System::expect`], which send no
//! ping first, answers such a user with its own account's connections.)

use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use futures_util::future::{Either, select};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::client::{Client, RequestError};
use crate::error::RequestErrorKind;
use crate::request_many::ManyEnd;
use crate::rt::Timer;

mod answer;
mod census;
mod connz;
mod error;
mod filter;
mod healthz;
mod jetstream;
mod jsz;
mod stats;
mod varz;

pub use answer::{AnswerError, ApiError, Gathered, ServerAnswer, ServerIdentity};
use census::{Census, Gathering, Until};
pub use connz::{ConnInfo, ConnState, Connz, ConnzOptions, ConnzSort};
pub use error::{AnswerDecodeError, SystemError, SystemErrorKind};
pub use filter::ServerFilter;
pub use healthz::{Healthz, HealthzError, HealthzOptions};
pub use jetstream::{
    JetStreamApiStats, JetStreamConfig, JetStreamStats, JetStreamVarz, MetaCluster,
};
pub use jsz::{AccountDetail, Jsz, JszOptions, StreamDetail, StreamDetailState};
pub use stats::{DataStats, GatewayStat, RouteStat, ServerStats};
pub use varz::Varz;

/// The subject every server answers with its statistics.
const PING: &str = "$SYS.REQ.SERVER.PING";

/// The subjects under which every server answers for the asking user's own account.
const ACCOUNT_PING: &str = "$SYS.REQ.ACCOUNT.PING";

/// How long a gathering waits for answers by default.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(2);

/// The system account's monitoring requests on a connection: see the [module](self).
///
/// Cheap to clone; the setters return a changed copy.
#[derive(Debug, Clone)]
pub struct System {
    client: Client,
    timeout: Duration,
    expect: Option<usize>,
    filter: ServerFilter,
    /// The one server asked, by ID; every server when `None`.
    server: Option<String>,
}

impl System {
    /// Monitoring requests on `client`, which should be connected as a user of the system
    /// account. Waits 2 seconds at most for answers, for the servers a ping finds.
    pub fn new(client: Client) -> System {
        System {
            client,
            timeout: DEFAULT_TIMEOUT,
            expect: None,
            filter: ServerFilter::default(),
            server: None,
        }
    }

    /// How long to wait for answers at most (default: 2 seconds). A request to every
    /// server without [`expect`](Self::expect) pings first: each of the two waits as long.
    pub fn timeout(mut self, timeout: Duration) -> System {
        self.timeout = timeout;
        self
    }

    /// Stops waiting once `count` servers answered (0: the default, the servers a ping
    /// finds), and sends no ping first.
    pub fn expect(mut self, count: usize) -> System {
        self.expect = (count > 0).then_some(count);
        self
    }

    /// Only the servers `filter` selects answer (default: every server).
    pub fn filter(mut self, filter: ServerFilter) -> System {
        self.filter = filter;
        self
    }

    /// The same requests, asked of the one server whose ID is `id` (see
    /// [`ServerIdentity::id`]) on its own subject.
    pub fn server(&self, id: impl Into<String>) -> System {
        System {
            server: Some(id.into()),
            ..self.clone()
        }
    }

    /// The connection the requests go on.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Every server's statistics (`$SYS.REQ.SERVER.PING`, or `STATSZ` of one server).
    pub async fn ping(&self) -> Result<Vec<ServerAnswer<ServerStats>>, SystemError> {
        Ok(self.gather_ping().await?.answers)
    }

    /// [`ping`](Self::ping), each server's statistics as JSON, whole.
    pub async fn ping_raw(&self) -> Result<Vec<ServerAnswer<Value>>, SystemError> {
        Ok(self.gather_ping().await?.answers)
    }

    /// A ping, each answer's statistics decoded as `T` ([`ServerStats`], `Value`, or a type
    /// of your own), with how many servers did not answer.
    pub async fn gather_ping<T: DeserializeOwned>(&self) -> Result<Gathered<T>, SystemError> {
        let subject = match &self.server {
            Some(_) => self.subject("STATSZ")?,
            None => PING.to_owned(),
        };
        let until = self.fixed_count().unwrap_or(Until::Ping {
            filtered: !self.filter.selects_all(),
        });
        let body = self.body(Map::new())?;
        self.collect(subject, body, until).await
    }

    /// Each server's general state and configuration (`VARZ`).
    pub async fn varz(&self) -> Result<Vec<ServerAnswer<Varz>>, SystemError> {
        self.request("VARZ", Map::new()).await
    }

    /// Each server's client connections (`CONNZ`), as `options` select them.
    pub async fn connz(
        &self,
        options: ConnzOptions,
    ) -> Result<Vec<ServerAnswer<Connz>>, SystemError> {
        self.request("CONNZ", options).await
    }

    /// Each server's JetStream (`JSZ`), in as much detail as `options` ask.
    pub async fn jsz(&self, options: JszOptions) -> Result<Vec<ServerAnswer<Jsz>>, SystemError> {
        self.request("JSZ", options).await
    }

    /// Each server's health (`HEALTHZ`), as `options` check it.
    pub async fn healthz(
        &self,
        options: HealthzOptions,
    ) -> Result<Vec<ServerAnswer<Healthz>>, SystemError> {
        self.request("HEALTHZ", options).await
    }

    /// Any kind (`ROUTEZ`, `SUBSZ`, `RAFTZ`, ...) with `options` (a JSON object, or
    /// anything that serializes to one; `()` for none), each answer's data decoded as `T`.
    pub async fn request<T, O>(
        &self,
        kind: &str,
        options: O,
    ) -> Result<Vec<ServerAnswer<T>>, SystemError>
    where
        T: DeserializeOwned,
        O: Serialize,
    {
        Ok(self.gather(kind, options).await?.answers)
    }

    /// Any kind with `options` (a JSON object, or `Value::Null` for none), each answer's
    /// data as JSON.
    pub async fn request_raw(
        &self,
        kind: &str,
        options: Value,
    ) -> Result<Vec<ServerAnswer<Value>>, SystemError> {
        self.request(kind, options).await
    }

    /// [`request`](Self::request), with how many servers did not answer.
    pub async fn gather<T, O>(&self, kind: &str, options: O) -> Result<Gathered<T>, SystemError>
    where
        T: DeserializeOwned,
        O: Serialize,
    {
        let subject = self.subject(kind)?;
        let body = self.body(options_fields(options)?)?;
        let until = match self.fixed_count() {
            Some(until) => until,
            None => Until::Census(self.census().await?),
        };
        self.collect(subject, body, until).await
    }

    /// A kind that nats-server answers for the user's own account, whatever it is
    /// (`CONNZ`, `STATZ`), on `$SYS.REQ.ACCOUNT.PING.<KIND>`: every server answers with
    /// what it holds of that account (the connections, say). No ping can count the servers
    /// outside the system account, so this waits for [`expect`](Self::expect) answers, or
    /// else until the timeout; [`server`](Self::server) does not narrow it, the
    /// [`ServerFilter`] does.
    pub async fn gather_account<T, O>(
        &self,
        kind: &str,
        options: O,
    ) -> Result<Gathered<T>, SystemError>
    where
        T: DeserializeOwned,
        O: Serialize,
    {
        if !is_token(kind) {
            return Err(SystemErrorKind::InvalidSubject.into());
        }
        let subject = format!("{ACCOUNT_PING}.{kind}");
        let body = self.body(options_fields(options)?)?;
        let until = self.expect.map_or(Until::Timeout, Until::Count);
        self.collect(subject, body, until).await
    }

    /// A request's failure. No responders means no system account, unless the server said
    /// the user is in it: then nobody answers the subject there, which is a server ID that
    /// is not up.
    fn failed(&self, e: RequestError) -> SystemError {
        let kind = match e.kind() {
            RequestErrorKind::NoResponders if self.client.is_system_account() => {
                SystemErrorKind::NoAnswer
            }
            RequestErrorKind::NoResponders => SystemErrorKind::NotSystemAccount,
            RequestErrorKind::InvalidSubject => SystemErrorKind::InvalidSubject,
            _ => SystemErrorKind::Request,
        };
        SystemError::with_source(kind, e)
    }

    /// The wait that needs no ping: a count given, or the one server asked.
    fn fixed_count(&self) -> Option<Until> {
        match (&self.server, self.expect) {
            (_, Some(n)) => Some(Until::Count(n)),
            (Some(_), None) => Some(Until::Count(1)),
            (None, None) => None,
        }
    }

    /// The servers that a ping with the filter finds, for a request to all of them.
    async fn census(&self) -> Result<Census, SystemError> {
        let answers = self.ping().await?;
        // An answer that was no envelope at all names no server to wait for.
        let answers = answers.iter().filter(|answer| !answer.server.id.is_empty());
        let answers = answers.map(|answer| {
            let active = answer.data.as_ref().map_or(0, |stats| stats.active_servers);
            (answer.server.id.as_str(), active)
        });
        Ok(Census::of(answers, !self.filter.selects_all()))
    }

    /// The subject of `kind` for every server, or for the one asked.
    fn subject(&self, kind: &str) -> Result<String, SystemError> {
        subject(self.server.as_deref(), kind)
    }

    /// A request's body: its options and the filter in one object.
    fn body(&self, fields: Map<String, Value>) -> Result<Bytes, SystemError> {
        body(fields, &self.filter)
    }

    /// Sends the request and gathers the answers until `until` or the timeout.
    async fn collect<T: DeserializeOwned>(
        &self,
        subject: String,
        body: Bytes,
        until: Until,
    ) -> Result<Gathered<T>, SystemError> {
        let rt = self.client.shared().rt;
        let sent = rt.now();
        // No `max_messages` for a count: an answer that does not decode counts for no
        // server, and the gathering ends once complete.
        let request = self
            .client
            .request_many(subject, body)
            .timeout(self.timeout);
        let mut replies = request.await.map_err(|e| self.failed(e))?;
        let mut gathering = Gathering::new(until);
        let mut answers = Vec::new();
        // A gathering that lingers takes the answers that come within the linger of the
        // last one (see `Gathering::linger`); the others end once complete.
        let mut linger: Option<Timer> = None;
        loop {
            let reply = match linger.as_mut() {
                Some(timer) => match select(replies.next(), timer).await {
                    Either::Left((reply, _)) => reply,
                    Either::Right(_) => break,
                },
                None if gathering.is_complete() => break,
                None => replies.next().await,
            };
            let Some(reply) = reply else {
                break;
            };
            let message = reply.map_err(|e| self.failed(e))?;
            let mut answer = handle_payload(&mut gathering, &message.payload);
            answer.rtt = Some(rt.now().saturating_duration_since(sent));
            answers.push(answer);
            linger = gathering.linger().map(|wait| rt.timer(rt.now() + wait));
        }
        gathered(answers, &gathering, replies.ended())
    }
}

impl From<Client> for System {
    fn from(client: Client) -> System {
        System::new(client)
    }
}

/// Decodes one answer and tells the gathering who sent it, in two steps: the envelope,
/// whose data stays JSON, then the data as `T`. Data of another shape costs that answer its
/// data, and an answer that is not an envelope at all is kept as one from nobody known;
/// either holds its [`ServerAnswer::decode_error`], and neither costs the other answers.
fn handle_payload<T: DeserializeOwned>(
    gathering: &mut Gathering,
    payload: &[u8],
) -> ServerAnswer<T> {
    match ServerAnswer::decode_envelope(payload) {
        Ok(envelope) => {
            gathering.handle_answer(&envelope.server.id, active_servers(&envelope));
            envelope.decode_data()
        }
        // Nobody can tell who sent it: it counts for no server.
        Err(e) => ServerAnswer::undecoded(e),
    }
}

/// The end of a gathering: its answers and the servers it missed. No answer is a failure:
/// of the request when the client closed before the timeout, else nobody answered; and so
/// is a gathering where no answer decoded at all (the first one's error is the source).
fn gathered<T>(
    answers: Vec<ServerAnswer<T>>,
    gathering: &Gathering,
    ended: Option<ManyEnd>,
) -> Result<Gathered<T>, SystemError> {
    if answers.is_empty() {
        return Err(match ended {
            Some(ManyEnd::Closed) => SystemErrorKind::Request.into(),
            _ => SystemErrorKind::NoAnswer.into(),
        });
    }
    if !gathering.decoded_any() {
        let first = answers.into_iter().find_map(|answer| answer.decode_error);
        return Err(match first {
            Some(e) => SystemError::with_source(SystemErrorKind::Decode, e),
            None => SystemErrorKind::Decode.into(),
        });
    }
    Ok(Gathered {
        answers,
        missing: gathering.missing(),
    })
}

/// How many servers an answer's data (a ping's statistics) counts up; 0 for any other
/// data.
fn active_servers(answer: &ServerAnswer<Value>) -> u64 {
    let stats = answer.data.as_ref();
    stats
        .and_then(|stats| stats["active_servers"].as_u64())
        .unwrap_or(0)
}

/// A request's options as the fields of its body: a JSON object, or nothing for `null`.
fn options_fields<O: Serialize>(options: O) -> Result<Map<String, Value>, SystemError> {
    match serde_json::to_value(options) {
        Ok(Value::Object(fields)) => Ok(fields),
        Ok(Value::Null) => Ok(Map::new()),
        Ok(_) => Err(SystemErrorKind::InvalidOptions.into()),
        Err(e) => Err(SystemError::with_source(SystemErrorKind::InvalidOptions, e)),
    }
}

/// The subject of `kind` for the server `server`, or for every server.
fn subject(server: Option<&str>, kind: &str) -> Result<String, SystemError> {
    if [Some(kind), server]
        .into_iter()
        .flatten()
        .any(|token| !is_token(token))
    {
        return Err(SystemErrorKind::InvalidSubject.into());
    }
    Ok(match server {
        Some(id) => format!("$SYS.REQ.SERVER.{id}.{kind}"),
        None => format!("{PING}.{kind}"),
    })
}

/// A request's body: its options and `filter` in one object, as nats-server reads them, or
/// nothing when both are empty.
fn body(mut fields: Map<String, Value>, filter: &ServerFilter) -> Result<Bytes, SystemError> {
    filter.add_to(&mut fields);
    if fields.is_empty() {
        return Ok(Bytes::new());
    }
    serde_json::to_vec(&fields)
        .map(Bytes::from)
        .map_err(|e| SystemError::with_source(SystemErrorKind::InvalidOptions, e))
}

/// Whether `text` is one subject token: not empty, no dot, wildcard or white space.
fn is_token(text: &str) -> bool {
    !text.is_empty()
        && !text
            .chars()
            .any(|c| matches!(c, '.' | '*' | '>') || c.is_whitespace())
}

/// Whether a count option is left out of the request (zero: the server's default).
fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[cfg(test)]
mod decode_tests;
