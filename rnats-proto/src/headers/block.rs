//! Decoding and encoding the header block of `HMSG` / `HPUB` frames.

use std::collections::hash_map::RandomState;

use bytes::BytesMut;

use super::VERSION;
use super::map::{HeaderMap, NameIndex};
use super::name::{HeaderName, HeaderValue, validate_value};
use super::status::StatusCode;
use crate::decode_error::DecodeError;

const CRLF: &[u8] = b"\r\n";

/// A decoded header block: the headers plus the optional status line parts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HeaderBlock {
    /// The `Name: value` pairs, in wire order.
    pub headers: HeaderMap,
    /// The status code from the version line, e.g. `503` in `NATS/1.0 503`.
    pub status: Option<StatusCode>,
    /// The text after the status code, e.g. `No Responders`.
    pub description: Option<String>,
}

impl HeaderBlock {
    /// Decodes exactly the header bytes of an `HMSG`, including the trailing
    /// `\r\n\r\n`.
    ///
    /// A block made of only a version line may end with a single `\r\n`
    /// (some servers count a bare `NATS/1.0 503\r\n` as the whole block).
    /// Lookups on the result follow [`HeaderMap`]'s exact-match rule.
    pub fn decode(block: &[u8]) -> Result<HeaderBlock, DecodeError> {
        let body = block
            .strip_suffix(CRLF)
            .ok_or(invalid("header block does not end with CRLF"))?;
        let mut lines = CrlfLines { rest: Some(body) };
        let version_line = lines.next().unwrap_or_default();
        let (status, description) = parse_version_line(version_line)?;

        // One header per line after the version line, and a line is 4 bytes at least
        // (`a:\r\n`, whatever lone `\n`s a bad block holds): sized once, the map does not
        // grow (and copy) a block of many headers step by step.
        let line_count = memchr::memchr_iter(b'\n', body).count();
        let names = line_count.saturating_sub(1).min(body.len() / 4);
        let mut headers = HeaderMap::with_capacity(names);
        let mut index = NameIndex::<RandomState>::default();
        let mut saw_blank = false;
        for line in lines {
            if saw_blank {
                return Err(invalid("data after the blank line ending the header block"));
            }
            if line.is_empty() {
                saw_blank = true;
                continue;
            }
            let (name, value) = parse_header_line(line)?;
            headers.append_decoded(name, value, &mut index);
        }
        if !saw_blank && !headers.is_empty() {
            return Err(invalid("header block is missing its closing blank line"));
        }
        Ok(HeaderBlock {
            headers,
            status,
            description,
        })
    }
}

/// Returns the exact number of bytes [`encode_headers`] writes for `headers`.
pub fn encoded_len(headers: &HeaderMap) -> usize {
    let lines: usize = headers
        .iter()
        .map(|(name, values)| {
            let line = name.as_str().len() + 2 + CRLF.len();
            values
                .iter()
                .map(|v| line + v.as_str().len())
                .sum::<usize>()
        })
        .sum();
    VERSION.len() + CRLF.len() + lines + CRLF.len()
}

/// Appends `NATS/1.0\r\n`, one `Name: value\r\n` per value, then `\r\n`.
///
/// Clients never send a status line, so none is written. The map holds only checked names and
/// values, so no text can end a line early; headers the map refused are simply absent (callers
/// that must not send such a map check [`HeaderMap::check`] first).
pub fn encode_headers(buf: &mut BytesMut, headers: &HeaderMap) {
    buf.reserve(encoded_len(headers));
    buf.extend_from_slice(VERSION);
    buf.extend_from_slice(CRLF);
    for (name, values) in headers {
        for value in values {
            buf.extend_from_slice(name.as_str().as_bytes());
            buf.extend_from_slice(b": ");
            buf.extend_from_slice(value.as_str().as_bytes());
            buf.extend_from_slice(CRLF);
        }
    }
    buf.extend_from_slice(CRLF);
}

fn invalid(reason: &'static str) -> DecodeError {
    DecodeError::InvalidHeaders { reason }
}

/// Splits on `\r\n`; a lone `\r` or `\n` stays inside its line and is later
/// rejected by name/value validation.
struct CrlfLines<'a> {
    rest: Option<&'a [u8]>,
}

impl<'a> Iterator for CrlfLines<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        let rest = self.rest?;
        match find_crlf(rest) {
            Some(i) => {
                self.rest = Some(&rest[i + 2..]);
                Some(&rest[..i])
            }
            None => {
                self.rest = None;
                Some(rest)
            }
        }
    }
}

/// Where the first `\r\n` of `s` starts. A search for the `\n` (checking the byte before it)
/// rather than `memmem::find`, which builds a searcher on every call: a header line is short,
/// and that build cost more than the search.
fn find_crlf(s: &[u8]) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = memchr::memchr(b'\n', &s[from..]) {
        let lf = from + i;
        if lf > 0 && s[lf - 1] == b'\r' {
            return Some(lf - 1);
        }
        from = lf + 1;
    }
    None
}

