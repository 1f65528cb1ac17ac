//! Object Store interchange with a second, independent client, nats-py: objects nats-py puts
//! are read (digest checked) by rnats, whole and in part, with the time the server stored
//! their metadata, its deletion markers too; and objects, metadata and links rnats writes are
//! read by nats-py, which checks the digest itself.
#![cfg(feature = "object-store")]
#![allow(clippy::unwrap_used, missing_docs)]

use std::collections::HashMap;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE;
use rnats_jetstream::object_store::{Config, ObjectMetadata};
use rnats_jetstream::stream::StorageType;
use rnats_test_server::{NatsServer, run_nats_py};
use sha2::{Digest, Sha256};
use tokio::io::AsyncReadExt;

/// Puts `small` and `big` (argv[1] bytes from a seeded generator) with nats-py and prints the
/// hex SHA-256 of `big`.
const PY_PUT: &str = r#"
import asyncio, hashlib, os, random, sys
import nats
from nats.js.api import ObjectMeta, StorageType

async def main():
    nc = await nats.connect(os.environ["NATS_URL"])
    js = nc.jetstream()
    obs = await js.create_object_store("frompy", storage=StorageType.MEMORY)
    await obs.put("small", b"hello from python")
    big = random.Random(42).randbytes(int(sys.argv[1]))
    await obs.put("dir/big.bin", big, meta=ObjectMeta(description="made in python"))
    # nats-py's deletion marker holds `"mtime": ""` (and `"digest": ""`).
    await obs.put("gone", b"deleted by python")
    await obs.delete("gone")
    print(hashlib.sha256(big).hexdigest())
    await nc.close()

asyncio.run(main())
"#;

/// Gets each object named in argv[2:] from bucket argv[1] with nats-py (which checks the
/// digest) and prints `name size sha256 description` per object.
const PY_GET: &str = r#"
import asyncio, hashlib, os, sys
import nats

async def main():
    nc = await nats.connect(os.environ["NATS_URL"])
    js = nc.jetstream()
    obs = await js.object_store(sys.argv[1])
    for name in sys.argv[2:]:
        result = await obs.get(name)
        print(name, len(result.data), hashlib.sha256(result.data).hexdigest(),
              result.info.description)
    await nc.close()

asyncio.run(main())
"#;

fn hex_sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `len` deterministic bytes.
fn data(len: usize) -> Vec<u8> {
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect()
}

#[tokio::test]
async fn rnats_reads_what_nats_py_puts() {
    let server = NatsServer::builder().jetstream(true).spawn().unwrap();
    let url = server.url();
    let size = 5 * 1024 * 1024 + 123;
    let printed = tokio::task::spawn_blocking(move || {
        run_nats_py(&url, PY_PUT, &[&size.to_string()]).unwrap()
    })
    .await
    .unwrap();
    let expected_sha = printed.trim();

    let client = rnats_core::connect(server.url()).await.unwrap();
    let js = rnats_jetstream::new(client);
    let store = js.get_object_store("frompy").await.unwrap();

    let mut small = Vec::new();
    let mut object = store.get("small").await.unwrap();
    object.read_to_end(&mut small).await.unwrap();
    assert_eq!(small, b"hello from python");

    let mut object = store.get("dir/big.bin").await.unwrap();
    let info = object.info().clone();
    assert_eq!(info.size, size);
    assert_eq!(info.chunks, size.div_ceil(128 * 1024));
    assert_eq!(info.description.as_deref(), Some("made in python"));
    assert!(info.digest.as_deref().unwrap().starts_with("SHA-256="));
    let mut big = Vec::new();
    object.read_to_end(&mut big).await.unwrap();
    assert_eq!(hex_sha256(&big), expected_sha);
    // A range of it, across a chunk boundary near the end (an rnats addition).
    let (start, end) = (size - 200_000, size - 100);
    let mut part = Vec::new();
    let mut object = store
        .get_range("dir/big.bin", start as u64..end as u64)
        .await
        .unwrap();
    object.read_to_end(&mut part).await.unwrap();
    assert!(part == big[start..end]);

    let mut names: Vec<String> = futures_util::TryStreamExt::try_collect::<Vec<_>>(
        futures_util::TryStreamExt::map_ok(store.list().await.unwrap(), |i| i.name),
    )
    .await
    .unwrap();
    names.sort();
    assert_eq!(names, ["dir/big.bin", "small"]);

    // `modified` is when the server stored each object's metadata, whatever nats-py wrote
    // into `mtime` (its clock on a put, "" on a delete).
    let stream = js.get_stream("OBJ_frompy").await.unwrap();
    for name in ["small", "gone"] {
        let meta_subject = format!("$O.frompy.M.{}", URL_SAFE.encode(name));
        let stored = stream
            .get_last_raw_message_by_subject(&meta_subject)
            .await
            .unwrap()
            .time;
        let info = store.info(name).await.unwrap();
        assert_eq!(info.modified, Some(stored), "{name}");
    }
    assert!(store.info("gone").await.unwrap().deleted);
    let mut all =
        futures_util::TryStreamExt::try_collect::<Vec<_>>(store.list_with_deleted().await.unwrap())
            .await
            .unwrap();
    all.sort_by(|a, b| a.name.cmp(&b.name));
    assert_eq!(all[1].name, "gone");
    assert!(all.iter().all(|info| info.modified.is_some()));
    // The name nats-py deleted takes a new object.
    store.put("gone", &mut &b"back"[..]).await.unwrap();
    assert_eq!(store.get_bytes("gone").await.unwrap(), "back");
}

#[tokio::test]
async fn nats_py_reads_what_rnats_puts() {
    let server = NatsServer::builder().jetstream(true).spawn().unwrap();
    let client = rnats_core::connect(server.url()).await.unwrap();
    let js = rnats_jetstream::new(client);
    let store = js
        .create_object_store(Config {
            bucket: "fromrust".into(),
            storage: StorageType::Memory,
            ..Default::default()
        })
        .await
        .unwrap();
    let big = data(3 * 1024 * 1024 + 7);
    store
        .put(
            ObjectMetadata {
                name: "big.bin".into(),
                description: Some("made-in-rust".into()),
                metadata: HashMap::from([("origin".to_string(), "rnats".to_string())]),
                ..Default::default()
            },
            &mut big.as_slice(),
        )
        .await
        .unwrap();
    let odd = data(50_000);
    store
        .put(
            ObjectMetadata {
                name: "odd-chunks".into(),
                chunk_size: Some(7_777),
                ..Default::default()
            },
            &mut odd.as_slice(),
        )
        .await
        .unwrap();
    store.put("empty", &mut &b""[..]).await.unwrap();
    let target = store.info("odd-chunks").await.unwrap();
    store.add_link("link-to-odd", &target).await.unwrap();

    let url = server.url();
    let printed = tokio::task::spawn_blocking(move || {
        let names = ["fromrust", "big.bin", "odd-chunks", "empty", "link-to-odd"];
        run_nats_py(&url, PY_GET, &names).unwrap()
    })
    .await
    .unwrap();
    let lines: Vec<&str> = printed.lines().collect();
    assert_eq!(
        lines,
        [
            format!("big.bin {} {} made-in-rust", big.len(), hex_sha256(&big)),
            format!("odd-chunks {} {} None", odd.len(), hex_sha256(&odd)),
            format!("empty 0 {} None", hex_sha256(b"")),
            format!("link-to-odd {} {} None", odd.len(), hex_sha256(&odd)),
        ]
    );
}
