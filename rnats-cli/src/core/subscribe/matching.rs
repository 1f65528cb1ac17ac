//! `sub --match-replies`, natscli's: a request (a message whose reply subject is under the
//! client's inbox prefix) is held until a message comes on that reply subject, and the two
//! are shown together. Every inbox under the prefix is subscribed to, so the replies to
//! requests that other clients of the account send are seen too.

use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

use futures_util::stream::SelectAll;
use futures_util::{FutureExt, StreamExt};

use super::{SubArgs, ack, ignored, show};
use crate::error::CliError;

/// Requests held at most; past it the oldest is shown without its reply, so that requests
/// nobody answers do not pile up without end.
const MOST_HELD: usize = 10_000;

/// The inbox subscription and the requests held until their replies come.
pub(super) struct Matching {
    /// The client's inbox prefix with its dot: a request whose reply subject starts with it
    /// can be matched.
    prefix: String,
    /// The subscription to every inbox under the prefix.
    inboxes: rnats::Subscriber,
    /// The requests held, by number (the oldest first).
    held: BTreeMap<u64, rnats::Message>,
    /// The number of the request held for each reply subject.
    by_reply: HashMap<String, u64>,
}

impl Matching {
    /// Subscribes to every inbox under the client's prefix (before the ready line, so that
    /// no reply to a request the sub shows can come before it listens).
    pub(super) async fn subscribe(
        client: &rnats::Client,
        args: &SubArgs,
    ) -> Result<Matching, CliError> {
        let prefix = inbox_prefix(client);
        let inboxes = client.subscribe(format!("{prefix}.>")).await?;
        if !args.raw && !args.json && args.dump.is_none() {
            eprintln!("Matching replies with inbox prefix {prefix:?}");
        }
        Ok(Matching {
            prefix: format!("{prefix}."),
            inboxes,
            held: BTreeMap::new(),
            by_reply: HashMap::new(),
        })
    }

    /// The reply subject of `message` when it is a request that can be matched.
    fn reply_to_match(&self, message: &rnats::Message) -> Option<String> {
        message
            .reply
            .as_ref()
            .filter(|reply| reply.starts_with(&self.prefix))
            .map(ToString::to_string)
    }

    /// Holds the request `message`, the `number`th, until a reply comes on `reply`. An
    /// earlier request held for the same reply subject, or the oldest once too many are
    /// held, is given back to be shown without a reply.
    fn hold(
        &mut self,
        number: u64,
        reply: String,
        message: rnats::Message,
    ) -> Vec<(u64, rnats::Message)> {
        let mut unmatched = Vec::new();
        if let Some(earlier) = self.by_reply.insert(reply, number)
            && let Some(request) = self.held.remove(&earlier)
        {
            unmatched.push((earlier, request));
        }
        self.held.insert(number, message);
        if self.held.len() > MOST_HELD
            && let Some((oldest, request)) = self.held.pop_first()
        {
            if let Some(reply) = &request.reply {
                self.by_reply.remove(reply.as_str());
            }
            unmatched.push((oldest, request));
        }
        unmatched
    }

    /// The request held for a reply on `subject`, no longer held.
    fn take(&mut self, subject: &str) -> Option<(u64, rnats::Message)> {
        let number = self.by_reply.remove(subject)?;
        self.held.remove(&number).map(|request| (number, request))
    }
}

/// The prefix of the client's inboxes (`_INBOX` unless the connection sets its own).
fn inbox_prefix(client: &rnats::Client) -> String {
    let inbox = client.new_inbox();
    match inbox.rsplit_once('.') {
        Some((prefix, _)) => prefix.to_owned(),
        None => inbox,
    }
}

/// What came next.
enum Incoming {
    /// A message on one of the subjects.
    Message(rnats::Message),
    /// A message on an inbox.
    Reply(rnats::Message),
}

/// A `sub --match-replies` run.
struct Run<'a> {
    args: &'a SubArgs,
    client: &'a rnats::Client,
    /// The subjects' subscriptions; gone once `--count` messages were taken.
    subscriber: Option<SelectAll<rnats::Subscriber>>,
    matching: Matching,
    started: Instant,
    received: u64,
    /// When `--wait` ends the run: moved on once each message is shown or held, not by
    /// inbox traffic that matches nothing.
    quiet_at: Option<tokio::time::Instant>,
}

