//! `rnats sub --stream` and the deliver flags: a stream's messages, then the new ones, read
//! with an ordered consumer as natscli's `sub` does (or, for `--direct` and work-queue and
//! interest streams, by direct gets: `direct.rs`).

use std::time::Duration;

use clap::Args;
use rnats::jetstream::consumer::DeliverPolicy;
use rnats::jetstream::consumer::pull::OrderedConfig;
use rnats::jetstream::stream::RetentionPolicy;
use serde_json::json;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::{
    Next, SubArgs, dump, ignored, is_stdout, next_within, print_human, stamp, stream_sequence,
};
use crate::conn::{ConnArgs, parse_duration};
use crate::core::show::Shown;
use crate::error::CliError;
use crate::out;
use crate::stats::human;

/// Where in a stream `sub` starts (natscli's flags; JetStream): at most one.
#[derive(Debug, Default, Args)]
#[group(id = "deliver_policy", multiple = false, conflicts_with_all = ["queue", "inbox"])]
pub(super) struct DeliverFlags {
    /// Every message the stream holds, then the new ones.
    #[arg(long)]
    all: bool,
    /// Only messages stored from now on.
    #[arg(long)]
    new: bool,
    /// The last message, then the new ones.
    #[arg(long)]
    last: bool,
    /// The last message of each subject, then the new ones.
    #[arg(long)]
    last_per_subject: bool,
    /// Messages stored in this last span of time, e.g. 1h30m, then the new ones.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    since: Option<Duration>,
    /// Messages from this stream sequence on.
    #[arg(long, value_name = "SEQUENCE", value_parser = clap::value_parser!(u64).range(1..))]
    start_sequence: Option<u64>,
}

impl DeliverFlags {
    /// The policy asked for, or `None` when no flag was given; an error when `--since`
    /// reaches back before the earliest time there is.
    pub(super) fn policy(&self) -> Result<Option<DeliverPolicy>, CliError> {
        Ok(if self.all {
            Some(DeliverPolicy::All)
        } else if self.new {
            Some(DeliverPolicy::New)
        } else if self.last {
            Some(DeliverPolicy::Last)
        } else if self.last_per_subject {
            Some(DeliverPolicy::LastPerSubject)
        } else if let Some(ago) = self.since {
            Some(DeliverPolicy::ByStartTime {
                start_time: crate::parse::time_ago("--since", ago)?,
            })
        } else {
            self.start_sequence
                .map(|start_sequence| DeliverPolicy::ByStartSequence { start_sequence })
        })
    }
}

