//! One instance of an elastic group's member: it watches the group's configuration and,
//! whenever the membership changes, makes its member's consumer on the work-queue stream
//! over the partitions the new membership gives it, then consumes from it.
//!
//! A member's consumer is recreated rather than refiltered: partitions it takes over may
//! hold messages behind the consumer's position, and a new consumer starts from the
//! oldest message left in the work queue. The work queue refuses two consumers whose
//! filters overlap, so while the members move from one membership to the next a member
//! may find a partition still held by another; it tries again after a while, as it does
//! whenever it is in the membership without a consumer.

use std::future::Future;
use std::hash::{BuildHasher, RandomState};
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll, ready};
use std::time::Duration;

use futures_util::Stream;
use rnats_core::runtime::Sleep;

use super::elastic::{self, ElasticConfig, elastic_stream_name};
use super::{
    DEFAULT_ACK_WAIT, MIN_PIN_TTL, PRIORITY_GROUP, PcgError, PcgErrorKind, jetstream, key,
};
use crate::consumer::pull::{self, MessagesErrorKind};
use crate::consumer::{AckPolicy, PriorityPolicy};
use crate::consumer_errors::ConsumerCreateStrictErrorKind;
use crate::context::Context;
use crate::errors::ErrorCode;
use crate::kv::{self, Operation};
use crate::message::Message;

/// The header the server puts on messages delivered to the pinned instance.
const NATS_PIN_ID: &str = "Nats-Pin-Id";

/// How long an instance that does not hold the pin lets a pinned one recreate the
/// consumer first, after a membership change (plus up to the same again, at random, so that
/// instances do not all try at once).
const STANDBY_BACKOFF: Duration = Duration::from_millis(400);

/// Joins the elastic group `group` on `stream` as `member` and consumes: whenever `member`
/// is in the membership, its consumer on the group's work-queue stream (made from
/// `template`, whose names, filters, priority settings and inactivity threshold are
/// replaced; its ack policy must be explicit) covers the partitions the membership gives
/// it, and the messages come while this instance holds the member's pin. Their subjects
/// have the partition token taken off; ack them.
///
/// An instance may join before its member is added: it consumes once it is, stops when
/// it is dropped, and starts again if it is added back (orbit.go's behaviour; see
/// [`ElasticMember::end_when_dropped`] for an end instead). The stream
/// ends when the group is deleted, and ends with [`PcgErrorKind::ConfigChanged`] if the
/// group's partitioning changes. The work happens while the stream is polled; dropping it
/// leaves the group (the consumer idles out after the ack wait).
pub async fn join_elastic(
    js: &Context,
    stream: &str,
    group: &str,
    member: &str,
    mut template: pull::Config,
) -> Result<ElasticMember, PcgError> {
    if template.ack_policy != AckPolicy::Explicit {
        return Err(PcgError::with_source(
            PcgErrorKind::InvalidConfig,
            "an elastic group's members ack explicitly",
        ));
    }
    if member.is_empty()
        || member
            .chars()
            .any(|c| matches!(c, '.' | '*' | '>') || c.is_whitespace())
    {
        return Err(PcgError::with_source(
            PcgErrorKind::InvalidConfig,
            "a member name is a consumer name: no '.', '*', '>' or white space",
        ));
    }
    let work_queue = elastic_stream_name(stream, group);
    js.get_stream(&work_queue)
        .await
        .map_err(|error| PcgError::with_source(PcgErrorKind::NotFound, error))?;
    let store = elastic::bucket(js).await?;
    let (config, _) = elastic::read_config(&store, stream, group).await?;
    // Watched from its current value, so that a change made while joining is seen.
    let watch = store
        .watch_with_options([key(stream, group)], kv::WatchOptions::new())
        .await
        .map_err(jetstream)?;
    if template.ack_wait.is_zero() {
        template.ack_wait = DEFAULT_ACK_WAIT;
    }
    let ack_wait = template.ack_wait;
    template.name = Some(member.to_owned());
    template.durable_name = None;
    template.filter_subject = String::new();
    template.priority_groups = vec![PRIORITY_GROUP.to_owned()];
    template.priority_policy = PriorityPolicy::PinnedClient;
    template.priority_timeout = ack_wait.max(MIN_PIN_TTL);
    // A consumer whose instances all went away is removed by the server, so that the
    // partitions of a member that disappeared do not stay blocked.
    template.inactive_threshold = ack_wait;
    let joiner = Joiner {
        js: js.clone(),
        work_queue,
        member: member.to_owned(),
        template,
    };
    let state = if config.is_member(member) {
        State::Joining(Box::pin(joiner.clone().join(config.clone())))
    } else {
        State::Idle
    };
    Ok(ElasticMember {
        joiner,
        config,
        watch,
        state,
        pin: None,
        retry: None,
        end_when_dropped: false,
        ended: false,
    })
}

