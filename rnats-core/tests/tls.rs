//! TLS against real nats-servers: custom roots, client certificates, TLS-first handshakes,
//! refusals, and reconnecting over TLS.
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use common::*;

use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use rnats_core::{ConnectCause, ConnectOptions, ConnectionEvent};
use rnats_test_server::{NatsServer, Proxy, TestCa, TlsFiles};

/// Certificates from a fresh CA, in a directory that lives as long as the returned guard
/// (keep it alive as long as the server: a restart reads the files again).
fn certificates() -> (ScratchDir, TlsFiles) {
    let dir = ScratchDir::new();
    let files = TestCa::new().write_to(dir.path()).unwrap();
    (dir, files)
}

/// `tls://localhost:<port>` for `server`.
fn tls_url(server: &NatsServer) -> String {
    format!("tls://localhost:{}", server.port())
}

/// Options that trust the test CA of `files`.
fn trusting(files: &TlsFiles) -> ConnectOptions {
    ConnectOptions::new().add_root_certificates(files.ca.clone())
}

#[tokio::test]
async fn tls_url_with_the_test_ca_round_trips() {
    let (_dir, files) = certificates();
    let server = NatsServer::builder()
        .tls(&files, false, false)
        .spawn()
        .unwrap();
    let client = trusting(&files).connect(tls_url(&server)).await.unwrap();
    assert!(client.server_info().tls_required);
    round_trip(&client).await;
}

#[tokio::test]
async fn tls_url_to_the_loopback_ip_checks_the_ip_san() {
    let (_dir, files) = certificates();
    let server = NatsServer::builder()
        .tls(&files, false, false)
        .spawn()
        .unwrap();
    let client = trusting(&files)
        .connect(format!("tls://127.0.0.1:{}", server.port()))
        .await
        .unwrap();
    assert!(client.server_info().tls_required);
    round_trip(&client).await;
}

#[tokio::test]
async fn nats_url_upgrades_when_the_server_requires_tls() {
    let (_dir, files) = certificates();
    let server = NatsServer::builder()
        .tls(&files, false, false)
        .spawn()
        .unwrap();
    // No `tls://` and no require_tls: the server's INFO asks for TLS and the client obliges.
    let client = trusting(&files).connect(server.url()).await.unwrap();
    assert!(client.server_info().tls_required);
    round_trip(&client).await;

    let client = trusting(&files)
        .require_tls(true)
        .connect(server.url())
        .await
        .unwrap();
    round_trip(&client).await;
}

#[tokio::test]
async fn mutual_tls_connects_with_a_client_certificate_and_fails_without() {
    let (_dir, files) = certificates();
    let server = NatsServer::builder()
        .tls(&files, true, false)
        .spawn()
        .unwrap();
    let client = trusting(&files)
        .add_client_certificate(files.client_cert.clone(), files.client_key.clone())
        .connect(tls_url(&server))
        .await
        .unwrap();
    assert!(client.server_info().tls_required);
    round_trip(&client).await;

    // TLS 1.3 lets the server reject the missing certificate after the client thinks the
    // handshake is done, so the failure may surface as TLS, I/O or a closed connection.
    let err = connect_err(trusting(&files), tls_url(&server)).await;
    println!("mTLS without a client certificate: {err:?} / {err}");
}

#[tokio::test]
async fn handshake_first_server_connects_with_tls_first() {
    let (_dir, files) = certificates();
    let server = NatsServer::builder()
        .tls(&files, false, true)
        .spawn()
        .unwrap();
    let client = trusting(&files)
        .tls_first()
        .connect(tls_url(&server))
        .await
        .unwrap();
    assert!(client.server_info().tls_required);
    round_trip(&client).await;
}

#[tokio::test]
async fn handshake_first_with_mutual_tls_connects() {
    let (_dir, files) = certificates();
    let server = NatsServer::builder()
        .tls(&files, true, true)
        .spawn()
        .unwrap();
    let client = trusting(&files)
        .tls_first()
        .add_client_certificate(files.client_cert.clone(), files.client_key.clone())
        .connect(tls_url(&server))
        .await
        .unwrap();
    round_trip(&client).await;
}

#[tokio::test]
async fn certificate_from_another_ca_is_a_tls_error() {
    let (_dir, files) = certificates();
    let (_other_dir, other) = certificates();
    let server = NatsServer::builder()
        .tls(&files, false, false)
        .spawn()
        .unwrap();
    let err = connect_err(trusting(&other), tls_url(&server)).await;
    assert!(matches!(err.cause(), Some(ConnectCause::Tls(_))), "{err:?}");
    assert!(
        err.to_string().to_lowercase().contains("certificate"),
        "the error does not mention the certificate: {err}"
    );

    // Without any custom root the platform roots do not know the test CA either.
    let err = connect_err(ConnectOptions::new(), tls_url(&server)).await;
    assert!(matches!(err.cause(), Some(ConnectCause::Tls(_))), "{err:?}");
    assert!(
        err.to_string().to_lowercase().contains("certificate"),
        "the error does not mention the certificate: {err}"
    );
}

