//! What `stream cluster step-down` and `consumer cluster step-down` share: hearing the new
//! leader's election advisory, and judging from the info afterwards whether one was elected.

use std::time::Duration;

use futures_util::StreamExt;
use rnats::Subscriber;
use rnats::jetstream::Context;
use rnats::jetstream::stream::ClusterInfo;
use serde::Deserialize;

use crate::conn::ConnArgs;
use crate::error::CliError;

/// How long a step-down waits for the new leader at least, or `--timeout` if longer: an
/// election on a busy cluster takes seconds (natscli waits five).
pub(crate) const ELECTION_WAIT: Duration = Duration::from_secs(10);

/// The leader of the group of `what` (`"stream ORDERS"`, `"consumer C on ORDERS"`), whose
/// `noun` is `"stream"` or `"consumer"`, before it is asked to step down: refused when there
/// is no group to move, or no leader unless `force`d; the request is announced on stderr.
pub(super) fn leader_to_move(
    what: &str,
    noun: &str,
    cluster: Option<&ClusterInfo>,
    force: bool,
) -> Result<Option<String>, CliError> {
    let refused = |why: String| CliError::JetStream {
        action: format!("cannot move the leader of {what}"),
        source: why.into(),
    };
    let Some(cluster) = cluster.filter(|c| !c.replicas.is_empty()) else {
        return Err(refused(format!("the {noun} is not clustered")));
    };
    if cluster.leader.is_none() && !force {
        return Err(refused(format!(
            "the {noun} has no leader now (--force to ask anyway)"
        )));
    }
    eprintln!(
        "Requesting leader step down of {:?} for {what} in a {} peer group",
        cluster.leader.as_deref().unwrap_or("<unknown>"),
        cluster.replicas.len() + 1
    );
    Ok(cluster.leader.clone())
}

/// A subscription to a group's leader-elected advisories, made before the step-down so that
/// the election cannot be missed.
pub(super) struct ElectionWatch {
    advisories: Subscriber,
    /// How long to wait for the election.
    wait: Duration,
}

/// The part of a `LEADER_ELECTED` advisory we read.
#[derive(Deserialize)]
struct Elected {
    leader: String,
}

impl ElectionWatch {
    /// Listens for the elections of a `kind` (`STREAM` or `CONSUMER`) of group named `name`
    /// (`<stream>` or `<stream>.<consumer>`) under the advisory prefix in use.
    pub(super) async fn start(
        js: &Context,
        conn: &ConnArgs,
        kind: &str,
        name: &str,
    ) -> Result<ElectionWatch, CliError> {
        let prefix = conn.js_event_prefix.as_deref().unwrap_or("$JS.EVENT");
        let subject = format!("{prefix}.ADVISORY.{kind}.LEADER_ELECTED.{name}");
        let client = js.client();
        let advisories = client
            .subscribe(subject)
            .await
            .map_err(CliError::js("cannot listen for leader elections"))?;
        // The server must know of the interest before the step-down goes out.
        client
            .flush()
            .await
            .map_err(CliError::js("cannot listen for leader elections"))?;
        let wait = ELECTION_WAIT.max(conn.timeout.unwrap_or_default());
        Ok(ElectionWatch { advisories, wait })
    }

    /// Waits until an advisory names a leader other than `old`, or for as long as the wait
    /// allows: advisories may not reach this account (e.g. through an import), so the caller
    /// reads the info afterwards either way and [`judge`](Self::judge)s from it.
    pub(super) async fn wait_for_election(&mut self, old: Option<&str>) {
        let elected = async {
            while let Some(message) = self.advisories.next().await {
                let Ok(elected) = serde_json::from_slice::<Elected>(&message.payload) else {
                    continue;
                };
                if Some(elected.leader.as_str()) != old && !elected.leader.is_empty() {
                    return;
                }
            }
        };
        let _ = tokio::time::timeout(self.wait, elected).await;
    }

    /// The outcome of the step-down, from the leader the info shows after it: an error when
    /// it is still `old` or there is none.
    pub(super) fn judge(
        &self,
        what: &str,
        old: Option<&str>,
        now: Option<&str>,
    ) -> Result<(), CliError> {
        match now {
            Some(leader) if Some(leader) != old => {
                eprintln!("New leader elected {leader:?}");
                Ok(())
            }
            _ => Err(CliError::JetStream {
                action: format!("cannot move the leader of {what}"),
                source: format!("no new leader elected within {}s", self.wait.as_secs()).into(),
            }),
        }
    }
}
