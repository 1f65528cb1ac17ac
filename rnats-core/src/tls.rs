//! TLS with rustls: building the client configuration and upgrading a TCP connection, either
//! after the server's INFO (the NATS default), before any byte (`tls_first`, for servers with
//! `handshake_first`), or before the WebSocket upgrade (`wss://`).
//!
//! Trust follows async-nats: the operating system's certificate store by default; CA files
//! given with `add_root_certificates` replace it; the web PKI roots (Mozilla's, compiled in)
//! are added only when asked for.
//!
//! The crypto behind it is rustls' provider: a process default the program installed
//! (`CryptoProvider::install_default`) if there is one, else the one the features name:
//! aws-lc-rs (`aws-lc-rs`, `fips`; it wins when `ring` is on too, as async-nats' own digest
//! code prefers it) or ring (`ring`). With none of these the configuration cannot be built and
//! a TLS connect fails with a [`ConnectCause::Tls`] that says so, where rustls would panic.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use rustls::crypto::CryptoProvider;
use rustls::{ClientConfig, RootCertStore};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_rustls::client::TlsStream;

use crate::error::{ConnectCause, ConnectError};

/// TLS settings from the options.
#[derive(Clone, Default)]
pub(crate) struct TlsOptions {
    /// Refuse servers that do not offer TLS.
    pub(crate) required: bool,
    /// Handshake before the server's INFO.
    pub(crate) first: bool,
    /// PEM files of the CAs to trust; when there are any, they replace the operating
    /// system's store.
    pub(crate) root_files: Vec<PathBuf>,
    /// Also trust the web PKI roots (webpki-roots), on top of the store or files above.
    pub(crate) web_pki_roots: bool,
    /// PEM certificate chain and key for mutual TLS.
    pub(crate) client_cert: Option<(PathBuf, PathBuf)>,
    /// A complete configuration that replaces everything above but `required` and `first`.
    pub(crate) config: Option<Arc<ClientConfig>>,
    /// The configuration last built from the files above, with the bytes it was built
    /// from. Every connect reads the files again, so a certificate renewed on disk (a
    /// short-lived client certificate, a rotated CA) is used from the next reconnect on, as
    /// async-nats and nats.go do; the configuration is rebuilt only when a file's bytes
    /// changed, so TLS sessions resume across reconnects in between. Shared by clones of the
    /// options. A failed build is not kept, so a fixed file is picked up by the next attempt.
    built: Arc<Mutex<Option<Built>>>,
}

/// A configuration and what it was built from: the PEM bytes, and the one flag a clone of
/// the options may set differently afterwards (they share this cache).
struct Built {
    pem: PemFiles,
    web_pki_roots: bool,
    config: Arc<ClientConfig>,
}

/// The contents of the PEM files the options name, in order: the CA files, then the
/// client's certificate chain and key.
#[derive(PartialEq, Eq)]
struct PemFiles {
    roots: Vec<Vec<u8>>,
    client: Option<(Vec<u8>, Vec<u8>)>,
}

impl fmt::Debug for TlsOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsOptions")
            .field("required", &self.required)
            .field("first", &self.first)
            .field("root_files", &self.root_files)
            .field("web_pki_roots", &self.web_pki_roots)
            .field(
                "client_cert",
                &self.client_cert.as_ref().map(|(cert, _)| cert),
            )
            .field("custom_config", &self.config.is_some())
            .finish()
    }
}

impl TlsOptions {
    /// The rustls configuration these options describe, reading the PEM files they name
    /// (a blocking read: see [`TlsOptions::client_config_off_runtime`]).
    pub(crate) fn client_config(&self) -> Result<Arc<ClientConfig>, ConnectError> {
        if let Some(config) = &self.config {
            return Ok(Arc::clone(config));
        }
        let pem = self.read_files()?;
        let mut built = self.built.lock().unwrap_or_else(PoisonError::into_inner);
        let same = |last: &&Built| last.pem == pem && last.web_pki_roots == self.web_pki_roots;
        if let Some(last) = built.as_ref().filter(same) {
            return Ok(Arc::clone(&last.config));
        }
        let config = self.build_config(&pem)?;
        *built = Some(Built {
            pem,
            web_pki_roots: self.web_pki_roots,
            config: Arc::clone(&config),
        });
        Ok(config)
    }

    /// [`TlsOptions::client_config`] for a connect on `rt`: when there are files to read, they
    /// are read on the runtime's blocking pool, not on the thread that drives connections.
    pub(crate) async fn client_config_off_runtime(
        &self,
        rt: crate::rt::Rt,
    ) -> Result<Arc<ClientConfig>, ConnectError> {
        if self.config.is_some() || (self.root_files.is_empty() && self.client_cert.is_none()) {
            return self.client_config();
        }
        let options = self.clone();
        rt.unblock(move || options.client_config())
            .await
            .map_err(|e| tls_error(format!("cannot read the TLS files: {e}")))?
    }

