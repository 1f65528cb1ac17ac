//! Reading a bucket: [`ObjectStore::get`] follows links to the object with the data, and
//! [`Object`] reads that data as a [`std::io::Read`], checking its size and SHA-256 digest
//! against the metadata before it reports the end; [`List`] and [`Watch`] read the
//! metadata. Each reads through the blocking ordered push consumer (ADR-17, `ordered.rs`):
//! a lost delivery has the consumer made again from the last message seen, so no chunk or
//! metadata goes missing silently, and flow control keeps what is in flight bounded.

use std::collections::HashSet;
use std::io::Read;
use std::path::Path;
use std::time::{Duration, Instant};

use bytes::Bytes;
use sha2::{Digest, Sha256};

use super::ObjectStore;
use super::range::RangeRead;
use crate::blocking::ordered::Ordered;
use crate::blocking::stream::Stream;
use crate::consumer::DeliverPolicy;
use crate::consumer::push::OrderedConfig;
use crate::consumer::push::passes::Passes;
use crate::consumer::push::read_end::{QUIET, ReadEnd, Step};
use crate::object_store::errors::{get_error, watch_consumer_error, watcher_error};
use crate::object_store::object::{
    MAX_LINK_HOPS, check_whole, chunk_subject, io_error, link_target, overruns,
    reader_consumer_error, too_many_links,
};
use crate::object_store::watch::meta_filter;
use crate::object_store::{
    AsObjectInfo, GetError, GetErrorKind, ListError, ListerError, ObjectInfo, ReadError,
    ReadErrorKind, WatchError, WatchOptions, WatcherError, WatcherErrorKind,
};

/// How much of an object's announced size [`ObjectStore::get_bytes`] reserves up front: the
/// size comes from the server, so it is a hint, not a promise.
const RESERVE_LIMIT: usize = 16 << 20;

impl ObjectStore {
    /// The object `object_name`, to read as a [`std::io::Read`]; a link is followed to the
    /// object it points to (in this bucket or another). A missing or deleted object fails
    /// with [`GetErrorKind::NotFound`], a link to a whole bucket with
    /// [`GetErrorKind::BucketLink`]. The chunks are asked for on the first read.
    ///
    /// ```no_run
    /// # fn run(bucket: rnats_jetstream::blocking::ObjectStore) -> Result<(), rnats_core::Error> {
    /// use std::io::Read;
    /// let mut text = String::new();
    /// bucket.get("greeting")?.read_to_string(&mut text)?;
    /// # Ok(()) }
    /// ```
    pub fn get<T: AsRef<str>>(&self, object_name: T) -> Result<Object, GetError> {
        let (bucket, info) = self.resolve(object_name.as_ref())?;
        Ok(Object::new(info, bucket.stream))
    }

    /// The whole object `name`, read into memory and checked against its digest. A failed
    /// read (digest or size mismatch, lost chunks) is [`GetErrorKind::Other`] with the
    /// `io::Error` as its source, whose inner error is a [`ReadError`].
    pub fn get_bytes<T: AsRef<str>>(&self, name: T) -> Result<Bytes, GetError> {
        let mut object = self.get(name)?;
        let mut data = Vec::with_capacity(object.info.size.min(RESERVE_LIMIT));
        object
            .read_to_end(&mut data)
            .map_err(|e| GetError::with_source(GetErrorKind::Other, e))?;
        Ok(Bytes::from(data))
    }

    /// Writes the object `name` to a file at `path` (created or truncated), streaming it in
    /// chunks; its metadata. A failed read or write is [`GetErrorKind::Other`] with the
    /// `io::Error` as its source. A digest mismatch is found only at the end, so the file
    /// then holds data that failed its check, and the caller should remove it.
    pub fn get_file<T: AsRef<str>>(
        &self,
        name: T,
        path: impl AsRef<Path>,
    ) -> Result<ObjectInfo, GetError> {
        let mut object = self.get(name)?;
        let mut file = std::fs::File::create(path.as_ref())
            .map_err(|e| GetError::with_source(GetErrorKind::Other, e))?;
        std::io::copy(&mut object, &mut file)
            .map_err(|e| GetError::with_source(GetErrorKind::Other, e))?;
        std::io::Write::flush(&mut file)
            .map_err(|e| GetError::with_source(GetErrorKind::Other, e))?;
        Ok(object.info.clone())
    }

