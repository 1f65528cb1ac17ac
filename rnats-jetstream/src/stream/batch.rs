//! Batched direct gets (ADR-31 revision 2, nats-server 2.11+): many messages for one request
//! to `DIRECT.GET.<stream>`, sent back one after another and closed by an empty `204 EOB`
//! status message whose headers say how many matches are left (`Nats-Num-Pending`), which
//! sequence was sent last (`Nats-Last-Sequence`) and, for `multi_last`, the snapshot's upper
//! sequence (`Nats-UpTo-Sequence`).
//!
//! Both builders here turn that into one [`futures_util::Stream`] of messages that asks for
//! the next page itself until nothing is pending, so a result larger than one batch comes back
//! whole while only one page is ever buffered.
//!
//! `multi_last` is refused with `413` when its filters match more than 1024 subjects. The
//! last-per-subject stream then lists the matching subjects from `STREAM.INFO` (one page of
//! names at a time) and asks for them in groups, every group at the same `up_to_seq`, so the
//! view stays one point in time however many subjects there are.

use std::fmt;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_util::stream::BoxStream;
use futures_util::{Stream, StreamExt};
use rnats_core::datetime::DateTime;
use rnats_core::{HeaderMap, Message, StatusCode, Subscriber};
use serde::Serialize;

use super::errors::{DirectGetError, DirectGetErrorKind};
use super::info::InfoWithSubjects;
use super::{StreamInfoBuilder, is_valid_subject};
use crate::context::Context;
use crate::message::StreamMessage;

/// How many messages one request asks for unless told otherwise: small enough that a page of
/// large messages stays within the subscription's buffer.
const DEFAULT_PAGE: usize = 256;
/// The most subjects one `multi_last` may match before the server refuses it with `413`.
const MAX_MULTI_SUBJECTS: usize = 1024;
/// The most bytes of subject names one `multi_last` request carries in the per-subject
/// fallback, well under the default 1 MiB `max_payload`.
const MAX_MULTI_PAYLOAD: usize = 256 * 1024;

/// The body of a batched or multi-subject direct get (the fields of the server's
/// `JSApiMsgGetRequest` that these requests use).
#[derive(Debug, Serialize, Default, Clone, PartialEq)]
struct BatchRequest {
    #[serde(rename = "seq", skip_serializing_if = "Option::is_none")]
    sequence: Option<u64>,
    #[serde(rename = "next_by_subj", skip_serializing_if = "Option::is_none")]
    next_by_subject: Option<String>,
    batch: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_bytes: Option<usize>,
    #[serde(
        with = "rnats_core::datetime::rfc3339::option",
        skip_serializing_if = "Option::is_none"
    )]
    start_time: Option<DateTime>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    multi_last: Vec<String>,
    #[serde(rename = "up_to_seq", skip_serializing_if = "Option::is_none")]
    up_to_sequence: Option<u64>,
    #[serde(
        with = "rnats_core::datetime::rfc3339::option",
        skip_serializing_if = "Option::is_none"
    )]
    up_to_time: Option<DateTime>,
}

/// Builds a batched direct get: every message on a subject filter from a start sequence or
/// time, as a stream that pages through the whole result. Made by
/// [`Stream::direct_batch`](super::Stream::direct_batch); await it (or call
/// [`BatchGetBuilder::send`]) to start.
#[derive(Debug, Clone)]
#[must_use = "nothing is asked until the builder is sent"]
pub struct BatchGetBuilder {
    context: Context,
    stream: String,
    request: BatchRequest,
    limit: Option<u64>,
}

impl BatchGetBuilder {
    pub(crate) fn new(context: Context, stream: String, subject: String) -> BatchGetBuilder {
        BatchGetBuilder {
            context,
            stream,
            request: BatchRequest {
                next_by_subject: Some(subject),
                batch: DEFAULT_PAGE,
                ..Default::default()
            },
            limit: None,
        }
    }

    /// Starts at this sequence (inclusive); the default is the start of the stream. Replaces
    /// a start time.
    pub fn sequence(mut self, sequence: u64) -> Self {
        self.request.sequence = Some(sequence);
        self.request.start_time = None;
        self
    }

