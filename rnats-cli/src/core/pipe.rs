//! Running a command over a message body: `reply --command` answers with what it prints, and
//! `--translate` shows what it prints instead of the body; the body goes in on its standard
//! input.

use std::ffi::OsString;
use std::io::Write;
use std::process::{Command, Output, Stdio};

use bytes::Bytes;

/// The longest value an environment variable may have on Linux (`MAX_ARG_STRLEN`, 32 pages
/// of 4 KiB, counting `NAME=` and the closing NUL); a longer one makes the program fail to
/// start at all (E2BIG).
const LONGEST_VARIABLE: usize = 32 * 4096;

/// `value` as the variable `name` of a program to start, if it can be one: a body that
/// holds a NUL byte, or is too long, cannot (the program then starts without it). On Unix
/// the bytes go as they are; elsewhere as text, invalid UTF-8 replaced.
pub(crate) fn variable(name: &'static str, value: &[u8]) -> Option<(&'static str, OsString)> {
    if value.contains(&0) {
        return None;
    }
    #[cfg(unix)]
    let value = <OsString as std::os::unix::ffi::OsStringExt>::from_vec(value.to_vec());
    #[cfg(not(unix))]
    let value = OsString::from(String::from_utf8_lossy(value).into_owned());
    // `NAME=VALUE` and its closing NUL, measured as passed (off Unix a replacement
    // character is longer than the byte it replaces).
    (name.len() + 1 + value.len() < LONGEST_VARIABLE).then_some((name, value))
}

/// Runs the program `argv[0]` with the rest as its arguments (no shell between) and the
/// `variables` added to this process's environment, `input` on its standard input, and
/// gathers its standard output; its standard error goes to ours. `input` is written from a
/// thread of its own while the output is read, so a command that prints before it has read
/// all of its input (`cat`) cannot stall on a full pipe.
pub(crate) async fn run(
    argv: Vec<String>,
    variables: Vec<(&'static str, OsString)>,
    input: Bytes,
) -> std::io::Result<Output> {
    tokio::task::spawn_blocking(move || {
        let Some((program, arguments)) = argv.split_first() else {
            return Err(std::io::Error::other("no program to run"));
        };
        let mut child = Command::new(program)
            .args(arguments)
            .envs(variables)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        if let Some(mut stdin) = child.stdin.take() {
            // Not joined: it ends once the input is written or the pipe is closed, which a
            // program that handed the pipe to a process of its own may never do.
            std::thread::spawn(move || {
                // A command that does not read its input closes the pipe early; that is
                // fine. Dropping `stdin` at the end closes it, which ends the input.
                let _ = stdin.write_all(&input);
            });
        }
        child.wait_with_output()
    })
    .await
    .map_err(std::io::Error::other)?
}

/// Why a command line could not be split into words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BadCommand {
    /// No words at all.
    Empty,
    /// A quote opened and never closed.
    OpenQuote,
}

impl std::fmt::Display for BadCommand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            BadCommand::Empty => "the command is empty",
            BadCommand::OpenQuote => "a quote is not closed",
        })
    }
}

/// `command` split into words as a POSIX shell splits them (quotes and backslashes kept
/// together, removed from the words), once, before a message fills anything in: a message
/// then only changes the text inside a word, so it can neither add words nor reach a shell.
/// `shlex` does the splitting: a well-kept crate for exactly this.
pub(crate) fn words(command: &str) -> Result<Vec<String>, BadCommand> {
    match shlex::split(command) {
        Some(words) if !words.is_empty() => Ok(words),
        Some(_) => Err(BadCommand::Empty),
        None => Err(BadCommand::OpenQuote),
    }
}

/// natscli's `--translate CMD`: each body is shown as CMD prints it, the body on CMD's
/// standard input. CMD is split into words once, as a shell would split it, and run without
/// a shell; `{{Subject}}` and `{{Stream}}` in a word are the message's subject and stream
/// (empty unless the message was read from a stream), natscli's template names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Translate {
    words: Vec<String>,
}

impl Translate {
    /// Parses `--translate`'s command (a clap value parser).
    pub(crate) fn parse(command: &str) -> Result<Translate, String> {
        words(command)
            .map(|words| Translate { words })
            .map_err(|bad| bad.to_string())
    }