    /// Every live object's metadata, once; the iterator ends after the last. Each wait is
    /// bounded by the context's timeout: past it, the item is an error and the listing
    /// ends.
    pub fn list(&self) -> Result<List, ListError> {
        self.list_objects(false)
    }

    /// Every object's metadata, once, deleted ones included (with
    /// [`deleted`](ObjectInfo::deleted) set).
    pub fn list_with_deleted(&self) -> Result<List, ListError> {
        self.list_objects(true)
    }

    /// Changes to the bucket from now on: each new, updated or deleted object's metadata.
    /// Iterating waits for the next change as long as it takes; [`Watch::next_timeout`]
    /// waits a bounded time.
    pub fn watch(&self) -> Result<Watch, WatchError> {
        self.watch_with_options(WatchOptions::new().updates_only())
    }

    /// Like [`ObjectStore::watch`], starting with the current metadata of every object
    /// (deleted ones included).
    pub fn watch_with_history(&self) -> Result<Watch, WatchError> {
        self.watch_with_options(WatchOptions::new())
    }

    /// Watches the bucket as `options` say (where to start, whether deletes are left out).
    pub fn watch_with_options(&self, options: WatchOptions) -> Result<Watch, WatchError> {
        let messages = self.meta_feed(options.deliver_policy(), "object store watcher")?;
        Ok(Watch {
            messages,
            ignore_deletes: options.ignore_deletes,
        })
    }

    /// The object `object_name` holding the data, with its bucket: a link is followed to
    /// the object it points to, in this bucket or another.
    pub(super) fn resolve(&self, object_name: &str) -> Result<(ObjectStore, ObjectInfo), GetError> {
        let mut bucket = self.clone();
        let mut info = bucket.info(object_name).map_err(get_error)?;
        for _ in 0..MAX_LINK_HOPS {
            let Some(target) = link_target(&info)? else {
                return Ok((bucket, info));
            };
            if target.bucket != bucket.name {
                bucket = bucket
                    .context()
                    .get_object_store(&target.bucket)
                    .map_err(|error| GetError::with_source(GetErrorKind::Other, error))?;
            }
            info = bucket.info(&target.name).map_err(get_error)?;
        }
        Err(too_many_links())
    }

    fn list_objects(&self, include_deleted: bool) -> Result<List, ListError> {
        let (messages, done, end) = self.list_pass()?;
        Ok(List {
            done,
            end,
            messages,
            include_deleted,
            timeout: self.context().timeout(),
            delivered: 0,
            seen: HashSet::new(),
            store: self.clone(),
            passes: Passes::new(),
        })
    }

    /// One pass of a listing: an ordered consumer on the metadata, whether it had nothing
    /// to deliver (then it is deleted at once), and where it stands against the stream's
    /// end.
    fn list_pass(&self) -> Result<(Ordered, bool, ReadEnd), ListError> {
        let messages = self.meta_feed(DeliverPolicy::All, "object store list")?;
        let mut end = ReadEnd::default();
        // An empty bucket, if the stream agrees: nothing to list, and no consumer to keep.
        let done = messages.pending_at_start == 0 && {
            end = ReadEnd::empty();
            end.answered(self.stream.last_sequence(&[meta_filter(&self.name)]))
        };
        if done {
            let _ = messages.delete_consumer();
        }
        Ok((messages, done, end))
    }

