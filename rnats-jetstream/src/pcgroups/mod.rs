//! Partitioned consumer groups, as orbit.go's `pcgroups` keeps them: a group of named members
//! shares a stream's partitions, each member consuming through one pull consumer filtered on
//! its partitions, with a pinned priority group so that of the instances running under one
//! member name exactly one is delivered to at a time, the others standing by. Every message
//! of a partition (say, of one order) is consumed by one instance, in order. The groups'
//! configurations are JSON values in orbit.go's KV buckets and format, under the key
//! `<stream>.<group>`, so that Go and Rust members can share a group.
//!
//! Balanced membership gives each member a run of partitions in the order of the sorted
//! member names, and the remainder round-robin ([`member_partitions`]); member mappings
//! assign them by hand. Either way a member computes the same share in every implementation.
//!
//! # Static groups
//!
//! The stream's subjects already start with a partition number (a stream subject transform
//! such as `{{partition(10,1)}}.orders.{{wildcard(1)}}` puts it there), and the membership
//! does not change: deleting the configuration (bucket `static-consumer-groups`) ends every
//! member's consumption, and any other change to it ends it with an error.
//!
//! ```no_run
//! # async fn run(js: rnats_jetstream::Context) -> Result<(), rnats_core::Error> {
//! use futures_util::StreamExt;
//! use rnats_jetstream::consumer::pull;
//! use rnats_jetstream::pcgroups::{self, StaticConfig};
//!
//! // Ten partitions shared by two members.
//! let config = StaticConfig::balanced(10, ["m1", "m2"]);
//! pcgroups::create_static(&js, "ORDERS", "shipping", &config).await?;
//! let mut messages = pcgroups::join_static(&js, "ORDERS", "shipping", "m1", pull::Config::default()).await?;
//! while let Some(message) = messages.next().await {
//!     let message = message?;
//!     // `orders.17`: the partition number is taken off the subject.
//!     println!("{}", message.subject);
//!     message.ack().await?;
//! }
//! # Ok(()) }
//! ```
//!
//! # Elastic groups
//!
//! Any stream will do: [`create_elastic`] makes a work-queue stream `<stream>-<group>` that
//! sources it, hashing a partition number out of each subject (all of it, or the tokens of
//! chosen `*` wildcards of a [`PartitioningFilter`]) and putting it in front. Members are
//! added and dropped while the group runs ([`add_members`], [`drop_members`],
//! [`set_member_mappings`]); every instance joined with [`join_elastic`] watches the
//! configuration (bucket `elastic-consumer-groups`) and, on a change, recreates its member's
//! consumer (named after the member) over its new partitions. Nothing is lost on the way:
//! a message stays in the work queue until acked, and one that was acked is gone from it.
//! One that was delivered and not yet acked when its partition moved comes again, to its
//! new member. Deleting the group ends every instance's stream; changing its partitioning
//! ends them with [`PcgErrorKind::ConfigChanged`]. An instance whose member is not (or no
//! longer) in the membership waits, consuming nothing, until it is added.
//!
//! ```no_run
//! # async fn run(js: rnats_jetstream::Context) -> Result<(), rnats_core::Error> {
//! use futures_util::StreamExt;
//! use rnats_jetstream::consumer::pull;
//! use rnats_jetstream::pcgroups::{self, ElasticConfig};
//!
//! // Ten partitions of `orders.<id>`, keyed on the id (the first `*`).
//! let config = ElasticConfig::new(10).partitioning_filter("orders.*", [1]);
//! pcgroups::create_elastic(&js, "ORDERS", "shipping", &config).await?;
//! pcgroups::add_members(&js, "ORDERS", "shipping", ["m1", "m2"]).await?;
//! let mut messages = pcgroups::join_elastic(&js, "ORDERS", "shipping", "m1", pull::Config::default()).await?;
//! // Elsewhere, at any time: a third member takes its share of the partitions.
//! pcgroups::add_members(&js, "ORDERS", "shipping", ["m3"]).await?;
//! while let Some(message) = messages.next().await {
//!     let message = message?;
//!     println!("{}", message.subject); // `orders.17`
//!     message.ack().await?;
//! }
//! # Ok(()) }
//! ```

use std::collections::{BTreeSet, HashSet};
use std::fmt;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use futures_util::{Stream, StreamExt};
use rnats_core::error::Error;
use serde::{Deserialize, Deserializer, Serialize};

