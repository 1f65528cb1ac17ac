//! Server addresses: `nats://user:pass@host:port`, `host:port`, `host`.

use std::fmt;

use crate::error::ConnectError;

/// The default NATS client port.
const DEFAULT_PORT: u16 = 4222;

/// One parsed server address, with any credentials it carried.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct ServerAddr {
    pub(crate) host: String,
    pub(crate) port: u16,
    pub(crate) user: Option<String>,
    pub(crate) password: Option<String>,
    /// A lone user part with no password is a token, as in `nats://token@host`.
    pub(crate) token: Option<String>,
    /// The URL said `tls://`: TLS is required.
    pub(crate) tls: bool,
}

impl ServerAddr {
    /// Parses one address. Accepted schemes: `nats://`, `tls://` (TLS required), or none.
    pub(crate) fn parse(url: &str) -> Result<ServerAddr, ConnectError> {
        let invalid = |reason| ConnectError::InvalidUrl {
            url: url.to_owned(),
            reason,
        };
        let url = url.trim();
        let (rest, tls) = match url.split_once("://") {
            Some(("nats", rest)) => (rest, false),
            Some(("tls", rest)) => (rest, true),
            Some(_) => return Err(invalid("unsupported scheme, expected nats:// or tls://")),
            None => (url, false),
        };
        let rest = rest.trim_end_matches('/');
        let (auth, hostport) = match rest.rsplit_once('@') {
            Some((auth, hostport)) => (Some(auth), hostport),
            None => (None, rest),
        };
        let (host, port) = split_host_port(hostport).ok_or_else(|| invalid("bad port"))?;
        if host.is_empty() {
            return Err(invalid("missing host"));
        }
        let mut addr = ServerAddr {
            host: host.to_owned(),
            port,
            user: None,
            password: None,
            token: None,
            tls,
        };
        match auth.map(|a| a.split_once(':')) {
            None => {}
            Some(Some((user, password))) => {
                addr.user = Some(percent_decode(user).ok_or_else(|| invalid("bad user"))?);
                addr.password =
                    Some(percent_decode(password).ok_or_else(|| invalid("bad password"))?);
            }
            Some(None) => {
                let token = auth.unwrap_or_default();
                addr.token = Some(percent_decode(token).ok_or_else(|| invalid("bad token"))?);
            }
        }
        Ok(addr)
    }

    /// `host:port` for the socket, with IPv6 hosts in brackets.
    pub(crate) fn socket_addr(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// Never prints credentials.
impl fmt::Debug for ServerAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerAddr")
            .field("host", &self.host)
            .field("port", &self.port)
            .field(
                "has_credentials",
                &(self.user.is_some() || self.token.is_some()),
            )
            .finish()
    }
}

fn split_host_port(s: &str) -> Option<(&str, u16)> {
    if let Some(inner) = s.strip_prefix('[') {
        let (host, after) = inner.split_once(']')?;
        return match after.strip_prefix(':') {
            Some(port) => Some((host, port.parse().ok()?)),
            None if after.is_empty() => Some((host, DEFAULT_PORT)),
            None => None,
        };
    }
    match s.rsplit_once(':') {
        Some((host, port)) => Some((host, port.parse().ok()?)),
        None => Some((s, DEFAULT_PORT)),
    }
}

/// Decodes `%XX` escapes in URL credentials.
fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_usual_forms() {
        let a = ServerAddr::parse("nats://127.0.0.1:4333").unwrap();
        assert_eq!((a.host.as_str(), a.port), ("127.0.0.1", 4333));
        let a = ServerAddr::parse("localhost").unwrap();
        assert_eq!((a.host.as_str(), a.port), ("localhost", 4222));
        let a = ServerAddr::parse("nats://alice:s%40cret@127.0.0.1:1").unwrap();
        assert_eq!(a.user.as_deref(), Some("alice"));
        assert_eq!(a.password.as_deref(), Some("s@cret"));
        let a = ServerAddr::parse("nats://tok@127.0.0.1").unwrap();
        assert_eq!(a.token.as_deref(), Some("tok"));
        assert!(ServerAddr::parse("tls://127.0.0.1:1").unwrap().tls);
        let a = ServerAddr::parse("[::1]:5000").unwrap();
        assert_eq!(a.socket_addr(), "[::1]:5000");
    }

    #[test]
    fn rejects_bad_addresses_and_hides_secrets() {
        assert!(ServerAddr::parse("http://x").is_err());
        assert!(ServerAddr::parse("nats://x:notaport").is_err());
        assert!(ServerAddr::parse("nats://:4222").is_err());
        let a = ServerAddr::parse("nats://u:hunter2@h").unwrap();
        assert!(!format!("{a:?}").contains("hunter2"));
    }
}