    /// An ordered consumer of the bucket's metadata, `$O.<bucket>.M.>`.
    fn meta_feed(
        &self,
        deliver_policy: DeliverPolicy,
        purpose: &str,
    ) -> Result<Ordered, WatchError> {
        let config = OrderedConfig {
            description: Some(purpose.to_owned()),
            filter_subject: meta_filter(&self.name),
            deliver_policy,
            ..Default::default()
        };
        self.stream.ordered(config).map_err(watch_consumer_error)
    }
}

/// An object's data, read as a [`std::io::Read`]; from [`ObjectStore::get`].
///
/// The read that would report the end fails instead when the data's size or digest is not
/// what the metadata says: an [`std::io::ErrorKind::InvalidData`] error whose inner error
/// is a [`ReadError`] ([`ReadErrorKind::DigestMismatch`], ...); the last chunk is held back
/// until the check passed. Each chunk is waited for at most the context's timeout; a chunk
/// that does not come in time fails the read with [`ReadErrorKind::Delivery`].
pub struct Object {
    /// The object's metadata.
    pub info: ObjectInfo,
    stream: Stream,
    state: ReadState,
    /// What is left of the chunk the caller is reading.
    buffered: Bytes,
    hash: Sha256,
    /// Bytes and chunks received so far (for a range, the range's bytes handed out).
    bytes: u64,
    chunks: usize,
    /// For [`ObjectStore::get_range`]: the offsets `start..end` of the bytes to read.
    span: Option<(u64, u64)>,
}

impl Drop for Object {
    /// A reader dropped before its end deletes the consumer it read through, as the async
    /// reader does, rather than leave it to the server's inactivity threshold.
    fn drop(&mut self) {
        match &self.state {
            ReadState::Reading(messages) => messages.delete_consumer_unanswered(),
            ReadState::Ranging(range) => range.abandon(),
            _ => {}
        }
    }
}

/// Where a read of the chunks is.
enum ReadState {
    /// Nothing asked yet.
    Idle,
    /// Receiving chunks from an ordered consumer (boxed: most of a read is spent here, and
    /// the consumer's state is large).
    Reading(Box<Ordered>),
    /// Locating and fetching the chunks of a range.
    Ranging(Box<RangeRead>),
    /// Every chunk was read and checked.
    Done,
    /// The read failed; every later read fails the same way.
    Failed(ReadErrorKind),
}

impl Object {
    fn new(info: ObjectInfo, stream: Stream) -> Object {
        Object {
            info,
            stream,
            state: ReadState::Idle,
            buffered: Bytes::new(),
            hash: Sha256::new(),
            bytes: 0,
            chunks: 0,
            span: None,
        }
    }

    /// A reader of the bytes `start..end` of `info`'s data (`start <= end <= size`).
    pub(super) fn new_range(info: ObjectInfo, stream: Stream, start: u64, end: u64) -> Object {
        let mut object = Object::new(info, stream);
        object.span = Some((start, end));
        object
    }

    /// The object's metadata.
    pub fn info(&self) -> &ObjectInfo {
        &self.info
    }

    /// Moves the read on until there are bytes to hand out, the checked end, or an error.
    fn fill(&mut self) -> Result<(), ReadError> {
        loop {
            if !self.buffered.is_empty() {
                return Ok(());
            }
            let messages = match &mut self.state {
                ReadState::Idle if self.span.is_some() => {
                    self.start_range()?;
                    continue;
                }
                ReadState::Ranging(_) => {
                    self.fill_range()?;
                    continue;
                }
                ReadState::Idle if self.info.chunks == 0 => {
                    self.state = ReadState::Done;
                    return self.check_complete();
                }
                ReadState::Idle => {
                    let messages = self.start().map_err(|error| self.fail(error))?;
                    if messages.pending_at_start == 0 {
                        let _ = messages.delete_consumer();
                        return Err(self.fail(ReadError::new(ReadErrorKind::ChunksMissing)));
                    }
                    self.state = ReadState::Reading(Box::new(messages));
                    continue;
                }
                ReadState::Reading(messages) => messages,
                ReadState::Done => return Ok(()),
                ReadState::Failed(kind) => return Err(ReadError::new(*kind)),
            };
            let deadline = Instant::now().checked_add(self.stream.context.timeout());
            let next = messages.next_message(deadline);
            let closed = messages.is_closed();
            match next {
                Ok(Some(message)) => self.handle_chunk(message)?,
                Ok(None) => {
                    let why = match closed {
                        true => "the client closed",
                        false => "timed out waiting for the object's next chunk",
                    };
                    let error = ReadError::with_source(ReadErrorKind::Delivery, why);
                    return Err(self.fail(error));
                }
                Err(error) => {
                    let error = ReadError::with_source(ReadErrorKind::Delivery, error);
                    return Err(self.fail(error));
                }
            }
        }
    }

