//! A server that sends its TLS records a byte at a time cannot hold a connect past
//! `connection_timeout`, in either client: not in the TLS handshake, nor in the NATS
//! handshake over TLS after it. (A TLS library reads on while a record is incomplete; a
//! read timeout alone bounds only each wait for a byte.)
#![cfg(any(feature = "ring", feature = "aws-lc-rs"))]
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use common::*;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use rnats_core::{ConnectError, ConnectOptions};
use rnats_test_server::{TestCa, TlsFiles};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// How long a connect may take before the test calls it held: far past the timeout.
const WAIT: Duration = Duration::from_secs(20);
const TIMEOUT: Duration = Duration::from_millis(500);

/// What the server sends, a byte at a time, after accepting.
#[derive(Clone, Copy)]
enum Trickle {
    /// The header of a 16 KiB handshake record, then its body: the TLS handshake never
    /// completes.
    HandshakeRecord,
    /// A complete TLS handshake, then an INFO of a kilobyte in one encrypted record.
    InfoRecord,
}

/// A listener on 127.0.0.1 that trickles `what` to the first connection, one byte every
/// 50 ms, until the client leaves or the guard is dropped.
struct Trickler {
    port: u16,
    stop: Arc<AtomicBool>,
}

impl Drop for Trickler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

impl Trickler {
    fn start(what: Trickle, files: &TlsFiles) -> Trickler {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let config = server_config(files);
        let stopped = Arc::clone(&stop);
        thread::spawn(move || {
            let (mut socket, _) = listener.accept().unwrap();
            let bytes = match what {
                Trickle::HandshakeRecord => {
                    // The client's hello first, so it is waiting for ours.
                    let _ = socket.read(&mut [0; 4096]);
                    let mut record = vec![0x16, 0x03, 0x03, 0x40, 0x00];
                    record.resize(5 + 0x4000, 0);
                    record
                }
                Trickle::InfoRecord => info_record(&mut socket, config),
            };
            for byte in bytes {
                if stopped.load(Ordering::Relaxed) || socket.write_all(&[byte]).is_err() {
                    return;
                }
                thread::sleep(Duration::from_millis(50));
            }
        });
        Trickler { port, stop }
    }

    fn url(&self) -> String {
        format!("tls://127.0.0.1:{}", self.port)
    }
}

fn server_config(files: &TlsFiles) -> Arc<rustls::ServerConfig> {
    let certs = CertificateDer::pem_file_iter(&files.server_cert)
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_file(&files.server_key).unwrap();
    // The provider the client's features choose (see `rnats_core::tls`).
    #[cfg(feature = "aws-lc-rs")]
    let provider = rustls::crypto::aws_lc_rs::default_provider();
    #[cfg(not(feature = "aws-lc-rs"))]
    let provider = rustls::crypto::ring::default_provider();
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(provider))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap();
    Arc::new(config)
}

/// Completes a TLS handshake on `socket` and returns the INFO, encrypted, to trickle.
fn info_record(socket: &mut TcpStream, config: Arc<rustls::ServerConfig>) -> Vec<u8> {
    let mut tls = rustls::ServerConnection::new(config).unwrap();
    while tls.is_handshaking() {
        if tls.complete_io(socket).is_err() {
            return Vec::new();
        }
    }
    // Long enough that trickling it takes far longer than the test waits.
    let name = "x".repeat(1000);
    let info = format!(
        "INFO {{\"server_id\":\"trickle\",\"server_name\":\"{name}\",\"tls_required\":true}}\r\n"
    );
    tls.writer().write_all(info.as_bytes()).unwrap();
    let mut record = Vec::new();
    while tls.wants_write() {
        tls.write_tls(&mut record).unwrap();
    }
    record
}

fn options(files: &TlsFiles) -> ConnectOptions {
    ConnectOptions::new()
        .tls_first()
        .add_root_certificates(files.ca.clone())
        .connection_timeout(TIMEOUT)
}

/// Runs `connect` on a thread of its own and returns its error, failing the test if it is
/// still going after [`WAIT`].
fn connect_fails(
    connect: impl FnOnce() -> Result<(), ConnectError> + Send + 'static,
) -> ConnectError {
    let (done, result) = mpsc::channel();
    thread::spawn(move || {
        let _ = done.send(connect());
    });
    match result.recv_timeout(WAIT) {
        Ok(Ok(())) => panic!("connected to a server that never finished its handshake"),
        Ok(Err(error)) => error,
        Err(_) => panic!("the connect was still going after {WAIT:?}"),
    }
}

fn blocking_connect_fails(what: Trickle) -> ConnectError {
    let dir = ScratchDir::new();
    let files = TestCa::new().write_to(dir.path()).unwrap();
    let server = Trickler::start(what, &files);
    let (options, url) = (options(&files), server.url());
    connect_fails(move || options.connect_blocking(url).map(drop))
}

fn tokio_connect_fails(what: Trickle) -> ConnectError {
    let dir = ScratchDir::new();
    let files = TestCa::new().write_to(dir.path()).unwrap();
    let server = Trickler::start(what, &files);
    let (options, url) = (options(&files), server.url());
    connect_fails(move || {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        runtime.block_on(options.connect(url)).map(drop)
    })
}

#[test]
fn a_trickled_tls_handshake_times_out_in_the_blocking_client() {
    let error = blocking_connect_fails(Trickle::HandshakeRecord);
    assert!(error.to_string().contains("timed out"), "{error}");
}

#[test]
fn a_trickled_info_over_tls_times_out_in_the_blocking_client() {
    let error = blocking_connect_fails(Trickle::InfoRecord);
    assert!(error.to_string().contains("timed out"), "{error}");
}

#[test]
fn a_trickled_tls_handshake_times_out_in_the_async_client() {
    let error = tokio_connect_fails(Trickle::HandshakeRecord);
    assert!(error.to_string().contains("timed out"), "{error}");
}

#[test]
fn a_trickled_info_over_tls_times_out_in_the_async_client() {
    let error = tokio_connect_fails(Trickle::InfoRecord);
    assert!(error.to_string().contains("timed out"), "{error}");
}
