//! Names of the headers the NATS server and JetStream read or write, and the fixed values
//! some of them take.
//!
//! The names are spelled exactly as the server spells them; lookups are case-sensitive.

use super::name::HeaderName;

/// Stream a republished or directly fetched message came from.
pub const NATS_STREAM: HeaderName = HeaderName::from_static("Nats-Stream");
/// The message's sequence number in its stream.
pub const NATS_SEQUENCE: HeaderName = HeaderName::from_static("Nats-Sequence");
/// When the stream stored the message (RFC 3339).
pub const NATS_TIME_STAMP: HeaderName = HeaderName::from_static("Nats-Time-Stamp");
/// The subject the message was originally published to.
pub const NATS_SUBJECT: HeaderName = HeaderName::from_static("Nats-Subject");
/// Publisher-chosen id the stream uses to drop duplicates within its window.
pub const NATS_MESSAGE_ID: HeaderName = HeaderName::from_static("Nats-Msg-Id");
/// On a consumer's idle heartbeat: the stream sequence it last delivered.
pub const NATS_LAST_STREAM: HeaderName = HeaderName::from_static("Nats-Last-Stream");
/// On a consumer's idle heartbeat: the consumer sequence last delivered.
pub const NATS_LAST_CONSUMER: HeaderName = HeaderName::from_static("Nats-Last-Consumer");
/// The sequence of the previous message on the same subject, on republished messages.
pub const NATS_LAST_SEQUENCE: HeaderName = HeaderName::from_static("Nats-Last-Sequence");
/// Store only if the subject's last sequence is this value.
pub const NATS_EXPECTED_LAST_SUBJECT_SEQUENCE: HeaderName =
    HeaderName::from_static("Nats-Expected-Last-Subject-Sequence");
/// Store only if the stream's last message carried this message id.
pub const NATS_EXPECTED_LAST_MESSAGE_ID: HeaderName =
    HeaderName::from_static("Nats-Expected-Last-Msg-Id");
/// Store only if the stream's last sequence is this value.
pub const NATS_EXPECTED_LAST_SEQUENCE: HeaderName =
    HeaderName::from_static("Nats-Expected-Last-Sequence");
/// Store only if the subject belongs to this stream.
pub const NATS_EXPECTED_STREAM: HeaderName = HeaderName::from_static("Nats-Expected-Stream");
/// How long the stream keeps this one message, e.g. `60s` or `never` (ADR-43).
pub const NATS_MESSAGE_TTL: HeaderName = HeaderName::from_static("Nats-TTL");
/// On a delete marker: why the server placed it, e.g. `MaxAge` or `Purge` (ADR-43).
pub const NATS_MARKER_REASON: HeaderName = HeaderName::from_static("Nats-Marker-Reason");
/// Replace earlier messages: `sub` for the message's subject, `all` for the whole stream.
pub const NATS_ROLLUP: HeaderName = HeaderName::from_static("Nats-Rollup");
/// When a scheduled message fires: a cron expression, `@every <duration>` or a predefined
/// expression such as [`NATS_SCHEDULE_DAILY`] (ADR-51).
pub const NATS_SCHEDULE: HeaderName = HeaderName::from_static("Nats-Schedule");
/// The subject a schedule publishes to when it fires.
pub const NATS_SCHEDULE_TARGET: HeaderName = HeaderName::from_static("Nats-Schedule-Target");
/// The per-message TTL given to messages a schedule produces.
pub const NATS_SCHEDULE_TTL: HeaderName = HeaderName::from_static("Nats-Schedule-TTL");
/// A subject whose latest message a schedule copies when it fires.
pub const NATS_SCHEDULE_SOURCE: HeaderName = HeaderName::from_static("Nats-Schedule-Source");
/// The IANA time zone a cron schedule is read in, e.g. `Europe/Amsterdam`.
pub const NATS_SCHEDULE_TIME_ZONE: HeaderName = HeaderName::from_static("Nats-Schedule-Time-Zone");
/// Roll up the schedule's target subject when it fires; see [`NATS_SCHEDULE_ROLLUP_SUB`].
pub const NATS_SCHEDULE_ROLLUP: HeaderName = HeaderName::from_static("Nats-Schedule-Rollup");
/// On a message a schedule produced: the subject of the schedule.
pub const NATS_SCHEDULER: HeaderName = HeaderName::from_static("Nats-Scheduler");
/// On a message a schedule produced: when it fires next, or `purge` if it will not.
pub const NATS_SCHEDULE_NEXT: HeaderName = HeaderName::from_static("Nats-Schedule-Next");
/// Atomic batch publish: the batch's id, at most 64 characters.
pub const NATS_BATCH_ID: HeaderName = HeaderName::from_static("Nats-Batch-Id");
/// Atomic batch publish: the message's position in its batch, from 1.
pub const NATS_BATCH_SEQUENCE: HeaderName = HeaderName::from_static("Nats-Batch-Sequence");
/// Atomic batch publish: ends the batch; see [`NATS_BATCH_COMMIT_FINAL`] and
/// [`NATS_BATCH_COMMIT_EOB`].
pub const NATS_BATCH_COMMIT: HeaderName = HeaderName::from_static("Nats-Batch-Commit");
/// The lowest JetStream API level the message needs; an older server refuses it.
pub const NATS_REQUIRED_API_LEVEL: HeaderName = HeaderName::from_static("Nats-Required-Api-Level");
/// The pinned client id of a priority-group pull consumer (ADR-42).
pub const NATS_PIN_ID: HeaderName = HeaderName::from_static("Nats-Pin-Id");

