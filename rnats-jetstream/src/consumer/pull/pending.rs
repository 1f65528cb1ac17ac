//! What pull consumption knows without I/O: how the server's replies to pull requests read
//! (ADR-37's status handling) and the pending message and byte counts that decide when the
//! next pull request goes out.

use rnats_core::{Message, StatusCode};

/// The server's pending counts on a status that ends a pull request.
const PENDING_MESSAGES: &str = "Nats-Pending-Messages";
const PENDING_BYTES: &str = "Nats-Pending-Bytes";

/// One message on a pull subscription, classified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Reply {
    /// A stream message for the user.
    Message,
    /// An idle heartbeat (ADR-9).
    Heartbeat,
    /// A pull request ended (expired, 404 no messages, size limit, leadership change, pin
    /// moved) leaving these counts of it unfulfilled; `None` where the status did not say,
    /// which counts as the whole request.
    Ended {
        messages: Option<usize>,
        bytes: Option<usize>,
        /// 404: nothing to deliver (ends a `fetch`).
        no_messages: bool,
        /// 423: the server pinned another client (the pin id is void).
        pin_lost: bool,
    },
    /// A request over one of the consumer's limits (409 `Exceeded MaxRequest...`): the same
    /// request would be refused again.
    RequestRefused(String),
    /// 409 `Exceeded MaxWaiting`: too many requests wait already; worth retrying later.
    TooManyWaiting(String),
    /// 409 `Consumer Deleted`.
    ConsumerDeleted,
    /// 409 `Consumer is push based`.
    PushBased,
    /// 503: nobody serves the pull subject (no such consumer, or JetStream is down).
    NoResponders,
    /// 400 or a status this client does not know.
    Error(StatusCode, Option<String>),
}

impl Reply {
    /// Reads one message of a pull subscription.
    pub(crate) fn classify(message: &Message) -> Reply {
        let status = match message.status {
            None | Some(StatusCode::OK) => return Reply::Message,
            Some(status) => status,
        };
        let description = message.description.as_deref().unwrap_or("");
        match status {
            StatusCode::IDLE_HEARTBEAT => Reply::Heartbeat,
            StatusCode::NO_RESPONDERS => Reply::NoResponders,
            StatusCode::NOT_FOUND | StatusCode::TIMEOUT | StatusCode::PIN_ID_MISMATCH => {
                Reply::ended(message, status)
            }
            StatusCode::CONFLICT => {
                let lower = description.to_ascii_lowercase();
                if lower.starts_with("consumer deleted") {
                    Reply::ConsumerDeleted
                } else if lower.starts_with("consumer is push based") {
                    Reply::PushBased
                } else if lower.starts_with("exceeded maxwaiting") {
                    Reply::TooManyWaiting(description.to_owned())
                } else if lower.starts_with("exceeded maxrequest") {
                    Reply::RequestRefused(description.to_owned())
                } else {
                    // Message Size Exceeds MaxBytes, Leadership Change, and whatever else
                    // ends a request: not an error, the pull is just over.
                    Reply::ended(message, status)
                }
            }
            status => Reply::Error(status, message.description.clone()),
        }
    }

    fn ended(message: &Message, status: StatusCode) -> Reply {
        let header = |name: &str| {
            message
                .headers
                .as_ref()
                .and_then(|headers| headers.get(name))
                .and_then(|value| value.as_str().trim().parse().ok())
        };
        Reply::Ended {
            messages: header(PENDING_MESSAGES),
            bytes: header(PENDING_BYTES),
            no_messages: status == StatusCode::NOT_FOUND,
            pin_lost: status == StatusCode::PIN_ID_MISMATCH,
        }
    }
}

/// The size the server counts a delivered message as (ADR-37): subject, reply, headers and
/// payload.
pub(crate) fn message_size(message: &Message) -> usize {
    message.subject.len() + message.reply.as_ref().map_or(0, |reply| reply.len()) + message.length
}

/// Messages and bytes asked for and not delivered yet, over all open pull requests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pending {
    /// `batch` of each request.
    batch: usize,
    /// `max_bytes` of each request; 0 for none.
    max_bytes: usize,
    /// A request goes out once no more than this many messages are still to come.
    threshold_messages: usize,
    /// Or once no more than this many bytes are (with `max_bytes` only).
    threshold_bytes: usize,
    messages: usize,
    bytes: usize,
}

