//! Where `rnats pub` takes its messages from: the body argument (a template, `--count`
//! times), all of standard input, or standard input line by line (`--send-on newline`).

use std::io::BufRead;

use bytes::Bytes;
use clap::ValueEnum;

use super::template::{Template, Use};
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
}

/// The messages of one `pub` run, produced one at a time so standard input is read only as
/// far as publishing got.
pub(crate) struct Messages {
    subject: Template,
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
    /// Messages to `subject` with `body` (standard input when absent or `-`); with
    /// `templates`, placeholders in both are expanded (a text that does not parse is sent as
    /// it is, with a warning, as natscli does).
    pub(crate) fn new(
        subject: &str,
        body: Option<&str>,
        count: u64,
        send_on: SendOn,
        templates: bool,
    ) -> Result<Messages, CliError> {
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
            Messages::new("s", Some("n{{Count}}"), 3, SendOn::Eof, true).expect("messages");
        let bodies: Vec<String> = all(messages).into_iter().map(|(_, b)| b).collect();
        assert_eq!(bodies, ["n1", "n2", "n3"]);
    }

    #[test]
    fn without_templates_subject_and_body_go_as_they_are() {
        let messages = Messages::new("s.{{Count}}", Some("n{{Count}}"), 2, SendOn::Eof, false)
            .expect("messages");
        let got = all(messages);
        assert_eq!(got[1], ("s.{{Count}}".to_owned(), "n{{Count}}".to_owned()));
    }
}