use crate::consumer::PriorityPolicy;
use crate::consumer::pull;
use crate::context::Context;
use crate::kv::{self, Operation, Store};
use crate::message::Message;

mod elastic;
mod elastic_member;

pub use elastic::{
    ELASTIC_BUCKET, ElasticConfig, PartitioningFilter, add_members, create_elastic, delete_elastic,
    delete_member_mappings, drop_members, elastic_active_members, elastic_config,
    elastic_step_down, elastic_stream_name, list_elastic, set_member_mappings,
};
pub use elastic_member::{ElasticMember, join_elastic};

/// The KV bucket static groups' configurations live in (orbit.go's name).
pub const STATIC_BUCKET: &str = "static-consumer-groups";

/// The priority group every member's consumer pins its instances in (orbit.go's name).
pub const PRIORITY_GROUP: &str = "PCG";

/// The ack wait a member's consumer gets when the template leaves it at zero.
const DEFAULT_ACK_WAIT: Duration = Duration::from_secs(5);

/// The shortest pinned TTL and pull expiry: shorter ones make the pin flap.
const MIN_PIN_TTL: Duration = Duration::from_secs(1);

/// Partitions assigned to one member by hand.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemberMapping {
    /// The member's name.
    pub member: String,
    /// Its partitions, numbered from 0.
    #[serde(default, deserialize_with = "null_as_empty")]
    pub partitions: Vec<u32>,
}

/// A static group's configuration, as stored (orbit.go's JSON).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct StaticConfig {
    /// How many members the group can have: its number of partitions.
    pub max_members: u32,
    /// Subject filters (after the partition token); none is every subject.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub filters: Vec<String>,
    /// Members sharing the partitions evenly; or else `member_mappings`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<String>,
    /// Partitions assigned to members by hand; every partition exactly once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub member_mappings: Vec<MemberMapping>,
}

impl StaticConfig {
    /// `partitions` partitions shared evenly by `members`.
    pub fn balanced<I, S>(partitions: u32, members: I) -> StaticConfig
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        StaticConfig {
            max_members: partitions,
            members: members.into_iter().map(Into::into).collect(),
            ..StaticConfig::default()
        }
    }

    /// `partitions` partitions assigned by `mappings`.
    pub fn mapped(partitions: u32, mappings: Vec<MemberMapping>) -> StaticConfig {
        StaticConfig {
            max_members: partitions,
            member_mappings: mappings,
            ..StaticConfig::default()
        }
    }

    /// Only subjects matching `filters` (after the partition token).
    pub fn filters<I, S>(mut self, filters: I) -> StaticConfig
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.filters = filters.into_iter().map(Into::into).collect();
        self
    }

    /// Whether `member` is in the group.
    pub fn is_member(&self, member: &str) -> bool {
        names_member(&self.members, &self.member_mappings, member)
    }

    /// Checks the configuration as orbit.go does: at least one partition; members or
    /// mappings, not both; mappings naming each member once and each partition exactly once.
    pub fn validate(&self) -> Result<(), PcgError> {
        if self.max_members < 1 {
            return Err(PcgError::with_source(
                PcgErrorKind::InvalidConfig,
                "the max number of members must be at least 1",
            ));
        }
        check_membership(self.max_members, &self.members, &self.member_mappings)
    }

    /// The filter subjects of `member`'s consumer.
    pub fn member_filters(&self, member: &str) -> Vec<String> {
        member_filter_subjects(
            self.max_members,
            &self.members,
            &self.member_mappings,
            member,
            &self.filters.iter().map(String::as_str).collect::<Vec<_>>(),
        )
    }
}

/// Whether `member` is among `members` or has a mapping in `mappings`.
fn names_member(members: &[String], mappings: &[MemberMapping], member: &str) -> bool {
    members.iter().any(|m| m == member) || mappings.iter().any(|m| m.member == member)
}

