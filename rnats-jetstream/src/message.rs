//! JetStream messages: what consumers deliver, with their metadata (parsed from the ack
//! subject) and the acknowledgements sent back on it.

use std::fmt;
use std::pin::Pin;
use std::task::Poll;
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use rnats_core::datetime::DateTime;
use rnats_core::header::{self, HeaderMap};
use rnats_core::{Request, Subject};

use crate::context::Context;
pub use crate::publish::PublishMessage;

/// A message a consumer delivered: the Core message (it derefs to it) and the context its
/// acks go through.
#[derive(Clone, Debug)]
pub struct Message {
    /// The Core message; its `reply` is the ack subject.
    pub message: rnats_core::Message,
    /// The context the message came through.
    pub context: Context,
}

impl std::ops::Deref for Message {
    type Target = rnats_core::Message;

    fn deref(&self) -> &rnats_core::Message {
        &self.message
    }
}

impl From<Message> for rnats_core::Message {
    fn from(message: Message) -> rnats_core::Message {
        message.message
    }
}

impl Message {
    /// Splits the message from its ack handle, so the two can go separate ways.
    pub fn split(mut self) -> (rnats_core::Message, Acker) {
        let reply = self.message.reply.take();
        let acker = Acker {
            context: self.context,
            reply,
        };
        (self.message, acker)
    }

    /// Acknowledges the message (`+ACK`), without waiting for the server.
    pub async fn ack(&self) -> Result<(), rnats_core::Error> {
        send_ack(&self.context, self.reply.as_ref(), AckKind::Ack).await
    }

    /// Sends an acknowledgement of `kind`, without waiting for the server.
    pub async fn ack_with(&self, kind: AckKind) -> Result<(), rnats_core::Error> {
        send_ack(&self.context, self.reply.as_ref(), kind).await
    }

    /// Sends an acknowledgement of `kind` and waits until the server confirms it.
    pub async fn double_ack_with(&self, kind: AckKind) -> Result<(), rnats_core::Error> {
        send_double_ack(&self.context, self.reply.as_ref(), kind).await
    }

    /// Acknowledges the message and waits until the server confirms it.
    pub async fn double_ack(&self) -> Result<(), rnats_core::Error> {
        self.double_ack_with(AckKind::Ack).await
    }

    /// Tells the server never to redeliver the message, as [`AckKind::Term`] does, and why
    /// (`+TERM <reason>`, nats.go's `TermWithReason`), without waiting for the server. The
    /// server trims the reason and passes it on in the `reason` field of the consumer's
    /// `MSG_TERMINATED` advisory.
    pub async fn term_with_reason(&self, reason: &str) -> Result<(), rnats_core::Error> {
        send_term(&self.context, self.reply.as_ref(), reason).await
    }

    /// Runs `work`, telling the server every `every` that the message is still being worked
    /// on ([`AckKind::Progress`], `+WPI`, which restarts its ack wait), and returns what
    /// `work` returns. For work that may outlast the consumer's `ack_wait`: without it, the
    /// server redelivers the message meanwhile (to another worker, or to this one after it
    /// acks), and an ack sent after the wait is not refused, so nothing tells the first
    /// worker. Pick `every` well inside the ack wait, a third of it say, so that one late
    /// tick does not let it lapse; it is at least 10 ms. Nothing is sent once `work` is
    /// done: ack (or nak) the message after it, by what it returned. A progress that cannot
    /// be sent (the client closed) is skipped; the ack after the work reports the
    /// connection's state. A message without an ack subject just runs `work`.
    ///
    /// ```no_run
    /// # async fn run(message: rnats_jetstream::Message) -> Result<(), rnats_core::Error> {
    /// use std::time::Duration;
    /// // The consumer's ack_wait is 30 s; rendering may take minutes.
    /// let rendered = message
    ///     .with_progress(Duration::from_secs(10), async {
    ///         rnats_core::runtime::sleep(Duration::from_secs(90)).await; // the long work
    ///         Ok::<_, std::io::Error>(())
    ///     })
    ///     .await;
    /// match rendered {
    ///     Ok(()) => message.double_ack().await?,
    ///     Err(_) => message.ack_with(rnats_jetstream::AckKind::Nak(None)).await?,
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn with_progress<F: Future>(&self, every: Duration, work: F) -> F::Output {
        with_progress(&self.context, self.reply.as_ref(), every, work).await
    }