impl Pending {
    /// Nothing asked for yet, with requests of `batch` messages and `max_bytes` bytes,
    /// refilled at half of each (ADR-37's default thresholds).
    pub(crate) fn new(batch: usize, max_bytes: usize) -> Pending {
        Pending {
            batch,
            max_bytes,
            threshold_messages: batch / 2,
            threshold_bytes: max_bytes / 2,
            messages: 0,
            bytes: 0,
        }
    }

    /// Refills at these thresholds instead of half a request, where set (ADR-37
    /// `threshold_messages`, `threshold_bytes`; the builder keeps them below the request).
    pub(crate) fn with_thresholds(
        mut self,
        messages: Option<usize>,
        bytes: Option<usize>,
    ) -> Pending {
        self.threshold_messages = messages.unwrap_or(self.threshold_messages);
        self.threshold_bytes = bytes.unwrap_or(self.threshold_bytes);
        self
    }

    /// Whether the buffer ran down to a threshold and should be filled.
    pub(crate) fn wants_pull(&self) -> bool {
        self.messages <= self.threshold_messages
            || (self.max_bytes > 0 && self.bytes <= self.threshold_bytes)
    }

    /// A request went out.
    pub(crate) fn handle_pull_sent(&mut self) {
        // The caller's sizes: `usize::MAX` asks for as much as there is, and saturates.
        self.messages = self.messages.saturating_add(self.batch);
        self.bytes = self.bytes.saturating_add(self.max_bytes);
    }

    /// A request could not be sent after all.
    pub(crate) fn handle_pull_failed(&mut self) {
        self.messages = self.messages.saturating_sub(self.batch);
        self.bytes = self.bytes.saturating_sub(self.max_bytes);
    }

    /// A message of `size` bytes arrived.
    pub(crate) fn handle_message(&mut self, size: usize) {
        self.messages = self.messages.saturating_sub(1);
        self.bytes = self.bytes.saturating_sub(size);
    }

    /// A request ended with these counts unfulfilled (the whole request where unknown).
    pub(crate) fn handle_ended(&mut self, messages: Option<usize>, bytes: Option<usize>) {
        let messages = messages.unwrap_or(self.batch);
        let bytes = bytes.unwrap_or(self.max_bytes);
        self.messages = self.messages.saturating_sub(messages);
        self.bytes = self.bytes.saturating_sub(bytes);
    }

    /// Whether a request is open with room left, by these books.
    pub(crate) fn has_open(&self) -> bool {
        self.messages > 0
    }

    /// Every open request is presumed gone (reconnect, missed heartbeats).
    pub(crate) fn reset(&mut self) {
        self.messages = 0;
        self.bytes = 0;
    }

