//! `stream get` and `stream view`: reading a stream's messages, one by sequence or subject,
//! the last of each subject, or a page in order through an ordered consumer.

use std::time::Duration;

use clap::Args;
use futures_util::StreamExt;
use rnats::jetstream::Context;
use rnats::jetstream::consumer::DeliverPolicy;
use rnats::jetstream::consumer::pull::OrderedConfig;
use rnats::jetstream::message::StreamMessage;
use rnats::jetstream::response::Response;
use rnats::jetstream::stream::{LastRawMessageErrorKind, RetentionPolicy, Stream};
use serde_json::json;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::time;
use crate::conn::parse_duration;
use crate::core::pipe::Translate;
use crate::core::show::Shown;
use crate::error::CliError;
use crate::out;

/// `stream get`: one message by sequence, or the last on a subject (on each, with wildcards).
pub(super) async fn get(
    js: &Context,
    name: String,
    seq: Option<u64>,
    last_for: Option<String>,
    json: bool,
    translate: Option<Translate>,
) -> Result<(), CliError> {
    let print = Print {
        shape: if json { Shape::Json } else { Shape::Human },
        translate: translate.as_ref(),
    };
    let stream = js
        .get_stream_no_info(&name)
        .await
        .map_err(CliError::js(format!("cannot read stream {name}")))?;
    let message = match (seq, &last_for) {
        (_, Some(filter)) if is_wildcard(filter) => {
            return last_per_subject(js, &name, filter, &print).await;
        }
        (_, Some(subject)) => stream
            .get_last_raw_message_by_subject(subject)
            .await
            .map_err(CliError::js(format!(
                "cannot get the last message on {subject} from {name}"
            )))?,
        (Some(seq), None) => stream
            .get_raw_message(seq)
            .await
            .map_err(CliError::js(format!(
                "cannot get message {seq} from {name}"
            )))?,
        (None, None) => {
            return Err(CliError::Usage("give a SEQ or --last-for SUBJECT"));
        }
    };
    print.message(&name, message).await
}

/// Whether `subject` is a filter rather than one subject.
fn is_wildcard(subject: &str) -> bool {
    subject.split('.').any(|token| token == "*" || token == ">")
}

/// `stream get --last-for FILTER` with wildcards: the last message of every matching subject,
/// one consistent snapshot read by batched direct get (ADR-31), page by page.
async fn last_per_subject(
    js: &Context,
    name: &str,
    filter: &str,
    print: &Print<'_>,
) -> Result<(), CliError> {
    let action = format!("cannot get the last messages on {filter} from {name}");
    let stream = js
        .get_stream(name)
        .await
        .map_err(CliError::js(format!("cannot read stream {name}")))?;
    if !stream.cached_info().config.allow_direct {
        return Err(CliError::JetStream {
            action,
            source: "the stream does not allow direct gets (stream edit --allow-direct)".into(),
        });
    }
    let mut messages = stream
        .direct_multi_last([filter])
        .send()
        .await
        .map_err(CliError::js(action.clone()))?;
    let mut shown = 0u64;
    while let Some(message) = messages.next().await {
        let message = message.map_err(CliError::js(action.clone()))?;
        print.message(name, message).await?;
        shown += 1;
    }
    if shown == 0 {
        eprintln!("No messages on {filter}");
    }
    Ok(())
}

/// Options of `stream view`.
#[derive(Debug, Args)]
pub(crate) struct ViewArgs {
    /// The stream.
    name: String,
    /// Messages to show at most: natscli's page size, the same as --count.
    #[arg(value_name = "SIZE", conflicts_with = "count")]
    size: Option<usize>,
    /// Messages to show at most.
    #[arg(long, short = 'c', default_value_t = 10)]
    count: usize,
    /// Start at this sequence.
    #[arg(
        long,
        visible_alias = "id",
        value_name = "SEQ",
        conflicts_with = "since"
    )]
    start: Option<u64>,
    /// Start with messages this recent, e.g. 1h.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    since: Option<Duration>,
    /// Only messages on this subject (wildcards allowed).
    #[arg(long, value_name = "SUBJECT")]
    subject: Option<String>,
    /// One JSON object per message.
    #[arg(long, short = 'j')]
    json: bool,
    /// Only the bodies, each followed by a newline (natscli's `--raw`).
    #[arg(long, conflicts_with = "json")]
    raw: bool,
    /// Show each body as this command prints it, the body on its standard input (split as
    /// a shell would, run without one; {{Subject}} and {{Stream}} are the message's).
    #[arg(long, value_name = "CMD", value_parser = Translate::parse)]
    translate: Option<Translate>,
}