#[tokio::test]
async fn untrusted_certificate_is_a_tls_error_with_tls_first_too() {
    let (_dir, files) = certificates();
    let (_other_dir, other) = certificates();
    let server = NatsServer::builder()
        .tls(&files, false, true)
        .spawn()
        .unwrap();
    let err = connect_err(trusting(&other).tls_first(), tls_url(&server)).await;
    assert!(matches!(err.cause(), Some(ConnectCause::Tls(_))), "{err:?}");
}

#[tokio::test]
async fn require_tls_against_a_plain_server_is_a_tls_error() {
    let server = NatsServer::start();
    let err = connect_err(ConnectOptions::new().require_tls(true), server.url()).await;
    assert!(matches!(err.cause(), Some(ConnectCause::Tls(_))), "{err:?}");
    println!("require_tls against plain: {err}");

    // A `tls://` URL implies require_tls.
    let err = connect_err(
        ConnectOptions::new(),
        format!("tls://127.0.0.1:{}", server.port()),
    )
    .await;
    assert!(matches!(err.cause(), Some(ConnectCause::Tls(_))), "{err:?}");
}

#[tokio::test]
async fn missing_root_certificate_file_fails_the_connect() {
    let (_dir, files) = certificates();
    let server = NatsServer::builder()
        .tls(&files, false, false)
        .spawn()
        .unwrap();
    let missing = files.ca.with_file_name("no-such-ca.pem");
    let err = connect_err(
        ConnectOptions::new().add_root_certificates(missing),
        tls_url(&server),
    )
    .await;
    // Which variant is not specified; it must fail rather than silently skip the file.
    println!("missing CA file: {err:?} / {err}");
}

#[tokio::test]
async fn reconnects_over_tls_after_a_restart() {
    let (_dir, files) = certificates();
    let mut server = NatsServer::builder()
        .tls(&files, false, false)
        .spawn()
        .unwrap();
    let client = trusting(&files)
        .reconnect_delay_callback(|_| Duration::from_millis(20))
        .connect(tls_url(&server))
        .await
        .unwrap();
    let mut events = client.events();
    let mut sub = client.subscribe("kept").await.unwrap();
    round_trip(&client).await;

    server.restart().unwrap();
    wait_for(&mut events, |e| *e == ConnectionEvent::Reconnected).await;
    client.flush().await.unwrap();
    assert!(client.server_info().tls_required);
    round_trip(&client).await;

    // The subscription made before the restart was replayed on the new TLS connection.
    client.publish("kept", "after".into()).await.unwrap();
    let msg = tokio::time::timeout(WAIT, sub.next())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(msg.payload, Bytes::from("after"));
}

#[tokio::test]
async fn reconnects_over_mutual_tls_first_after_a_restart() {
    let (_dir, files) = certificates();
    let mut server = NatsServer::builder()
        .tls(&files, true, true)
        .spawn()
        .unwrap();
    let client = trusting(&files)
        .tls_first()
        .add_client_certificate(files.client_cert.clone(), files.client_key.clone())
        .reconnect_delay_callback(|_| Duration::from_millis(20))
        .connect(tls_url(&server))
        .await
        .unwrap();
    let mut events = client.events();
    server.restart().unwrap();
    wait_for(&mut events, |e| *e == ConnectionEvent::Reconnected).await;
    round_trip(&client).await;
}

#[tokio::test]
async fn a_user_supplied_rustls_config_is_used_as_is() {
    use rnats_core::rustls;
    let (_dir, files) = certificates();
    let server = NatsServer::builder()
        .tls(&files, false, false)
        .spawn()
        .unwrap();
    let pem = std::fs::read(&files.ca).unwrap();
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls_pem_certs(&pem) {
        roots.add(cert).unwrap();
    }
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    // Only this config trusts the test CA: no add_root_certificates here.
    let client = ConnectOptions::new()
        .tls_client_config(config)
        .connect(tls_url(&server))
        .await
        .unwrap();
    round_trip(&client).await;
}

