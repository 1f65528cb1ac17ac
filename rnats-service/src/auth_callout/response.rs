//! The authorization response a callout sends back: a signed user JWT, or why not.

use nkeys::KeyPairType;
use serde::{Deserialize, Serialize};

use super::jwt::ClaimType;

/// The `nats` section of an authorization response JWT. Its subject is the request's
/// `user_nkey` and its audience the server's id; it carries either the user JWT or the
/// reason the client is refused, never both.
#[non_exhaustive]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuthorizationResponse {
    /// The user JWT: the client is let in with what it grants.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jwt: Option<String>,
    /// Why the client is refused. The server logs it; the client only sees an authorization
    /// violation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The account the issuer signs for, when the issuer is one of its signing keys
    /// (operator mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issuer_account: Option<String>,
    /// Tags (the JWT's generic `tags`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
}

impl AuthorizationResponse {
    /// A response that lets the client in as the user `jwt` describes.
    pub fn allow(jwt: impl Into<String>) -> AuthorizationResponse {
        AuthorizationResponse {
            jwt: Some(jwt.into()),
            ..AuthorizationResponse::default()
        }
    }

    /// A response that refuses the client, for `reason`.
    pub fn deny(reason: impl Into<String>) -> AuthorizationResponse {
        AuthorizationResponse {
            error: Some(reason.into()),
            ..AuthorizationResponse::default()
        }
    }
}

impl ClaimType for AuthorizationResponse {
    const TYPE: &'static str = "authorization_response";
    const ISSUER: KeyPairType = KeyPairType::Account;
}
