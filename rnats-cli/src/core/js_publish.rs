//! `rnats pub --jetstream` (each message waits for its ack), scheduled messages and their
//! cancellation, and `pub --atomic` (one atomic batch, ADR-50).

use std::time::Duration;

use bytes::Bytes;
use rnats::HeaderMap;
use rnats::jetstream::Context;
use rnats::jetstream::publish::{PublishAck, PublishMessage};

use super::messages::{Message, Messages};
use super::schedule_flags::{Scheduling, cancellation};
use crate::error::CliError;
use crate::out;
use crate::stats::human;

/// How acks are shown.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AckOutput {
    /// As the server's JSON, one object a line.
    pub(crate) json: bool,
    /// Not at all.
    pub(crate) quiet: bool,
}

/// Publishes each message to JetStream and prints its ack before sending the next.
pub(crate) async fn publish(
    js: &Context,
    mut messages: Messages,
    scheduling: &Scheduling,
    sleep: Option<Duration>,
    output: AckOutput,
) -> Result<(), CliError> {
    let mut first = true;
    while let Some(Message {
        subject,
        payload,
        headers,
    }) = messages.next_message()?
    {
        if let (Some(pause), false) = (sleep, first) {
            tokio::time::sleep(pause).await;
        }
        first = false;
        let ack = publish_one(js, &subject, payload, headers.as_ref(), scheduling).await?;
        print_ack(&ack, output)?;
    }
    Ok(())
}

/// Publishes one message as `scheduling` says and waits for its ack.
async fn publish_one(
    js: &Context,
    subject: &str,
    payload: Bytes,
    headers: Option<&HeaderMap>,
    scheduling: &Scheduling,
) -> Result<PublishAck, CliError> {
    match scheduling {
        Scheduling::None => Ok(js
            .send_publish(subject, publish_message(payload, headers))
            .await?
            .await?),
        Scheduling::Schedule { schedule, flags } => {
            let message = flags.message(schedule.clone(), payload, headers);
            js.publish_schedule(subject, message)
                .await
                .map_err(CliError::js(format!("cannot schedule on {subject}")))
        }
        Scheduling::Cancel {
            subject: schedule,
            sequence,
        } => {
            let message = cancellation(publish_message(payload, headers), schedule, *sequence);
            js.cancel_schedule(subject, schedule, message)
                .await
                .map_err(CliError::js(format!(
                    "cannot cancel the schedule on {schedule}"
                )))
        }
    }
}

/// Publishes `messages` as one atomic batch, committed with the last of them, and prints
/// the one ack: every message is stored, or none.
pub(crate) async fn publish_atomic(
    js: &Context,
    messages: Vec<Message>,
    output: AckOutput,
) -> Result<(), CliError> {
    let Some(first) = messages.first() else {
        return Err(CliError::Usage("no messages to publish in atomic batch"));
    };
    let name = js
        .stream_by_subject(first.subject.clone())
        .await
        .map_err(CliError::js(format!(
            "no stream for subject {:?}",
            first.subject
        )))?;
    let stream = js
        .get_stream(&name)
        .await
        .map_err(CliError::js(format!("cannot read stream {name}")))?;
    let action = format!("atomic batch to stream {name} failed");
    // Refuses a stream that cannot take a batch before anything is sent.
    drop(
        stream
            .atomic_batch()
            .map_err(CliError::js(action.clone()))?,
    );
    let batch = messages.into_iter().map(|message| {
        let payload = publish_message(message.payload, message.headers.as_ref());
        (message.subject, payload)
    });
    let ack = js
        .publish_atomic_batch(batch)
        .await
        .map_err(CliError::js(action))?;
    print_ack(&ack, output)
}

/// A JetStream message with `payload` and `headers`.
fn publish_message(payload: Bytes, headers: Option<&HeaderMap>) -> PublishMessage {
    let message = PublishMessage::build().payload(payload);
    match headers {
        Some(headers) => message.headers(headers.clone()),
        None => message,
    }
}

/// One line per ack, in natscli's words.
fn print_ack(ack: &PublishAck, output: AckOutput) -> Result<(), CliError> {
    if output.quiet {
        return Ok(());
    }
    if output.json {
        return out::json(ack);
    }
    out::print(&format!("{}\n", ack_line(ack)))
}

/// `Stored in Stream: ORDERS Sequence: 5`, or for a batch
/// `Wrote batch ID: ... Messages: 3 Sequence: 7`, with the domain, a duplicate and a
/// counter's value when there are any.
fn ack_line(ack: &PublishAck) -> String {
    let mut line = match (&ack.batch_id, ack.batch_size) {
        (Some(id), Some(size)) => format!(
            "Wrote batch ID: {id} Messages: {} Sequence: {}",
            human::count(size),
            human::count(ack.sequence)
        ),
        _ => format!(
            "Stored in Stream: {} Sequence: {}",
            ack.stream,
            human::count(ack.sequence)
        ),
    };
    if !ack.domain.is_empty() {
        line.push_str(&format!(" Domain: {:?}", ack.domain));
    }
    if ack.duplicate {
        line.push_str(" Duplicate: true");
    }
    if let Some(value) = &ack.value {
        line.push_str(&format!(" Counter Value: {value}"));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acks_read_as_natscli_prints_them() {
        let mut ack = PublishAck {
            stream: "ORDERS".into(),
            sequence: 1234,
            ..PublishAck::default()
        };
        assert_eq!(ack_line(&ack), "Stored in Stream: ORDERS Sequence: 1,234");
        ack.duplicate = true;
        ack.value = Some("18446744073709551616".into());
        assert_eq!(
            ack_line(&ack),
            "Stored in Stream: ORDERS Sequence: 1,234 Duplicate: true \
             Counter Value: 18446744073709551616"
        );
        let batch = PublishAck {
            stream: "ORDERS".into(),
            sequence: 7,
            batch_id: Some("b1".into()),
            batch_size: Some(3),
            ..PublishAck::default()
        };
        assert_eq!(
            ack_line(&batch),
            "Wrote batch ID: b1 Messages: 3 Sequence: 7"
        );
    }
}
