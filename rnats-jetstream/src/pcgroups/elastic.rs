//! Elastic groups' configuration and administration: the JSON value orbit.go keeps in the
//! `elastic-consumer-groups` bucket, the work-queue stream that sources the group's stream
//! with a partition token put in front of each subject, and the membership changes that
//! members follow while they consume.

use futures_util::StreamExt;
use serde::{Deserialize, Serialize};

use super::{
    MemberMapping, PRIORITY_GROUP, PcgError, PcgErrorKind, check_membership, jetstream, key,
    member_filter_subjects, member_partitions, names_member, null_as_empty,
};
use crate::context::Context;
use crate::kv::{self, Store};
use crate::stream::{self, DiscardPolicy, RetentionPolicy, Source, SubjectTransform};

/// The KV bucket elastic groups' configurations live in (orbit.go's name).
pub const ELASTIC_BUCKET: &str = "elastic-consumer-groups";

/// How many times a membership change is tried again when another writer changed the
/// configuration between our read and our write.
const UPDATE_ATTEMPTS: usize = 5;

/// A subject filter of an elastic group, and which of its `*` wildcards make the partition
/// key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitioningFilter {
    /// The subjects taken into the group (`orders.*`); it needs a `*` or a trailing `>`.
    pub filter: String,
    /// The 1-based indexes of the filter's `*` wildcards whose tokens are hashed into the
    /// partition number; none means the whole subject is.
    #[serde(default, deserialize_with = "null_as_empty")]
    pub partitioning_wildcards: Vec<u32>,
}

impl PartitioningFilter {
    /// `filter`, partitioned on the tokens of the `*` wildcards numbered `wildcards` (from 1).
    pub fn new<S, I>(filter: S, wildcards: I) -> PartitioningFilter
    where
        S: Into<String>,
        I: IntoIterator<Item = u32>,
    {
        PartitioningFilter {
            filter: filter.into(),
            partitioning_wildcards: wildcards.into_iter().collect(),
        }
    }

    /// The source transform that puts the partition number in front of the subject:
    /// `orders.*` on wildcard 1 over 10 partitions is
    /// `{{Partition(10,1)}}.orders.{{Wildcard(1)}}`.
    fn transform(&self, partitions: u32) -> SubjectTransform {
        let mut wildcard = 0;
        let tokens: Vec<String> = self
            .filter
            .split('.')
            .map(|token| {
                if token == "*" {
                    wildcard += 1;
                    format!("{{{{Wildcard({wildcard})}}}}")
                } else {
                    token.to_owned()
                }
            })
            .collect();
        let mut partition = partitions.to_string();
        for index in &self.partitioning_wildcards {
            partition.push_str(&format!(",{index}"));
        }
        SubjectTransform {
            source: self.filter.clone(),
            destination: format!("{{{{Partition({partition})}}}}.{}", tokens.join(".")),
        }
    }

    /// orbit.go's rules: a non-empty filter with a `*` or ending in `>`, and partitioning
    /// wildcards that name distinct `*` wildcards of it.
    fn validate(&self) -> Result<(), PcgError> {
        if self.filter.is_empty() {
            return Err(invalid("a partitioning filter is empty"));
        }
        let tokens: Vec<&str> = self.filter.split('.').collect();
        let stars = tokens.iter().filter(|&&token| token == "*").count();
        if stars == 0 && tokens.last() != Some(&">") {
            return Err(invalid(
                "a partitioning filter needs a * wildcard or a trailing >",
            ));
        }
        let mut seen = Vec::new();
        for &index in &self.partitioning_wildcards {
            if index < 1 || index as usize > stars {
                return Err(invalid(
                    "a partitioning wildcard index is not one of the filter's * wildcards",
                ));
            }
            if seen.contains(&index) {
                return Err(invalid("a partitioning wildcard index is given twice"));
            }
            seen.push(index);
        }
        Ok(())
    }
}

/// An elastic group's configuration, as stored (orbit.go's JSON): its fixed partitioning
/// and its membership, which may change while members consume.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ElasticConfig {
    /// How many members the group can have: its number of partitions.
    pub max_members: u32,
    /// The subjects taken from the stream and how they are partitioned; none is every
    /// subject, partitioned on the whole subject.
    #[serde(default, deserialize_with = "null_as_empty")]
    pub partitioning_filters: Vec<PartitioningFilter>,
    /// The most messages the group's work-queue stream buffers (0: no limit).
    #[serde(rename = "max_buffered_msg", default, skip_serializing_if = "is_zero")]
    pub max_buffered_msgs: i64,
    /// The most bytes the group's work-queue stream buffers (0: no limit).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub max_buffered_bytes: i64,
    /// Members sharing the partitions evenly; or else `member_mappings`.
    #[serde(
        default,
        deserialize_with = "null_as_empty",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub members: Vec<String>,
    /// Partitions assigned to members by hand; every partition exactly once.
    #[serde(
        default,
        deserialize_with = "null_as_empty",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub member_mappings: Vec<MemberMapping>,
}

