#![allow(missing_docs, clippy::unwrap_used)]
#![cfg(feature = "kv")]
use rnats as async_nats;

// Compile-level compatibility with async-nats 0.51's Key-Value API, written as an async-nats
// program would use it: only `async_nats::...` paths. The `async fn`s are compiled, never run;
// the `#[tokio::test]` at the end runs the common path against a real server.

use std::time::Duration;

use async_nats::jetstream::{self, kv};
use bytes::Bytes;
use futures_util::{StreamExt, TryStreamExt};

#[allow(dead_code)]
async fn bucket_shapes(client: async_nats::Client) -> Result<(), async_nats::Error> {
    let js = jetstream::new(client);
    let store: kv::Store = js
        .create_key_value(kv::Config {
            bucket: "profiles".to_string(),
            description: "who likes what".to_string(),
            history: 10,
            max_age: Duration::from_secs(3600),
            max_bytes: 1 << 30,
            max_value_size: 1 << 20,
            storage: jetstream::stream::StorageType::File,
            num_replicas: 1,
            compression: true,
            limit_markers: Some(Duration::from_secs(60)),
            ..Default::default()
        })
        .await?;
    let _mirror = js
        .create_key_value(kv::Config {
            bucket: "copy".to_string(),
            mirror: Some(jetstream::stream::Source {
                name: "profiles".to_string(),
                ..Default::default()
            }),
            mirror_direct: true,
            placement: Some(jetstream::stream::Placement {
                cluster: Some("east".to_string()),
                tags: vec![],
            }),
            republish: Some(jetstream::stream::Republish {
                source: ">".to_string(),
                destination: "copy.>".to_string(),
                headers_only: true,
            }),
            sources: None,
            ..Default::default()
        })
        .await?;
    let _again: kv::Store = js.get_key_value("profiles").await?;
    let _again: kv::Store = js.get_key_value(String::from("profiles")).await?;
    let _updated: kv::Store = js
        .update_key_value(kv::Config {
            bucket: "profiles".into(),
            history: 20,
            ..Default::default()
        })
        .await?;
    let _upserted = js
        .create_or_update_key_value(kv::Config {
            bucket: "profiles".into(),
            ..Default::default()
        })
        .await?;
    let deleted: jetstream::stream::DeleteStatus = js.delete_key_value("copy").await?;
    println!("{}", deleted.success);

    let name: &String = &store.name;
    let stream_name: &String = &store.stream_name;
    let prefix: &String = &store.prefix;
    let put_prefix: &Option<String> = &store.put_prefix;
    let use_prefix: bool = store.use_jetstream_prefix;
    let stream: &jetstream::stream::Stream = &store.stream;
    println!("{name} {stream_name} {prefix} {put_prefix:?} {use_prefix} {stream:?}");

    let status: kv::bucket::Status = store.status().await?;
    let bucket: &str = status.bucket();
    let values: u64 = status.values();
    let history: i64 = status.history();
    let max_age: Duration = status.max_age();
    let info: &jetstream::stream::Info = &status.info;
    println!(
        "{bucket} {values} {history} {max_age:?} {} {}",
        info.config.name, status.bucket
    );
    Ok(())
}