    /// The delivery's metadata, read from the ack subject (no server call).
    pub fn info(&self) -> Result<Info<'_>, rnats_core::Error> {
        info_of(&self.message)
    }
}

/// A delivered Core message's metadata, read from its ack subject (its reply subject).
pub(crate) fn info_of(message: &rnats_core::Message) -> Result<Info<'_>, rnats_core::Error> {
    let reply = message.reply.as_ref().ok_or(MalformedAckSubject(
        "no reply subject: not a JetStream message",
    ))?;
    Info::from_ack_subject(reply.as_str())
}

/// The ack half of a [`Message::split`].
pub struct Acker {
    context: Context,
    reply: Option<Subject>,
}

impl Acker {
    /// An ack handle for the ack subject `reply`.
    pub fn new(context: Context, reply: Option<Subject>) -> Acker {
        Acker { context, reply }
    }

    /// Acknowledges the message (`+ACK`), without waiting for the server.
    pub async fn ack(&self) -> Result<(), rnats_core::Error> {
        send_ack(&self.context, self.reply.as_ref(), AckKind::Ack).await
    }

    /// Sends an acknowledgement of `kind`, without waiting for the server.
    pub async fn ack_with(&self, kind: AckKind) -> Result<(), rnats_core::Error> {
        send_ack(&self.context, self.reply.as_ref(), kind).await
    }

    /// Sends an acknowledgement of `kind` and waits until the server confirms it.
    pub async fn double_ack_with(&self, kind: AckKind) -> Result<(), rnats_core::Error> {
        send_double_ack(&self.context, self.reply.as_ref(), kind).await
    }

    /// Acknowledges the message and waits until the server confirms it.
    pub async fn double_ack(&self) -> Result<(), rnats_core::Error> {
        self.double_ack_with(AckKind::Ack).await
    }

    /// Terminates the message with a reason, as [`Message::term_with_reason`] does.
    pub async fn term_with_reason(&self, reason: &str) -> Result<(), rnats_core::Error> {
        send_term(&self.context, self.reply.as_ref(), reason).await
    }

    /// Runs `work` while telling the server the message is in progress, as
    /// [`Message::with_progress`] does.
    pub async fn with_progress<F: Future>(&self, every: Duration, work: F) -> F::Output {
        with_progress(&self.context, self.reply.as_ref(), every, work).await
    }
}

/// The shortest wait between two progress acks of [`Message::with_progress`].
const SHORTEST_PROGRESS: Duration = Duration::from_millis(10);

async fn with_progress<F: Future>(
    context: &Context,
    reply: Option<&Subject>,
    every: Duration,
    work: F,
) -> F::Output {
    let every = every.max(SHORTEST_PROGRESS);
    let first = rnats_core::runtime::now().checked_add(every);
    let (Some(reply), Some(first)) = (reply, first) else {
        // No ack subject, or a wait too long to count: nothing to send.
        return work.await;
    };
    let mut work = std::pin::pin!(work);
    // Each tick is due `every` after the one before was seen, so a tick missed while the task
    // was busy is sent once, not made up for in a burst.
    let mut tick = rnats_core::runtime::sleep_until(first);
    // The progress being sent, polled beside the work so that a publish waiting for room in
    // the write queue (a disconnected client's, say) never holds the work up; a tick that
    // comes while one is still on its way is skipped.
    let mut sending: Option<BoxFuture<'static, ()>> = None;
    std::future::poll_fn(|cx| {
        if let Poll::Ready(output) = work.as_mut().poll(cx) {
            return Poll::Ready(output);
        }
        if let Some(send) = sending.as_mut()
            && send.as_mut().poll(cx).is_ready()
        {
            sending = None;
        }
        while Pin::new(&mut tick).poll(cx).is_ready() {
            tick.reset(rnats_core::deadline::saturating_add(
                rnats_core::runtime::now(),
                every,
            ));
            if sending.is_none() {
                let context = context.clone();
                let reply = reply.clone();
                let mut send: BoxFuture<'static, ()> = Box::pin(async move {
                    // Skipped when it cannot be sent: the work goes on, and the ack after
                    // it tells the caller about the connection.
                    let _ = send_ack(&context, Some(&reply), AckKind::Progress).await;
                });
                if send.as_mut().poll(cx).is_pending() {
                    sending = Some(send);
                }
            }
        }
        Poll::Pending
    })
    .await
}

