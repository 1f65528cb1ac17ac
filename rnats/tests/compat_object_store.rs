#![allow(missing_docs, clippy::unwrap_used)]
// Timestamps are pinned as async-nats' default type, `time::OffsetDateTime`; with the `chrono`
// feature they are chrono's, in async-nats as here, and this file is left out.
#![cfg(all(feature = "object-store", not(feature = "chrono")))]
use rnats as async_nats;

// Compile-level compatibility with async-nats 0.51's Object Store API: the call shapes an
// async-nats program writes, with only the crate renamed. The `async fn`s are compiled, never
// run (the behaviour is tested against a server in rnats-jetstream's tests); the `#[test]`s
// check what needs no server.

use std::collections::HashMap;
use std::time::Duration;

use async_nats::jetstream::{self, object_store};
use futures_util::{StreamExt, TryStreamExt};
use tokio::io::AsyncReadExt;

#[allow(dead_code)]
async fn bucket_shapes(client: async_nats::Client) -> Result<(), async_nats::Error> {
    let jetstream = jetstream::new(client);
    let bucket: object_store::ObjectStore = jetstream
        .create_object_store(object_store::Config {
            bucket: "files".to_string(),
            description: Some("documents".to_string()),
            max_age: Duration::from_secs(86_400),
            max_bytes: 1 << 30,
            storage: jetstream::stream::StorageType::File,
            num_replicas: 1,
            compression: true,
            placement: None,
            // rnats's `metadata` and `fast_ingest` (see the README's differences).
            ..Default::default()
        })
        .await?;
    let _same = jetstream
        .create_object_store(object_store::Config {
            bucket: "files".to_string(),
            ..Default::default()
        })
        .await?;
    let mut fetched = jetstream.get_object_store("files").await?;
    let by_string = jetstream.get_object_store(String::from("files")).await?;
    fetched.seal().await?;
    drop(by_string);
    jetstream.delete_object_store("files").await?;
    drop(bucket);
    Ok(())
}

#[allow(dead_code)]
async fn object_shapes(bucket: object_store::ObjectStore) -> Result<(), async_nats::Error> {
    // Put from a file, from bytes in memory, and with full metadata.
    let mut file = tokio::fs::File::open("report.pdf").await?;
    let info: object_store::ObjectInfo = bucket.put("report.pdf", &mut file).await?;
    let mut bytes: &[u8] = b"some data";
    bucket.put("inline", &mut bytes).await?;
    let mut cursor = std::io::Cursor::new(vec![1u8, 2, 3]);
    bucket
        .put(
            object_store::ObjectMetadata {
                name: "with-meta".to_string(),
                description: Some("three bytes".to_string()),
                chunk_size: Some(64 * 1024),
                metadata: HashMap::from([("owner".to_string(), "me".to_string())]),
                headers: None,
            },
            &mut cursor,
        )
        .await?;
    let as_meta: object_store::ObjectMetadata = info.clone().into();
    bucket.put(as_meta, &mut &b"again"[..]).await?;

    // The fields of an info.
    let name: String = info.name.clone();
    let description: Option<String> = info.description.clone();
    let size: usize = info.size;
    let chunks: usize = info.chunks;
    let nuid: String = info.nuid.clone();
    let bucket_name: String = info.bucket.clone();
    let digest: Option<String> = info.digest.clone();
    let deleted: bool = info.deleted;
    let modified: Option<time::OffsetDateTime> = info.modified;
    let metadata: HashMap<String, String> = info.metadata.clone();
    let headers: Option<async_nats::HeaderMap> = info.headers.clone();
    if let Some(options) = &info.options {
        let _max: Option<usize> = options.max_chunk_size;
        if let Some(link) = &options.link {
            let _linked: (&Option<String>, &String) = (&link.name, &link.bucket);
        }
    }
    println!("{name} {description:?} {size} {chunks} {nuid} {bucket_name} {digest:?}");
    println!("{deleted} {modified:?} {metadata:?} {headers:?}");

    // Get and read.
    let mut object: object_store::Object = bucket.get("report.pdf").await?;
    let mut contents = Vec::new();
    object.read_to_end(&mut contents).await?;
    let _meta: &object_store::ObjectInfo = object.info();
    let _field: &object_store::ObjectInfo = &object.info;
    let mut text = String::new();
    bucket
        .get(String::from("inline"))
        .await?
        .read_to_string(&mut text)
        .await?;

    let again = bucket.info("report.pdf").await?;
    let _owned_name = bucket.info(String::from("report.pdf")).await?;

    // List and watch.
    let mut list: object_store::List = bucket.list().await?;
    while let Some(item) = list.next().await {
        let item: object_store::ObjectInfo = item?;
        println!("{}", item.name);
    }
    let all: Vec<object_store::ObjectInfo> = bucket.list().await?.try_collect().await?;
    let mut watch: object_store::Watch = bucket.watch().await?;
    if let Some(change) = watch.next().await {
        println!("{:?}", change?.name);
    }
    let _history = bucket.watch_with_history().await?;

    // Metadata, links, delete.
    let updated: object_store::ObjectInfo = bucket
        .update_metadata(
            "report.pdf",
            object_store::UpdateMetadata {
                name: "report-final.pdf".to_string(),
                description: Some("final".to_string()),
                ..Default::default()
            },
        )
        .await?;
    let _link: object_store::ObjectInfo = bucket.add_link("latest", &updated).await?;
    let _from_object = bucket.add_link(String::from("latest2"), &object).await?;
    let _bucket_link = bucket.add_bucket_link("archive", "archive-bucket").await?;
    let _owned = bucket
        .add_bucket_link(String::from("archive2"), String::from("archive-bucket"))
        .await?;
    bucket.delete("report-final.pdf").await?;
    bucket.delete(String::from("inline")).await?;
    println!("{} {}", again.size, all.len());
    // `Object` has no `Drop` of its own, so its fields can be moved out.
    let _moved: Option<object_store::ObjectOptions> = object.info.options;
    Ok(())
}