    /// Starts at the first message stored at or after this time. Replaces a start sequence.
    pub fn start_time(mut self, start: DateTime) -> Self {
        self.request.start_time = Some(start);
        self.request.sequence = None;
        self
    }

    /// Sends the first request and returns the messages as a stream.
    pub async fn send(self) -> Result<DirectBatch, DirectGetError> {
        let subject = self.request.next_by_subject.as_deref().unwrap_or_default();
        if !is_valid_subject(subject) {
            return Err(DirectGetError::new(DirectGetErrorKind::InvalidSubject));
        }
        let pager = Pager::open(self.context, self.stream, self.request, self.limit).await?;
        Ok(DirectBatch::from_pager(pager))
    }
}

/// The paging setters both builders share: page size, bytes per page, and a total.
macro_rules! paging_options {
    ($builder:ident) => {
        impl $builder {
            /// How many messages each request asks for (the ADR's `batch`; default 256, at
            /// least 1). Only the page size: the stream goes on until the result is exhausted
            /// or `max_messages` is reached.
            pub fn batch(mut self, page: usize) -> Self {
                self.request.batch = page.max(1);
                self
            }

            /// The most bytes of messages each request sends back (`max_bytes`); the server
            /// stops a page once this much is sent (the message that crosses it included).
            /// Unset, the server's `max_pending` applies.
            pub fn max_bytes(mut self, bytes: usize) -> Self {
                self.request.max_bytes = Some(bytes.max(1));
                self
            }

            /// Ends the stream after this many messages in all.
            pub fn max_messages(mut self, messages: u64) -> Self {
                self.limit = Some(messages);
                self
            }
        }
    };
}

paging_options!(BatchGetBuilder);
paging_options!(MultiLastBuilder);

impl std::future::IntoFuture for BatchGetBuilder {
    type Output = Result<DirectBatch, DirectGetError>;
    type IntoFuture = futures_util::future::BoxFuture<'static, Self::Output>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.send())
    }
}

/// Builds a multi-subject last-message read (`multi_last`): the last message of every subject
/// matching any of the filters, as of now or of a past sequence or time. Made by
/// [`Stream::direct_multi_last`](super::Stream::direct_multi_last).
#[derive(Debug, Clone)]
#[must_use = "nothing is asked until the builder is sent"]
pub struct MultiLastBuilder {
    context: Context,
    stream: String,
    request: BatchRequest,
    limit: Option<u64>,
}

impl MultiLastBuilder {
    pub(crate) fn new(context: Context, stream: String, filters: Vec<String>) -> MultiLastBuilder {
        MultiLastBuilder {
            context,
            stream,
            request: BatchRequest {
                multi_last: filters,
                batch: DEFAULT_PAGE,
                ..Default::default()
            },
            limit: None,
        }
    }

    /// Reads the stream as it was when this sequence was its last (`up_to_seq`). Replaces an
    /// up-to time.
    pub fn up_to_sequence(mut self, sequence: u64) -> Self {
        self.request.up_to_sequence = Some(sequence);
        self.request.up_to_time = None;
        self
    }

    /// Reads the stream as it was at this time (`up_to_time`). Replaces an up-to sequence.
    pub fn up_to_time(mut self, at: DateTime) -> Self {
        self.request.up_to_time = Some(at);
        self.request.up_to_sequence = None;
        self
    }

    /// Sends the first request and returns the messages as a stream. The messages of one
    /// request come in stream order; past 1024 matching subjects the read is split into
    /// groups of subjects, each in order, all at the same snapshot.
    pub async fn send(self) -> Result<DirectBatch, DirectGetError> {
        if self.request.multi_last.is_empty()
            || !self.request.multi_last.iter().all(|s| is_valid_subject(s))
        {
            return Err(DirectGetError::new(DirectGetErrorKind::InvalidSubject));
        }
        let (context, stream) = (self.context.clone(), self.stream.clone());
        match Pager::open(context, stream, self.request.clone(), self.limit).await {
            Ok(pager) => Ok(DirectBatch::from_pager(pager)),
            Err(error) if is_too_many(&error) => {
                let walk = SubjectWalk::start(&self.context, &self.stream, &self.request).await?;
                let mut request = self.request;
                request.up_to_sequence = walk.up_to_sequence.or(request.up_to_sequence);
                let source = GroupSource {
                    context: self.context,
                    stream: self.stream,
                    template: request,
                    limit: self.limit,
                    walk,
                };
                Ok(DirectBatch::from_groups(source))
            }
            Err(error) => Err(error),
        }
    }
}

