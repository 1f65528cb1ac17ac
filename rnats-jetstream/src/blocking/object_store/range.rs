//! Reading part of an object for the blocking store: [`ObjectStore::get_range`], as the
//! async store's (`object_store/range.rs`) reads it. Chunks need not all be of the chunk
//! size, so where a byte lies is found from the chunks' headers: a headers-only ordered
//! consumer on the chunk subject gives each chunk's stream sequence and size
//! (`Nats-Msg-Size`) without its data, from the first chunk to the last one the range needs.
//! The chunks that hold the range are then fetched by sequence, one at a time (a direct get,
//! else the leader's `STREAM.MSG.GET`), and only their bytes in the range handed out.

use std::ops::RangeBounds;
use std::time::Instant;

use bytes::Bytes;

use super::ObjectStore;
use super::read::Object;
use crate::blocking::ordered::Ordered;
use crate::blocking::stream::Stream;
use crate::consumer::DeliverPolicy;
use crate::consumer::push::OrderedConfig;
use crate::object_store::object::{chunk_subject, reader_consumer_error};
use crate::object_store::range::{
    Locator, checked_chunk, direct_chunk, header_size, leader_chunk, locator_check, span,
};
use crate::object_store::{GetError, ObjectInfo, ReadError, ReadErrorKind};

impl ObjectStore {
    /// Part of the object `object_name`: the bytes in `range` (offsets into the object's
    /// data: `10..20`, `1024..`, `..=99`, `..`), as an [`Object`] that reads exactly those
    /// bytes, as the async store's `get_range` (an rnats addition, for serving HTTP range
    /// requests and the like). A link is followed as [`get`](ObjectStore::get) follows it.
    ///
    /// Only the chunks that hold the range are received; finding the first reads the
    /// headers of those before it (about 150 bytes a chunk). A range that ends past the
    /// object's end, or starts after it ends, fails with
    /// [`GetErrorKind::Other`](crate::object_store::GetErrorKind::Other) whose source is a
    /// [`RangeNotSatisfiable`](crate::object_store::RangeNotSatisfiable). The digest covers
    /// the whole object and is not checked for a part: the read checks each chunk's size
    /// against its header and that the range comes out whole
    /// ([`ReadErrorKind::SizeMismatch`], [`ReadErrorKind::ChunksMissing`]).
    ///
    /// ```no_run
    /// # fn run(bucket: rnats_jetstream::blocking::ObjectStore) -> Result<(), rnats_core::Error> {
    /// use std::io::Read;
    /// let mut part = Vec::new();
    /// bucket.get_range("video.mp4", 1_000_000..2_000_000)?.read_to_end(&mut part)?;
    /// assert_eq!(part.len(), 1_000_000);
    /// # Ok(()) }
    /// ```
    pub fn get_range<T, R>(&self, object_name: T, range: R) -> Result<Object, GetError>
    where
        T: AsRef<str>,
        R: RangeBounds<u64>,
    {
        let (start, end) = (range.start_bound().cloned(), range.end_bound().cloned());
        let (bucket, info) = self.resolve(object_name.as_ref())?;
        let (start, end) = span(start, end, info.size as u64)?;
        Ok(Object::new_range(info, bucket.stream, start, end))
    }
}

/// A range read under way: the chunk headers' consumer and how far it got.
pub(super) struct RangeRead {
    /// Delivers the chunks' headers, in order.
    locator: Ordered,
    subject: String,
    /// How far the walk over the chunk headers got.
    walk: Locator,
    /// The chunk holding the range's last byte was handed out.
    done: bool,
}

impl RangeRead {
    /// Makes the headers-only consumer of `info`'s chunks, for the bytes `start..end`
    /// (`start < end`).
    pub(super) fn start(
        stream: &Stream,
        info: &ObjectInfo,
        start: u64,
        end: u64,
    ) -> Result<RangeRead, ReadError> {
        let subject = chunk_subject(info);
        let config = OrderedConfig {
            description: Some("object store range locator".to_owned()),
            filter_subject: subject.clone(),
            deliver_policy: DeliverPolicy::All,
            headers_only: true,
            ..Default::default()
        };
        let locator = stream.ordered(config).map_err(reader_consumer_error)?;
        if let Err(error) = locator_check(locator.pending_at_start, info.chunks as u64) {
            let _ = locator.delete_consumer();
            return Err(error);
        }
        Ok(RangeRead {
            locator,
            subject,
            walk: Locator::new(start, end, info.size as u64),
            done: false,
        })
    }

    /// The range's bytes in the next chunk that holds some, each wait not past `deadline`;
    /// `None` after the last.
    pub(super) fn next(
        &mut self,
        stream: &Stream,
        deadline: Option<Instant>,
    ) -> Result<Option<Bytes>, ReadError> {
        while !self.done {
            let (sequence, size, pending) = self.next_header(deadline)?;
            let Some(chunk) = self.walk.handle_header(sequence, size, pending)? else {
                continue;
            };
            if chunk.last {
                self.finish();
            }
            let payload = fetch(stream, &self.subject, chunk.sequence, chunk.size)?;
            return Ok(Some(payload.slice(chunk.part)));
        }
        Ok(None)
    }

    /// The locator's part is over: its consumer goes.
    pub(super) fn finish(&mut self) {
        if !std::mem::replace(&mut self.done, true) {
            let _ = self.locator.delete_consumer();
        }
    }

    /// Asks the server to delete the locator's consumer without waiting (a reader dropped
    /// half-way).
    pub(super) fn abandon(&self) {
        if !self.done {
            self.locator.delete_consumer_unanswered();
        }
    }

    /// The next chunk's stream sequence, size, and how many chunks come after it.
    fn next_header(&mut self, deadline: Option<Instant>) -> Result<(u64, u64, u64), ReadError> {
        let message = match self.locator.next_message(deadline) {
            Ok(Some(message)) => message,
            Ok(None) => {
                return Err(ReadError::with_source(
                    ReadErrorKind::Delivery,
                    "timed out waiting for the object's next chunk header",
                ));
            }
            Err(error) => return Err(ReadError::with_source(ReadErrorKind::Delivery, error)),
        };
        let (sequence, pending) = match crate::message::info_of(&message) {
            Ok(info) => (info.stream_sequence, info.pending),
            Err(error) => return Err(ReadError::with_source(ReadErrorKind::Delivery, error)),
        };
        let size = header_size(&message)?;
        Ok((sequence, size, pending))
    }
}

/// The chunk at `sequence`: a direct get where the bucket allows them (then from the leader
/// if the replica that answered has not got it yet), else the leader's `STREAM.MSG.GET`. Its
/// subject and size must be what its header said.
fn fetch(stream: &Stream, subject: &str, sequence: u64, size: u64) -> Result<Bytes, ReadError> {
    let direct = match stream.cached_info().config.allow_direct {
        true => direct_chunk(stream.direct_get(sequence))?,
        false => None,
    };
    let message = match direct {
        Some(message) => message,
        None => leader_chunk(stream.get_raw_message(sequence))?,
    };
    checked_chunk(message, subject, size)
}