impl fmt::Debug for Acker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Acker").field("reply", &self.reply).finish()
    }
}

async fn send_ack(
    context: &Context,
    reply: Option<&Subject>,
    kind: AckKind,
) -> Result<(), rnats_core::Error> {
    send_ack_payload(context, reply, kind.into()).await
}

/// A `+TERM` with a reason.
async fn send_term(
    context: &Context,
    reply: Option<&Subject>,
    reason: &str,
) -> Result<(), rnats_core::Error> {
    send_ack_payload(context, reply, term_payload(reason)).await
}

async fn send_ack_payload(
    context: &Context,
    reply: Option<&Subject>,
    payload: Bytes,
) -> Result<(), rnats_core::Error> {
    let reply = reply.ok_or(MalformedAckSubject(
        "no reply subject: not a JetStream message",
    ))?;
    context.client.publish(reply.clone(), payload).await?;
    Ok(())
}

/// The ack payload `+TERM <reason>`, the form nats-server reads a reason from (whatever
/// follows the space, lines and all: the payload is length-prefixed).
fn term_payload(reason: &str) -> Bytes {
    Bytes::from(format!("+TERM {reason}"))
}

/// An ack sent as a request: the server answers once it has recorded the ack.
async fn send_double_ack(
    context: &Context,
    reply: Option<&Subject>,
    kind: AckKind,
) -> Result<(), rnats_core::Error> {
    let reply = reply.ok_or(MalformedAckSubject(
        "no reply subject: not a JetStream message",
    ))?;
    let request = Request::new()
        .payload(kind.into())
        .timeout(Some(context.timeout_or_default()));
    context.client.send_request(reply.clone(), request).await?;
    Ok(())
}

/// An acknowledgement (ADR-15's ack protocol).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckKind {
    /// Processed (`+ACK`).
    Ack,
    /// Not processed: redeliver, after the delay if one is given (`-NAK`).
    Nak(Option<Duration>),
    /// Still working on it: restart the ack wait (`+WPI`).
    Progress,
    /// Processed, and deliver the next message to the request's reply (`+NXT`).
    Next,
    /// Never redeliver this message (`+TERM`).
    Term,
}

impl From<AckKind> for Bytes {
    fn from(kind: AckKind) -> Bytes {
        match kind {
            AckKind::Ack => Bytes::from_static(b"+ACK"),
            AckKind::Nak(None) => Bytes::from_static(b"-NAK"),
            AckKind::Nak(Some(delay)) => {
                Bytes::from(format!("-NAK {{\"delay\":{}}}", delay.as_nanos()))
            }
            AckKind::Progress => Bytes::from_static(b"+WPI"),
            AckKind::Next => Bytes::from_static(b"+NXT"),
            AckKind::Term => Bytes::from_static(b"+TERM"),
        }
    }
}

/// A delivery's metadata, as the ack subject carries it.
#[derive(Debug, Clone)]
pub struct Info<'a> {
    /// The JetStream domain, if the subject names one.
    pub domain: Option<&'a str>,
    /// The account hash, in the newer subject layout.
    pub acc_hash: Option<&'a str>,
    /// The stream's name.
    pub stream: &'a str,
    /// The consumer's name.
    pub consumer: &'a str,
    /// The message's sequence in the stream.
    pub stream_sequence: u64,
    /// The delivery's sequence in the consumer.
    pub consumer_sequence: u64,
    /// How many times the message was delivered, this time included.
    pub delivered: i64,
    /// Messages still to deliver after this one.
    pub pending: u64,
    /// When the message was stored.
    pub published: DateTime,
    /// The random token at the end of the newer layout, if present.
    pub token: Option<&'a str>,
}