impl std::future::IntoFuture for MultiLastBuilder {
    type Output = Result<DirectBatch, DirectGetError>;
    type IntoFuture = futures_util::future::BoxFuture<'static, Self::Output>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.send())
    }
}

/// The messages of a batched or multi-subject direct get, page after page, as a
/// [`futures_util::Stream`]. It ends when the server reports nothing pending (or on
/// `max_messages`); an error is yielded once and ends it. Dropping it unsubscribes.
pub struct DirectBatch {
    inner: BoxStream<'static, Result<StreamMessage, DirectGetError>>,
}

impl DirectBatch {
    fn from_pager(pager: Pager) -> DirectBatch {
        let inner = futures_util::stream::unfold(Some(pager), |pager| async move {
            let mut pager = pager?;
            let item = pager.next().await?;
            let keep = item.is_ok();
            Some((item, keep.then_some(pager)))
        });
        DirectBatch {
            inner: inner.boxed(),
        }
    }

    fn from_groups(source: GroupSource) -> DirectBatch {
        let inner = futures_util::stream::unfold(
            (Some(source), None::<Pager>),
            |(source, pager)| async move {
                let mut source = source?;
                let mut pager = pager;
                loop {
                    if let Some(current) = pager.as_mut() {
                        match current.next().await {
                            Some(Ok(message)) => {
                                if let Some(limit) = source.limit.as_mut() {
                                    *limit = limit.saturating_sub(1);
                                }
                                return Some((Ok(message), (Some(source), pager)));
                            }
                            Some(Err(error)) => return Some((Err(error), (None, None))),
                            None => {}
                        }
                    }
                    if source.limit == Some(0) {
                        return None;
                    }
                    match source.next_group().await {
                        Ok(Some(next)) => pager = Some(next),
                        Ok(None) => return None,
                        Err(error) => return Some((Err(error), (None, None))),
                    }
                }
            },
        );
        DirectBatch {
            inner: inner.boxed(),
        }
    }
}

impl Stream for DirectBatch {
    type Item = Result<StreamMessage, DirectGetError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        self.inner.poll_next_unpin(cx)
    }
}

impl fmt::Debug for DirectBatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DirectBatch").finish_non_exhaustive()
    }
}

/// What the end-of-batch status of one page said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct EndOfBatch {
    pending: u64,
    last_sequence: u64,
    up_to_sequence: Option<u64>,
}

impl EndOfBatch {
    /// Reads the `204` headers; `None` when `Nats-Num-Pending` is missing or malformed.
    fn parse(headers: Option<&HeaderMap>) -> Option<EndOfBatch> {
        let headers = headers?;
        let number = |name: &str| -> Option<u64> { headers.get_last(name)?.as_str().parse().ok() };
        Some(EndOfBatch {
            pending: number("Nats-Num-Pending")?,
            last_sequence: number("Nats-Last-Sequence").unwrap_or(0),
            up_to_sequence: number("Nats-UpTo-Sequence"),
        })
    }
}

/// One run of pages for one request: its inbox subscription, the request as it moves on, and
/// how many messages may still be yielded.
struct Pager {
    context: Context,
    subject: String,
    inbox: String,
    subscriber: Subscriber,
    request: BatchRequest,
    limit: Option<u64>,
    timeout: Duration,
    /// The first message, read by `open` to surface a refusal early.
    peeked: Option<StreamMessage>,
    /// Messages the page being read has brought so far.
    on_page: usize,
    done: bool,
}

impl Pager {
    /// Subscribes, sends the first page's request and waits for its first reply, so that a
    /// refusal (missing stream, bad request, too many subjects) is the opener's error.
    async fn open(
        context: Context,
        stream: String,
        request: BatchRequest,
        limit: Option<u64>,
    ) -> Result<Pager, DirectGetError> {
        let client = context.client();
        let inbox = client.new_inbox();
        let subscriber = client
            .subscribe(inbox.clone())
            .await
            .map_err(|e| DirectGetError::with_source(DirectGetErrorKind::Request, e))?;
        let timeout = context.timeout_or_default();
        let subject = format!("{}.DIRECT.GET.{stream}", context.prefix());
        let mut pager = Pager {
            context,
            subject,
            inbox,
            subscriber,
            request,
            limit,
            timeout,
            peeked: None,
            on_page: 0,
            done: limit == Some(0),
        };
        if !pager.done {
            pager.send_page().await?;
            match pager.next().await {
                Some(Ok(message)) => pager.peeked = Some(message),
                Some(Err(error)) => return Err(error),
                None => {}
            }
        }
        Ok(pager)
    }