    /// Reads the CA files and the client's certificate and key.
    fn read_files(&self) -> Result<PemFiles, ConnectError> {
        let read = |file: &Path, what: &str| {
            std::fs::read(file)
                .map_err(|e| tls_error(format!("cannot read {what} {}: {e}", file.display())))
        };
        let roots = self
            .root_files
            .iter()
            .map(|file| read(file, "CA file"))
            .collect::<Result<_, _>>()?;
        let client = match &self.client_cert {
            None => None,
            Some((cert, key)) => Some((read(cert, "certificate")?, read(key, "private key")?)),
        };
        Ok(PemFiles { roots, client })
    }

    /// Builds the configuration from the files' contents and the flags.
    fn build_config(&self, pem: &PemFiles) -> Result<Arc<ClientConfig>, ConnectError> {
        let builder = ClientConfig::builder_with_provider(crypto_provider()?)
            .with_safe_default_protocol_versions()
            .map_err(|e| tls_error(format!("the crypto provider cannot do TLS: {e}")))?
            .with_root_certificates(self.root_store(&pem.roots)?);
        let config = match (&self.client_cert, &pem.client) {
            (Some((cert_file, key_file)), Some((cert, key))) => {
                let chain = CertificateDer::pem_slice_iter(cert)
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| {
                        tls_error(format!(
                            "cannot read certificate {}: {e}",
                            cert_file.display()
                        ))
                    })?;
                let key = PrivateKeyDer::from_pem_slice(key).map_err(|e| {
                    tls_error(format!(
                        "cannot read private key {}: {e}",
                        key_file.display()
                    ))
                })?;
                builder
                    .with_client_auth_cert(chain, key)
                    .map_err(|e| tls_error(format!("client certificate rejected: {e}")))?
            }
            _ => builder.with_no_client_auth(),
        };
        Ok(Arc::new(config))
    }

    /// The CAs to trust: the user's files, or else the operating system's store; plus the
    /// web PKI roots if asked for. An empty store is an error here rather than an
    /// "unknown issuer" at every handshake.
    fn root_store(&self, files: &[Vec<u8>]) -> Result<RootCertStore, ConnectError> {
        let mut roots = RootCertStore::empty();
        let mut native_errors = None;
        if self.root_files.is_empty() {
            let native = native_roots();
            // Stores hold certificates rustls cannot use (old formats, odd extensions);
            // skipping them is what every rustls client does.
            roots.add_parsable_certificates(native.certs.iter().cloned());
            native_errors = native.errors.as_deref();
        }
        if self.web_pki_roots {
            roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        }
        for (file, pem) in self.root_files.iter().zip(files) {
            for cert in CertificateDer::pem_slice_iter(pem) {
                let cert = cert.map_err(|e| {
                    tls_error(format!(
                        "bad certificate in CA file {}: {e}",
                        file.display()
                    ))
                })?;
                roots.add(cert).map_err(|e| {
                    tls_error(format!(
                        "unusable CA certificate in {}: {e}",
                        file.display()
                    ))
                })?;
            }
        }
        if roots.is_empty() {
            let why = native_errors.map_or_else(String::new, |e| format!(" ({e})"));
            return Err(tls_error(format!(
                "no root certificate to trust: the operating system's certificate store is \
                 empty or unreadable{why}; use add_root_certificates or add_web_pki_roots"
            )));
        }
        if let Some(errors) = native_errors {
            tracing::debug!(%errors, "some of the operating system's certificates did not load");
        }
        Ok(roots)
    }
}

/// The process default provider, or else the one the features choose (see the module docs).
fn crypto_provider() -> Result<Arc<CryptoProvider>, ConnectError> {
    if let Some(installed) = CryptoProvider::get_default() {
        return Ok(Arc::clone(installed));
    }
    #[cfg(feature = "aws-lc-rs")]
    {
        Ok(Arc::new(rustls::crypto::aws_lc_rs::default_provider()))
    }
    #[cfg(all(feature = "ring", not(feature = "aws-lc-rs")))]
    {
        Ok(Arc::new(rustls::crypto::ring::default_provider()))
    }
    #[cfg(not(any(feature = "ring", feature = "aws-lc-rs")))]
    {
        Err(tls_error(
            "no TLS crypto provider: turn on rnats' `ring` or `aws-lc-rs` feature, or install \
             one with rustls::crypto::CryptoProvider::install_default"
                .to_owned(),
        ))
    }
}

