//! What the cluster tests share: the nodes' accounts, and creating a replicated stream once
//! the cluster can place it.

use std::time::Duration;

use futures_util::StreamExt;
use rnats_jetstream::Context;
use rnats_jetstream::context::CreateStreamErrorKind;
use rnats_jetstream::errors::ErrorCode;
use rnats_jetstream::stream::{Config, Stream};
use rnats_test_server::Cluster;

/// Accounts of every node: clients land in APP (JetStream on) without credentials, and SYS
/// lets a test hear the servers' `STATSZ` broadcasts while it waits to place a stream.
pub(crate) const ACCOUNTS: &str = "accounts {
  SYS { users: [{ user: sys, password: sys }] }
  APP { jetstream: enabled, users: [{ user: app, password: app }] }
}
system_account: SYS
no_auth_user: app
";

/// Creates the stream `config` describes once the cluster can place its replicas.
///
/// [`Cluster::start_with`] returns once the meta group has a leader with every peer current.
/// The leader may still refuse placement ("no suitable peers", 10005) on a node it has had no
/// `STATSZ` from yet, and it logs nothing when one arrives. So this listens to those
/// broadcasts in the system account and tries again after each one (waiting at most `wait`
/// for it): every retry follows a change on the server. A create that timed out is asked
/// again, twice at most: on a machine busy enough, a new cluster's first API request can go
/// unanswered for the whole timeout, and asking again for the same stream is harmless (the
/// server answers a create of a stream that exists with the same config with its info).
pub(crate) async fn create_placed_stream(
    cluster: &Cluster,
    js: &Context,
    config: Config,
    wait: Duration,
) -> Stream {
    let system = rnats_core::ConnectOptions::new()
        .user_and_password("sys".into(), "sys".into())
        .connect(cluster.urls().as_slice())
        .await
        .unwrap();
    let mut statsz = system.subscribe("$SYS.SERVER.*.STATSZ").await.unwrap();
    system.flush().await.unwrap();
    let mut timeouts_left = 2;
    loop {
        match js.create_stream(config.clone()).await {
            Ok(stream) => return stream,
            Err(e) => match e.kind() {
                CreateStreamErrorKind::TimedOut if timeouts_left > 0 => timeouts_left -= 1,
                CreateStreamErrorKind::JetStream(js_error)
                    if js_error.error_code() == ErrorCode::CLUSTER_NO_PEERS =>
                {
                    tokio::time::timeout(wait, statsz.next())
                        .await
                        .expect("no server sent STATSZ")
                        .expect("the system subscription ended");
                }
                _ => panic!("creating the {} stream failed: {e}", config.name),
            },
        }
    }
}

/// A file stream `name` on the subjects `name.>` with `replicas` copies, created once the
/// cluster can place them (see [`create_placed_stream`]).
pub(crate) async fn create_named_stream(
    cluster: &Cluster,
    js: &Context,
    name: &str,
    replicas: usize,
    wait: Duration,
) -> Stream {
    let config = Config {
        name: name.to_owned(),
        subjects: vec![format!("{name}.>")],
        storage: rnats_jetstream::stream::StorageType::File,
        num_replicas: replicas,
        ..Default::default()
    };
    create_placed_stream(cluster, js, config, wait).await
}
