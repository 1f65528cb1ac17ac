//! The minimal server-to-client parser of the raw client: enough of the protocol to take
//! `MSG`, `HMSG`, `PING`, `PONG`, `+OK`, `-ERR` and `INFO` off a read buffer without copying.
//!
//! [`parse_frame`] looks at the front of a buffer and either finds one whole frame there, with
//! its parts as offsets from the frame's start ([`Frame`], owned, so the caller may move its
//! buffer on before looking at the bytes), or says more bytes are needed. [`Frame::op`] then
//! gives the parts as slices.

use std::fmt;
use std::ops::Range;

/// Longest control line accepted (INFO included) before the input is called garbage.
pub const MAX_CONTROL_LINE: usize = 64 * 1024;

/// One operation from the server, borrowing the read buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op<'a> {
    /// A message (`MSG`, or `HMSG` with its header block).
    Msg(Msg<'a>),
    /// `PING`: the server wants a `PONG`.
    Ping,
    /// `PONG`: the answer to our `PING`.
    Pong,
    /// `+OK` (verbose mode only).
    Ok,
    /// `-ERR` with the server's text.
    Err(&'a [u8]),
    /// `INFO` with its JSON.
    Info(&'a [u8]),
}

/// A delivered message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Msg<'a> {
    /// The subject it was published to.
    pub subject: &'a [u8],
    /// The subscription it was delivered for.
    pub sid: u64,
    /// The reply subject, if the publisher gave one.
    pub reply: Option<&'a [u8]>,
    /// The header block of an `HMSG` (from `NATS/1.0` to the blank line).
    pub headers: Option<&'a [u8]>,
    /// The payload.
    pub payload: &'a [u8],
}

/// One whole frame found at the front of a buffer: its length and where its parts are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// Bytes the frame takes, trailing CRLF included.
    pub len: usize,
    kind: Kind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    Msg {
        subject: Range<usize>,
        sid: u64,
        reply: Option<Range<usize>>,
        headers: Option<Range<usize>>,
        payload: Range<usize>,
    },
    Ping,
    Pong,
    Ok,
    Err(Range<usize>),
    Info(Range<usize>),
}

impl Frame {
    /// Whether this is a `PING`, which the reader answers by itself.
    pub fn is_ping(&self) -> bool {
        self.kind == Kind::Ping
    }

    /// The operation, with its parts sliced out of `buf`, which must start where the frame
    /// started.
    pub fn op<'a>(&self, buf: &'a [u8]) -> Op<'a> {
        match &self.kind {
            Kind::Msg {
                subject,
                sid,
                reply,
                headers,
                payload,
            } => Op::Msg(Msg {
                subject: &buf[subject.clone()],
                sid: *sid,
                reply: reply.clone().map(|r| &buf[r]),
                headers: headers.clone().map(|h| &buf[h]),
                payload: &buf[payload.clone()],
            }),
            Kind::Ping => Op::Ping,
            Kind::Pong => Op::Pong,
            Kind::Ok => Op::Ok,
            Kind::Err(text) => Op::Err(&buf[text.clone()]),
            Kind::Info(json) => Op::Info(&buf[json.clone()]),
        }
    }
}

/// Input that is not the NATS protocol.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParseError {
    /// A control line that starts with no operation this parser knows.
    UnknownOp,
    /// A `MSG` or `HMSG` line with the wrong number of fields or a bad number.
    BadMsgLine,
    /// A payload not followed by CRLF.
    BadFrameEnd,
    /// No line end within [`MAX_CONTROL_LINE`] bytes.
    LineTooLong,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ParseError::UnknownOp => "unknown protocol operation",
            ParseError::BadMsgLine => "malformed MSG/HMSG line",
            ParseError::BadFrameEnd => "payload not followed by CRLF",
            ParseError::LineTooLong => "control line too long",
        })
    }
}

impl std::error::Error for ParseError {}

/// Finds one whole frame at the front of `buf`; `Ok(None)` when more bytes are needed.
pub fn parse_frame(buf: &[u8]) -> Result<Option<Frame>, ParseError> {
    let Some(nl) = memchr::memchr(b'\n', buf) else {
        return if buf.len() > MAX_CONTROL_LINE {
            Err(ParseError::LineTooLong)
        } else {
            Ok(None)
        };
    };
    let line_len = nl + 1;
    // The line without its CRLF (a bare LF is tolerated, as the server tolerates it).
    let line_end = if nl > 0 && buf[nl - 1] == b'\r' {
        nl - 1
    } else {
        nl
    };
    let line = &buf[..line_end];
    if line.starts_with(b"MSG ") {
        return msg_frame(buf, line, 4, line_len, false);
    }
    let kind = match line {
        b"PING" => Kind::Ping,
        b"PONG" => Kind::Pong,
        b"+OK" => Kind::Ok,
        _ if line.starts_with(b"HMSG ") => return msg_frame(buf, line, 5, line_len, true),
        _ if line.starts_with(b"-ERR") => Kind::Err(trim_start(line, 4)..line_end),
        _ if line.starts_with(b"INFO ") => Kind::Info(trim_start(line, 5)..line_end),
        _ => return Err(ParseError::UnknownOp),
    };
    Ok(Some(Frame {
        len: line_len,
        kind,
    }))
}