/// The operating system's CA certificates, as rustls-native-certs finds them (it honours
/// `SSL_CERT_FILE` and `SSL_CERT_DIR`).
struct NativeRoots {
    certs: Vec<CertificateDer<'static>>,
    /// What failed to load, joined; `None` when everything loaded.
    errors: Option<String>,
}

/// Loads the store once per process: parsing it takes milliseconds, too long to repeat at
/// every connect and reconnect.
fn native_roots() -> &'static NativeRoots {
    static NATIVE: OnceLock<NativeRoots> = OnceLock::new();
    NATIVE.get_or_init(|| {
        let loaded = rustls_native_certs::load_native_certs();
        let errors = (!loaded.errors.is_empty()).then(|| {
            loaded
                .errors
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ")
        });
        NativeRoots {
            certs: loaded.certs,
            errors,
        }
    })
}

/// Runs the TLS handshake over `tcp` (any byte stream), checking the certificate against
/// `host`.
pub(crate) async fn upgrade<S>(
    tcp: S,
    host: &str,
    config: Arc<ClientConfig>,
) -> Result<TlsStream<S>, ConnectError>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let name = ServerName::try_from(host.to_owned())
        .map_err(|e| tls_error(format!("{host:?} is not a valid TLS server name: {e}")))?;
    tokio_rustls::TlsConnector::from(config)
        .connect(name, tcp)
        .await
        .map_err(|e| tls_error(format!("TLS handshake with {host} failed: {e}")))
}

fn tls_error(reason: String) -> ConnectError {
    ConnectCause::Tls(reason).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn given_roots_replace_the_system_store_and_web_pki_roots_add_to_them() {
        let ca = std::env::temp_dir().join(format!("rnats-tls-unit-{}.pem", std::process::id()));
        std::fs::write(&ca, rnats_test_server::TestCa::new().ca_cert_pem()).unwrap();
        let given = TlsOptions {
            root_files: vec![ca.clone()],
            ..TlsOptions::default()
        };
        let pem = given.read_files().unwrap();
        let given_only = given.root_store(&pem.roots);
        let with_web_pki = TlsOptions {
            web_pki_roots: true,
            ..given
        }
        .root_store(&pem.roots);
        std::fs::remove_file(&ca).unwrap();

        // Only the given CA: the operating system's store is not loaded.
        assert_eq!(given_only.unwrap().len(), 1);
        assert_eq!(
            with_web_pki.unwrap().len(),
            1 + webpki_roots::TLS_SERVER_ROOTS.len()
        );
    }

    #[test]
    #[cfg(any(feature = "ring", feature = "aws-lc-rs"))]
    fn files_are_read_at_every_connect_and_rebuilt_only_when_they_change() {
        let ca = std::env::temp_dir().join(format!("rnats-tls-again-{}.pem", std::process::id()));
        std::fs::write(&ca, rnats_test_server::TestCa::new().ca_cert_pem()).unwrap();
        let options = TlsOptions {
            root_files: vec![ca.clone()],
            ..TlsOptions::default()
        };
        let first = options.client_config().unwrap();
        // A reconnect (with a clone of the options, as the engine holds) finds the same
        // bytes and keeps the configuration, and with it the TLS sessions to resume.
        let same = options.clone().client_config().unwrap();
        assert!(Arc::ptr_eq(&first, &same));

        // A clone that adds the web PKI roots gets a configuration with them.
        let with_web_pki = TlsOptions {
            web_pki_roots: true,
            ..options.clone()
        }
        .client_config()
        .unwrap();
        assert!(!Arc::ptr_eq(&first, &with_web_pki));

        // A CA renewed on disk is what the next connect trusts.
        std::fs::write(&ca, rnats_test_server::TestCa::new().ca_cert_pem()).unwrap();
        let renewed = options.clone().client_config().unwrap();
        assert!(!Arc::ptr_eq(&first, &renewed));

        // A file gone fails that connect, and the last good configuration is not used.
        std::fs::remove_file(&ca).unwrap();
        let gone = options.client_config().unwrap_err();
        assert_eq!(gone.kind(), crate::ConnectErrorKind::Tls);
        assert!(gone.to_string().contains("cannot read CA file"), "{gone}");
    }

    /// Without `ring` or `aws-lc-rs` (and no provider installed), TLS is a typed error that
    /// names the fix, where rustls' own builder would panic.
    #[test]
    #[cfg(not(any(feature = "ring", feature = "aws-lc-rs")))]
    fn without_a_crypto_provider_tls_is_an_error_naming_the_features() {
        let error = TlsOptions::default().client_config().unwrap_err();
        assert_eq!(error.kind(), crate::ConnectErrorKind::Tls);
        assert!(
            error.to_string().contains("`ring` or `aws-lc-rs`"),
            "{error}"
        );
    }
}
