//! Reading part of an object: [`ObjectStore::get_range`], for HTTP range requests and the
//! like, without receiving the chunks before the range (an rnats addition; nats.go issue
//! #1508 asks for it).
//!
//! Chunks need not all be of the chunk size: nats.go and async-nats cut a chunk at each read
//! of the caller's reader, so a short read makes a short chunk anywhere in the object. Where a
//! byte lies is therefore found, not computed: a headers-only ordered consumer on the chunk
//! subject delivers each chunk's stream sequence (in its ack subject) and size
//! (`Nats-Msg-Size`) without its data, about 150 bytes a chunk, from the first chunk to the
//! last one the range needs. The chunks that hold the range are then fetched by sequence, a
//! window of them at a time (direct gets, or the leader's `STREAM.MSG.GET` in a bucket
//! without direct gets), and only their bytes in the range are handed out.

use std::fmt;
use std::ops::{Bound, Range, RangeBounds};

use bytes::Bytes;
use futures_util::stream::{self, BoxStream};
use futures_util::{StreamExt, TryStreamExt};

use super::ObjectStore;
use super::errors::{GetError, GetErrorKind, ReadError, ReadErrorKind};
use super::info::ObjectInfo;
use super::object::{Object, Reader, chunk_subject, chunk_window, open_reader};
use crate::consumer::{DeliverPolicy, pull};
use crate::message::StreamMessage;
use crate::stream::{
    DirectGetError, DirectGetErrorKind, Info as StreamInfo, RawMessageError, RawMessageErrorKind,
    Stream,
};

/// The header a headers-only delivery carries the payload's size in.
const MSG_SIZE: &str = "Nats-Msg-Size";

impl ObjectStore {
    /// Part of the object `object_name`: the bytes in `range` (offsets into the object's
    /// data, as `u64`: `10..20`, `1024..`, `..=99`, `..`), as an [`Object`] that reads
    /// exactly those bytes. A link is followed as [`get`](ObjectStore::get) follows it. An
    /// rnats addition, for serving HTTP range requests and the like.
    ///
    /// Only the chunks that hold the range are received. Finding the first of them reads the
    /// headers of the chunks before it (their sizes and stream sequences, not their data):
    /// about 150 bytes a chunk, through a short-lived consumer.
    ///
    /// The range must lie within the object: one that ends past the object's end (or starts
    /// after it ends) fails with [`GetErrorKind::Other`] whose source is a
    /// [`RangeNotSatisfiable`] with the object's size (`error.downcast_source()`). An empty
    /// range (`5..5`, or `size..`) reads nothing. A suffix (the last `n` bytes) needs the size:
    /// `bucket.info(name)` first, then `get_range(name, size - n..)`.
    ///
    /// The SHA-256 digest in the metadata covers the whole object and cannot be checked for
    /// part of it: the read checks that each chunk has the size its header announced and
    /// that the range comes out whole, and fails with [`ReadErrorKind::SizeMismatch`] or
    /// [`ReadErrorKind::ChunksMissing`] (inside the `io::Error`) when not. Read the whole
    /// object with `get` where the digest matters. [`Object::info`] is the whole object's
    /// metadata (its `size` is what a `Content-Range` header wants).
    ///
    /// ```no_run
    /// # async fn run(bucket: rnats_jetstream::object_store::ObjectStore) -> Result<(), rnats_core::Error> {
    /// use tokio::io::AsyncReadExt;
    /// let mut part = bucket.get_range("video.mp4", 1_000_000..2_000_000).await?;
    /// let mut bytes = Vec::new();
    /// part.read_to_end(&mut bytes).await?;
    /// assert_eq!(bytes.len(), 1_000_000);
    /// println!("bytes 1000000-1999999/{}", part.info.size);
    /// # Ok(()) }
    /// ```
    pub async fn get_range<T, R>(&self, object_name: T, range: R) -> Result<Object, GetError>
    where
        T: AsRef<str> + Send,
        R: RangeBounds<u64> + Send,
    {
        let (start, end) = (range.start_bound().cloned(), range.end_bound().cloned());
        let (bucket, info) = self.resolve(object_name.as_ref()).await?;
        let (start, end) = span(start, end, info.size as u64)?;
        Ok(Object::new_range(info, bucket.stream, start, end))
    }
}

