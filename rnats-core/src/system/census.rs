//! When a gathering of answers is complete: the decision, pure, fed with each answer.

use std::collections::BTreeSet;
use std::time::Duration;

/// How long a ping waits for more answers once as many servers answered as they count up:
/// natscli's wait after each answer.
const COUNTED_LINGER: Duration = Duration::from_millis(300);

/// How long a ping waits for more answers after the last one while they are fewer: a
/// server the others still count but that no longer answers costs this, not the timeout.
const QUIET_LINGER: Duration = Duration::from_secs(1);

/// What a gathering waits for (the timeout ends every wait).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Until {
    /// This many answers.
    Count(usize),
    /// A ping to every server: as many answers as the answers count servers up, then a
    /// moment more (see [`Gathering::linger`]). A `filtered` ping has nothing to count by:
    /// it ends a moment after the last answer.
    Ping {
        /// Whether the ping carried a filter.
        filtered: bool,
    },
    /// Every server a ping found, or, unless the ping was filtered, as many as it counted
    /// up (a server that restarted answers under a new ID).
    Census(Census),
    /// The timeout: a request to the user's own account, which has no ping to count the
    /// servers by.
    Timeout,
}

/// The servers that answered a ping: who the request that follows waits for.
///
/// Not merely how many: a server that missed the ping may answer the request before one
/// that did not, so only the servers' IDs tell whether each of them answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Census {
    /// The IDs of the servers that answered the ping.
    ids: BTreeSet<String>,
    /// The most servers an answer counted up, and at least as many as answered.
    active: usize,
    /// Whether the ping was filtered: then the count of servers up, which counts every
    /// server, is no target.
    filtered: bool,
}

impl Census {
    /// The census of a ping's answers, given as each server's ID and the servers it counts
    /// up; `filtered` says the ping carried a filter.
    pub(crate) fn of<'a>(
        answers: impl IntoIterator<Item = (&'a str, u64)>,
        filtered: bool,
    ) -> Census {
        let mut ids = BTreeSet::new();
        let mut counted = 0;
        for (id, active) in answers {
            ids.insert(id.to_owned());
            counted = counted.max(usize::try_from(active).unwrap_or(usize::MAX));
        }
        Census {
            active: counted.max(ids.len()),
            ids,
            filtered,
        }
    }
}

/// One gathering: the answers so far, and whether they are all there is to wait for.
#[derive(Debug)]
pub(crate) struct Gathering {
    until: Until,
    /// The IDs of the servers that answered.
    answered: BTreeSet<String>,
    /// The answers, one per server or not (a server that answered twice counts twice, and
    /// one that did not decode counts too).
    count: usize,
    /// The most servers an answer counted up.
    active: usize,
}

impl Gathering {
    /// A gathering that waits for `until`.
    pub(crate) fn new(until: Until) -> Gathering {
        Gathering {
            until,
            answered: BTreeSet::new(),
            count: 0,
            active: 0,
        }
    }

    /// Takes an answer from the server `id`, which counts `active` servers up (0 when it
    /// does not say).
    pub(crate) fn handle_answer(&mut self, id: &str, active: u64) {
        self.count += 1;
        self.answered.insert(id.to_owned());
        self.active = self
            .active
            .max(usize::try_from(active).unwrap_or(usize::MAX));
    }

    /// Whether any answer it took decoded, and so came from a server it can name.
    pub(crate) fn decoded_any(&self) -> bool {
        !self.answered.is_empty()
    }

    /// How long to wait for more answers after the last one; `None` to wait for the next
    /// one (or the timeout) until complete, and to end at once when complete.
    ///
    /// Only a ping lingers. Its count of servers up lags just after a server joins (each
    /// server counts the servers it has heard from, and the first to answer may not have
    /// heard from every other yet), so once complete it still takes the answers that come
    /// within a moment of the last, as natscli's does; and while incomplete it ends a
    /// second after the last answer rather than at the timeout. A count given or a census
    /// is exact.
    pub(crate) fn linger(&self) -> Option<Duration> {
        match &self.until {
            Until::Ping { .. } if self.count > 0 => Some(match self.is_complete() {
                true => COUNTED_LINGER,
                false => QUIET_LINGER,
            }),
            _ => None,
        }
    }

    /// Whether the answers so far are all there is to wait for.
    pub(crate) fn is_complete(&self) -> bool {
        match &self.until {
            Until::Count(n) => self.count >= *n,
            Until::Ping { filtered } => {
                !filtered && self.active > 0 && self.answered.len() >= self.active
            }
            Until::Census(census) => {
                census.ids.is_subset(&self.answered)
                    || (!census.filtered && self.answered.len() >= census.active)
            }
            Until::Timeout => false,
        }
    }

