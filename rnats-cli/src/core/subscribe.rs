//! `rnats sub`: print the messages on one or more subjects, for people or as JSON lines; with
//! `--stream` or a deliver policy (`--all`, `--last`, `--since`, ...), the messages a
//! stream holds and then the new ones, read with an ordered consumer, or by direct gets, as
//! natscli does.

use std::path::{Path, PathBuf};

use base64::Engine;
use bytes::Bytes;
use clap::Args;
use futures_util::StreamExt;
use serde_json::{Value, json};

use std::time::{Duration, Instant};

use rnats::jetstream::consumer::DeliverPolicy;
use time::OffsetDateTime;

use super::pipe::Translate;
use super::show::Shown;
use crate::conn::{ConnArgs, parse_duration};
use crate::error::CliError;
use crate::out;

mod direct;
mod matching;
mod stream;

/// Options of `rnats sub`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  rnats sub 'orders.>'\n  rnats sub jobs --queue workers --count 10 --json\n  \
        rnats sub --inbox --dump /tmp/archive\n  rnats sub 'orders.>' --dump=- | xargs -0 -n 1 echo\n  \
        rnats sub --stream ORDERS --last\n  rnats sub 'orders.eu.>' --since 1h --headers-only -t"
)]
pub(crate) struct SubArgs {
    /// Subjects to subscribe to, one subscription each, their messages in one output;
    /// wildcards `*` and `>` allowed. With --stream (or a deliver flag): the one subject of
    /// the stream to read (default: all of them).
    #[arg(value_name = "SUBJECT", required_unless_present_any = ["inbox", "stream"])]
    subjects: Vec<String>,
    /// Read this stream (JetStream) with an ordered consumer (by direct gets for a work-queue
    /// or interest stream, or with --direct), from its first message unless a deliver flag
    /// says otherwise; without it, a deliver flag reads the stream that holds SUBJECT.
    #[arg(long, value_name = "STREAM", conflicts_with_all = ["queue", "inbox"])]
    stream: Option<String>,
    #[command(flatten)]
    deliver: stream::DeliverFlags,
    /// Show only the headers, not the bodies (a stream's consumer is told to leave the
    /// bodies out).
    #[arg(long)]
    headers_only: bool,
    /// Show when each message was stored (JetStream) or received (Core NATS).
    #[arg(long, short = 't')]
    timestamp: bool,
    /// Show how long ago each message was stored (JetStream), or how long after the
    /// subscription began it came (Core NATS).
    #[arg(long, short = 'd', conflicts_with = "timestamp")]
    delta_time: bool,
    /// Print only each message's title line with its subject (a stream's consumer is told
    /// to leave the bodies out).
    #[arg(long)]
    subjects_only: bool,
    /// Leave out messages on this subject (wildcards allowed); repeat, or separate by commas.
    #[arg(
        long = "ignore-subject",
        short = 'I',
        value_name = "SUBJECT",
        value_delimiter = ','
    )]
    ignore: Vec<String>,
    /// Exit (successfully) after this long without a message.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    wait: Option<Duration>,
    /// Exit once the stream has delivered everything it holds (JetStream).
    #[arg(long, short = 'T')]
    terminate_at_end: bool,
    /// Subscribe to a new inbox subject (printed when subscribed) instead.
    #[arg(long, short = 'i', conflicts_with = "subjects")]
    inbox: bool,
    /// Acknowledge JetStream messages (those whose reply is a `$JS.ACK.` subject).
    #[arg(long, overrides_with = "no_ack")]
    ack: bool,
    /// Do not acknowledge them (the default; natscli's negation of --ack).
    #[arg(long, overrides_with = "ack")]
    no_ack: bool,
    /// Write each message as natscli does into DIR, one `N.json` file per message (N its
    /// count, or its stream sequence), or, with `-`, to stdout, each followed by a NUL
    /// (for `xargs -0`).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["json", "raw"])]
    dump: Option<PathBuf>,
    /// Join this queue group.
    #[arg(long, short = 'q', value_name = "GROUP")]
    queue: Option<String>,
    /// Exit after this many messages (0: no limit), of all the subjects together.
    #[arg(long, short = 'c')]
    count: Option<u64>,
    /// One JSON object per message: subject, reply, headers, data.
    #[arg(long, short = 'j')]
    json: bool,
    /// Print only the bodies, one per line.
    #[arg(long, short = 'r', conflicts_with = "json")]
    raw: bool,
    /// Hold each request (a message with a reply subject under the client's inbox prefix)
    /// until its reply comes, then show the two together; with --count, wait for the
    /// replies of the requests counted before exiting (Core NATS only).
    #[arg(long, conflicts_with_all = ["stream", "inbox"])]
    match_replies: bool,
    /// Show each body as this command prints it, the body on its standard input (split as
    /// a shell would, run without one; {{Subject}} and {{Stream}} are the message's). Not
    /// with --dump, which keeps the bodies as they came.
    #[arg(long, value_name = "CMD", value_parser = Translate::parse, conflicts_with = "dump")]
    translate: Option<Translate>,
    /// Read the stream by batched direct gets instead of a consumer, asking again every
    /// 250 ms once caught up (nats-server 2.11+, the stream must allow direct gets); what
    /// `sub` does anyway for work-queue and interest streams, as natscli.
    #[arg(long, conflicts_with_all = ["queue", "inbox", "match_replies"])]
    direct: bool,
}

