//! TLS fixtures: generated certificates that a real nats-server accepts.

mod common;

use common::{Raw, SILENCE, is_timeout};
use rnats_test_server::{NatsServer, TestCa};

#[test]
fn a_tls_server_asks_for_tls_in_its_plain_info() {
    let dir = tempfile::tempdir().unwrap();
    let files = TestCa::new().write_to(dir.path()).unwrap();
    let server = NatsServer::builder()
        .tls(&files, false, false)
        .spawn()
        .unwrap();

    let info = Raw::connect(server.port()).info();
    assert_eq!(info["tls_required"], true, "{info}");
    assert_ne!(info["tls_verify"], true, "{info}");
}

#[test]
fn a_server_verifying_clients_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let files = TestCa::new().write_to(dir.path()).unwrap();
    let server = NatsServer::builder()
        .max_payload(4096)
        .tls(&files, true, false)
        .spawn()
        .unwrap();

    let info = server.info().unwrap();
    assert_eq!(info["tls_required"], true, "{info}");
    assert_eq!(info["tls_verify"], true, "{info}");
    assert_eq!(info["max_payload"], 4096, "{info}");
}

#[test]
fn a_handshake_first_server_sends_nothing_in_plain_text() {
    let dir = tempfile::tempdir().unwrap();
    let files = TestCa::new().write_to(dir.path()).unwrap();
    let server = NatsServer::builder()
        .tls(&files, false, true)
        .spawn()
        .unwrap();

    let silent = Raw::connect(server.port())
        .line_within(SILENCE)
        .unwrap_err();
    assert!(is_timeout(&silent), "{silent}");
}

#[test]
fn issued_certificates_are_pem() {
    let ca = TestCa::new();
    assert!(ca.ca_cert_pem().starts_with("-----BEGIN CERTIFICATE-----"));
    let server = ca.issue_server(&["localhost", "127.0.0.1"]);
    assert!(server.cert_pem.starts_with("-----BEGIN CERTIFICATE-----"));
    assert!(server.key_pem.starts_with("-----BEGIN PRIVATE KEY-----"));
    let client = ca.issue_client("alice");
    assert!(client.cert_pem.starts_with("-----BEGIN CERTIFICATE-----"));
    assert_ne!(client.key_pem, server.key_pem);
}

/// A rustls client trusting the test CA and presenting the client certificate of `files`.
fn tls_client(files: &rnats_test_server::TlsFiles) -> rustls::ClientConnection {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};

    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_file(&files.ca).expect("CA PEM"))
        .expect("a valid CA certificate");
    let chain =
        vec![CertificateDer::from_pem_file(&files.client_cert).expect("client certificate PEM")];
    let key = PrivateKeyDer::from_pem_file(&files.client_key).expect("client key PEM");
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_root_certificates(roots)
        .with_client_auth_cert(chain, key)
        .expect("a usable client certificate");
    // Dialled by IP, so the server certificate must carry 127.0.0.1 as an IP SAN.
    let name = ServerName::try_from("127.0.0.1").expect("an IP server name");
    rustls::ClientConnection::new(std::sync::Arc::new(config), name).expect("a TLS client")
}

/// Reads one CRLF-terminated line a byte at a time, so nothing past it is consumed.
fn read_line(stream: &mut impl std::io::Read) -> String {
    let mut line = Vec::new();
    let mut byte = [0u8];
    while !line.ends_with(b"\r\n") {
        stream.read_exact(&mut byte).expect("a byte of a line");
        line.push(byte[0]);
    }
    String::from_utf8(line)
        .expect("a UTF-8 line")
        .trim_end()
        .to_owned()
}

/// Sends CONNECT and PING and returns the first line that is not an INFO.
fn ping(stream: &mut (impl std::io::Read + std::io::Write)) -> String {
    stream
        .write_all(b"CONNECT {\"verbose\":false,\"protocol\":1}\r\nPING\r\n")
        .expect("send CONNECT and PING");
    loop {
        let line = read_line(stream);
        if !line.starts_with("INFO ") {
            return line;
        }
    }
}

#[test]
fn the_generated_certificates_complete_a_mutual_tls_handshake() {
    let dir = tempfile::tempdir().unwrap();
    let files = TestCa::new().write_to(dir.path()).unwrap();
    let server = NatsServer::builder()
        .tls(&files, true, false)
        .spawn()
        .unwrap();

    let mut tcp = std::net::TcpStream::connect(("127.0.0.1", server.port())).unwrap();
    tcp.set_read_timeout(Some(common::PATIENCE)).unwrap();
    assert!(read_line(&mut tcp).starts_with("INFO "));
    let mut tls = rustls::StreamOwned::new(tls_client(&files), tcp);
    assert_eq!(ping(&mut tls), "PONG");
}

#[test]
fn a_handshake_first_server_talks_once_tls_is_up() {
    let dir = tempfile::tempdir().unwrap();
    let files = TestCa::new().write_to(dir.path()).unwrap();
    let server = NatsServer::builder()
        .tls(&files, true, true)
        .spawn()
        .unwrap();

    let tcp = std::net::TcpStream::connect(("127.0.0.1", server.port())).unwrap();
    tcp.set_read_timeout(Some(common::PATIENCE)).unwrap();
    let mut tls = rustls::StreamOwned::new(tls_client(&files), tcp);
    assert!(read_line(&mut tls).starts_with("INFO "));
    assert_eq!(ping(&mut tls), "PONG");
}
