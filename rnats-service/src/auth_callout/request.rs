//! The authorization request a server sends for each client it needs a verdict on (ADR-26):
//! who the server is, what it knows of the client, and the client's CONNECT options.

use std::fmt;

use nkeys::KeyPairType;
use serde::{Deserialize, Serialize};

use super::jwt::ClaimType;

/// The `nats` section of an authorization request JWT: what the server knows of a client
/// that is connecting. Signed by the server's nkey; `user_nkey` is the subject the user JWT
/// must carry, a fresh key per connection, so an answer cannot be replayed for another one.
#[non_exhaustive]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuthorizationRequest {
    /// The server asking.
    #[serde(rename = "server_id", default)]
    pub server: ServerId,
    /// The public user nkey the user JWT must be issued to.
    #[serde(default)]
    pub user_nkey: String,
    /// What the server knows of the connection.
    #[serde(default)]
    pub client_info: ClientInfo,
    /// What the client sent in its CONNECT, credentials included.
    #[serde(default)]
    pub connect_opts: ConnectOpts,
    /// The TLS state, when the client connected over TLS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_tls: Option<ClientTls>,
    /// A nonce the server made for this request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_nonce: Option<String>,
    /// Tags (the JWT's generic `tags`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
}

impl ClaimType for AuthorizationRequest {
    const TYPE: &'static str = "authorization_request";
    const ISSUER: KeyPairType = KeyPairType::Server;
}

/// The server an authorization request comes from.
#[non_exhaustive]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerId {
    /// The server's name (`server_name`).
    #[serde(default)]
    pub name: String,
    /// The host the server listens on.
    #[serde(default)]
    pub host: String,
    /// The server's id, its public nkey (`N...`): the request's issuer and the response's
    /// audience.
    #[serde(default)]
    pub id: String,
    /// The server's version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The server's cluster, if it is in one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<String>,
    /// The server's tags.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// The server's public xkey (`X...`), when it encrypts requests: the response is sealed
    /// to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xkey: Option<String>,
}

/// What the server knows of the connecting client.
#[non_exhaustive]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientInfo {
    /// The client's address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The server's id for the connection (its CID).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<u64>,
    /// The user the client authenticated as, if any (`[REDACTED]` for a token).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// The connection name the client gave.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Tags of the connection.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// The name tag of the connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name_tag: Option<String>,
    /// The kind of connection: `Client`, `Leafnode`, ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The client type: `nats`, `mqtt`, `websocket`, ...
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub client_type: Option<String>,
    /// The MQTT client id, for MQTT clients.
    #[serde(rename = "mqtt_id", default, skip_serializing_if = "Option::is_none")]
    pub mqtt: Option<String>,
    /// The nonce the client signed, when it sent a signature (`sig`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nonce: Option<String>,
}

/// The options the client sent in its CONNECT. Its `Debug` shows `[REDACTED]` for the
/// credentials (`jwt`, `signed_nonce`, `token`, `password`), so that logging a request leaks
/// none of them.
#[non_exhaustive]
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConnectOpts {
    /// A user JWT.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jwt: Option<String>,
    /// A public nkey.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nkey: Option<String>,
    /// The signature of the server's nonce.
    #[serde(rename = "sig", default, skip_serializing_if = "Option::is_none")]
    pub signed_nonce: Option<String>,
    /// A token (`auth_token`): whatever the client was given, an OAuth access token included.
    #[serde(
        rename = "auth_token",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub token: Option<String>,
    /// A user name.
    #[serde(rename = "user", default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// A password.
    #[serde(rename = "pass", default, skip_serializing_if = "Option::is_none")]
    pub password: Option<String>,
    /// The connection name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The client library's language (`rust`, `go`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lang: Option<String>,
    /// The client library's version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The protocol level the client speaks.
    #[serde(default)]
    pub protocol: i64,
}

impl fmt::Debug for ConnectOpts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConnectOpts")
            .field("jwt", &redacted(self.jwt.as_ref()))
            .field("nkey", &self.nkey)
            .field("signed_nonce", &redacted(self.signed_nonce.as_ref()))
            .field("token", &redacted(self.token.as_ref()))
            .field("username", &self.username)
            .field("password", &redacted(self.password.as_ref()))
            .field("name", &self.name)
            .field("lang", &self.lang)
            .field("version", &self.version)
            .field("protocol", &self.protocol)
            .finish()
    }
}

/// The TLS state of a client connected over TLS. Certificates are PEM; a verified peer's
/// chains are in `verified_chains` (the peer first), an unverified peer's certificates in
/// `certs`.
#[non_exhaustive]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientTls {
    /// The TLS version (`1.3`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The cipher suite.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cipher: Option<String>,
    /// The peer's certificates, when they were not verified.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub certs: Vec<String>,
    /// The verified chains.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub verified_chains: Vec<Vec<String>>,
}

/// What `Debug` shows for a credential: whether there is one, not what it is.
fn redacted(secret: Option<&String>) -> Option<&'static str> {
    secret.map(|_| "[REDACTED]")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_hides_the_credentials() {
        let request = AuthorizationRequest {
            connect_opts: ConnectOpts {
                jwt: Some("eyJ-the-jwt".into()),
                signed_nonce: Some("the-signature".into()),
                token: Some("the-token".into()),
                username: Some("alice".into()),
                password: Some("the-password".into()),
                ..ConnectOpts::default()
            },
            ..AuthorizationRequest::default()
        };
        let shown = format!("{request:?}");
        for secret in ["eyJ-the-jwt", "the-signature", "the-token", "the-password"] {
            assert!(!shown.contains(secret), "{secret} in {shown}");
        }
        assert!(shown.contains(r#"username: Some("alice")"#), "{shown}");
        assert!(shown.contains(r#"password: Some("[REDACTED]")"#), "{shown}");
        assert!(shown.contains("nkey: None"), "{shown}");
    }
}
