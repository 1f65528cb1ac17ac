//! `--socks-proxy` (natscli's flag, `NATS_SOCKS_PROXY` and a context's `socks_proxy`): every
//! connection to the servers goes through a SOCKS5 proxy, such as `ssh -D` gives.

use std::io;
use std::sync::Arc;

use percent_encoding::percent_decode_str;
use rnats::{ConnectOptions, ServerAddr};
use tokio::net::TcpStream;
use tokio_socks::tcp::Socks5Stream;
use url::Url;

use crate::error::CliError;

/// The port of a proxy URL that names none: SOCKS' own.
const SOCKS_PORT: u16 = 1080;

/// A SOCKS5 proxy: `socks5://[user:password@]host[:port]` (or `socks5h://`, or a bare
/// `host:port`). The servers' host names go to the proxy to resolve, for either scheme, as
/// natscli sends them: the proxy is often the only one that can.
#[derive(Debug, Clone)]
pub(crate) struct SocksProxy(Arc<Proxy>);

#[derive(Debug)]
struct Proxy {
    /// `host:port`, IPv6 hosts in brackets.
    addr: String,
    /// User name and password, decoded.
    login: Option<(String, String)>,
}

impl SocksProxy {
    /// Parses a proxy URL.
    pub(crate) fn parse(text: &str) -> Result<SocksProxy, CliError> {
        let invalid = |reason: String| CliError::InvalidArgument {
            what: "SOCKS proxy",
            given: without_password(text),
            reason,
        };
        let url = match text.contains("://") {
            true => Url::parse(text),
            false => Url::parse(&format!("socks5://{text}")),
        }
        .map_err(|e| invalid(e.to_string()))?;
        if !matches!(url.scheme(), "socks5" | "socks5h") {
            return Err(invalid(format!(
                "a SOCKS5 proxy is socks5:// or socks5h://, not {}://",
                url.scheme()
            )));
        }
        let host = url
            .host_str()
            .filter(|host| !host.is_empty())
            .ok_or_else(|| invalid("the proxy's host is missing".to_owned()))?;
        let decode = |part: &str| percent_decode_str(part).decode_utf8_lossy().into_owned();
        let login = (!url.username().is_empty()).then(|| {
            let password = url.password().map(decode).unwrap_or_default();
            (decode(url.username()), password)
        });
        Ok(SocksProxy(Arc::new(Proxy {
            addr: format!("{host}:{}", url.port().unwrap_or(SOCKS_PORT)),
            login,
        })))
    }

    /// `options` connecting through this proxy.
    pub(crate) fn apply(&self, options: ConnectOptions) -> ConnectOptions {
        let proxy = self.clone();
        options.transport(move |server: ServerAddr| {
            let proxy = proxy.clone();
            async move { proxy.open(&server).await }
        })
    }

    /// A stream to `server` through the proxy: TLS, if any, goes over it end to end. The
    /// socket to the proxy is tokio's (its name resolved without blocking a worker) and
    /// sends small writes at once, as the client's own sockets do.
    async fn open(&self, server: &ServerAddr) -> io::Result<TcpStream> {
        let proxy = self.0.addr.as_str();
        // Said as the proxy's: the CLI shortens a refused connection to the server to
        // "connection refused", which would send the user looking at the wrong end.
        let at_proxy = |e: io::Error| io::Error::other(format!("SOCKS proxy {proxy}: {e}"));
        let socket = TcpStream::connect(proxy).await.map_err(at_proxy)?;
        socket.set_nodelay(true).map_err(at_proxy)?;
        let target = (server.host(), server.port());
        let tunnel = match &self.0.login {
            None => Socks5Stream::connect_with_socket(socket, target).await,
            Some((user, password)) => {
                Socks5Stream::connect_with_password_and_socket(socket, target, user, password).await
            }
        };
        let tunnel = tunnel.map_err(|e| match e {
            tokio_socks::Error::Io(e) => at_proxy(e),
            other => io::Error::other(format!("SOCKS proxy {proxy}: {other}")),
        })?;
        Ok(tunnel.into_inner())
    }
}

/// `text` with what lies between the scheme and an `@` shown as `***`: an error message
/// must not repeat a password.
fn without_password(text: &str) -> String {
    let after_scheme = text.find("://").map_or(0, |at| at + 3);
    match text[after_scheme..].rfind('@') {
        Some(at) => format!("{}***{}", &text[..after_scheme], &text[after_scheme + at..]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proxy_urls_parse_as_natscli_takes_them() {
        let proxy = SocksProxy::parse("socks5://example.net:1090").expect("parses");
        assert_eq!(proxy.0.addr, "example.net:1090");
        assert!(proxy.0.login.is_none());
        let proxy = SocksProxy::parse("socks5h://me:p%40ss@[::1]").expect("parses");
        assert_eq!(proxy.0.addr, "[::1]:1080");
        assert_eq!(proxy.0.login, Some(("me".to_owned(), "p@ss".to_owned())));
        assert_eq!(
            SocksProxy::parse("127.0.0.1:9").expect("parses").0.addr,
            "127.0.0.1:9"
        );
        for bad in ["http://proxy:3128", "socks5://", "socks5://:1080"] {
            let err = SocksProxy::parse(bad).expect_err(bad);
            assert!(err.to_string().contains("SOCKS proxy"), "{err}");
        }
        let err = SocksProxy::parse("http://me:secret@proxy:3128").expect_err("http");
        assert!(!err.to_string().contains("secret"), "{err}");
        assert!(err.to_string().contains("http://***@proxy:3128"), "{err}");
    }
}
