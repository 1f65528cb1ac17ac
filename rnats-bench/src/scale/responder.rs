//! A responder for the requests axis that holds no heap memory per request: a raw
//! blocking-socket connection ([`crate::raw`]) on its own thread, answering every request
//! with its payload. The process's peak heap then grows only with what the requesting
//! client holds for its pending requests.

use std::thread::{self, JoinHandle};

use crate::raw::{Connection, Op, RawError, StopHandle};

/// Sid of the responder's one subscription.
const SID: u64 = 1;

/// A running responder; [`Responder::stop`] (or drop) ends it.
#[derive(Debug)]
pub struct Responder {
    stop: StopHandle,
    thread: Option<JoinHandle<Result<(), RawError>>>,
}

impl Responder {
    /// Connects to `url`, subscribes to `subject` and answers on a new thread. The
    /// subscription is in place (flushed) when this returns.
    pub fn start(url: &str, subject: &str) -> Result<Responder, RawError> {
        let mut connection = Connection::connect(url)?;
        connection.subscribe(subject.as_bytes(), SID)?;
        connection.flush()?;
        connection.set_read_timeout(None)?;
        let stop = connection.shutdown_handle()?;
        let thread = thread::spawn(move || respond(connection));
        Ok(Responder {
            stop,
            thread: Some(thread),
        })
    }

    /// Shuts the socket under the responder's blocked read and waits for its thread.
    pub fn stop(mut self) {
        self.finish();
    }

    fn finish(&mut self) {
        self.stop.stop();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Responder {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Echoes every request; replies go out when there is nothing more to read, so a burst is
/// answered in one write.
fn respond(mut connection: Connection) -> Result<(), RawError> {
    let (reader, writer) = connection.split();
    loop {
        let located = reader.next_frame(writer)?;
        if let Op::Msg(msg) = reader.op(&located)
            && let Some(reply) = msg.reply
        {
            writer.publish(reply, None, msg.payload)?;
        }
    }
}
