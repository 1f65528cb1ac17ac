//! What a continuous pull stream recovers from on its own, and how soon it asks again.
//!
//! A pull request lives on the consumer's leader. When the client knows it is gone (the
//! connection came back, the leader ended it with 409 `Leadership Change`, a new leader was
//! elected, or nobody served it) the stream sends a new one at once, or after a short backoff
//! while nobody serves the consumer (its leader is being elected), rather than waiting for two
//! idle heartbeats to go missing. None of this is an error item: async-nats' streams do not
//! yield one for what they recover from either, so a `let message = message?;` loop keeps
//! going. [`Recoveries`] counts it instead. A request the server dropped without a word is
//! found out by the watches in `lost`.

use std::time::{Duration, Instant};

use rnats_core::{Message, StatusCode};

use super::MessagesErrorKind;

/// The first wait before asking again after no responders.
const FIRST_RETRY: Duration = Duration::from_millis(250);
/// The longest wait between two requests while nobody serves the consumer: an election on a
/// loaded machine takes seconds, and each retry is one small request.
const LONGEST_RETRY: Duration = Duration::from_secs(2);

/// How often a pull stream recovered without yielding an error item; from
/// [`Stream::recoveries`](super::Stream::recoveries) and
/// [`Ordered::recoveries`](super::Ordered::recoveries).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Recoveries {
    /// Pull requests sent again because the connection came back.
    pub reconnects: u64,
    /// Pull requests sent again because the consumer's (or its stream's) leader changed: a
    /// 409 `Leadership Change`, or a leader-elected advisory.
    pub leader_changes: u64,
    /// Pull requests nobody served (503: the consumer had no leader, or did not exist), sent
    /// again after a backoff. Only when this lasts as long as two idle heartbeats is it
    /// reported as a [`NoResponders`](super::MessagesErrorKind::NoResponders) item.
    pub no_responders: u64,
    /// Idle heartbeats missed; each is also reported as a
    /// [`MissingHeartbeat`](super::MessagesErrorKind::MissingHeartbeat) item, as in
    /// async-nats.
    pub missed_heartbeats: u64,
    /// Ordered consumers only: how often the consumer was recreated.
    pub recreations: u64,
    /// Pull requests sent again because the server's cluster changed
    /// ([`ClusterChanged`](rnats_core::ConnectionEvent::ClusterChanged)): a route between
    /// the client's server and the consumer's leader was cut or came back, and a request
    /// that went through it may be gone without a word.
    pub cluster_changes: u64,
    /// Pull requests sent again because one was gone without a word: after a fault, its
    /// heartbeats (asked for every second then) stopped; or, with a heartbeat late, the
    /// consumer's leader said nobody waits. Neither is an error item.
    pub lost_pulls: u64,
}

impl Recoveries {
    /// The sum of both counts, field by field.
    pub(crate) fn add(self, other: Recoveries) -> Recoveries {
        Recoveries {
            reconnects: self.reconnects + other.reconnects,
            leader_changes: self.leader_changes + other.leader_changes,
            no_responders: self.no_responders + other.no_responders,
            missed_heartbeats: self.missed_heartbeats + other.missed_heartbeats,
            recreations: self.recreations + other.recreations,
            cluster_changes: self.cluster_changes + other.cluster_changes,
            lost_pulls: self.lost_pulls + other.lost_pulls,
        }
    }
}

/// The wait before retry `attempt` (0 for the first) after no responders: doubling from
/// 250 ms up to 2 s, and never longer than the idle heartbeat where one is set.
pub(crate) fn retry_wait(attempt: u32, idle_heartbeat: Duration) -> Duration {
    let wait = FIRST_RETRY
        .saturating_mul(1 << attempt.min(8))
        .min(LONGEST_RETRY);
    if idle_heartbeat.is_zero() {
        wait
    } else {
        wait.min(idle_heartbeat)
    }
}

/// Pull requests that nobody served (503 no responders), in a row: when to ask again,
/// whether to ask if the consumer exists at all, and what to tell the caller. Shared by the
/// async stream and the blocking `Messages`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Unserved {
    /// Since when it lasts, or since it was last told.
    since: Instant,
    /// Requests nobody served so far in this run.
    attempt: u32,
    /// Whether it was told yet.
    reported: bool,
}

/// What one more unserved request means; from [`Unserved::next`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct UnservedStep {
    /// The wait before the next request.
    pub(crate) wait: Duration,
    /// Whether to ask whether the consumer exists (the second, fourth, eighth... in a row;
    /// not the first: a leader may be a moment from elected).
    pub(crate) ask_missing: bool,
    /// The item to tell the caller, if any: `NoResponders` once it has lasted `limit`;
    /// while it lasts on, a `MissingHeartbeat` every `limit`, as async-nats reports it (no
    /// pull lives at the server to send one).
    pub(crate) report: Option<MessagesErrorKind>,
}

impl Unserved {
    /// A run starting at `now`.
    pub(crate) fn new(now: Instant) -> Unserved {
        Unserved {
            since: now,
            attempt: 0,
            reported: false,
        }
    }

