//! Encoding of client ops (`PUB`, `HPUB`, `SUB`, `UNSUB`, `CONNECT`, ...).
//!
//! Everything appends to a caller-owned [`BytesMut`]; numbers are written
//! with `itoa` so the hot path never goes through `format!`.

use bytes::{BufMut, BytesMut};

use crate::headers::{self, HeaderMap};
use crate::info::ConnectInfo;

/// A complete `PING` op.
pub const PING: &[u8] = b"PING\r\n";
/// A complete `PONG` op.
pub const PONG: &[u8] = b"PONG\r\n";
/// The line terminator ending every op and every payload.
pub const CRLF: &[u8] = b"\r\n";

/// The control part of a `PUB` or `HPUB` op.
///
/// Arguments are written as given: the caller is expected to pass a valid
/// subject (e.g. from a [`Subject`](crate::Subject)) without wildcards.
#[derive(Debug, Clone, Copy)]
pub struct Pub<'a> {
    /// Subject to publish to.
    pub subject: &'a str,
    /// Subject replies should be sent to.
    pub reply: Option<&'a str>,
    /// Headers; `Some` selects `HPUB`, even for an empty map.
    pub headers: Option<&'a HeaderMap>,
}

impl Pub<'_> {
    /// Writes `PUB subj [reply] len\r\n`, or `HPUB subj [reply] hlen total\r\n`
    /// followed by the header block; the caller then writes the payload and
    /// [`CRLF`].
    pub fn encode_head(&self, buf: &mut BytesMut, payload_len: usize) {
        // A cheap upper bound (two 20-digit sizes) instead of the exact length.
        let reply_len = self.reply.map_or(0, str::len);
        buf.reserve(self.subject.len() + reply_len + 48);
        let mut num = itoa::Buffer::new();
        buf.extend_from_slice(if self.headers.is_some() {
            b"HPUB "
        } else {
            b"PUB "
        });
        buf.extend_from_slice(self.subject.as_bytes());
        buf.put_u8(b' ');
        if let Some(reply) = self.reply {
            buf.extend_from_slice(reply.as_bytes());
            buf.put_u8(b' ');
        }
        match self.headers {
            None => buf.extend_from_slice(num.format(payload_len).as_bytes()),
            Some(map) => {
                let header_len = headers::encoded_len(map);
                buf.extend_from_slice(num.format(header_len).as_bytes());
                buf.put_u8(b' ');
                buf.extend_from_slice(num.format(header_len + payload_len).as_bytes());
            }
        }
        buf.extend_from_slice(CRLF);
        if let Some(map) = self.headers {
            headers::encode_headers(buf, map);
        }
    }

    /// Writes the whole frame: head, payload and the closing `\r\n`.
    pub fn encode(&self, buf: &mut BytesMut, payload: &[u8]) {
        buf.reserve(self.encoded_len(payload.len()));
        self.encode_head(buf, payload.len());
        buf.extend_from_slice(payload);
        buf.extend_from_slice(CRLF);
    }

    /// Returns the exact number of bytes [`Pub::encode`] writes for a payload
    /// of `payload_len` bytes.
    pub fn encoded_len(&self, payload_len: usize) -> usize {
        self.head_len(payload_len) + payload_len + CRLF.len()
    }

    /// Exact length of what [`Pub::encode_head`] writes.
    fn head_len(&self, payload_len: usize) -> usize {
        let reply = self.reply.map_or(0, |r| r.len() + 1);
        let sizes = match self.headers {
            None => digits(payload_len),
            Some(map) => {
                let header_len = headers::encoded_len(map);
                digits(header_len) + 1 + digits(header_len + payload_len) + header_len
            }
        };
        let op = if self.headers.is_some() {
            "HPUB "
        } else {
            "PUB "
        };
        op.len() + self.subject.len() + 1 + reply + sizes + CRLF.len()
    }
}