    async fn send_page(&mut self) -> Result<(), DirectGetError> {
        let mut request = self.request.clone();
        if let Some(limit) = self.limit {
            request.batch = request
                .batch
                .min(usize::try_from(limit).unwrap_or(usize::MAX));
        }
        let body = serde_json::to_vec(&request)
            .map_err(|e| DirectGetError::with_source(DirectGetErrorKind::Other, e))?;
        let inbox = self.inbox.clone();
        self.context
            .client()
            .publish_with_reply(self.subject.clone(), inbox, Bytes::from(body))
            .await
            .map_err(|e| DirectGetError::with_source(DirectGetErrorKind::Request, e))
    }

    /// The next message, asking for the next page when one ends with matches pending.
    async fn next(&mut self) -> Option<Result<StreamMessage, DirectGetError>> {
        if let Some(message) = self.peeked.take() {
            return Some(Ok(message));
        }
        loop {
            if self.done {
                return None;
            }
            let message =
                match rnats_core::runtime::timeout(self.timeout, self.subscriber.next()).await {
                    Ok(Some(message)) => message,
                    Ok(None) => {
                        self.done = true;
                        return Some(Err(DirectGetError::new(DirectGetErrorKind::Request)));
                    }
                    Err(elapsed) => {
                        self.done = true;
                        return Some(Err(DirectGetError::with_source(
                            DirectGetErrorKind::TimedOut,
                            elapsed,
                        )));
                    }
                };
            match self.handle(message) {
                Step::Yield(message) => return Some(Ok(message)),
                Step::NextPage => {
                    if let Err(error) = self.send_page().await {
                        self.done = true;
                        return Some(Err(error));
                    }
                }
                Step::End => {
                    self.done = true;
                    return None;
                }
                Step::Fail(error) => {
                    self.done = true;
                    return Some(Err(error));
                }
            }
        }
    }

    /// Decides what one reply means for the stream.
    fn handle(&mut self, message: Message) -> Step {
        match message.status.map(|status| status.as_u16()) {
            None | Some(200) => {
                // A server without batch support answers with one plain message (ADR-31):
                // take it and stop.
                let batched = message
                    .headers
                    .as_ref()
                    .is_some_and(|h| h.get_last("Nats-Num-Pending").is_some());
                let message = match StreamMessage::try_from(message) {
                    Ok(message) => message,
                    Err(error) => {
                        return Step::Fail(DirectGetError::with_source(
                            DirectGetErrorKind::Other,
                            error,
                        ));
                    }
                };
                if let Some(limit) = self.limit.as_mut() {
                    *limit = limit.saturating_sub(1);
                }
                self.on_page += 1;
                if !batched || self.limit == Some(0) {
                    self.done = true;
                }
                Step::Yield(message)
            }
            Some(204) => {
                let Some(end) = EndOfBatch::parse(message.headers.as_ref()) else {
                    return Step::Fail(DirectGetError::with_source(
                        DirectGetErrorKind::Other,
                        "end of batch without Nats-Num-Pending",
                    ));
                };
                if end.pending == 0 || self.limit == Some(0) {
                    return Step::End;
                }
                // A page brings one message at least while any are pending: an empty one
                // that says more are would have the pages asked for again and again.
                if std::mem::take(&mut self.on_page) == 0 {
                    return Step::Fail(DirectGetError::with_source(
                        DirectGetErrorKind::Other,
                        format!("an empty page with {} messages pending", end.pending),
                    ));
                }
                // ADR-31: the next page starts after the last sequence sent; a multi-subject
                // read also pins the snapshot to the sequence the first page was cut at.
                self.request.sequence = Some(end.last_sequence.saturating_add(1));
                self.request.start_time = None;
                if !self.request.multi_last.is_empty() {
                    self.request.up_to_time = None;
                    self.request.up_to_sequence =
                        end.up_to_sequence.or(self.request.up_to_sequence);
                }
                Step::NextPage
            }
            // No match at all, or (on a later page) the rest was deleted meanwhile.
            Some(404) => Step::End,
            Some(_) => Step::Fail(status_error(&message)),
        }
    }
}