fn is_zero(value: &i64) -> bool {
    *value == 0
}

fn invalid(why: &str) -> PcgError {
    PcgError::with_source(PcgErrorKind::InvalidConfig, why)
}

impl ElasticConfig {
    /// A group of `partitions` partitions over every subject of the stream, with no members
    /// yet.
    pub fn new(partitions: u32) -> ElasticConfig {
        ElasticConfig {
            max_members: partitions,
            ..ElasticConfig::default()
        }
    }

    /// Takes in the subjects matching `filter`, partitioned on the `*` wildcards numbered
    /// `wildcards` (from 1; none: the whole subject).
    pub fn partitioning_filter<S, I>(mut self, filter: S, wildcards: I) -> ElasticConfig
    where
        S: Into<String>,
        I: IntoIterator<Item = u32>,
    {
        self.partitioning_filters
            .push(PartitioningFilter::new(filter, wildcards));
        self
    }

    /// Caps the messages buffered in the group's work-queue stream.
    pub fn max_buffered_msgs(mut self, messages: i64) -> ElasticConfig {
        self.max_buffered_msgs = messages;
        self
    }

    /// Caps the bytes buffered in the group's work-queue stream.
    pub fn max_buffered_bytes(mut self, bytes: i64) -> ElasticConfig {
        self.max_buffered_bytes = bytes;
        self
    }

    /// Starts with `members` sharing the partitions evenly.
    pub fn members<I, S>(mut self, members: I) -> ElasticConfig
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.members = members.into_iter().map(Into::into).collect();
        self
    }

    /// Whether `member` is in the group's membership now.
    pub fn is_member(&self, member: &str) -> bool {
        names_member(&self.members, &self.member_mappings, member)
    }

    /// Checks the configuration as orbit.go does: at least one partition, well-formed
    /// partitioning filters, members or mappings but not both, mappings covering every
    /// partition exactly once. Members may repeat or outnumber the partitions: the
    /// assignment deduplicates them and leaves the extra ones without partitions.
    pub fn validate(&self) -> Result<(), PcgError> {
        if self.max_members < 1 {
            return Err(invalid("the max number of members must be at least 1"));
        }
        for filter in &self.partitioning_filters {
            filter.validate()?;
        }
        check_membership(self.max_members, &self.members, &self.member_mappings)
    }

    /// The partitions `member` consumes under the current membership.
    pub fn partitions(&self, member: &str) -> Vec<u32> {
        member_partitions(
            self.max_members,
            &self.members,
            &self.member_mappings,
            member,
        )
    }

    /// The filter subjects of `member`'s consumer on the work-queue stream: its partitions
    /// in front of each partitioning filter (orbit.go's subjects, so that a Go instance and
    /// an rnats instance of one member ask for the same consumer).
    pub fn member_filters(&self, member: &str) -> Vec<String> {
        let filters: Vec<&str> = self
            .partitioning_filters
            .iter()
            .map(|filter| filter.filter.as_str())
            .collect();
        member_filter_subjects(
            self.max_members,
            &self.members,
            &self.member_mappings,
            member,
            &filters,
        )
    }

    /// The work-queue stream's source transforms: one per filter, or `>` on the whole
    /// subject.
    pub fn transforms(&self) -> Vec<SubjectTransform> {
        if self.partitioning_filters.is_empty() {
            return vec![PartitioningFilter::new(">", []).transform(self.max_members)];
        }
        self.partitioning_filters
            .iter()
            .map(|filter| filter.transform(self.max_members))
            .collect()
    }

    /// Whether `other` partitions alike: same partitions, filters and buffer limits. Only
    /// the membership of a created group may change.
    pub(super) fn same_partitioning(&self, other: &ElasticConfig) -> bool {
        self.max_members == other.max_members
            && self.partitioning_filters == other.partitioning_filters
            && self.max_buffered_msgs == other.max_buffered_msgs
            && self.max_buffered_bytes == other.max_buffered_bytes
    }
}

