//! Proxies between the client and its servers: a SOCKS5 proxy (`socks5://`, `socks5h://`) or
//! an HTTP proxy that tunnels with `CONNECT` (`http://`), set with
//! [`ConnectOptions::proxy`](crate::ConnectOptions::proxy). Every connection the client opens
//! itself (the first, each reconnect, the servers a cluster advertises) then goes through
//! the proxy; TLS and the WebSocket upgrade go on top of the tunnel as they would on a direct
//! TCP connection, with the server's name, not the proxy's, for the certificate check.
//!
//! This module holds the proxy's address and the errors; the handshake that opens a tunnel
//! is the sans-IO `floor::tunnel`, driven by the async client (tokio or runtime-neutral) in
//! `dial.rs` and by the blocking client in `blocking/conn.rs`.

use std::fmt;
use std::io;
use std::str::FromStr;

use percent_encoding::percent_decode_str;
use url::{Host, Url};

/// The port of a SOCKS5 proxy URL that names none: SOCKS' own (RFC 1928).
const SOCKS_PORT: u16 = 1080;

/// The port of an HTTP proxy URL that names none: HTTP's.
const HTTP_PORT: u16 = 80;

/// A proxy the client connects through, parsed from its URL:
///
/// - `socks5://[user:password@]host[:port]`: SOCKS5 (RFC 1928). The client resolves the
///   server's name itself and asks the proxy for the address.
/// - `socks5h://[user:password@]host[:port]`: SOCKS5, with the server's name sent to the
///   proxy to resolve (the `h` is curl's): for names only the proxy's network knows.
/// - `http://[user:password@]host[:port]`: an HTTP proxy, asked for a tunnel with `CONNECT
///   host:port` (RFC 9110, 9.3.6), with `Proxy-Authorization: Basic` when the URL has a
///   user. The proxy resolves the name.
///
/// The port defaults to 1080 for SOCKS5 and 80 for HTTP. User name and password are
/// percent-decoded (`%40` for `@`). The password never appears in `Display` or `Debug`.
#[derive(Clone, PartialEq, Eq)]
pub struct Proxy {
    protocol: Protocol,
    host: Host<String>,
    port: u16,
    login: Option<Login>,
}

/// The proxy protocols rnats speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Protocol {
    /// SOCKS5, with the server's address resolved by the client.
    Socks5,
    /// SOCKS5, with the server's name resolved by the proxy.
    Socks5h,
    /// HTTP `CONNECT`.
    Http,
}

/// The credentials from a proxy URL, decoded.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Login {
    pub(crate) user: String,
    pub(crate) password: String,
}

/// Why a connection through a proxy failed. Reported as the cause of a
/// [`ConnectError`](crate::ConnectError) ([`ConnectCause::Proxy`](crate::ConnectCause::Proxy)).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProxyError {
    /// The proxy URL could not be understood (the password, if any, is left out of `url`).
    #[error("invalid proxy URL {url:?}: {reason}")]
    InvalidUrl {
        /// The URL as given, without its password.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// No TCP connection to the proxy could be made.
    #[error("could not reach the proxy {proxy}: {source}")]
    Unreachable {
        /// The proxy's `host:port`.
        proxy: String,
        /// The socket error.
        #[source]
        source: io::Error,
    },
    /// The connection to the proxy failed during its handshake.
    #[error("the connection to the proxy {proxy} failed: {source}")]
    Io {
        /// The proxy's `host:port`.
        proxy: String,
        /// The socket error.
        #[source]
        source: io::Error,
    },
    /// The proxy closed the connection before the tunnel was open.
    #[error("the proxy closed the connection before the tunnel was open")]
    Closed,
    /// The proxy wants credentials and the proxy URL has none (a SOCKS5 proxy that takes
    /// no unauthenticated clients, an HTTP `407 Proxy Authentication Required`).
    #[error("the proxy requires credentials, and the proxy URL has none")]
    AuthRequired,
    /// The proxy refused the user name and password of the proxy URL (a SOCKS5 status
    /// other than success, RFC 1929; an HTTP `407` to a request that carried them).
    #[error("the proxy refused the credentials")]
    AuthRefused,
    /// The SOCKS5 proxy accepts none of the authentication methods rnats offers (none,
    /// user name and password).
    #[error("the SOCKS5 proxy accepts none of the authentication methods offered")]
    NoAcceptableAuth,
    /// The SOCKS5 proxy would not open the connection to the server: its reply code and
    /// RFC 1928's name for it.
    #[error("the SOCKS5 proxy refused to connect to the server: {reason} (reply {code})")]
    SocksRefused {
        /// The reply code (1 to 8 are RFC 1928's, others the proxy's own).
        code: u8,
        /// What RFC 1928 calls that code.
        reason: &'static str,
    },
    /// The HTTP proxy answered `CONNECT` with a status other than success (and other than
    /// `407`, which is [`AuthRequired`](Self::AuthRequired) or
    /// [`AuthRefused`](Self::AuthRefused)).
    #[error("the HTTP proxy refused the tunnel: {status} {reason}")]
    HttpStatus {
        /// The status code, `403` say.
        status: u16,
        /// The reason phrase the proxy sent.
        reason: String,
    },
    /// The proxy's answer is not what its protocol allows (a wrong version, a method not
    /// offered, a malformed HTTP answer).
    #[error("the proxy's answer is malformed: {0}")]
    Malformed(&'static str),
    /// The HTTP proxy's answer has a header block longer than rnats reads.
    #[error("the HTTP proxy's answer is over {limit} bytes long")]
    AnswerTooLong {
        /// The most bytes read.
        limit: usize,
    },
    /// A SOCKS5 request carries a host name of at most 255 bytes.
    #[error("the server's host name is too long for SOCKS5 ({len} bytes, at most 255)")]
    HostTooLong {
        /// The name's length in bytes.
        len: usize,
    },
    /// Proxies are for connections the client makes; a
    /// [`transport`](crate::ConnectOptions::transport) function makes its own.
    #[error("a proxy cannot be combined with a transport function")]
    WithTransport,
}

/// A proxy URL that did not parse, kept in the options until connect reports it (as a bad
/// server URL is reported: by `connect`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct InvalidProxyUrl {
    url: String,
    reason: String,
}

