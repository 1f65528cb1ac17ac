//! Scheduled messages (ADR-51): a message held by a stream with `allow_message_schedules`
//! that the server publishes to a target subject of the same stream at a time (`@at`), on an
//! interval (`@every`) or on a cron schedule (optionally in a time zone).
//!
//! A [`Schedule`] is parsed and checked as the server would check it, so a pattern the
//! server would refuse is refused before anything is sent; [`ScheduledMessage`] adds the
//! target, an optional source subject whose last message is published instead, a TTL and a
//! subject rollup for the messages produced. [`Context::publish_schedule`] sends it and waits
//! for the stream's ack.
//!
//! A schedule is stopped by deleting or purging its message, or, atomically with publishing
//! something else, by [`Context::cancel_schedule`]: a message on another subject carrying
//! `Nats-Schedule-Next: purge` and `Nats-Scheduler: <schedule subject>`, optionally with
//! [`PublishMessage::expected_last_subject_sequence_for`] so it only cancels a schedule that
//! is still there.
//!
//! ```no_run
//! # async fn run(js: rnats_jetstream::Context) -> Result<(), rnats_jetstream::schedule::ScheduleError> {
//! use std::time::Duration;
//! use rnats_jetstream::schedule::{Schedule, ScheduledMessage};
//! let every_day = Schedule::cron("0 30 6 * * mon-fri")?.time_zone("Europe/Amsterdam")?;
//! let reminder = ScheduledMessage::new(every_day, "reminders.standup")
//!     .payload("stand-up in 5 minutes".into())
//!     .ttl(Duration::from_secs(3600));
//! js.publish_schedule("schedules.standup", reminder).await?;
//! # Ok(()) }
//! ```

use std::fmt;
use std::time::Duration;

use bytes::Bytes;
use rnats_core::datetime::{self, DateTime};
use rnats_core::error::Error;
use rnats_core::header::{
    HeaderMap, IntoHeaderName, IntoHeaderValue, NATS_SCHEDULE, NATS_SCHEDULE_NEXT,
    NATS_SCHEDULE_ROLLUP, NATS_SCHEDULE_SOURCE, NATS_SCHEDULE_TARGET, NATS_SCHEDULE_TIME_ZONE,
    NATS_SCHEDULE_TTL, NATS_SCHEDULER,
};
use rnats_core::subject::ToSubject;

use crate::context::{Context, PublishError, PublishErrorKind};
use crate::errors::ErrorCode;
use crate::features::Feature;
use crate::publish::{PublishAck, PublishMessage};

const NANOS_PER_SECOND: i128 = 1_000_000_000;

/// When a scheduled message is published.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// Once, at this time (whole seconds, UTC); a time in the past fires at once.
    At(DateTime),
    /// Repeatedly, this far apart (at least a second).
    Every(Duration),
    /// On a cron schedule.
    Cron(Cron),
}

/// A cron schedule: six fields (second, minute, hour, day of month, month, day of week) or
/// one of `@yearly`, `@annually`, `@monthly`, `@weekly`, `@daily`, `@midnight`, `@hourly`,
/// read in UTC unless a time zone is given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cron {
    pattern: String,
    time_zone: Option<String>,
}

impl Cron {
    /// The pattern as sent.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// The time zone, if one was given.
    pub fn time_zone(&self) -> Option<&str> {
        self.time_zone.as_deref()
    }
}

impl Schedule {
    /// Once at `time`. Sub-second parts are dropped: the server reads whole seconds.
    pub fn at(time: DateTime) -> Schedule {
        let whole_seconds =
            datetime::to_nanos(&time).div_euclid(NANOS_PER_SECOND) * NANOS_PER_SECOND;
        Schedule::At(datetime::from_nanos(whole_seconds).unwrap_or(time))
    }

    /// Every `interval`, which must be at least a second (ADR-51).
    pub fn every(interval: Duration) -> Result<Schedule, ScheduleError> {
        if interval < Duration::from_secs(1) {
            return Err(invalid(
                ScheduleErrorKind::InvalidPattern,
                format!("@every needs at least 1s, not {interval:?}"),
            ));
        }
        Ok(Schedule::Every(interval))
    }

    /// A cron schedule, checked field by field as nats-server reads it.
    pub fn cron<T: Into<String>>(pattern: T) -> Result<Schedule, ScheduleError> {
        let pattern = pattern.into();
        check_cron(&pattern)?;
        Ok(Schedule::Cron(Cron {
            pattern,
            time_zone: None,
        }))
    }