/// `<stream>-<group>`: the group's work-queue stream, on which each member's consumer is
/// named after the member.
pub fn elastic_stream_name(stream: &str, group: &str) -> String {
    format!("{stream}-{group}")
}

pub(super) async fn bucket(js: &Context) -> Result<Store, PcgError> {
    js.get_key_value(ELASTIC_BUCKET)
        .await
        .map_err(|error| PcgError::with_source(PcgErrorKind::NotFound, error))
}

/// The stored configuration and its revision.
pub(super) async fn read_config(
    store: &Store,
    stream: &str,
    group: &str,
) -> Result<(ElasticConfig, u64), PcgError> {
    let entry = store
        .entry(key(stream, group))
        .await
        .map_err(jetstream)?
        .filter(|entry| entry.operation == kv::Operation::Put)
        .ok_or_else(|| PcgError::new(PcgErrorKind::NotFound))?;
    let config = parse(&entry.value)?;
    Ok((config, entry.revision))
}

/// A stored configuration, parsed and checked.
pub(super) fn parse(value: &[u8]) -> Result<ElasticConfig, PcgError> {
    let config: ElasticConfig = serde_json::from_slice(value)
        .map_err(|e| PcgError::with_source(PcgErrorKind::InvalidConfig, e))?;
    config.validate()?;
    Ok(config)
}

/// Creates the elastic group `group` on `stream`: its configuration (and the bucket, with
/// the stream's replicas, if there is none yet) and its work-queue stream, which sources
/// `stream` with the partition number in front of each subject. A group of that name with
/// the same partitioning is kept as it is (its membership too); one with another is
/// [`PcgErrorKind::Exists`]. Returns the stored configuration.
pub async fn create_elastic(
    js: &Context,
    stream: &str,
    group: &str,
    config: &ElasticConfig,
) -> Result<ElasticConfig, PcgError> {
    config.validate()?;
    let mut on = js.get_stream(stream).await.map_err(jetstream)?;
    let info = on.info().await.map_err(jetstream)?;
    let (replicas, storage) = (info.config.num_replicas, info.config.storage);
    let store = match js.get_key_value(ELASTIC_BUCKET).await {
        Ok(store) => store,
        Err(_) => js
            .create_key_value(kv::Config {
                bucket: ELASTIC_BUCKET.to_owned(),
                num_replicas: replicas,
                ..Default::default()
            })
            .await
            .map_err(jetstream)?,
    };
    let payload = serde_json::to_vec(config)
        .map_err(|e| PcgError::with_source(PcgErrorKind::InvalidConfig, e))?;
    let stored = match store.create(key(stream, group), payload.into()).await {
        Ok(_) => config.clone(),
        Err(error) if error.kind() == kv::CreateErrorKind::AlreadyExists => {
            let (stored, _) = read_config(&store, stream, group).await?;
            if !stored.same_partitioning(config) {
                return Err(PcgError::new(PcgErrorKind::Exists));
            }
            stored
        }
        Err(error) => return Err(jetstream(error)),
    };
    let limit = |value: i64| if value > 0 { value } else { -1 };
    js.create_stream(stream::Config {
        name: elastic_stream_name(stream, group),
        retention: RetentionPolicy::WorkQueue,
        num_replicas: replicas,
        storage,
        max_messages: limit(stored.max_buffered_msgs),
        max_bytes: limit(stored.max_buffered_bytes),
        discard: DiscardPolicy::New,
        sources: Some(vec![Source {
            name: stream.to_owned(),
            subject_transforms: stored.transforms(),
            ..Default::default()
        }]),
        allow_direct: true,
        ..Default::default()
    })
    .await
    .map_err(jetstream)?;
    Ok(stored)
}

/// The configuration of the elastic group `group` on `stream`.
pub async fn elastic_config(
    js: &Context,
    stream: &str,
    group: &str,
) -> Result<ElasticConfig, PcgError> {
    Ok(read_config(&bucket(js).await?, stream, group).await?.0)
}

