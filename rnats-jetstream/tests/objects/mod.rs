//! What the Object Store tests share: a server with JetStream, a bucket in memory, a bucket
//! as an older client made it, and test data. Each test file takes what it needs.
#![allow(dead_code)]

use rnats_jetstream::Context;
use rnats_jetstream::object_store::{Config, ObjectStore};
use rnats_jetstream::stream::{DiscardPolicy, StorageType};
use rnats_test_server::NatsServer;

/// A server with JetStream and a context on a client of it.
pub(crate) async fn jetstream() -> (NatsServer, Context) {
    let server = NatsServer::builder().jetstream(true).spawn().unwrap();
    let client = rnats_core::connect(server.url()).await.unwrap();
    (server, rnats_jetstream::new(client))
}

/// A new bucket `name` in memory.
pub(crate) async fn bucket(js: &Context, name: &str) -> ObjectStore {
    js.create_object_store(Config {
        bucket: name.to_owned(),
        storage: StorageType::Memory,
        ..Default::default()
    })
    .await
    .unwrap()
}

/// Bucket `old`, as an older client may have made it: its stream without `allow_direct`, so
/// every read goes to the stream leader.
pub(crate) async fn bucket_without_direct_gets(js: &Context) -> ObjectStore {
    js.create_stream(rnats_jetstream::stream::Config {
        name: "OBJ_old".into(),
        subjects: vec!["$O.old.C.>".into(), "$O.old.M.>".into()],
        storage: StorageType::Memory,
        allow_rollup: true,
        discard: DiscardPolicy::New,
        ..Default::default()
    })
    .await
    .unwrap();
    js.get_object_store("old").await.unwrap()
}

/// `len` bytes that differ with `seed`, from a xorshift generator.
pub(crate) fn data(len: usize, seed: u64) -> Vec<u8> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect()
}
