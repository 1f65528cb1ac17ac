//! When a gathering of answers is complete: the decision, pure, fed with each answer.

use std::collections::BTreeSet;

/// What a gathering waits for (the timeout ends every wait).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Until {
    /// This many answers.
    Count(usize),
    /// A ping to every server: as many answers as the answers count servers up.
    Counted,
    /// Every server a ping found, or, unless the ping was filtered, as many as it counted
    /// up (a server that restarted answers under a new ID).
    Census(Census),
    /// Nothing to count by (a filtered ping): the timeout.
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
    /// The answers, one per server or not (a server that answered twice counts twice).
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

    /// Whether the answers so far are all there is to wait for.
    pub(crate) fn is_complete(&self) -> bool {
        match &self.until {
            Until::Count(n) => self.count >= *n,
            Until::Counted => self.active > 0 && self.answered.len() >= self.active,
            Until::Census(census) => {
                census.ids.is_subset(&self.answered)
                    || (!census.filtered && self.answered.len() >= census.active)
            }
            Until::Timeout => false,
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

    #[test]
    fn a_ping_ends_once_as_many_servers_answered_as_the_answers_count() {
        assert!(!gather(Until::Counted, &[]).is_complete());
        assert!(!gather(Until::Counted, &[("A", 3), ("B", 2)]).is_complete());
        // The largest count wins: C, which knows only itself, does not end it early...
        assert!(!gather(Until::Counted, &[("C", 1), ("A", 3)]).is_complete());
        assert!(gather(Until::Counted, &[("C", 1), ("A", 3), ("B", 3)]).is_complete());
        // ...and a server that answers twice is one server.
        assert!(!gather(Until::Counted, &[("A", 3), ("A", 3), ("B", 3)]).is_complete());
        // A server that does not count: nothing to end it but the timeout.
        assert!(!gather(Until::Counted, &[("A", 0)]).is_complete());
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
    fn a_count_ends_at_the_count_and_a_timeout_never() {
        assert!(!gather(Until::Count(2), &[("A", 0)]).is_complete());
        assert!(gather(Until::Count(2), &[("A", 0), ("A", 0)]).is_complete());
        assert!(!gather(Until::Timeout, &[("A", 1), ("B", 1)]).is_complete());
    }
}
