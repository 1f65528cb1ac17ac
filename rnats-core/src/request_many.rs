//! Request-many (ADR-47): one request, any number of replies, gathered until a limit says the
//! request is over. Scatter-gather services are the use: ask every instance, take what comes
//! back within the time allowed.
//!
//! The decision of when a gathering ends is made by one pure state machine in the floor
//! (`floor::replies::Gather`) fed with replies and the time; the tokio client's [`Replies`]
//! stream and the blocking client's iterator both drive it, so the two end for the same
//! reasons at the same moments.

use std::fmt;
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_util::{Stream, StreamExt};

use crate::client::{Client, RequestError};
use crate::error::RequestCause;
use crate::header::HeaderMap;
use crate::message::Message;
use crate::otel::RequestClock;
use crate::rt::{Rt, Timer};
use crate::shared::Shared;
use crate::subject::{Subject, ToSubject};
use crate::subscriber::Subscriber;

pub(crate) use crate::floor::replies::{Gather, Verdict, checked_request_subject};
pub use crate::floor::replies::{ManyEnd, ManyLimits, Sentinel};

/// A request-many being set up: [`Client::request_many`] makes it, the setters shape it, and
/// awaiting it (or [`RequestMany::send`]) subscribes to a fresh inbox and sends the request.
#[must_use = "nothing is sent until the request is awaited"]
pub struct RequestMany {
    client: Client,
    subject: Result<Subject, RequestError>,
    payload: Bytes,
    headers: Option<HeaderMap>,
    limits: ManyLimits,
}

impl RequestMany {
    /// Headers to send with the request.
    pub fn headers(mut self, headers: HeaderMap) -> Self {
        self.headers = Some(headers);
        self
    }

    /// Replaces every limit at once.
    pub fn limits(mut self, limits: ManyLimits) -> Self {
        self.limits = limits;
        self
    }

    /// See [`ManyLimits::timeout`].
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.limits = self.limits.timeout(timeout);
        self
    }

    /// See [`ManyLimits::stall_wait`].
    pub fn stall_wait(mut self, stall: Duration) -> Self {
        self.limits = self.limits.stall_wait(stall);
        self
    }

    /// See [`ManyLimits::max_messages`].
    pub fn max_messages(mut self, n: usize) -> Self {
        self.limits = self.limits.max_messages(n);
        self
    }

    /// See [`ManyLimits::sentinel`].
    pub fn sentinel<F>(mut self, keep_going: F) -> Self
    where
        F: Fn(&Message) -> bool + Send + Sync + 'static,
    {
        self.limits = self.limits.sentinel(keep_going);
        self
    }

    /// See [`ManyLimits::sentinel_empty`].
    pub fn sentinel_empty(mut self) -> Self {
        self.limits = self.limits.sentinel_empty();
        self
    }

    /// Subscribes to a fresh inbox, sends the request, and returns the replies as a stream.
    pub async fn send(self) -> Result<Replies, RequestError> {
        let subject = self.subject?;
        let (replies, inbox) = Replies::open(&self.client, &self.limits).await?;
        match self.headers {
            Some(headers) => {
                self.client
                    .publish_with_reply_and_headers(subject, inbox, headers, self.payload)
                    .await?
            }
            None => {
                self.client
                    .publish_with_reply(subject, inbox, self.payload)
                    .await?
            }
        }
        Ok(replies)
    }
}

impl IntoFuture for RequestMany {
    type Output = Result<Replies, RequestError>;
    type IntoFuture = Pin<Box<dyn Future<Output = Self::Output> + Send>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.send())
    }
}

impl fmt::Debug for RequestMany {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestMany")
            .field("subject", &self.subject)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

/// The replies to a request-many, as a [`Stream`]. Each item is a reply; a 503 (no
/// responders) is one `Err` item ([`RequestErrorKind::NoResponders`](crate::RequestErrorKind))
/// and then the stream ends. Ending for a limit is not an error: [`Replies::ended`] says which
/// limit ended it. Dropping it unsubscribes.
pub struct Replies {
    subscriber: Option<Subscriber>,
    gather: Gather,
    sleep: Option<Timer>,
    rt: Rt,
    /// The gathering's duration for the client's metrics (`request_many`), recorded when it
    /// ends; reads no time when no registration asks for it.
    clock: RequestClock,
    shared: Arc<Shared>,
}

impl Replies {
    /// Subscribes to a fresh inbox for a gathering under `limits`, and starts its clock.
    /// Returns the inbox for the caller to send the request with.
    pub(crate) async fn open(
        client: &Client,
        limits: &ManyLimits,
    ) -> Result<(Replies, String), RequestError> {
        let inbox = client.new_inbox();
        let mut subscriber = client.subscribe(inbox.as_str()).await?;
        if let Some(max) = limits.max() {
            // ADR-47's optimisation: the server stops delivering at the count. A 503 or a
            // sentinel may end it sooner; ending unsubscribes then.
            subscriber
                .unsubscribe_after(u64::try_from(max).unwrap_or(u64::MAX))
                .await
                .ok();
        }
        let rt = client.shared().rt;
        let gather = limits.start(rt.now(), client.timeout());
        let replies = Replies {
            subscriber: Some(subscriber),
            sleep: gather.poll_timeout().map(|at| rt.timer(at)),
            gather,
            rt,
            clock: crate::request::clock_outside_table(client.shared()),
            shared: Arc::clone(client.shared_arc()),
        };
        Ok((replies, inbox))
    }