/// orbit.go's membership rules: members or mappings, not both; mappings naming each member
/// once and each of the `max_members` partitions exactly once.
fn check_membership(
    max_members: u32,
    members: &[String],
    mappings: &[MemberMapping],
) -> Result<(), PcgError> {
    let invalid = |why: &str| Err(PcgError::with_source(PcgErrorKind::InvalidConfig, why));
    if !members.is_empty() && !mappings.is_empty() {
        return invalid("either members or member mappings, not both");
    }
    if mappings.is_empty() {
        return Ok(());
    }
    if mappings.len() > max_members as usize {
        return invalid("more member mappings than the max number of members");
    }
    let mut names = HashSet::new();
    let mut partitions = HashSet::new();
    for mapping in mappings {
        if !names.insert(mapping.member.as_str()) {
            return invalid("a member is mapped twice");
        }
        for &partition in &mapping.partitions {
            if partition >= max_members {
                return invalid("a partition number past the max number of members");
            }
            if !partitions.insert(partition) {
                return invalid("a partition is mapped twice");
            }
        }
    }
    if partitions.len() != max_members as usize {
        return invalid("every partition must be mapped");
    }
    Ok(())
}

/// Go writes a nil slice as `null`: read it as empty.
fn null_as_empty<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Ok(Option::<Vec<T>>::deserialize(deserializer)?.unwrap_or_default())
}

/// `member`'s filter subjects for `filter`: `<partition>.<filter>` for each of its
/// partitions; with member mappings, `<partition>.>` whatever the filter (as orbit.go does).
fn partition_filters(
    max_members: u32,
    members: &[String],
    mappings: &[MemberMapping],
    member: &str,
    filter: &str,
) -> Vec<String> {
    let partitions = member_partitions(max_members, members, mappings, member);
    if members.is_empty() {
        partitions.iter().map(|p| format!("{p}.>")).collect()
    } else {
        partitions.iter().map(|p| format!("{p}.{filter}")).collect()
    }
}

/// The partitions `member` gets, in order, out of `max_members`, from either a balanced
/// membership or member mappings (when `members` is empty).
///
/// Balanced membership is orbit.go's distribution, so that a Go member and an rnats member
/// of one group compute the same shares: the members are deduplicated, sorted (bytewise) and
/// capped at the number of partitions; each gets a run of `max_members / count` partitions
/// in that order, and the remainder goes round-robin from the first member. With mappings, a
/// member has the partitions mapped to it.
pub fn member_partitions(
    max_members: u32,
    members: &[String],
    mappings: &[MemberMapping],
    member: &str,
) -> Vec<u32> {
    if members.is_empty() {
        return mappings
            .iter()
            .filter(|mapping| mapping.member == member)
            .flat_map(|mapping| mapping.partitions.iter().copied())
            .collect();
    }
    let sorted: Vec<&str> = members
        .iter()
        .map(String::as_str)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .take(max_members as usize)
        .collect();
    let count = sorted.len() as u32;
    // No partitions (a configuration not validated yet): nothing for anyone.
    if count == 0 {
        return Vec::new();
    }
    let per_member = max_members / count;
    (0..max_members)
        .filter(|&p| {
            let index = if p < count * per_member {
                (p / per_member) % count
            } else {
                (p - count * per_member) % count
            };
            sorted[index as usize] == member
        })
        .collect()
}

/// The filter subjects for `member` over every one of `filters` (`>` when there are none),
/// each subject once.
fn member_filter_subjects(
    max_members: u32,
    members: &[String],
    mappings: &[MemberMapping],
    member: &str,
    filters: &[&str],
) -> Vec<String> {
    let filters = if filters.is_empty() {
        &[">"][..]
    } else {
        filters
    };
    let mut subjects: Vec<String> = Vec::new();
    for filter in filters {
        for subject in partition_filters(max_members, members, mappings, member, filter) {
            // Mappings give `<partition>.>` for every filter: the server refuses a subject twice.
            if !subjects.contains(&subject) {
                subjects.push(subject);
            }
        }
    }
    subjects
}

/// What went wrong with a consumer group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PcgErrorKind {
    /// The configuration is not valid (or its stored JSON is not).
    InvalidConfig,
    /// The group has no configuration (never created, or deleted).
    NotFound,
    /// A configuration of that name exists and is different.
    Exists,
    /// The member is not in the group.
    NotMember,
    /// The group's configuration changed under a member in a way that ends its consumption:
    /// any change for a static group; for an elastic group, a change of its partitions,
    /// filters or buffer limits (membership may change).
    ConfigChanged,
    /// A JetStream request (stream, consumer, KV) failed; the source says how.
    JetStream,
    /// Consuming failed; the source says how.
    Consume,
}