impl<'a> Info<'a> {
    /// A delivery's metadata read from its ack subject (the reply subject of a message a
    /// push or pull consumer delivered), as [`Message::info`] reads it, for code that holds
    /// the Core message.
    pub fn from_ack_subject(subject: &'a str) -> Result<Info<'a>, rnats_core::Error> {
        Ok(Info::parse(subject)?)
    }

    /// Reads an ack subject: `$JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.
    /// <consumer seq>.<timestamp>.<pending>`, or the newer layout with `<domain>` (`_` for
    /// none) and `<account hash>` first and an optional token last (ADR-15).
    fn parse(subject: &'a str) -> Result<Info<'a>, MalformedAckSubject> {
        let rest = subject
            .strip_prefix("$JS.ACK.")
            .ok_or(MalformedAckSubject("not a $JS.ACK subject"))?;
        // At most 10 tokens matter; anything past them is left for future use.
        let mut tokens = [""; 10];
        let mut count = 0;
        for token in rest.split('.') {
            if count == tokens.len() {
                break;
            }
            tokens[count] = token;
            count += 1;
        }
        let (domain, acc_hash, fields, token) = match count {
            7 => (None, None, &tokens[..7], None),
            9 | 10 => {
                let domain = (tokens[0] != "_").then_some(tokens[0]);
                let token = (count == 10).then_some(tokens[9]);
                (domain, Some(tokens[1]), &tokens[2..9], token)
            }
            _ => return Err(MalformedAckSubject("wrong number of tokens")),
        };
        let number = |text: &str| -> Result<u64, MalformedAckSubject> {
            text.parse()
                .map_err(|_| MalformedAckSubject("a number token is not a number"))
        };
        let nanos: i128 = fields[5]
            .parse()
            .map_err(|_| MalformedAckSubject("the timestamp is not a number"))?;
        Ok(Info {
            domain,
            acc_hash,
            stream: fields[0],
            consumer: fields[1],
            delivered: fields[2]
                .parse()
                .map_err(|_| MalformedAckSubject("the delivery count is not a number"))?,
            stream_sequence: number(fields[3])?,
            consumer_sequence: number(fields[4])?,
            published: rnats_core::datetime::from_nanos(nanos)
                .map_err(|_| MalformedAckSubject("the timestamp is out of range"))?,
            pending: number(fields[6])?,
            token,
        })
    }
}

/// An ack subject that is not one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct MalformedAckSubject(&'static str);

impl fmt::Display for MalformedAckSubject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "malformed JetStream ack subject: {}", self.0)
    }
}

impl std::error::Error for MalformedAckSubject {}

/// A message read straight from a stream (direct get, `STREAM.MSG.GET`), with its stream
/// metadata.
#[derive(Debug, Clone)]
pub struct StreamMessage {
    /// The subject it was published to.
    pub subject: Subject,
    /// Its sequence in the stream.
    pub sequence: u64,
    /// Its headers.
    pub headers: HeaderMap,
    /// Its payload.
    pub payload: Bytes,
    /// When it was stored.
    pub time: DateTime,
}

impl TryFrom<rnats_core::Message> for StreamMessage {
    type Error = StreamMessageError;

    /// Reads a direct-get reply: the metadata is in `Nats-Subject`, `Nats-Sequence` and
    /// `Nats-Time-Stamp`.
    fn try_from(message: rnats_core::Message) -> Result<StreamMessage, StreamMessageError> {
        let missing =
            |name| StreamMessageError::with_source(StreamMessageErrorKind::MissingHeader, name);
        let headers = message.headers.ok_or_else(|| missing("no headers"))?;
        let sequence = headers
            .get_last(header::NATS_SEQUENCE)
            .ok_or_else(|| missing("Nats-Sequence"))?
            .as_str()
            .parse()
            .map_err(|e| StreamMessageError::with_source(StreamMessageErrorKind::ParseError, e))?;
        let time = headers
            .get_last(header::NATS_TIME_STAMP)
            .ok_or_else(|| missing("Nats-Time-Stamp"))?;
        let time = rnats_core::datetime::parse_rfc3339(time.as_str())
            .map_err(|e| StreamMessageError::with_source(StreamMessageErrorKind::ParseError, e))?;
        let subject = Subject::from(
            headers
                .get_last(header::NATS_SUBJECT)
                .ok_or_else(|| missing("Nats-Subject"))?
                .as_str(),
        );
        Ok(StreamMessage {
            subject,
            sequence,
            headers,
            payload: message.payload,
            time,
        })
    }
}

/// The kinds of [`StreamMessageError`].
#[derive(Debug, Clone, PartialEq)]
pub enum StreamMessageErrorKind {
    /// A metadata header is missing.
    MissingHeader,
    /// A metadata header does not parse.
    ParseError,
}