/// One instance's consumption of an elastic group: a stream of its member's messages that
/// follows the group's membership.
pub struct ElasticMember {
    joiner: Joiner,
    config: ElasticConfig,
    watch: kv::Watch,
    state: State,
    /// The pin id of the last message: this instance held the pin then.
    pin: Option<String>,
    retry: Option<Pin<Box<Sleep>>>,
    end_when_dropped: bool,
    ended: bool,
}

type Joining = Pin<Box<dyn Future<Output = Result<Option<pull::Stream>, PcgError>> + Send>>;

enum State {
    /// No consumer: not in the membership, or waiting to try again.
    Idle,
    /// Making the consumer for the current membership.
    Joining(Joining),
    /// Pulling from it.
    Consuming(Box<pull::Stream>),
}

impl std::fmt::Debug for ElasticMember {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match self.state {
            State::Idle => "idle",
            State::Joining(_) => "joining",
            State::Consuming(_) => "consuming",
        };
        f.debug_struct("ElasticMember")
            .field("member", &self.joiner.member)
            .field("config", &self.config)
            .field("state", &state)
            .finish_non_exhaustive()
    }
}

impl ElasticMember {
    /// The group's configuration as this instance last saw it.
    pub fn config(&self) -> &ElasticConfig {
        &self.config
    }

    /// The partitions the last seen membership gives this member.
    pub fn partitions(&self) -> Vec<u32> {
        self.config.partitions(&self.joiner.member)
    }

    /// Whether this instance has its member's consumer and pulls from it now.
    pub fn is_consuming(&self) -> bool {
        matches!(self.state, State::Consuming(_))
    }

    /// Ends the stream with [`PcgErrorKind::NotMember`] once the member is dropped from the
    /// membership, rather than waiting (consuming nothing) to be added back, which is
    /// orbit.go's behaviour and the default.
    pub fn end_when_dropped(mut self) -> ElasticMember {
        self.end_when_dropped = true;
        self
    }

    fn idle(&mut self) {
        self.state = State::Idle;
        self.retry = None;
    }