#[allow(dead_code)]
async fn entry_shapes(store: kv::Store) -> Result<(), async_nats::Error> {
    let revision: u64 = store.put("sue.color", "blue".into()).await?;
    let revision: u64 = store
        .put(String::from("sue.color"), Bytes::from_static(b"green"))
        .await
        .unwrap_or(revision);
    let value: Option<Bytes> = store.get("sue.color").await?;
    let _value = store.get(String::from("sue.color")).await?;
    println!("{value:?}");

    if let Some(entry) = store.entry("sue.color").await? {
        let kv::Entry {
            bucket,
            key,
            value,
            revision,
            delta,
            created,
            operation,
            seen_current,
        } = entry;
        println!("{bucket} {key} {value:?} {revision} {delta} {created} {seen_current}");
        match operation {
            kv::Operation::Put => {}
            kv::Operation::Delete | kv::Operation::Purge => {}
        }
    }
    let _old: Option<kv::Entry> = store.entry_for_revision("sue.color", revision).await?;

    let created: u64 = store.create("new", "x".into()).await?;
    let _ttl: u64 = store
        .create_with_ttl("short", "x".into(), Duration::from_secs(5))
        .await?;
    let updated: u64 = store.update("new", "y".into(), created).await?;
    store.delete("new").await?;
    store.delete_expect_revision("new", Some(updated)).await?;
    store.purge("new").await?;
    store.purge_expect_revision("new", None).await?;
    store.purge_with_ttl("new", Duration::from_secs(10)).await?;
    store
        .purge_expect_revision_with_ttl("new", updated, Duration::from_secs(10))
        .await?;

    match store.create("new", "z".into()).await {
        Ok(revision) => println!("created at {revision}"),
        Err(err) => match err.kind() {
            kv::CreateErrorKind::AlreadyExists => println!("taken"),
            kv::CreateErrorKind::InvalidKey => println!("bad key"),
            kv::CreateErrorKind::Publish | kv::CreateErrorKind::Ack => println!("{err}"),
            kv::CreateErrorKind::Other => println!("{err:?}"),
        },
    }
    match store.update("new", "z".into(), 1).await {
        Ok(_) => {}
        Err(err) if err.kind() == kv::UpdateErrorKind::WrongLastRevision => {}
        Err(err) => match err.kind() {
            kv::UpdateErrorKind::InvalidKey
            | kv::UpdateErrorKind::TimedOut
            | kv::UpdateErrorKind::WrongLastRevision
            | kv::UpdateErrorKind::Other => return Err(err.into()),
        },
    }
    let put: Result<u64, kv::PutError> = store.put("a", "b".into()).await;
    if let Err(err) = put {
        match err.kind() {
            kv::PutErrorKind::InvalidKey | kv::PutErrorKind::Publish | kv::PutErrorKind::Ack => {}
        }
    }
    let entry: Result<Option<kv::Entry>, kv::EntryError> = store.entry("a").await;
    if let Err(err) = entry {
        match err.kind() {
            kv::EntryErrorKind::InvalidKey
            | kv::EntryErrorKind::TimedOut
            | kv::EntryErrorKind::Other => {}
        }
    }
    let _delete: Result<(), kv::DeleteError> = store.delete("a").await;
    let _purge: Result<(), kv::PurgeError> = store.purge("a").await;
    let _kinds: (kv::DeleteErrorKind, kv::PurgeErrorKind) =
        (kv::UpdateErrorKind::Other, kv::UpdateErrorKind::Other);
    let status: Result<kv::bucket::Status, kv::StatusError> = store.status().await;
    if let Err(err) = status {
        match err.kind() {
            kv::StatusErrorKind::JetStream(error) => println!("{}", error.error_code().0),
            kv::StatusErrorKind::TimedOut => {}
        }
    }
    Ok(())
}

#[allow(dead_code)]
async fn watch_shapes(store: kv::Store) -> Result<(), async_nats::Error> {
    let mut watch: kv::Watch = store.watch_all().await?;
    while let Some(entry) = watch.next().await {
        let entry: kv::Entry = entry?;
        println!("{} {:?} {}", entry.key, entry.operation, entry.seen_current);
    }
    let _one = store.watch("sue.*").await?;
    let _one = store.watch(String::from("sue.>")).await?;
    let _many = store.watch_many(["a", "b.*"]).await?;
    let _many = store.watch_many(vec![String::from("a")]).await?;
    let _history = store.watch_with_history("sue.color").await?;
    let _many_history = store.watch_many_with_history(["a", "b"]).await?;
    let _from = store.watch_from_revision("sue.color", 5).await?;
    let _all_from = store.watch_all_from_revision(5).await?;
    let mut watch = store.watch(">").await?;
    let next: Option<Result<kv::Entry, kv::WatcherError>> = watch.next().await;
    if let Some(Err(err)) = next {
        match err.kind() {
            kv::WatcherErrorKind::Consumer | kv::WatcherErrorKind::Other => {}
        }
    }
    let failed: Result<kv::Watch, kv::WatchError> = store.watch("a").await;
    if let Err(err) = failed {
        match err.kind() {
            kv::WatchErrorKind::InvalidKey
            | kv::WatchErrorKind::TimedOut
            | kv::WatchErrorKind::ConsumerCreate
            | kv::WatchErrorKind::Other => {}
        }
    }

    let mut history: kv::History = store.history("sue.color").await?;
    while let Some(entry) = history.next().await {
        println!("{}", entry?.revision);
    }
    let _all: Vec<kv::Entry> = store.history("sue.color").await?.try_collect().await?;
    let keys: Vec<String> = store.keys().await?.try_collect().await?;
    let mut keys_stream: kv::Keys = store.keys().await?;
    while let Some(key) = keys_stream.try_next().await? {
        println!("{key}");
    }
    let _failed: Result<kv::History, kv::HistoryError> = store.history("a").await;
    let _kind: kv::HistoryErrorKind = kv::WatchErrorKind::Other;
    println!("{keys:?}");
    Ok(())
}

