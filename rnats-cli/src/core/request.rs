//! `rnats req`: send a request and print the reply, or every reply that comes before the
//! timeout with `--replies`.

use std::time::Instant;

use clap::Args;
use futures_util::StreamExt;
use rnats::{Message, Request};

use super::show::Shown;
use super::template::Template;
use crate::conn::ConnArgs;
use crate::error::CliError;
use crate::out;

/// Options of `rnats req`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  rnats req time.now ''\n  \
    rnats req svc.echo 'hello {{Count}}' --count 3 -H Trace:1\n  \
    rnats req discover.all '' --replies 0 --timeout 1s")]
pub(crate) struct ReqArgs {
    /// Subject to send the request to.
    subject: String,
    /// Request body; read from standard input when absent or `-`. Templates as in `pub`.
    body: Option<String>,
    /// A header, KEY:VALUE; repeat for more.
    #[arg(long = "header", short = 'H', value_name = "KEY:VALUE")]
    headers: Vec<String>,
    /// Send this many requests, one after the other.
    #[arg(long, short = 'c', default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    count: u64,
    /// Collect this many replies per request (0: all that come within --timeout).
    #[arg(long, default_value_t = 1)]
    replies: u64,
    /// One JSON object per reply.
    #[arg(long)]
    json: bool,
    /// Print only the reply bodies.
    #[arg(long, conflicts_with = "json")]
    raw: bool,
}

/// Runs `rnats req`.
pub(crate) async fn run(args: ReqArgs, conn: &ConnArgs) -> Result<(), CliError> {
    let headers = crate::parse::headers(&args.headers)?;
    let body = match args.body.as_deref() {
        Some(text) if text != "-" => Some(Template::parse(text)?),
        _ => None,
    };
    let stdin_body = match body {
        Some(_) => None,
        None => Some(super::body_or_stdin(None)?),
    };
    let (client, settings) = conn.connect().await?;
    let timeout = settings.timeout;
    for n in 1..=args.count {
        let payload = match (&body, &stdin_body) {
            (Some(t), _) => bytes::Bytes::from(t.render(n)),
            (None, Some(b)) => b.clone(),
            (None, None) => bytes::Bytes::new(),
        };
        let started = Instant::now();
        if args.replies == 1 {
            let mut request = Request::new().payload(payload).timeout(Some(timeout));
            if let Some(h) = &headers {
                request = request.headers(h.clone());
            }
            let reply = client
                .send_request(args.subject.clone(), request)
                .await
                .map_err(|e| match e.kind() {
                    rnats::RequestErrorKind::TimedOut => CliError::NothingReceived {
                        what: "no reply",
                        timeout,
                    },
                    _ => CliError::Request(e),
                })?;
            print_reply(&args, &reply, started, 1)?;
            continue;
        }
        collect_replies(&client, &args, headers.as_ref(), payload, timeout, started).await?;
    }
    Ok(())
}

/// Sends one request with our own inbox as reply subject and prints the replies that come
/// until `--replies` of them did or `timeout` passed.
async fn collect_replies(
    client: &rnats::Client,
    args: &ReqArgs,
    headers: Option<&rnats::HeaderMap>,
    payload: bytes::Bytes,
    timeout: std::time::Duration,
    started: Instant,
) -> Result<(), CliError> {
    // Several replies: our own inbox, collected until enough came or time is up.
    let inbox = client.new_inbox();
    let mut replies = client.subscribe(inbox.clone()).await?;
    match headers {
        Some(h) => {
            client
                .publish_with_reply_and_headers(args.subject.clone(), inbox, h.clone(), payload)
                .await?
        }
        None => {
            client
                .publish_with_reply(args.subject.clone(), inbox, payload)
                .await?
        }
    }
    client.flush().await?;
    let deadline = tokio::time::Instant::now() + timeout;
    let mut got = 0u64;
    loop {
        match tokio::time::timeout_at(deadline, replies.next()).await {
            Ok(Some(reply)) if reply.status.is_some_and(|s| s.as_u16() == 503) => {
                return Err(CliError::Request(rnats::RequestError::new(
                    rnats::RequestErrorKind::NoResponders,
                )));
            }
            Ok(Some(reply)) => {
                got += 1;
                print_reply(args, &reply, started, got)?;
                if got == args.replies {
                    break;
                }
            }
            Ok(None) => return Err(CliError::SubscriptionEnded),
            Err(_) => break,
        }
    }
    if got == 0 {
        return Err(CliError::NothingReceived {
            what: "no reply",
            timeout,
        });
    }
    Ok(())
}

fn print_reply(args: &ReqArgs, reply: &Message, started: Instant, n: u64) -> Result<(), CliError> {
    let shown = Shown {
        subject: reply.subject.as_str(),
        reply: None,
        headers: reply.headers.as_ref(),
        payload: &reply.payload,
    };
    if args.json {
        let mut object = shown.json();
        object.insert(
            "rtt_us".into(),
            serde_json::Value::from(started.elapsed().as_micros() as u64),
        );
        out::json(&object)
    } else if args.raw {
        out::print_bytes(&reply.payload)?;
        out::print("\n")
    } else {
        let title = format!(
            "[#{n}] Received with rtt {}",
            crate::stats::human::latency_us(started.elapsed().as_secs_f64() * 1e6)
        );
        out::print(&shown.human(&title))
    }
}
