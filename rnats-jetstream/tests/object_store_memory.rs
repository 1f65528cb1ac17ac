//! A 256 MiB object goes up and comes back with the client's memory bounded by a few chunks:
//! put streams from a reader with a bounded window of unacked chunks, and a read pulls a few
//! chunks at a time. Alone in its test binary, so no other test's allocations count; the
//! peak resident set is reset (`/proc/self/clear_refs`) before each half and read back after.
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
    let mut source = Generated {
        left: OBJECT_SIZE,
        state: 0x9E37_79B9_7F4A_7C15,
    };
    let info = store.put("large.bin", &mut source).await.unwrap();
    let put_growth = status_bytes("VmHWM:").saturating_sub(before_put);
    assert_eq!(info.size as u64, OBJECT_SIZE);
    assert_eq!(info.chunks, 2048);

    let before_get = reset_peak();
    let mut object = store.get("large.bin").await.unwrap();
    let mut hash = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut total = 0u64;
    loop {
        // A read past a digest mismatch would fail here.
        let n = object.read(&mut buf).await.unwrap();
        if n == 0 {
            break;
        }
        hash.update(&buf[..n]);
        total += n as u64;
    }
    let get_growth = status_bytes("VmHWM:").saturating_sub(before_get);
    assert_eq!(total, OBJECT_SIZE);
    let mut expected = Sha256::new();
    let mut again = Generated {
        left: OBJECT_SIZE,
        state: 0x9E37_79B9_7F4A_7C15,
    };
    let mut sink = vec![0u8; 1 << 20];
    loop {
        let n = again.read(&mut sink).await.unwrap();
        if n == 0 {
            break;
        }
        expected.update(&sink[..n]);
    }
    assert_eq!(hash.finalize(), expected.finalize());

    eprintln!(
        "peak RSS growth: put {:.1} MiB, get {:.1} MiB (resident before: {:.1} MiB)",
        put_growth as f64 / 1048576.0,
        get_growth as f64 / 1048576.0,
        before_put as f64 / 1048576.0
    );
    assert!(
        put_growth < BOUND,
        "put grew the peak by {put_growth} bytes"
    );
    assert!(
        get_growth < BOUND,
        "get grew the peak by {get_growth} bytes"
    );
}
