//! The incremental, zero-copy parser for server ops.

use bytes::{Buf, BytesMut};

use crate::decode_error::DecodeError;
use crate::headers::HeaderBlock;
use crate::info::ServerInfo;
use crate::msg::{Msg, MsgFrame, MsgParts, ServerOp};
use crate::server_error::ServerError;
use crate::subject::{bytes_equal, check_received};

/// Bounds that keep a misbehaving server from making the parser buffer
/// without limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParserLimits {
    /// Longest accepted control line other than `INFO`, excluding its `\r\n`:
    /// what bounds the memory a lying peer can make the parser hold for a
    /// `MSG`/`HMSG` header line. Default: 4096.
    pub max_control_line: usize,
    /// Longest accepted `INFO` line, excluding its `\r\n`. An `INFO` grows
    /// with the cluster (about 30 bytes per announced `connect_urls` entry),
    /// so it gets a limit of its own, far above any other line's; the larger
    /// of this and `max_control_line` applies. Default: 8 MiB.
    pub max_info_line: usize,
    /// Largest accepted `MSG`/`HMSG` size (headers plus payload).
    /// Default: 64 MiB; lower it to the server's `max_payload` once known.
    pub max_payload: usize,
}

impl Default for ParserLimits {
    fn default() -> Self {
        ParserLimits {
            max_control_line: 4096,
            max_info_line: 8 * 1024 * 1024,
            max_payload: 64 * 1024 * 1024,
        }
    }
}

/// Turns the byte stream from a server into [`ServerOp`]s.
///
/// The parser does no I/O: the caller appends received bytes to a
/// [`BytesMut`] and calls [`Parser::decode`] until it returns `Ok(None)`.
/// Between calls the caller may only *append* to that buffer, because the
/// parser remembers how far it has already looked. A caller that stores each
/// message as it comes can use [`Parser::decode_with`] instead, or, to keep it
/// whole until it is used, [`Parser::decode_frame_with`].
#[derive(Debug, Default)]
pub struct Parser {
    limits: ParserLimits,
    state: State,
}

impl Parser {
    /// Creates a parser enforcing `limits`.
    pub fn new(limits: ParserLimits) -> Parser {
        Parser {
            limits,
            state: State::default(),
        }
    }

    /// Changes the largest accepted message size, typically to the
    /// `max_payload` from the server's `INFO`.
    pub fn set_max_payload(&mut self, n: usize) {
        self.limits.max_payload = n;
    }

    /// Returns the limits currently enforced.
    pub fn limits(&self) -> ParserLimits {
        self.limits
    }

    /// Decodes the next complete server op at the front of `buf`, removing
    /// its bytes from `buf`.
    ///
    /// `Ok(None)`: `buf` holds only part of an op; call again after
    /// appending more bytes. A control line that was already parsed is not
    /// parsed again, and the search for its end resumes where it stopped.
    ///
    /// After an error the stream is out of sync and the connection should
    /// be closed.
    pub fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<ServerOp>, DecodeError> {
        self.decode_with(buf, ServerOp::Msg, |op| op)
    }

    /// [`Parser::decode`], with the decoded op handed to `on_msg` (a `MSG` or `HMSG`) or
    /// `on_other` (any other op), whose result it returns.
    ///
    /// For a caller that stores each message somewhere: `on_msg` gets the [`Msg`] where it is
    /// built, so the message can be moved straight to where it is kept. Matching on the
    /// [`ServerOp`] that [`Parser::decode`] returns moves its 176 bytes out of the result
    /// first, one copy more per message.
    #[inline]
    pub fn decode_with<T>(
        &mut self,
        buf: &mut BytesMut,
        on_msg: impl FnOnce(Msg) -> T,
        on_other: impl FnOnce(ServerOp) -> T,
    ) -> Result<Option<T>, DecodeError> {
        self.decode_parts_with(buf, |parts| on_msg(parts.into_msg()), on_other)
    }

