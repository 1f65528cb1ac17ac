//! KV codecs (ADR-54) against a real server: what a `CodecStore` puts is stored encoded and
//! read back decoded through every read path (get, entry, history, keys, watches), filters
//! keep their wildcards where the codec allows, a stored key the codec cannot decode is one
//! error item rather than the end of a stream, and nats.js' `Base64KeyCodec` reads what
//! rnats wrote with `Base64Codec::padded` and the other way round.
#![cfg(feature = "kv")]
#![allow(clippy::unwrap_used, missing_docs)]

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::{StreamExt, TryStreamExt};
use rnats_jetstream::kv::codec::{
    Base64Codec, CodecError, CodecErrorKind, CodecStore, Error, KeyChain, KeyCodec, NoOpCodec,
    PathCodec,
};
use rnats_jetstream::kv::{self, Operation, Store, WatchOptions};
use rnats_jetstream::stream::StorageType;
use rnats_test_server::{NatsServer, run_nats_js};

const WAIT: Duration = Duration::from_secs(20);

async fn bucket(name: &str) -> (NatsServer, Store) {
    let server = NatsServer::builder().jetstream(true).spawn().unwrap();
    let client = rnats_core::connect(server.url()).await.unwrap();
    let js = rnats_jetstream::new(client);
    let store = js
        .create_key_value(kv::Config {
            bucket: name.to_owned(),
            history: 5,
            storage: StorageType::Memory,
            ..Default::default()
        })
        .await
        .unwrap();
    (server, store)
}

/// The next `n` items of a stream, each within [`WAIT`].
async fn take<S: futures_util::Stream + Unpin>(stream: &mut S, n: usize) -> Vec<S::Item> {
    let mut items = Vec::new();
    for _ in 0..n {
        let item = tokio::time::timeout(WAIT, stream.next())
            .await
            .expect("an item within the wait")
            .expect("the stream goes on");
        items.push(item);
    }
    items
}

#[tokio::test]
async fn what_a_codec_store_puts_is_stored_encoded_and_read_back_decoded() {
    let (_server, store) = bucket("codec_rw").await;
    let codec = CodecStore::new(store.clone(), Base64Codec::new(), Base64Codec::new());

    let first = codec
        .put("Acme Inc.contact", "info@acme.com".into())
        .await
        .unwrap();
    // The bucket underneath holds both encoded (base64url, unpadded, key token by token).
    let raw = store
        .entry("QWNtZSBJbmM.Y29udGFjdA")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(raw.value, "aW5mb0BhY21lLmNvbQ");
    assert_eq!(raw.revision, first);
    assert!(
        store.get("Acme Inc.contact").await.is_err(),
        "not a valid key unencoded"
    );

    let entry = codec.entry("Acme Inc.contact").await.unwrap().unwrap();
    assert_eq!(
        (entry.key.as_str(), &entry.value[..], entry.revision),
        ("Acme Inc.contact", &b"info@acme.com"[..], first)
    );
    let second = codec
        .update("Acme Inc.contact", "sales@acme.com".into(), first)
        .await
        .unwrap();
    assert!(matches!(
        codec.update("Acme Inc.contact", "x".into(), first).await,
        Err(Error::Store(_))
    ));
    assert!(matches!(
        codec.create("Acme Inc.contact", "x".into()).await,
        Err(Error::Store(_))
    ));
    codec.create("Acme Inc.phone", "555".into()).await.unwrap();
    assert_eq!(
        codec
            .entry_for_revision("Acme Inc.contact", first)
            .await
            .unwrap()
            .unwrap()
            .value,
        "info@acme.com"
    );

    codec.delete("Acme Inc.phone").await.unwrap();
    assert_eq!(codec.get("Acme Inc.phone").await.unwrap(), None);
    let history: Vec<_> = codec
        .history("Acme Inc.contact")
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    let seen: Vec<_> = history
        .iter()
        .map(|e| (e.key.as_str(), e.value.clone(), e.revision))
        .collect();
    assert_eq!(
        seen,
        [
            ("Acme Inc.contact", Bytes::from("info@acme.com"), first),
            ("Acme Inc.contact", Bytes::from("sales@acme.com"), second),
        ]
    );
    let phone: Vec<_> = codec
        .history("Acme Inc.phone")
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(phone.last().unwrap().operation, Operation::Delete);
    assert_eq!(phone.last().unwrap().key, "Acme Inc.phone");

    let keys: Vec<String> = codec.keys().await.unwrap().try_collect().await.unwrap();
    assert_eq!(keys, ["Acme Inc.contact"]);
    codec.purge("Acme Inc.contact").await.unwrap();
    assert_eq!(codec.get("Acme Inc.contact").await.unwrap(), None);
}

