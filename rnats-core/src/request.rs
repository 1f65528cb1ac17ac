//! Requests multiplexed over one wildcard inbox subscription made at connect.
//!
//! Each request gets a reply subject `<prefix>.<nuid>.<counter>`: a counter, not a random
//! string, so starting a request costs one atomic increment and one map insert.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use rnats_proto::{StatusCode, Subject};
use tokio::sync::oneshot;

use crate::error::RequestError;
use crate::shared::{Shared, Sink, SubEntry};
use crate::{Message, State};

/// Subscribes the connection's request inbox (`<prefix>.<nuid>.*`).
pub(crate) fn subscribe_inbox(shared: &Shared) {
    let sid = shared.next_sid.fetch_add(1, Ordering::Relaxed);
    let pattern = format!("{}*", shared.reply_prefix);
    // `connect` checked the prefix, so this fails only if that check is wrong.
    let Ok(subject) = Subject::try_from(pattern.as_str()) else {
        tracing::error!(%pattern, "request inbox is not a valid subject");
        return;
    };
    shared.subs().by_sid.insert(
        sid,
        SubEntry {
            subject,
            queue_group: None,
            sink: Sink::Requests,
            delivered: 0,
            max: None,
        },
    );
    shared.push_control(|buf| rnats_proto::encode_sub(buf, &pattern, None, sid));
}

/// One request waiting for its reply. Dropping it frees its slot, so a cancelled request
/// leaves nothing behind.
pub(crate) struct Pending {
    shared: Arc<Shared>,
    token: u64,
    reply: String,
    rx: Option<oneshot::Receiver<Message>>,
    /// The engine delivered the reply and removed the entry itself.
    answered: bool,
}

impl Pending {
    pub(crate) fn register(shared: &Arc<Shared>) -> Pending {
        let token = shared.next_token.fetch_add(1, Ordering::Relaxed);
        let mut reply = String::with_capacity(shared.reply_prefix.len() + 20);
        reply.push_str(&shared.reply_prefix);
        reply.push_str(itoa::Buffer::new().format(token));
        let (tx, rx) = oneshot::channel();
        shared.requests().insert(token, tx);
        Pending {
            shared: Arc::clone(shared),
            token,
            reply,
            rx: Some(rx),
            answered: false,
        }
    }

    pub(crate) fn reply(&self) -> &str {
        &self.reply
    }

    pub(crate) async fn wait(mut self, timeout: Option<Duration>) -> Result<Message, RequestError> {
        let Some(rx) = self.rx.take() else {
            return Err(RequestError::Closed);
        };
        let received = match timeout {
            Some(limit) => match tokio::time::timeout(limit, rx).await {
                Ok(received) => received,
                Err(_) => return Err(RequestError::TimedOut(limit)),
            },
            None => rx.await,
        };
        // The engine drops every waiting sender when the client closes, and on a disconnect
        // when `fail_requests_on_disconnect` is set.
        let message = received.map_err(|_| match self.shared.state() {
            State::Disconnected => RequestError::Disconnected,
            _ => RequestError::Closed,
        })?;
        self.answered = true;
        if message.status == Some(StatusCode::NO_RESPONDERS) {
            return Err(RequestError::NoResponders);
        }
        Ok(message)
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        // Requests that timed out or were cancelled still have an entry.
        if !self.answered {
            self.shared.requests().remove(&self.token);
        }
    }
}
