//! The JSON bodies of the `INFO` (server to client) and `CONNECT`
//! (client to server) handshake ops.

use std::fmt;

use serde::de::{Deserializer, IgnoredAny, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};

/// What the server says about itself in `INFO`.
///
/// Every field defaults when absent and unknown fields are ignored, so newer
/// or older servers still parse.
///
/// Of the URL lists, only the first 16,384 entries are kept. An INFO may be up to 8 MiB
/// (`ParserLimits::max_info_line`), room for some 700,000 short URLs, and read whole into
/// strings they took up to five times the line's size; a cluster announces a few hundred.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(default)]
pub struct ServerInfo {
    /// Unique identifier of the server.
    pub server_id: String,
    /// Configured name of the server.
    pub server_name: String,
    /// Server version, e.g. `2.10.14`.
    pub version: String,
    /// Go version the server was built with.
    pub go: String,
    /// Host the server listens on.
    pub host: String,
    /// Port the server listens on.
    pub port: u16,
    /// Whether the server understands `HPUB`/`HMSG`.
    pub headers: bool,
    /// Largest payload, in bytes, the server accepts in one message.
    pub max_payload: usize,
    /// Protocol version the server speaks.
    pub proto: i8,
    /// Identifier the server assigned to this connection.
    pub client_id: u64,
    /// Whether the client must authenticate.
    pub auth_required: bool,
    /// Whether the client must use TLS.
    pub tls_required: bool,
    /// Whether the server verifies client certificates.
    pub tls_verify: bool,
    /// Whether the server offers TLS without requiring it.
    pub tls_available: bool,
    /// Other cluster members a client may connect to: at most the first 16,384 the INFO
    /// lists (no cluster comes near; the rest are read past, see [`ServerInfo`]).
    #[serde(deserialize_with = "first_urls")]
    pub connect_urls: Vec<String>,
    /// Other cluster members reachable over WebSocket, at most the first 16,384 as for
    /// `connect_urls`.
    #[serde(deserialize_with = "first_urls")]
    pub ws_connect_urls: Vec<String>,
    /// Whether the server is in lame duck mode and about to shut down.
    #[serde(rename = "ldm")]
    pub lame_duck_mode: bool,
    /// Git commit the server was built from.
    pub git_commit: String,
    /// Whether JetStream is enabled on the server.
    pub jetstream: bool,
    /// IP address of the server.
    pub ip: String,
    /// IP address of the client as seen by the server.
    pub client_ip: String,
    /// Challenge the client signs when authenticating with an NKey or JWT.
    pub nonce: String,
    /// Name of the cluster the server belongs to, when it is in one.
    pub cluster: Option<String>,
    /// JetStream domain of the server, when it has one.
    pub domain: Option<String>,
    /// Public curve key used to encrypt auth callout requests.
    pub xkey: String,
    /// The highest JetStream API level the server speaks (ADR-44; `api_lvl`, announced by
    /// nats-server 2.12 and later), 0 when not announced.
    #[serde(rename = "api_lvl")]
    pub api_level: u32,
    /// This INFO answers the client's CONNECT (nats-server 2.12 and later send one right
    /// behind the PONG to the CONNECT's PING): it tells the connection which account its
    /// user is bound to.
    pub connect_info: bool,
    /// The account the connection's user is bound to, from the INFO that answers CONNECT;
    /// `None` from older servers.
    pub remote_account: Option<String>,
    /// Whether that account is the server's system account (`acc_is_sys`), from the INFO
    /// that answers CONNECT; `false` from older servers.
    #[serde(rename = "acc_is_sys")]
    pub is_system_account: bool,
}

/// The most entries kept of an INFO's `connect_urls` or `ws_connect_urls` (see
/// [`ServerInfo`]): four times what rnats-core's server pool takes from one announcement
/// (4,096 servers, repeats not counted), leaving room for repeats before the servers it
/// would take.
const MAX_CONNECT_URLS: usize = 16_384;