impl SubArgs {
    /// Whether bodies are shown at all (not with `--headers-only` or `--subjects-only`).
    fn shows_bodies(&self) -> bool {
        !self.headers_only && !self.subjects_only
    }

    /// The `--count` limit; 0 means none, as in natscli.
    fn limit(&self) -> Option<u64> {
        self.count.filter(|n| *n > 0)
    }

    /// `body` as `--translate` prints it, when given and bodies are shown; else `body`.
    async fn translated_body(&self, body: &Bytes, subject: &str, stream: &str) -> Bytes {
        match self.translate.as_ref().filter(|_| self.shows_bodies()) {
            Some(translate) => translate.body(body, subject, stream).await,
            None => body.clone(),
        }
    }

    /// `message` with its body as `--translate` prints it (Core NATS: no stream).
    async fn translated(&self, mut message: rnats::Message) -> rnats::Message {
        message.payload = self
            .translated_body(&message.payload, message.subject.as_str(), "")
            .await;
        message
    }
}

/// Runs `rnats sub`.
pub(crate) async fn run(args: SubArgs, conn: &ConnArgs) -> Result<(), CliError> {
    let deliver = args.deliver.policy()?;
    if args.stream.is_some() || deliver.is_some() || args.direct {
        if args.match_replies {
            return Err(CliError::Usage(
                "--match-replies matches Core NATS requests, not a stream's messages",
            ));
        }
        if args.subjects.len() > 1 {
            // natscli's rule: a stream is read through one consumer with one filter.
            return Err(CliError::Usage(
                "reading a stream takes one subject; give one, or run one sub per subject",
            ));
        }
        return stream::read(&args, deliver.unwrap_or(DeliverPolicy::All), conn).await;
    }
    if args.terminate_at_end {
        return Err(CliError::Usage(
            "--terminate-at-end reads a stream: add --stream or a deliver flag",
        ));
    }
    let (client, _) = conn.connect().await?;
    let subjects = if args.subjects.is_empty() {
        vec![client.new_inbox()]
    } else {
        args.subjects.clone()
    };
    let mut subscribers = Vec::with_capacity(subjects.len());
    for subject in &subjects {
        subscribers.push(match &args.queue {
            Some(group) => {
                client
                    .queue_subscribe(subject.clone(), group.clone())
                    .await?
            }
            None => client.subscribe(subject.clone()).await?,
        });
    }
    // Every subscription's messages in one output, numbered and counted together.
    let mut subscriber = futures_util::stream::select_all(subscribers);
    let matching = if args.match_replies {
        Some(matching::Matching::subscribe(&client, &args).await?)
    } else {
        None
    };
    client.flush().await?;
    if let Some(dir) = args.dump.as_deref().filter(|d| !is_stdout(d)) {
        std::fs::create_dir_all(dir).map_err(|source| CliError::WriteFile {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    // Scripts and tests wait for this line before publishing.
    let names = subjects
        .iter()
        .map(|subject| format!("{subject:?}"))
        .collect::<Vec<_>>()
        .join(", ");
    match &args.queue {
        Some(group) => eprintln!("Subscribed to {names} in queue group {group:?}"),
        None => eprintln!("Subscribed to {names}"),
    }
    if let Some(matching) = matching {
        return matching::run(&args, &client, subscriber, matching).await;
    }
    let started = Instant::now();
    let mut received = 0u64;
    loop {
        let message = match next_within(&mut subscriber, args.wait).await {
            Next::Item(message) => message,
            Next::Quiet => return Ok(()),
            Next::Ended => return Err(CliError::SubscriptionEnded),
        };
        if ignored(&args.ignore, message.subject.as_str()) {
            continue;
        }
        received += 1;
        ack(&args, &client, &message).await?;
        let message = args.translated(message).await;
        show(&args, &message, received, started, None)?;
        if args.limit() == Some(received) {
            // The acks above are publishes: they must leave before the process does.
            client.flush().await?;
            return Ok(());
        }
    }
}

/// `--ack`: acknowledges `message` when it is a JetStream message (its reply a `$JS.ACK.`
/// subject).
async fn ack(
    args: &SubArgs,
    client: &rnats::Client,
    message: &rnats::Message,
) -> Result<(), CliError> {
    if args.ack
        && let Some(reply) = message.reply.clone()
        && reply.starts_with("$JS.ACK.")
    {
        client.publish(reply, Bytes::from_static(b"+ACK")).await?;
    }
    Ok(())
}

/// Writes one message as the output flags ask, the `number`th received; with `reply`, the
/// reply matched to it after it (`--match-replies`).
fn show(
    args: &SubArgs,
    message: &rnats::Message,
    number: u64,
    started: Instant,
    reply: Option<&rnats::Message>,
) -> Result<(), CliError> {
    let shown = shown(args, message);
    if let Some(dir) = &args.dump {
        // natscli's names: the request's stream sequence when it has one, else its number;
        // its reply beside it.
        let name = stream_sequence(message).unwrap_or(number).to_string();
        dump(dir, message, &name)?;
        if let Some(reply) = reply {
            dump(dir, reply, &format!("{name}_reply"))?;
        }
    } else if args.json {
        let mut object = shown.json();
        if let Some(reply) = reply {
            object.insert(
                "matched_reply".into(),
                Value::Object(self::shown(args, reply).json()),
            );
        }
        out::json(&object)?;
    } else if args.raw {
        out::print_bytes(&message.payload)?;
        out::print("\n")?;
        if let Some(reply) = reply {
            out::print_bytes(&reply.payload)?;
            out::print("\n")?;
        }
    } else {
        let at = stamp(args, OffsetDateTime::now_utc(), started.elapsed());
        let mut title = format!("[#{number}]{at} Received on {:?}", shown.subject);
        if let Some(reply) = shown.reply {
            title.push_str(&format!(" with reply {reply:?}"));
        }
        print_human(args, &shown, &title)?;
        if let Some(reply) = reply {
            let title = format!(
                "[#{number}]{at} Matched reply on {:?}",
                reply.subject.as_str()
            );
            print_human(args, &self::shown(args, reply), &title)?;
        }
    }
    Ok(())
}

/// What is shown of `message`: its body left out with --headers-only.
fn shown<'a>(args: &SubArgs, message: &'a rnats::Message) -> Shown<'a> {
    Shown {
        subject: message.subject.as_str(),
        reply: message.reply.as_ref().map(|r| r.as_str()),
        headers: message.headers.as_ref(),
        payload: if args.headers_only {
            &[]
        } else {
            &message.payload
        },
    }
}

/// What waiting for the next message gave.
enum Next<T> {
    /// A message.
    Item(T),
    /// Nothing came within `--wait`.
    Quiet,
    /// The subscription ended.
    Ended,
}

/// The next item of `messages`, waiting at most `wait` when given.
async fn next_within<S>(messages: &mut S, wait: Option<Duration>) -> Next<S::Item>
where
    S: futures_util::Stream + Unpin,
{
    let next = match wait {
        Some(wait) => match tokio::time::timeout(wait, messages.next()).await {
            Ok(next) => next,
            Err(_) => return Next::Quiet,
        },
        None => messages.next().await,
    };
    next.map_or(Next::Ended, Next::Item)
}

/// Prints a message for people: its title, then (unless `--subjects-only`) its headers and
/// body.
fn print_human(args: &SubArgs, shown: &Shown<'_>, title: &str) -> Result<(), CliError> {
    if args.subjects_only {
        return out::print(&format!("{title}\n"));
    }
    out::print(&shown.human(title))
}

/// Whether `subject` matches one of the `--ignore-subject` patterns.
fn ignored(patterns: &[String], subject: &str) -> bool {
    patterns
        .iter()
        .any(|pattern| subject_matches(pattern, subject))
}

/// NATS subject matching: `*` stands for one token, a last `>` for one or more.
fn subject_matches(pattern: &str, subject: &str) -> bool {
    let mut tokens = subject.split('.');
    for want in pattern.split('.') {
        match (want, tokens.next()) {
            (">", Some(_)) => return true,
            ("*", Some(_)) => {}
            (want, Some(token)) if want == token => {}
            _ => return false,
        }
    }
    tokens.next().is_none()
}

/// What follows the message number in a title: ` @ Dec  3 06:14:01.123456` (`at` in UTC
/// with microseconds, natscli's form of `--timestamp`), ` @ 1.5ms` (`ago`, for
/// `--delta-time`), or nothing.
fn stamp(args: &SubArgs, at: OffsetDateTime, ago: Duration) -> String {
    if args.delta_time {
        return format!(" @ {ago:?}");
    }
    if !args.timestamp {
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
/// `Reply`, `Header` as lists of values, `Data` in base64), into `DIR/NAME.json`, or to
/// stdout ending in a NUL.
fn dump(dir: &Path, message: &rnats::Message, name: &str) -> Result<(), CliError> {
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
    let path = dir.join(format!("{name}.json"));
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
    fn ignore_patterns_match_as_nats_subjects_do() {
        assert!(subject_matches("a.b", "a.b"));
        assert!(subject_matches("a.*", "a.b"));
        assert!(!subject_matches("a.*", "a.b.c"));
        assert!(subject_matches("a.>", "a.b.c"));
        assert!(!subject_matches("a.>", "a"));
        assert!(!subject_matches("a.b", "a.b.c"));
        assert!(!subject_matches("a.b.c", "a.b"));
        assert!(subject_matches("*.b", "x.b"));
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