/// Reads the subjects and the inboxes until `--count` messages were taken and their replies
/// shown, `--wait` passed without one, or a subscription ended. Requests still held at the
/// end are shown without a reply.
pub(super) async fn run(
    args: &SubArgs,
    client: &rnats::Client,
    subscriber: SelectAll<rnats::Subscriber>,
    matching: Matching,
) -> Result<(), CliError> {
    let mut run = Run {
        args,
        client,
        subscriber: Some(subscriber),
        matching,
        started: Instant::now(),
        received: 0,
        quiet_at: None,
    };
    run.moved_on();
    loop {
        if run.subscriber.is_none() && run.matching.held.is_empty() {
            break;
        }
        match run.next().await {
            Some(Some(Incoming::Message(message))) => run.take_message(message).await?,
            Some(Some(Incoming::Reply(reply))) => {
                // A request is read before its reply (the server sends the reply later on
                // the same connection), but the two queues are read in turn: what the
                // subjects already gave goes first, so the reply finds its request.
                while let Some(subscriber) = run.subscriber.as_mut()
                    && let Some(Some(message)) = subscriber.next().now_or_never()
                {
                    run.take_message(message).await?;
                }
                run.take_reply(reply).await?;
            }
            Some(None) => return Err(CliError::SubscriptionEnded),
            None => break,
        }
    }
    // Quiet, or counted out: what is still held is shown as it is.
    let unanswered = std::mem::take(&mut run.matching.held);
    for (number, request) in unanswered {
        show(args, &request, number, run.started, None)?;
    }
    // The acks are publishes: they must leave before the process does.
    client.flush().await?;
    Ok(())
}

impl Run<'_> {
    /// The next message of either kind; `Some(None)` when a subscription ended, `None` when
    /// `--wait` passed first.
    async fn next(&mut self) -> Option<Option<Incoming>> {
        let inboxes = &mut self.matching.inboxes;
        let next = async {
            match self.subscriber.as_mut() {
                // Neither queue goes first, so that a busy one cannot hold the other back.
                Some(subscriber) => tokio::select! {
                    message = subscriber.next() => message.map(Incoming::Message),
                    reply = inboxes.next() => reply.map(Incoming::Reply),
                },
                None => inboxes.next().await.map(Incoming::Reply),
            }
        };
        match self.quiet_at {
            Some(at) => tokio::time::timeout_at(at, next).await.ok(),
            None => Some(next.await),
        }
    }

    /// `--wait` counts again from now.
    fn moved_on(&mut self) {
        self.quiet_at = self
            .args
            .wait
            .map(|wait| tokio::time::Instant::now() + wait);
    }

    /// A message on one of the subjects: counted, acked, then held when it is a request
    /// that can be matched, else shown.
    async fn take_message(&mut self, message: rnats::Message) -> Result<(), CliError> {
        if ignored(&self.args.ignore, message.subject.as_str()) {
            return Ok(());
        }
        self.received += 1;
        ack(self.args, self.client, &message).await?;
        let message = self.args.translated(message).await;
        match self.matching.reply_to_match(&message) {
            Some(reply) => {
                for (number, request) in self.matching.hold(self.received, reply, message) {
                    show(self.args, &request, number, self.started, None)?;
                }
            }
            None => show(self.args, &message, self.received, self.started, None)?,
        }
        // Counted from here, as the plain sub counts from a message shown: a slow
        // --translate does not use the wait up.
        self.moved_on();
        if self.args.limit() == Some(self.received) {
            // Nothing more is read from the subjects: stop the server sending it.
            self.subscriber = None;
        }
        Ok(())
    }

    /// A message on an inbox: shown with its request when one is held for it. The client's
    /// own inbox traffic, and replies to requests sent before the sub began, match nothing.
    async fn take_reply(&mut self, reply: rnats::Message) -> Result<(), CliError> {
        let Some((number, request)) = self.matching.take(reply.subject.as_str()) else {
            return Ok(());
        };
        let reply = self.args.translated(reply).await;
        show(self.args, &request, number, self.started, Some(&reply))?;
        self.moved_on();
        Ok(())
    }
}
