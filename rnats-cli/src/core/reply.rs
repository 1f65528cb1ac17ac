//! `rnats reply`: answer requests on a subject with a fixed body, the request itself, or
//! what a command prints.

use bytes::Bytes;
use clap::Args;
use futures_util::StreamExt;
use rnats::HeaderMap;

use super::pipe;
use super::show::Shown;
use super::template::{HeaderTemplates, Template, Use};
use crate::conn::ConnArgs;
use crate::error::CliError;
use crate::out;

/// Options of `rnats reply`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  rnats reply svc.echo\n  \
    rnats reply time.now --command date\n  \
    rnats reply greet 'hello #{{Count}}' --count 1\n  \
    rnats reply svc.echo 'got {{Request}}'\n  \
    rnats reply 'weather.>' --command 'curl -s wttr.in/{{1}}?format=3'")]
pub(crate) struct ReplyArgs {
    /// Subject to answer on; wildcards allowed.
    subject: String,
    /// Reply body (templates as in `pub`, and {{Request}}, the request's body; {{Count}}
    /// counts requests from 0, as natscli's does); without it the request is echoed back,
    /// headers too, with NATS-Reply-Counter added.
    body: Option<String>,
    /// Run this command per request, the request body on its standard input; its standard
    /// output is the reply. It is split into words as a shell would (quotes kept together)
    /// and run without a shell, as natscli runs it: no pipes or `;`. `{{0}}`, `{{1}}`, ... in
    /// it are the request subject's tokens and {{Request}} its body, other templates as in
    /// the body, filled in within the word that holds them (a request never adds words);
    /// the command sees NATS_REQUEST_SUBJECT and NATS_REQUEST_BODY, as in natscli (the body
    /// only when it fits in a variable: up to 128 KiB, no NUL byte).
    #[arg(long, value_name = "CMD", conflicts_with = "body")]
    command: Option<String>,
    /// Echo each request back (the default without a body or command).
    #[arg(long, conflicts_with_all = ["body", "command"])]
    echo: bool,
    /// Wait a random time up to this long before each reply (natscli's `--sleep`).
    #[arg(long, value_name = "MAX", value_parser = crate::conn::parse_duration)]
    sleep: Option<std::time::Duration>,
    /// Queue group to answer in, so several responders share the load.
    #[arg(
        long,
        short = 'q',
        default_value = "NATS-RPLY-22",
        value_name = "GROUP"
    )]
    queue: String,
    /// Exit after this many requests (0: no limit).
    #[arg(long, short = 'c')]
    count: Option<u64>,
    /// A header to send with each reply, KEY:VALUE (the value may hold templates, such as
    /// {{Count}}); repeat for more.
    #[arg(long = "header", short = 'H', value_name = "KEY:VALUE")]
    headers: Vec<String>,
    /// Print each request as a JSON object.
    #[arg(long, short = 'j')]
    json: bool,
}

/// Runs `rnats reply`.
pub(crate) async fn run(args: ReplyArgs, conn: &ConnArgs) -> Result<(), CliError> {
    let extra_headers = HeaderTemplates::new(&args.headers)?;
    let body = args
        .body
        .as_deref()
        .map(|body| Template::lenient(body, "body", Use::Reply));
    let command = args.command.as_deref().map(command_words).transpose()?;
    let limit = args.count.filter(|n| *n > 0);
    let (client, _) = conn.connect().await?;
    let mut requests = client
        .queue_subscribe(args.subject.clone(), args.queue.clone())
        .await?;
    client.flush().await?;
    eprintln!(
        "Listening on {:?} in queue group {:?}",
        args.subject, args.queue
    );
    // Requests answered so far, which is also the next one's number: natscli counts a
    // reply's {{Count}}, its header templates and its NATS-Reply-Counter from 0.
    let mut answered = 0u64;
    while let Some(request) = requests.next().await {
        let n = answered;
        let shown = Shown {
            subject: request.subject.as_str(),
            reply: request.reply.as_ref().map(|r| r.as_str()),
            headers: request.headers.as_ref(),
            payload: &request.payload,
        };
        if args.json {
            out::json(&shown.json())?;
        } else {
            out::print(&shown.human(&format!("[#{n}] Received on {:?}", shown.subject)))?;
        }
        let Some(reply_to) = request.reply.clone() else {
            eprintln!("[#{n}] no reply subject, not answered");
            continue;
        };
        if let Some(max) = args.sleep.filter(|max| !max.is_zero()) {
            tokio::time::sleep(max.mul_f64(fastrand::f64())).await;
        }
        let mut headers = extra_headers.render(n)?;
        let payload = match (&body, &command) {
            (Some(template), _) => Bytes::from(template.render_reply(n, &request.payload)),
            (None, Some(words)) => {
                let argv = command_argv(words, &request, n);
                run_command(argv, &request, n).await
            }
            (None, None) => {
                headers = Some(echoed_headers(headers, request.headers.as_ref(), n));
                request.payload.clone()
            }
        };
        match headers {
            Some(headers) => {
                client
                    .publish_with_headers(reply_to, headers, payload)
                    .await?
            }
            None => client.publish(reply_to, payload).await?,
        }
        client.flush().await?;
        answered += 1;
        if limit == Some(answered) {
            return Ok(());
        }
    }
    Err(CliError::SubscriptionEnded)
}