    /// Starts reading the range: nothing to read for an empty one.
    fn start_range(&mut self) -> Result<(), ReadError> {
        let Some((start, end)) = self.span else {
            return Ok(());
        };
        if start == end {
            self.state = ReadState::Done;
            return Ok(());
        }
        match RangeRead::start(&self.stream, &self.info, start, end) {
            Ok(range) => {
                self.state = ReadState::Ranging(Box::new(range));
                Ok(())
            }
            Err(error) => Err(self.fail(error)),
        }
    }

    /// Takes the range's bytes in its next chunk, or ends the read once the range came out
    /// whole.
    fn fill_range(&mut self) -> Result<(), ReadError> {
        let ReadState::Ranging(range) = &mut self.state else {
            return Ok(());
        };
        let deadline = Instant::now().checked_add(self.stream.context.timeout());
        match range.next(&self.stream, deadline) {
            Ok(Some(bytes)) => {
                self.bytes += bytes.len() as u64;
                self.chunks += 1;
                self.buffered = bytes;
                Ok(())
            }
            Ok(None) => {
                let whole = self
                    .span
                    .is_some_and(|(start, end)| self.bytes == end - start);
                match whole {
                    true => {
                        self.end_reading(ReadState::Done);
                        Ok(())
                    }
                    false => Err(self.fail(ReadError::new(ReadErrorKind::ChunksMissing))),
                }
            }
            Err(error) => Err(self.fail(error)),
        }
    }

    /// Makes the consumer of the object's chunks.
    fn start(&self) -> Result<Ordered, ReadError> {
        let config = OrderedConfig {
            description: Some("object store reader".to_owned()),
            filter_subject: chunk_subject(&self.info),
            deliver_policy: DeliverPolicy::All,
            ..Default::default()
        };
        self.stream.ordered(config).map_err(reader_consumer_error)
    }

    /// Takes in one chunk: hashes and counts it, and after the last one checks the whole
    /// before the chunk is handed out.
    fn handle_chunk(&mut self, message: rnats_core::Message) -> Result<(), ReadError> {
        let pending = match crate::message::info_of(&message) {
            Ok(info) => info.pending,
            Err(error) => {
                let error = ReadError::with_source(ReadErrorKind::Delivery, error);
                return Err(self.fail(error));
            }
        };
        let payload = message.payload;
        self.hash.update(&payload);
        self.bytes += payload.len() as u64;
        self.chunks += 1;
        // More than the metadata announced fails at once, not after the last chunk: a
        // consumer that keeps saying more are pending would otherwise be read for ever.
        if overruns(&self.info, self.bytes, self.chunks) {
            return Err(self.fail(ReadError::new(ReadErrorKind::SizeMismatch)));
        }
        if pending == 0 {
            self.end_reading(ReadState::Done);
            self.check_complete()?;
        }
        self.buffered = payload;
        Ok(())
    }

    /// Checks the data read against the metadata: chunk count, size, then digest.
    fn check_complete(&mut self) -> Result<(), ReadError> {
        let hash = std::mem::take(&mut self.hash);
        check_whole(&self.info, self.bytes, self.chunks, hash)
            .map_err(|kind| self.fail(ReadError::new(kind)))
    }