/// Writes `SUB <subject> [queue] <sid>\r\n`.
pub fn encode_sub(buf: &mut BytesMut, subject: &str, queue: Option<&str>, sid: u64) {
    buf.extend_from_slice(b"SUB ");
    buf.extend_from_slice(subject.as_bytes());
    buf.put_u8(b' ');
    if let Some(queue) = queue {
        buf.extend_from_slice(queue.as_bytes());
        buf.put_u8(b' ');
    }
    buf.extend_from_slice(itoa::Buffer::new().format(sid).as_bytes());
    buf.extend_from_slice(CRLF);
}

/// Writes `UNSUB <sid> [max]\r\n`; with `max` the server removes the
/// subscription after delivering that many messages in total.
pub fn encode_unsub(buf: &mut BytesMut, sid: u64, max: Option<u64>) {
    let mut num = itoa::Buffer::new();
    buf.extend_from_slice(b"UNSUB ");
    buf.extend_from_slice(num.format(sid).as_bytes());
    if let Some(max) = max {
        buf.put_u8(b' ');
        buf.extend_from_slice(num.format(max).as_bytes());
    }
    buf.extend_from_slice(CRLF);
}

/// Writes `CONNECT {json}\r\n`.
pub fn encode_connect(buf: &mut BytesMut, info: &ConnectInfo) {
    buf.extend_from_slice(b"CONNECT ");
    // ConnectInfo holds only strings, booleans and integers, and writing to
    // a BytesMut cannot fail, so serialization has no error path.
    serde_json::to_writer(buf.writer(), info).expect("ConnectInfo always serializes");
    buf.extend_from_slice(CRLF);
}

/// Number of decimal digits in `n`.
fn digits(n: usize) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pub_frame(p: Pub<'_>, payload: &[u8]) -> BytesMut {
        let mut buf = BytesMut::new();
        p.encode(&mut buf, payload);
        assert_eq!(buf.len(), p.encoded_len(payload.len()));
        buf
    }

    #[test]
    fn pub_without_and_with_reply() {
        let p = Pub {
            subject: "foo",
            reply: None,
            headers: None,
        };
        assert_eq!(&pub_frame(p, b"hello")[..], b"PUB foo 5\r\nhello\r\n");
        let p = Pub {
            subject: "foo",
            reply: Some("_INBOX.1"),
            headers: None,
        };
        assert_eq!(&pub_frame(p, b"")[..], b"PUB foo _INBOX.1 0\r\n\r\n");
    }

    #[test]
    fn hpub_counts_header_bytes() {
        let mut map = HeaderMap::new();
        map.insert("A", "b");
        let p = Pub {
            subject: "foo",
            reply: Some("r"),
            headers: Some(&map),
        };
        assert_eq!(
            &pub_frame(p, b"hi")[..],
            b"HPUB foo r 18 20\r\nNATS/1.0\r\nA: b\r\n\r\nhi\r\n"
        );
        let empty = HeaderMap::new();
        let p = Pub {
            subject: "foo",
            reply: None,
            headers: Some(&empty),
        };
        assert_eq!(
            &pub_frame(p, b"")[..],
            b"HPUB foo 12 12\r\nNATS/1.0\r\n\r\n\r\n"
        );
    }

    #[test]
    fn sub_unsub_connect() {
        let mut buf = BytesMut::new();
        encode_sub(&mut buf, "foo.*", None, 1);
        encode_sub(&mut buf, "foo", Some("workers"), 42);
        encode_unsub(&mut buf, 1, None);
        encode_unsub(&mut buf, 42, Some(10));
        assert_eq!(
            &buf[..],
            b"SUB foo.* 1\r\nSUB foo workers 42\r\nUNSUB 1\r\nUNSUB 42 10\r\n"
        );

        let mut buf = BytesMut::new();
        let info = ConnectInfo {
            lang: "rust".into(),
            ..Default::default()
        };
        encode_connect(&mut buf, &info);
        assert!(buf.starts_with(b"CONNECT {\"verbose\":false,"));
        assert!(buf.ends_with(b"}\r\n"));
    }

    #[test]
    fn digit_counts() {
        for n in [0usize, 9, 10, 99, 100, 12345, usize::MAX] {
            assert_eq!(digits(n), n.to_string().len());
        }
    }
}
