//! A 256 MiB object goes up and comes back with the client's memory bounded by a few chunks:
//! put streams from a reader with a bounded window of unacked chunks (pipelined acks, and as
//! a fast-ingest batch, 128 MiB of it), and a read pulls a few chunks at a time. Alone in its test binary, so no other test's allocations count. The put
//! is measured here, the read in a child process (where no memory freed by the put can hide
//! its allocations); each resets the peak resident set (`/proc/self/clear_refs`) first and
//! reads `VmHWM` after.
#![cfg(all(feature = "object-store", target_os = "linux"))]
#![allow(clippy::unwrap_used, missing_docs)]

use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

use rnats_jetstream::object_store::Config;
use rnats_test_server::NatsServer;
use sha2::{Digest, Sha256};
use tokio::io::{AsyncRead, AsyncReadExt, ReadBuf};

const OBJECT_SIZE: u64 = 256 * 1024 * 1024;

/// How much the peak may grow over the resident set before a half: a few put windows (4 MiB
/// of chunks each) and read windows, the client's buffers, and allocator slack.
const BOUND: u64 = 48 * 1024 * 1024;

/// `len` bytes from a xorshift generator, made as they are read.
struct Generated {
    left: u64,
    state: u64,
}

impl AsyncRead for Generated {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _cx: &mut TaskContext<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let n = (buf.remaining() as u64).min(self.left) as usize;
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            self.state ^= self.state << 13;
            self.state ^= self.state >> 7;
            self.state ^= self.state << 17;
            let word = self.state.to_le_bytes();
            let take = (n - out.len()).min(8);
            out.extend_from_slice(&word[..take]);
        }
        buf.put_slice(&out);
        self.left -= n as u64;
        Poll::Ready(Ok(()))
    }
}

/// A field of `/proc/self/status` in bytes.
fn status_bytes(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status
        .lines()
        .find(|line| line.starts_with(field))
        .unwrap_or_else(|| panic!("no {field} in /proc/self/status"));
    let kib: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap();
    kib * 1024
}

/// Resets the peak resident set to the current one; the resident set now.
fn reset_peak() -> u64 {
    std::fs::write("/proc/self/clear_refs", "5").unwrap();
    status_bytes("VmRSS:")
}

/// How much the peak grew over the resident set read before. The kernel keeps both counts
/// in per-CPU batches and reads them approximately, so a phase that allocated nothing new
/// (the memory an earlier one freed, reused) may read a peak a little below the resident
/// set before it: that is no growth, not an underflow.
fn grown(peak: u64, before: u64) -> u64 {
    peak.saturating_sub(before)
}

/// The server URL handed to the child process that reads the object back.
const URL_VAR: &str = "RNATS_OBJ_MEMORY_URL";

#[tokio::test]
async fn a_256_mib_object_goes_up_and_down_in_bounded_memory() {
    let server = NatsServer::builder().jetstream(true).spawn().unwrap();
    let client = rnats_core::connect(server.url()).await.unwrap();
    let js = rnats_jetstream::new(client);
    let store = js
        .create_object_store(Config {
            bucket: "large".into(),
            ..Default::default()
        })
        .await
        .unwrap();

    let before_put = reset_peak();
    let info = store.put("large.bin", &mut generated()).await.unwrap();
    let put_peak = status_bytes("VmHWM:");
    assert_eq!(info.size as u64, OBJECT_SIZE);
    assert_eq!(info.chunks, 2048);

    // The same over fast ingest, whose flow acks bound what is in flight.
    let fast = js
        .create_object_store(Config {
            bucket: "large_fast".into(),
            storage: rnats_jetstream::stream::StorageType::Memory,
            fast_ingest: true,
            ..Default::default()
        })
        .await
        .unwrap();
    let before_fast_put = reset_peak();
    let mut half = Generated {
        left: OBJECT_SIZE / 2,
        ..generated()
    };
    let info = fast.put("half.bin", &mut half).await.unwrap();
    let fast_put_peak = status_bytes("VmHWM:");
    assert_eq!(info.chunks, 1024);
    assert!(
        grown(fast_put_peak, before_fast_put) < BOUND,
        "the fast-ingest put grew the peak by {} bytes",
        grown(fast_put_peak, before_fast_put)
    );

    // The read runs in a fresh process: here, the memory the put freed would be reused
    // without showing in the resident set.
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "read_back_in_a_child",
            "--ignored",
            "--nocapture",
        ])
        .env(URL_VAR, server.url())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the reading child failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let field = |name: &str| -> u64 {
        let prefix = format!("{name}=");
        stdout
            .split_whitespace()
            .find_map(|word| word.strip_prefix(prefix.as_str()))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("the child printed no {name}: {stdout}"))
    };
    let (get_before, get_peak) = (field("before"), field("peak"));

    let mib = |bytes: u64| bytes as f64 / 1048576.0;
    eprintln!(
        "put: resident {:.1} MiB before, peak {:.1} MiB (+{:.1}); fast-ingest put: +{:.1} MiB; \
         get (child): resident {:.1} MiB before, peak {:.1} MiB (+{:.1})",
        mib(before_put),
        mib(put_peak),
        mib(grown(put_peak, before_put)),
        mib(grown(fast_put_peak, before_fast_put)),
        mib(get_before),
        mib(get_peak),
        mib(grown(get_peak, get_before))
    );
    assert!(
        grown(put_peak, before_put) < BOUND,
        "put grew the peak by {} bytes",
        grown(put_peak, before_put)
    );
    assert!(
        grown(get_peak, get_before) < BOUND,
        "get grew the peak by {} bytes",
        grown(get_peak, get_before)
    );
}

/// The reading half, run only as the child of the test above.
#[tokio::test]
#[ignore = "run by a_256_mib_object_goes_up_and_down_in_bounded_memory in a child process"]
async fn read_back_in_a_child() {
    let url = std::env::var(URL_VAR).unwrap();
    let client = rnats_core::connect(url).await.unwrap();
    let js = rnats_jetstream::new(client);
    let store = js.get_object_store("large").await.unwrap();
    // The expected digest first, so its buffer is resident before the measured part.
    let mut expected = Sha256::new();
    let mut source = generated();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = source.read(&mut buf).await.unwrap();
        if n == 0 {
            break;
        }
        expected.update(&buf[..n]);
    }

    let before = reset_peak();
    let mut object = store.get("large.bin").await.unwrap();
    let mut hash = Sha256::new();
    let mut total = 0u64;
    loop {
        // A digest mismatch would fail this read.
        let n = object.read(&mut buf).await.unwrap();
        if n == 0 {
            break;
        }
        hash.update(&buf[..n]);
        total += n as u64;
    }
    let peak = status_bytes("VmHWM:");
    assert_eq!(total, OBJECT_SIZE);
    assert_eq!(hash.finalize(), expected.finalize());
    println!("before={before} peak={peak}");
}

/// The object's data, generated as it is read.
fn generated() -> Generated {
    Generated {
        left: OBJECT_SIZE,
        state: 0x9E37_79B9_7F4A_7C15,
    }
}