    /// Ends the read with `error`: later reads fail with its kind.
    fn fail(&mut self, error: ReadError) -> ReadError {
        self.end_reading(ReadState::Failed(error.kind()));
        self.buffered = Bytes::new();
        error
    }

    /// Moves to `state`, deleting the consumer of the chunks if one was reading them, as
    /// the async reader does (an object dropped halfway asks for the delete in its drop,
    /// without waiting for the answer).
    fn end_reading(&mut self, state: ReadState) {
        match std::mem::replace(&mut self.state, state) {
            // Best effort: the data is read (or the read failed) either way.
            ReadState::Reading(messages) => {
                let _ = messages.delete_consumer();
            }
            ReadState::Ranging(mut range) => range.finish(),
            _ => {}
        }
    }
}

impl Read for Object {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        self.fill().map_err(io_error)?;
        let n = buf.len().min(self.buffered.len());
        buf[..n].copy_from_slice(&self.buffered.split_to(n));
        Ok(n)
    }
}

impl std::fmt::Debug for Object {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Object")
            .field("info", &self.info)
            .field("bytes", &self.bytes)
            .field("chunks", &self.chunks)
            .finish_non_exhaustive()
    }
}

impl AsObjectInfo for &Object {
    fn as_info(&self) -> &ObjectInfo {
        &self.info
    }
}

/// A bucket's objects' metadata; from [`ObjectStore::list`] (live objects) and
/// [`ObjectStore::list_with_deleted`]. Ends after the last object; each wait is bounded by
/// the context's timeout, past which the item is an error and the listing ends. Each
/// object comes once; a pass that delivered fewer objects than were pending when it
/// started is read again, as the async listing is.
#[derive(Debug)]
pub struct List {
    messages: Ordered,
    /// The last metadata came (or there was none).
    done: bool,
    include_deleted: bool,
    timeout: Duration,
    /// Metadata messages this pass delivered so far.
    delivered: u64,
    /// Whether the server's "nothing pending" is the stream's end (`read_end`).
    end: ReadEnd,
    /// The names listed so far.
    seen: HashSet<String>,
    /// The bucket, for a pass again.
    store: ObjectStore,
    passes: Passes,
}

impl List {
    /// Starts another pass if the last one came short and passes are left: `None` if not,
    /// else whether the new pass's consumer was made.
    fn pass_again(&mut self) -> Option<Result<(), ListerError>> {
        if !self
            .passes
            .again(self.delivered, self.messages.pending_at_start)
        {
            return None;
        }
        Some(match self.store.list_pass() {
            Ok((messages, done, end)) => {
                self.messages = messages;
                self.done = done;
                self.end = end;
                self.delivered = 0;
                Ok(())
            }
            Err(error) => {
                self.passes.fail();
                Err(ListerError::with_source(WatcherErrorKind::Other, error))
            }
        })
    }
}

impl Iterator for List {
    type Item = Result<ObjectInfo, ListerError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(item) = self.next_of_pass() {
                return Some(item);
            }
            if let Err(error) = self.pass_again()? {
                return Some(Err(error));
            }
        }
    }
}

impl List {
    /// Asks the stream for its last metadata sequence (`read_end`); whether the listing's
    /// pass is over.
    fn ask_the_stream(&mut self) -> bool {
        let filters = [meta_filter(&self.store.name)];
        self.end.answered(self.store.stream.last_sequence(&filters))
    }

    /// The next metadata message, waiting up to the timeout: `Ok(None)` once it passed or
    /// the client closed, or, with `done` set, once the stream says that what the pass was
    /// waiting for went (asked after a quiet second).
    fn next_message(
        &mut self,
    ) -> Result<Option<rnats_core::Message>, crate::consumer::push::OrderedError> {
        let started = Instant::now();
        loop {
            let wait = match self.end.reading_on() {
                true => QUIET.min(self.timeout),
                false => self.timeout,
            };
            match self
                .messages
                .next_message(Instant::now().checked_add(wait))?
            {
                Some(message) => return Ok(Some(message)),
                None if self.end.reading_on()
                    && !self.messages.is_closed()
                    && started.elapsed() < self.timeout =>
                {
                    if self.ask_the_stream() {
                        self.done = true;
                        return Ok(None);
                    }
                }
                None => return Ok(None),
            }
        }
    }