/// `MSG <subject> <sid> [reply] <#bytes>` or `HMSG <subject> <sid> [reply] <#hdr> <#total>`,
/// whose fields start at `args`, followed by its payload at `body`.
fn msg_frame(
    buf: &[u8],
    line: &[u8],
    args: usize,
    body: usize,
    with_headers: bool,
) -> Result<Option<Frame>, ParseError> {
    // Fields as offsets into `line` (and so into `buf`): at most 5 of them.
    let mut fields: [Range<usize>; 5] = Default::default();
    let mut count = 0;
    let mut at = args;
    while at < line.len() {
        if is_space(line[at]) {
            at += 1;
            continue;
        }
        let start = at;
        while at < line.len() && !is_space(line[at]) {
            at += 1;
        }
        if count == fields.len() {
            return Err(ParseError::BadMsgLine);
        }
        fields[count] = start..at;
        count += 1;
    }
    let numbers = if with_headers { 2 } else { 1 };
    let reply = match count - numbers.min(count) {
        2 => None,
        3 => Some(fields[2].clone()),
        _ => return Err(ParseError::BadMsgLine),
    };
    let sid = number(&line[fields[1].clone()])?;
    let total = number(&line[fields[count - 1].clone()])?;
    let header_len = if with_headers {
        let header_len = number(&line[fields[count - 2].clone()])?;
        if header_len > total {
            return Err(ParseError::BadMsgLine);
        }
        header_len
    } else {
        0
    };
    let total = usize::try_from(total).map_err(|_| ParseError::BadMsgLine)?;
    let header_len = usize::try_from(header_len).map_err(|_| ParseError::BadMsgLine)?;
    let end = body.checked_add(total).ok_or(ParseError::BadMsgLine)?;
    if buf.len() < end + 2 {
        return Ok(None);
    }
    if &buf[end..end + 2] != b"\r\n" {
        return Err(ParseError::BadFrameEnd);
    }
    let headers = with_headers.then(|| body..body + header_len);
    Ok(Some(Frame {
        len: end + 2,
        kind: Kind::Msg {
            subject: fields[0].clone(),
            sid,
            reply,
            headers,
            payload: body + header_len..end,
        },
    }))
}

