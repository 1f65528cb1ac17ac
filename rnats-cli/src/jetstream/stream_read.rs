//! `stream get` and `stream view`: reading a stream's messages, one by sequence or subject,
//! the last of each subject, or a page in order through an ordered consumer.

use std::time::Duration;

use futures_util::StreamExt;
use rnats::jetstream::Context;
use rnats::jetstream::consumer::DeliverPolicy;
use rnats::jetstream::consumer::pull::OrderedConfig;
use rnats::jetstream::message::StreamMessage;
use serde_json::json;
use time::OffsetDateTime;

use super::time;
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
) -> Result<(), CliError> {
    let stream = js
        .get_stream_no_info(&name)
        .await
        .map_err(CliError::js(format!("cannot read stream {name}")))?;
    let message = match (seq, &last_for) {
        (_, Some(filter)) if is_wildcard(filter) => {
            return last_per_subject(js, &name, filter, json).await;
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
    print_stream_message(&name, &message, json)
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
    json: bool,
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
        print_stream_message(name, &message, json)?;
        shown += 1;
    }
    if shown == 0 {
        eprintln!("No messages on {filter}");
    }
    Ok(())
}

/// `stream view`: up to `count` messages in order, from a sequence, a time or the start.
pub(super) async fn view(
    js: &Context,
    name: &str,
    count: usize,
    start: Option<u64>,
    since: Option<Duration>,
    subject: Option<String>,
    json: bool,
) -> Result<(), CliError> {
    let stream = js
        .get_stream_no_info(name)
        .await
        .map_err(CliError::js(format!("cannot read stream {name}")))?;
    let deliver_policy = match (start, since) {
        (Some(seq), _) => DeliverPolicy::ByStartSequence {
            start_sequence: seq.max(1),
        },
        (None, Some(since)) => DeliverPolicy::ByStartTime {
            start_time: crate::parse::time_ago("--since", since)?,
        },
        (None, None) => DeliverPolicy::All,
    };
    let consumer = stream
        .create_consumer(OrderedConfig {
            deliver_policy,
            filter_subject: subject.unwrap_or_default(),
            ..Default::default()
        })
        .await
        .map_err(CliError::js(format!("cannot read stream {name}")))?;
    // The server counts what is there to read when the consumer is made: stop there rather
    // than wait for messages that may never come.
    let available = consumer.cached_info().num_pending;
    let consumer_name = consumer.cached_info().name.clone();
    let wanted = (count as u64).min(available);
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
    let result = show_messages(&mut messages, name, wanted, json, &mut shown).await;
    // The ordered consumer is ephemeral; remove it now rather than leave it to time out.
    drop(messages);
    let _ = stream.delete_consumer(&consumer_name).await;
    result
}

async fn show_messages(
    messages: &mut rnats::jetstream::consumer::pull::Ordered,
    name: &str,
    wanted: u64,
    json: bool,
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
        print_stream_message(name, &as_stream, json)?;
        *shown += 1;
        if *shown >= wanted || pending == 0 {
            break;
        }
    }
    Ok(())
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