/// `start..end` as offsets into an object of `size` bytes, or why not.
pub(crate) fn span(start: Bound<u64>, end: Bound<u64>, size: u64) -> Result<(u64, u64), GetError> {
    let first = match start {
        Bound::Included(start) => Some(start),
        Bound::Excluded(start) => start.checked_add(1),
        Bound::Unbounded => Some(0),
    };
    let past = match end {
        Bound::Included(end) => end.checked_add(1),
        Bound::Excluded(end) => Some(end),
        Bound::Unbounded => Some(size),
    };
    match (first, past) {
        (Some(first), Some(past)) if first <= past && past <= size => Ok((first, past)),
        _ => Err(GetError::with_source(
            GetErrorKind::Other,
            RangeNotSatisfiable {
                start: first.unwrap_or(u64::MAX),
                end: past.unwrap_or(u64::MAX),
                size,
            },
        )),
    }
}

/// A range [`ObjectStore::get_range`] cannot read: it ends past the object's end, or starts
/// after it ends (HTTP's 416 Range Not Satisfiable). The source of a
/// [`GetErrorKind::Other`] error: `error.downcast_source::<RangeNotSatisfiable>()`. An rnats
/// addition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RangeNotSatisfiable {
    /// The offset of the first byte asked for (`u64::MAX` when it overflowed).
    pub start: u64,
    /// The offset past the last byte asked for (`u64::MAX` when it overflowed).
    pub end: u64,
    /// The object's size.
    pub size: u64,
}

impl fmt::Display for RangeNotSatisfiable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the range {}..{} is not within the object's {} bytes",
            self.start, self.end, self.size
        )
    }
}

impl std::error::Error for RangeNotSatisfiable {}

/// The walk over an object's chunk headers, in order, that finds the chunks holding the
/// bytes `start..end`. For the async and blocking range reads alike.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Locator {
    start: u64,
    end: u64,
    /// The object's size.
    size: u64,
    /// The object's offset past the chunks walked so far.
    offset: u64,
}

impl Locator {
    /// A walk from the first chunk, for the bytes `start..end` (`start < end <= size`) of an
    /// object of `size` bytes.
    pub(crate) fn new(start: u64, end: u64, size: u64) -> Locator {
        Locator {
            start,
            end,
            size,
            offset: 0,
        }
    }

    /// Takes in the next chunk's header: its stream `sequence`, its `size`, and how many
    /// chunks are `pending` after it. The chunk if it holds bytes of the range, `None` if it
    /// lies before it; an error if the chunks do not add up to the object's size.
    pub(crate) fn handle_header(
        &mut self,
        sequence: u64,
        size: u64,
        pending: u64,
    ) -> Result<Option<Located>, ReadError> {
        let offset = self.offset;
        self.offset = offset
            .checked_add(size)
            .filter(|&past| past <= self.size)
            .ok_or_else(|| ReadError::new(ReadErrorKind::SizeMismatch))?;
        let last = self.offset >= self.end;
        if pending == 0 && !last {
            // The chunks hold fewer bytes than the metadata says.
            return Err(ReadError::new(ReadErrorKind::SizeMismatch));
        }
        if self.offset <= self.start {
            return Ok(None);
        }
        let from = self.start.saturating_sub(offset);
        let to = self.end.min(self.offset) - offset;
        Ok(Some(Located {
            sequence,
            size,
            part: as_index(from)..as_index(to),
            last,
        }))
    }
}

/// A chunk that holds bytes of a range: its stream sequence and size, which of its bytes
/// are the range's, and whether it holds the range's last byte.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Located {
    pub(crate) sequence: u64,
    pub(crate) size: u64,
    pub(crate) part: Range<usize>,
    pub(crate) last: bool,
}

/// The bytes `start..end` (`start < end <= info.size`) of `info`'s data, in order, a piece
/// of one chunk at a time: the chunks holding them are located by their headers and fetched
/// by sequence, a window at a time.
pub(super) fn slices(
    stream: Stream<StreamInfo>,
    info: ObjectInfo,
    start: u64,
    end: u64,
) -> BoxStream<'static, Result<Bytes, ReadError>> {
    let window = chunk_window(&info);
    let subject = chunk_subject(&info);
    let fetcher = stream.clone();
    located(stream, info, start, end)
        .map_ok(move |chunk| {
            let stream = fetcher.clone();
            let subject = subject.clone();
            async move {
                let payload = fetch(&stream, &subject, chunk.sequence, chunk.size).await?;
                Ok(payload.slice(chunk.part))
            }
        })
        .try_buffered(window)
        .boxed()
}