    /// Why the stream ended; `None` while it is still open.
    pub fn ended(&self) -> Option<ManyEnd> {
        self.gather.ended()
    }

    /// Ends the request here (ADR-47's cancelling): unsubscribes, and the stream ends.
    pub fn cancel(&mut self) {
        self.subscriber = None;
        self.gather.handle_closed();
        self.record(None);
    }

    fn finish(&mut self) -> Poll<Option<Result<Message, RequestError>>> {
        // Unsubscribes at once rather than leaving the inbox to the server.
        self.subscriber = None;
        self.sleep = None;
        self.record(None);
        Poll::Ready(None)
    }

    /// Records the gathering's duration, once: a limit ending it is its normal end, not a
    /// failure.
    fn record(&mut self, failure: Option<RequestCause>) {
        let shared = &self.shared;
        self.clock.finish_as(
            "request_many",
            || shared.requests().durations.recorders(),
            || failure,
        );
    }

    /// Moves the timer to the gathering's next limit.
    fn rearm(&mut self) {
        match self.gather.poll_timeout() {
            Some(at) => match &mut self.sleep {
                Some(sleep) => sleep.reset(at),
                None => self.sleep = Some(self.rt.timer(at)),
            },
            None => self.sleep = None,
        }
    }
}

impl Stream for Replies {
    type Item = Result<Message, RequestError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if this.gather.ended().is_some() {
            return this.finish();
        }
        let Some(subscriber) = this.subscriber.as_mut() else {
            return Poll::Ready(None);
        };
        // A reply already received is taken before the clock is read: one that came in time
        // is not lost to a timer that fired while the task was busy.
        match subscriber.poll_next_unpin(cx) {
            Poll::Ready(Some(message)) => {
                return match this.gather.handle_reply(this.rt.now(), message) {
                    Verdict::Yield(message) => {
                        this.rearm();
                        Poll::Ready(Some(Ok(message)))
                    }
                    Verdict::NoResponders => {
                        this.subscriber = None;
                        this.record(Some(RequestCause::NoResponders));
                        Poll::Ready(Some(Err(RequestCause::NoResponders.into())))
                    }
                    Verdict::End(_) => this.finish(),
                };
            }
            Poll::Ready(None) => {
                // The subscription ended under the gathering: the client closed, which
                // cut it short, unlike a limit.
                this.gather.handle_closed();
                this.record(Some(RequestCause::Closed));
                return this.finish();
            }
            Poll::Pending => {}
        }
        if let Some(sleep) = this.sleep.as_mut()
            && Pin::new(sleep).poll(cx).is_ready()
        {
            if this.gather.handle_timeout(this.rt.now()).is_some() {
                return this.finish();
            }
            // Woken early (the deadline moved): wait for the new one.
            this.rearm();
            if let Some(sleep) = this.sleep.as_mut() {
                let _ = Pin::new(sleep).poll(cx);
            }
        }
        Poll::Pending
    }
}

impl fmt::Debug for Replies {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Replies")
            .field("ended", &self.gather.ended())
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Sends a request that may have many replies (ADR-47) and gathers them as a stream until
    /// a limit ends it: the total timeout (default: the client's request timeout), a stall
    /// between replies, a number of replies, or a sentinel. Await the returned builder to send.
    ///
    /// ```no_run
    /// # async fn run(client: rnats_core::Client) -> Result<(), rnats_core::Error> {
    /// use futures_util::StreamExt;
    /// use std::time::Duration;
    ///
    /// let mut replies = client
    ///     .request_many("inventory.count", "sku-42".into())
    ///     .stall_wait(Duration::from_millis(200))
    ///     .max_messages(10)
    ///     .await?;
    /// while let Some(reply) = replies.next().await {
    ///     println!("{:?}", reply?.payload);
    /// }
    /// println!("ended by {:?}", replies.ended());
    /// # Ok(()) }
    /// ```
    pub fn request_many<S: ToSubject>(&self, subject: S, payload: Bytes) -> RequestMany {
        RequestMany {
            client: self.clone(),
            subject: checked_request_subject(&subject),
            payload,
            headers: None,
            limits: ManyLimits::default(),
        }
    }
}