/// Certificates out of PEM text, through the pki-types re-exported by rustls.
fn rustls_pem_certs(pem: &[u8]) -> Vec<rnats_core::rustls::pki_types::CertificateDer<'static>> {
    use rnats_core::rustls::pki_types::pem::PemObject;
    rnats_core::rustls::pki_types::CertificateDer::pem_slice_iter(pem)
        .map(|c| c.unwrap())
        .collect()
}

/// Set for the child process of [`the_operating_system_store_is_the_default_trust`]: the
/// `tls://` URL of a server whose certificate comes from the CA in `SSL_CERT_FILE`.
const CHILD_URL_ENV: &str = "RNATS_TEST_NATIVE_ROOTS_URL";
/// Set for the same child: a CA file that did not sign that server's certificate.
const CHILD_OTHER_CA_ENV: &str = "RNATS_TEST_NATIVE_ROOTS_OTHER_CA";

#[tokio::test]
async fn the_operating_system_store_is_the_default_trust() {
    let (_dir, files) = certificates();
    let (_other_dir, other) = certificates();
    let server = NatsServer::builder()
        .tls(&files, false, false)
        .spawn()
        .unwrap();
    // rustls-native-certs reads the operating system's store from SSL_CERT_FILE when it is
    // set. The environment of this process is shared by every test in it, so the checks run
    // in a child: this test binary again, running only the ignored test below.
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "native_roots_child", "--ignored", "--nocapture"])
        .env("SSL_CERT_FILE", &files.ca)
        .env_remove("SSL_CERT_DIR")
        .env(CHILD_URL_ENV, format!("tls://127.0.0.1:{}", server.port()))
        .env(CHILD_OTHER_CA_ENV, &other.ca)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{text}");
    assert!(text.contains("1 passed"), "the child ran no test: {text}");
}

/// Run by [`the_operating_system_store_is_the_default_trust`] with the test CA as the whole
/// operating system store.
#[tokio::test]
#[ignore = "run by the_operating_system_store_is_the_default_trust, in a child process"]
async fn native_roots_child() {
    // Run on its own (`--include-ignored`), it has nothing to check.
    let (Ok(url), Ok(other_ca)) = (
        std::env::var(CHILD_URL_ENV),
        std::env::var(CHILD_OTHER_CA_ENV),
    ) else {
        return;
    };

    // No root given: the store (here, the test CA) is trusted.
    let client = ConnectOptions::new().connect(url.clone()).await.unwrap();
    round_trip(&client).await;

    // The web PKI roots come on top of the store, not instead of it.
    let client = ConnectOptions::new()
        .add_web_pki_roots()
        .connect(url.clone())
        .await
        .unwrap();
    round_trip(&client).await;

    // Roots given by the user replace the store: the test CA is no longer trusted.
    let err = connect_err(
        ConnectOptions::new().add_root_certificates(other_ca.into()),
        url,
    )
    .await;
    assert!(matches!(err.cause(), Some(ConnectCause::Tls(_))), "{err:?}");
}

#[tokio::test]
async fn web_pki_roots_add_to_the_given_roots() {
    let (_dir, files) = certificates();
    let server = NatsServer::builder()
        .tls(&files, false, false)
        .spawn()
        .unwrap();
    let client = trusting(&files)
        .add_web_pki_roots()
        .connect(tls_url(&server))
        .await
        .unwrap();
    round_trip(&client).await;

    // The web PKI does not vouch for a private CA.
    let err = connect_err(ConnectOptions::new().add_web_pki_roots(), tls_url(&server)).await;
    assert!(matches!(err.cause(), Some(ConnectCause::Tls(_))), "{err:?}");
}

/// Certificates from a fresh CA whose server certificate names `localhost` only, not the
/// loopback address, as a cluster's certificate names its host names, not its nodes' IPs.
fn certificates_for_localhost_only() -> (ScratchDir, TlsFiles) {
    let dir = ScratchDir::new();
    let ca = TestCa::new();
    let files = ca.write_to(dir.path()).unwrap();
    let server = ca.issue_server(&["localhost"]);
    std::fs::write(&files.server_cert, server.cert_pem).unwrap();
    std::fs::write(&files.server_key, server.key_pem).unwrap();
    (dir, files)
}

/// A cluster of two nodes serving TLS to clients (and, with `allow_non_tls`, the plain
/// connections that tell the test server when the cluster is formed): each announces the
/// other by IP address, `127.0.0.1:<port>`, which its certificate does not name.
fn tls_cluster(files: &TlsFiles) -> rnats_test_server::Cluster {
    rnats_test_server::Cluster::start_with(2, |node| {
        node.tls(files, false, false)
            .append_config("allow_non_tls: true\n")
    })
    .unwrap()
}

