//! Whether a read-through (a bucket's keys, a key's history, an object store's listing)
//! that the server says is over has read what the stream held.
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
//! sequence its filters match (one request) and goes on until it has that one, or anything
//! after it. A message the consumer skips because it was removed meanwhile is followed by its
//! successor, so the read does not wait for it. If the stream cannot be asked (no
//! permission, a timeout), the read ends where the server said, as it did before.

use crate::stream::Stream;

/// Where a read-through stands against the stream's end.
#[derive(Debug, Default, Clone)]
pub(crate) struct ReadEnd {
    /// The highest stream sequence delivered so far.
    last: u64,
    /// The stream was asked: the sequence to read up to.
    target: Option<u64>,
    /// The stream was asked (or can't be): the server's word ends nothing more.
    asked: bool,
}

/// What a delivered message means for the end of the read.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// More to read.
    More,
    /// The read is over.
    Over,
    /// The server says nothing is pending: ask the stream for its last sequence, then call
    /// [`ReadEnd::answered`].
    Ask,
}

impl ReadEnd {
    /// A message with stream sequence `sequence` came, with `pending` more to come as the
    /// server counts.
    pub(crate) fn delivered(&mut self, sequence: u64, pending: u64) -> Step {
        self.last = self.last.max(sequence);
        match self.target {
            Some(target) if self.last >= target => Step::Over,
            Some(_) => Step::More,
            None if pending > 0 => Step::More,
            None if self.asked => Step::Over,
            None => {
                self.asked = true;
                Step::Ask
            }
        }
    }

    /// Whether the stream was asked and the read goes on to its last sequence.
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

/// The last sequence of `stream` that any of `filters` matches, 0 for none: the stream's
/// own last when one filter is all its subjects, else the last message under each filter
/// (from the leader; wildcards allowed). `None` if the stream could not be asked.
pub(crate) async fn last_sequence(stream: &Stream, filters: &[String]) -> Option<u64> {
    if is_whole_stream(&stream.cached_info().config.subjects, filters) {
        let mut stream = stream.clone();
        return stream
            .info()
            .await
            .ok()
            .map(|info| info.state.last_sequence);
    }
    let mut last = 0;
    for filter in filters {
        match stream.get_last_raw_message_by_subject(filter).await {
            Ok(message) => last = last.max(message.sequence),
            Err(error)
                if error.kind() == crate::stream::LastRawMessageErrorKind::NoMessageFound => {}
            Err(_) => return None,
        }
    }
    Some(last)
}

/// Whether `filters` is the one subject the stream holds, so that the stream's own last
/// sequence is the filter's (the stream's info is small; a message get carries the value).
pub(crate) fn is_whole_stream(subjects: &[String], filters: &[String]) -> bool {
    matches!((subjects, filters), ([subject], [filter]) if subject == filter)
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
    fn a_stream_that_holds_more_is_read_up_to_its_last_message_or_past_it() {
        let mut end = ReadEnd::default();
        assert_eq!(end.delivered(5, 0), Step::Ask);
        assert!(!end.answered(Some(9)));
        assert_eq!(end.delivered(7, 0), Step::More, "no second ask");
        assert_eq!(end.delivered(8, 3), Step::More);
        // 9 was removed meanwhile: its successor ends the read.
        assert_eq!(end.delivered(10, 0), Step::Over);
    }

    #[test]
    fn only_a_filter_that_is_all_the_streams_subjects_reads_the_streams_last() {
        let subjects = ["$KV.b.>".to_owned()];
        assert!(is_whole_stream(&subjects, &["$KV.b.>".to_owned()]));
        assert!(!is_whole_stream(&subjects, &["$KV.b.a.>".to_owned()]));
        assert!(!is_whole_stream(
            &subjects,
            &["$KV.b.>".to_owned(), "$KV.b.x".to_owned()]
        ));
        assert!(!is_whole_stream(&[], &["$KV.b.>".to_owned()]), "a mirror");
    }
}