    /// `body` as the command prints it for a message on `subject` in `stream`, one trailing
    /// newline dropped (the body is printed with one). A command that cannot run, or fails,
    /// leaves the body as it was, with a line on stderr saying why.
    pub(crate) async fn body(&self, body: &Bytes, subject: &str, stream: &str) -> Bytes {
        let argv: Vec<String> = self
            .words
            .iter()
            .map(|word| fill(&fill(word, "Subject", subject), "Stream", stream))
            .collect();
        let command = argv.join(" ");
        match run(argv, Vec::new(), body.clone()).await {
            Ok(output) if output.status.success() => {
                let mut text = output.stdout;
                if text.last() == Some(&b'\n') {
                    text.pop();
                }
                Bytes::from(text)
            }
            Ok(output) => {
                eprintln!(
                    "Error while translating the body on {subject:?}: {command:?} {}",
                    output.status
                );
                body.clone()
            }
            Err(error) => {
                eprintln!(
                    "Error while translating the body on {subject:?}: cannot run {command:?}: {error}"
                );
                body.clone()
            }
        }
    }
}

/// `word` with `{{NAME}}` (spaces inside the braces allowed) replaced by `value`.
fn fill(word: &str, name: &str, value: &str) -> String {
    let mut out = String::with_capacity(word.len());
    let mut rest = word;
    while let Some(start) = rest.find("{{") {
        let Some(len) = rest[start..].find("}}") else {
            break;
        };
        let inside = rest[start + 2..start + len].trim();
        out.push_str(&rest[..start]);
        if inside == name {
            out.push_str(value);
        } else {
            out.push_str(&rest[start..start + len + 2]);
        }
        rest = &rest[start + len + 2..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn translate_placeholders_fill_their_word_only() {
        assert_eq!(fill("s={{Subject}}", "Subject", "a.b"), "s=a.b");
        assert_eq!(
            fill("{{ Subject }}{{Stream}}", "Subject", "x"),
            "x{{Stream}}"
        );
        assert_eq!(fill("{{Other}} {{", "Subject", "x"), "{{Other}} {{");
        let translate = Translate::parse("jq -r '.name' --arg s {{Subject}}").expect("parses");
        assert_eq!(
            translate.words,
            ["jq", "-r", ".name", "--arg", "s", "{{Subject}}"]
        );
        assert!(Translate::parse("'open").is_err());
        assert!(Translate::parse("  ").is_err());
    }

    #[tokio::test]
    async fn a_translated_body_is_what_the_command_prints() {
        let upper = Translate::parse("tr a-z A-Z").expect("parses");
        let body = Bytes::from_static(b"hello\n");
        assert_eq!(upper.body(&body, "s", "").await, "HELLO");
        let named = Translate::parse("echo {{Stream}}/{{Subject}}").expect("parses");
        assert_eq!(named.body(&body, "a.b", "ORDERS").await, "ORDERS/a.b");
        let failing = Translate::parse("false").expect("parses");
        assert_eq!(failing.body(&body, "s", "").await, body, "kept as it was");
    }

    #[test]
    fn a_body_becomes_a_variable_only_when_a_program_can_take_it() {
        let (name, value) = variable("BODY", b"hello").expect("fits");
        assert_eq!((name, value), ("BODY", OsString::from("hello")));
        // Not UTF-8: passed byte for byte, so it fits as measured.
        let binary = vec![0xFF; 100 * 1024];
        let (_, value) = variable("BODY", &binary).expect("fits");
        assert_eq!(value.len(), binary.len());
        assert!(variable("BODY", b"a\0b").is_none(), "a NUL ends the text");
        let longest = vec![b'a'; LONGEST_VARIABLE - "BODY=".len() - 1];
        assert!(variable("BODY", &longest).is_some());
        let longer = vec![b'a'; longest.len() + 1];
        assert!(variable("BODY", &longer).is_none());
    }

    #[tokio::test]
    async fn a_command_that_echoes_more_than_a_pipe_holds_is_fed_and_read_at_once() {
        // Four times what a Linux pipe buffers: writing it all before reading would stall.
        let input = Bytes::from(vec![b'x'; 256 * 1024]);
        let output = run(vec!["cat".to_owned()], Vec::new(), input.clone())
            .await
            .expect("cat runs");
        assert!(output.status.success());
        assert_eq!(output.stdout, input);
    }

    #[tokio::test]
    async fn a_program_that_is_not_there_is_an_error_not_a_panic() {
        let error = run(
            vec!["/nonexistent/rnats-test-program".to_owned()],
            Vec::new(),
            Bytes::new(),
        )
        .await
        .expect_err("nothing to run");
        assert_eq!(error.kind(), std::io::ErrorKind::NotFound);
    }
}
