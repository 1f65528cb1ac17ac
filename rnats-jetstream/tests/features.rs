//! Server version and API level detection (ADR-44) against a real nats-server.
#![allow(clippy::unwrap_used, missing_docs)]

use rnats_jetstream::context::CreateStreamErrorKind;
use rnats_jetstream::stream::{Config, StorageType};
use rnats_jetstream::{ContextBuilder, ErrorCode, Feature, ServerVersion};
use rnats_test_server::NatsServer;

fn memory_stream(name: &str) -> Config {
    Config {
        name: name.to_owned(),
        subjects: vec![format!("{name}.>")],
        storage: StorageType::Memory,
        ..Default::default()
    }
}

#[tokio::test]
async fn the_connected_servers_version_and_api_level_are_known() {
    let server = NatsServer::builder().jetstream(true).spawn().unwrap();
    let announced: ServerVersion = server.info().unwrap()["version"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let client = rnats_core::connect(server.url()).await.unwrap();
    let js = rnats_jetstream::new(client);
    assert_eq!(js.server_version(), Some(announced));
    assert!(
        announced >= ServerVersion::new(2, 12, 0),
        "tests need 2.12+"
    );
    for feature in [
        Feature::MultipleFilterSubjects,
        Feature::ConsumerPause,
        Feature::MessageTtl,
        Feature::RequiredApiLevel,
    ] {
        assert!(js.supports(feature), "{feature:?}");
    }
    // 2.12 speaks level 2 (ADR-44); later releases only go up.
    let account = js.query_account().await.unwrap();
    assert!(
        account.requests.level >= 2,
        "level {}",
        account.requests.level
    );
}

#[tokio::test]
async fn a_required_api_level_is_checked_by_the_answering_server() {
    let server = NatsServer::builder().jetstream(true).spawn().unwrap();
    let client = rnats_core::connect(server.url()).await.unwrap();
    let level = rnats_jetstream::new(client.clone())
        .query_account()
        .await
        .unwrap()
        .requests
        .level;

    let met = ContextBuilder::new()
        .required_api_level(level as u32)
        .build(client.clone());
    met.create_stream(memory_stream("MET")).await.unwrap();

    let unmet = ContextBuilder::new()
        .required_api_level(level as u32 + 1)
        .build(client);
    let err = unmet
        .create_stream(memory_stream("UNMET"))
        .await
        .unwrap_err();
    match err.kind() {
        CreateStreamErrorKind::JetStream(error) => {
            assert_eq!(error.error_code(), ErrorCode::REQUIRED_API_LEVEL, "{error}")
        }
        other => panic!("unexpected kind {other:?}"),
    }
    // Nothing was created by the refused request.
    assert!(met.get_stream("UNMET").await.is_err());
}
