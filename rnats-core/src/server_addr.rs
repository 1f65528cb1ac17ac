//! Server addresses (`nats://user:pass@host:port`, `tls://host`, `ws://host:port`, `host`) and
//! [`ToServerAddrs`], which lets `connect` take one address or many.

use std::fmt;
use std::io;
use std::str::FromStr;

use url::{Host, Url};

/// The default NATS client port.
const DEFAULT_PORT: u16 = 4222;

/// The address of one NATS server. Parse it from text (`"host"`, `"host:port"`,
/// `"nats://user:pass@host:port"`, `"tls://host"`, `"ws://host:port"`, `"wss://host"`); the
/// scheme defaults to `nats://` and the port to 4222 (80 and 443 for `ws://` and `wss://`).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct ServerAddr(Url);

impl FromStr for ServerAddr {
    type Err = io::Error;

    fn from_str(input: &str) -> Result<Self, Self::Err> {
        let input = input.trim();
        let parsed = if input.contains("://") {
            Url::parse(input)
        } else {
            Url::parse(&format!("nats://{input}"))
        };
        let url = parsed.map_err(|e| invalid(format!("invalid server URL {input:?}: {e}")))?;
        ServerAddr::from_url(url)
    }
}

impl ServerAddr {
    /// Checks that `url` names a NATS server: scheme `nats`, `tls`, `ws` or `wss`, and a host.
    pub fn from_url(url: Url) -> io::Result<Self> {
        if !matches!(url.scheme(), "nats" | "tls" | "ws" | "wss") {
            return Err(invalid(format!(
                "unsupported scheme {:?} in a server URL: expected nats, tls, ws or wss",
                url.scheme()
            )));
        }
        if url.host_str().is_none_or(str::is_empty) {
            return Err(invalid(format!(
                "server URL {:?} has no host",
                url.as_str()
            )));
        }
        Ok(ServerAddr(url))
    }

    /// The address as a URL.
    pub fn into_inner(self) -> Url {
        self.0
    }

    /// Whether the URL asks for TLS (`tls://` or `wss://`).
    pub fn tls_required(&self) -> bool {
        matches!(self.0.scheme(), "tls" | "wss")
    }

    /// Whether the URL carries a user name (or a token).
    pub fn has_user_pass(&self) -> bool {
        !self.0.username().is_empty()
    }

    /// The scheme: `nats`, `tls`, `ws` or `wss`.
    pub fn scheme(&self) -> &str {
        self.0.scheme()
    }

    /// The host, without the brackets of an IPv6 address.
    pub fn host(&self) -> &str {
        match self.0.host() {
            Some(Host::Ipv6(_)) => self
                .0
                .host_str()
                .and_then(|h| h.strip_prefix('['))
                .and_then(|h| h.strip_suffix(']'))
                .unwrap_or_default(),
            _ => self.0.host_str().unwrap_or_default(),
        }
    }

    /// Whether this is a WebSocket address (`ws://` or `wss://`).
    pub fn is_websocket(&self) -> bool {
        matches!(self.0.scheme(), "ws" | "wss")
    }

    /// The port: the one given, else the scheme's default.
    pub fn port(&self) -> u16 {
        self.0.port_or_known_default().unwrap_or(DEFAULT_PORT)
    }

    /// The host as the URL parsed it: a name or an address, for a proxy to connect to.
    pub(crate) fn url_host(&self) -> Host<String> {
        self.0
            .host()
            .map_or_else(|| Host::Domain(String::new()), |host| host.to_owned())
    }

    /// The whole URL as text (credentials included: do not log it).
    pub fn as_url_str(&self) -> &str {
        self.0.as_str()
    }

    /// The user name in the URL, if any, still percent-encoded.
    pub fn username(&self) -> Option<&str> {
        Some(self.0.username()).filter(|user| !user.is_empty())
    }

    /// The password in the URL, if any, still percent-encoded.
    pub fn password(&self) -> Option<&str> {
        self.0.password()
    }

    /// User and password from the URL, decoded, when both are there.
    pub(crate) fn user_and_password(&self) -> Option<(String, String)> {
        let password = self.0.password()?;
        Some((decode(self.0.username()), decode(password)))
    }

    /// A lone user part with no password is a token, as in `nats://token@host`.
    pub(crate) fn token(&self) -> Option<String> {
        match (self.username(), self.0.password()) {
            (Some(token), None) => Some(decode(token)),
            _ => None,
        }
    }

    /// `host:port` for the socket, with IPv6 hosts in brackets.
    pub(crate) fn socket_addr(&self) -> String {
        let host = self.host();
        if host.contains(':') {
            format!("[{host}]:{}", self.port())
        } else {
            format!("{host}:{}", self.port())
        }
    }

    /// Whether `self` and `other` are the same server (credentials and scheme aside).
    pub(crate) fn same_server(&self, other: &ServerAddr) -> bool {
        #[cfg(test)]
        note_comparison();
        self.host() == other.host() && self.port() == other.port()
    }
}

/// Never prints credentials.
impl fmt::Debug for ServerAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerAddr")
            .field("scheme", &self.scheme())
            .field("host", &self.host())
            .field("port", &self.port())
            .field("has_credentials", &self.has_user_pass())
            .finish()
    }
}

/// `scheme://host:port`, without credentials.
impl fmt::Display for ServerAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://{}", self.scheme(), self.socket_addr())
    }
}

fn invalid(reason: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, reason)
}

fn decode(text: &str) -> String {
    percent_encoding::percent_decode_str(text)
        .decode_utf8_lossy()
        .into_owned()
}

/// One server address or several: what `connect` accepts. Implemented for `&str` and
/// `String` (one URL, or several separated by commas), slices, arrays and `Vec`s of strings,
/// [`ServerAddr`] and slices or `Vec`s of them, and references to all of these.
pub trait ToServerAddrs {
    /// The addresses, in the order given.
    type Iter: Iterator<Item = ServerAddr>;