impl fmt::Display for PcgErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PcgErrorKind::InvalidConfig => "invalid consumer group configuration",
            PcgErrorKind::NotFound => "consumer group not found",
            PcgErrorKind::Exists => "a different consumer group of that name exists",
            PcgErrorKind::NotMember => "not a member of the consumer group",
            PcgErrorKind::ConfigChanged => {
                "the consumer group's configuration changed in a way its members cannot follow"
            }
            PcgErrorKind::JetStream => "JetStream request failed",
            PcgErrorKind::Consume => "consuming failed",
        })
    }
}

/// A consumer group error.
pub type PcgError = Error<PcgErrorKind>;

fn jetstream<E: Into<rnats_core::Error>>(error: E) -> PcgError {
    PcgError::with_source(PcgErrorKind::JetStream, error)
}

/// `<stream>.<group>`: the group's key in the bucket.
fn key(stream: &str, group: &str) -> String {
    format!("{stream}.{group}")
}

/// `<group>-<member>`: the member's consumer.
pub fn consumer_name(group: &str, member: &str) -> String {
    format!("{group}-{member}")
}

async fn bucket(js: &Context) -> Result<Store, PcgError> {
    js.get_key_value(STATIC_BUCKET)
        .await
        .map_err(|error| PcgError::with_source(PcgErrorKind::NotFound, error))
}

async fn read_config(store: &Store, stream: &str, group: &str) -> Result<StaticConfig, PcgError> {
    let value = store
        .get(key(stream, group))
        .await
        .map_err(jetstream)?
        .ok_or_else(|| PcgError::new(PcgErrorKind::NotFound))?;
    let config: StaticConfig = serde_json::from_slice(&value)
        .map_err(|e| PcgError::with_source(PcgErrorKind::InvalidConfig, e))?;
    config.validate()?;
    Ok(config)
}

/// Creates the static group `group` on `stream` (and the configuration bucket, with the
/// stream's replicas, if there is none yet). Creating it again with the same configuration
/// is fine; with another, [`PcgErrorKind::Exists`].
pub async fn create_static(
    js: &Context,
    stream: &str,
    group: &str,
    config: &StaticConfig,
) -> Result<(), PcgError> {
    config.validate()?;
    let mut info = js.get_stream(stream).await.map_err(jetstream)?;
    let replicas = info.info().await.map_err(jetstream)?.config.num_replicas;
    let store = match js.get_key_value(STATIC_BUCKET).await {
        Ok(store) => store,
        Err(_) => js
            .create_key_value(kv::Config {
                bucket: STATIC_BUCKET.to_owned(),
                num_replicas: replicas,
                ..Default::default()
            })
            .await
            .map_err(jetstream)?,
    };
    let payload = serde_json::to_vec(config)
        .map_err(|e| PcgError::with_source(PcgErrorKind::InvalidConfig, e))?;
    match store.create(key(stream, group), payload.into()).await {
        Ok(_) => Ok(()),
        Err(error) if error.kind() == kv::CreateErrorKind::AlreadyExists => {
            if read_config(&store, stream, group).await? == *config {
                Ok(())
            } else {
                Err(PcgError::new(PcgErrorKind::Exists))
            }
        }
        Err(error) => Err(jetstream(error)),
    }
}

/// The configuration of the static group `group` on `stream`.
pub async fn static_config(
    js: &Context,
    stream: &str,
    group: &str,
) -> Result<StaticConfig, PcgError> {
    read_config(&bucket(js).await?, stream, group).await
}

/// The static groups on `stream`.
pub async fn list_static(js: &Context, stream: &str) -> Result<Vec<String>, PcgError> {
    let store = bucket(js).await?;
    let mut keys = store.keys().await.map_err(jetstream)?;
    let mut groups = Vec::new();
    while let Some(key) = keys.next().await {
        let key = key.map_err(jetstream)?;
        if let Some((on, group)) = key.split_once('.')
            && on == stream
        {
            groups.push(group.to_owned());
        }
    }
    Ok(groups)
}

/// Deletes the static group: its configuration (which ends every member's consumption) and
/// its members' consumers.
pub async fn delete_static(js: &Context, stream: &str, group: &str) -> Result<(), PcgError> {
    let on = js.get_stream(stream).await.map_err(jetstream)?;
    let store = bucket(js).await?;
    store.delete(key(stream, group)).await.map_err(jetstream)?;
    let prefix = format!("{group}-");
    let mut names = on.consumer_names();
    let mut members = Vec::new();
    while let Some(name) = names.next().await {
        let name = name.map_err(jetstream)?;
        if name.starts_with(&prefix) {
            members.push(name);
        }
    }
    for name in members {
        // A member that saw the deletion may have deleted its consumer first.
        if let Err(error) = on.delete_consumer(&name).await
            && on.consumer_info(&name).await.is_ok()
        {
            return Err(jetstream(error));
        }
    }
    Ok(())
}