/// Parses `NATS/1.0[ <3-digit status>[ <description>]]`.
fn parse_version_line(line: &[u8]) -> Result<(Option<StatusCode>, Option<String>), DecodeError> {
    let rest = line
        .strip_prefix(VERSION)
        .ok_or(invalid("header block does not start with NATS/1.0"))?;
    let rest = match rest.first() {
        None => return Ok((None, None)),
        Some(b' ' | b'\t') => trim(rest),
        Some(_) => return Err(invalid("unexpected text after NATS/1.0")),
    };
    if rest.is_empty() {
        return Ok((None, None));
    }
    let bad_status = || invalid("invalid status code");
    let (code, after) = rest.split_at_checked(3).ok_or_else(bad_status)?;
    if !code.iter().all(u8::is_ascii_digit) || !matches!(after.first(), None | Some(b' ' | b'\t')) {
        return Err(bad_status());
    }
    let code = code.iter().fold(0u16, |n, d| n * 10 + u16::from(d - b'0'));
    let status = StatusCode::from_u16(code).map_err(|_| bad_status())?;
    let description = trim(after);
    if description.is_empty() {
        return Ok((Some(status), None));
    }
    let description =
        std::str::from_utf8(description).map_err(|_| invalid("status description is not UTF-8"))?;
    validate_value(description).map_err(|_| invalid("status description contains CR or LF"))?;
    Ok((Some(status), Some(description.to_owned())))
}

fn parse_header_line(line: &[u8]) -> Result<(HeaderName, HeaderValue), DecodeError> {
    let colon = memchr::memchr(b':', line).ok_or(invalid("header line has no ':'"))?;
    let name = std::str::from_utf8(&line[..colon]).map_err(|_| invalid("invalid header name"))?;
    let value = std::str::from_utf8(trim(&line[colon + 1..]))
        .map_err(|_| invalid("header value is not UTF-8"))?;
    let name = HeaderName::try_from(name).map_err(|_| invalid("invalid header name"))?;
    let value = value
        .parse::<HeaderValue>()
        .map_err(|_| invalid("invalid header value"))?;
    Ok((name, value))
}