    /// Parses the addresses.
    fn to_server_addrs(&self) -> io::Result<Self::Iter>;
}

impl ToServerAddrs for ServerAddr {
    type Iter = std::option::IntoIter<ServerAddr>;

    fn to_server_addrs(&self) -> io::Result<Self::Iter> {
        Ok(Some(self.clone()).into_iter())
    }
}

impl ToServerAddrs for str {
    type Iter = std::vec::IntoIter<ServerAddr>;

    fn to_server_addrs(&self) -> io::Result<Self::Iter> {
        self.split(',')
            .filter(|part| !part.trim().is_empty())
            .map(str::parse)
            .collect::<io::Result<Vec<_>>>()
            .map(Vec::into_iter)
    }
}

impl ToServerAddrs for String {
    type Iter = std::vec::IntoIter<ServerAddr>;

    fn to_server_addrs(&self) -> io::Result<Self::Iter> {
        self.as_str().to_server_addrs()
    }
}

impl<T: AsRef<str>> ToServerAddrs for [T] {
    type Iter = std::vec::IntoIter<ServerAddr>;

    fn to_server_addrs(&self) -> io::Result<Self::Iter> {
        let mut all = Vec::with_capacity(self.len());
        for text in self {
            all.extend(text.as_ref().to_server_addrs()?);
        }
        Ok(all.into_iter())
    }
}

impl<T: AsRef<str>, const N: usize> ToServerAddrs for [T; N] {
    type Iter = std::vec::IntoIter<ServerAddr>;

    fn to_server_addrs(&self) -> io::Result<Self::Iter> {
        self.as_slice().to_server_addrs()
    }
}

impl<T: AsRef<str>> ToServerAddrs for Vec<T> {
    type Iter = std::vec::IntoIter<ServerAddr>;

    fn to_server_addrs(&self) -> io::Result<Self::Iter> {
        self.as_slice().to_server_addrs()
    }
}

impl<'a> ToServerAddrs for &'a [ServerAddr] {
    type Iter = std::iter::Cloned<std::slice::Iter<'a, ServerAddr>>;

    fn to_server_addrs(&self) -> io::Result<Self::Iter> {
        Ok(self.iter().cloned())
    }
}

impl ToServerAddrs for Vec<ServerAddr> {
    type Iter = std::vec::IntoIter<ServerAddr>;

    fn to_server_addrs(&self) -> io::Result<Self::Iter> {
        Ok(self.clone().into_iter())
    }
}

impl<T: ToServerAddrs + ?Sized> ToServerAddrs for &T {
    type Iter = T::Iter;

    fn to_server_addrs(&self) -> io::Result<Self::Iter> {
        (**self).to_server_addrs()
    }
}

#[cfg(test)]
thread_local! {
    /// The pool's `ServerKey` and [`ServerAddr::same_server`] comparisons made on this thread, for the
    /// test that the merge of an announcement stays linear.
    static COMPARISONS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Counts one comparison of two servers' identities (tests only).
#[cfg(test)]
pub(crate) fn note_comparison() {
    COMPARISONS.with(|count| count.set(count.get() + 1));
}

/// The comparisons counted on this thread so far (tests only).
#[cfg(test)]
pub(crate) fn comparisons() -> u64 {
    COMPARISONS.with(std::cell::Cell::get)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> ServerAddr {
        text.parse().unwrap()
    }

    #[test]
    fn parses_the_usual_forms() {
        let a = parse("nats://127.0.0.1:4333");
        assert_eq!(
            (a.host(), a.port(), a.scheme()),
            ("127.0.0.1", 4333, "nats")
        );
        let a = parse("localhost");
        assert_eq!((a.host(), a.port()), ("localhost", 4222));
        let a = parse("nats://alice:s%40cret@127.0.0.1:1");
        assert_eq!(
            a.user_and_password(),
            Some(("alice".to_owned(), "s@cret".to_owned()))
        );
        assert!(a.has_user_pass());
        assert_eq!(
            parse("nats://tok@127.0.0.1").token().as_deref(),
            Some("tok")
        );
        assert!(parse("tls://127.0.0.1:1").tls_required());
        let a = parse("[::1]:5000");
        assert_eq!((a.host(), a.socket_addr().as_str()), ("::1", "[::1]:5000"));
        let ws = parse("ws://127.0.0.1:8080");
        assert!(ws.is_websocket() && !ws.tls_required());
        assert_eq!(parse("wss://example.com").port(), 443);
    }

    #[test]
    fn rejects_bad_addresses_and_hides_secrets() {
        assert!("http://x".parse::<ServerAddr>().is_err());
        assert!("nats://x:notaport".parse::<ServerAddr>().is_err());
        assert!("nats://:4222".parse::<ServerAddr>().is_err());
        let a = parse("nats://u:hunter2@h");
        assert!(!format!("{a:?}").contains("hunter2"));
        assert!(!a.to_string().contains("hunter2"));
    }

    #[test]
    fn many_shapes_give_the_same_addresses() {
        let one: Vec<_> = "nats://a:1,nats://b:2".to_server_addrs().unwrap().collect();
        let two: Vec<_> = vec!["nats://a:1", "nats://b:2"]
            .to_server_addrs()
            .unwrap()
            .collect();
        let three: Vec<_> = ["a:1", "b:2"].to_server_addrs().unwrap().collect();
        let four: Vec<_> = two.as_slice().to_server_addrs().unwrap().collect();
        assert_eq!(one, two);
        assert_eq!(two, three);
        assert_eq!(three, four);
        assert!(vec!["a:1", "http://b"].to_server_addrs().is_err());
    }
}