    /// One more request nobody served, at `now`, for requests with `idle_heartbeat`. `limit`
    /// is how long it may last before it is told (two heartbeats; zero for requests without
    /// heartbeats: told every time, as `NoResponders`); `eager` tells `NoResponders` at
    /// every one (an ordered consumer makes itself again on it).
    pub(crate) fn next(
        &mut self,
        now: Instant,
        idle_heartbeat: Duration,
        limit: Duration,
        eager: bool,
    ) -> UnservedStep {
        let wait = retry_wait(self.attempt, idle_heartbeat);
        self.attempt = self.attempt.saturating_add(1);
        let ask_missing = self.attempt >= 2 && self.attempt.is_power_of_two();
        let report = match limit {
            _ if eager => true,
            limit if limit.is_zero() => true,
            limit if now.duration_since(self.since) >= limit => {
                self.since = now;
                true
            }
            _ => false,
        };
        let told_before = self.reported;
        self.reported |= report;
        let report = match report {
            false => None,
            true if told_before && !eager && !limit.is_zero() => {
                Some(MessagesErrorKind::MissingHeartbeat)
            }
            true => Some(MessagesErrorKind::NoResponders),
        };
        UnservedStep {
            wait,
            ask_missing,
            report,
        }
    }
}

/// Whether a status ends a pull request because its consumer's leader stepped down.
pub(crate) fn is_leader_change(message: &Message) -> bool {
    message.status == Some(StatusCode::CONFLICT)
        && message
            .description
            .as_deref()
            .is_some_and(|d| d.to_ascii_lowercase().starts_with("leadership change"))
}

/// The subjects on which the servers announce a new leader for the consumer and for its
/// stream (`$JS.EVENT.ADVISORY.{CONSUMER,STREAM}.LEADER_ELECTED...`); `None` for a context
/// with another API prefix (a domain or an import), whose advisories live elsewhere.
pub(crate) fn leader_advisories(prefix: &str, stream: &str, consumer: &str) -> Option<[String; 2]> {
    (prefix == "$JS.API").then(|| {
        [
            format!("$JS.EVENT.ADVISORY.CONSUMER.LEADER_ELECTED.{stream}.{consumer}"),
            format!("$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED.{stream}"),
        ]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The steps of unserved requests at the given offsets (ms) from the first.
    fn steps(
        at_ms: &[u64],
        heartbeat: Duration,
        limit: Duration,
        eager: bool,
    ) -> Vec<UnservedStep> {
        let start = Instant::now();
        let mut run = Unserved::new(start);
        at_ms
            .iter()
            .map(|ms| run.next(start + Duration::from_millis(*ms), heartbeat, limit, eager))
            .collect()
    }

    #[test]
    fn an_unserved_run_backs_off_asks_at_powers_of_two_and_is_told_after_its_limit() {
        let beat = Duration::from_secs(1);
        let got = steps(&[0, 250, 750, 1_750, 2_750, 3_750], beat, beat * 2, false);
        let waits: Vec<u64> = got.iter().map(|s| s.wait.as_millis() as u64).collect();
        assert_eq!(waits, [250, 500, 1000, 1000, 1000, 1000]);
        let asks: Vec<bool> = got.iter().map(|s| s.ask_missing).collect();
        assert_eq!(asks, [false, true, false, true, false, false]);
        let reports: Vec<_> = got.iter().map(|s| s.report).collect();
        // Told at 2 s, then again two seconds on, as a missed heartbeat.
        use MessagesErrorKind::{MissingHeartbeat, NoResponders};
        assert_eq!(reports, [None, None, None, None, Some(NoResponders), None]);
        let later = steps(&[0, 2_000, 4_000], beat, beat * 2, false);
        let later: Vec<_> = later.iter().map(|s| s.report).collect();
        assert_eq!(later, [None, Some(NoResponders), Some(MissingHeartbeat)]);
    }

    #[test]
    fn an_unserved_run_without_heartbeats_or_an_eager_one_is_told_every_time() {
        use MessagesErrorKind::NoResponders;
        for (limit, eager) in [(Duration::ZERO, false), (Duration::from_secs(30), true)] {
            let got = steps(&[0, 250, 750], Duration::ZERO, limit, eager);
            let reports: Vec<_> = got.iter().map(|s| s.report).collect();
            assert_eq!(reports, [Some(NoResponders); 3], "{limit:?} {eager}");
        }
    }

    #[test]
    fn retries_double_up_to_a_cap_and_the_heartbeat() {
        let none = Duration::ZERO;
        let waits: Vec<u64> = (0..6)
            .map(|a| retry_wait(a, none).as_millis() as u64)
            .collect();
        assert_eq!(waits, [250, 500, 1000, 2000, 2000, 2000]);
        assert_eq!(retry_wait(40, none), LONGEST_RETRY);
        assert_eq!(
            retry_wait(3, Duration::from_millis(700)),
            Duration::from_millis(700)
        );
    }

    #[test]
    fn advisories_only_under_the_default_prefix() {
        let [consumer, stream] = leader_advisories("$JS.API", "S", "C").unwrap();
        assert_eq!(consumer, "$JS.EVENT.ADVISORY.CONSUMER.LEADER_ELECTED.S.C");
        assert_eq!(stream, "$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED.S");
        assert!(leader_advisories("$JS.hub.API", "S", "C").is_none());
    }

    #[test]
    fn only_a_leadership_change_reads_as_one() {
        let status = |code: u16, description: &str| Message {
            subject: "_INBOX.x".into(),
            reply: None,
            payload: bytes::Bytes::new(),
            headers: None,
            status: Some(StatusCode::from_u16(code).unwrap()),
            description: Some(description.to_owned()),
            length: 0,
        };
        assert!(is_leader_change(&status(409, "Leadership Change")));
        assert!(!is_leader_change(&status(409, "Consumer Deleted")));
        assert!(!is_leader_change(&status(408, "Leadership Change")));
    }
}