    /// Reads a cron schedule in `zone`, an IANA name such as `America/New_York` (or `UTC`,
    /// or `Local` for the server's zone); only cron schedules take one (nats-server 2.14 or
    /// later). The server refuses a name its time zone database lacks.
    pub fn time_zone<T: Into<String>>(self, zone: T) -> Result<Schedule, ScheduleError> {
        let zone = zone.into();
        let Schedule::Cron(cron) = self else {
            return Err(invalid(
                ScheduleErrorKind::InvalidTimeZone,
                "only cron schedules take a time zone",
            ));
        };
        // What Go's time.LoadLocation can resolve: names, not offsets like +02:00.
        let plausible = !zone.is_empty()
            && zone.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            && zone
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '_' | '-' | '+'));
        if !plausible || zone.split('/').any(|part| part.is_empty() || part == "..") {
            return Err(invalid(
                ScheduleErrorKind::InvalidTimeZone,
                format!("{zone:?} is not a time zone name"),
            ));
        }
        Ok(Schedule::Cron(Cron {
            time_zone: Some(zone),
            ..cron
        }))
    }

    /// The `Nats-Schedule` header's value.
    pub fn pattern(&self) -> String {
        match self {
            Schedule::At(time) => {
                let text = datetime::format_rfc3339(time).unwrap_or_else(|_| {
                    (datetime::to_nanos(time).div_euclid(NANOS_PER_SECOND)).to_string()
                });
                format!("@at {text}")
            }
            Schedule::Every(interval) => format!("@every {}", go_duration(*interval)),
            Schedule::Cron(cron) => cron.pattern.clone(),
        }
    }
}

/// A duration as Go's `time.ParseDuration` reads it.
fn go_duration(duration: Duration) -> String {
    if duration.subsec_nanos() == 0 {
        format!("{}s", duration.as_secs())
    } else {
        format!("{}ns", duration.as_nanos())
    }
}

/// Checks a cron pattern the way nats-server's parser does (`server/cron.go`).
fn check_cron(pattern: &str) -> Result<(), ScheduleError> {
    const PREDEFINED: [&str; 7] = [
        "@yearly",
        "@annually",
        "@monthly",
        "@weekly",
        "@daily",
        "@midnight",
        "@hourly",
    ];
    if PREDEFINED.contains(&pattern) {
        return Ok(());
    }
    let fields: Vec<&str> = pattern.split_whitespace().collect();
    if fields.len() != 6 {
        return Err(invalid(
            ScheduleErrorKind::InvalidPattern,
            format!(
                "a cron pattern has 6 fields, {pattern:?} has {}",
                fields.len()
            ),
        ));
    }
    const MONTHS: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    const DAYS: [&str; 7] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];
    let bounds: [(u32, u32, &[&str]); 6] = [
        (0, 59, &[]),
        (0, 59, &[]),
        (0, 23, &[]),
        (1, 31, &[]),
        (1, 12, &MONTHS),
        (0, 6, &DAYS),
    ];
    for (field, (min, max, names)) in fields.iter().zip(bounds) {
        for range in field.split(',').filter(|r| !r.is_empty()) {
            check_range(range, min, max, names).map_err(|why| {
                invalid(
                    ScheduleErrorKind::InvalidPattern,
                    format!("{pattern:?}: {range:?} {why}"),
                )
            })?;
        }
    }
    Ok(())
}

/// One `start[-end][/step]` (or `*`, `?`) of a cron field.
fn check_range(range: &str, min: u32, max: u32, names: &[&str]) -> Result<(), String> {
    let mut parts = range.split('/');
    let span = parts.next().unwrap_or_default();
    let step = parts.next();
    if parts.next().is_some() {
        return Err("has more than one '/'".into());
    }
    let (start, end) = if span == "*" || span == "?" {
        (min, max)
    } else {
        let mut ends = span.split('-');
        let start = number(ends.next().unwrap_or_default(), names)?;
        let end = match (ends.next(), ends.next()) {
            (None, _) => {
                if step.is_some() {
                    max
                } else {
                    start
                }
            }
            (Some(end), None) => number(end, names)?,
            _ => return Err("has more than one '-'".into()),
        };
        (start, end)
    };
    if let Some(step) = step
        && number(step, &[])? == 0
    {
        return Err("has a zero step".into());
    }
    if start < min || end > max {
        return Err(format!("is outside {min}-{max}"));
    }
    if start > end {
        return Err("starts after it ends".into());
    }
    Ok(())
}

