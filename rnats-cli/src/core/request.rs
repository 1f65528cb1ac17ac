//! `rnats req`: send a request and print the reply, or every reply that comes before the
//! timeout with `--replies`. As natscli's, the human output keeps stdout for the reply bodies
//! (`rnats req svc '' | jq` works): the `Received with rtt` line and the headers go to
//! stderr.

use std::time::Instant;

use clap::Args;
use futures_util::StreamExt;

use super::messages::{Message, Messages, SendOn};
use super::pipe::Translate;
use super::show::Shown;
use super::template::TemplateFlags;
use crate::conn::ConnArgs;
use crate::error::CliError;
use crate::out;

/// Options of `rnats req`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  rnats req time.now ''\n  \
    rnats req svc.echo 'hello {{Count}}' --count 3 -H Trace:1\n  \
    rnats req discover.all '' --replies 0 --timeout 1s\n  \
    rnats req scatter.count '' --replies 0 --reply-timeout 100ms --wait-for-empty")]
pub(crate) struct ReqArgs {
    /// Subject to send the request to; may hold templates such as {{Count}}.
    subject: String,
    #[command(flatten)]
    flags: RequestFlags,
}

/// What `rnats req` takes after its subject, which `service request` takes too.
#[derive(Debug, Args)]
pub(crate) struct RequestFlags {
    /// Request body; read from standard input when absent or `-` (`service request`: when
    /// something is piped in, else an empty body). Templates as in `pub`.
    body: Option<String>,
    /// A header, KEY:VALUE; the value may hold templates such as {{Count}}; repeat for more.
    #[arg(long = "header", short = 'H', value_name = "KEY:VALUE")]
    headers: Vec<String>,
    /// Send this many requests, one after the other.
    #[arg(long, short = 'c', default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    count: u64,
    /// Collect this many replies per request (0: all that come within --timeout).
    #[arg(long, default_value_t = 1)]
    replies: u64,
    /// With more than one reply: the longest wait between two replies before the request is
    /// over.
    #[arg(long, default_value = "300ms", value_parser = crate::parse::duration)]
    reply_timeout: std::time::Duration,
    /// With more than one reply: stop at the first empty reply (ADR-47's sentinel).
    #[arg(long)]
    wait_for_empty: bool,
    /// One JSON object per reply.
    #[arg(long, short = 'j')]
    json: bool,
    /// Print only the reply bodies.
    #[arg(long, short = 'r', conflicts_with = "json")]
    raw: bool,
    /// When to send what standard input gives: at its end, or each line as a request.
    #[arg(long, value_enum, default_value_t = SendOn::Eof)]
    send_on: SendOn,
    /// Read the body from standard input even when one is given (natscli's flag).
    #[arg(long)]
    force_stdin: bool,
    /// Show each reply's body as this command prints it, the body on its standard input
    /// (split as a shell would, run without one; {{Subject}} is the reply's subject).
    #[arg(long, value_name = "CMD", value_parser = Translate::parse)]
    translate: Option<Translate>,
    #[command(flatten)]
    templates: TemplateFlags,
}

impl RequestFlags {
    /// natscli's `service request`: no body given and nothing piped in is an empty request,
    /// not a wait for a terminal's input.
    pub(crate) fn empty_unless_piped(&mut self) {
        if self.body.is_none()
            && !self.force_stdin
            && std::io::IsTerminal::is_terminal(&std::io::stdin())
        {
            self.body = Some(String::new());
        }
    }
}

/// Runs `rnats req`.
pub(crate) async fn run(args: ReqArgs, conn: &ConnArgs) -> Result<(), CliError> {
    let mut requests = messages(&args.subject, &args.flags)?;
    let (client, settings) = conn.connect().await?;
    send(&client, settings.timeout, &mut requests, &args.flags).await
}

/// The requests `flags` make to `subject` (standard input read here, if it is the body).
pub(crate) fn messages(subject: &str, flags: &RequestFlags) -> Result<Messages, CliError> {
    let body = if flags.force_stdin {
        None
    } else {
        flags.body.as_deref()
    };
    Messages::new(
        subject,
        body,
        &flags.headers,
        flags.count,
        flags.send_on,
        flags.templates.on(),
    )
}