    /// [`Parser::decode_with`], with each `MSG` or `HMSG` handed over whole, checked as
    /// [`Parser::decode`] checks it but not cut into its parts ([`MsgFrame`]): for a caller
    /// that stores messages for a while, in less than half the room, and cuts each where it
    /// is used.
    #[inline]
    pub fn decode_frame_with<T>(
        &mut self,
        buf: &mut BytesMut,
        on_msg: impl FnOnce(MsgFrame) -> T,
        on_other: impl FnOnce(ServerOp) -> T,
    ) -> Result<Option<T>, DecodeError> {
        self.decode_parts_with(buf, |parts| on_msg(parts.into_frame()), on_other)
    }

    /// What [`Parser::decode_with`] and [`Parser::decode_frame_with`] share: each message is
    /// handed to `on_msg` checked, for it to make a [`Msg`] or a [`MsgFrame`] of.
    #[inline(always)]
    fn decode_parts_with<T>(
        &mut self,
        buf: &mut BytesMut,
        on_msg: impl FnOnce(MsgParts) -> T,
        on_other: impl FnOnce(ServerOp) -> T,
    ) -> Result<Option<T>, DecodeError> {
        let head = match self.state {
            State::ExpectPayload(head) => head,
            State::ExpectLine { scanned } => {
                let Some(line_len) = self.find_line_end(buf, scanned)? else {
                    return Ok(None);
                };
                let line = &buf[..line_len - CRLF.len()];
                match msg_op(line) {
                    Some(with_headers) => {
                        parse_msg(line, line_len, self.limits.max_payload, with_headers)?
                    }
                    None => {
                        let op = parse_other(line)?;
                        buf.advance(line_len);
                        return Ok(Some(on_other(op)));
                    }
                }
            }
        };
        if buf.len() < head.frame_len {
            self.state = State::ExpectPayload(head);
            return Ok(None);
        }
        self.state = State::default();
        // One split per message: subject, reply and payload are views into it.
        let frame = buf.split_to(head.frame_len);
        head.check(frame).map(|msg| Some(on_msg(msg)))
    }

    /// Finds the `\n` ending the control line at the front of `buf`, looking
    /// only at bytes not scanned by earlier calls. Returns the line length
    /// including `\r\n`.
    fn find_line_end(&mut self, buf: &[u8], scanned: usize) -> Result<Option<usize>, DecodeError> {
        let max = if may_be_info(buf) {
            self.limits.max_info_line.max(self.limits.max_control_line)
        } else {
            self.limits.max_control_line
        };
        // Searching no further than the limit makes the outcome independent
        // of how the stream was chunked.
        let limit = max.saturating_add(CRLF.len());
        let window_end = buf.len().min(limit);
        let start = scanned.min(window_end);
        match memchr::memchr(b'\n', &buf[start..window_end]) {
            Some(i) => {
                let newline = start + i;
                self.state = State::default();
                if newline == 0 || buf[newline - 1] != b'\r' {
                    return Err(DecodeError::MissingTerminator);
                }
                Ok(Some(newline + 1))
            }
            None if buf.len() >= limit => Err(DecodeError::ControlLineTooLong { max }),
            None => {
                self.state = State::ExpectLine {
                    scanned: window_end,
                };
                Ok(None)
            }
        }
    }
}

const CRLF: &[u8] = b"\r\n";

/// Whether the line at the front of `buf` is, or may still turn out to be, an `INFO` (op
/// names are case-insensitive). A line shorter than the op name counts as one while it is a
/// prefix of it, so that the limit that applies does not depend on how the bytes arrived.
fn may_be_info(buf: &[u8]) -> bool {
    const INFO: &[u8] = b"INFO";
    let n = buf.len().min(INFO.len());
    buf[..n].eq_ignore_ascii_case(&INFO[..n])
}

/// What the parser waits for next.
#[derive(Debug, Clone, Copy)]
enum State {
    /// The end of a control line; the first `scanned` bytes hold no `\n`.
    ExpectLine { scanned: usize },
    /// The rest of a `MSG`/`HMSG` frame whose control line is parsed.
    ExpectPayload(MsgHead),
}

impl Default for State {
    fn default() -> Self {
        State::ExpectLine { scanned: 0 }
    }
}

/// A byte range within a frame (the control line starts at offset 0).
#[derive(Debug, Clone, Copy)]
struct Span {
    start: usize,
    end: usize,
}