fn number(text: &str, names: &[&str]) -> Result<u32, String> {
    let lower = text.to_ascii_lowercase();
    if let Some(index) = names.iter().position(|name| *name == lower) {
        // Months count from 1, weekdays from 0 (Sunday).
        let offset = u32::from(names.len() == 12);
        return Ok(index as u32 + offset);
    }
    text.parse::<u32>()
        .map_err(|_| format!("has {text:?}, not a number"))
}

/// A message the stream publishes to `target` on a [`Schedule`].
#[derive(Clone, Debug)]
pub struct ScheduledMessage {
    schedule: Schedule,
    target: String,
    source: Option<String>,
    ttl: Option<Ttl>,
    rollup: bool,
    payload: Bytes,
    headers: HeaderMap,
}

/// The TTL of the messages a schedule publishes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ttl {
    After(Duration),
    Never,
}

impl ScheduledMessage {
    /// A message published to `target` (a subject of the same stream, no wildcards) on
    /// `schedule`.
    pub fn new<T: Into<String>>(schedule: Schedule, target: T) -> ScheduledMessage {
        ScheduledMessage {
            schedule,
            target: target.into(),
            source: None,
            ttl: None,
            rollup: false,
            payload: Bytes::new(),
            headers: HeaderMap::new(),
        }
    }

    /// The body published each time.
    pub fn payload(mut self, payload: Bytes) -> ScheduledMessage {
        self.payload = payload;
        self
    }

    /// A header copied into every message published.
    pub fn header<N: IntoHeaderName, V: IntoHeaderValue>(mut self, name: N, value: V) -> Self {
        self.headers.insert(name, value);
        self
    }

    /// Publishes the last message on `subject` (no wildcards) instead of this one's body,
    /// which stays the fallback while `subject` is empty: sampling (`Nats-Schedule-Source`).
    pub fn source<T: Into<String>>(mut self, subject: T) -> ScheduledMessage {
        self.source = Some(subject.into());
        self
    }

    /// A TTL for each published message, at least a second (the stream needs
    /// `allow_message_ttl`).
    pub fn ttl(mut self, ttl: Duration) -> ScheduledMessage {
        self.ttl = Some(Ttl::After(ttl));
        self
    }

    /// Keeps each published message past the stream's `max_age` (`Nats-Schedule-TTL: never`,
    /// nats.go's `WithScheduleTTLNever`; the stream needs `allow_message_ttl`). Replaces a
    /// [`ttl`](Self::ttl).
    pub fn ttl_never(mut self) -> ScheduledMessage {
        self.ttl = Some(Ttl::Never);
        self
    }

    /// Makes each published message roll up its target subject (`Nats-Rollup: sub`), so the
    /// target keeps only the latest (nats-server 2.14 or later).
    pub fn rollup_subject(mut self) -> ScheduledMessage {
        self.rollup = true;
        self
    }

    /// The schedule.
    pub fn schedule(&self) -> &Schedule {
        &self.schedule
    }

    /// Checks the message as the server would for a schedule held on `subject`, and builds
    /// it.
    pub fn into_publish(self, subject: &str) -> Result<PublishMessage, ScheduleError> {
        if !is_publish_subject(&self.target) || self.target == subject {
            return Err(invalid(
                ScheduleErrorKind::InvalidTarget,
                format!(
                    "target {:?} must be a subject without wildcards, other than the schedule's",
                    self.target
                ),
            ));
        }
        if let Some(source) = &self.source
            && (!is_publish_subject(source) || source == &self.target || source == subject)
        {
            return Err(invalid(
                ScheduleErrorKind::InvalidSource,
                format!(
                    "source {source:?} must be a subject without wildcards, other than the target and the schedule's"
                ),
            ));
        }
        if let Some(Ttl::After(ttl)) = self.ttl
            && ttl < Duration::from_secs(1)
        {
            return Err(invalid(
                ScheduleErrorKind::InvalidTtl,
                format!("a TTL is at least 1s, not {ttl:?}"),
            ));
        }
        let mut headers = self.headers;
        headers.insert(NATS_SCHEDULE, self.schedule.pattern());
        headers.insert(NATS_SCHEDULE_TARGET, self.target.as_str());
        if let Schedule::Cron(Cron {
            time_zone: Some(zone),
            ..
        }) = &self.schedule
        {
            headers.insert(NATS_SCHEDULE_TIME_ZONE, zone.as_str());
        }
        if let Some(source) = &self.source {
            headers.insert(NATS_SCHEDULE_SOURCE, source.as_str());
        }
        match self.ttl {
            Some(Ttl::After(ttl)) => headers.insert(NATS_SCHEDULE_TTL, go_duration(ttl)),
            Some(Ttl::Never) => headers.insert(NATS_SCHEDULE_TTL, "never"),
            None => {}
        }
        if self.rollup {
            headers.insert(NATS_SCHEDULE_ROLLUP, "sub");
        }
        Ok(PublishMessage::build()
            .payload(self.payload)
            .headers(headers))
    }