    /// Follows the configuration watch: `Some(outcome)` ends the stream.
    fn poll_config(
        &mut self,
        cx: &mut TaskContext<'_>,
    ) -> Option<Option<Result<Message, PcgError>>> {
        loop {
            let entry = match Pin::new(&mut self.watch).poll_next(cx) {
                Poll::Pending => return None,
                Poll::Ready(None) => {
                    return Some(Some(Err(PcgError::with_source(
                        PcgErrorKind::Consume,
                        "the configuration watch ended",
                    ))));
                }
                Poll::Ready(Some(Err(error))) => {
                    return Some(Some(Err(PcgError::with_source(
                        PcgErrorKind::Consume,
                        error,
                    ))));
                }
                Poll::Ready(Some(Ok(entry))) => entry,
            };
            if entry.operation != Operation::Put {
                return Some(None);
            }
            let config = match elastic::parse(&entry.value) {
                Ok(config) => config,
                Err(error) => return Some(Some(Err(error))),
            };
            if !config.same_partitioning(&self.config) {
                return Some(Some(Err(PcgError::new(PcgErrorKind::ConfigChanged))));
            }
            let member = self.joiner.member.as_str();
            if self.end_when_dropped && self.config.is_member(member) && !config.is_member(member) {
                return Some(Some(Err(PcgError::new(PcgErrorKind::NotMember))));
            }
            // Nothing to do when this member's consumer is made (or being made) for the
            // same partitions, which a reordered member list or another member's change
            // leaves alone; nor when it has none and is to have none.
            let unchanged = if matches!(self.state, State::Idle) {
                !config.is_member(member)
            } else {
                config.member_filters(member) == self.config.member_filters(member)
            };
            if unchanged {
                self.config = config;
                continue;
            }
            let had_consumer = matches!(self.state, State::Consuming(_));
            self.config = config;
            let rebalance = self.joiner.clone().rebalance(
                self.config.clone(),
                self.pin.take().filter(|_| had_consumer),
            );
            // Dropping the pull stream ends this instance's pulls at once.
            self.state = State::Joining(Box::pin(rebalance));
            self.retry = None;
        }
    }
}

impl Stream for ElasticMember {
    type Item = Result<Message, PcgError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if this.ended {
            return Poll::Ready(None);
        }
        if let Some(end) = this.poll_config(cx) {
            this.ended = true;
            this.idle();
            return Poll::Ready(end);
        }
        loop {
            match &mut this.state {
                State::Joining(joining) => match ready!(joining.as_mut().poll(cx)) {
                    Ok(Some(messages)) => {
                        this.state = State::Consuming(Box::new(messages));
                        this.pin = None;
                    }
                    Ok(None) => this.idle(),
                    Err(error) => {
                        tracing::debug!(member = %this.joiner.member, %error, "joining the elastic group failed; trying again later");
                        this.idle();
                    }
                },
                State::Idle => {
                    if !this.config.is_member(&this.joiner.member) {
                        // The watch wakes us when that changes.
                        return Poll::Pending;
                    }
                    let again =
                        (this.joiner.template.ack_wait).saturating_add(Duration::from_millis(500));
                    let retry = this
                        .retry
                        .get_or_insert_with(|| Box::pin(rnats_core::runtime::sleep(again)));
                    ready!(retry.as_mut().poll(cx));
                    this.retry = None;
                    let join = this.joiner.clone().join(this.config.clone());
                    this.state = State::Joining(Box::pin(join));
                }
                State::Consuming(messages) => {
                    match ready!(poll_consumer(messages, &mut this.pin, cx)) {
                        Some(item) => return Poll::Ready(Some(item)),
                        None => this.idle(),
                    }
                }
            }
        }
    }
}

/// The next message of the member's consumer, with the partition token taken off its
/// subject (and the pin it carries noted), or an error worth reporting; `None` when the
/// consumer is gone (another instance is recreating it, or the server removed it) and has
/// to be made again.
fn poll_consumer(
    messages: &mut pull::Stream,
    pin: &mut Option<String>,
    cx: &mut TaskContext<'_>,
) -> Poll<Option<Result<Message, PcgError>>> {
    let mut message = match ready!(Pin::new(messages).poll_next(cx)) {
        None => return Poll::Ready(None),
        Some(Err(error))
            if matches!(
                error.kind(),
                MessagesErrorKind::ConsumerDeleted | MessagesErrorKind::NoResponders
            ) =>
        {
            return Poll::Ready(None);
        }
        Some(Err(error)) => {
            return Poll::Ready(Some(Err(PcgError::with_source(
                PcgErrorKind::Consume,
                error,
            ))));
        }
        Some(Ok(message)) => message,
    };
    if let Some(id) = message
        .message
        .headers
        .as_ref()
        .and_then(|headers| headers.get_last(NATS_PIN_ID))
    {
        *pin = Some(id.as_str().to_owned());
    }
    // `<partition>.<subject>`: the application sees `<subject>`.
    if let Some((_, subject)) = message.message.subject.as_str().split_once('.') {
        message.message.subject = subject.into();
    }
    Poll::Ready(Some(Ok(message)))
}