#[tokio::test]
async fn filters_keep_their_wildcards_through_base64_and_paths() {
    let (_server, store) = bucket("codec_watch").await;
    let codec = CodecStore::for_keys(store.clone(), Base64Codec::new());
    codec
        .put("users.sue smith.color", "blue".into())
        .await
        .unwrap();
    codec.put("users.bob.color", "red".into()).await.unwrap();
    codec.put("orders.1", "pending".into()).await.unwrap();

    // Initial values of the matching keys, then a change to one of them.
    let mut watch = codec
        .watch_with_options(["users.*.color"], WatchOptions::new())
        .await
        .unwrap();
    let mut seen: Vec<_> = take(&mut watch, 2)
        .await
        .into_iter()
        .map(|e| e.unwrap().key)
        .collect();
    seen.sort();
    assert_eq!(seen, ["users.bob.color", "users.sue smith.color"]);
    codec.put("orders.2", "new".into()).await.unwrap();
    codec.put("users.bob.color", "green".into()).await.unwrap();
    let next = take(&mut watch, 1).await.remove(0).unwrap();
    assert_eq!(
        (next.key.as_str(), &next.value[..]),
        ("users.bob.color", &b"green"[..])
    );

    let mut users: Vec<String> = codec
        .keys_with_filters(["users.>"])
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    users.sort();
    assert_eq!(users, ["users.bob.color", "users.sue smith.color"]);

    // Paths, then base64: `users/*/avatar` filters as `users.*.avatar` would.
    let chain = KeyChain::new(vec![Arc::new(PathCodec), Arc::new(Base64Codec::new())]).unwrap();
    let files = CodecStore::for_keys(store, chain);
    files.put("/users/sue/avatar", "png".into()).await.unwrap();
    files.put("/users/bob/avatar", "gif".into()).await.unwrap();
    files.put("/users/bob/notes", "txt".into()).await.unwrap();
    let mut avatars: Vec<String> = files
        .keys_with_filters(["/users/*/avatar"])
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    avatars.sort();
    assert_eq!(avatars, ["/users/bob/avatar", "/users/sue/avatar"]);
}

/// A key codec that cannot keep wildcards: reverses each key.
struct Reverse;

impl KeyCodec for Reverse {
    fn encode_key(&self, key: &str) -> Result<String, CodecError> {
        Ok(key.chars().rev().collect())
    }

    fn decode_key(&self, key: &str) -> Result<String, CodecError> {
        Ok(key.chars().rev().collect())
    }
}

#[tokio::test]
async fn a_codec_without_wildcards_refuses_them_and_still_watches_everything() {
    let (_server, store) = bucket("codec_reverse").await;
    let codec = CodecStore::new(store.clone(), Reverse, NoOpCodec);
    codec.put("ab.cd", "1".into()).await.unwrap();
    assert_eq!(store.get("dc.ba").await.unwrap().unwrap(), "1");

    match codec.watch("ab.*").await {
        Err(Error::Codec(error)) => {
            assert_eq!(error.kind(), CodecErrorKind::WildcardNotSupported)
        }
        other => panic!("a wildcard filter through a codec that cannot keep it: {other:?}"),
    }
    // A filter without wildcards is encoded like a key.
    let mut one = codec
        .watch_with_options(["ab.cd"], WatchOptions::new())
        .await
        .unwrap();
    assert_eq!(take(&mut one, 1).await.remove(0).unwrap().key, "ab.cd");
    // Every key, with the initial values or from now on, needs no wildcard support.
    let mut all = codec
        .watch_with_options([">"], WatchOptions::new())
        .await
        .unwrap();
    assert_eq!(take(&mut all, 1).await.remove(0).unwrap().key, "ab.cd");
    let mut changes = codec.watch_all().await.unwrap();
    codec.put("ef", "2".into()).await.unwrap();
    assert_eq!(take(&mut changes, 1).await.remove(0).unwrap().key, "ef");
}