/// Deserializes a list of URLs, keeping the first [`MAX_CONNECT_URLS`] and reading past the
/// rest without storing them.
fn first_urls<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    struct FirstUrls;

    impl<'de> Visitor<'de> for FirstUrls {
        type Value = Vec<String>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a list of URLs")
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<String>, A::Error> {
            let mut urls = Vec::new();
            while urls.len() < MAX_CONNECT_URLS {
                match seq.next_element()? {
                    Some(url) => urls.push(url),
                    None => return Ok(urls),
                }
            }
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(urls)
        }
    }

    deserializer.deserialize_seq(FirstUrls)
}

/// The options and credentials the client sends in `CONNECT`.
///
/// `Debug` hides the password, token, JWT and signature; the NKey is a
/// public key and is shown.
#[derive(Clone, Serialize, Default)]
pub struct ConnectInfo {
    /// Ask the server to acknowledge every op with `+OK`.
    pub verbose: bool,
    /// Ask the server for stricter protocol checks.
    pub pedantic: bool,
    /// User JWT for decentralized authentication.
    #[serde(rename = "jwt", skip_serializing_if = "Option::is_none")]
    pub user_jwt: Option<String>,
    /// Public NKey of the user.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nkey: Option<String>,
    /// Signature of the server's nonce, made with the user's NKey seed (URL-safe base64).
    #[serde(rename = "sig", skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// Client name shown in server monitoring.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Whether the server may deliver this connection's own publishes back to it.
    pub echo: bool,
    /// Implementation language of the client.
    pub lang: String,
    /// Version of the client library.
    pub version: String,
    /// Protocol version: [`Protocol::Dynamic`] asks for cluster updates (`connect_urls`).
    pub protocol: Protocol,
    /// Whether the client requires TLS.
    pub tls_required: bool,
    /// User name for user/password authentication.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// Password for user/password authentication.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pass: Option<String>,
    /// Token for token authentication.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auth_token: Option<String>,
    /// Whether the client understands headers.
    pub headers: bool,
    /// Whether the server should answer requests nobody listens to with a 503 status.
    pub no_responders: bool,
}

/// The protocol version a client speaks, sent in `CONNECT` as a number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(u8)]
pub enum Protocol {
    /// The original protocol.
    Original = 0,
    /// With dynamic cluster updates (INFO `connect_urls`) and lame duck mode notices.
    #[default]
    Dynamic = 1,
}

impl Serialize for Protocol {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u8(*self as u8)
    }
}