/// How a stored message is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// Title, headers and body, for people.
    Human,
    /// One JSON object.
    Json,
    /// The body alone and a newline.
    Raw,
}

/// `stream view`: up to a page of messages in order, from a sequence, a time or the start.
/// A limits stream is read with an ordered consumer. A work-queue or interest stream is
/// read one get at a time (`STREAM.MSG.GET`, next message on the subject): the server
/// refuses an ordered consumer on a work-queue stream, and a consumer that acknowledges
/// nothing would count as having consumed an interest stream's messages (jsm.go refuses
/// such streams unless they allow direct gets, for the same reason).
pub(super) async fn view(js: &Context, args: ViewArgs) -> Result<(), CliError> {
    let name = args.name.as_str();
    let stream = js
        .get_stream(name)
        .await
        .map_err(CliError::js(format!("cannot read stream {name}")))?;
    let count = args.size.unwrap_or(args.count) as u64;
    let print = Print {
        shape: match (args.json, args.raw) {
            (true, _) => Shape::Json,
            (false, true) => Shape::Raw,
            (false, false) => Shape::Human,
        },
        translate: args.translate.as_ref(),
    };
    let filter = args.subject.as_deref().filter(|s| !s.is_empty());
    let start = match (args.start, args.since) {
        (Some(seq), _) => Start::Sequence(seq.max(1)),
        (None, Some(since)) => Start::Time(crate::parse::time_ago("--since", since)?),
        (None, None) => Start::First,
    };
    match stream.cached_info().config.retention {
        RetentionPolicy::Limits => view_ordered(&stream, name, count, start, filter, &print).await,
        RetentionPolicy::WorkQueue | RetentionPolicy::Interest => {
            view_by_gets(js, &stream, name, count, start, filter, &print).await
        }
    }
}

/// Where `stream view` starts.
#[derive(Debug, Clone, Copy)]
enum Start {
    First,
    Sequence(u64),
    Time(OffsetDateTime),
}

/// `stream view` of a limits stream, through an ordered consumer.
async fn view_ordered(
    stream: &Stream,
    name: &str,
    count: u64,
    start: Start,
    filter: Option<&str>,
    print: &Print<'_>,
) -> Result<(), CliError> {
    let deliver_policy = match start {
        Start::Sequence(start_sequence) => DeliverPolicy::ByStartSequence { start_sequence },
        Start::Time(start_time) => DeliverPolicy::ByStartTime { start_time },
        Start::First => DeliverPolicy::All,
    };
    let consumer = stream
        .create_consumer(OrderedConfig {
            deliver_policy,
            filter_subject: filter.unwrap_or_default().to_owned(),
            ..Default::default()
        })
        .await
        .map_err(CliError::js(format!("cannot read stream {name}")))?;
    // The server counts what is there to read when the consumer is made: stop there rather
    // than wait for messages that may never come.
    let available = consumer.cached_info().num_pending;
    let consumer_name = consumer.cached_info().name.clone();
    let wanted = count.min(available);
    if wanted == 0 {
        let _ = stream.delete_consumer(&consumer_name).await;
        eprintln!("No messages to show");
        return Ok(());
    }
    let mut messages = consumer
        .messages()
        .await
        .map_err(CliError::js(format!("cannot read stream {name}")))?;
    let mut shown = 0u64;
    let result = show_messages(&mut messages, name, wanted, print, &mut shown).await;
    // Dropping the stream deletes its ephemeral consumer in the background, which the
    // process may exit before; the delete awaited here makes sure it goes.
    drop(messages);
    let _ = stream.delete_consumer(&consumer_name).await;
    result
}

/// `stream view` of a work-queue or interest stream: each message asked of the leader by
/// the sequence after the last one shown, which reads without consuming anything.
async fn view_by_gets(
    js: &Context,
    stream: &Stream,
    name: &str,
    count: u64,
    start: Start,
    filter: Option<&str>,
    print: &Print<'_>,
) -> Result<(), CliError> {
    let filter = filter.unwrap_or(">");
    let action = format!("cannot read stream {name}");
    // The sequence to read from next; none when nothing is left.
    let mut next = match start {
        Start::First => Some(1),
        Start::Sequence(seq) => Some(seq),
        Start::Time(since) => first_since(js, name, since, filter).await?,
    };
    let mut shown = 0u64;
    while let Some(seq) = next
        && shown < count
    {
        let message = match stream.get_first_raw_message_by_subject(filter, seq).await {
            Ok(message) => message,
            Err(e) if e.kind() == LastRawMessageErrorKind::NoMessageFound => break,
            Err(e) => return Err(CliError::js(action)(e)),
        };
        next = message.sequence.checked_add(1);
        print.message(name, message).await?;
        shown += 1;
    }
    if shown == 0 {
        eprintln!("No messages to show");
    }
    Ok(())
}