fn is_space(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// The offset of the first non-space byte of `line` at or after `from`.
fn trim_start(line: &[u8], from: usize) -> usize {
    let mut at = from.min(line.len());
    while at < line.len() && is_space(line[at]) {
        at += 1;
    }
    at
}

/// A decimal number of at most 19 digits (so it cannot overflow a `u64`).
fn number(digits: &[u8]) -> Result<u64, ParseError> {
    if digits.is_empty() || digits.len() > 19 {
        return Err(ParseError::BadMsgLine);
    }
    let mut n = 0u64;
    for &d in digits {
        if !d.is_ascii_digit() {
            return Err(ParseError::BadMsgLine);
        }
        n = n * 10 + u64::from(d - b'0');
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every op in `input`, parsed from the front as a reader would, or the first error.
    fn parse_all(input: &[u8]) -> Result<Vec<String>, ParseError> {
        let mut ops = Vec::new();
        let mut at = 0;
        while let Some(frame) = parse_frame(&input[at..])? {
            ops.push(describe(frame.op(&input[at..])));
            at += frame.len;
        }
        assert_eq!(at, input.len(), "trailing bytes left unparsed");
        Ok(ops)
    }

    fn describe(op: Op<'_>) -> String {
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        match op {
            Op::Msg(m) => format!(
                "MSG {} {} {:?} {:?} {}",
                text(m.subject),
                m.sid,
                m.reply.map(text),
                m.headers.map(text),
                text(m.payload)
            ),
            Op::Ping => "PING".into(),
            Op::Pong => "PONG".into(),
            Op::Ok => "+OK".into(),
            Op::Err(e) => format!("-ERR {}", text(e)),
            Op::Info(i) => format!("INFO {}", text(i)),
        }
    }

    const STREAM: &[u8] = b"INFO {\"server_id\":\"x\",\"max_payload\":1048576}\r\n\
        +OK\r\nPING\r\nMSG bench.sub 1 5\r\nhello\r\n\
        MSG bench.req 7 _INBOX.raw.1 3\r\na\r\n\r\n\
        HMSG bench.h 2 19 24\r\nNATS/1.0\r\nA: bb\r\n\r\nworld\r\n\
        HMSG bench.h 2 _INBOX.r 12 12\r\nNATS/1.0\r\n\r\n\r\n\
        MSG  empty\t3  0\r\n\r\nPONG\r\n-ERR 'Unknown Protocol Operation'\r\n";

    fn expected() -> Vec<String> {
        [
            "INFO {\"server_id\":\"x\",\"max_payload\":1048576}",
            "+OK",
            "PING",
            "MSG bench.sub 1 None None hello",
            // A payload may hold CRLF: only the byte count says where it ends.
            "MSG bench.req 7 Some(\"_INBOX.raw.1\") None a\r\n",
            "MSG bench.h 2 None Some(\"NATS/1.0\\r\\nA: bb\\r\\n\\r\\n\") world",
            "MSG bench.h 2 Some(\"_INBOX.r\") Some(\"NATS/1.0\\r\\n\\r\\n\") ",
            "MSG empty 3 None None ",
            "PONG",
            "-ERR 'Unknown Protocol Operation'",
        ]
        .map(String::from)
        .to_vec()
    }

    #[test]
    fn parses_every_op() {
        assert_eq!(parse_all(STREAM), Ok(expected()));
    }

    /// Feeds `input` in pieces cut at `cuts`, appending each piece to a buffer and taking
    /// whole frames off its front after each, as the reader does.
    fn parse_in_pieces(input: &[u8], cuts: &[usize]) -> Result<Vec<String>, ParseError> {
        let mut ops = Vec::new();
        let mut buf = Vec::new();
        let mut last = 0;
        for &cut in cuts.iter().chain([input.len()].iter()) {
            buf.extend_from_slice(&input[last..cut]);
            last = cut;
            let mut at = 0;
            while let Some(frame) = parse_frame(&buf[at..])? {
                ops.push(describe(frame.op(&buf[at..])));
                at += frame.len;
            }
            buf.drain(..at);
        }
        assert!(buf.is_empty(), "bytes left over: {buf:?}");
        Ok(ops)
    }

    #[test]
    fn any_split_gives_the_same_ops() {
        let expected = expected();
        // Every single cut, and every pair of cuts.
        for a in 0..=STREAM.len() {
            assert_eq!(
                parse_in_pieces(STREAM, &[a]),
                Ok(expected.clone()),
                "cut {a}"
            );
            for b in a..=STREAM.len() {
                assert_eq!(
                    parse_in_pieces(STREAM, &[a, b]),
                    Ok(expected.clone()),
                    "cuts {a} {b}"
                );
            }
        }
        // One byte at a time.
        let every: Vec<usize> = (1..STREAM.len()).collect();
        assert_eq!(parse_in_pieces(STREAM, &every), Ok(expected));
    }

    #[test]
    fn incomplete_frames_ask_for_more() {
        for input in [
            &b""[..],
            b"PIN",
            b"MSG a 1 5\r\nhel",
            b"MSG a 1 5\r\nhello",
            b"MSG a 1 5\r\nhello\r",
            b"HMSG a 1 12 14\r\nNATS/1.0\r\n\r\n",
        ] {
            assert_eq!(parse_frame(input), Ok(None), "{input:?}");
        }
    }

    #[test]
    fn rejects_garbage() {
        assert_eq!(parse_frame(b"HELLO\r\n"), Err(ParseError::UnknownOp));
        assert_eq!(parse_frame(b"MSG a 1\r\n"), Err(ParseError::BadMsgLine));
        assert_eq!(
            parse_frame(b"MSG a b c d e\r\n"),
            Err(ParseError::BadMsgLine)
        );
        assert_eq!(parse_frame(b"MSG a x 5\r\n"), Err(ParseError::BadMsgLine));
        assert_eq!(parse_frame(b"MSG a 1 -5\r\n"), Err(ParseError::BadMsgLine));
        assert_eq!(
            parse_frame(b"MSG a 1 99999999999999999999\r\n"),
            Err(ParseError::BadMsgLine)
        );
        assert_eq!(
            parse_frame(b"HMSG a 1 9 5\r\n"),
            Err(ParseError::BadMsgLine)
        );
        assert_eq!(
            parse_frame(b"MSG a 1 2\r\nabcd\r\n"),
            Err(ParseError::BadFrameEnd)
        );
        let long = vec![b'x'; MAX_CONTROL_LINE + 1];
        assert_eq!(parse_frame(&long), Err(ParseError::LineTooLong));
    }
}
