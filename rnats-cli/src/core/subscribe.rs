//! `rnats sub`: print the messages on a subject, for people or as JSON lines.

use std::path::{Path, PathBuf};

use base64::Engine;
use bytes::Bytes;
use clap::Args;
use futures_util::StreamExt;
use serde_json::{Value, json};

use super::show::Shown;
use crate::conn::ConnArgs;
use crate::error::CliError;
use crate::out;

/// Options of `rnats sub`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  rnats sub 'orders.>'\n  rnats sub jobs --queue workers --count 10 --json\n  \
        rnats sub --inbox --dump /tmp/archive\n  rnats sub 'orders.>' --dump=- | xargs -0 -n 1 echo"
)]
pub(crate) struct SubArgs {
    /// Subject to subscribe to; wildcards `*` and `>` allowed.
    #[arg(required_unless_present = "inbox")]
    subject: Option<String>,
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
    #[arg(long, conflicts_with = "json")]
    raw: bool,
}

/// Runs `rnats sub`.
pub(crate) async fn run(args: SubArgs, conn: &ConnArgs) -> Result<(), CliError> {
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
            payload: &message.payload,
        };
        if args.ack
            && shown.reply.is_some_and(|r| r.starts_with("$JS.ACK."))
            && let Some(reply) = message.reply.clone()
        {
            client.publish(reply, Bytes::from_static(b"+ACK")).await?;
        }
        if let Some(dir) = &args.dump {
            dump(dir, &message, received)?;
        } else if args.json {
            out::json(&shown.json())?;
        } else if args.raw {
            out::print_bytes(&message.payload)?;
            out::print("\n")?;
        } else {
            let mut title = format!("[#{received}] Received on {:?}", shown.subject);
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
