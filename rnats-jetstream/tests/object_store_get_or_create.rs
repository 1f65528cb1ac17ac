//! `Context::get_or_create_object_store` (an rnats addition) against a real nats-server: an
//! existing bucket comes back as it is, a missing one is created, bad names are refused, and
//! callers racing to create a bucket all get it, in the window between one's look and its
//! create made certain by a relay that creates the bucket there.
#![cfg(feature = "object-store")]
#![allow(clippy::unwrap_used, missing_docs)]

use futures_util::StreamExt;
use rnats_jetstream::Context;
use rnats_jetstream::object_store::{Config, CreateObjectStoreErrorKind};
use rnats_jetstream::stream::StorageType;
use rnats_test_server::NatsServer;

const RELAY_PREFIX: &str = "$JS.RELAY.API";

async fn jetstream(server: &NatsServer) -> Context {
    let client = rnats_core::connect(server.url()).await.unwrap();
    rnats_jetstream::new(client)
}

fn config(bucket: &str, description: &str) -> Config {
    Config {
        bucket: bucket.to_owned(),
        description: Some(description.to_owned()),
        storage: StorageType::Memory,
        ..Default::default()
    }
}

/// The description the server holds for `bucket`.
async fn description(js: &Context, bucket: &str) -> Option<String> {
    let stream = js.get_stream(format!("OBJ_{bucket}")).await.unwrap();
    stream.cached_info().config.description.clone()
}

#[tokio::test]
async fn a_missing_bucket_is_created_and_an_existing_one_left_as_it_is() {
    let server = NatsServer::builder().jetstream(true).spawn().unwrap();
    let js = jetstream(&server).await;

    let made = js
        .get_or_create_object_store(config("files", "first"))
        .await
        .unwrap();
    assert_eq!(made.name(), "files");
    made.put("a", &mut &b"data"[..]).await.unwrap();
    assert_eq!(description(&js, "files").await.as_deref(), Some("first"));

    // Another configuration (one `create_object_store` is refused) gets the bucket as it is.
    let mut other = config("files", "second");
    other.storage = StorageType::File;
    let got = js.get_or_create_object_store(other).await.unwrap();
    assert_eq!(got.name(), "files");
    assert_eq!(got.status().await.unwrap().storage, StorageType::Memory);
    assert_eq!(got.get_bytes("a").await.unwrap(), "data");
    assert_eq!(description(&js, "files").await.as_deref(), Some("first"));

    for name in ["", "a.b", "a b", "a*"] {
        let error = js
            .get_or_create_object_store(config(name, "bad"))
            .await
            .unwrap_err();
        assert_eq!(error.kind(), CreateObjectStoreErrorKind::InvalidStoreName);
    }
}

#[tokio::test]
async fn concurrent_callers_all_get_the_bucket() {
    let server = NatsServer::builder().jetstream(true).spawn().unwrap();
    let (one, two) = (jetstream(&server).await, jetstream(&server).await);

    // The same configuration, and different ones: each caller gets the one bucket.
    let (a, b) = tokio::join!(
        one.get_or_create_object_store(config("same", "d")),
        two.get_or_create_object_store(config("same", "d")),
    );
    assert_eq!((a.unwrap().name(), b.unwrap().name()), ("same", "same"));
    let (a, b) = tokio::join!(
        one.get_or_create_object_store(config("mixed", "from one")),
        two.get_or_create_object_store(config("mixed", "from two")),
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    a.put("x", &mut &b"by a"[..]).await.unwrap();
    assert_eq!(b.get_bytes("x").await.unwrap(), "by a");
}

#[tokio::test]
async fn a_bucket_created_between_the_look_and_the_create_is_taken() {
    let server = NatsServer::builder().jetstream(true).spawn().unwrap();
    let rival = jetstream(&server).await;
    let mut creates = rival
        .client()
        .subscribe("$JS.API.STREAM.CREATE.OBJ_race")
        .await
        .unwrap();
    rival.client().flush().await.unwrap();
    start_relay(&server, rival.clone()).await;
    let client = rnats_core::connect(server.url()).await.unwrap();
    let js = rnats_jetstream::with_prefix(client, RELAY_PREFIX);

    let store = js
        .get_or_create_object_store(config("race", "mine"))
        .await
        .unwrap();
    assert_eq!(store.name(), "race");
    // The rival's create, then this caller's, which the server refused: the rival's stands.
    for _ in 0..2 {
        creates.next().await.unwrap();
    }
    assert_eq!(description(&rival, "race").await.as_deref(), Some("rival"));
    store.put("x", &mut &b"data"[..]).await.unwrap();
}

/// Passes requests on `$JS.RELAY.API.>` to `$JS.API.>`; the first stream info request, once
/// the server answered it, waits while `rival` creates the bucket `race` with a description
/// of its own, then gets its (now stale) answer.
async fn start_relay(server: &NatsServer, rival: Context) {
    let client = rnats_core::connect(server.url()).await.unwrap();
    let mut requests = client.subscribe(format!("{RELAY_PREFIX}.>")).await.unwrap();
    client.flush().await.unwrap();
    tokio::spawn(async move {
        let mut raced = false;
        while let Some(request) = requests.next().await {
            let subject = request.subject.replacen(RELAY_PREFIX, "$JS.API", 1);
            let Some(reply) = request.reply else {
                continue;
            };
            if raced || !subject.starts_with("$JS.API.STREAM.INFO.") {
                client
                    .publish_with_reply(subject, reply, request.payload)
                    .await
                    .unwrap();
                continue;
            }
            raced = true;
            let answer = client.request(subject, request.payload).await.unwrap();
            rival
                .create_object_store(config("race", "rival"))
                .await
                .unwrap();
            client.publish(reply, answer.payload).await.unwrap();
        }
    });
}
