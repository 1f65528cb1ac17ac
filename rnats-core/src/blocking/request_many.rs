//! Request-many (ADR-47) for the blocking client: the replies as an iterator, ended by the
//! same [`ManyLimits`] as the tokio client's stream (the decision is the shared `Gather`).

use std::fmt;
use std::time::Instant;

use bytes::Bytes;

use super::client::Client;
use super::subscriber::Subscriber;
use crate::error::RequestCause;
use crate::error::RequestError;
use crate::floor::replies::{Gather, ManyEnd, ManyLimits, Verdict, checked_request_subject};
use crate::header::HeaderMap;
use crate::message::Message;
use crate::subject::{Subject, ToSubject};

/// A request-many being set up by [`Client::request_many`]; [`RequestMany::send`] sends it.
#[must_use = "nothing is sent until `send` is called"]
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

    /// When gathering ends: total timeout, stall wait, number of replies, sentinel.
    pub fn limits(mut self, limits: ManyLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Subscribes to a fresh inbox, sends the request, and returns the replies.
    pub fn send(self) -> Result<Replies, RequestError> {
        let subject = self.subject?;
        let inbox = self.client.new_inbox();
        let mut subscriber = self.client.subscribe(inbox.as_str())?;
        if let Some(max) = self.limits.max() {
            subscriber
                .unsubscribe_after(u64::try_from(max).unwrap_or(u64::MAX))
                .ok();
        }
        let gather = self.limits.start(Instant::now(), self.client.timeout());
        match self.headers {
            Some(headers) => {
                self.client
                    .publish_with_reply_and_headers(subject, inbox, headers, self.payload)?
            }
            None => self
                .client
                .publish_with_reply(subject, inbox, self.payload)?,
        }
        Ok(Replies {
            subscriber: Some(subscriber),
            gather,
        })
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

/// The replies to a blocking request-many. Each item is a reply; a 503 (no responders) is one
/// `Err` item and then the iterator ends. [`Replies::ended`] says which limit ended it.
/// Dropping it unsubscribes.
pub struct Replies {
    subscriber: Option<Subscriber>,
    gather: Gather,
}

impl Replies {
    /// Why the iterator ended; `None` while it is still open.
    pub fn ended(&self) -> Option<ManyEnd> {
        self.gather.ended()
    }
}

impl Iterator for Replies {
    type Item = Result<Message, RequestError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let subscriber = self.subscriber.as_mut()?;
            if self.gather.handle_timeout(Instant::now()).is_some() {
                self.subscriber = None;
                return None;
            }
            let received = match self.gather.poll_timeout() {
                Some(at) => {
                    match subscriber.next_timeout(at.saturating_duration_since(Instant::now())) {
                        Ok(received) => received,
                        // A limit passed: judged at the top of the loop.
                        Err(_) => continue,
                    }
                }
                None => subscriber.next(),
            };
            let Some(message) = received else {
                self.gather.handle_closed();
                self.subscriber = None;
                return None;
            };
            return match self.gather.handle_reply(Instant::now(), message) {
                Verdict::Yield(message) => Some(Ok(message)),
                Verdict::NoResponders => {
                    self.subscriber = None;
                    Some(Err(RequestCause::NoResponders.into()))
                }
                Verdict::End(_) => {
                    self.subscriber = None;
                    None
                }
            };
        }
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
    /// Sends a request that may have many replies (ADR-47); see the tokio client's
    /// [`request_many`](crate::Client::request_many). Shape it with
    /// [`RequestMany::limits`], then [`RequestMany::send`].
    ///
    /// ```no_run
    /// # fn run(client: rnats_core::blocking::Client) -> Result<(), rnats_core::Error> {
    /// use rnats_core::ManyLimits;
    /// use std::time::Duration;
    ///
    /// let replies = client
    ///     .request_many("inventory.count", "sku-42".into())
    ///     .limits(ManyLimits::default().stall_wait(Duration::from_millis(200)))
    ///     .send()?;
    /// for reply in replies {
    ///     println!("{:?}", reply?.payload);
    /// }
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
