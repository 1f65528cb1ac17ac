//! `rnats sub`: print the messages on a subject, for people or as JSON lines; with
//! `--stream` or a deliver policy (`--all`, `--last`, `--since`, ...), the messages a
//! stream holds and then the new ones, read with an ordered consumer as natscli does.

use std::path::{Path, PathBuf};

use base64::Engine;
use bytes::Bytes;
use clap::Args;
use futures_util::StreamExt;
use serde_json::{Value, json};

use std::time::Duration;

use rnats::jetstream::consumer::DeliverPolicy;
use rnats::jetstream::consumer::pull::OrderedConfig;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::show::Shown;
use crate::conn::{ConnArgs, parse_duration};
use crate::error::CliError;
use crate::out;
use crate::stats::human;

/// Options of `rnats sub`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  rnats sub 'orders.>'\n  rnats sub jobs --queue workers --count 10 --json\n  \
        rnats sub --inbox --dump /tmp/archive\n  rnats sub 'orders.>' --dump=- | xargs -0 -n 1 echo\n  \
        rnats sub --stream ORDERS --last\n  rnats sub 'orders.eu.>' --since 1h --headers-only -t"
)]
pub(crate) struct SubArgs {
    /// Subject to subscribe to; wildcards `*` and `>` allowed. With --stream: the stream's
    /// subjects to read (default: all of them).
    #[arg(required_unless_present_any = ["inbox", "stream"])]
    subject: Option<String>,
    /// Read this stream (JetStream) with an ordered consumer, from its first message unless
    /// a deliver flag says otherwise; without it, a deliver flag reads the stream that holds
    /// SUBJECT.
    #[arg(long, value_name = "STREAM", conflicts_with_all = ["queue", "inbox", "ack"])]
    stream: Option<String>,
    #[command(flatten)]
    deliver: DeliverFlags,
    /// Show only the headers, not the bodies (a stream's consumer is told to leave the
    /// bodies out).
    #[arg(long)]
    headers_only: bool,
    /// Show when each message was stored (JetStream) or received (Core NATS).
    #[arg(long, short = 't')]
    timestamp: bool,
    /// Subscribe to a new inbox subject (printed when subscribed) instead.
    #[arg(long, short = 'i', conflicts_with = "subject")]
    inbox: bool,
    /// Acknowledge JetStream messages (those whose reply is a `$JS.ACK.` subject).
    #[arg(long)]
    ack: bool,
    /// Write each message as natscli does into DIR, one `N.json` file per message (N its
    /// count, or its stream sequence), or, with `-`, to stdout, each followed by a NUL
    /// (for `xargs -0`).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["json", "raw"])]
    dump: Option<PathBuf>,
    /// Join this queue group.
    #[arg(long, short = 'q', value_name = "GROUP")]
    queue: Option<String>,
    /// Exit after this many messages.
    #[arg(long, short = 'c', value_parser = clap::value_parser!(u64).range(1..))]
    count: Option<u64>,
    /// One JSON object per message: subject, reply, headers, data.
    #[arg(long)]
    json: bool,
    /// Print only the bodies, one per line.
    #[arg(long, short = 'r', conflicts_with = "json")]
    raw: bool,
}

/// Where in a stream `sub` starts (natscli's flags; JetStream): at most one.
#[derive(Debug, Default, Args)]
#[group(id = "deliver_policy", multiple = false, conflicts_with_all = ["queue", "inbox", "ack"])]
struct DeliverFlags {
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
    /// The policy asked for, or `None` when no flag was given.
    fn policy(&self) -> Option<DeliverPolicy> {
        if self.all {
            Some(DeliverPolicy::All)
        } else if self.new {
            Some(DeliverPolicy::New)
        } else if self.last {
            Some(DeliverPolicy::Last)
        } else if self.last_per_subject {
            Some(DeliverPolicy::LastPerSubject)
        } else if let Some(ago) = self.since {
            Some(DeliverPolicy::ByStartTime {
                start_time: OffsetDateTime::now_utc() - ago,
            })
        } else {
            self.start_sequence
                .map(|start_sequence| DeliverPolicy::ByStartSequence { start_sequence })
        }
    }
}

