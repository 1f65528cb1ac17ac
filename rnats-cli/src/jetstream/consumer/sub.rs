//! `consumer sub`: reads a consumer's messages as they come, pull or push, acking them.

use clap::Args;
use futures_util::{Stream, StreamExt};
use rnats::jetstream::consumer;
use rnats::jetstream::{self, Context};

use super::{Output, get_stream, print_fetched};
use crate::error::CliError;

/// A consumer's messages, pull or push.
type Messages = std::pin::Pin<Box<dyn Stream<Item = Result<jetstream::Message, CliError>> + Send>>;

/// Options of `consumer sub`.
#[derive(Debug, Args)]
pub(super) struct SubArgs {
    /// The stream.
    stream: String,
    /// The consumer.
    name: String,
    /// Exit after this many messages.
    #[arg(long, short = 'c')]
    count: Option<u64>,
    /// Do not ack what arrives (it will be redelivered after the ack wait).
    #[arg(long, overrides_with = "ack")]
    no_ack: bool,
    /// Ack what arrives (the default; natscli's `--ack`).
    #[arg(long)]
    ack: bool,
    /// Print only the bodies.
    #[arg(long, short = 'r', conflicts_with = "json")]
    raw: bool,
    /// One JSON object per message.
    #[arg(long, short = 'j')]
    json: bool,
}

/// Runs `consumer sub`.
pub(super) async fn run(js: &Context, args: SubArgs) -> Result<(), CliError> {
    let SubArgs {
        stream,
        name,
        count,
        no_ack,
        ack: _,
        raw,
        json,
    } = args;
    let output = match (json, raw) {
        (true, _) => Output::Json,
        (false, true) => Output::Raw,
        (false, false) => Output::Human,
    };
    let handle = get_stream(js, &stream).await?;
    let action = format!("cannot read from consumer {name} on {stream}");
    let info = handle
        .consumer_info(&name)
        .await
        .map_err(CliError::js(&action))?;
    let push = info.config.deliver_subject.is_some();
    // Both kinds of consumer give the same messages; their errors differ in type only.
    let mut messages: Messages = if push {
        let consumer: consumer::PushConsumer = handle
            .get_consumer(&name)
            .await
            .map_err(CliError::js(&action))?;
        let stream = consumer.messages().await.map_err(CliError::js(&action))?;
        let action = action.clone();
        Box::pin(stream.map(move |m| m.map_err(CliError::js(action.clone()))))
    } else {
        let consumer: consumer::PullConsumer = handle
            .get_consumer(&name)
            .await
            .map_err(CliError::js(&action))?;
        let stream = consumer.messages().await.map_err(CliError::js(&action))?;
        let action = action.clone();
        Box::pin(stream.map(move |m| m.map_err(CliError::js(action.clone()))))
    };
    // Scripts and tests wait for this line before publishing.
    eprintln!(
        "Consuming from {} consumer {name} on {stream}",
        if push { "push" } else { "pull" }
    );
    let mut seen = 0u64;
    while let Some(message) = messages.next().await {
        let message = message?;
        seen += 1;
        let seq = message.info().map(|i| i.stream_sequence).unwrap_or(0);
        let label = if no_ack { "" } else { " (acked)" };
        print_fetched(&stream, &message, seq, output, label)?;
        if !no_ack {
            message
                .double_ack()
                .await
                .map_err(CliError::js(format!("cannot ack message {seq}")))?;
        }
        if count == Some(seen) {
            return Ok(());
        }
    }
    Err(CliError::SubscriptionEnded)
}