/// What an instance needs to make its member's consumer; cheap to clone into a future.
#[derive(Clone)]
struct Joiner {
    js: Context,
    work_queue: String,
    member: String,
    template: pull::Config,
}

impl Joiner {
    fn work_queue(&self) -> crate::stream::Stream<()> {
        crate::stream::Stream {
            info: (),
            context: self.js.clone(),
            name: self.work_queue.clone(),
        }
    }

    /// After a membership change: the instance holding the pin (it saw `pin` on a message
    /// and the consumer still names it) deletes the member's consumer and makes it anew;
    /// any other instance first gives it time to, so that they do not undo each other's
    /// consumer.
    async fn rebalance(
        self,
        config: ElasticConfig,
        pin: Option<String>,
    ) -> Result<Option<pull::Stream>, PcgError> {
        let work_queue = self.work_queue();
        let pinned = match &pin {
            Some(pin) => work_queue
                .consumer_info(&self.member)
                .await
                .is_ok_and(|info| {
                    info.priority_groups.iter().any(|group| {
                        group.group == PRIORITY_GROUP
                            && group.pinned_client_id.as_deref() == Some(pin.as_str())
                    })
                }),
            None => false,
        };
        if pinned {
            if let Err(error) = work_queue.delete_consumer(&self.member).await {
                tracing::debug!(member = %self.member, %error, "deleting the member's consumer failed");
            }
        } else {
            let jitter = RandomState::new().hash_one(&self.member) % 100;
            rnats_core::runtime::sleep(STANDBY_BACKOFF + Duration::from_millis(jitter)).await;
        }
        self.join(config).await
    }

    /// Makes the member's consumer over its partitions (an existing one with other filters
    /// is replaced) and starts pulling; `None` when the membership gives it no partition.
    async fn join(self, config: ElasticConfig) -> Result<Option<pull::Stream>, PcgError> {
        let filters = config.member_filters(&self.member);
        if filters.is_empty() {
            return Ok(None);
        }
        let mut template = self.template.clone();
        template.filter_subjects = filters;
        let work_queue = self.work_queue();
        let consumer = match work_queue.create_consumer_strict(template.clone()).await {
            Ok(consumer) => consumer,
            Err(error) if error.kind() == ConsumerCreateStrictErrorKind::AlreadyExists => {
                // Made for another membership: replaced. Another instance may be deleting it
                // too; whichever deletion wins, the creation below tells.
                if let Err(error) = work_queue.delete_consumer(&self.member).await {
                    tracing::debug!(member = %self.member, %error, "deleting the member's consumer failed");
                }
                work_queue
                    .create_consumer_strict(template)
                    .await
                    .map_err(jetstream)?
            }
            Err(error) => {
                if let ConsumerCreateStrictErrorKind::JetStream(server) = error.kind()
                    && server.error_code() == ErrorCode::CONSUMER_WQ_CONSUMER_NOT_UNIQUE
                {
                    // The work queue refuses two consumers with overlapping filters while
                    // the members move to a new membership: tried again later.
                    tracing::trace!(member = %self.member, "a partition is still another member's");
                }
                return Err(jetstream(error));
            }
        };
        let expires = (self.template.ack_wait / 2).max(MIN_PIN_TTL);
        let messages = consumer
            .stream()
            .group(PRIORITY_GROUP)
            .expires(expires)
            .messages()
            .await
            .map_err(jetstream)?;
        Ok(Some(messages))
    }
}
