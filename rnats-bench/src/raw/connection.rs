//! One blocking connection of the raw client: a [`Reader`] with a big buffer, a [`Writer`]
//! that batches frames into big writes, and the handshake that joins them.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::Duration;

use super::RawError;
use super::parser::{Frame, Msg, Op, parse_frame};

/// Bytes read from the socket at once (at most): many small messages per system call.
pub const READ_BUFFER: usize = 256 * 1024;
/// Bytes of frames gathered before they are written in one system call.
pub const WRITE_BUFFER: usize = 64 * 1024;
/// How long connecting and the handshake may take.
pub(super) const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long one write may block before the server counts as gone.
const WRITE_TIMEOUT: Duration = Duration::from_secs(60);
/// Free space below which the reader moves a partial frame to the front of its buffer
/// rather than reading into the little room left behind it.
const MIN_READ: usize = 16 * 1024;

/// The bytes read from the server and the frames parsed off their front, with no socket: the
/// blocking [`Reader`] and the tokio client ([`super::on_tokio`]) each fill it from theirs.
#[derive(Debug)]
pub struct ReadBuffer {
    buf: Vec<u8>,
    /// Where the unparsed bytes start.
    start: usize,
    /// Where the bytes read so far end.
    end: usize,
}

/// A frame found by [`ReadBuffer::next_buffered`], to be looked at with [`ReadBuffer::op`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    frame: Frame,
    /// Where the frame starts in the reader's buffer.
    at: usize,
}

impl Located {
    /// Whether this is a `PING`, which the readers answer by themselves.
    pub fn is_ping(&self) -> bool {
        self.frame.is_ping()
    }
}

impl ReadBuffer {
    /// An empty buffer of `capacity` bytes (it grows for a frame that does not fit).
    pub fn new(capacity: usize) -> ReadBuffer {
        ReadBuffer {
            buf: vec![0; capacity.max(1)],
            start: 0,
            end: 0,
        }
    }

    /// The next whole frame already read, or `None` when more bytes are needed.
    pub fn next_buffered(&mut self) -> Result<Option<Located>, RawError> {
        Ok(parse_frame(&self.buf[self.start..self.end])?.map(|frame| {
            let at = self.start;
            self.start += frame.len;
            Located { frame, at }
        }))
    }

    /// The operation of a frame that [`ReadBuffer::next_buffered`] returned, valid until the
    /// buffer is read into again.
    pub fn op(&self, located: &Located) -> Op<'_> {
        located.frame.op(&self.buf[located.at..])
    }

    /// Where the next read goes, room made first; report what was read with
    /// [`ReadBuffer::filled`].
    pub fn room(&mut self) -> &mut [u8] {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        } else if self.buf.len() - self.end < MIN_READ {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.end == self.buf.len() {
            // One frame bigger than the whole buffer.
            let bigger = self.buf.len() * 2;
            self.buf.resize(bigger, 0);
        }
        &mut self.buf[self.end..]
    }

    /// `n` bytes were read into [`ReadBuffer::room`].
    pub fn filled(&mut self, n: usize) {
        self.end += n;
    }
}

/// The reading half: a [`ReadBuffer`] filled from a blocking source.
#[derive(Debug)]
pub struct Reader<R> {
    source: R,
    buffer: ReadBuffer,
}

impl<R: Read> Reader<R> {
    /// A reader over `source` with a buffer of `capacity` bytes (it grows for a frame that
    /// does not fit).
    pub fn new(source: R, capacity: usize) -> Reader<R> {
        Reader {
            source,
            buffer: ReadBuffer::new(capacity),
        }
    }

    /// The next frame other than `PING`, which is answered through `writer`. Before blocking
    /// on a read, whatever `writer` holds is written, so nothing waits for an answer to
    /// frames that were never sent.
    pub fn next_frame<W: Write>(&mut self, writer: &mut Writer<W>) -> Result<Located, RawError> {
        loop {
            match self.buffer.next_buffered()? {
                Some(located) if located.is_ping() => writer.push(b"PONG\r\n")?,
                Some(located) => return Ok(located),
                None => {
                    writer.write_out()?;
                    self.fill()?;
                }
            }
        }
    }

