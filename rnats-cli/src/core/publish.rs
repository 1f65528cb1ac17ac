//! `rnats pub`: publish one message or `--count` of them, templated, then flush; with
//! `--jetstream`, `--atomic` or a schedule flag, to a stream (see [`super::js_publish`]).

use std::io::IsTerminal;

use std::time::Duration;

use clap::Args;

use super::js_publish::{self, AckOutput};
use super::messages::{Messages, SendOn};
use super::schedule_flags::{ScheduleFlags, Scheduling};
use super::template::TemplateFlags;
use crate::conn::{ConnArgs, parse_duration};
use crate::error::CliError;

/// Options of `rnats pub`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  rnats pub orders.new '{\"id\": 1}'\n  \
    rnats pub 'orders.{{Count}}' 'order {{Count}} at {{TimeStamp}}' --count 10\n  \
    echo hello | rnats pub greet -H Source:shell\n  \
    rnats pub orders.new '{\"id\": 1}' --jetstream\n  \
    rnats pub 'orders.{{Count}}' --atomic --send-on newline < batch.txt\n  \
    rnats pub schedules.daily report --schedule-cron '0 0 6 * * *' --schedule-dest reports.run")]
pub(crate) struct PubArgs {
    /// Subject to publish to; may hold templates such as {{Count}}.
    subject: String,
    /// Message body; read from standard input when absent or `-`. Templates: {{Count}},
    /// {{TimeStamp}}, {{Unix}}, {{UnixNano}}, {{Time}}, {{ID}}, {{Random MIN MAX}}.
    body: Option<String>,
    /// Publish this many messages.
    #[arg(long, short = 'c', default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    count: u64,
    /// A header, KEY:VALUE; the value may hold templates such as {{Count}}; repeat for more.
    #[arg(long = "header", short = 'H', value_name = "KEY:VALUE")]
    headers: Vec<String>,
    /// Reply subject to send with the message.
    #[arg(long, value_name = "SUBJECT", conflicts_with_all = ["jetstream", "atomic"])]
    reply: Option<String>,
    /// Print nothing on success.
    #[arg(long, short = 'q')]
    quiet: bool,
    /// Publish to JetStream: wait for each message's ack and print it.
    #[arg(long, short = 'J')]
    jetstream: bool,
    /// Publish every message as one atomic batch (ADR-50; implies --jetstream): all are
    /// stored or none. The messages are standard input's lines (or --count of the body).
    #[arg(long, conflicts_with_all = ["cancel_schedule", "sleep"])]
    atomic: bool,
    /// When to send what standard input gives: at its end, or each line as a message.
    #[arg(long, value_enum, default_value_t = SendOn::Eof)]
    send_on: SendOn,
    /// Read the body from standard input even when one is given (natscli's flag).
    #[arg(long)]
    force_stdin: bool,
    /// Wait this long between messages.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    sleep: Option<Duration>,
    /// Print each JetStream ack as JSON.
    #[arg(long, short = 'j')]
    json: bool,
    #[command(flatten)]
    templates: TemplateFlags,
    #[command(flatten)]
    schedule: ScheduleFlags,
}

/// Runs `rnats pub`.
pub(crate) async fn run(args: PubArgs, conn: &ConnArgs) -> Result<(), CliError> {
    let scheduling = args.schedule.scheduling()?;
    if args.atomic && !matches!(scheduling, Scheduling::None) {
        return Err(CliError::Usage(
            "atomic batch publishing does not support schedules",
        ));
    }
    let body = if args.force_stdin {
        None
    } else {
        args.body.as_deref()
    };
    // An atomic batch from standard input is its lines, with or without --send-on newline.
    let send_on = if args.atomic {
        SendOn::Newline
    } else {
        args.send_on
    };
    let messages = Messages::new(
        &args.subject,
        body,
        &args.headers,
        args.count,
        send_on,
        args.templates.on(),
    )?;
    let output = AckOutput {
        json: args.json,
        quiet: args.quiet,
    };
    if args.atomic || args.jetstream || !matches!(scheduling, Scheduling::None) {
        let js = crate::conn::jetstream(conn).await?;
        if args.atomic {
            let messages = messages.collect()?;
            return js_publish::publish_atomic(&js, messages, output).await;
        }
        return js_publish::publish(&js, messages, &scheduling, args.sleep, output).await;
    }
    publish_core(&args, messages, conn).await
}

/// Publishes on Core NATS, without acks, then flushes.
async fn publish_core(
    args: &PubArgs,
    mut messages: Messages,
    conn: &ConnArgs,
) -> Result<(), CliError> {
    let (client, _) = conn.connect().await?;
    let bar = progress_bar(args.count, args.quiet);
    // natscli reports each message of a short run and only sums up a long one.
    let each = !args.quiet && args.count <= EACH_REPORTED;
    let mut bytes = 0usize;
    let mut sent = 0u64;
    let mut subjects: Option<(String, String)> = None;
    while let Some(message) = messages.next_message()? {
        if let (Some(pause), true) = (args.sleep, sent > 0) {
            client.flush().await?;
            tokio::time::sleep(pause).await;
        }
        sent += 1;
        if sent.is_multiple_of(PROGRESS_STEP) {
            bar.set_position(sent);
        }
        let (subject, payload, headers) = (message.subject, message.payload, message.headers);
        let size = payload.len();
        bytes += size;
        match &mut subjects {
            None => subjects = Some((subject.clone(), subject.clone())),
            Some((_, last)) => last.clone_from(&subject),
        }
        let shown = each.then(|| subject.clone());
        match (&args.reply, headers) {
            (None, None) => client.publish(subject, payload).await?,
            (None, Some(h)) => client.publish_with_headers(subject, h, payload).await?,
            (Some(r), None) => {
                client
                    .publish_with_reply(subject, r.clone(), payload)
                    .await?
            }
            (Some(r), Some(h)) => {
                client
                    .publish_with_reply_and_headers(subject, r.clone(), h, payload)
                    .await?
            }
        }
        if let Some(subject) = shown {
            eprintln!("Published {size} bytes to {subject:?}");
        }
    }
    client.flush().await?;
    bar.finish_and_clear();
    if !args.quiet
        && !each
        && let Some((first, last)) = subjects
    {
        let to = if first == last {
            format!("{first:?}")
        } else {
            format!("{first:?} .. {last:?}")
        };
        eprintln!(
            "Published {} messages ({}) to {to}",
            crate::stats::human::count(sent),
            crate::stats::human::size(bytes),
        );
    }
    Ok(())
}

/// Runs of up to this many messages report each one (`Published 5 bytes to "x"`), as
/// natscli does; longer ones print one summary line instead.
const EACH_REPORTED: u64 = 20;

/// Publishes between progress bar updates: often enough to move smoothly, rarely enough to
/// cost nothing next to the publishes.
const PROGRESS_STEP: u64 = 1024;

/// A bar on stderr for long runs (`--count` of 10,000 or more) when stderr is a terminal;
/// hidden otherwise, and with `--quiet`.
fn progress_bar(count: u64, quiet: bool) -> indicatif::ProgressBar {
    if quiet || count < 10_000 || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(count);
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("{bar:40} {human_pos}/{human_len} messages {eta}")
    {
        bar.set_style(style);
    }
    bar
}