#[allow(dead_code)]
async fn context_error_shapes(js: jetstream::Context) {
    use async_nats::jetstream::context::{
        CreateKeyValueError, CreateKeyValueErrorKind, KeyValueError, KeyValueErrorKind,
        UpdateKeyValueError, UpdateKeyValueErrorKind,
    };
    let created: Result<kv::Store, CreateKeyValueError> = js
        .create_key_value(kv::Config {
            bucket: "x".into(),
            ..Default::default()
        })
        .await;
    if let Err(err) = created {
        match err.kind() {
            CreateKeyValueErrorKind::InvalidStoreName
            | CreateKeyValueErrorKind::TooLongHistory
            | CreateKeyValueErrorKind::JetStream
            | CreateKeyValueErrorKind::BucketCreate
            | CreateKeyValueErrorKind::TimedOut
            | CreateKeyValueErrorKind::LimitMarkersNotSupported => {}
        }
    }
    let got: Result<kv::Store, KeyValueError> = js.get_key_value("x").await;
    if let Err(err) = got {
        match err.kind() {
            KeyValueErrorKind::InvalidStoreName
            | KeyValueErrorKind::GetBucket
            | KeyValueErrorKind::JetStream => {}
        }
    }
    let updated: Result<kv::Store, UpdateKeyValueError> = js
        .update_key_value(kv::Config {
            bucket: "x".into(),
            ..Default::default()
        })
        .await;
    if let Err(err) = updated {
        match err.kind() {
            UpdateKeyValueErrorKind::InvalidStoreName
            | UpdateKeyValueErrorKind::TooLongHistory
            | UpdateKeyValueErrorKind::JetStream
            | UpdateKeyValueErrorKind::BucketUpdate
            | UpdateKeyValueErrorKind::TimedOut
            | UpdateKeyValueErrorKind::LimitMarkersNotSupported
            | UpdateKeyValueErrorKind::NotFound => {}
        }
    }
}

#[test]
fn operations_and_configs_behave_as_in_async_nats() {
    let operation: kv::Operation = "DEL".parse().unwrap();
    assert_eq!(operation, kv::Operation::Delete);
    assert!("nope".parse::<kv::Operation>().is_err());
    let config = kv::Config::default();
    assert_eq!((config.history, config.bucket.as_str()), (0, ""));
    assert!(!config.compression && config.limit_markers.is_none());
}

#[tokio::test]
async fn the_common_path_runs_against_a_server() {
    let server = rnats_test_server::NatsServer::builder()
        .jetstream(true)
        .spawn()
        .unwrap();
    let client = async_nats::connect(server.url()).await.unwrap();
    let js = jetstream::new(client);
    let store = js
        .create_key_value(kv::Config {
            bucket: "compat".to_string(),
            history: 3,
            ..Default::default()
        })
        .await
        .unwrap();
    let mut watch = store.watch_all().await.unwrap();
    let revision = store.put("k", "v".into()).await.unwrap();
    let entry = watch.next().await.unwrap().unwrap();
    assert_eq!((entry.key.as_str(), entry.revision), ("k", revision));
    assert_eq!(store.get("k").await.unwrap(), Some(Bytes::from("v")));
    let err = store
        .update("k", "w".into(), revision + 1)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), kv::UpdateErrorKind::WrongLastRevision);
    let keys: Vec<String> = store.keys().await.unwrap().try_collect().await.unwrap();
    assert_eq!(keys, ["k"]);
    assert_eq!(store.status().await.unwrap().values(), 1);
}