impl Span {
    const EMPTY: Span = Span { start: 0, end: 0 };

    /// The span as `u32`s, for a span within a `MSG` control line (`parse_msg` refuses one
    /// whose length with its `\r\n` does not fit a `u32`).
    fn narrow(self) -> (u32, u32) {
        (self.start as u32, self.end as u32)
    }
}

/// A parsed `MSG`/`HMSG` control line.
#[derive(Debug, Clone, Copy)]
struct MsgHead {
    subject: Span,
    reply: Option<Span>,
    sid: u64,
    header_len: Option<usize>,
    total_len: usize,
    /// Control line length including `\r\n`.
    line_len: usize,
    /// Control line, headers, payload and the closing `\r\n`.
    frame_len: usize,
}

impl MsgHead {
    /// Checks the complete frame of `self.frame_len` bytes and decodes its header block.
    #[inline(always)]
    fn check(self, mut frame: BytesMut) -> Result<MsgParts, DecodeError> {
        if !frame.ends_with(CRLF) {
            return Err(DecodeError::MissingTerminator);
        }
        // Cut off before freezing: `Bytes::truncate` calls out for a `Bytes` made from a `Vec`,
        // so the compiler kept the frame in memory and read the narrowed fields back from
        // there, a load that waited on the stores just made (15% of the read loop's samples).
        frame.truncate(self.frame_len - CRLF.len());
        let frame = frame.freeze();
        check_received(&frame[self.subject.start..self.subject.end])?;
        let reply = match self.reply {
            Some(r) => {
                check_received(&frame[r.start..r.end])?;
                r
            }
            None => Span::EMPTY,
        };
        let (header, payload_start) = match self.header_len {
            None => (None, self.line_len),
            Some(len) => {
                let end = self.line_len + len;
                (Some(HeaderBlock::decode(&frame[self.line_len..end])?), end)
            }
        };
        Ok(MsgParts {
            frame,
            sid: self.sid,
            length: self.total_len,
            payload_start,
            subject: self.subject.narrow(),
            reply: reply.narrow(),
            header,
        })
    }
}

/// Whether `line` is a `MSG` (`Some(false)`) or `HMSG` (`Some(true)`) control line. Op names
/// are case-insensitive; the server sends them in capitals, which is looked at first.
#[inline(always)]
fn msg_op(line: &[u8]) -> Option<bool> {
    match line {
        [b'M', b'S', b'G', b' ' | b'\t', ..] => Some(false),
        [b'H', b'M', b'S', b'G', b' ' | b'\t', ..] => Some(true),
        _ => {
            let op = &line[..op_end(line)];
            if op.eq_ignore_ascii_case(b"MSG") {
                Some(false)
            } else if op.eq_ignore_ascii_case(b"HMSG") {
                Some(true)
            } else {
                None
            }
        }
    }
}

/// Where the op name at the front of `line` ends.
fn op_end(line: &[u8]) -> usize {
    line.iter().position(|&b| is_blank(b)).unwrap_or(line.len())
}

/// Parses a control line, given without its `\r\n`, that is neither `MSG` nor `HMSG`. Out of
/// line, so that the message path keeps its state in registers.
#[inline(never)]
fn parse_other(line: &[u8]) -> Result<ServerOp, DecodeError> {
    let (op, args) = line.split_at(op_end(line));
    if op.eq_ignore_ascii_case(b"PING") {
        expect_no_args(args, "PING").map(|()| ServerOp::Ping)
    } else if op.eq_ignore_ascii_case(b"PONG") {
        expect_no_args(args, "PONG").map(|()| ServerOp::Pong)
    } else if op.eq_ignore_ascii_case(b"+OK") {
        expect_no_args(args, "+OK").map(|()| ServerOp::Ok)
    } else if op.eq_ignore_ascii_case(b"INFO") {
        parse_info(args)
    } else if op.eq_ignore_ascii_case(b"-ERR") {
        Ok(parse_err(args))
    } else {
        let shown = &op[..op.len().min(32)];
        Err(DecodeError::UnknownOp {
            op: String::from_utf8_lossy(shown).into_owned(),
        })
    }
}

