//! `rnats reply`: answer requests on a subject with a fixed body, the request itself, or
//! what a command prints.

use std::io::Write;
use std::process::{Command, Stdio};

use bytes::Bytes;
use clap::Args;
use futures_util::StreamExt;

use super::show::Shown;
use super::template::{Template, Use};
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
    /// Reply body (templates as in `pub`, and {{Request}}, the request's body); without it
    /// the request is echoed back.
    body: Option<String>,
    /// Run this shell command per request, the request body on its standard input; its
    /// standard output is the reply. `{{0}}`, `{{1}}`, ... in it are the request subject's
    /// tokens and {{Request}} its body (each put in as one shell word), other templates as in
    /// the body; the command sees NATS_REQUEST_SUBJECT and NATS_REQUEST_BODY, as in natscli.
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
    /// A header to send with each reply, KEY:VALUE; repeat for more.
    #[arg(long = "header", short = 'H', value_name = "KEY:VALUE")]
    headers: Vec<String>,
    /// Print each request as a JSON object.
    #[arg(long, short = 'j')]
    json: bool,
}

/// Runs `rnats reply`.
pub(crate) async fn run(args: ReplyArgs, conn: &ConnArgs) -> Result<(), CliError> {
    let extra_headers = crate::parse::headers(&args.headers)?;
    let body = args
        .body
        .as_deref()
        .map(|body| Template::lenient(body, "body", Use::Reply));
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
    let mut answered = 0u64;
    while let Some(request) = requests.next().await {
        answered += 1;
        let shown = Shown {
            subject: request.subject.as_str(),
            reply: request.reply.as_ref().map(|r| r.as_str()),
            headers: request.headers.as_ref(),
            payload: &request.payload,
        };
        if args.json {
            out::json(&shown.json())?;
        } else {
            out::print(&shown.human(&format!("[#{answered}] Received on {:?}", shown.subject)))?;
        }
        let Some(reply_to) = request.reply.clone() else {
            eprintln!("[#{answered}] no reply subject, not answered");
            continue;
        };
        if let Some(max) = args.sleep.filter(|max| !max.is_zero()) {
            tokio::time::sleep(max.mul_f64(fastrand::f64())).await;
        }
        let (payload, echo_headers) = match (&body, &args.command) {
            (Some(template), _) => (
                Bytes::from(template.render_reply(answered, &request.payload)),
                None,
            ),
            (None, Some(command)) => {
                let command = command_line(command, &request, answered);
                let output = run_command(&command, request.subject.as_str(), &request.payload);
                (output.await?, None)
            }
            (None, None) => (request.payload.clone(), request.headers.clone()),
        };
        match extra_headers.clone().or(echo_headers) {
            Some(headers) => {
                client
                    .publish_with_headers(reply_to, headers, payload)
                    .await?
            }
            None => client.publish(reply_to, payload).await?,
        }
        client.flush().await?;
        if limit == Some(answered) {
            return Ok(());
        }
    }
    Err(CliError::SubscriptionEnded)
}

/// The shell command for request number `n`: `command` with the subject's tokens put in
/// for `{{0}}`, `{{1}}`, ..., then its templates expanded, `{{Request}}` being the request's
/// body, in that order, as natscli does. What comes from the request goes in as one shell
/// word, so a requester cannot make the shell run something else.
fn command_line(command: &str, request: &rnats::Message, n: u64) -> String {
    let command = with_subject_tokens(command, request.subject.as_str());
    let body = shell_word(&String::from_utf8_lossy(&request.payload)).into_owned();
    Template::lenient(&command, "command", Use::Reply).render_reply(n, body.as_bytes())
}

/// `command` with each `{{N}}` replaced by token N (from 0) of `subject`, as natscli does.
fn with_subject_tokens(command: &str, subject: &str) -> String {
    subject
        .split('.')
        .enumerate()
        .fold(command.to_owned(), |command, (i, token)| {
            command.replace(&format!("{{{{{i}}}}}"), &shell_word(token))
        })
}

/// `text` as one word of `sh`: as it is when it holds only characters the shell takes
/// literally, else in single quotes (a quote inside written `'\''`).
fn shell_word(text: &str) -> std::borrow::Cow<'_, str> {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-.,:/=@%+".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        return text.into();
    }
    format!("'{}'", text.replace('\'', r"'\''")).into()
}

/// Runs `command` through the shell with the request body on its standard input and in
/// NATS_REQUEST_BODY, and the subject in NATS_REQUEST_SUBJECT; its standard output is the
/// reply. A command that fails still answers, with what it printed.
async fn run_command(command: &str, subject: &str, body: &Bytes) -> Result<Bytes, CliError> {
    let command = command.to_owned();
    let subject = subject.to_owned();
    let input = body.clone();
    let failed = {
        let command = command.clone();
        move |source| CliError::Command { command, source }
    };
    tokio::task::spawn_blocking(move || {
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(&command)
            .env("NATS_REQUEST_SUBJECT", &subject)
            .env(
                "NATS_REQUEST_BODY",
                String::from_utf8_lossy(&input).as_ref(),
            )
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        if let Some(mut stdin) = child.stdin.take() {
            // A command that does not read its input closes the pipe early; that is fine.
            let _ = stdin.write_all(&input);
        }
        let output = child.wait_with_output()?;
        Ok(Bytes::from(output.stdout))
    })
    .await?
    .map_err(failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subject_tokens_fill_the_command() {
        assert_eq!(
            with_subject_tokens("curl wttr.in/{{1}}?{{0}}{{1}}", "weather.london"),
            "curl wttr.in/london?weatherlondon"
        );
        assert_eq!(with_subject_tokens("echo {{5}}", "a.b"), "echo {{5}}");
        assert_eq!(with_subject_tokens("echo {{1}}", "a.$(id)"), "echo '$(id)'");
    }

    #[test]
    fn what_comes_from_a_request_is_one_shell_word() {
        assert_eq!(shell_word("london"), "london");
        assert_eq!(shell_word(""), "''");
        assert_eq!(shell_word("a b; rm x"), "'a b; rm x'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        let request = rnats::Message {
            subject: "svc.x".into(),
            reply: None,
            payload: Bytes::from_static(b"hi there"),
            headers: None,
            status: None,
            description: None,
            length: 0,
        };
        assert_eq!(
            command_line("echo {{1}} req={{.Request}} n={{Count}}", &request, 3),
            "echo x req='hi there' n=3"
        );
    }
}