/// Sends `requests` one after the other on `client`, printing their replies.
pub(crate) async fn send(
    client: &rnats::Client,
    timeout: std::time::Duration,
    requests: &mut Messages,
    args: &RequestFlags,
) -> Result<(), CliError> {
    // Replies are numbered across the whole run: `--count 3` shows #1, #2 and #3.
    let mut received = 0u64;
    while let Some(Message {
        subject,
        payload,
        headers,
    }) = requests.next_message()?
    {
        let started = Instant::now();
        // Every request gathers its replies on an inbox of its own, as natscli's does, not
        // on the connection's shared one: a reply that comes back on another subject (a
        // pull consumer's `$JS.API.CONSUMER.MSG.NEXT` answers with the stored message's
        // subject) still reaches it.
        let replies = Replies {
            subject,
            headers,
            payload,
            timeout,
            started,
        };
        if let Answered::Nobody = collect_replies(client, args, replies, &mut received).await? {
            // natscli's words, and its exit code: nobody listening is not a failure.
            eprintln!("No responders are available");
            return Ok(());
        }
    }
    Ok(())
}

/// How a request went.
enum Answered {
    /// Replies came.
    Replied,
    /// The server said nobody subscribes to the subject (a 503 status).
    Nobody,
}

/// Sends one request that may have many replies (ADR-47's request-many) and prints them as
/// they come, until `--replies` of them did, `--reply-timeout` passed between two of them, an
/// empty one came with `--wait-for-empty`, or `timeout` passed in all. `received` counts
/// the replies of the whole run, for their numbers.
async fn collect_replies(
    client: &rnats::Client,
    args: &RequestFlags,
    request: Replies,
    received: &mut u64,
) -> Result<Answered, CliError> {
    let Replies {
        subject,
        headers,
        payload,
        timeout,
        started,
    } = request;
    let mut request = client
        .request_many(subject, payload)
        .timeout(timeout)
        .stall_wait(args.reply_timeout);
    if let Ok(max) = usize::try_from(args.replies)
        && max > 0
    {
        request = request.max_messages(max);
    }
    if args.wait_for_empty {
        request = request.sentinel_empty();
    }
    if let Some(h) = headers {
        request = request.headers(h);
    }
    let mut replies = request.await.map_err(CliError::Request)?;
    // Read on a task of its own, each reply timed as it arrives, so that a slow
    // --translate neither counts against the gathering's waits nor shows in the rtt.
    let (arrived, mut taken) = tokio::sync::mpsc::unbounded_channel();
    let reader = tokio::spawn(async move {
        while let Some(reply) = replies.next().await {
            if arrived.send((reply, started.elapsed())).is_err() {
                break;
            }
        }
    });
    // Stop the reader when this returns early (an error, nobody listening).
    let _reader = AbortOnDrop(reader);
    let mut got = 0u64;
    while let Some((reply, rtt)) = taken.recv().await {
        let mut reply = match reply {
            Ok(reply) => reply,
            Err(e) if e.kind() == rnats::RequestErrorKind::NoResponders => {
                return Ok(Answered::Nobody);
            }
            Err(e) => return Err(CliError::Request(e)),
        };
        got += 1;
        *received += 1;
        if let Some(translate) = &args.translate {
            reply.payload = translate
                .body(&reply.payload, reply.subject.as_str(), "")
                .await;
        }
        print_reply(args, &reply, rtt, *received)?;
    }
    if got == 0 {
        return Err(CliError::NothingReceived {
            what: "no reply",
            timeout,
        });
    }
    Ok(Answered::Replied)
}

/// Aborts its task when dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// One request of `collect_replies`: what it sends and when it started.
struct Replies {
    subject: String,
    headers: Option<rnats::HeaderMap>,
    payload: bytes::Bytes,
    timeout: std::time::Duration,
    started: Instant,
}

fn print_reply(
    args: &RequestFlags,
    reply: &rnats::Message,
    rtt: std::time::Duration,
    n: u64,
) -> Result<(), CliError> {
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
            serde_json::Value::from(rtt.as_micros() as u64),
        );
        out::json(&object)
    } else {
        if !args.raw {
            // On stderr, as natscli logs them: stdout holds the bodies alone.
            eprint!("{}", received_lines(&shown, n, rtt));
        }
        out::print_bytes(&reply.payload)?;
        out::print("\n")
    }
}

/// The lines natscli logs before a reply's body: `[#N] Received with rtt 1.2ms`, then
/// `Key: value` per header and a blank line after them.
fn received_lines(shown: &Shown<'_>, n: u64, rtt: std::time::Duration) -> String {
    let mut text = format!(
        "[#{n}] Received with rtt {}\n",
        crate::stats::human::latency_us(rtt.as_secs_f64() * 1e6)
    );
    if let Some(headers) = shown.headers.filter(|h| !h.is_empty()) {
        for (name, values) in headers.iter() {
            for value in values {
                text.push_str(&format!("{}: {}\n", name.as_str(), value.as_str()));
            }
        }
        text.push('\n');
    }
    text
}