#[tokio::test]
async fn failover_to_a_server_announced_by_ip_checks_the_name_first_dialled() {
    let (_dir, files) = certificates_for_localhost_only();
    let mut cluster = tls_cluster(&files);
    let first = cluster.nodes()[0].port();
    let client = trusting(&files)
        .reconnect_delay_callback(|_| Duration::from_millis(20))
        .connect(format!("tls://localhost:{first}"))
        .await
        .unwrap();
    let mut events = client.events();
    round_trip(&client).await;
    // The only way on is the other node, `tls://127.0.0.1:<port>` as announced: its
    // certificate is checked against `localhost`, the name of the server the client was
    // on when it learnt of it, as nats.go does.
    cluster.node_mut(0).kill();
    wait_for(&mut events, |e| *e == ConnectionEvent::Reconnected).await;
    assert_eq!(client.server_info().port, cluster.nodes()[1].port());
    round_trip(&client).await;
}

#[test]
fn blocking_failover_to_a_server_announced_by_ip_checks_the_name_first_dialled() {
    let (_dir, files) = certificates_for_localhost_only();
    let mut cluster = tls_cluster(&files);
    let first = cluster.nodes()[0].port();
    let client = trusting(&files)
        .reconnect_delay_callback(|_| Duration::from_millis(20))
        .connect_blocking(format!("tls://localhost:{first}"))
        .unwrap();
    let mut events = client.events();
    client.flush().unwrap();
    cluster.node_mut(0).kill();
    wait_for_blocking(&mut events, |e| *e == ConnectionEvent::Reconnected);
    assert_eq!(client.server_info().port, cluster.nodes()[1].port());
    client.flush().unwrap();
}

/// A server that checks client certificates, its certificates issued by a CA of their own.
fn mutual_tls_server(files: &TlsFiles) -> NatsServer {
    NatsServer::builder()
        .tls(files, true, false)
        .spawn()
        .unwrap()
}

/// Options trusting `files`' CA and presenting its client certificate.
fn with_client_certificate(files: &TlsFiles) -> ConnectOptions {
    trusting(files)
        .add_client_certificate(files.client_cert.clone(), files.client_key.clone())
        .reconnect_delay_callback(|_| Duration::from_millis(20))
}

/// Every certificate renewed on disk, by a new CA: the one the server is issued and trusts,
/// the one the client is to trust, and the client's own pair. The server reads its files
/// at the restart that follows; a client that kept what it read at its first connect would
/// trust the wrong CA and present a certificate the server no longer accepts.
fn renew_every_certificate(dir: &ScratchDir, files: &TlsFiles) {
    let renewed = TestCa::new().write_to(dir.path()).unwrap();
    assert_eq!(renewed.ca, files.ca);
    assert_eq!(renewed.client_cert, files.client_cert);
}

#[tokio::test]
async fn reconnects_with_certificates_renewed_on_disk() {
    let (dir, files) = certificates();
    let mut server = mutual_tls_server(&files);
    let client = with_client_certificate(&files)
        .connect(tls_url(&server))
        .await
        .unwrap();
    let mut events = client.events();
    round_trip(&client).await;

    renew_every_certificate(&dir, &files);
    server.restart().unwrap();
    wait_for(&mut events, |e| *e == ConnectionEvent::Reconnected).await;
    round_trip(&client).await;
}

#[test]
fn blocking_reconnects_with_certificates_renewed_on_disk() {
    let (dir, files) = certificates();
    let mut server = mutual_tls_server(&files);
    let client = with_client_certificate(&files)
        .connect_blocking(tls_url(&server))
        .unwrap();
    let mut events = client.events();
    client.flush().unwrap();

    renew_every_certificate(&dir, &files);
    server.restart().unwrap();
    wait_for_blocking(&mut events, |e| *e == ConnectionEvent::Reconnected);
    client.flush().unwrap();
}

/// Over TLS the engine writes through rustls, not the socket: a server that stops reading
/// still ends the link at the write timeout.
#[tokio::test]
async fn a_write_timeout_ends_a_tls_link_whose_server_stopped_reading() {
    let (_dir, files) = certificates();
    let server = NatsServer::builder()
        .tls(&files, false, false)
        .spawn()
        .unwrap();
    let proxy = Proxy::start(&format!("127.0.0.1:{}", server.port())).unwrap();
    let timeout = Duration::from_millis(500);
    let client = trusting(&files)
        .write_timeout(timeout)
        .ignore_discovered_servers()
        .connect(format!("tls://localhost:{}", proxy.port()))
        .await
        .unwrap();
    client.flush().await.unwrap();
    a_stall_ends_the_link(&client, &proxy, timeout).await;
    round_trip(&client).await;
}