/// The sequence of the first message on `filter` stored at or after `since`, by a get with a
/// start time (which the library's get builder does not offer); `None` when there is none.
async fn first_since(
    js: &Context,
    name: &str,
    since: OffsetDateTime,
    filter: &str,
) -> Result<Option<u64>, CliError> {
    let start = since
        .format(&Rfc3339)
        .map_err(|e| CliError::InvalidArgument {
            what: "--since",
            given: since.to_string(),
            reason: e.to_string(),
        })?;
    let request = json!({ "start_time": start, "next_by_subj": filter });
    let subject = format!("STREAM.MSG.GET.{name}");
    out::trace(">>>", &subject, &request);
    let response: Response<serde_json::Value> = js
        .request(subject.clone(), &request)
        .await
        .map_err(CliError::js(format!("cannot read stream {name}")))?;
    match response.into_result() {
        Ok(found) => {
            out::trace("<<<", &subject, &found);
            Ok(found
                .pointer("/message/seq")
                .and_then(serde_json::Value::as_u64))
        }
        // 10037: no message found.
        Err(error) if error.error_code().0 == 10037 => Ok(None),
        Err(error) => Err(CliError::js(format!("cannot read stream {name}"))(error)),
    }
}

async fn show_messages(
    messages: &mut rnats::jetstream::consumer::pull::Ordered,
    name: &str,
    wanted: u64,
    print: &Print<'_>,
    shown: &mut u64,
) -> Result<(), CliError> {
    while let Some(message) = messages.next().await {
        let message = message.map_err(CliError::js(format!("cannot read stream {name}")))?;
        let (seq, published, pending) = match message.info() {
            Ok(info) => (info.stream_sequence, info.published, info.pending),
            Err(_) => (0, OffsetDateTime::UNIX_EPOCH, 0),
        };
        let as_stream = StreamMessage {
            subject: message.subject.clone(),
            sequence: seq,
            headers: message.headers.clone().unwrap_or_default(),
            payload: message.payload.clone(),
            time: published,
        };
        print.message(name, as_stream).await?;
        *shown += 1;
        if *shown >= wanted || pending == 0 {
            break;
        }
    }
    Ok(())
}

/// How `stream get` and `stream view` print what they read.
struct Print<'a> {
    shape: Shape,
    /// `--translate`: each body as this command prints it.
    translate: Option<&'a Translate>,
}

impl Print<'_> {
    /// Prints a message read from `stream`, its body translated first when asked.
    async fn message(&self, stream: &str, mut message: StreamMessage) -> Result<(), CliError> {
        if let Some(translate) = self.translate {
            message.payload = translate
                .body(&message.payload, message.subject.as_str(), stream)
                .await;
        }
        match self.shape {
            Shape::Raw => {
                out::print_bytes(&message.payload)?;
                out::print("\n")
            }
            Shape::Json => print_stream_message(stream, &message, true),
            Shape::Human => print_stream_message(stream, &message, false),
        }
    }
}

/// A stored message: `[NAME#SEQ] time on subject`, headers, body; or JSON.
fn print_stream_message(stream: &str, message: &StreamMessage, json: bool) -> Result<(), CliError> {
    let shown = Shown {
        subject: message.subject.as_str(),
        reply: None,
        headers: Some(&message.headers),
        payload: &message.payload,
    };
    if json {
        let mut object = shown.json();
        object.insert("stream".into(), json!(stream));
        object.insert("seq".into(), json!(message.sequence));
        object.insert(
            "time".into(),
            json!(
                message
                    .time
                    .format(&time::format_description::well_known::Rfc3339)
                    .unwrap_or_default()
            ),
        );
        return out::json(&object);
    }
    let title = format!(
        "[{stream}#{}] {} on {:?}",
        message.sequence,
        time(message.time),
        message.subject.as_str()
    );
    out::print(&shown.human(&title))
}
