//! Connection flags beyond tokens and passwords: NKey seed files, TLS with a CA and a client
//! certificate, and `NATS_URL`.

mod common;

use common::Rnats;
use rnats_test_server::{NatsServer, TestCa, nkey_user};

#[test]
fn an_nkey_seed_file_authenticates() {
    let (seed, public) = nkey_user();
    let server = NatsServer::builder()
        .nkey_users(&[public])
        .spawn()
        .expect("server");
    let url = server.url();
    let dir = tempfile::tempdir().expect("temp dir");
    let seed_file = dir.path().join("user.nk");
    std::fs::write(&seed_file, format!("{seed}\n")).expect("write seed");
    let seed_file = seed_file.to_string_lossy().into_owned();
    let rnats = Rnats::new();
    rnats.ok(&["rtt", "--count", "1", "--nkey", &seed_file, "-s", &url]);
    let line = rnats.fails(&["rtt", "-s", &url]);
    assert!(line.contains("authorization violation"), "{line}");
    let line = rnats.fails(&["rtt", "--nkey", "/nonexistent/user.nk", "-s", &url]);
    assert!(line.contains("cannot read NKey seed file"), "{line}");
}

#[test]
fn tls_with_a_ca_and_a_client_certificate() {
    let dir = tempfile::tempdir().expect("temp dir");
    let files = TestCa::new().write_to(dir.path()).expect("certificates");
    let server = NatsServer::builder()
        .tls(&files, true, false)
        .spawn()
        .expect("server");
    let url = format!("tls://127.0.0.1:{}", server.port());
    let path = |p: &std::path::Path| p.to_string_lossy().into_owned();
    let (ca, cert, key) = (
        path(&files.ca),
        path(&files.client_cert),
        path(&files.client_key),
    );
    let rnats = Rnats::new();
    let info = rnats.json(&[
        "server",
        "info",
        "--json",
        "--tls-ca",
        &ca,
        "--tls-cert",
        &cert,
        "--tls-key",
        &key,
        "-s",
        &url,
    ]);
    assert_eq!(info["tls_required"], true);
    // Without the client certificate the server refuses us.
    let line = rnats.fails(&["rtt", "--tls-ca", &ca, "-s", &url]);
    assert!(
        line.starts_with(&format!("error: cannot connect to {url}")),
        "{line}"
    );
    let line = rnats.fails(&["rtt", "--tls-ca", &ca, "--tls-cert", &cert, "-s", &url]);
    assert!(
        line.contains("--tls-cert and --tls-key go together"),
        "{line}"
    );
}

#[test]
fn nats_url_names_the_server() {
    let server = NatsServer::start();
    let rnats = Rnats::new();
    let out = rnats
        .command(&["server", "info", "--json"])
        .env("NATS_URL", server.url())
        .output()
        .expect("rnats runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let info: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(info["port"], server.port());
}