    /// The features the server needs for this message.
    fn features(&self) -> Vec<Feature> {
        let mut needed = vec![Feature::MessageSchedules];
        let zoned = matches!(
            &self.schedule,
            Schedule::Cron(Cron {
                time_zone: Some(_),
                ..
            })
        );
        if zoned {
            needed.push(Feature::ScheduleTimeZones);
        }
        if self.rollup {
            needed.push(Feature::ScheduleRollup);
        }
        if self.ttl.is_some() {
            needed.push(Feature::MessageTtl);
        }
        needed
    }
}

/// Whether `subject` can be published to: tokens not empty, no wildcards, no whitespace.
fn is_publish_subject(subject: &str) -> bool {
    !subject.is_empty()
        && subject.split('.').all(|token| {
            !token.is_empty()
                && token != "*"
                && token != ">"
                && !token.chars().any(char::is_whitespace)
        })
}

impl Context {
    /// Publishes the schedule `message` on `subject` (one schedule per subject: a new one
    /// replaces the old) and waits for the stream's ack. An rnats extension.
    pub async fn publish_schedule<S: ToSubject>(
        &self,
        subject: S,
        message: ScheduledMessage,
    ) -> Result<PublishAck, ScheduleError> {
        self.require_capability(message.features())
            .map_err(|e| ScheduleError::with_source(ScheduleErrorKind::Unsupported, e))?;
        let subject = subject.subject_text();
        let publish = message.into_publish(&subject)?;
        self.send_publish(&*subject, publish)
            .await
            .map_err(publish_failure)?
            .await
            .map_err(publish_failure)
    }

    /// Stops the schedule held on `schedule_subject` and stores `message` on `subject` in one
    /// step (ADR-51): publishing to the schedule's target sends its message early, any other
    /// subject records the cancellation. Add
    /// [`PublishMessage::expected_last_subject_sequence_for`]`(schedule_subject, seq)` to
    /// cancel only the schedule stored at `seq`. An rnats extension.
    pub async fn cancel_schedule<S: ToSubject>(
        &self,
        subject: S,
        schedule_subject: &str,
        message: PublishMessage,
    ) -> Result<PublishAck, ScheduleError> {
        self.require_capability([Feature::MessageSchedules])
            .map_err(|e| ScheduleError::with_source(ScheduleErrorKind::Unsupported, e))?;
        let subject = subject.subject_text();
        if !is_publish_subject(schedule_subject) || schedule_subject == subject {
            return Err(invalid(
                ScheduleErrorKind::InvalidScheduler,
                "the schedule's subject must be a subject other than the one published to",
            ));
        }
        let message = message
            .header(NATS_SCHEDULE_NEXT, "purge")
            .header(NATS_SCHEDULER, schedule_subject);
        self.send_publish(&*subject, message)
            .await
            .map_err(publish_failure)?
            .await
            .map_err(publish_failure)
    }
}

/// The kinds of [`ScheduleError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ScheduleErrorKind {
    /// The schedule pattern is not one the server reads (10189, or refused before sending).
    InvalidPattern,
    /// The time zone is not a name, or not one the server knows (10223).
    InvalidTimeZone,
    /// The target is not a subject of the stream, or is the schedule's own (10190).
    InvalidTarget,
    /// The source subject is not usable (10203).
    InvalidSource,
    /// The TTL is under a second (10191), or the stream has no per-message TTLs (10166).
    InvalidTtl,
    /// The rollup is not `sub` (10192).
    InvalidRollup,
    /// A cancellation names no usable schedule subject (10212).
    InvalidScheduler,
    /// The stream does not allow schedules (10188).
    Disabled,
    /// An expectation failed (for a cancellation: the schedule is gone or was replaced).
    ExpectationFailed,
    /// No stream stores the subject.
    StreamNotFound,
    /// The connected server is too old for this.
    Unsupported,
    /// No ack within the timeout.
    TimedOut,
    /// Anything else; the source says what.
    Other,
}