/// The chunks of `info` that hold bytes of `start..end`, in order, from their headers.
fn located(
    stream: Stream<StreamInfo>,
    info: ObjectInfo,
    start: u64,
    end: u64,
) -> impl futures_util::Stream<Item = Result<Located, ReadError>> + Send + 'static {
    let size = info.size as u64;
    let expected = info.chunks as u64;
    let subject = chunk_subject(&info);
    stream::once(async move {
        let reader = open_reader(
            &stream,
            pull::OrderedConfig {
                description: Some("object store range locator".to_owned()),
                filter_subject: subject,
                deliver_policy: DeliverPolicy::All,
                headers_only: true,
                ..Default::default()
            },
        )
        .await?;
        locator_check(reader.pending, expected).map(|()| reader)
    })
    .map_ok(move |reader| {
        let locator = Locator::new(start, end, size);
        stream::try_unfold(Some((reader, locator)), move |walk| async move {
            // `None` once the chunk holding the range's last byte was yielded: the reader
            // is dropped there, which deletes its consumer.
            let Some((mut reader, mut locator)) = walk else {
                return Ok(None);
            };
            loop {
                let (sequence, chunk_size, pending) = next_header(&mut reader).await?;
                if let Some(chunk) = locator.handle_header(sequence, chunk_size, pending)? {
                    let next = (!chunk.last).then_some((reader, locator));
                    return Ok(Some((chunk, next)));
                }
            }
        })
    })
    .try_flatten()
}

/// Whether a range locator that starts with `pending` chunk headers to deliver can read an
/// object of `expected` chunks (a range read is of a non-empty range, so it needs some).
pub(crate) fn locator_check(pending: u64, expected: u64) -> Result<(), ReadError> {
    match pending {
        0 => Err(ReadError::new(ReadErrorKind::ChunksMissing)),
        pending if pending < expected => Err(ReadError::new(ReadErrorKind::ChunksMissing)),
        pending if pending > expected => Err(ReadError::new(ReadErrorKind::SizeMismatch)),
        _ => Ok(()),
    }
}

/// The next chunk header the locator delivers: the chunk's stream sequence, its size, and
/// how many chunks come after it.
async fn next_header(reader: &mut Reader) -> Result<(u64, u64, u64), ReadError> {
    let message = match reader.messages.next().await {
        Some(Ok(message)) => message,
        Some(Err(error)) => return Err(ReadError::with_source(ReadErrorKind::Delivery, error)),
        None => {
            return Err(ReadError::with_source(
                ReadErrorKind::Delivery,
                "the chunk stream ended early",
            ));
        }
    };
    let (sequence, pending) = match message.info() {
        Ok(info) => (info.stream_sequence, info.pending),
        Err(error) => return Err(ReadError::with_source(ReadErrorKind::Delivery, error)),
    };
    Ok((sequence, header_size(&message.message)?, pending))
}

/// The size of the chunk whose header-only delivery `message` is (`Nats-Msg-Size`).
pub(crate) fn header_size(message: &rnats_core::Message) -> Result<u64, ReadError> {
    message
        .headers
        .as_ref()
        .and_then(|headers| headers.get_last(MSG_SIZE))
        .and_then(|size| size.as_str().trim().parse::<u64>().ok())
        .ok_or_else(|| {
            ReadError::with_source(
                ReadErrorKind::Delivery,
                "a chunk's header came without its size (Nats-Msg-Size)",
            )
        })
}

/// The chunk at `sequence`: a direct get where the bucket allows them (then from the leader
/// if the replica that answered has not got it yet), else the leader's `STREAM.MSG.GET`. Its
/// subject and `size` must be what its header said.
async fn fetch(
    stream: &Stream<StreamInfo>,
    subject: &str,
    sequence: u64,
    size: u64,
) -> Result<Bytes, ReadError> {
    let direct = match stream.info.config.allow_direct {
        true => direct_chunk(stream.direct_get(sequence).await)?,
        false => None,
    };
    let message = match direct {
        Some(message) => message,
        None => leader_chunk(stream.get_raw_message(sequence).await)?,
    };
    checked_chunk(message, subject, size)
}

/// A direct get's chunk; `None` when the replica that answered has not got it (ask the
/// leader then).
pub(crate) fn direct_chunk(
    answer: Result<StreamMessage, DirectGetError>,
) -> Result<Option<StreamMessage>, ReadError> {
    match answer {
        Ok(message) => Ok(Some(message)),
        Err(error) if error.kind() == DirectGetErrorKind::NotFound => Ok(None),
        Err(error) => {
            let kind = match error.kind() {
                DirectGetErrorKind::TimedOut => ReadErrorKind::TimedOut,
                _ => ReadErrorKind::Delivery,
            };
            Err(ReadError::with_source(kind, error))
        }
    }
}

/// The leader's `STREAM.MSG.GET` answer's chunk.
pub(crate) fn leader_chunk(
    answer: Result<StreamMessage, RawMessageError>,
) -> Result<StreamMessage, ReadError> {
    answer.map_err(|error| match error.kind() {
        RawMessageErrorKind::NoMessageFound => ReadError::new(ReadErrorKind::ChunksMissing),
        _ => ReadError::with_source(ReadErrorKind::Delivery, error),
    })
}