#[allow(dead_code)]
fn takes_info<T: object_store::AsObjectInfo>(object: T) -> String {
    object.as_info().name.clone()
}

// Error kinds, matched as async-nats users match them.

#[allow(dead_code)]
async fn error_shapes(js: jetstream::Context, bucket: object_store::ObjectStore) {
    if let Err(err) = js
        .create_object_store(object_store::Config::default())
        .await
    {
        match err.kind() {
            jetstream::context::CreateObjectStoreErrorKind::InvalidStoreName => {}
            jetstream::context::CreateObjectStoreErrorKind::BucketCreate => {}
            jetstream::context::CreateObjectStoreErrorKind::TimedOut => {}
            jetstream::context::CreateObjectStoreErrorKind::JetStream => {}
            jetstream::context::CreateObjectStoreErrorKind::TooLongHistory => {}
            jetstream::context::CreateObjectStoreErrorKind::LimitMarkersNotSupported => {}
        }
    }
    let get: Result<_, jetstream::context::ObjectStoreError> = js.get_object_store("x").await;
    if let Err(err) = get {
        match err.kind() {
            jetstream::context::ObjectStoreErrorKind::InvalidBucketName => {}
            jetstream::context::ObjectStoreErrorKind::GetStore => {}
        }
    }
    let deleted: Result<(), jetstream::context::DeleteObjectStore> =
        js.delete_object_store("x").await;
    if let Err(err) = deleted {
        let _kind: jetstream::context::DeleteObjectStoreKind = err.kind();
    }
    if let Err(err) = bucket.put("x", &mut &b""[..]).await {
        let err: object_store::PutError = err;
        match err.kind() {
            object_store::PutErrorKind::InvalidName => {}
            object_store::PutErrorKind::ReadChunks => {}
            object_store::PutErrorKind::PublishChunks => {}
            object_store::PutErrorKind::PublishMetadata => {}
            object_store::PutErrorKind::PurgeOldChunks => {}
            object_store::PutErrorKind::TimedOut => {}
            object_store::PutErrorKind::Other => {}
        }
    }
    if let Err(err) = bucket.get("x").await {
        let err: object_store::GetError = err;
        match err.kind() {
            object_store::GetErrorKind::InvalidName => {}
            object_store::GetErrorKind::ConsumerCreate => {}
            object_store::GetErrorKind::NotFound => {}
            object_store::GetErrorKind::BucketLink => {}
            object_store::GetErrorKind::Other => {}
            object_store::GetErrorKind::TimedOut => {}
        }
    }
    if let Err(err) = bucket.info("x").await {
        let err: object_store::InfoError = err;
        match err.kind() {
            object_store::InfoErrorKind::InvalidName => {}
            object_store::InfoErrorKind::NotFound => {}
            object_store::InfoErrorKind::Other => {}
            object_store::InfoErrorKind::TimedOut => {}
        }
    }
    if let Err(err) = bucket.delete("x").await {
        let err: object_store::DeleteError = err;
        match err.kind() {
            object_store::DeleteErrorKind::TimedOut => {}
            object_store::DeleteErrorKind::NotFound => {}
            object_store::DeleteErrorKind::Metadata => {}
            object_store::DeleteErrorKind::InvalidName => {}
            object_store::DeleteErrorKind::Chunks => {}
            object_store::DeleteErrorKind::Other => {}
        }
    }
    if let Err(err) = bucket
        .update_metadata("x", object_store::UpdateMetadata::default())
        .await
    {
        let err: object_store::UpdateMetadataError = err;
        match err.kind() {
            object_store::UpdateMetadataErrorKind::InvalidName => {}
            object_store::UpdateMetadataErrorKind::NotFound => {}
            object_store::UpdateMetadataErrorKind::TimedOut => {}
            object_store::UpdateMetadataErrorKind::Other => {}
            object_store::UpdateMetadataErrorKind::PublishMetadata => {}
            object_store::UpdateMetadataErrorKind::NameAlreadyInUse => {}
            object_store::UpdateMetadataErrorKind::Purge => {}
        }
    }
    if let Err(err) = bucket.add_bucket_link("x", "y").await {
        let err: object_store::AddLinkError = err;
        match err.kind() {
            object_store::AddLinkErrorKind::EmptyName => {}
            object_store::AddLinkErrorKind::ObjectRequired => {}
            object_store::AddLinkErrorKind::Deleted => {}
            object_store::AddLinkErrorKind::LinkToLink => {}
            object_store::AddLinkErrorKind::PublishMetadata => {}
            object_store::AddLinkErrorKind::AlreadyExists => {}
            object_store::AddLinkErrorKind::Other => {}
        }
    }
    match bucket.watch().await {
        Err(err) => {
            let err: object_store::WatchError = err;
            match err.kind() {
                object_store::WatchErrorKind::TimedOut => {}
                object_store::WatchErrorKind::ConsumerCreate => {}
                object_store::WatchErrorKind::Other => {}
            }
        }
        Ok(mut watch) => {
            if let Some(Err(err)) = watch.next().await {
                let err: object_store::WatcherError = err;
                match err.kind() {
                    object_store::WatcherErrorKind::ConsumerError => {}
                    object_store::WatcherErrorKind::Other => {}
                }
            }
        }
    }
    match bucket.list().await {
        Err(err) => {
            let _err: object_store::ListError = err;
            let _kind: Option<object_store::ListErrorKind> = None;
        }
        Ok(mut list) => {
            if let Some(Err(err)) = list.next().await {
                let _err: object_store::ListerError = err;
                let _kind: Option<object_store::ListerErrorKind> = None;
            }
        }
    }
    let mut sealed = bucket.clone();
    if let Err(err) = sealed.seal().await {
        let err: object_store::SealError = err;
        match err.kind() {
            object_store::SealErrorKind::TimedOut => {}
            object_store::SealErrorKind::Other => {}
            object_store::SealErrorKind::Info => {}
            object_store::SealErrorKind::Update => {}
        }
    }
}