/// The members with an instance pulling now.
pub async fn static_active_members(
    js: &Context,
    stream: &str,
    group: &str,
) -> Result<Vec<String>, PcgError> {
    let config = static_config(js, stream, group).await?;
    let on = js.get_stream(stream).await.map_err(jetstream)?;
    let names: BTreeSet<&str> = config
        .members
        .iter()
        .map(String::as_str)
        .chain(config.member_mappings.iter().map(|m| m.member.as_str()))
        .collect();
    let mut active = Vec::new();
    for member in names {
        if let Ok(info) = on.consumer_info(consumer_name(group, member)).await
            && info.num_waiting > 0
        {
            active.push(member.to_owned());
        }
    }
    Ok(active)
}

/// Unpins `member`'s current instance, so that another instance of it takes over.
pub async fn static_step_down(
    js: &Context,
    stream: &str,
    group: &str,
    member: &str,
) -> Result<(), PcgError> {
    let on = js.get_stream(stream).await.map_err(jetstream)?;
    on.unpin_consumer(&consumer_name(group, member), PRIORITY_GROUP)
        .await
        .map_err(jetstream)
}

/// Joins the static group `group` on `stream` as `member` and consumes: the member's
/// consumer (made from `template`, whose names, filters and priority settings are replaced)
/// is created or found, and the messages come while this instance holds the member's pin.
/// Their subjects have the partition token taken off; ack them as usual.
///
/// The stream ends when the group is deleted, and ends with [`PcgErrorKind::ConfigChanged`]
/// if its configuration changes; dropping it leaves the group.
pub async fn join_static(
    js: &Context,
    stream: &str,
    group: &str,
    member: &str,
    mut template: pull::Config,
) -> Result<StaticMember, PcgError> {
    let on = js.get_stream(stream).await.map_err(jetstream)?;
    let store = bucket(js).await?;
    let config = read_config(&store, stream, group).await?;
    if !config.is_member(member) {
        return Err(PcgError::new(PcgErrorKind::NotMember));
    }
    // Watched from its current value, so a change made while joining is seen.
    let watch = store
        .watch_with_options([key(stream, group)], kv::WatchOptions::new())
        .await
        .map_err(jetstream)?;
    if template.ack_wait.is_zero() {
        template.ack_wait = DEFAULT_ACK_WAIT;
    }
    let ack_wait = template.ack_wait;
    template.durable_name = Some(consumer_name(group, member));
    template.name = None;
    template.filter_subject = String::new();
    template.filter_subjects = config.member_filters(member);
    template.priority_groups = vec![PRIORITY_GROUP.to_owned()];
    template.priority_policy = PriorityPolicy::PinnedClient;
    template.priority_timeout = ack_wait.max(MIN_PIN_TTL);
    let consumer = on
        .get_or_create_consumer(&consumer_name(group, member), template)
        .await
        .map_err(jetstream)?;
    let messages = consumer
        .stream()
        .group(PRIORITY_GROUP)
        .expires((ack_wait / 2).max(MIN_PIN_TTL))
        .messages()
        .await
        .map_err(jetstream)?;
    Ok(StaticMember {
        messages: Some(messages),
        watch,
        config,
    })
}

/// One instance's consumption of a static group: a stream of its member's messages.
pub struct StaticMember {
    messages: Option<pull::Stream>,
    watch: kv::Watch,
    config: StaticConfig,
}

impl fmt::Debug for StaticMember {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StaticMember")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl StaticMember {
    /// The group's configuration this member joined with.
    pub fn config(&self) -> &StaticConfig {
        &self.config
    }