/// The elastic groups on `stream`.
pub async fn list_elastic(js: &Context, stream: &str) -> Result<Vec<String>, PcgError> {
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

/// Deletes the elastic group: its configuration (which ends every member's stream) and
/// then its work-queue stream, with the members' consumers.
pub async fn delete_elastic(js: &Context, stream: &str, group: &str) -> Result<(), PcgError> {
    let store = bucket(js).await?;
    store.delete(key(stream, group)).await.map_err(jetstream)?;
    js.delete_stream(elastic_stream_name(stream, group))
        .await
        .map_err(jetstream)?;
    Ok(())
}

/// Reads the configuration, lets `change` edit it, checks it and writes it back if no
/// one else wrote in between (trying again from a fresh read if someone did).
async fn change_config<F>(
    js: &Context,
    stream: &str,
    group: &str,
    mut change: F,
) -> Result<ElasticConfig, PcgError>
where
    F: FnMut(&mut ElasticConfig) -> Result<(), PcgError>,
{
    let store = bucket(js).await?;
    let mut attempts = 0;
    loop {
        let (mut config, revision) = read_config(&store, stream, group).await?;
        change(&mut config)?;
        config.validate()?;
        let payload = serde_json::to_vec(&config)
            .map_err(|e| PcgError::with_source(PcgErrorKind::InvalidConfig, e))?;
        match store
            .update(key(stream, group), payload.into(), revision)
            .await
        {
            Ok(_) => return Ok(config),
            Err(error)
                if error.kind() == kv::UpdateErrorKind::WrongLastRevision
                    && attempts + 1 < UPDATE_ATTEMPTS =>
            {
                attempts += 1;
            }
            Err(error) => return Err(jetstream(error)),
        }
    }
}

fn no_mappings(config: &ElasticConfig) -> Result<(), PcgError> {
    if config.member_mappings.is_empty() {
        Ok(())
    } else {
        Err(invalid(
            "the group assigns partitions by member mappings, not by members",
        ))
    }
}

/// Adds `members` to the elastic group (those already in it stay); the members rebalance
/// the partitions among themselves. Returns the new membership. A group assigning
/// partitions by mappings refuses with [`PcgErrorKind::InvalidConfig`].
pub async fn add_members<I, S>(
    js: &Context,
    stream: &str,
    group: &str,
    members: I,
) -> Result<Vec<String>, PcgError>
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    let adding: Vec<String> = members.into_iter().map(Into::into).collect();
    if adding.iter().all(String::is_empty) {
        return Err(invalid("no member to add"));
    }
    let config = change_config(js, stream, group, |config| {
        no_mappings(config)?;
        for member in &adding {
            if !member.is_empty() && !config.members.contains(member) {
                config.members.push(member.clone());
            }
        }
        Ok(())
    })
    .await?;
    Ok(config.members)
}

/// Drops `members` from the elastic group and deletes their consumers, so that the
/// members left take their partitions over at once rather than after the dropped ones'
/// consumers idle out (messages a dropped member holds unacked go to the new owners of
/// their partitions; its late acks fail). Returns the new membership. A group assigning partitions by
/// mappings refuses with [`PcgErrorKind::InvalidConfig`].
pub async fn drop_members<I, S>(
    js: &Context,
    stream: &str,
    group: &str,
    members: I,
) -> Result<Vec<String>, PcgError>
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    let dropping: Vec<String> = members.into_iter().map(Into::into).collect();
    if dropping.is_empty() {
        return Err(invalid("no member to drop"));
    }
    let config = change_config(js, stream, group, |config| {
        no_mappings(config)?;
        config.members.retain(|member| !dropping.contains(member));
        Ok(())
    })
    .await?;
    let work_queue = js
        .get_stream(elastic_stream_name(stream, group))
        .await
        .map_err(jetstream)?;
    for member in dropping.iter().filter(|m| !config.is_member(m)) {
        // Not there (never joined, or its instance deleted it first) is fine.
        if let Err(error) = work_queue.delete_consumer(member).await
            && work_queue.consumer_info(member).await.is_ok()
        {
            return Err(jetstream(error));
        }
    }
    Ok(config.members)
}

/// Assigns the partitions by `mappings` instead of by members (every partition exactly
/// once); the members follow.
pub async fn set_member_mappings(
    js: &Context,
    stream: &str,
    group: &str,
    mappings: Vec<MemberMapping>,
) -> Result<ElasticConfig, PcgError> {
    if mappings.is_empty() {
        return Err(invalid("no member mapping"));
    }
    change_config(js, stream, group, |config| {
        config.members.clear();
        config.member_mappings = mappings.clone();
        Ok(())
    })
    .await
}

/// Removes the member mappings: the group has no members until some are added.
pub async fn delete_member_mappings(
    js: &Context,
    stream: &str,
    group: &str,
) -> Result<ElasticConfig, PcgError> {
    change_config(js, stream, group, |config| {
        config.member_mappings.clear();
        Ok(())
    })
    .await
}