    /// The operation of a frame that [`Reader::next_frame`] returned, valid until the next
    /// call to it.
    pub fn op(&self, located: &Located) -> Op<'_> {
        self.buffer.op(located)
    }

    /// Reads once more from the source.
    fn fill(&mut self) -> Result<(), RawError> {
        match self.source.read(self.buffer.room()) {
            Ok(0) => Err(RawError::Closed),
            Ok(n) => {
                self.buffer.filled(n);
                Ok(())
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
}

/// The writing half: frames gathered in a buffer and written in big pieces.
#[derive(Debug)]
pub struct Writer<W> {
    sink: W,
    buf: Vec<u8>,
    /// Buffered bytes at which the buffer is written out.
    limit: usize,
}

impl<W: Write> Writer<W> {
    /// A writer to `sink` that writes once `limit` bytes are gathered.
    pub fn new(sink: W, limit: usize) -> Writer<W> {
        Writer {
            sink,
            buf: Vec::with_capacity(limit + 1024),
            limit,
        }
    }

    /// Queues `PUB <subject> [reply] <len>\r\n<payload>\r\n`.
    pub fn publish(
        &mut self,
        subject: &[u8],
        reply: Option<&[u8]>,
        payload: &[u8],
    ) -> Result<(), RawError> {
        encode_publish(&mut self.buf, subject, reply, payload);
        self.write_if_full()
    }

    /// Queues `SUB <subject> <sid>`.
    pub fn subscribe(&mut self, subject: &[u8], sid: u64) -> Result<(), RawError> {
        encode_subscribe(&mut self.buf, subject, sid);
        self.write_if_full()
    }

    /// Queues raw protocol bytes (`PING\r\n`, `CONNECT ...\r\n`).
    pub fn push(&mut self, frame: &[u8]) -> Result<(), RawError> {
        self.buf.extend_from_slice(frame);
        self.write_if_full()
    }

    /// Writes everything queued.
    pub fn write_out(&mut self) -> Result<(), RawError> {
        if !self.buf.is_empty() {
            self.sink.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    fn write_if_full(&mut self) -> Result<(), RawError> {
        if self.buf.len() >= self.limit {
            self.write_out()?;
        }
        Ok(())
    }
}

/// Appends `PUB <subject> [reply] <len>\r\n<payload>\r\n` to `buf`.
pub fn encode_publish(buf: &mut Vec<u8>, subject: &[u8], reply: Option<&[u8]>, payload: &[u8]) {
    let mut digits = [0u8; 20];
    let len = decimal(payload.len() as u64, &mut digits);
    buf.extend_from_slice(b"PUB ");
    buf.extend_from_slice(subject);
    buf.push(b' ');
    if let Some(reply) = reply {
        buf.extend_from_slice(reply);
        buf.push(b' ');
    }
    buf.extend_from_slice(len);
    buf.extend_from_slice(b"\r\n");
    buf.extend_from_slice(payload);
    buf.extend_from_slice(b"\r\n");
}

/// Appends `SUB <subject> <sid>\r\n` to `buf`.
pub fn encode_subscribe(buf: &mut Vec<u8>, subject: &[u8], sid: u64) {
    let mut digits = [0u8; 20];
    let sid = decimal(sid, &mut digits);
    buf.extend_from_slice(b"SUB ");
    buf.extend_from_slice(subject);
    buf.push(b' ');
    buf.extend_from_slice(sid);
    buf.extend_from_slice(b"\r\n");
}

/// A handshaken connection to a server.
#[derive(Debug)]
pub struct Connection {
    reader: Reader<TcpStream>,
    writer: Writer<TcpStream>,
}

impl Connection {
    /// Connects to `url` (`nats://host:port` or `host:port`, no credentials, no TLS) and
    /// handshakes: INFO, then CONNECT (not verbose, not pedantic) and a PING answered by PONG,
    /// so the connection is ready when this returns.
    pub fn connect(url: &str) -> Result<Connection, RawError> {
        let address = address(url)?;
        let stream = TcpStream::connect(address)?;
        // Latency scenarios write one small frame at a time; Nagle would hold them back.
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(HANDSHAKE_TIMEOUT))?;
        stream.set_write_timeout(Some(WRITE_TIMEOUT))?;
        let mut connection = Connection {
            reader: Reader::new(stream.try_clone()?, READ_BUFFER),
            writer: Writer::new(stream, WRITE_BUFFER),
        };
        connection.handshake()?;
        Ok(connection)
    }

    /// How long a read may block before it fails with [`RawError::Timeout`]; `None` for ever.
    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> Result<(), RawError> {
        Ok(self.writer.sink.set_read_timeout(timeout)?)
    }

    /// A handle that can [`Shutdown`] the socket from another thread, ending a blocked read.
    pub fn shutdown_handle(&self) -> Result<StopHandle, RawError> {
        Ok(StopHandle(self.writer.sink.try_clone()?))
    }

    /// Queues a publish; it goes out when the write buffer fills, on [`Connection::flush`], or
    /// before the next blocking read.
    pub fn publish(
        &mut self,
        subject: &[u8],
        reply: Option<&[u8]>,
        payload: &[u8],
    ) -> Result<(), RawError> {
        self.writer.publish(subject, reply, payload)
    }

    /// Queues a subscription.
    pub fn subscribe(&mut self, subject: &[u8], sid: u64) -> Result<(), RawError> {
        self.writer.subscribe(subject, sid)
    }

    /// Writes what is queued plus a PING and reads until the PONG: the server has then
    /// processed everything sent before (ADR-40's meaning of flush). Returns how many messages
    /// arrived before the PONG; they are consumed.
    pub fn flush(&mut self) -> Result<usize, RawError> {
        self.writer.push(b"PING\r\n")?;
        let mut messages = 0;
        loop {
            let located = self.reader.next_frame(&mut self.writer)?;
            match self.reader.op(&located) {
                Op::Pong => return Ok(messages),
                Op::Msg(_) => messages += 1,
                Op::Err(text) => return Err(RawError::server(text)),
                Op::Ok | Op::Info(_) | Op::Ping => {}
            }
        }
    }

    /// The next message, writing what is queued first if it has to wait.
    pub fn next_msg(&mut self) -> Result<Msg<'_>, RawError> {
        loop {
            let located = self.reader.next_frame(&mut self.writer)?;
            match self.reader.op(&located) {
                Op::Msg(_) => break self.msg(&located),
                Op::Err(text) => return Err(RawError::server(text)),
                Op::Ok | Op::Info(_) | Op::Ping | Op::Pong => {}
            }
        }
    }

    /// Both halves at once, so a message read can be answered without copying it.
    pub fn split(&mut self) -> (&mut Reader<TcpStream>, &mut Writer<TcpStream>) {
        (&mut self.reader, &mut self.writer)
    }

    fn msg(&self, located: &Located) -> Result<Msg<'_>, RawError> {
        match self.reader.op(located) {
            Op::Msg(msg) => Ok(msg),
            _ => Err(RawError::Unexpected("a frame that is not a message")),
        }
    }

    fn handshake(&mut self) -> Result<(), RawError> {
        let located = self.reader.next_frame(&mut self.writer)?;
        match self.reader.op(&located) {
            Op::Info(json) => check_info(json)?,
            _ => return Err(RawError::Unexpected("a frame before INFO")),
        }
        self.writer.push(CONNECT)?;
        self.flush().map(drop)
    }
}

/// Shuts a [`Connection`]'s socket down from another thread.
#[derive(Debug)]
pub struct StopHandle(TcpStream);

impl StopHandle {
    /// Shuts both directions down: a blocked read on the connection returns at once.
    pub fn stop(&self) {
        // An error means the socket is already closed, which is what was wanted.
        let _ = self.0.shutdown(Shutdown::Both);
    }
}

/// The CONNECT this client sends: no `+OK` per frame, no subject checks by the server, no
/// headers (the bench sends none).
pub(super) const CONNECT: &[u8] =
    b"CONNECT {\"verbose\":false,\"pedantic\":false,\"headers\":false,\
    \"protocol\":1,\"lang\":\"rust-raw-bench\",\"version\":\"0.1.0\"}\r\n";

/// Refuses servers this client cannot talk to. A substring check is enough for two flags.
pub(super) fn check_info(json: &[u8]) -> Result<(), RawError> {
    for (flag, what) in [
        (&b"\"auth_required\":true"[..], "authentication"),
        (b"\"tls_required\":true", "TLS"),
    ] {
        if json.windows(flag.len()).any(|w| w == flag) {
            return Err(RawError::Unsupported(what));
        }
    }
    Ok(())
}

/// `host:port` from `nats://host:port`, `tcp://host:port` or `host:port` (port 4222 when
/// absent); the first URL of a comma-separated list.
pub(super) fn address(url: &str) -> Result<String, RawError> {
    let first = url.split(',').next().unwrap_or(url).trim();
    let rest = first
        .strip_prefix("nats://")
        .or_else(|| first.strip_prefix("tcp://"))
        .unwrap_or(first);
    if rest.contains("://") || rest.contains('@') {
        return Err(RawError::BadUrl(url.to_owned()));
    }
    let host_port = rest.trim_end_matches('/');
    if host_port.is_empty() {
        return Err(RawError::BadUrl(url.to_owned()));
    }
    let has_port = match host_port.rfind(':') {
        Some(colon) => !host_port[colon..].contains(']'),
        None => false,
    };
    Ok(if has_port {
        host_port.to_owned()
    } else {
        format!("{host_port}:4222")
    })
}

/// `n` in decimal, written into the end of `digits`.
fn decimal(mut n: u64, digits: &mut [u8; 20]) -> &[u8] {
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    &digits[at..]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A source that hands out its bytes in pieces of the given lengths, then end of file.
    struct Pieces {
        data: Vec<u8>,
        lengths: Vec<usize>,
        at: usize,
        call: usize,
    }

    impl Read for Pieces {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let want = self.lengths.get(self.call).copied().unwrap_or(usize::MAX);
            self.call += 1;
            let n = want.min(out.len()).min(self.data.len() - self.at);
            out[..n].copy_from_slice(&self.data[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }

    fn messages(data: &[u8], lengths: Vec<usize>, capacity: usize) -> (Vec<Vec<u8>>, Vec<u8>) {
        let mut reader = Reader::new(
            Pieces {
                data: data.to_vec(),
                lengths,
                at: 0,
                call: 0,
            },
            capacity,
        );
        let mut writer = Writer::new(Vec::new(), 1 << 20);
        let mut payloads = Vec::new();
        loop {
            match reader.next_frame(&mut writer) {
                Ok(located) => {
                    if let Op::Msg(m) = reader.op(&located) {
                        payloads.push(m.payload.to_vec());
                    }
                }
                Err(RawError::Closed) => break,
                Err(e) => panic!("unexpected error {e}"),
            }
        }
        writer.write_out().expect("vec write");
        (payloads, writer.sink)
    }

    #[test]
    fn reader_survives_any_piece_size_and_a_small_buffer() {
        let mut data = Vec::new();
        let mut expected = Vec::new();
        for i in 0..200usize {
            let payload = vec![b'a' + (i % 26) as u8; i * 7 % 300];
            data.extend_from_slice(format!("MSG s.{i} 1 {}\r\n", payload.len()).as_bytes());
            data.extend_from_slice(&payload);
            data.extend_from_slice(b"\r\n");
            if i % 50 == 0 {
                data.extend_from_slice(b"PING\r\n");
            }
            expected.push(payload);
        }
        for piece in [1, 2, 3, 7, 64, 1000, usize::MAX] {
            for capacity in [16, 500, READ_BUFFER] {
                let (payloads, written) = messages(&data, vec![piece; 100_000], capacity);
                assert_eq!(payloads, expected, "pieces of {piece}, buffer {capacity}");
                // Each of the 4 PINGs was answered.
                assert_eq!(written, b"PONG\r\n".repeat(4), "pieces of {piece}");
            }
        }
    }

    #[test]
    fn writer_encodes_and_batches() {
        let mut writer = Writer::new(Vec::new(), 64);
        writer.subscribe(b"bench.sub", 12).expect("sub");
        writer.publish(b"a.b", None, b"hi").expect("pub");
        writer.publish(b"a.b", Some(b"_INBOX.x"), b"").expect("pub");
        assert!(writer.sink.is_empty(), "nothing written below the limit");
        writer.publish(b"big", None, &[b'x'; 64]).expect("pub");
        assert!(!writer.sink.is_empty(), "written once past the limit");
        writer.write_out().expect("write");
        let mut expected = b"SUB bench.sub 12\r\nPUB a.b 2\r\nhi\r\nPUB a.b _INBOX.x 0\r\n\r\n\
            PUB big 64\r\n"
            .to_vec();
        expected.extend_from_slice(&[b'x'; 64]);
        expected.extend_from_slice(b"\r\n");
        assert_eq!(writer.sink, expected);
        assert!(writer.buf.is_empty());
    }

    #[test]
    fn decimal_digits() {
        let mut digits = [0u8; 20];
        assert_eq!(decimal(0, &mut digits), b"0");
        assert_eq!(decimal(8192, &mut digits), b"8192");
        assert_eq!(
            decimal(u64::MAX, &mut digits),
            u64::MAX.to_string().as_bytes()
        );
    }

    #[test]
    fn addresses() {
        assert_eq!(
            address("nats://127.0.0.1:4333").ok(),
            Some("127.0.0.1:4333".into())
        );
        assert_eq!(
            address("127.0.0.1:4333").ok(),
            Some("127.0.0.1:4333".into())
        );
        assert_eq!(
            address("nats://127.0.0.1").ok(),
            Some("127.0.0.1:4222".into())
        );
        assert_eq!(
            address("nats://127.0.0.1:1,nats://127.0.0.1:2").ok(),
            Some("127.0.0.1:1".into())
        );
        assert_eq!(address("nats://[::1]").ok(), Some("[::1]:4222".into()));
        assert!(address("nats://user:pw@127.0.0.1:4222").is_err());
        assert!(address("tls://127.0.0.1:4222").is_err());
        assert!(address("").is_err());
    }

    #[test]
    fn refuses_auth_and_tls() {
        assert!(check_info(br#"{"server_id":"x","headers":true}"#).is_ok());
        assert!(check_info(br#"{"auth_required":true}"#).is_err());
        assert!(check_info(br#"{"tls_required":true}"#).is_err());
    }
}