/// Parses `MSG <subject> <sid> [reply] <#bytes>` or
/// `HMSG <subject> <sid> [reply] <#header bytes> <#total bytes>`.
/// Inlined into [`Parser::decode`]: built in its caller's registers, the parsed head is not
/// stored and loaded again in pieces of other sizes, which stalls the load once per message.
#[inline(always)]
fn parse_msg(
    line: &[u8],
    line_len: usize,
    max_payload: usize,
    with_headers: bool,
) -> Result<MsgHead, DecodeError> {
    let op = if with_headers { "HMSG" } else { "MSG" };
    let mut args = [Span::EMPTY; 5];
    let count =
        split_args(line, op.len(), &mut args).ok_or(DecodeError::InvalidArguments { op })?;
    let sizes = if with_headers { 2 } else { 1 };
    let reply = match count.checked_sub(2 + sizes) {
        Some(0) => None,
        Some(1) => Some(args[2]),
        _ => return Err(DecodeError::InvalidArguments { op }),
    };
    let arg = |s: Span| &line[s.start..s.end];
    let sid = parse_number(arg(args[1]), op)?;
    let total_len = to_usize(parse_number(arg(args[count - 1]), op)?, op)?;
    let header_len = match with_headers {
        true => Some(to_usize(parse_number(arg(args[count - 2]), op)?, op)?),
        false => None,
    };
    if total_len > max_payload {
        return Err(DecodeError::PayloadTooLarge {
            size: total_len,
            max: max_payload,
        });
    }
    if let Some(header_len) = header_len.filter(|&h| h > total_len) {
        return Err(DecodeError::HeaderSizeExceedsTotal {
            header_len,
            total_len,
        });
    }
    // Spans within the line are kept as `u32`s (`MsgFrame`).
    if u32::try_from(line_len).is_err() {
        return Err(DecodeError::ControlLineTooLong {
            max: u32::MAX as usize - CRLF.len(),
        });
    }
    let frame_len = line_len
        .checked_add(total_len)
        .and_then(|n| n.checked_add(CRLF.len()))
        .ok_or(DecodeError::PayloadTooLarge {
            size: total_len,
            max: max_payload,
        })?;
    Ok(MsgHead {
        subject: args[0],
        reply,
        sid,
        header_len,
        total_len,
        line_len,
        frame_len,
    })
}

/// Parses `INFO {json}`; `args` starts right after the op name.
fn parse_info(args: &[u8]) -> Result<ServerOp, DecodeError> {
    let json = trim(args);
    if json.is_empty() {
        return Err(DecodeError::InvalidArguments { op: "INFO" });
    }
    serde_json::from_slice::<ServerInfo>(json)
        .map(|info| ServerOp::Info(Box::new(info)))
        .map_err(|e| DecodeError::InvalidInfo(e.to_string()))
}

/// Parses `-ERR '<text>'`; `args` starts right after the op name. The
/// quotes are optional so that a bare text is still reported.
fn parse_err(args: &[u8]) -> ServerOp {
    let text = trim(args);
    let text = match text {
        [b'\'', inner @ .., b'\''] => inner,
        _ => text,
    };
    ServerOp::Err(ServerError::from_text(&String::from_utf8_lossy(text)))
}

fn expect_no_args(args: &[u8], op: &'static str) -> Result<(), DecodeError> {
    if args.iter().all(|&b| is_blank(b)) {
        Ok(())
    } else {
        Err(DecodeError::InvalidArguments { op })
    }
}

/// Splits `line[from..]` on runs of spaces and tabs into `out`, returning
/// the count, or `None` if there are more arguments than `out` holds.
///
/// A `MSG` line's arguments fit in 63 bytes unless its subject or reply is long. Up to that
/// they are split from a mask of the blanks, one bit a byte, built eight bytes a step, where
/// each token's start and end are a bit each and a token costs two `trailing_zeros`; longer
/// lists take the byte walk. Walking the bytes one by one
/// was about 120 instructions of a 32-byte message's 300 in the decoder.
#[inline(always)]
fn split_args(line: &[u8], from: usize, out: &mut [Span]) -> Option<usize> {
    match blank_mask(line, from) {
        Some(blanks) => split_by_mask(blanks, from, out),
        None => split_args_bytewise(line, from, out),
    }
}