    /// How many of the servers waited for did not answer: short of the count; of a ping,
    /// short of the most servers the answers count up; of a census, the servers it found
    /// that stayed silent and, unfiltered, those it counted up beyond every server heard.
    /// A filtered ping, or the timeout, has nothing to count by: none.
    pub(crate) fn missing(&self) -> usize {
        match &self.until {
            Until::Count(n) => n.saturating_sub(self.count),
            Until::Ping { filtered: false } => self.active.saturating_sub(self.answered.len()),
            Until::Ping { filtered: true } | Until::Timeout => 0,
            Until::Census(census) => {
                let silent = census.ids.difference(&self.answered).count();
                match census.filtered {
                    true => silent,
                    false => census
                        .active
                        .saturating_sub(self.answered.len() + silent)
                        .saturating_add(silent),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gather(until: Until, answers: &[(&str, u64)]) -> Gathering {
        let mut gathering = Gathering::new(until);
        for (id, active) in answers {
            gathering.handle_answer(id, *active);
        }
        gathering
    }

    const PING: Until = Until::Ping { filtered: false };

    #[test]
    fn a_ping_is_complete_once_as_many_servers_answered_as_the_answers_count() {
        assert!(!gather(PING, &[]).is_complete());
        assert!(!gather(PING, &[("A", 3), ("B", 2)]).is_complete());
        // The largest count wins: C, which knows only itself, does not end it early...
        assert!(!gather(PING, &[("C", 1), ("A", 3)]).is_complete());
        assert!(gather(PING, &[("C", 1), ("A", 3), ("B", 3)]).is_complete());
        // ...and a server that answers twice is one server.
        assert!(!gather(PING, &[("A", 3), ("A", 3), ("B", 3)]).is_complete());
        // A server that does not count, or a filtered ping: never complete.
        assert!(!gather(PING, &[("A", 0)]).is_complete());
        let filtered = Until::Ping { filtered: true };
        assert!(!gather(filtered, &[("A", 1)]).is_complete());
    }

    #[test]
    fn a_ping_lingers_after_each_answer_and_nothing_else_does() {
        assert_eq!(gather(PING, &[]).linger(), None);
        assert_eq!(gather(PING, &[("A", 2)]).linger(), Some(QUIET_LINGER));
        assert_eq!(gather(PING, &[("A", 1)]).linger(), Some(COUNTED_LINGER));
        let filtered = Until::Ping { filtered: true };
        assert_eq!(gather(filtered, &[("A", 1)]).linger(), Some(QUIET_LINGER));
        assert_eq!(gather(Until::Count(1), &[("A", 1)]).linger(), None);
        let census = Until::Census(Census::of([("A", 1)], false));
        assert_eq!(gather(census, &[("A", 1)]).linger(), None);
    }

    #[test]
    fn a_census_waits_for_each_server_it_found_not_for_as_many_answers() {
        // The ping heard A and B; C, counted but slow, missed it.
        let census = Census::of([("A", 3), ("B", 3)], false);
        // C answers the request first: two answers, but B's is still to come.
        assert!(!gather(Until::Census(census.clone()), &[("C", 0), ("A", 0)]).is_complete());
        assert!(gather(Until::Census(census), &[("C", 0), ("A", 0), ("B", 0)]).is_complete());
        // A restarted under a new ID (A2): as many servers as were up have answered.
        let census = Census::of([("A", 2), ("B", 2)], false);
        assert!(gather(Until::Census(census), &[("A2", 0), ("B", 0)]).is_complete());
        // Filtered, only the servers found count.
        let census = Census::of([("A", 5)], true);
        assert!(!gather(Until::Census(census.clone()), &[("B", 0)]).is_complete());
        assert!(gather(Until::Census(census), &[("A", 0)]).is_complete());
    }

    #[test]
    fn a_count_is_complete_at_the_count() {
        assert!(!gather(Until::Count(2), &[("A", 0)]).is_complete());
        assert!(gather(Until::Count(2), &[("A", 0), ("A", 0)]).is_complete());
    }

    #[test]
    fn the_timeout_is_never_complete_and_misses_nobody() {
        let gathering = gather(Until::Timeout, &[("A", 3)]);
        assert!(!gathering.is_complete());
        assert_eq!(gathering.linger(), None);
        assert_eq!(gathering.missing(), 0);
    }

    #[test]
    fn missing_servers_are_counted_by_what_the_gathering_waited_for() {
        assert_eq!(gather(Until::Count(3), &[("A", 0)]).missing(), 2);
        assert_eq!(gather(Until::Count(1), &[("A", 0), ("B", 0)]).missing(), 0);
        // A ping: the most servers an answer counts up, less those heard.
        assert_eq!(gather(PING, &[("A", 3), ("B", 2)]).missing(), 1);
        assert_eq!(gather(PING, &[("A", 2), ("B", 2)]).missing(), 0);
        let filtered = Until::Ping { filtered: true };
        assert_eq!(gather(filtered, &[("A", 5)]).missing(), 0);
        // A census of A and B, which count three: C answering stands in for nobody.
        let census = || Until::Census(Census::of([("A", 3), ("B", 3)], false));
        assert_eq!(
            gather(census(), &[("C", 0), ("A", 0), ("B", 0)]).missing(),
            0
        );
        assert_eq!(gather(census(), &[("C", 0), ("A", 0)]).missing(), 1);
        assert_eq!(gather(census(), &[("A", 0)]).missing(), 2);
        // A restarted as A2, and B answered: A is silent, though as many as counted answered.
        let census = Census::of([("A", 2), ("B", 2)], false);
        assert_eq!(
            gather(Until::Census(census), &[("A2", 0), ("B", 0)]).missing(),
            1
        );
        // Filtered, only the servers found count.
        let census = Census::of([("A", 5)], true);
        assert_eq!(
            gather(Until::Census(census.clone()), &[("A", 0)]).missing(),
            0
        );
        assert_eq!(gather(Until::Census(census), &[("B", 0)]).missing(), 1);
    }
}