/// The members of the group that have a consumer on its work-queue stream now.
pub async fn elastic_active_members(
    js: &Context,
    stream: &str,
    group: &str,
) -> Result<Vec<String>, PcgError> {
    let config = elastic_config(js, stream, group).await?;
    let work_queue = js
        .get_stream(elastic_stream_name(stream, group))
        .await
        .map_err(jetstream)?;
    let mut names = work_queue.consumer_names();
    let mut active = Vec::new();
    while let Some(name) = names.next().await {
        let name = name.map_err(jetstream)?;
        if config.is_member(&name) {
            active.push(name);
        }
    }
    active.sort();
    Ok(active)
}

/// Unpins `member`'s current instance, so that another instance of it takes over.
pub async fn elastic_step_down(
    js: &Context,
    stream: &str,
    group: &str,
    member: &str,
) -> Result<(), PcgError> {
    let work_queue = js
        .get_stream(elastic_stream_name(stream, group))
        .await
        .map_err(jetstream)?;
    work_queue
        .unpin_consumer(member, PRIORITY_GROUP)
        .await
        .map_err(jetstream)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mapping(member: &str, partitions: &[u32]) -> MemberMapping {
        MemberMapping {
            member: member.into(),
            partitions: partitions.to_vec(),
        }
    }

    #[test]
    fn partitions_are_orbits_assignment() {
        // Worked by hand from orbit.go's GeneratePartitionFilters: members sorted, runs of
        // max/count partitions, the remainder round-robin from the first member.
        let config = ElasticConfig::new(10).members(["m3", "m1", "m2"]);
        assert_eq!(config.partitions("m1"), [0, 1, 2, 9]);
        assert_eq!(config.partitions("m2"), [3, 4, 5]);
        assert_eq!(config.partitions("m3"), [6, 7, 8]);
        let config = ElasticConfig::new(8).members(["c", "a", "b"]);
        assert_eq!(config.partitions("a"), [0, 1, 6]);
        assert_eq!(config.partitions("b"), [2, 3, 7]);
        assert_eq!(config.partitions("c"), [4, 5]);
        // The figures orbit.go's own unit test expects, over 6, 7 and 8 partitions.
        let mut config = ElasticConfig::new(6)
            .partitioning_filter("foo.*.*.>", [1, 2])
            .members(["m1", "m2", "m3"]);
        assert_eq!(config.member_filters("m1"), ["0.foo.*.*.>", "1.foo.*.*.>"]);
        assert_eq!(config.member_filters("m3"), ["4.foo.*.*.>", "5.foo.*.*.>"]);
        config.max_members = 7;
        assert_eq!(config.partitions("m1"), [0, 1, 6]);
        assert_eq!(config.partitions("m2"), [2, 3]);
        config.max_members = 8;
        assert_eq!(config.partitions("m2"), [2, 3, 7]);
        assert_eq!(config.partitions("m3"), [4, 5]);
        assert_eq!(
            config.transforms()[0].destination,
            "{{Partition(8,1,2)}}.foo.{{Wildcard(1)}}.{{Wildcard(2)}}.>"
        );
        // A fourth member: each keeps a run, `d` takes the last one.
        let config = ElasticConfig::new(8).members(["c", "a", "b", "d"]);
        assert_eq!(config.partitions("a"), [0, 1]);
        assert_eq!(config.partitions("d"), [6, 7]);
        // More members than partitions: the first ones (sorted) only; duplicates once.
        let config = ElasticConfig::new(3).members(["e", "d", "c", "b", "a", "a"]);
        assert_eq!(config.partitions("a"), [0]);
        assert_eq!(config.partitions("c"), [2]);
        assert!(config.partitions("d").is_empty());
        // Partitions in front of each filter, in orbit.go's order (filter, then partition).
        let config = ElasticConfig::new(2)
            .partitioning_filter("orders.*", [1])
            .partitioning_filter("refunds.>", [])
            .members(["a"]);
        assert_eq!(
            config.member_filters("a"),
            ["0.orders.*", "1.orders.*", "0.refunds.>", "1.refunds.>"]
        );
        assert_eq!(
            ElasticConfig::new(2)
                .members(["a", "b"])
                .member_filters("b"),
            ["1.>"]
        );
        // Mappings take whole partitions, each subject once.
        let mut mapped = ElasticConfig::new(3).partitioning_filter("orders.*", [1]);
        mapped.member_mappings = vec![mapping("a", &[2, 0]), mapping("b", &[1])];
        mapped.validate().unwrap();
        assert_eq!(mapped.partitions("a"), [2, 0]);
        assert_eq!(mapped.member_filters("a"), ["2.>", "0.>"]);
    }

    #[test]
    fn the_source_transforms_put_the_partition_first() {
        let config = ElasticConfig::new(10)
            .partitioning_filter("orders.*.*", [2])
            .partitioning_filter("refunds.*", [])
            .partitioning_filter("audit.*.*.>", [2, 1]);
        let destinations: Vec<(String, String)> = config
            .transforms()
            .into_iter()
            .map(|t| (t.source, t.destination))
            .collect();
        assert_eq!(
            destinations,
            [
                (
                    "orders.*.*".to_owned(),
                    "{{Partition(10,2)}}.orders.{{Wildcard(1)}}.{{Wildcard(2)}}".to_owned()
                ),
                (
                    "refunds.*".to_owned(),
                    "{{Partition(10)}}.refunds.{{Wildcard(1)}}".to_owned()
                ),
                (
                    "audit.*.*.>".to_owned(),
                    "{{Partition(10,2,1)}}.audit.{{Wildcard(1)}}.{{Wildcard(2)}}.>".to_owned()
                ),
            ]
        );
        let all = ElasticConfig::new(4).transforms();
        assert_eq!(
            (all[0].source.as_str(), all[0].destination.as_str()),
            (">", "{{Partition(4)}}.>")
        );
    }

    #[test]
    fn configurations_are_checked_as_orbit_checks_them() {
        ElasticConfig::new(4)
            .partitioning_filter("orders.*", [1])
            .partitioning_filter("all.>", [])
            .validate()
            .unwrap();
        let with_mappings = |mappings| ElasticConfig {
            member_mappings: mappings,
            ..ElasticConfig::new(2)
        };
        for bad in [
            ElasticConfig::new(0),
            ElasticConfig::new(2).partitioning_filter("", []),
            ElasticConfig::new(2).partitioning_filter("orders.new", []),
            ElasticConfig::new(2).partitioning_filter("orders.*", [2]),
            ElasticConfig::new(2).partitioning_filter("orders.*", [0]),
            ElasticConfig::new(2).partitioning_filter("orders.*.*", [1, 1]),
            ElasticConfig::new(2).partitioning_filter("orders.*", [1, 2]),
            with_mappings(vec![mapping("a", &[0])]),
            with_mappings(vec![mapping("a", &[0, 2]), mapping("b", &[1])]),
            ElasticConfig {
                members: vec!["a".into()],
                ..with_mappings(vec![mapping("a", &[0, 1])])
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
        // As orbit.go's json.Marshal writes ElasticConfig: fields in the struct's order, the
        // buffer limits, members and mappings left out when empty, and the message limit
        // under `max_buffered_msg`.
        let go = r#"{"max_members":10,"partitioning_filters":[{"filter":"orders.*","partitioning_wildcards":[1]}],"max_buffered_msg":1000,"members":["m1","m2"]}"#;
        let config: ElasticConfig = serde_json::from_str(go).unwrap();
        assert_eq!(
            config,
            ElasticConfig::new(10)
                .partitioning_filter("orders.*", [1])
                .max_buffered_msgs(1000)
                .members(["m1", "m2"])
        );
        assert_eq!(serde_json::to_string(&config).unwrap(), go);
        // A nil slice is `null` in Go; orbit.go creates a group with no filters that way,
        // and a filter with no partitioning wildcards too.
        let go = r#"{"max_members":4,"partitioning_filters":null,"max_buffered_bytes":4096,"member_mappings":[{"member":"a","partitions":[0,1]},{"member":"b","partitions":[2,3]}]}"#;
        let config = parse(go.as_bytes()).unwrap();
        assert!(config.partitioning_filters.is_empty() && config.members.is_empty());
        assert_eq!(config.max_buffered_bytes, 4096);
        assert_eq!(config.partitions("b"), [2, 3]);
        assert_eq!(
            serde_json::to_string(&config).unwrap(),
            go.replace("null", "[]")
        );
        let filter: PartitioningFilter =
            serde_json::from_str(r#"{"filter":"a.>","partitioning_wildcards":null}"#).unwrap();
        assert!(filter.partitioning_wildcards.is_empty());
        // A bad value is a typed error, never a panic.
        assert_eq!(
            parse(br#"{"max_members":"ten"}"#).unwrap_err().kind(),
            PcgErrorKind::InvalidConfig
        );
        assert_eq!(
            parse(br#"{"max_members":0}"#).unwrap_err().kind(),
            PcgErrorKind::InvalidConfig
        );
    }
}