/// What one reply means.
enum Step {
    Yield(StreamMessage),
    NextPage,
    End,
    Fail(DirectGetError),
}

/// A status reply other than a message, `204` or `404` as an error.
fn status_error(message: &Message) -> DirectGetError {
    let status = message.status.unwrap_or(StatusCode::OK);
    match status.as_u16() {
        // The server answers a request it cannot make sense of with 408.
        408 => DirectGetError::new(DirectGetErrorKind::InvalidSubject),
        _ => DirectGetError::new(DirectGetErrorKind::ErrorResponse(
            status,
            message.description.clone().unwrap_or_default(),
        )),
    }
}

fn is_too_many(error: &DirectGetError) -> bool {
    matches!(error.kind(), DirectGetErrorKind::ErrorResponse(status, _) if status.as_u16() == 413)
}

/// The subjects a `multi_last` matches, listed from `STREAM.INFO` filter by filter, for reads
/// the server refuses to do in one request.
struct SubjectWalk {
    builders: std::vec::IntoIter<StreamInfoBuilder>,
    current: Option<InfoWithSubjects>,
    /// The stream's last sequence when the listing began, the snapshot when none was given.
    up_to_sequence: Option<u64>,
}

impl SubjectWalk {
    async fn start(
        context: &Context,
        stream: &str,
        request: &BatchRequest,
    ) -> Result<SubjectWalk, DirectGetError> {
        let mut builders: std::vec::IntoIter<StreamInfoBuilder> = request
            .multi_last
            .iter()
            .map(|filter| {
                StreamInfoBuilder::new(context.clone(), stream.to_owned()).subjects(filter.clone())
            })
            .collect::<Vec<_>>()
            .into_iter();
        let first = match builders.next() {
            Some(builder) => Some(builder.fetch().await.map_err(info_error)?),
            None => None,
        };
        let snapshot = first.as_ref().map(|info| info.info.state.last_sequence);
        let up_to_sequence = match (request.up_to_sequence, request.up_to_time) {
            (None, None) => snapshot,
            _ => None,
        };
        Ok(SubjectWalk {
            builders,
            current: first,
            up_to_sequence,
        })
    }

    /// The next group of subjects, at most 1024 and 256 KiB of names; `None` when all are
    /// listed. A subject that two filters both match is read once per filter.
    async fn next_group(&mut self) -> Result<Option<Vec<String>>, DirectGetError> {
        let mut group = Vec::new();
        let mut bytes = 0;
        while group.len() < MAX_MULTI_SUBJECTS && bytes < MAX_MULTI_PAYLOAD {
            let Some(current) = self.current.as_mut() else {
                match self.builders.next() {
                    Some(builder) => {
                        self.current = Some(builder.fetch().await.map_err(info_error)?);
                        continue;
                    }
                    None => break,
                }
            };
            match current.next().await {
                Some(Ok((subject, _))) => {
                    bytes += subject.len() + 3;
                    group.push(subject);
                }
                Some(Err(error)) => return Err(info_error(error)),
                None => self.current = None,
            }
        }
        Ok((!group.is_empty()).then_some(group))
    }
}

fn info_error(error: crate::context::RequestError) -> DirectGetError {
    DirectGetError::with_source(DirectGetErrorKind::Request, error)
}

/// Feeds groups of subjects to one pager after another, all at one snapshot.
struct GroupSource {
    context: Context,
    stream: String,
    template: BatchRequest,
    limit: Option<u64>,
    walk: SubjectWalk,
}