/// The chunk's data, if `message` is on the object's chunk `subject` and of the `size` its
/// header announced.
pub(crate) fn checked_chunk(
    message: StreamMessage,
    subject: &str,
    size: u64,
) -> Result<Bytes, ReadError> {
    if message.subject.as_str() != subject {
        return Err(ReadError::new(ReadErrorKind::ChunksMissing));
    }
    if message.payload.len() as u64 != size {
        return Err(ReadError::new(ReadErrorKind::SizeMismatch));
    }
    Ok(message.payload)
}

/// An offset within one chunk (which is in memory, so it fits a `usize`).
fn as_index(offset: u64) -> usize {
    usize::try_from(offset).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Walks the headers of chunks of `sizes` (sequences from 1) for `start..end`: the parts
    /// handed out, with their sequences, until the one holding the last byte.
    fn walk(sizes: &[u64], start: u64, end: u64) -> Result<Vec<(u64, Range<usize>)>, ReadError> {
        let mut locator = Locator::new(start, end, sizes.iter().sum());
        let mut parts = Vec::new();
        for (index, &size) in sizes.iter().enumerate() {
            let pending = (sizes.len() - index - 1) as u64;
            if let Some(chunk) = locator.handle_header(index as u64 + 1, size, pending)? {
                parts.push((chunk.sequence, chunk.part));
                if chunk.last {
                    break;
                }
            }
        }
        Ok(parts)
    }

    #[test]
    fn the_locator_hands_out_only_the_range_s_bytes_of_the_chunks_holding_it() {
        assert_eq!(walk(&[3, 3, 3], 4, 7).unwrap(), vec![(2, 1..3), (3, 0..1)]);
        assert_eq!(walk(&[3, 3, 3], 0, 3).unwrap(), vec![(1, 0..3)]);
        // A short chunk in the middle, as a reader that returned little at a time makes.
        assert_eq!(walk(&[3, 1, 3], 3, 5).unwrap(), vec![(2, 0..1), (3, 0..1)]);
    }

    #[test]
    fn chunks_that_do_not_add_up_to_the_object_fail_the_walk() {
        let mut over = Locator::new(0, 4, 4);
        let error = over.handle_header(1, 5, 0).unwrap_err();
        assert_eq!(error.kind(), ReadErrorKind::SizeMismatch);
        let mut short = Locator::new(2, 4, 4);
        let error = short.handle_header(1, 3, 0).unwrap_err();
        assert_eq!(error.kind(), ReadErrorKind::SizeMismatch);
    }

    fn bounds(range: impl RangeBounds<u64>, size: u64) -> Result<(u64, u64), RangeNotSatisfiable> {
        span(
            range.start_bound().cloned(),
            range.end_bound().cloned(),
            size,
        )
        .map_err(|error| *error.downcast_source::<RangeNotSatisfiable>().unwrap())
    }

    #[test]
    fn ranges_become_offsets_within_the_object() {
        assert_eq!(bounds(10..20, 100), Ok((10, 20)));
        assert_eq!(bounds(10..=20, 100), Ok((10, 21)));
        assert_eq!(bounds(90.., 100), Ok((90, 100)));
        assert_eq!(bounds(..=99, 100), Ok((0, 100)));
        assert_eq!(bounds(.., 100), Ok((0, 100)));
        assert_eq!(bounds(.., 0), Ok((0, 0)));
        assert_eq!(bounds(100.., 100), Ok((100, 100)));
        assert_eq!(bounds(5..5, 100), Ok((5, 5)));
        let excluded = (Bound::Excluded(4), Bound::Included(4));
        assert_eq!(bounds(excluded, 100), Ok((5, 5)));
    }

    #[test]
    fn ranges_past_the_end_are_refused_with_the_size() {
        let refused = |start, end| {
            Err(RangeNotSatisfiable {
                start,
                end,
                size: 100,
            })
        };
        assert_eq!(bounds(90..101, 100), refused(90, 101));
        assert_eq!(bounds(101.., 100), refused(101, 100));
        assert_eq!(bounds(..=100, 100), refused(0, 101));
        assert_eq!(bounds(..=u64::MAX, 100), refused(0, u64::MAX));
        #[allow(clippy::reversed_empty_ranges)]
        let backwards = 20..10;
        assert_eq!(bounds(backwards, 100), refused(20, 10));
        let overflow = (Bound::Excluded(u64::MAX), Bound::Unbounded);
        assert_eq!(bounds(overflow, 100), refused(u64::MAX, 100));
    }
}