/// Runs `rnats sub`.
pub(crate) async fn run(args: SubArgs, conn: &ConnArgs) -> Result<(), CliError> {
    let deliver = args.deliver.policy();
    if args.stream.is_some() || deliver.is_some() {
        return read_stream(&args, deliver.unwrap_or(DeliverPolicy::All), conn).await;
    }
    let (client, _) = conn.connect().await?;
    let subject = match &args.subject {
        Some(subject) => subject.clone(),
        None => client.new_inbox(),
    };
    let mut subscriber = match &args.queue {
        Some(group) => {
            client
                .queue_subscribe(subject.clone(), group.clone())
                .await?
        }
        None => client.subscribe(subject.clone()).await?,
    };
    client.flush().await?;
    if let Some(dir) = args.dump.as_deref().filter(|d| !is_stdout(d)) {
        std::fs::create_dir_all(dir).map_err(|source| CliError::WriteFile {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    // Scripts and tests wait for this line before publishing.
    match &args.queue {
        Some(group) => eprintln!("Subscribed to {subject:?} in queue group {group:?}"),
        None => eprintln!("Subscribed to {subject:?}"),
    }
    let mut received = 0u64;
    while let Some(message) = subscriber.next().await {
        received += 1;
        let shown = Shown {
            subject: message.subject.as_str(),
            reply: message.reply.as_ref().map(|r| r.as_str()),
            headers: message.headers.as_ref(),
            payload: if args.headers_only {
                &[]
            } else {
                &message.payload
            },
        };
        if args.ack && shown.reply.is_some_and(|r| r.starts_with("$JS.ACK.")) {
            if let Some(reply) = message.reply.clone() {
                client.publish(reply, Bytes::from_static(b"+ACK")).await?;
            }
        }
        if let Some(dir) = &args.dump {
            dump(dir, &message, received)?;
        } else if args.json {
            out::json(&shown.json())?;
        } else if args.raw {
            out::print_bytes(&message.payload)?;
            out::print("\n")?;
        } else {
            let at = stamp(args.timestamp, OffsetDateTime::now_utc());
            let mut title = format!("[#{received}]{at} Received on {:?}", shown.subject);
            if let Some(reply) = shown.reply {
                title.push_str(&format!(" with reply {reply:?}"));
            }
            out::print(&shown.human(&title))?;
        }
        if args.count == Some(received) {
            // The acks above are publishes: they must leave before the process does.
            client.flush().await?;
            return Ok(());
        }
    }
    Err(CliError::SubscriptionEnded)
}

/// `sub --stream` or a deliver flag: an ordered consumer on the stream, from `deliver` on,
/// filtered to SUBJECT when given. No acks: an ordered consumer needs none.
async fn read_stream(
    args: &SubArgs,
    deliver: DeliverPolicy,
    conn: &ConnArgs,
) -> Result<(), CliError> {
    let (client, settings) = conn.connect().await?;
    let js = settings.jetstream(client);
    let filter = args.subject.clone().unwrap_or_default();
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
    let stream = js
        .get_stream_no_info(&name)
        .await
        .map_err(CliError::js(&action))?;
    let consumer = stream
        .create_consumer(OrderedConfig {
            deliver_policy: deliver,
            filter_subject: filter.clone(),
            headers_only: args.headers_only,
            ..Default::default()
        })
        .await
        .map_err(CliError::js(&action))?;
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
    let mut received = 0u64;
    while let Some(message) = messages.next().await {
        let message = message.map_err(CliError::js(&action))?;
        received += 1;
        show_stored(args, &message, received)?;
        if args.count == Some(received) {
            return Ok(());
        }
    }
    Err(CliError::SubscriptionEnded)
}

/// Prints one message read from a stream: natscli's `Received JetStream message` line with
/// its stream, sequence, pending count, subject and time, or JSON with those added, or the
/// body alone, or a dump file.
fn show_stored(
    args: &SubArgs,
    message: &rnats::jetstream::Message,
    received: u64,
) -> Result<(), CliError> {
    if let Some(dir) = &args.dump {
        return dump(dir, message, received);
    }
    if args.raw {
        out::print_bytes(&message.payload)?;
        return out::print("\n");
    }
    let info = message.info().ok();
    let shown = Shown {
        subject: message.subject.as_str(),
        reply: None,
        headers: message.headers.as_ref(),
        payload: if args.headers_only {
            &[]
        } else {
            &message.payload
        },
    };
    if args.json {
        let mut object = shown.json();
        if let Some(info) = &info {
            object.insert("stream".into(), json!(info.stream));
            object.insert("seq".into(), json!(info.stream_sequence));
            object.insert("pending".into(), json!(info.pending));
            if let Ok(at) = info.published.format(&Rfc3339) {
                object.insert("time".into(), json!(at));
            }
        }
        return out::json(&object);
    }
    let title = match &info {
        Some(info) => format!(
            "[#{received}]{} Received JetStream message: stream: {} seq: {} / pending: {} / subject: {} / time: {}",
            stamp(args.timestamp, info.published),
            info.stream,
            human::count(info.stream_sequence),
            human::count(info.pending),
            shown.subject,
            crate::jetstream::time(info.published),
        ),
        None => format!("[#{received}] Received on {:?}", shown.subject),
    };
    out::print(&shown.human(&title))
}

/// How `sub`'s ready line names where in the stream it starts.
fn deliver_words(deliver: &DeliverPolicy) -> String {
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

/// ` @ Dec  3 06:14:01.123456` (UTC, microseconds, natscli's form of `--timestamp`), or
/// nothing when timestamps are off.
fn stamp(on: bool, at: OffsetDateTime) -> String {
    if !on {
        return String::new();
    }
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let at = at.to_offset(time::UtcOffset::UTC);
    format!(
        " @ {} {:>2} {:02}:{:02}:{:02}.{:06}",
        MONTHS[usize::from(u8::from(at.month())) - 1],
        at.day(),
        at.hour(),
        at.minute(),
        at.second(),
        at.microsecond()
    )
}

/// Whether `--dump` names standard output.
fn is_stdout(dir: &Path) -> bool {
    dir.as_os_str() == "-"
}

/// Writes `message` as natscli's `--dump` does: Go's JSON form of a message (`Subject`,
/// `Reply`, `Header` as lists of values, `Data` in base64), into `DIR/N.json` (N the stream
/// sequence of a JetStream message, else `count`), or to stdout ending in a NUL.
fn dump(dir: &Path, message: &rnats::Message, count: u64) -> Result<(), CliError> {
    let headers = message
        .headers
        .as_ref()
        .map(|headers| Value::Object(super::show::headers_json(headers)));
    let text = json!({
        "Subject": message.subject.as_str(),
        "Reply": message.reply.as_ref().map(|r| r.as_str()).unwrap_or_default(),
        "Header": headers,
        "Data": base64::engine::general_purpose::STANDARD.encode(&message.payload),
        "Sub": Value::Null,
    })
    .to_string();
    if is_stdout(dir) {
        return out::print(&format!("{text}\0"));
    }
    let sequence = stream_sequence(message).unwrap_or(count);
    let path = dir.join(format!("{sequence}.json"));
    std::fs::write(&path, text).map_err(|source| CliError::WriteFile { path, source })
}

/// The stream sequence in a JetStream message's ack subject, either layout (ADR-15).
fn stream_sequence(message: &rnats::Message) -> Option<u64> {
    let reply = message.reply.as_ref()?;
    let info = rnats::jetstream::message::Info::from_ack_subject(reply.as_str()).ok()?;
    Some(info.stream_sequence)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_reply(reply: &str) -> rnats::Message {
        rnats::Message {
            subject: "x".into(),
            reply: Some(reply.into()),
            payload: Bytes::new(),
            headers: None,
            status: None,
            description: None,
            length: 0,
        }
    }

    #[test]
    fn the_stream_sequence_comes_from_either_ack_subject_form() {
        let old = with_reply("$JS.ACK.ORDERS.C1.1.42.7.1700000000000000000.0");
        assert_eq!(stream_sequence(&old), Some(42));
        let new = with_reply("$JS.ACK.hub.ACCHASH.ORDERS.C1.1.43.7.1700000000000000000.0");
        assert_eq!(stream_sequence(&new), Some(43));
        let random = with_reply("$JS.ACK.hub.ACCHASH.ORDERS.C1.1.44.7.1700000000000000000.0.r4");
        assert_eq!(stream_sequence(&random), Some(44));
        assert_eq!(stream_sequence(&with_reply("_INBOX.abc")), None);
    }
}