impl fmt::Debug for ConnectInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let redact = |s: &Option<String>| s.as_ref().map(|_| "<redacted>");
        f.debug_struct("ConnectInfo")
            .field("verbose", &self.verbose)
            .field("pedantic", &self.pedantic)
            .field("user_jwt", &redact(&self.user_jwt))
            .field("nkey", &self.nkey)
            .field("signature", &redact(&self.signature))
            .field("name", &self.name)
            .field("echo", &self.echo)
            .field("lang", &self.lang)
            .field("version", &self.version)
            .field("protocol", &self.protocol)
            .field("tls_required", &self.tls_required)
            .field("user", &self.user)
            .field("pass", &redact(&self.pass))
            .field("auth_token", &redact(&self.auth_token))
            .field("headers", &self.headers)
            .field("no_responders", &self.no_responders)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_info_tolerates_missing_and_unknown_fields() {
        let json = r#"{"server_id":"S1","port":4222,"max_payload":1048576,"headers":true,
            "ldm":true,"connect_urls":["10.0.0.1:4222"],"some_future_field":{"x":1}}"#;
        let info: ServerInfo = serde_json::from_str(json).unwrap();
        assert_eq!(info.server_id, "S1");
        assert_eq!(info.port, 4222);
        assert_eq!(info.max_payload, 1 << 20);
        assert!(info.headers && info.lame_duck_mode);
        assert_eq!(info.connect_urls, ["10.0.0.1:4222"]);
        assert_eq!(info.nonce, "");
        assert_eq!((info.cluster, info.domain), (None, None));
        let info: ServerInfo =
            serde_json::from_str(r#"{"cluster":"east","domain":"hub"}"#).unwrap();
        assert_eq!(info.cluster.as_deref(), Some("east"));
        assert_eq!(info.domain.as_deref(), Some("hub"));
        assert_eq!(info.api_level, 0);
        let info: ServerInfo = serde_json::from_str(r#"{"api_lvl":5}"#).unwrap();
        assert_eq!(info.api_level, 5);
        assert!(!info.connect_info && !info.is_system_account);
        assert_eq!(info.remote_account, None);
        // The INFO that answers CONNECT (nats-server 2.12+), as the server writes it.
        let json = r#"{"server_id":"S1","client_id":6,"connect_info":true,
            "remote_account":"SYS","acc_is_sys":true,"api_lvl":5}"#;
        let info: ServerInfo = serde_json::from_str(json).unwrap();
        assert!(info.connect_info && info.is_system_account);
        assert_eq!(info.remote_account.as_deref(), Some("SYS"));
    }

    #[test]
    fn server_info_keeps_the_first_urls_of_a_list_longer_than_any_cluster_s() {
        let list = |n: usize| {
            let urls: Vec<String> = (0..n).map(|i| format!("\"h{i}:4222\"")).collect();
            urls.join(",")
        };
        let json = format!(
            r#"{{"connect_urls":[{}],"ws_connect_urls":[{}],"max_payload":1}}"#,
            list(MAX_CONNECT_URLS + 10),
            list(MAX_CONNECT_URLS),
        );
        let info: ServerInfo = serde_json::from_str(&json).unwrap();
        assert_eq!(info.connect_urls.len(), MAX_CONNECT_URLS);
        assert_eq!(info.connect_urls[0], "h0:4222");
        assert_eq!(
            info.connect_urls.last().map(String::as_str),
            Some(format!("h{}:4222", MAX_CONNECT_URLS - 1).as_str())
        );
        assert_eq!(info.ws_connect_urls.len(), MAX_CONNECT_URLS);
        assert_eq!(info.max_payload, 1, "what follows the list is read");
        // A list of a cluster's size is kept as it is.
        let info: ServerInfo =
            serde_json::from_str(r#"{"connect_urls":["a:1","b:2","a:1"]}"#).unwrap();
        assert_eq!(info.connect_urls, ["a:1", "b:2", "a:1"]);
        assert!(serde_json::from_str::<ServerInfo>(r#"{"connect_urls":"a:1"}"#).is_err());
    }

    #[test]
    fn connect_info_skips_absent_options_and_renames_jwt() {
        let info = ConnectInfo {
            user_jwt: Some("eyJ".into()),
            lang: "rust".into(),
            protocol: Protocol::Dynamic,
            ..Default::default()
        };
        let json = serde_json::to_string(&info).unwrap();
        assert!(json.contains(r#""jwt":"eyJ""#), "{json}");
        assert!(
            !json.contains("pass") && !json.contains("auth_token"),
            "{json}"
        );
    }

    #[test]
    fn connect_info_debug_redacts_secrets() {
        let info = ConnectInfo {
            user: Some("alice".into()),
            pass: Some("hunter2".into()),
            auth_token: Some("tok".into()),
            user_jwt: Some("jwt".into()),
            signature: Some("sig".into()),
            nkey: Some("UABC".into()),
            ..Default::default()
        };
        let shown = format!("{info:?}");
        for secret in ["hunter2", "\"tok\"", "\"jwt\"", "\"sig\""] {
            assert!(!shown.contains(secret), "{shown}");
        }
        assert!(shown.contains("alice") && shown.contains("UABC"), "{shown}");
    }
}