/// Bit `i` set when `line[from + i]` is a space or tab, and every bit from `line.len() - from`
/// up, so that the last token ends at the line's end; `None` when the arguments take more
/// than 63 bytes (the mask keeps a bit past them) or the line is shorter than one word.
#[inline(always)]
fn blank_mask(line: &[u8], from: usize) -> Option<u64> {
    let len = line.len().checked_sub(from).filter(|&n| n < 64)?;
    // The last word of the line, read once, stands in for any word that would run past it.
    let last_at = line.len().checked_sub(8)?;
    let last = u64::from_le_bytes(line.get(last_at..)?.try_into().ok()?);
    let mut blanks = !0u64 << len;
    let mut at = from;
    while at < line.len() {
        let word = match line.get(at..at + 8) {
            Some(bytes) => u64::from_le_bytes(bytes.try_into().ok()?),
            // Shifted down so that `line[at]` is its lowest byte; the bytes shifted in are
            // zeros, no blanks, and lie past the end anyway.
            None => last >> ((at - last_at) * 8),
        };
        let marks = bytes_equal(word, b' ') | bytes_equal(word, b'\t');
        // The eight high bits gathered into the top byte: each lands at its byte's index.
        let bits = ((marks >> 7).wrapping_mul(0x0102_0408_1020_4080)) >> 56;
        blanks |= bits << (at - from);
        at += 8;
    }
    Some(blanks)
}

/// [`split_args`] from the mask of [`blank_mask`]: a token starts at a byte that is not blank
/// after one that is (or at the first), and ends at a blank after a byte that is not; the
/// n-th end closes the n-th start.
#[inline(always)]
fn split_by_mask(blanks: u64, from: usize, out: &mut [Span]) -> Option<usize> {
    let words = !blanks;
    let mut starts = words & ((blanks << 1) | 1);
    let mut ends = blanks & (words << 1);
    let mut count = 0;
    while starts != 0 {
        *out.get_mut(count)? = Span {
            start: from + starts.trailing_zeros() as usize,
            end: from + ends.trailing_zeros() as usize,
        };
        count += 1;
        starts &= starts - 1;
        ends &= ends.wrapping_sub(1);
    }
    Some(count)
}

/// [`split_args`] a byte at a time, for argument lists the mask does not hold.
fn split_args_bytewise(line: &[u8], from: usize, out: &mut [Span]) -> Option<usize> {
    let mut count = 0;
    let mut i = from;
    loop {
        while i < line.len() && is_blank(line[i]) {
            i += 1;
        }
        if i == line.len() {
            return Some(count);
        }
        let start = i;
        i = blank_or_end(line, i);
        *out.get_mut(count)? = Span { start, end: i };
        count += 1;
    }
}

/// The position of the first space or tab in `line` at or after `from`, or its length. Eight
/// bytes a step: the subject and reply tokens are the long part of a `MSG` line, and a byte
/// loop over them was the largest part of parsing one.
#[inline(always)]
fn blank_or_end(line: &[u8], from: usize) -> usize {
    let mut i = from;
    while let Some(word) = line.get(i..i + 8) {
        let mut bytes = [0; 8];
        bytes.copy_from_slice(word);
        let word = u64::from_le_bytes(bytes);
        let blanks = bytes_equal(word, b' ') | bytes_equal(word, b'\t');
        if blanks != 0 {
            // The lowest byte marked is the first blank: the lowest set bit is its high bit.
            return i + blanks.trailing_zeros() as usize / 8;
        }
        i += 8;
    }
    while i < line.len() && !is_blank(line[i]) {
        i += 1;
    }
    i
}

/// Parses a non-empty run of ASCII digits without overflow.
fn parse_number(digits: &[u8], op: &'static str) -> Result<u64, DecodeError> {
    let value = match digits {
        [] => None,
        _ => digits.iter().try_fold(0u64, |n, &d| {
            let digit = d.is_ascii_digit().then(|| u64::from(d - b'0'))?;
            n.checked_mul(10)?.checked_add(digit)
        }),
    };
    value.ok_or(DecodeError::InvalidNumber { op })
}

