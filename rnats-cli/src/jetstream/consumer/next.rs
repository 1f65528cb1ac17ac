//! `rnats consumer next`: fetch from a pull consumer and answer each message (ack, nak,
//! term or nothing), as natscli's `consumer next` does.

use std::time::Duration;

use clap::Args;
use futures_util::StreamExt;
use rnats::jetstream::Context;
use rnats::jetstream::consumer;
use rnats::jetstream::message::AckKind;

use super::{Output, get_stream, print_fetched};
use crate::conn::parse_duration;
use crate::error::CliError;
use crate::out;

/// Options of `consumer next`.
#[derive(Debug, Args)]
pub(super) struct NextArgs {
    /// The stream.
    stream: String,
    /// The pull consumer.
    name: String,
    /// Messages to fetch.
    #[arg(long, short = 'c', default_value_t = 1, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    count: usize,
    /// Do not ack what was fetched (it will be redelivered after the ack wait).
    #[arg(long, overrides_with = "ack")]
    no_ack: bool,
    /// Ack what was fetched (the default; natscli's `--ack`).
    #[arg(long)]
    ack: bool,
    /// Answer with a negative ack instead: the server redelivers the message at once.
    #[arg(long, conflicts_with_all = ["no_ack", "term"])]
    nak: bool,
    /// Answer with a term instead: the server never delivers the message again.
    #[arg(long, conflicts_with = "no_ack")]
    term: bool,
    /// One JSON object per message.
    #[arg(long, short = 'j')]
    json: bool,
    /// Print only the bodies.
    #[arg(long, short = 'r', conflicts_with = "json")]
    raw: bool,
    /// Hold each ack (or nak) back for a random time up to this long, as a slow worker
    /// would (natscli's `--wait`); the delay is printed with the answer.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, conflicts_with_all = ["no_ack", "term"])]
    wait: Option<Duration>,
}

/// How `next` answers each message it fetched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    Ack,
    Nak,
    Term,
    Nothing,
}

impl Answer {
    fn of(args: &NextArgs) -> Answer {
        if args.no_ack {
            Answer::Nothing
        } else if args.nak {
            Answer::Nak
        } else if args.term {
            Answer::Term
        } else {
            Answer::Ack
        }
    }

    /// What the message's title line says was done.
    fn label(self) -> &'static str {
        match self {
            Answer::Ack => " (acked)",
            Answer::Nak => " (nacked)",
            Answer::Term => " (terminated)",
            Answer::Nothing => "",
        }
    }

    /// The line natscli prints after answering.
    fn done(self) -> &'static str {
        match self {
            Answer::Ack => "Acknowledged message",
            Answer::Nak => "Negative Acknowledged message",
            Answer::Term => "Terminated message",
            Answer::Nothing => "",
        }
    }
}

/// Runs `consumer next`: up to `--count` messages, each printed then answered; fails when
/// none came within `timeout`.
pub(super) async fn run(js: &Context, args: NextArgs, timeout: Duration) -> Result<(), CliError> {
    let answer = Answer::of(&args);
    let output = match (args.json, args.raw) {
        (true, _) => Output::Json,
        (false, true) => Output::Raw,
        (false, false) => Output::Human,
    };
    let (stream, name) = (&args.stream, &args.name);
    let handle = get_stream(js, stream).await?;
    let action = format!("cannot read consumer {name} on {stream}");
    let info = handle
        .consumer_info(name)
        .await
        .map_err(CliError::js(&action))?;
    if info.config.deliver_subject.is_some() {
        return Err(CliError::NotPull {
            stream: stream.clone(),
            consumer: name.clone(),
        });
    }
    let consumer: consumer::PullConsumer = handle
        .get_consumer(name)
        .await
        .map_err(CliError::js(&action))?;
    let action = format!("cannot fetch from {name} on {stream}");
    let mut batch = consumer
        .batch()
        .max_messages(args.count)
        .expires(timeout)
        .messages()
        .await
        .map_err(CliError::js(&action))?;
    let mut got = 0usize;
    while let Some(message) = batch.next().await {
        let message = message.map_err(CliError::js(&action))?;
        got += 1;
        let seq = message.info().map(|i| i.stream_sequence).unwrap_or(0);
        print_fetched(stream, &message, seq, output, answer.label())?;
        settle(&message, seq, answer, args.wait, output).await?;
        if got == args.count {
            break;
        }
    }
    if got == 0 {
        return Err(CliError::NothingReceived {
            what: "no message",
            timeout,
        });
    }
    Ok(())
}

/// Answers `message` (after a random delay up to `wait`, for an ack or a nak), waiting for
/// the server to confirm, and says so in natscli's words unless the output is for scripts.
async fn settle(
    message: &rnats::jetstream::Message,
    seq: u64,
    answer: Answer,
    wait: Option<Duration>,
    output: Output,
) -> Result<(), CliError> {
    let kind = match answer {
        Answer::Nothing => return Ok(()),
        Answer::Ack => AckKind::Ack,
        Answer::Nak => AckKind::Nak(None),
        Answer::Term => AckKind::Term,
    };
    let delay = wait
        .filter(|_| answer != Answer::Term)
        .map(|most| most.mul_f64(fastrand::f64()));
    if let Some(delay) = delay {
        tokio::time::sleep(delay).await;
    }
    message
        .double_ack_with(kind)
        .await
        .map_err(CliError::js(format!("cannot answer message {seq}")))?;
    if output != Output::Human || (answer == Answer::Ack && delay.is_none()) {
        return Ok(());
    }
    match delay {
        Some(delay) => out::print(&format!("{} after {delay:.2?} delay\n", answer.done())),
        None => out::print(&format!("{}\n", answer.done())),
    }
}