    /// Messages asked for and not delivered.
    #[cfg(test)]
    pub(crate) fn messages(&self) -> usize {
        self.messages
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use rnats_core::HeaderMap;

    use super::*;

    fn status(code: u16, description: &str, pending: Option<(&str, &str)>) -> Message {
        let headers = pending.map(|(messages, bytes)| {
            let mut headers = HeaderMap::new();
            headers.insert(PENDING_MESSAGES, messages);
            headers.insert(PENDING_BYTES, bytes);
            headers
        });
        Message {
            subject: "_INBOX.x".into(),
            reply: None,
            payload: Bytes::new(),
            headers,
            status: Some(StatusCode::from_u16(code).unwrap()),
            description: (!description.is_empty()).then(|| description.to_owned()),
            length: 0,
        }
    }

    #[test]
    fn requests_sized_past_what_fits_saturate_the_count() {
        let mut pending = Pending::new(usize::MAX, usize::MAX);
        pending.handle_pull_sent();
        pending.handle_pull_sent();
        assert_eq!((pending.messages, pending.bytes), (usize::MAX, usize::MAX));
        assert!(!pending.wants_pull());
    }

    #[test]
    fn statuses_read_as_adr_37_says() {
        assert_eq!(
            Reply::classify(&status(100, "Idle Heartbeat", None)),
            Reply::Heartbeat
        );
        assert_eq!(
            Reply::classify(&status(408, "Request Timeout", Some(("7", "120")))),
            Reply::Ended {
                messages: Some(7),
                bytes: Some(120),
                no_messages: false,
                pin_lost: false
            }
        );
        // ADR-37 rev 3: the server ends a request whose interest went away the same way.
        assert_eq!(
            Reply::classify(&status(408, "Interest Expired", Some(("3", "40")))),
            Reply::Ended {
                messages: Some(3),
                bytes: Some(40),
                no_messages: false,
                pin_lost: false
            }
        );
        assert!(matches!(
            Reply::classify(&status(404, "No Messages", None)),
            Reply::Ended {
                no_messages: true,
                ..
            }
        ));
        assert!(matches!(
            Reply::classify(&status(409, "Message Size Exceeds MaxBytes", None)),
            Reply::Ended { messages: None, .. }
        ));
        assert_eq!(
            Reply::classify(&status(409, "Consumer Deleted", None)),
            Reply::ConsumerDeleted
        );
        assert_eq!(
            Reply::classify(&status(409, "Consumer is push based", None)),
            Reply::PushBased
        );
        assert!(matches!(
            Reply::classify(&status(409, "Exceeded MaxRequestBatch of 10", None)),
            Reply::RequestRefused(_)
        ));
        assert!(matches!(
            Reply::classify(&status(409, "Exceeded MaxWaiting", None)),
            Reply::TooManyWaiting(_)
        ));
        assert_eq!(Reply::classify(&status(503, "", None)), Reply::NoResponders);
        assert!(matches!(
            Reply::classify(&status(400, "Bad Request", None)),
            Reply::Error(..)
        ));
    }

    #[test]
    fn garbage_pending_headers_count_as_the_whole_request() {
        let reply = Reply::classify(&status(408, "Request Timeout", Some(("many", "-1"))));
        let Reply::Ended {
            messages, bytes, ..
        } = reply
        else {
            panic!("{reply:?}");
        };
        let mut pending = Pending::new(10, 0);
        pending.handle_pull_sent();
        pending.handle_ended(messages, bytes);
        assert_eq!(pending.messages(), 0);
    }

    #[test]
    fn refills_at_half_the_batch_and_after_expiry() {
        let mut pending = Pending::new(10, 0);
        assert!(pending.wants_pull());
        pending.handle_pull_sent();
        assert!(!pending.wants_pull());
        for _ in 0..4 {
            pending.handle_message(100);
        }
        assert!(!pending.wants_pull());
        pending.handle_message(100);
        assert!(pending.wants_pull());
        pending.handle_pull_sent();
        assert_eq!(pending.messages(), 15);
        // The first request expires with 5 undelivered.
        pending.handle_ended(Some(5), Some(0));
        assert_eq!(pending.messages(), 10);
        assert!(!pending.wants_pull());
    }

    #[test]
    fn a_batch_of_one_never_gets_stuck() {
        let mut pending = Pending::new(1, 0);
        pending.handle_pull_sent();
        assert!(!pending.wants_pull());
        pending.handle_message(10);
        assert!(pending.wants_pull());
    }

    #[test]
    fn set_thresholds_replace_the_halves() {
        let mut pending = Pending::new(10, 1000).with_thresholds(Some(2), Some(100));
        pending.handle_pull_sent();
        for _ in 0..7 {
            pending.handle_message(10);
        }
        assert!(!pending.wants_pull(), "3 to come, 930 bytes");
        pending.handle_message(10);
        assert!(pending.wants_pull(), "2 to come");
        let mut pending = Pending::new(1_000_000, 1000).with_thresholds(None, Some(100));
        pending.handle_pull_sent();
        pending.handle_message(800);
        assert!(!pending.wants_pull());
        pending.handle_message(100);
        assert!(pending.wants_pull());
    }

    #[test]
    fn byte_limits_refill_at_half_the_bytes() {
        let mut pending = Pending::new(1_000_000, 1000);
        pending.handle_pull_sent();
        pending.handle_message(400);
        assert!(!pending.wants_pull());
        pending.handle_message(200);
        assert!(pending.wants_pull());
    }
}
