//! TLS with rustls: building the client configuration and upgrading a TCP connection, either
//! after the server's INFO (the NATS default) or before any byte (`tls_first`, for servers with
//! `handshake_first`).

use std::fmt;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use rustls::ClientConfig;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

use crate::error::ConnectError;

/// TLS settings from the options.
#[derive(Clone, Default)]
pub(crate) struct TlsOptions {
    /// Refuse servers that do not offer TLS.
    pub(crate) required: bool,
    /// Handshake before the server's INFO.
    pub(crate) first: bool,
    /// PEM files of CAs trusted on top of the built-in web PKI roots.
    pub(crate) root_files: Vec<PathBuf>,
    /// PEM certificate chain and key for mutual TLS.
    pub(crate) client_cert: Option<(PathBuf, PathBuf)>,
    /// A complete configuration that replaces everything above but `required` and `first`.
    pub(crate) config: Option<Arc<ClientConfig>>,
}

impl fmt::Debug for TlsOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsOptions")
            .field("required", &self.required)
            .field("first", &self.first)
            .field("root_files", &self.root_files)
            .field(
                "client_cert",
                &self.client_cert.as_ref().map(|(cert, _)| cert),
            )
            .field("custom_config", &self.config.is_some())
            .finish()
    }
}

impl TlsOptions {
    /// The rustls configuration these options describe.
    pub(crate) fn client_config(&self) -> Result<Arc<ClientConfig>, ConnectError> {
        if let Some(config) = &self.config {
            return Ok(Arc::clone(config));
        }
        let mut roots = rustls::RootCertStore::empty();
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        for file in &self.root_files {
            let certs = CertificateDer::pem_file_iter(file)
                .map_err(|e| tls_error(format!("cannot read CA file {}: {e}", file.display())))?;
            for cert in certs {
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
        let builder = ClientConfig::builder().with_root_certificates(roots);
        let config = match &self.client_cert {
            None => builder.with_no_client_auth(),
            Some((cert_file, key_file)) => {
                let chain = CertificateDer::pem_file_iter(cert_file)
                    .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
                    .map_err(|e| {
                        tls_error(format!(
                            "cannot read certificate {}: {e}",
                            cert_file.display()
                        ))
                    })?;
                let key = PrivateKeyDer::from_pem_file(key_file).map_err(|e| {
                    tls_error(format!(
                        "cannot read private key {}: {e}",
                        key_file.display()
                    ))
                })?;
                builder
                    .with_client_auth_cert(chain, key)
                    .map_err(|e| tls_error(format!("client certificate rejected: {e}")))?
            }
        };
        Ok(Arc::new(config))
    }
}

/// Runs the TLS handshake over `tcp`, checking the certificate against `host`.
pub(crate) async fn upgrade(
    tcp: TcpStream,
    host: &str,
    config: Arc<ClientConfig>,
) -> Result<TlsStream<TcpStream>, ConnectError> {
    let name = ServerName::try_from(host.to_owned())
        .map_err(|e| tls_error(format!("{host:?} is not a valid TLS server name: {e}")))?;
    tokio_rustls::TlsConnector::from(config)
        .connect(name, tcp)
        .await
        .map_err(|e| tls_error(format!("TLS handshake with {host} failed: {e}")))
}

fn tls_error(reason: String) -> ConnectError {
    ConnectError::Tls(reason)
}

/// The byte stream under a connection: plain TCP or TLS over TCP.
pub(crate) enum Transport {
    /// Plain TCP.
    Tcp(TcpStream),
    /// TLS over TCP.
    Tls(Box<TlsStream<TcpStream>>),
}

impl fmt::Debug for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Transport::Tcp(_) => "Transport::Tcp",
            Transport::Tls(_) => "Transport::Tls",
        })
    }
}

impl AsyncRead for Transport {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Transport::Tcp(s) => Pin::new(s).poll_read(cx, buf),
            Transport::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Transport {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Transport::Tcp(s) => Pin::new(s).poll_write(cx, buf),
            Transport::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Transport::Tcp(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            Transport::Tls(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Transport::Tcp(s) => s.is_write_vectored(),
            Transport::Tls(s) => s.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Transport::Tcp(s) => Pin::new(s).poll_flush(cx),
            Transport::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Transport::Tcp(s) => Pin::new(s).poll_shutdown(cx),
            Transport::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}
