//! `rnats pub`: publish one message or `--count` of them, templated, then flush.

use std::io::IsTerminal;

use bytes::Bytes;
use clap::Args;

use super::template::Template;
use crate::conn::ConnArgs;
use crate::error::CliError;

/// Options of `rnats pub`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  rnats pub orders.new '{\"id\": 1}'\n  \
    rnats pub 'orders.{{Count}}' 'order {{Count}} at {{TimeStamp}}' --count 10\n  \
    echo hello | rnats pub greet -H Source:shell")]
pub(crate) struct PubArgs {
    /// Subject to publish to; may hold templates such as {{Count}}.
    subject: String,
    /// Message body; read from standard input when absent or `-`. Templates: {{Count}},
    /// {{TimeStamp}}, {{Unix}}, {{UnixNano}}, {{Time}}, {{ID}}, {{Random MIN MAX}}.
    body: Option<String>,
    /// Publish this many messages.
    #[arg(long, short = 'c', default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    count: u64,
    /// A header, KEY:VALUE; repeat for more.
    #[arg(long = "header", short = 'H', value_name = "KEY:VALUE")]
    headers: Vec<String>,
    /// Reply subject to send with the message.
    #[arg(long, value_name = "SUBJECT")]
    reply: Option<String>,
    /// Print nothing on success.
    #[arg(long, short = 'q')]
    quiet: bool,
}

/// Runs `rnats pub`.
pub(crate) async fn run(args: PubArgs, conn: &ConnArgs) -> Result<(), CliError> {
    let headers = crate::parse::headers(&args.headers)?;
    let subject = Template::parse(&args.subject)?;
    let body = match args.body.as_deref() {
        Some(text) if text != "-" => Body::Template(Template::parse(text)?),
        _ => Body::Bytes(super::body_or_stdin(None)?),
    };
    let (client, _) = conn.connect().await?;
    let bar = progress_bar(args.count, args.quiet);
    let mut bytes = 0usize;
    for n in 1..=args.count {
        if n % PROGRESS_STEP == 0 {
            bar.set_position(n);
        }
        let subject = subject.render(n);
        let payload = match &body {
            Body::Template(t) => Bytes::from(t.render(n)),
            Body::Bytes(b) => b.clone(),
        };
        bytes += payload.len();
        match (&args.reply, &headers) {
            (None, None) => client.publish(subject, payload).await?,
            (None, Some(h)) => {
                client
                    .publish_with_headers(subject, h.clone(), payload)
                    .await?
            }
            (Some(r), None) => {
                client
                    .publish_with_reply(subject, r.clone(), payload)
                    .await?
            }
            (Some(r), Some(h)) => {
                client
                    .publish_with_reply_and_headers(subject, r.clone(), h.clone(), payload)
                    .await?
            }
        }
    }
    client.flush().await?;
    bar.finish_and_clear();
    if !args.quiet && std::io::stderr().is_terminal() {
        let what = if args.count == 1 {
            "1 message".to_owned()
        } else {
            format!("{} messages", crate::stats::human::count(args.count))
        };
        eprintln!(
            "Published {what} ({}) to {:?}",
            crate::stats::human::size(bytes),
            args.subject
        );
    }
    Ok(())
}

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

/// The body: a template rendered per message, or bytes from standard input as they are.
enum Body {
    Template(Template),
    Bytes(Bytes),
}