    /// What the configuration watch says: `Some(outcome)` ends the stream.
    fn poll_config(
        &mut self,
        cx: &mut TaskContext<'_>,
    ) -> Option<Option<Result<Message, PcgError>>> {
        loop {
            let entry = match Pin::new(&mut self.watch).poll_next(cx) {
                Poll::Pending => return None,
                Poll::Ready(None) => return Some(None),
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
            let unchanged = serde_json::from_slice::<StaticConfig>(&entry.value)
                .is_ok_and(|config| config == self.config);
            if !unchanged {
                return Some(Some(Err(PcgError::new(PcgErrorKind::ConfigChanged))));
            }
        }
    }
}

impl Stream for StaticMember {
    type Item = Result<Message, PcgError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if this.messages.is_none() {
            return Poll::Ready(None);
        }
        if let Some(end) = this.poll_config(cx) {
            // Dropping the pull stream ends the subscription; the pin lapses after its TTL.
            this.messages = None;
            return Poll::Ready(end);
        }
        let Some(messages) = this.messages.as_mut() else {
            return Poll::Ready(None);
        };
        match Pin::new(messages).poll_next(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Ready(Some(Err(error))) => Poll::Ready(Some(Err(PcgError::with_source(
                PcgErrorKind::Consume,
                error,
            )))),
            Poll::Ready(Some(Ok(mut message))) => {
                // `<partition>.<subject>`: the application sees `<subject>`.
                if let Some((_, subject)) = message.message.subject.as_str().split_once('.') {
                    message.message.subject = subject.into();
                }
                Poll::Ready(Some(Ok(message)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filters(config: &StaticConfig, member: &str) -> Vec<u32> {
        config
            .member_filters(member)
            .iter()
            .map(|f| f.split('.').next().unwrap().parse().unwrap())
            .collect()
    }

    #[test]
    fn balanced_members_get_runs_of_partitions_and_the_remainder_round_robin() {
        // 10 partitions over 3 members: 3 each in runs, the tenth to the first member.
        let config = StaticConfig::balanced(10, ["m2", "m1", "m3", "m1"]);
        assert_eq!(filters(&config, "m1"), [0, 1, 2, 9]);
        assert_eq!(filters(&config, "m2"), [3, 4, 5]);
        assert_eq!(filters(&config, "m3"), [6, 7, 8]);
        assert!(filters(&config, "m4").is_empty());
        assert_eq!(config.member_filters("m2")[0], "3.>");
        // More members than partitions: the first ones (sorted) get one each.
        let config = StaticConfig::balanced(2, ["c", "b", "a"]);
        assert_eq!(
            (filters(&config, "a"), filters(&config, "b")),
            (vec![0], vec![1])
        );
        assert!(filters(&config, "c").is_empty());
        assert!(
            StaticConfig::balanced(0, ["a"])
                .member_filters("a")
                .is_empty()
        );
        // Filters follow the partition token.
        let config = StaticConfig::balanced(2, ["a"]).filters(["orders.*", "refunds.>"]);
        assert_eq!(
            config.member_filters("a"),
            ["0.orders.*", "1.orders.*", "0.refunds.>", "1.refunds.>"]
        );
    }

    #[test]
    fn mappings_are_checked_as_orbit_checks_them() {
        let mapping = |member: &str, partitions: &[u32]| MemberMapping {
            member: member.into(),
            partitions: partitions.to_vec(),
        };
        let good = StaticConfig::mapped(3, vec![mapping("a", &[0, 2]), mapping("b", &[1])]);
        good.validate().unwrap();
        assert_eq!(good.member_filters("a"), ["0.>", "2.>"]);
        for bad in [
            StaticConfig::mapped(0, vec![]),
            StaticConfig::mapped(3, vec![mapping("a", &[0, 1])]),
            StaticConfig::mapped(2, vec![mapping("a", &[0, 0]), mapping("b", &[1])]),
            StaticConfig::mapped(2, vec![mapping("a", &[0, 2]), mapping("b", &[1])]),
            StaticConfig::mapped(2, vec![mapping("a", &[0]), mapping("a", &[1])]),
            StaticConfig {
                members: vec!["a".into()],
                ..StaticConfig::mapped(1, vec![mapping("a", &[0])])
            },
        ] {
            assert_eq!(
                bad.validate().unwrap_err().kind(),
                PcgErrorKind::InvalidConfig,
                "{bad:?}"
            );
        }
    }

    #[test]
    fn the_stored_json_is_orbits() {
        let config = StaticConfig::balanced(4, ["m1"]).filters(["foo.>"]);
        assert_eq!(
            serde_json::to_string(&config).unwrap(),
            r#"{"max_members":4,"filters":["foo.>"],"members":["m1"]}"#
        );
        let mapped: StaticConfig = serde_json::from_str(
            r#"{"max_members":2,"member_mappings":[{"member":"a","partitions":[0,1]}]}"#,
        )
        .unwrap();
        assert_eq!(mapped.member_mappings[0].partitions, [0, 1]);
    }
}
