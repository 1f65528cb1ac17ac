//! A throwaway certificate authority for TLS tests, and the files a TLS server needs.

use std::fs;
use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DistinguishedName, DnType,
    ExtendedKeyUsagePurpose, IsCa, KeyPair, KeyUsagePurpose,
};

use crate::builder::quote_path;
use crate::error::TestServerError;

/// The names a loopback server certificate covers: the ones a test client may dial.
pub const LOOPBACK_NAMES: [&str; 2] = ["localhost", "127.0.0.1"];

/// Common name of the client certificate written by [`TestCa::write_to`].
pub const CLIENT_CN: &str = "rnats-test-client";

/// A self-signed certificate authority, made fresh for each test, that issues server and
/// client certificates (ECDSA P-256 keys, far-future expiry).
#[derive(Debug)]
pub struct TestCa {
    issuer: CertifiedIssuer<'static, KeyPair>,
}

/// A certificate and its private key, both PEM (the key as PKCS#8).
#[derive(Debug, Clone)]
pub struct CertPair {
    /// The certificate, `-----BEGIN CERTIFICATE-----`.
    pub cert_pem: String,
    /// The private key, `-----BEGIN PRIVATE KEY-----`.
    pub key_pem: String,
}

/// Paths of the PEM files written by [`TestCa::write_to`].
#[derive(Debug, Clone)]
pub struct TlsFiles {
    /// The CA certificate, for clients to trust the server and the server to check clients.
    pub ca: PathBuf,
    /// The server certificate, valid for [`LOOPBACK_NAMES`].
    pub server_cert: PathBuf,
    /// The server private key.
    pub server_key: PathBuf,
    /// A client certificate with common name [`CLIENT_CN`].
    pub client_cert: PathBuf,
    /// The client private key.
    pub client_key: PathBuf,
}

impl TestCa {
    /// A new CA with its own key.
    ///
    /// # Panics
    ///
    /// Panics if key generation or signing fails, which only a broken crypto backend does.
    pub fn new() -> TestCa {
        let mut params = CertificateParams::default();
        params.distinguished_name = name("rnats test CA");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let issuer = CertifiedIssuer::self_signed(params, new_key())
            .unwrap_or_else(|e| panic!("cannot self-sign the test CA: {e}"));
        TestCa { issuer }
    }

    /// The CA certificate, PEM.
    pub fn ca_cert_pem(&self) -> String {
        self.issuer.pem()
    }

    /// A server certificate whose subject alternative names are exactly `names`: entries
    /// that parse as IP addresses become IP SANs, the others DNS names. Pass
    /// [`LOOPBACK_NAMES`] for a certificate any loopback client accepts, or something else
    /// to provoke a name mismatch.
    ///
    /// # Panics
    ///
    /// Panics if a name is not a valid DNS name or IP address, or if signing fails.
    pub fn issue_server(&self, names: &[&str]) -> CertPair {
        let sans: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
        let mut params = CertificateParams::new(sans)
            .unwrap_or_else(|e| panic!("bad server certificate names {names:?}: {e}"));
        params.distinguished_name = name(names.first().copied().unwrap_or("rnats test server"));
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        self.issue(params)
    }

    /// A client certificate with common name `cn`, for servers that verify clients.
    ///
    /// # Panics
    ///
    /// Panics if signing fails.
    pub fn issue_client(&self, cn: &str) -> CertPair {
        let mut params = CertificateParams::default();
        params.distinguished_name = name(cn);
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        self.issue(params)
    }

    /// Writes the CA certificate, a fresh server pair for [`LOOPBACK_NAMES`] and a fresh
    /// client pair for [`CLIENT_CN`] into `dir` (e.g. a [`tempfile::TempDir`] the test
    /// holds), and returns their paths.
    pub fn write_to(&self, dir: &Path) -> Result<TlsFiles, TestServerError> {
        let files = TlsFiles {
            ca: dir.join("ca.pem"),
            server_cert: dir.join("server-cert.pem"),
            server_key: dir.join("server-key.pem"),
            client_cert: dir.join("client-cert.pem"),
            client_key: dir.join("client-key.pem"),
        };
        let server = self.issue_server(&LOOPBACK_NAMES);
        let client = self.issue_client(CLIENT_CN);
        fs::write(&files.ca, self.ca_cert_pem())?;
        fs::write(&files.server_cert, server.cert_pem)?;
        fs::write(&files.server_key, server.key_pem)?;
        fs::write(&files.client_cert, client.cert_pem)?;
        fs::write(&files.client_key, client.key_pem)?;
        Ok(files)
    }

    /// Signs `params` over a new key.
    fn issue(&self, mut params: CertificateParams) -> CertPair {
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        params.use_authority_key_identifier_extension = true;
        let key = new_key();
        let cert = params
            .signed_by(&key, &self.issuer)
            .unwrap_or_else(|e| panic!("cannot sign a test certificate: {e}"));
        CertPair {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        }
    }
}

impl Default for TestCa {
    fn default() -> Self {
        Self::new()
    }
}

/// The `tls { ... }` block of a server configuration for `files`.
pub(crate) fn server_tls_block(
    files: &TlsFiles,
    verify_clients: bool,
    handshake_first: bool,
) -> String {
    format!(
        "tls {{\n  cert_file: {}\n  key_file: {}\n  ca_file: {}\n  verify: {verify_clients}\n  handshake_first: {handshake_first}\n}}\n",
        quote_path(&files.server_cert),
        quote_path(&files.server_key),
        quote_path(&files.ca),
    )
}

/// A subject with just a common name.
fn name(cn: &str) -> DistinguishedName {
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, cn);
    dn
}

/// A fresh ECDSA P-256 key.
fn new_key() -> KeyPair {
    KeyPair::generate().unwrap_or_else(|e| panic!("cannot generate a test key: {e}"))
}
