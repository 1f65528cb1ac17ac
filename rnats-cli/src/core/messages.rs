//! Where `rnats pub` takes its messages from: the body argument (a template, `--count`
//! times), all of standard input, or standard input line by line (`--send-on newline`).

use std::io::BufRead;

use bytes::Bytes;
use clap::ValueEnum;

use rnats::HeaderMap;

use super::template::{HeaderTemplates, Template, Use};
use crate::error::CliError;

/// `--send-on`: when what standard input gives is sent (natscli's flag).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub(crate) enum SendOn {
    /// All of standard input is one body.
    #[default]
    Eof,
    /// Each line is a body of its own.
    Newline,
}

/// One message to publish.
#[derive(Debug)]
pub(crate) struct Message {
    /// Its subject, templates rendered.
    pub(crate) subject: String,
    /// Its body.
    pub(crate) payload: Bytes,
    /// Its headers, templates rendered; `None` when no `--header` was given.
    pub(crate) headers: Option<HeaderMap>,
}

/// The messages of one `pub` run, produced one at a time so standard input is read only as
/// far as publishing got.
pub(crate) struct Messages {
    subject: Template,
    headers: HeaderTemplates,
    body: Body,
    /// Copies of each body (`--count`).
    count: u64,
    /// Messages produced so far; the next one's `{{Count}}` is this plus one.
    produced: u64,
    /// Copies of the current line still to produce.
    left: u64,
}

/// The body source.
enum Body {
    /// The body argument, rendered per message.
    Template(Template),
    /// All of standard input, read at the start.
    Bytes(Bytes),
    /// Standard input, a line per body; `line` is the current one.
    Lines {
        input: Box<dyn BufRead>,
        line: Bytes,
    },
}

impl Messages {
    /// Messages to `subject` with `body` (standard input when absent or `-`) and `headers`
    /// (`KEY:VALUE` flags); with `templates`, placeholders in the subject and the body are
    /// expanded (a text that does not parse is sent as it is, with a warning, as natscli
    /// does); in header values always (see [`HeaderTemplates`]).
    pub(crate) fn new(
        subject: &str,
        body: Option<&str>,
        headers: &[String],
        count: u64,
        send_on: SendOn,
        templates: bool,
    ) -> Result<Messages, CliError> {
        let headers = HeaderTemplates::new(headers)?;
        let template = |text: &str, what: &str| {
            if templates {
                Template::lenient(text, what, Use::Message)
            } else {
                Template::literal(text)
            }
        };
        let body = match body {
            Some(text) if text != "-" => Body::Template(template(text, "body")),
            _ if send_on == SendOn::Newline => {
                if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
                    eprintln!("Reading messages from standard input, one per line");
                }
                Body::Lines {
                    input: Box::new(std::io::stdin().lock()),
                    line: Bytes::new(),
                }
            }
            _ => Body::Bytes(super::body_or_stdin(None)?),
        };
        Ok(Messages {
            subject: template(subject, "subject"),
            headers,
            body,
            count: count.max(1),
            produced: 0,
            left: 0,
        })
    }

    /// Messages from `input`, a line each (for tests).
    #[cfg(test)]
    fn lines(subject: &str, input: &'static [u8], count: u64) -> Messages {
        Messages {
            subject: Template::parse(subject, Use::Message).expect("template"),
            headers: HeaderTemplates::new(&[]).expect("no headers"),
            body: Body::Lines {
                input: Box::new(input),
                line: Bytes::new(),
            },
            count,
            produced: 0,
            left: 0,
        }
    }

    /// The next message, or `None` when there are no more.
    pub(crate) fn next_message(&mut self) -> Result<Option<Message>, CliError> {
        let payload = match &mut self.body {
            Body::Lines { input, line } => {
                if self.left == 0 {
                    let Some(next) = read_line(input.as_mut())? else {
                        return Ok(None);
                    };
                    *line = next;
                    self.left = self.count;
                }
                self.left -= 1;
                line.clone()
            }
            _ if self.produced == self.count => return Ok(None),
            Body::Template(template) => Bytes::from(template.render(self.produced + 1)),
            Body::Bytes(bytes) => bytes.clone(),
        };
        self.produced += 1;
        Ok(Some(Message {
            subject: self.subject.render(self.produced),
            payload,
            headers: self.headers.render(self.produced)?,
        }))
    }

    /// Every message left, for an atomic batch, which is sent whole or not at all.
    pub(crate) fn collect(mut self) -> Result<Vec<Message>, CliError> {
        let mut all = Vec::new();
        while let Some(message) = self.next_message()? {
            all.push(message);
        }
        Ok(all)
    }
}

