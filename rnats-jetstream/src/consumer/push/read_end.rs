//! Whether a read-through (a bucket's keys, a key's history, an object store's listing, a
//! watch's initial values) that the server says is over has read what the stream held.
//!
//! Such a read ends at the first message the server sends with nothing pending after it.
//! nats-server 2.15 can count one too few when it makes the consumer: a message removed
//! just as the consumer counts what it has to send (a key rewritten in a bucket that keeps
//! one revision) is subtracted once by the count and again by the removal's notice. The
//! read then ends one message early, and what it leaves out (the rewritten key's new
//! message, stored before the read's last) follows the message that said "nothing more".
//! Passes (`passes`) do not see it: the pass delivered all that the short count promised.
//! About one listing in forty of a one-revision bucket rewritten by two writers on a busy
//! machine lost a key that way (`blocking_kv.rs`, `kv.rs`).
//!
//! So when the server first says nothing is pending, the read asks the stream for the last
//! sequence its filters match (one direct get per filter where the stream allows them, else
//! one `STREAM.MSG.GET`; either finds the last message that is still there) and goes on
//! until it has that one, or anything after it (a message the consumer skips because it was
//! removed meanwhile is followed by its successor). There
//! it asks again, and ends once the stream holds nothing past what was read: a key skipped in
//! one stretch because it was rewritten comes in the next, unless rewritten once more just
//! then. Four asks at most; under writes that never pause the read ends at the fourth
//! target. If the stream cannot be asked (no permission, a timeout), the read ends where the
//! server said, as it did before. A read that waits on (its target removed before it came,
//! the consumer stalled) asks again after a quiet spell.

use std::time::Duration;

use futures_util::future::BoxFuture;

use crate::stream::direct::last_under_filter;
use crate::stream::{DirectGetErrorKind, LastRawMessageErrorKind, Stream};

/// How many times one read asks the stream for its end as messages come, at most.
const MOST_ASKS: u32 = 4;

/// Silence after which a read asks again whether anything is left: the stream, when it is
/// going on to a target, or (a KV history or listing) the consumer.
pub(crate) const QUIET: Duration = Duration::from_secs(1);

/// Where a read-through stands against the stream's end.
#[derive(Debug, Default, Clone)]
pub(crate) struct ReadEnd {
    /// The highest stream sequence delivered so far.
    last: u64,
    /// The stream's last sequence, as last asked, while the read goes on to it.
    target: Option<u64>,
    /// Times the stream was asked as messages came.
    asks: u32,
}

/// What a delivered message means for the end of the read.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// More to read.
    More,
    /// The read is over.
    Over,
    /// Ask the stream for its last sequence, then call [`ReadEnd::answered`].
    Ask,
}

impl ReadEnd {
    /// A read whose consumer had nothing to send when it was made: the stream is asked
    /// first ([`ReadEnd::answered`]).
    pub(crate) fn empty() -> ReadEnd {
        let mut end = ReadEnd::default();
        end.delivered(0, 0);
        end
    }

    /// A message with stream sequence `sequence` came, with `pending` more to come as the
    /// server counts.
    pub(crate) fn delivered(&mut self, sequence: u64, pending: u64) -> Step {
        self.last = self.last.max(sequence);
        let at_end = match self.target {
            Some(target) => self.last >= target,
            None => pending == 0,
        };
        match (at_end, self.asks < MOST_ASKS) {
            (false, _) => Step::More,
            (true, true) => {
                self.asks += 1;
                Step::Ask
            }
            (true, false) => Step::Over,
        }
    }

    /// Nothing came for a while: whether to ask the stream again (the read is going on to a
    /// target it may never see).
    pub(crate) fn reading_on(&self) -> bool {
        self.target.is_some()
    }

    /// The stream's last sequence under the read's filters (`None`: it could not be asked);
    /// whether the read is over.
    pub(crate) fn answered(&mut self, last: Option<u64>) -> bool {
        match last {
            Some(last) if last > self.last => {
                self.target = Some(last);
                false
            }
            _ => true,
        }
    }
}