/// [`NATS_BATCH_COMMIT`] value: store this last message and commit the batch.
pub const NATS_BATCH_COMMIT_FINAL: &str = "1";
/// [`NATS_BATCH_COMMIT`] value: commit the batch without storing this message.
pub const NATS_BATCH_COMMIT_EOB: &str = "eob";
/// [`NATS_SCHEDULE_ROLLUP`] value: roll up the target subject (the only one defined).
pub const NATS_SCHEDULE_ROLLUP_SUB: &str = "sub";
/// [`NATS_SCHEDULE`] value: every year, at midnight on 1 January.
pub const NATS_SCHEDULE_YEARLY: &str = "@yearly";
/// [`NATS_SCHEDULE`] value: every month, at midnight on its first day.
pub const NATS_SCHEDULE_MONTHLY: &str = "@monthly";
/// [`NATS_SCHEDULE`] value: every week, at midnight between Saturday and Sunday.
pub const NATS_SCHEDULE_WEEKLY: &str = "@weekly";
/// [`NATS_SCHEDULE`] value: every day, at midnight.
pub const NATS_SCHEDULE_DAILY: &str = "@daily";
/// [`NATS_SCHEDULE`] value: every hour, on the hour.
pub const NATS_SCHEDULE_HOURLY: &str = "@hourly";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::headers::HeaderMap;

    #[test]
    fn names_are_the_servers_spelling() {
        let names = [
            (NATS_STREAM, "Nats-Stream"),
            (NATS_SEQUENCE, "Nats-Sequence"),
            (NATS_TIME_STAMP, "Nats-Time-Stamp"),
            (NATS_SUBJECT, "Nats-Subject"),
            (NATS_MESSAGE_ID, "Nats-Msg-Id"),
            (NATS_LAST_STREAM, "Nats-Last-Stream"),
            (NATS_LAST_CONSUMER, "Nats-Last-Consumer"),
            (NATS_LAST_SEQUENCE, "Nats-Last-Sequence"),
            (
                NATS_EXPECTED_LAST_SUBJECT_SEQUENCE,
                "Nats-Expected-Last-Subject-Sequence",
            ),
            (NATS_EXPECTED_LAST_MESSAGE_ID, "Nats-Expected-Last-Msg-Id"),
            (NATS_EXPECTED_LAST_SEQUENCE, "Nats-Expected-Last-Sequence"),
            (NATS_EXPECTED_STREAM, "Nats-Expected-Stream"),
            (NATS_MESSAGE_TTL, "Nats-TTL"),
            (NATS_MARKER_REASON, "Nats-Marker-Reason"),
            (NATS_ROLLUP, "Nats-Rollup"),
            (NATS_SCHEDULE, "Nats-Schedule"),
            (NATS_SCHEDULE_TARGET, "Nats-Schedule-Target"),
            (NATS_SCHEDULE_TTL, "Nats-Schedule-TTL"),
            (NATS_SCHEDULE_SOURCE, "Nats-Schedule-Source"),
            (NATS_SCHEDULE_TIME_ZONE, "Nats-Schedule-Time-Zone"),
            (NATS_SCHEDULE_ROLLUP, "Nats-Schedule-Rollup"),
            (NATS_SCHEDULER, "Nats-Scheduler"),
            (NATS_SCHEDULE_NEXT, "Nats-Schedule-Next"),
            (NATS_BATCH_ID, "Nats-Batch-Id"),
            (NATS_BATCH_SEQUENCE, "Nats-Batch-Sequence"),
            (NATS_BATCH_COMMIT, "Nats-Batch-Commit"),
            (NATS_REQUIRED_API_LEVEL, "Nats-Required-Api-Level"),
            (NATS_PIN_ID, "Nats-Pin-Id"),
        ];
        for (name, text) in names {
            assert_eq!(name.as_str(), text);
            assert_eq!(text.parse::<HeaderName>().unwrap(), name);
        }
    }

    #[test]
    fn constants_work_as_map_keys() {
        let mut headers = HeaderMap::new();
        headers.insert(NATS_MESSAGE_ID, "x");
        headers.insert(NATS_EXPECTED_LAST_SEQUENCE, 7u64);
        headers.insert(NATS_BATCH_COMMIT, NATS_BATCH_COMMIT_EOB);
        assert_eq!(headers.check(), Ok(()));
        assert_eq!(headers.get(NATS_MESSAGE_ID).unwrap(), "x");
        assert_eq!(headers.get("Nats-Msg-Id").unwrap().as_str(), "x");
        assert_eq!(headers.get(&NATS_EXPECTED_LAST_SEQUENCE).unwrap(), "7");
        assert_eq!(headers.get(NATS_BATCH_COMMIT).unwrap(), "eob");
    }
}