impl From<InvalidProxyUrl> for ProxyError {
    fn from(invalid: InvalidProxyUrl) -> ProxyError {
        ProxyError::InvalidUrl {
            url: invalid.url,
            reason: invalid.reason,
        }
    }
}

impl FromStr for Proxy {
    type Err = ProxyError;

    fn from_str(text: &str) -> Result<Proxy, ProxyError> {
        Ok(Proxy::parse(text)?)
    }
}

impl Proxy {
    /// Parses a proxy URL (see [`Proxy`]).
    pub(crate) fn parse(text: &str) -> Result<Proxy, InvalidProxyUrl> {
        let text = text.trim();
        let invalid = |reason: String| InvalidProxyUrl {
            url: without_password(text),
            reason,
        };
        let url = Url::parse(text).map_err(|e| invalid(e.to_string()))?;
        let (protocol, default_port) = match url.scheme() {
            "socks5" => (Protocol::Socks5, SOCKS_PORT),
            "socks5h" => (Protocol::Socks5h, SOCKS_PORT),
            "http" => (Protocol::Http, HTTP_PORT),
            other => {
                return Err(invalid(format!(
                    "unsupported scheme {other:?}: expected socks5, socks5h or http"
                )));
            }
        };
        let host = match url.host() {
            Some(Host::Domain("")) | None => {
                return Err(invalid("the proxy's host is missing".to_owned()));
            }
            Some(host) => host.to_owned(),
        };
        if !matches!(url.path(), "" | "/") || url.query().is_some() || url.fragment().is_some() {
            return Err(invalid(
                "a proxy URL is scheme://[user:password@]host[:port], with no path".to_owned(),
            ));
        }
        let decode = |part: &str| {
            percent_decode_str(part)
                .decode_utf8()
                .map(|s| s.into_owned())
                .map_err(|_| invalid("the credentials are not UTF-8".to_owned()))
        };
        let login = if url.username().is_empty() {
            None
        } else {
            Some(Login {
                user: decode(url.username())?,
                password: decode(url.password().unwrap_or_default())?,
            })
        };
        // RFC 1929 gives each a length byte.
        if let (Protocol::Socks5 | Protocol::Socks5h, Some(login)) = (protocol, &login)
            && (login.user.len() > 255 || login.password.len() > 255)
        {
            return Err(invalid(
                "a SOCKS5 user name or password is at most 255 bytes".to_owned(),
            ));
        }
        Ok(Proxy {
            protocol,
            host,
            port: url.port().unwrap_or(default_port),
            login,
        })
    }

    /// The protocol spoken to the proxy.
    pub(crate) fn protocol(&self) -> Protocol {
        self.protocol
    }

    /// The proxy's host, without the brackets of an IPv6 address, for resolving it.
    pub(crate) fn host(&self) -> String {
        match &self.host {
            Host::Domain(name) => name.clone(),
            Host::Ipv4(ip) => ip.to_string(),
            Host::Ipv6(ip) => ip.to_string(),
        }
    }

    /// The proxy's port.
    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    /// The credentials, if the URL has a user.
    pub(crate) fn login(&self) -> Option<&Login> {
        self.login.as_ref()
    }

    /// Whether the proxy is given the server's name to resolve (`socks5h://`, `http://`)
    /// rather than an address the client resolved (`socks5://`).
    pub(crate) fn resolves_names(&self) -> bool {
        !matches!(self.protocol, Protocol::Socks5)
    }

    /// The proxy's `host:port` (IPv6 in brackets), for error messages.
    pub(crate) fn authority(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }
}

impl fmt::Debug for Login {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Login")
            .field("user", &self.user)
            .finish_non_exhaustive()
    }
}

impl fmt::Display for Proxy {
    /// The URL without the password.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = match self.protocol {
            Protocol::Socks5 => "socks5",
            Protocol::Socks5h => "socks5h",
            Protocol::Http => "http",
        };
        match &self.login {
            Some(login) => write!(f, "{scheme}://{}@{}", login.user, self.authority()),
            None => write!(f, "{scheme}://{}", self.authority()),
        }
    }
}

