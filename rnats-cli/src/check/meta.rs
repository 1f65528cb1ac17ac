//! `check meta`: the health of the JetStream meta cluster, as its leader sees it
//! (`$SYS.REQ.SERVER.PING.JSZ` with `leader_only`, so only the meta leader answers): a
//! leader, the expected number of peers, and every follower current, seen lately and not
//! lagging. Needs a system account user, as natscli's check does.

use std::time::Duration;

use clap::Args;
use rnats::system::System;
use serde_json::{Value, json};

use super::Outcome;
use crate::conn::{ConnArgs, parse_duration};
use crate::core::{Answer, DATA, system_failed};
use crate::jetstream::duration as show;

/// Every server's JetStream information; with `leader_only` only the meta leader answers.
const JSZ: &str = "$SYS.REQ.SERVER.PING.JSZ";

/// Thresholds of `check meta` (natscli makes all three required).
#[derive(Debug, Args)]
pub(crate) struct MetaArgs {
    /// Critical unless the meta cluster has this many servers (the leader included).
    #[arg(long, value_name = "SERVERS")]
    expect: usize,
    /// Critical when a follower lags by more operations than this (0: no check).
    #[arg(long, value_name = "OPS")]
    lag_critical: u64,
    /// Critical when a follower was last seen longer ago than this (0s: no check).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    seen_critical: Duration,
}

/// `check meta`.
pub(super) async fn check(conn: &ConnArgs, t: &MetaArgs) -> Outcome {
    let mut outcome = Outcome::new("JetStream Meta Cluster");
    let (client, settings) = match conn.connect().await {
        Ok(connected) => connected,
        Err(e) => {
            outcome.critical(format!("connection failed: {e}"));
            return outcome;
        }
    };
    let system = System::new(client).timeout(settings.timeout).expect(1);
    let answers = match system
        .request_raw("JSZ", json!({ "leader_only": true }))
        .await
    {
        Ok(answers) => Answer::all_of(answers, DATA),
        Err(e) => Err(system_failed(e, JSZ, settings.timeout)),
    };
    let jsz = match answers {
        Ok(answers) => answers.into_iter().next().map(|a| a.stats),
        Err(e) => {
            outcome.critical(format!("JSZ API request failed: {e}"));
            return outcome;
        }
    };
    match jsz {
        Some(jsz) => judge(&mut outcome, &jsz, t),
        None => outcome.critical("no JSZ response received"),
    }
    outcome
}

/// Holds the leader's view of the meta group (`data.meta_cluster`) to the thresholds.
fn judge(outcome: &mut Outcome, jsz: &Value, t: &MetaArgs) {
    if let Some(error) = jsz["error"]["description"].as_str() {
        return outcome.critical(format!("invalid result received: {error}"));
    }
    let meta = &jsz["data"]["meta_cluster"];
    if !meta.is_object() {
        return outcome.critical("no cluster information");
    }
    let Some(leader) = meta["leader"].as_str().filter(|l| !l.is_empty()) else {
        return outcome.critical("No leader");
    };
    let followers = meta["replicas"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let peers = followers.len() + 1;
    let expect = t.expect as f64;
    outcome.perf("peers", peers as f64, "", Some(expect), Some(expect));
    if t.expect > 0 && peers != t.expect {
        outcome.critical(format!("{peers} peers of expected {}", t.expect));
    }

    let (mut not_current, mut inactive, mut offline, mut lagged) = (0, 0, 0, 0);
    for peer in followers {
        not_current += usize::from(peer["current"].as_bool() != Some(true));
        offline += usize::from(peer["offline"].as_bool() == Some(true));
        // `active` is how long ago the leader last heard from the peer, in nanoseconds.
        let active = Duration::from_nanos(peer["active"].as_u64().unwrap_or(0));
        inactive += usize::from(!t.seen_critical.is_zero() && active > t.seen_critical);
        let lag = peer["lag"].as_u64().unwrap_or(0);
        lagged += usize::from(t.lag_critical > 0 && lag > t.lag_critical);
    }
    for (name, n) in [
        ("peer_offline", offline),
        ("peer_not_current", not_current),
        ("peer_inactive", inactive),
        ("peer_lagged", lagged),
    ] {
        outcome.perf(name, n as f64, "", None, None);
    }
    if not_current > 0 {
        outcome.critical(format!("{not_current} not current"));
    }
    if inactive > 0 {
        let seen = show(t.seen_critical);
        outcome.critical(format!("{inactive} inactive more than {seen}"));
    }
    if offline > 0 {
        outcome.critical(format!("{offline} offline"));
    }
    if lagged > 0 {
        let ops = t.lag_critical;
        outcome.critical(format!("{lagged} lagged more than {ops} ops"));
    }
    if outcome.status() == super::Status::Ok {
        outcome.ok(format!("{peers} peers led by {leader}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{Format, Status};

    fn thresholds() -> MetaArgs {
        MetaArgs {
            expect: 3,
            lag_critical: 100,
            seen_critical: Duration::from_secs(5),
        }
    }

    fn peer(name: &str, current: bool, active_s: u64, lag: u64) -> Value {
        json!({ "name": name, "current": current, "offline": false,
                "active": active_s * 1_000_000_000, "lag": lag })
    }

    #[test]
    fn a_healthy_group_names_its_leader() {
        let jsz = json!({ "data": { "meta_cluster": { "leader": "n1",
            "replicas": [peer("n2", true, 0, 0), peer("n3", true, 1, 2)] } } });
        let mut outcome = Outcome::new("JetStream Meta Cluster");
        judge(&mut outcome, &jsz, &thresholds());
        assert_eq!(
            outcome.render(Format::Nagios),
            "OK JetStream Meta Cluster OK:3 peers led by n1 | peers=3;3;3 peer_offline=0;; \
             peer_not_current=0;; peer_inactive=0;; peer_lagged=0;;\n"
        );
    }

    #[test]
    fn missing_stale_and_lagging_peers_are_critical() {
        let jsz = json!({ "data": { "meta_cluster": { "leader": "n1",
            "replicas": [peer("n2", false, 10, 500)] } } });
        let mut outcome = Outcome::new("JetStream Meta Cluster");
        judge(&mut outcome, &jsz, &thresholds());
        assert_eq!(outcome.status(), Status::Critical);
        let line = outcome.render(Format::Nagios);
        for part in [
            "Crit:2 peers of expected 3",
            "Crit:1 not current",
            "Crit:1 inactive more than",
            "Crit:1 lagged more than 100 ops",
        ] {
            assert!(line.contains(part), "{part}: {line}");
        }

        let mut outcome = Outcome::new("JetStream Meta Cluster");
        judge(
            &mut outcome,
            &json!({ "data": { "meta_cluster": {} } }),
            &thresholds(),
        );
        assert!(outcome.render(Format::Nagios).contains("Crit:No leader"));
    }
}
