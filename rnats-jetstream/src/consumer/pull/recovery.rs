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

use std::time::Duration;

use rnats_core::{Message, StatusCode};

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