    /// The next object of this pass; `None` once the pass is over.
    fn next_of_pass(&mut self) -> Option<Result<ObjectInfo, ListerError>> {
        while !self.done {
            let message = match self.next_message() {
                Ok(Some(message)) => message,
                Ok(None) if self.done => {
                    let _ = self.messages.delete_consumer();
                    return None;
                }
                Ok(None) => {
                    self.done = true;
                    self.passes.fail();
                    let why = match self.messages.is_closed() {
                        true => "the client closed",
                        false => "timed out waiting for the bucket's metadata",
                    };
                    return Some(Err(ListerError::with_source(WatcherErrorKind::Other, why)));
                }
                Err(error) => {
                    self.done = true;
                    self.passes.fail();
                    return Some(Err(watcher_error(error)));
                }
            };
            // The server's count of what is still to come: none left means this is the last,
            // once the stream agrees.
            match crate::message::info_of(&message) {
                Ok(info) => {
                    self.done = match self.end.delivered(info.stream_sequence, info.pending) {
                        Step::More => false,
                        Step::Over => true,
                        Step::Ask => self.ask_the_stream(),
                    };
                    if self.done {
                        // Best effort, as for a read: the server would remove it in time.
                        let _ = self.messages.delete_consumer();
                    }
                }
                Err(error) => {
                    self.done = true;
                    self.passes.fail();
                    return Some(Err(ListerError::with_source(
                        WatcherErrorKind::Other,
                        error,
                    )));
                }
            }
            self.delivered += 1;
            match decode(&message) {
                Ok(info) if info.deleted && !self.include_deleted => continue,
                Ok(info) if !self.seen.insert(info.name.clone()) => continue,
                item => return Some(item),
            }
        }
        None
    }
}

/// Changes to a bucket's objects; from [`ObjectStore::watch`] and its variants: an iterator
/// of metadata that waits for the next change as long as it takes. It ends only when the
/// client closes; an error item (the consumer could not be made again) does not end it.
#[derive(Debug)]
pub struct Watch {
    messages: Ordered,
    ignore_deletes: bool,
}

impl Watch {
    /// The next change, waiting up to `timeout`: `Ok(None)` if none came in time (or the
    /// client closed).
    pub fn next_timeout(&mut self, timeout: Duration) -> Result<Option<ObjectInfo>, WatcherError> {
        self.next_until(Instant::now().checked_add(timeout))
    }

    fn next_until(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<Option<ObjectInfo>, WatcherError> {
        loop {
            let Some(message) = self
                .messages
                .next_message(deadline)
                .map_err(watcher_error)?
            else {
                return Ok(None);
            };
            match decode(&message)? {
                info if info.deleted && self.ignore_deletes => continue,
                info => return Ok(Some(info)),
            }
        }
    }
}

impl Iterator for Watch {
    type Item = Result<ObjectInfo, WatcherError>;

    fn next(&mut self) -> Option<Self::Item> {
        // No deadline: only the client closing ends the wait.
        self.next_until(None).transpose()
    }
}

/// The metadata a delivered meta message holds, `modified` being when the server stored
/// it (the timestamp in its ack subject).
fn decode(message: &rnats_core::Message) -> Result<ObjectInfo, WatcherError> {
    let stored = crate::message::info_of(message)
        .map_err(|error| WatcherError::with_source(WatcherErrorKind::Other, error))?
        .published;
    ObjectInfo::from_stored(&message.payload, stored)
        .map_err(|error| WatcherError::with_source(WatcherErrorKind::Other, error))
}