/// One line without its line ending, or `None` at the end of the input.
fn read_line(input: &mut dyn BufRead) -> Result<Option<Bytes>, CliError> {
    let mut line = Vec::new();
    if input
        .read_until(b'\n', &mut line)
        .map_err(CliError::Stdin)?
        == 0
    {
        return Ok(None);
    }
    if line.last() == Some(&b'\n') {
        line.pop();
        if line.last() == Some(&b'\r') {
            line.pop();
        }
    }
    Ok(Some(Bytes::from(line)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(mut messages: Messages) -> Vec<(String, String)> {
        let mut out = Vec::new();
        while let Some(m) = messages.next_message().expect("message") {
            out.push((
                m.subject,
                String::from_utf8(m.payload.to_vec()).expect("utf-8"),
            ));
        }
        out
    }

    #[test]
    fn each_line_is_a_message_count_times() {
        let got = all(Messages::lines("s.{{Count}}", b"a\r\nb\n\nc", 2));
        let want = [
            ("s.1", "a"),
            ("s.2", "a"),
            ("s.3", "b"),
            ("s.4", "b"),
            ("s.5", ""),
            ("s.6", ""),
            ("s.7", "c"),
            ("s.8", "c"),
        ];
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(s, b)| ((*s).to_owned(), (*b).to_owned()))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn a_template_body_renders_per_message() {
        let messages =
            Messages::new("s", Some("n{{Count}}"), &[], 3, SendOn::Eof, true).expect("messages");
        let bodies: Vec<String> = all(messages).into_iter().map(|(_, b)| b).collect();
        assert_eq!(bodies, ["n1", "n2", "n3"]);
    }

    #[test]
    fn without_templates_subject_and_body_go_as_they_are() {
        let flags = ["Nats-Msg-Id: m{{Count}}".to_owned()];
        let mut messages = Messages::new(
            "s.{{Count}}",
            Some("n{{Count}}"),
            &flags,
            2,
            SendOn::Eof,
            false,
        )
        .expect("messages");
        // natscli's --templates is about the subject and the body: headers expand anyway.
        let first = messages.next_message().expect("message").expect("one");
        let id = first.headers.as_ref().and_then(|h| h.get("Nats-Msg-Id"));
        assert_eq!(id.map(|v| v.as_str()), Some("m1"));
        let got = all(messages);
        assert_eq!(got[0], ("s.{{Count}}".to_owned(), "n{{Count}}".to_owned()));
        // A header template that does not parse stops the run, as in natscli.
        let bad = ["X:{{Nope}}".to_owned()];
        assert!(Messages::new("s", Some("b"), &bad, 1, SendOn::Eof, true).is_err());
    }

    #[test]
    fn header_values_render_per_message_as_natscli_renders_them() {
        let flags = [
            "Nats-Msg-Id:order-{{Count}}".to_owned(),
            "Source: shell ".to_owned(),
        ];
        let mut messages =
            Messages::new("s", Some("b"), &flags, 3, SendOn::Eof, true).expect("messages");
        let mut ids = Vec::new();
        while let Some(message) = messages.next_message().expect("message") {
            let headers = message.headers.expect("headers");
            assert_eq!(headers.get("Source").map(|v| v.as_str()), Some("shell"));
            ids.push(headers.get("Nats-Msg-Id").map(|v| v.to_string()));
        }
        let want = ["order-1", "order-2", "order-3"].map(|id| Some(id.to_owned()));
        assert_eq!(ids, want);
        // No flag, no headers at all (not an empty map).
        let mut plain = Messages::new("s", Some("b"), &[], 1, SendOn::Eof, true).expect("messages");
        assert!(
            plain
                .next_message()
                .expect("message")
                .expect("one")
                .headers
                .is_none()
        );
    }
}