/// [`last_sequence`] as a future of its own, for a read's state machine to hold.
pub(crate) fn ask(stream: &Stream, filters: &[String]) -> BoxFuture<'static, Option<u64>> {
    let (stream, filters) = (stream.clone(), filters.to_vec());
    Box::pin(async move { last_sequence(&stream, &filters).await })
}

/// The last sequence of `stream` that any of `filters` matches, 0 for none: the last message
/// under each filter (wildcards allowed; the message carries its value), by direct get where
/// the stream allows it, as a bucket's own reads go (so a user who may read the bucket may
/// ask), else from the leader. `None` if the stream could not be asked.
pub(crate) async fn last_sequence(stream: &Stream, filters: &[String]) -> Option<u64> {
    let direct = stream.cached_info().config.allow_direct;
    let mut last = 0;
    for filter in filters {
        let sequence = if direct {
            match last_under_filter(&stream.context, &stream.name, filter).await {
                Ok(message) => Some(message.sequence),
                Err(error) if error.kind() == DirectGetErrorKind::NotFound => None,
                Err(_) => return None,
            }
        } else {
            match stream.get_last_raw_message_by_subject(filter).await {
                Ok(message) => Some(message.sequence),
                Err(error) if error.kind() == LastRawMessageErrorKind::NoMessageFound => None,
                Err(_) => return None,
            }
        };
        last = last.max(sequence.unwrap_or(0));
    }
    Some(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_servers_word_ends_the_read_once_the_stream_has_nothing_after_it() {
        let mut end = ReadEnd::default();
        assert_eq!(end.delivered(3, 2), Step::More);
        assert_eq!(end.delivered(5, 0), Step::Ask);
        assert!(end.answered(Some(5)), "the stream ends where the read is");
        let mut end = ReadEnd::default();
        end.delivered(5, 0);
        assert!(end.answered(None), "not asked: the server's word stands");
        let mut end = ReadEnd::default();
        end.delivered(5, 0);
        assert!(end.answered(Some(0)), "nothing matches the filters");
    }

    #[test]
    fn a_stream_that_holds_more_is_read_up_to_its_last_message_or_past_it_then_asked_again() {
        let mut end = ReadEnd::default();
        assert_eq!(end.delivered(5, 0), Step::Ask);
        assert!(!end.answered(Some(9)));
        assert!(end.reading_on());
        assert_eq!(end.delivered(7, 0), Step::More, "the server's word waits");
        assert_eq!(end.delivered(8, 3), Step::More);
        // 9 was removed meanwhile: its successor ends the stretch.
        assert_eq!(end.delivered(10, 0), Step::Ask);
        assert!(end.answered(Some(10)));
    }

    #[test]
    fn under_writes_that_never_pause_the_fourth_target_ends_the_read() {
        let mut end = ReadEnd::default();
        assert_eq!(end.delivered(1, 0), Step::Ask);
        for target in [2, 3, 4] {
            assert!(!end.answered(Some(target)));
            assert_eq!(end.delivered(target, 5), Step::Ask);
        }
        assert!(!end.answered(Some(5)));
        assert_eq!(end.delivered(5, 0), Step::Over);
    }

    #[test]
    fn a_stalled_read_asks_again_without_counting_and_an_empty_one_asks_once() {
        let mut end = ReadEnd::default();
        assert!(!end.reading_on(), "nothing asked yet");
        assert_eq!(end.delivered(0, 0), Step::Ask, "an empty read asks");
        let mut empty = ReadEnd::empty();
        assert!(
            !empty.reading_on() && empty.answered(Some(0)),
            "empty() has asked"
        );
        assert!(!end.answered(Some(4)));
        assert!(end.reading_on());
        // Quiet: asked again, the target went.
        assert!(end.answered(Some(0)));
    }
}