impl GroupSource {
    /// A pager for the next group with matches; `None` when the groups are done.
    async fn next_group(&mut self) -> Result<Option<Pager>, DirectGetError> {
        let Some(subjects) = self.walk.next_group().await? else {
            return Ok(None);
        };
        let mut request = self.template.clone();
        request.multi_last = subjects;
        let pager = Pager::open(
            self.context.clone(),
            self.stream.clone(),
            request,
            self.limit,
        )
        .await?;
        Ok(Some(pager))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_request_names_the_servers_fields() {
        let request = BatchRequest {
            sequence: Some(4),
            next_by_subject: Some("foo.>".into()),
            batch: 3,
            max_bytes: Some(2002),
            ..Default::default()
        };
        assert_eq!(
            serde_json::to_string(&request).unwrap(),
            r#"{"seq":4,"next_by_subj":"foo.>","batch":3,"max_bytes":2002}"#
        );
        let at = rnats_core::datetime::from_nanos(1_730_763_902_000_000_000).unwrap();
        let request = BatchRequest {
            batch: 2,
            multi_last: vec!["foo.A".into(), "foo.D".into()],
            up_to_time: Some(at),
            ..Default::default()
        };
        assert_eq!(
            serde_json::to_string(&request).unwrap(),
            r#"{"batch":2,"multi_last":["foo.A","foo.D"],"up_to_time":"2024-11-04T23:45:02Z"}"#
        );
    }

    /// A pager whose client never reaches a server: `handle` reads replies, sending nothing.
    async fn pager() -> Pager {
        let client = crate::test_support::unconnected_client().await;
        let subscriber = client.subscribe("_INBOX.pager").await.unwrap();
        Pager {
            context: crate::new(client),
            subject: "$JS.API.DIRECT.GET.S".into(),
            inbox: "_INBOX.pager".into(),
            subscriber,
            request: BatchRequest {
                batch: 2,
                ..Default::default()
            },
            limit: None,
            timeout: Duration::from_secs(1),
            peeked: None,
            on_page: 0,
            done: false,
        }
    }

    fn reply(status: Option<u16>, headers: &[(&str, &str)]) -> Message {
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            map.insert(*name, *value);
        }
        Message {
            subject: "_INBOX.pager".into(),
            reply: None,
            payload: Bytes::new(),
            headers: Some(map),
            status: status.map(|code| StatusCode::from_u16(code).unwrap()),
            description: None,
            length: 0,
        }
    }

    fn stored(sequence: &str) -> Message {
        reply(
            None,
            &[
                ("Nats-Subject", "foo"),
                ("Nats-Sequence", sequence),
                ("Nats-Time-Stamp", "2026-12-06T10:00:00Z"),
                ("Nats-Num-Pending", "5"),
            ],
        )
    }

    fn end_of_page(pending: &str, last: &str) -> Message {
        let headers = [("Nats-Num-Pending", pending), ("Nats-Last-Sequence", last)];
        reply(Some(204), &headers)
    }

    #[tokio::test]
    async fn a_page_with_messages_pending_asks_for_the_next_and_an_empty_one_fails() {
        let mut reading = pager().await;
        assert!(matches!(reading.handle(stored("3")), Step::Yield(_)));
        assert!(matches!(reading.handle(stored("4")), Step::Yield(_)));
        assert!(matches!(
            reading.handle(end_of_page("5", "4")),
            Step::NextPage
        ));
        assert_eq!(reading.request.sequence, Some(5));
        // The next page brings nothing, yet says five are pending: no third request.
        match reading.handle(end_of_page("5", "4")) {
            Step::Fail(error) => assert_eq!(error.kind(), DirectGetErrorKind::Other),
            _ => panic!("an empty page must end the read"),
        }
        // Nothing pending ends it, empty or not.
        let mut fresh = pager().await;
        assert!(matches!(fresh.handle(end_of_page("0", "4")), Step::End));
    }

    #[test]
    fn end_of_batch_reads_its_headers() {
        let mut headers = HeaderMap::new();
        headers.insert("Nats-Num-Pending", "7");
        headers.insert("Nats-Last-Sequence", "12");
        headers.insert("Nats-UpTo-Sequence", "40");
        assert_eq!(
            EndOfBatch::parse(Some(&headers)),
            Some(EndOfBatch {
                pending: 7,
                last_sequence: 12,
                up_to_sequence: Some(40)
            })
        );
        let mut bad = HeaderMap::new();
        bad.insert("Nats-Num-Pending", "many");
        assert_eq!(EndOfBatch::parse(Some(&bad)), None);
        assert_eq!(EndOfBatch::parse(None), None);
    }
}