impl fmt::Display for ScheduleErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ScheduleErrorKind::InvalidPattern => "invalid schedule pattern",
            ScheduleErrorKind::InvalidTimeZone => "invalid schedule time zone",
            ScheduleErrorKind::InvalidTarget => "invalid schedule target",
            ScheduleErrorKind::InvalidSource => "invalid schedule source",
            ScheduleErrorKind::InvalidTtl => "invalid schedule TTL",
            ScheduleErrorKind::InvalidRollup => "invalid schedule rollup",
            ScheduleErrorKind::InvalidScheduler => "invalid scheduler subject",
            ScheduleErrorKind::Disabled => "schedules are disabled on the stream",
            ScheduleErrorKind::ExpectationFailed => "an expectation failed",
            ScheduleErrorKind::StreamNotFound => "no stream found for the subject",
            ScheduleErrorKind::Unsupported => "the server does not support this",
            ScheduleErrorKind::TimedOut => "timed out",
            ScheduleErrorKind::Other => "schedule publish failed",
        })
    }
}

/// Why publishing or cancelling a schedule failed; a server refusal has the
/// [`crate::Error`] as its source.
pub type ScheduleError = Error<ScheduleErrorKind>;

fn invalid(kind: ScheduleErrorKind, why: impl Into<String>) -> ScheduleError {
    ScheduleError::with_source(kind, why.into())
}