#[allow(dead_code)]
async fn errors_convert_to_the_boxed_error(
    bucket: object_store::ObjectStore,
) -> Result<(), async_nats::Error> {
    bucket.get("x").await?;
    bucket.info("x").await?;
    bucket.delete("x").await?;
    Ok(())
}

#[test]
fn defaults_and_conversions() {
    let config = object_store::Config::default();
    assert_eq!(config.bucket, "");
    assert_eq!(config.max_bytes, 0);
    assert!(!config.compression);
    let meta: object_store::ObjectMetadata = "name".into();
    assert_eq!(meta.name, "name");
    assert_eq!(meta.chunk_size, None);
    let link = object_store::ObjectLink {
        name: Some("a".into()),
        bucket: "b".into(),
    };
    assert_eq!(link.clone(), link);
    let update = object_store::UpdateMetadata::default();
    assert!(update.metadata.is_empty());
}

#[test]
fn object_info_reads_the_json_other_clients_write() {
    let json = r#"{"name":"n","bucket":"b","nuid":"X","size":3,"chunks":1,
        "mtime":"2024-01-02T03:04:05.5Z","digest":"SHA-256=abc","options":{"max_chunk_size":131072}}"#;
    let info: object_store::ObjectInfo = serde_json::from_str(json).unwrap();
    assert_eq!(info.size, 3);
    assert_eq!(info.options.unwrap().max_chunk_size, Some(131_072));
    assert!(info.modified.is_some());
}