fn trim(s: &[u8]) -> &[u8] {
    let is_space = |b: &u8| *b == b' ' || *b == b'\t';
    let start = s.iter().position(|b| !is_space(b)).unwrap_or(s.len());
    let end = s
        .iter()
        .rposition(|b| !is_space(b))
        .map_or(start, |i| i + 1);
    &s[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(block: &[u8]) -> HeaderBlock {
        HeaderBlock::decode(block).unwrap()
    }

    fn reason(block: &[u8]) -> &'static str {
        match HeaderBlock::decode(block) {
            Err(DecodeError::InvalidHeaders { reason }) => reason,
            other => panic!("expected InvalidHeaders, got {other:?}"),
        }
    }

    #[test]
    fn decodes_plain_headers() {
        let b = decode(b"NATS/1.0\r\nFoo: bar\r\nfoo:  baz \r\nFoo: qux\r\n\r\n");
        assert_eq!(b.status, None);
        assert_eq!(b.description, None);
        assert_eq!(b.headers.get_all("Foo").collect::<Vec<_>>(), ["bar", "qux"]);
        assert_eq!(b.headers.get("foo").unwrap(), "baz");
    }

    #[test]
    fn a_block_of_many_names_decodes_as_a_map_built_one_pair_at_a_time() {
        // Past the index threshold, repeated names still gather their values in order.
        let mut block = b"NATS/1.0\r\n".to_vec();
        let mut expected = HeaderMap::new();
        for i in 0..200 {
            let name = format!("H-{}", i % 70);
            let value = format!("v{i}");
            block.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
            expected.append(name.as_str(), value.as_str());
        }
        block.extend_from_slice(b"\r\n");
        let decoded = decode(&block).headers;
        assert_eq!(decoded, expected);
        assert_eq!(decoded.len(), 70);
        let values: Vec<&str> = decoded.get_all("H-3").map(|v| v.as_str()).collect();
        assert_eq!(values, ["v3", "v73", "v143"]);
        let names: Vec<&str> = decoded.iter().map(|(n, _)| n.as_str()).take(3).collect();
        assert_eq!(names, ["H-0", "H-1", "H-2"], "names keep their first order");
    }

    #[test]
    fn lines_split_only_at_crlf() {
        assert_eq!(find_crlf(b"ab\r\ncd"), Some(2));
        assert_eq!(find_crlf(b"\r\n"), Some(0));
        assert_eq!(find_crlf(b"\na\rb\n\r\n"), Some(5));
        assert_eq!(find_crlf(b"a\nb\rc"), None);
        assert_eq!(find_crlf(b""), None);
        let lines: Vec<&[u8]> = CrlfLines {
            rest: Some(b"a\nb\r\n\rc\r\n"),
        }
        .collect();
        assert_eq!(lines, [&b"a\nb"[..], b"\rc", b""]);
    }

    #[test]
    fn decodes_status_lines() {
        let cases: &[(&[u8], StatusCode, Option<&str>)] = &[
            (b"NATS/1.0 503\r\n\r\n", StatusCode::NO_RESPONDERS, None),
            (b"NATS/1.0 503\r\n", StatusCode::NO_RESPONDERS, None),
            (
                b"NATS/1.0 408 Request Timeout\r\n\r\n",
                StatusCode::TIMEOUT,
                Some("Request Timeout"),
            ),
            (
                b"NATS/1.0 404 No Messages\r\n\r\n",
                StatusCode::NOT_FOUND,
                Some("No Messages"),
            ),
            (
                b"NATS/1.0\t409  Consumer Deleted \r\n\r\n",
                StatusCode::CONFLICT,
                Some("Consumer Deleted"),
            ),
            (
                b"NATS/1.0 100 Idle Heartbeat\r\n\r\n",
                StatusCode::IDLE_HEARTBEAT,
                Some("Idle Heartbeat"),
            ),
        ];
        for (block, status, description) in cases {
            let b = decode(block);
            assert_eq!(b.status, Some(*status));
            assert_eq!(b.description.as_deref(), *description);
            assert!(b.headers.is_empty());
        }
    }

    #[test]
    fn status_with_headers() {
        let b = decode(b"NATS/1.0 100 FlowControl Request\r\nNats-Consumer-Stalled: x.y\r\n\r\n");
        assert_eq!(b.status, Some(StatusCode::IDLE_HEARTBEAT));
        assert_eq!(b.headers.get("Nats-Consumer-Stalled").unwrap(), "x.y");
    }

    #[test]
    fn rejects_malformed_blocks() {
        assert_eq!(
            reason(b"NATS/2.0\r\n\r\n"),
            "header block does not start with NATS/1.0"
        );
        assert_eq!(
            reason(b"NATS/1.0\r\n\r"),
            "header block does not end with CRLF"
        );
        assert_eq!(reason(b"NATS/1.0\r\nFoo\r\n\r\n"), "header line has no ':'");
        assert_eq!(
            reason(b"NATS/1.0\r\nFoo: bar\r\n"),
            "header block is missing its closing blank line"
        );
        assert_eq!(reason(b"NATS/1.0 50\r\n\r\n"), "invalid status code");
        assert_eq!(reason(b"NATS/1.0 5034\r\n\r\n"), "invalid status code");
        assert_eq!(reason(b"NATS/1.0 099\r\n\r\n"), "invalid status code");
        assert_eq!(
            reason(b"NATS/1.01\r\n\r\n"),
            "unexpected text after NATS/1.0"
        );
        assert_eq!(reason(b"NATS/1.0\r\nA b: c\r\n\r\n"), "invalid header name");
        assert_eq!(
            reason(b"NATS/1.0\r\nA: b\nc\r\n\r\n"),
            "invalid header value"
        );
        assert_eq!(
            reason(b"NATS/1.0\r\n\r\nA: b\r\n"),
            "data after the blank line ending the header block"
        );
        assert_eq!(reason(b""), "header block does not end with CRLF");
    }

    #[test]
    fn refused_text_never_reaches_the_wire() {
        let mut map = HeaderMap::new();
        map.insert("A", "1\r\nForged: yes");
        map.insert("B\r\nForged", "yes");
        map.append("C", HeaderValue::from("x\ny"));
        map.insert("Ok", "fine");
        assert!(map.check().is_err());
        let mut buf = BytesMut::new();
        encode_headers(&mut buf, &map);
        assert_eq!(&buf[..], b"NATS/1.0\r\nOk: fine\r\n\r\n");
        assert_eq!(buf.len(), encoded_len(&map));
    }

    #[test]
    fn encode_round_trips_and_len_is_exact() {
        let mut map = HeaderMap::new();
        map.append("Nats-Msg-Id", "abc");
        map.append("X-Multi", "1");
        map.append("x-multi", "2");
        map.append("X-Multi", "");
        let mut buf = BytesMut::new();
        encode_headers(&mut buf, &map);
        assert_eq!(buf.len(), encoded_len(&map));
        // Values of one name are written together, names in first-insertion order.
        assert_eq!(
            &buf[..],
            b"NATS/1.0\r\nNats-Msg-Id: abc\r\nX-Multi: 1\r\nX-Multi: \r\nx-multi: 2\r\n\r\n"
        );
        assert_eq!(decode(&buf).headers, map);

        let mut empty = BytesMut::new();
        encode_headers(&mut empty, &HeaderMap::new());
        assert_eq!(&empty[..], b"NATS/1.0\r\n\r\n");
        assert_eq!(encoded_len(&HeaderMap::new()), empty.len());
    }
}
