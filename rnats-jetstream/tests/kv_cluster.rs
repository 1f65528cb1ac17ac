//! Key-Value on a replicated bucket in a three-node cluster: writers racing on one key. A
//! replicated stream checks a write's expected revision twice, when the write arrives
//! (against the writes still being replicated: error 10164, no revision in it) and when it
//! is applied (10071, "wrong last sequence: N"); a loser must read as a conflict either way.
#![cfg(feature = "kv")]
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use std::time::Duration;

use common::{ACCOUNTS, create_named_stream};
use futures_util::future::join_all;
use rnats_jetstream::kv::{self, CreateErrorKind, UpdateErrorKind};
use rnats_test_server::Cluster;

/// Bound on every wait of this file: elections on a loaded 2-core machine take seconds.
const WAIT: Duration = Duration::from_secs(60);
/// The JetStream API timeout of calls that may wait on an election.
const API_TIMEOUT: Duration = Duration::from_secs(30);
/// Writers in each race.
const WRITERS: usize = 16;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn racing_writers_on_a_replicated_bucket_lose_with_a_typed_conflict() {
    let cluster =
        Cluster::start_with(3, |node| node.jetstream(true).append_config(ACCOUNTS)).unwrap();
    let client = rnats_core::ConnectOptions::new()
        .retry_on_initial_connect()
        .connect(cluster.urls().as_slice())
        .await
        .unwrap();
    let js = rnats_jetstream::ContextBuilder::new()
        .timeout(API_TIMEOUT)
        .build(client);
    // Once an R3 stream is placed, the meta leader knows every peer, and the bucket's
    // stream is placed at once.
    create_named_stream(&cluster, &js, "PLACED", 3, WAIT).await;
    let store = js
        .create_key_value(kv::Config {
            bucket: "race".into(),
            num_replicas: 3,
            ..Default::default()
        })
        .await
        .unwrap();

    let mut codes = Vec::new();
    for round in 0..5 {
        let start = store.put("k", "start".into()).await.unwrap();
        let updates =
            join_all((0..WRITERS).map(|i| store.update("k", format!("{round}-{i}").into(), start)))
                .await;
        let won = updates.iter().filter(|result| result.is_ok()).count();
        assert_eq!(won, 1, "round {round}: {updates:?}");
        for lost in updates.iter().filter_map(|result| result.as_ref().err()) {
            assert_eq!(lost.kind(), UpdateErrorKind::WrongLastRevision, "{lost:?}");
            codes.push(format!("{lost:?}"));
        }

        let key = format!("fresh-{round}");
        let creates =
            join_all((0..WRITERS).map(|i| store.create(&key, i.to_string().into()))).await;
        let won = creates.iter().filter(|result| result.is_ok()).count();
        assert_eq!(won, 1, "round {round}: {creates:?}");
        for lost in creates.iter().filter_map(|result| result.as_ref().err()) {
            assert_eq!(lost.kind(), CreateErrorKind::AlreadyExists, "{lost:?}");
        }
    }
    // Which codes the races drew (both, on this machine): for the record, not asserted, as
    // the timing decides it.
    let constant = codes.iter().filter(|c| c.contains("10164")).count();
    println!(
        "{constant} of {} lost updates refused with 10164",
        codes.len()
    );
}