/// An echo's headers, as natscli sends them: the `--header` ones, then the request's own,
/// then `NATS-Reply-Counter` with the request's number.
fn echoed_headers(extra: Option<HeaderMap>, request: Option<&HeaderMap>, n: u64) -> HeaderMap {
    let mut headers = extra.unwrap_or_default();
    for (name, values) in request.into_iter().flatten() {
        for value in values {
            headers.append(name.clone(), value.clone());
        }
    }
    headers.append("NATS-Reply-Counter", n.to_string());
    headers
}

/// `--command` split into words once ([`pipe::words`]), before any request fills them in.
fn command_words(command: &str) -> Result<Vec<String>, CliError> {
    pipe::words(command).map_err(|bad| match bad {
        pipe::BadCommand::Empty => CliError::Usage("--command is empty"),
        pipe::BadCommand::OpenQuote => CliError::InvalidArgument {
            what: "--command",
            given: command.to_owned(),
            reason: bad.to_string(),
        },
    })
}

/// The program and arguments for request number `n`: in each word, the subject's tokens put
/// in for `{{0}}`, `{{1}}`, ..., then its templates expanded, `{{Request}}` being the
/// request's body, in that order, as natscli does.
fn command_argv(words: &[String], request: &rnats::Message, n: u64) -> Vec<String> {
    words
        .iter()
        .map(|word| {
            let word = with_subject_tokens(word, request.subject.as_str());
            Template::lenient(&word, "command", Use::Reply).render_reply(n, &request.payload)
        })
        .collect()
}

/// `word` with each `{{N}}` replaced by token N (from 0) of `subject`, as natscli does.
fn with_subject_tokens(word: &str, subject: &str) -> String {
    subject
        .split('.')
        .enumerate()
        .fold(word.to_owned(), |word, (i, token)| {
            word.replace(&format!("{{{{{i}}}}}"), token)
        })
}

/// Runs the program `argv[0]` with the rest as its arguments, no shell between, the request
/// body on its standard input and in NATS_REQUEST_BODY (left out when the body cannot be an
/// environment variable: over 128 KiB, or holding a NUL byte), and the subject in
/// NATS_REQUEST_SUBJECT; its standard output is the reply. A command that fails still
/// answers, with what it printed; one that cannot be run at all answers with an empty body,
/// and the responder goes on, as natscli's does.
async fn run_command(argv: Vec<String>, request: &rnats::Message, n: u64) -> Bytes {
    let command = argv.join(" ");
    let variables = [
        pipe::variable("NATS_REQUEST_SUBJECT", request.subject.as_bytes()),
        pipe::variable("NATS_REQUEST_BODY", &request.payload),
    ]
    .into_iter()
    .flatten()
    .collect();
    match pipe::run(argv, variables, request.payload.clone()).await {
        Ok(output) => Bytes::from(output.stdout),
        Err(error) => {
            eprintln!("[#{n}] cannot run {command:?}: {error}; answered with an empty body");
            Bytes::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(subject: &str, body: &'static [u8]) -> rnats::Message {
        rnats::Message {
            subject: subject.into(),
            reply: None,
            payload: Bytes::from_static(body),
            headers: None,
            status: None,
            description: None,
            length: 0,
        }
    }

    #[test]
    fn subject_tokens_fill_a_word() {
        assert_eq!(
            with_subject_tokens("wttr.in/{{1}}?{{0}}{{1}}", "weather.london"),
            "wttr.in/london?weatherlondon"
        );
        assert_eq!(with_subject_tokens("{{5}}", "a.b"), "{{5}}");
    }

    #[test]
    fn a_command_is_split_once_and_filled_in_word_by_word() {
        let words = command_words("echo {{1}} 'req: {{.Request}}' n={{Count}}").unwrap();
        assert_eq!(words, ["echo", "{{1}}", "req: {{.Request}}", "n={{Count}}"]);
        let argv = command_argv(&words, &request("svc.x", b"hi there"), 3);
        assert_eq!(argv, ["echo", "x", "req: hi there", "n=3"]);
    }

    #[test]
    fn a_request_never_adds_words_or_reaches_a_shell() {
        let words = command_words("echo {{1}} {{Request}}").unwrap();
        // A token that is a placeholder itself, and a body a shell would run: each stays
        // inside the word it was put in.
        let argv = command_argv(&words, &request("svc.{{Request}}", b"a b; id $(id)"), 1);
        assert_eq!(argv, ["echo", "a b; id $(id)", "a b; id $(id)"]);
        let argv = command_argv(&words, &request("svc.x';y", b"'\"; rm -rf x"), 1);
        assert_eq!(argv, ["echo", "x';y", "'\"; rm -rf x"]);
    }

    #[test]
    fn an_unclosed_quote_or_an_empty_command_is_refused() {
        assert!(matches!(
            command_words("echo 'oops"),
            Err(CliError::InvalidArgument { .. })
        ));
        assert!(matches!(command_words("  "), Err(CliError::Usage(_))));
    }
}