impl fmt::Display for StreamMessageErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StreamMessageErrorKind::MissingHeader => "missing message header",
            StreamMessageErrorKind::ParseError => "parse error",
        })
    }
}

/// Why a message is not a stream message.
pub type StreamMessageError = rnats_core::error::Error<StreamMessageErrorKind>;

/// A message to publish, as `PublishMessage::outbound_message` builds it.
#[derive(Debug, Clone)]
pub struct OutboundMessage {
    /// Where it goes.
    pub subject: Subject,
    /// Its payload.
    pub payload: Bytes,
    /// Its headers.
    pub headers: Option<HeaderMap>,
}

impl OutboundMessage {
    /// A message for `subject`.
    pub fn new(subject: Subject, payload: Bytes, headers: Option<HeaderMap>) -> OutboundMessage {
        OutboundMessage {
            subject,
            payload,
            headers,
        }
    }
}

impl From<OutboundMessage> for rnats_core::message::OutboundMessage {
    fn from(message: OutboundMessage) -> rnats_core::message::OutboundMessage {
        rnats_core::message::OutboundMessage {
            subject: message.subject,
            reply: None,
            payload: message.payload,
            headers: message.headers,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TS: &str = "1714557600123456789";

    #[test]
    fn reads_the_old_seven_token_layout() {
        let subject = format!("$JS.ACK.ORDERS.worker.2.41.17.{TS}.5");
        let info = Info::parse(&subject).unwrap();
        assert_eq!((info.domain, info.acc_hash), (None, None));
        assert_eq!((info.stream, info.consumer), ("ORDERS", "worker"));
        assert_eq!(info.delivered, 2);
        assert_eq!(info.stream_sequence, 41);
        assert_eq!(info.consumer_sequence, 17);
        assert_eq!(info.pending, 5);
        assert_eq!(
            rnats_core::datetime::to_nanos(&info.published),
            1_714_557_600_123_456_789
        );
        assert_eq!(info.token, None);
    }

    #[test]
    fn reads_the_new_layout_with_and_without_domain_and_token() {
        let plain = format!("$JS.ACK._.ACCHASH.ORDERS.worker.1.3.3.{TS}.0");
        let info = Info::parse(&plain).unwrap();
        assert_eq!(info.domain, None);
        assert_eq!(info.acc_hash, Some("ACCHASH"));
        assert_eq!(info.stream_sequence, 3);
        assert_eq!(info.token, None);

        let full = format!("$JS.ACK.hub.ACCHASH.ORDERS.worker.1.3.3.{TS}.0.tok.later.more");
        let info = Info::parse(&full).unwrap();
        assert_eq!(info.domain, Some("hub"));
        assert_eq!(info.consumer, "worker");
        assert_eq!(info.token, Some("tok"));
    }

    #[test]
    fn malformed_subjects_are_errors_not_panics() {
        for subject in [
            "",
            "$JS.ACK",
            "$JS.ACK.",
            "$JS.ACK.a.b.c",
            "$JS.NAK.S.C.1.1.1.1.1",
            "$JS.ACK.S.C.x.1.1.1.1",
            "$JS.ACK.S.C.1.-1.1.1.1",
            "$JS.ACK.S.C.1.1.1.99999999999999999999999999999999999.1",
            "$JS.ACK._.H.S.C.1.1.1.1",
            "$JS.ACK.S.C.1.1.1.1.1.1",
            "$JS.ACK........",
        ] {
            assert!(Info::parse(subject).is_err(), "{subject:?}");
        }
    }

    #[test]
    fn acks_encode_as_the_protocol_says() {
        assert_eq!(Bytes::from(AckKind::Ack), "+ACK");
        assert_eq!(Bytes::from(AckKind::Nak(None)), "-NAK");
        assert_eq!(
            Bytes::from(AckKind::Nak(Some(Duration::from_millis(1500)))),
            "-NAK {\"delay\":1500000000}"
        );
        assert_eq!(Bytes::from(AckKind::Progress), "+WPI");
        assert_eq!(Bytes::from(AckKind::Next), "+NXT");
        assert_eq!(Bytes::from(AckKind::Term), "+TERM");
    }

    #[test]
    fn a_term_reason_follows_the_verb() {
        assert_eq!(term_payload("bad input"), "+TERM bad input");
        assert_eq!(term_payload("two\nlines"), "+TERM two\nlines");
    }
}