#[tokio::test]
async fn a_key_the_codec_cannot_decode_is_one_error_item_not_the_end() {
    let (_server, store) = bucket("codec_bad").await;
    let codec = CodecStore::for_keys(store.clone(), Base64Codec::new());
    codec.put("good", "1".into()).await.unwrap();
    // Written around the codec: `=` is never in unpadded base64.
    store.put("bad=", "2".into()).await.unwrap();
    codec.put("also good", "3".into()).await.unwrap();

    let items: Vec<_> = codec.keys().await.unwrap().collect().await;
    assert_eq!(items.len(), 3, "{items:?}");
    assert!(matches!(&items[0], Ok(key) if key == "good"));
    assert!(matches!(
        &items[1],
        Err(Error::Codec(error)) if error.kind() == CodecErrorKind::KeyDecode
    ));
    assert!(matches!(&items[2], Ok(key) if key == "also good"));
}

/// nats.js with its `Base64KeyCodec`: `write <bucket>` puts `orders.7`, `read <bucket> <key>`
/// prints the key's value; both print the keys the bucket lists through the codec.
const NATS_JS: &str = r#"
const { connect } = require("@nats-io/transport-node");
const { Kvm, Base64KeyCodec, NoopKvCodecs } = require("@nats-io/kv");
(async () => {
  const [mode, bucket, key] = process.argv.slice(1);
  const nc = await connect({ servers: process.env.NATS_URL });
  const kv = await new Kvm(nc).open(bucket, {
    codec: { key: Base64KeyCodec(), value: NoopKvCodecs().value },
  });
  const out = {};
  if (mode === "write") {
    await kv.put("orders.7", "shipped");
  } else {
    out.value = (await kv.get(key)).string();
  }
  out.keys = [];
  for await (const k of await kv.keys()) out.keys.push(k);
  out.keys.sort();
  console.log(JSON.stringify(out));
  await nc.close();
})().catch((e) => { console.error(e); process.exit(1); });
"#;

async fn nats_js(server: &NatsServer, args: &[&str]) -> serde_json::Value {
    let url = server.url();
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let out = tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        run_nats_js(&url, NATS_JS, &args)
    })
    .await
    .unwrap()
    .unwrap();
    serde_json::from_str(out.trim()).unwrap()
}

#[tokio::test]
async fn nats_js_base64_key_codec_and_rnats_read_each_others_keys() {
    let (server, store) = bucket("codec_js").await;
    let codec = CodecStore::for_keys(store.clone(), Base64Codec::padded());
    codec.put("users.john", "profile".into()).await.unwrap();
    // Stored as nats.js stores it: btoa per token.
    assert_eq!(
        store.get("dXNlcnM=.am9obg==").await.unwrap().unwrap(),
        "profile"
    );

    let read = nats_js(&server, &["read", "codec_js", "users.john"]).await;
    assert_eq!(read["value"], "profile");
    assert_eq!(read["keys"], serde_json::json!(["users.john"]));

    let written = nats_js(&server, &["write", "codec_js"]).await;
    assert_eq!(
        written["keys"],
        serde_json::json!(["orders.7", "users.john"])
    );
    assert_eq!(codec.get("orders.7").await.unwrap().unwrap(), "shipped");
    let mut keys: Vec<String> = codec.keys().await.unwrap().try_collect().await.unwrap();
    keys.sort();
    assert_eq!(keys, ["orders.7", "users.john"]);
}