/// `sub --stream` or a deliver flag: an ordered consumer on the stream, from `deliver` on,
/// filtered to SUBJECT when given. No acks: an ordered consumer needs none, so `--ack` is
/// accepted and has nothing to do, as in natscli.
pub(super) async fn read(
    args: &SubArgs,
    deliver: DeliverPolicy,
    conn: &ConnArgs,
) -> Result<(), CliError> {
    let (client, settings) = conn.connect().await?;
    let js = settings.jetstream(client);
    let filter = args.subjects.first().cloned().unwrap_or_default();
    let name = match &args.stream {
        Some(name) => name.clone(),
        None => js
            .stream_by_subject(filter.clone())
            .await
            .map_err(CliError::js(format!("no stream holds {filter:?}")))?,
    };
    // The server wants a filter with last-per-subject: all subjects, as natscli asks.
    let filter = if filter.is_empty() && deliver == DeliverPolicy::LastPerSubject {
        ">".to_owned()
    } else {
        filter
    };
    let action = format!("cannot read stream {name}");
    let stream = js.get_stream(&name).await.map_err(CliError::js(&action))?;
    // natscli's rule: a work-queue or interest stream is read by direct gets, which leave
    // it as it is, where a consumer would be refused or would hold its messages.
    let retention = stream.cached_info().config.retention;
    if args.direct
        || matches!(
            retention,
            RetentionPolicy::WorkQueue | RetentionPolicy::Interest
        )
    {
        let server = js.client().server_info().version.clone();
        return super::direct::read(args, &deliver, &stream, &filter, &server).await;
    }
    let consumer = stream
        .create_consumer(OrderedConfig {
            deliver_policy: deliver,
            filter_subject: filter.clone(),
            headers_only: args.headers_only || args.subjects_only,
            ..Default::default()
        })
        .await
        .map_err(CliError::js(&action))?;
    // With -T and nothing to read there is nothing to wait for (new messages excepted).
    let nothing_stored = consumer.cached_info().num_pending == 0;
    let mut messages = consumer.messages().await.map_err(CliError::js(&action))?;
    if let Some(dir) = args.dump.as_deref().filter(|d| !is_stdout(d)) {
        std::fs::create_dir_all(dir).map_err(|source| CliError::WriteFile {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    // Scripts and tests wait for this line before publishing.
    let subject = if filter.is_empty() { ">" } else { &filter };
    eprintln!(
        "Subscribed to {subject:?} in stream {name} {}",
        deliver_words(&deliver)
    );
    if args.terminate_at_end && nothing_stored && deliver != DeliverPolicy::New {
        return Ok(());
    }
    let mut received = 0u64;
    loop {
        let message = match next_within(&mut messages, args.wait).await {
            Next::Item(message) => message.map_err(CliError::js(&action))?,
            Next::Quiet => return Ok(()),
            Next::Ended => return Err(CliError::SubscriptionEnded),
        };
        let pending = message.info().map_or(0, |info| info.pending);
        if !ignored(&args.ignore, message.subject.as_str()) {
            received += 1;
            let stream = message.info().map(|info| info.stream).unwrap_or_default();
            let body = args
                .translated_body(&message.payload, message.subject.as_str(), stream)
                .await;
            show_stored(args, &message, &body, received)?;
        }
        if args.limit() == Some(received) || (args.terminate_at_end && pending == 0) {
            return Ok(());
        }
    }
}

/// Prints one message read from a stream, `body` in place of its own (`--translate`):
/// natscli's `Received JetStream message` line with its stream, sequence, pending count,
/// subject and time, or JSON with those added, or the body alone, or a dump file.
fn show_stored(
    args: &SubArgs,
    message: &rnats::jetstream::Message,
    body: &[u8],
    received: u64,
) -> Result<(), CliError> {
    if let Some(dir) = &args.dump {
        let name = stream_sequence(message).unwrap_or(received).to_string();
        return dump(dir, message, &name);
    }
    if args.raw {
        out::print_bytes(body)?;
        return out::print("\n");
    }
    let info = message.info().ok();
    let shown = Shown {
        subject: message.subject.as_str(),
        reply: None,
        headers: message.headers.as_ref(),
        payload: if args.headers_only { &[] } else { body },
    };
    if args.json {
        let mut object = shown.json();
        if let Some(info) = &info {
            stored_fields(
                &mut object,
                info.stream,
                info.stream_sequence,
                Some(info.pending),
                info.published,
            );
        }
        return out::json(&object);
    }
    let title = match &info {
        Some(info) => format!(
            "[#{received}]{} Received JetStream message: stream: {} seq: {} / pending: {} / subject: {} / time: {}",
            stamp(
                args,
                info.published,
                (OffsetDateTime::now_utc() - info.published).unsigned_abs()
            ),
            info.stream,
            human::count(info.stream_sequence),
            human::count(info.pending),
            shown.subject,
            crate::jetstream::time(info.published),
        ),
        None => format!("[#{received}] Received on {:?}", shown.subject),
    };
    print_human(args, &shown, &title)
}

/// What `--json` adds to a message read from a stream: `stream`, `seq`, `pending` (when
/// known) and `time`.
pub(super) fn stored_fields(
    object: &mut serde_json::Map<String, serde_json::Value>,
    stream: &str,
    sequence: u64,
    pending: Option<u64>,
    stored: OffsetDateTime,
) {
    object.insert("stream".into(), json!(stream));
    object.insert("seq".into(), json!(sequence));
    if let Some(pending) = pending {
        object.insert("pending".into(), json!(pending));
    }
    if let Ok(at) = stored.format(&Rfc3339) {
        object.insert("time".into(), json!(at));
    }
}

/// How `sub`'s ready line names where in the stream it starts.
pub(super) fn deliver_words(deliver: &DeliverPolicy) -> String {
    match deliver {
        DeliverPolicy::All => "from its first message".to_owned(),
        DeliverPolicy::New => "for new messages".to_owned(),
        DeliverPolicy::Last => "from its last message".to_owned(),
        DeliverPolicy::LastPerSubject => "from the last message of each subject".to_owned(),
        DeliverPolicy::ByStartSequence { start_sequence } => {
            format!("from sequence {start_sequence}")
        }
        DeliverPolicy::ByStartTime { start_time } => {
            format!("since {}", crate::jetstream::time(*start_time))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_before_year_minus_9999_is_refused() {
        let flags = DeliverFlags {
            since: Some(Duration::from_secs(20_000 * 31_536_000)),
            ..DeliverFlags::default()
        };
        assert!(flags.policy().is_err());
    }
}