fn publish_failure(error: PublishError) -> ScheduleError {
    let code = error
        .downcast_source::<crate::Error>()
        .map(crate::Error::error_code);
    let kind = match (error.kind(), code) {
        (_, Some(ErrorCode::MESSAGE_SCHEDULES_PATTERN_INVALID)) => {
            ScheduleErrorKind::InvalidPattern
        }
        (_, Some(ErrorCode::MESSAGE_SCHEDULES_TIME_ZONE_INVALID)) => {
            ScheduleErrorKind::InvalidTimeZone
        }
        (_, Some(ErrorCode::MESSAGE_SCHEDULES_TARGET_INVALID)) => ScheduleErrorKind::InvalidTarget,
        (_, Some(ErrorCode::MESSAGE_SCHEDULES_SOURCE_INVALID)) => ScheduleErrorKind::InvalidSource,
        (_, Some(ErrorCode::MESSAGE_SCHEDULES_TTL_INVALID | ErrorCode::MESSAGE_TTL_DISABLED)) => {
            ScheduleErrorKind::InvalidTtl
        }
        (_, Some(ErrorCode::MESSAGE_SCHEDULES_ROLLUP_INVALID)) => ScheduleErrorKind::InvalidRollup,
        (_, Some(ErrorCode::MESSAGE_SCHEDULES_SCHEDULER_INVALID)) => {
            ScheduleErrorKind::InvalidScheduler
        }
        (_, Some(ErrorCode::MESSAGE_SCHEDULES_DISABLED)) => ScheduleErrorKind::Disabled,
        (
            _,
            Some(
                ErrorCode::STREAM_WRONG_LAST_SEQUENCE
                | ErrorCode::STREAM_WRONG_LAST_SEQUENCE_CONSTANT
                | ErrorCode::STREAM_EXPECTED_LAST_SEQ_PER_SUBJECT_INVALID,
            ),
        ) => ScheduleErrorKind::ExpectationFailed,
        (PublishErrorKind::WrongLastSequence, _) => ScheduleErrorKind::ExpectationFailed,
        (PublishErrorKind::StreamNotFound, _) => ScheduleErrorKind::StreamNotFound,
        (PublishErrorKind::TimedOut, _) => ScheduleErrorKind::TimedOut,
        _ => ScheduleErrorKind::Other,
    };
    ScheduleError::with_source(kind, error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_are_written_as_the_server_reads_them() {
        let at = Schedule::at(datetime::parse_rfc3339("2030-01-02T03:04:05.678+02:00").unwrap());
        assert_eq!(at.pattern(), "@at 2030-01-02T01:04:05Z");
        let every = Schedule::every(Duration::from_secs(90)).unwrap();
        assert_eq!(every.pattern(), "@every 90s");
        let every = Schedule::every(Duration::from_millis(1500)).unwrap();
        assert_eq!(every.pattern(), "@every 1500000000ns");
        assert_eq!(
            Schedule::every(Duration::from_millis(999))
                .unwrap_err()
                .kind(),
            ScheduleErrorKind::InvalidPattern
        );
    }

    #[test]
    fn cron_patterns_are_checked_like_the_servers_parser() {
        for good in [
            "@hourly",
            "@annually",
            "0 30 6 * * mon-fri",
            "*/5 * * * * *",
            "0 0 0-23/2 1,15 jan-mar ?",
            "0 0 12 * * SUN",
            "5/10 * * * * *",
        ] {
            assert!(Schedule::cron(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "@every",
            "* * * * *",
            "* * * * * * *",
            "60 * * * * *",
            "* * 24 * * *",
            "* * * 0 * *",
            "* * * * 13 *",
            "* * * * * 7",
            "* * * * * funday",
            "5-1 * * * * *",
            "*/0 * * * * *",
            "1-2-3 * * * * *",
            "1/2/3 * * * * *",
            "-1 * * * * *",
        ] {
            let err = Schedule::cron(bad).unwrap_err();
            assert_eq!(err.kind(), ScheduleErrorKind::InvalidPattern, "{bad}");
        }
    }

    #[test]
    fn time_zones_only_go_with_cron() {
        let zoned = Schedule::cron("@daily")
            .unwrap()
            .time_zone("America/New_York")
            .unwrap();
        let Schedule::Cron(cron) = &zoned else {
            panic!("not cron")
        };
        assert_eq!(cron.time_zone(), Some("America/New_York"));
        for bad in ["", "+02:00", "../etc", "Europe//Paris"] {
            let err = Schedule::cron("@daily")
                .unwrap()
                .time_zone(bad)
                .unwrap_err();
            assert_eq!(err.kind(), ScheduleErrorKind::InvalidTimeZone, "{bad:?}");
        }
        let err = Schedule::every(Duration::from_secs(5))
            .unwrap()
            .time_zone("UTC")
            .unwrap_err();
        assert_eq!(err.kind(), ScheduleErrorKind::InvalidTimeZone);
    }

    #[test]
    fn scheduled_messages_carry_their_headers_and_are_checked() {
        let schedule = Schedule::cron("@hourly").unwrap().time_zone("UTC").unwrap();
        let message = ScheduledMessage::new(schedule.clone(), "orders")
            .source("sensors.last")
            .ttl(Duration::from_secs(300))
            .rollup_subject()
            .header("X-Kind", "report")
            .into_publish("schedules.hourly")
            .unwrap();
        let headers = message.headers.unwrap();
        let get = |name: &str| headers.get(name).unwrap().as_str().to_owned();
        assert_eq!(get("Nats-Schedule"), "@hourly");
        assert_eq!(get("Nats-Schedule-Target"), "orders");
        assert_eq!(get("Nats-Schedule-Source"), "sensors.last");
        assert_eq!(get("Nats-Schedule-TTL"), "300s");
        assert_eq!(get("Nats-Schedule-Rollup"), "sub");
        assert_eq!(get("Nats-Schedule-Time-Zone"), "UTC");
        assert_eq!(get("X-Kind"), "report");

        let kind = |message: ScheduledMessage| message.into_publish("s.a").unwrap_err().kind();
        let plain = || ScheduledMessage::new(schedule.clone(), "orders");
        assert_eq!(
            kind(ScheduledMessage::new(schedule.clone(), "orders.*")),
            ScheduleErrorKind::InvalidTarget
        );
        assert_eq!(
            kind(ScheduledMessage::new(schedule.clone(), "s.a")),
            ScheduleErrorKind::InvalidTarget
        );
        assert_eq!(
            kind(plain().source("orders")),
            ScheduleErrorKind::InvalidSource
        );
        assert_eq!(
            kind(plain().source("a.>")),
            ScheduleErrorKind::InvalidSource
        );
        assert_eq!(
            kind(plain().ttl(Duration::from_millis(10))),
            ScheduleErrorKind::InvalidTtl
        );
    }
}
