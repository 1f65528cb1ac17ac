//! The server's stderr, drained by a background thread into a bounded line buffer that
//! waiters can block on.
//!
//! The reader thread runs until the pipe closes, so the server can never stall on a full
//! pipe, and every waiter is woken by each new line (or by the end of the stream) through a
//! condition variable: readiness is an event, not a timer.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::Instant;

/// How many stderr lines are kept for [`crate::NatsServer::log_tail`] and error reports.
const KEEP_LINES: usize = 200;

/// The retained tail of one server process's stderr.
#[derive(Debug, Default)]
pub(crate) struct LogBuffer {
    state: Mutex<LogState>,
    changed: Condvar,
}

#[derive(Debug, Default)]
struct LogState {
    lines: VecDeque<String>,
    /// Lines ever pushed; `total - lines.len()` is the absolute index of `lines[0]`.
    total: usize,
    /// The pipe reached end of file: the process has exited or closed stderr.
    closed: bool,
}

/// Why [`LogBuffer::scan`] gave up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScanEnd {
    /// The stream ended without a matching line.
    Closed,
    /// The deadline passed first.
    TimedOut,
}

impl LogBuffer {
    /// Starts a thread that appends every line of `stderr` to a new buffer.
    pub(crate) fn drain<R: Read + Send + 'static>(
        stderr: R,
    ) -> std::io::Result<(Arc<Self>, JoinHandle<()>)> {
        let buffer = Arc::new(Self::default());
        let writer = Arc::clone(&buffer);
        let handle = thread::Builder::new()
            .name("nats-server-stderr".into())
            .spawn(move || writer.read_all(stderr))?;
        Ok((buffer, handle))
    }

    /// A copy of the retained lines, oldest first.
    pub(crate) fn tail(&self) -> Vec<String> {
        self.lock().lines.iter().cloned().collect()
    }

    /// Feeds retained and then new lines to `matcher` until it returns `Some`, the stream
    /// ends, or `deadline` passes. Lines already evicted from the buffer are not seen.
    pub(crate) fn scan<T>(
        &self,
        deadline: Instant,
        mut matcher: impl FnMut(&str) -> Option<T>,
    ) -> Result<T, ScanEnd> {
        let mut next: usize = 0;
        let mut state = self.lock();
        loop {
            let first = state.total - state.lines.len();
            for line in state.lines.iter().skip(next.saturating_sub(first)) {
                if let Some(found) = matcher(line) {
                    return Ok(found);
                }
            }
            next = state.total;
            if state.closed {
                return Err(ScanEnd::Closed);
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(ScanEnd::TimedOut);
            }
            state = self
                .changed
                .wait_timeout(state, deadline - now)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    fn read_all(&self, stderr: impl Read) {
        let mut reader = BufReader::new(stderr);
        let mut raw = Vec::new();
        loop {
            raw.clear();
            // A read error on a pipe means the other end is gone: treat it as end of file.
            match reader.read_until(b'\n', &mut raw) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    let line = String::from_utf8_lossy(&raw);
                    self.push(line.trim_end_matches(['\r', '\n']).to_owned());
                }
            }
        }
        self.lock().closed = true;
        self.changed.notify_all();
    }

    fn push(&self, line: String) {
        let mut state = self.lock();
        if state.lines.len() == KEEP_LINES {
            state.lines.pop_front();
        }
        state.lines.push_back(line);
        state.total += 1;
        drop(state);
        self.changed.notify_all();
    }

    fn lock(&self) -> MutexGuard<'_, LogState> {
        // The state stays consistent even if a holder panicked: every update is one push.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn scan_finds_a_line_already_read_and_reports_end_of_stream() {
        let (log, reader) = LogBuffer::drain(&b"one\r\ntwo\nthree"[..]).unwrap();
        reader.join().unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        assert_eq!(log.scan(deadline, |l| (l == "two").then_some(2)), Ok(2));
        assert_eq!(
            log.scan(deadline, |l| (l == "four").then_some(4)),
            Err(ScanEnd::Closed)
        );
        assert_eq!(log.tail(), ["one", "two", "three"]);
    }

    #[test]
    fn only_the_last_lines_are_kept() {
        let text: String = (0..KEEP_LINES + 10)
            .map(|i| format!("line {i}\n"))
            .collect();
        let (log, reader) = LogBuffer::drain(std::io::Cursor::new(text)).unwrap();
        reader.join().unwrap();
        let tail = log.tail();
        assert_eq!(tail.len(), KEEP_LINES);
        assert_eq!(tail[0], "line 10");
    }

    #[test]
    fn scan_times_out_on_an_open_stream() {
        let log = LogBuffer::default();
        let deadline = Instant::now() + Duration::from_millis(20);
        assert_eq!(log.scan(deadline, |_| Some(())), Err(ScanEnd::TimedOut));
    }
}