impl fmt::Debug for Proxy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Proxy").field(&self.to_string()).finish()
    }
}

/// natscli's SOCKS proxy setting (`--socks-proxy`, a context's `socks_proxy`) as a URL for
/// [`ConnectOptions::proxy`](crate::ConnectOptions::proxy): a `socks5://` or `socks5h://`
/// URL, whose servers' names natscli hands to the proxy to resolve (so `socks5h://` here), or,
/// an rnats extension, a bare `host:port`. Another scheme is refused, as natscli refuses it:
/// [`ProxyError::InvalidUrl`], without the password.
///
/// ```
/// use rnats_core::proxy::natscli_socks_url;
///
/// assert_eq!(natscli_socks_url("127.0.0.1:1080")?, "socks5h://127.0.0.1:1080");
/// assert_eq!(natscli_socks_url("socks5://me:pw@jump:1080")?, "socks5h://me:pw@jump:1080");
/// assert!(natscli_socks_url("http://proxy:3128").is_err());
/// # Ok::<(), rnats_core::proxy::ProxyError>(())
/// ```
pub fn natscli_socks_url(setting: &str) -> Result<String, ProxyError> {
    let setting = setting.trim();
    match setting.split_once("://") {
        None => Ok(format!("socks5h://{setting}")),
        Some((scheme, rest))
            if scheme.eq_ignore_ascii_case("socks5") || scheme.eq_ignore_ascii_case("socks5h") =>
        {
            Ok(format!("socks5h://{rest}"))
        }
        Some(_) => Err(ProxyError::InvalidUrl {
            url: without_password(setting),
            reason: "a SOCKS proxy is socks5://, socks5h:// or host:port".to_owned(),
        }),
    }
}

/// `text` with the password of its URL, if any, replaced by `***`: errors must not leak it.
fn without_password(text: &str) -> String {
    if let Ok(mut url) = Url::parse(text)
        && url.password().is_some()
    {
        // Fails only for URLs that cannot have credentials, which this one has.
        let _ = url.set_password(Some("***"));
        return url.to_string();
    }
    // Any other text with an `@` may hold a password before it (`user:pw@proxy` parses as a
    // URL of scheme `user`, `socks5:user:pw@proxy` with the credentials in its path): all of
    // what stands between the scheme's `://`, if any, and the last `@` goes.
    match text.rfind('@') {
        Some(at) => {
            let start = text.find("://").map_or(0, |i| i + 3).min(at);
            format!("{}***{}", &text[..start], &text[at..])
        }
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Proxy, ProxyError> {
        text.parse()
    }

    #[test]
    fn the_three_schemes_parse_with_their_default_ports() {
        let socks = parse("socks5://127.0.0.1").unwrap();
        assert_eq!(
            (socks.protocol(), socks.port()),
            (Protocol::Socks5, SOCKS_PORT)
        );
        assert!(!socks.resolves_names());
        let socks_h = parse("socks5h://proxy.example:9050").unwrap();
        assert_eq!(
            (socks_h.protocol(), socks_h.port()),
            (Protocol::Socks5h, 9050)
        );
        assert!(socks_h.resolves_names());
        let http = parse("http://[::1]:3128").unwrap();
        assert_eq!(
            (http.protocol(), http.host()),
            (Protocol::Http, "::1".to_owned())
        );
        assert_eq!(http.authority(), "[::1]:3128");
        assert_eq!(parse("http://proxy").unwrap().port(), HTTP_PORT);
    }

    #[test]
    fn credentials_are_decoded_and_never_displayed() {
        let proxy = parse("socks5://al%40ce:p%3Ass@127.0.0.1:1080").unwrap();
        let login = proxy.login().unwrap();
        assert_eq!(
            (login.user.as_str(), login.password.as_str()),
            ("al@ce", "p:ss")
        );
        assert_eq!(proxy.to_string(), "socks5://al@ce@127.0.0.1:1080");
        assert!(!format!("{proxy:?}").contains("p:ss"));
        assert!(parse("http://user@proxy:3128").unwrap().login().is_some());
    }

    #[test]
    fn bad_urls_are_refused_without_their_password() {
        for bad in [
            "https://proxy:443",
            "socks4://proxy",
            "proxy:1080",
            "socks5://",
            "http://proxy:3128/path",
            "socks5://user:secret@proxy:99999",
            "user:secret@proxy:1080",
            "socks5:user:secret@proxy",
            "http:/user:secret@proxy/x",
        ] {
            let Err(ProxyError::InvalidUrl { url, .. }) = parse(bad) else {
                panic!("{bad} parsed");
            };
            assert!(!url.contains("secret"), "{url}");
        }
        let long = "u".repeat(256);
        assert!(matches!(
            parse(&format!("socks5://{long}:p@proxy")),
            Err(ProxyError::InvalidUrl { .. })
        ));
        // HTTP Basic has no such limit.
        assert!(parse(&format!("http://{long}:p@proxy")).is_ok());
    }
}