fn to_usize(n: u64, op: &'static str) -> Result<usize, DecodeError> {
    usize::try_from(n).map_err(|_| DecodeError::InvalidNumber { op })
}

fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

fn trim(s: &[u8]) -> &[u8] {
    let start = s.iter().position(|&b| !is_blank(b)).unwrap_or(s.len());
    let end = s
        .iter()
        .rposition(|&b| !is_blank(b))
        .map_or(start, |i| i + 1);
    &s[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    #[test]
    fn remembers_scan_position_and_parsed_head() {
        let mut parser = Parser::default();
        let mut buf = BytesMut::from(&b"MSG a 1 5"[..]);
        assert_eq!(parser.decode(&mut buf), Ok(None));
        assert!(matches!(parser.state, State::ExpectLine { scanned: 9 }));
        buf.extend_from_slice(b"\r\nhel");
        assert_eq!(parser.decode(&mut buf), Ok(None));
        assert!(matches!(parser.state, State::ExpectPayload(h) if h.frame_len == 18));
        buf.extend_from_slice(b"lo\r\n");
        let Some(ServerOp::Msg(msg)) = parser.decode(&mut buf).unwrap() else {
            panic!()
        };
        assert_eq!(&msg.payload[..], b"hello");
        assert!(buf.is_empty());
        assert!(matches!(parser.state, State::ExpectLine { scanned: 0 }));
    }

    /// What `MsgFrame`'s documentation says of its size against `Msg`'s.
    #[cfg(target_pointer_width = "64")]
    #[test]
    fn a_kept_frame_takes_under_half_the_room_of_a_message() {
        assert_eq!(std::mem::size_of::<MsgFrame>(), 80);
        assert_eq!(std::mem::size_of::<Msg>(), 176);
    }

    #[test]
    fn msg_views_share_the_frame_buffer() {
        let mut parser = Parser::default();
        let mut buf = BytesMut::from(&b"MSG foo.bar 9 reply.to 3\r\nabc\r\n"[..]);
        let Some(ServerOp::Msg(msg)) = parser.decode(&mut buf).unwrap() else {
            panic!()
        };
        let subject = msg.subject.clone().into_bytes();
        let base = subject.as_ptr() as usize;
        assert_eq!(
            msg.payload.as_ptr() as usize - base,
            "foo.bar 9 reply.to 3\r\n".len()
        );
    }

    #[test]
    fn decode_with_hands_each_op_to_its_callback() {
        #[derive(Debug, PartialEq)]
        enum Got {
            Msg(u64, Bytes),
            Other(ServerOp),
        }
        let mut parser = Parser::default();
        let mut buf = BytesMut::from(
            &b"MSG a 7 2\r\nhi\r\nPING\r\nHMSG b 8 12 14\r\nNATS/1.0\r\n\r\nyo\r\nMSG c 9 5\r\nab"
                [..],
        );
        let mut got = Vec::new();
        loop {
            let decoded =
                parser.decode_with(&mut buf, |msg| Got::Msg(msg.sid, msg.payload), Got::Other);
            match decoded {
                Ok(Some(op)) => got.push(op),
                Ok(None) => break,
                Err(e) => panic!("{e}"),
            }
        }
        assert_eq!(
            got,
            [
                Got::Msg(7, Bytes::from_static(b"hi")),
                Got::Other(ServerOp::Ping),
                Got::Msg(8, Bytes::from_static(b"yo")),
            ]
        );
        // The incomplete frame is kept and finished by the bytes that follow, as `decode` does.
        buf.extend_from_slice(b"cde\r\n");
        let decoded = parser.decode_with(&mut buf, |msg| msg.payload, |op| panic!("{op:?}"));
        assert_eq!(decoded, Ok(Some(Bytes::from_static(b"abcde"))));
        // A broken frame reaches neither callback.
        let mut buf = BytesMut::from(&b"MSG a 1 2\r\nhi!!"[..]);
        let decoded = parser.decode_with(&mut buf, |_| panic!(), |_| panic!());
        assert_eq!(decoded, Err(DecodeError::MissingTerminator));
    }

    #[test]
    fn received_subjects_and_replies_need_only_be_utf8() {
        // The server relays replies (and subjects, to wildcard subscriptions) as publishers
        // gave them: what the subject rules refuse is delivered as it came.
        let mut parser = Parser::default();
        for (subject, reply) in [
            ("a..b", "x.>.y"),
            (".lead", "trail."),
            ("ctl\u{1}", "del\u{7f}"),
            ("wild.*", "caf\u{e9}.>"),
        ] {
            let mut buf = BytesMut::from(format!("MSG {subject} 1 {reply} 2\r\nhi\r\n").as_bytes());
            let Some(ServerOp::Msg(msg)) = parser.decode(&mut buf).unwrap() else {
                panic!("{subject} {reply}")
            };
            assert_eq!(msg.subject.as_str(), subject);
            assert_eq!(msg.reply.as_ref().map(|r| r.as_str()), Some(reply));
        }
        // Bytes that are not UTF-8 cannot make a `Subject`: the frame is refused.
        for line in [
            &b"MSG a\xff 1 2\r\nhi\r\n"[..],
            b"MSG a 1 r\xc3 2\r\nhi\r\n",
        ] {
            let mut buf = BytesMut::from(line);
            assert_eq!(
                Parser::default().decode(&mut buf),
                Err(DecodeError::InvalidSubject(crate::SubjectCause::NotUtf8))
            );
        }
    }

    #[test]
    fn blanks_are_found_at_every_offset_of_a_word() {
        for len in 0..40 {
            for at in 0..=len {
                let mut line = vec![b'x'; len];
                if at < len {
                    line[at] = if at % 2 == 0 { b' ' } else { b'\t' };
                }
                for from in 0..=at.min(len) {
                    assert_eq!(blank_or_end(&line, from), at, "{len} {at} {from}");
                }
            }
        }
        // Bytes that differ from a blank by one bit are not blanks.
        let line = [b'!', b'(', 0xa0, 0x89, b'0', b'a', 0x21, 0x08, b'x', b' '];
        assert_eq!(blank_or_end(&line, 0), 9);
    }

    #[test]
    fn split_args_by_mask_agrees_with_the_byte_walk() {
        // 200 random lines of each length up to 72 bytes (past the mask's 63), over token
        // bytes, blanks and near-blanks, from every offset, into room for 5 tokens and for 2.
        let alphabet = [b'a', b' ', b'\t', b'!', 0x08, 0xa0];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for len in 0..=72 {
            for _ in 0..200 {
                let line: Vec<u8> = (0..len)
                    .map(|_| {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        alphabet[(seed % alphabet.len() as u64) as usize]
                    })
                    .collect();
                for from in 0..=len {
                    for room in [5, 2] {
                        let (mut fast, mut slow) = ([Span::EMPTY; 5], [Span::EMPTY; 5]);
                        let got = split_args(&line, from, &mut fast[..room]);
                        let want = split_args_bytewise(&line, from, &mut slow[..room]);
                        assert_eq!(got, want, "{line:?} from {from} room {room}");
                        for (a, b) in fast.iter().zip(&slow).take(got.unwrap_or(0)) {
                            assert_eq!((a.start, a.end), (b.start, b.end), "{line:?} {from}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn split_args_bounds() {
        let mut out = [Span::EMPTY; 2];
        assert_eq!(split_args(b"  a \t b  ", 0, &mut out), Some(2));
        assert_eq!((out[1].start, out[1].end), (6, 7));
        assert_eq!(split_args(b"a b c", 0, &mut out), None);
    }

    #[test]
    fn numbers() {
        assert_eq!(parse_number(b"0", "MSG"), Ok(0));
        assert_eq!(parse_number(b"18446744073709551615", "MSG"), Ok(u64::MAX));
        for bad in [&b""[..], b"18446744073709551616", b"-1", b"+1", b"1a"] {
            assert_eq!(
                parse_number(bad, "MSG"),
                Err(DecodeError::InvalidNumber { op: "MSG" })
            );
        }
    }
}
