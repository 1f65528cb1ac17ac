//! `rnats pub --schedule-*`: natscli's flags for scheduled messages (ADR-51), turned into
//! the library's typed [`Schedule`] before anything is sent, and `--cancel-schedule`.

use std::time::Duration;

use bytes::Bytes;
use clap::Args;
use rnats::HeaderMap;
use rnats::jetstream::publish::PublishMessage;
use rnats::jetstream::schedule::{Schedule, ScheduledMessage};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::conn::parse_duration;
use crate::error::CliError;

/// Scheduling flags; any of them makes `pub` a JetStream publish.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Schedules (ADR-51; imply --jetstream)")]
pub(crate) struct ScheduleFlags {
    /// Schedule the message this long from now (sent as an @at time).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    schedule_after: Option<Duration>,
    /// Schedule the message at an RFC 3339 time, e.g. 2026-12-24T18:00:00Z.
    #[arg(long, value_name = "TIME")]
    schedule_at: Option<String>,
    /// A cron schedule: six fields (seconds first) or @hourly, @daily, ...
    #[arg(long, value_name = "CRON")]
    schedule_cron: Option<String>,
    /// The time zone --schedule-cron is read in, e.g. Europe/Amsterdam (nats-server 2.14).
    #[arg(long, value_name = "ZONE", requires = "schedule_cron")]
    schedule_time_zone: Option<String>,
    /// Subject the message is published to when the schedule fires.
    #[arg(long, value_name = "SUBJECT")]
    schedule_dest: Option<String>,
    /// Fire repeatedly, this far apart (at least 1s).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    schedule_every: Option<Duration>,
    /// Publish the latest message of this subject when firing, instead of this body.
    #[arg(long, value_name = "SUBJECT")]
    schedule_source: Option<String>,
    /// How long the messages the schedule publishes live in the stream.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    schedule_ttl: Option<Duration>,
    /// Roll up the target: each fired message replaces the one before (nats-server 2.14).
    #[arg(long)]
    schedule_rollup: bool,
    /// Cancel the schedule held on this subject, storing this message in the same step.
    #[arg(long, value_name = "SCHEDULE_SUBJECT", conflicts_with_all = SCHEDULE_FLAGS)]
    cancel_schedule: Option<String>,
    /// Cancel only if the schedule is still the one stored at this sequence.
    #[arg(long, value_name = "SEQ", requires = "cancel_schedule")]
    cancel_schedule_seq: Option<u64>,
}

/// The flags that make a schedule (`--cancel-schedule` goes with none of them).
const SCHEDULE_FLAGS: [&str; 8] = [
    "schedule_after",
    "schedule_at",
    "schedule_cron",
    "schedule_dest",
    "schedule_every",
    "schedule_source",
    "schedule_ttl",
    "schedule_rollup",
];

/// What the flags ask of each message (`None` for a run without schedule flags).
#[derive(Debug, Clone)]
pub(crate) enum Scheduling {
    /// An ordinary message.
    None,
    /// A schedule firing to `target`.
    Schedule {
        /// When it fires.
        schedule: Schedule,
        /// The flags, for the rest of the message.
        flags: Box<ScheduleFlags>,
    },
    /// A cancellation of the schedule on `subject`.
    Cancel {
        /// The schedule's subject.
        subject: String,
        /// The schedule's sequence, if it must still be that one.
        sequence: Option<u64>,
    },
}

impl ScheduleFlags {
    /// Checks the flags and reads them, before anything is sent.
    pub(crate) fn scheduling(&self) -> Result<Scheduling, CliError> {
        if let Some(subject) = &self.cancel_schedule {
            return Ok(Scheduling::Cancel {
                subject: subject.clone(),
                sequence: self.cancel_schedule_seq,
            });
        }
        let any = self.schedule_after.is_some()
            || self.schedule_at.is_some()
            || self.schedule_cron.is_some()
            || self.schedule_dest.is_some()
            || self.schedule_every.is_some()
            || self.schedule_source.is_some()
            || self.schedule_ttl.is_some()
            || self.schedule_rollup;
        if !any {
            return Ok(Scheduling::None);
        }
        if self.schedule_dest.is_none() {
            return Err(CliError::Usage(
                "--schedule-dest is required when setting schedule properties",
            ));
        }
        Ok(Scheduling::Schedule {
            schedule: self.schedule()?,
            flags: Box::new(self.clone()),
        })
    }

    /// The one schedule the flags give.
    fn schedule(&self) -> Result<Schedule, CliError> {
        let invalid = CliError::js("invalid schedule");
        match (
            &self.schedule_at,
            self.schedule_after,
            self.schedule_every,
            &self.schedule_cron,
        ) {
            (Some(at), None, None, None) => {
                let time =
                    OffsetDateTime::parse(at, &Rfc3339).map_err(|e| CliError::InvalidArgument {
                        what: "--schedule-at",
                        given: at.clone(),
                        reason: format!("not an RFC 3339 time ({e})"),
                    })?;
                Ok(Schedule::at(time))
            }
            (None, Some(after), None, None) => {
                if after.is_zero() {
                    return Err(CliError::Usage("--schedule-after must be greater than 0"));
                }
                Ok(Schedule::at(crate::parse::time_ahead(
                    "--schedule-after",
                    after,
                )?))
            }
            (None, None, Some(every), None) => Schedule::every(every).map_err(invalid),
            (None, None, None, Some(cron)) => {
                let schedule =
                    Schedule::cron(cron.clone()).map_err(CliError::js("invalid schedule"))?;
                match &self.schedule_time_zone {
                    Some(zone) => schedule.time_zone(zone.clone()).map_err(invalid),
                    None => Ok(schedule),
                }
            }
            (None, None, None, None) => Err(CliError::Usage(
                "a schedule needs one of --schedule-at, --schedule-after, --schedule-every \
                 or --schedule-cron",
            )),
            _ => Err(CliError::Usage(
                "--schedule-at, --schedule-after, --schedule-every and --schedule-cron \
                 are mutually exclusive",
            )),
        }
    }

    /// The scheduled message with `payload` and `headers`.
    pub(crate) fn message(
        &self,
        schedule: Schedule,
        payload: Bytes,
        headers: Option<&HeaderMap>,
    ) -> ScheduledMessage {
        let target = self.schedule_dest.clone().unwrap_or_default();
        let mut message = ScheduledMessage::new(schedule, target).payload(payload);
        for (name, values) in headers.into_iter().flat_map(HeaderMap::iter) {
            for value in values {
                message = message.header(name, value);
            }
        }
        if let Some(source) = &self.schedule_source {
            message = message.source(source.clone());
        }
        if let Some(ttl) = self.schedule_ttl {
            message = message.ttl(ttl);
        }
        if self.schedule_rollup {
            message = message.rollup_subject();
        }
        message
    }
}

/// A cancellation message: `message` with the expectation that the schedule on `subject` is
/// still at `sequence`, when given.
pub(crate) fn cancellation(
    message: PublishMessage,
    subject: &str,
    sequence: Option<u64>,
) -> PublishMessage {
    match sequence {
        Some(sequence) => message.expected_last_subject_sequence_for(subject, sequence),
        None => message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedules_past_year_9999_are_refused() {
        let flags = ScheduleFlags {
            schedule_after: Some(Duration::from_secs(8_000 * 31_536_000)),
            ..ScheduleFlags::default()
        };
        assert!(flags.schedule().is_err());
    }
}
