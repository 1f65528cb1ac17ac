//! Authorization callouts (ADR-26, nats-server 2.10+): an authentication service of your own,
//! in Rust. An rnats extension, behind the `auth-callout` feature.
//!
//! A server whose `authorization` block has an `auth_callout` asks a service about every
//! client that connects (except the `auth_users`, which the service itself connects as): it
//! publishes an authorization request, a JWT it signs with its own nkey, to
//! `$SYS.REQ.USER.AUTH` in the callout's account. The request carries the client's CONNECT
//! options (user and password, token, nkey, JWT...), what the server knows of the connection
//! and, over TLS, the client's certificates. The service decides (against a directory, an
//! OAuth provider, a database) and replies with a user JWT, signed by the account key the
//! server names as `issuer`, granting an account, permissions, limits and an expiry; or with
//! the reason it refuses the client, who then gets an authorization violation.
//!
//! [`Responder`] holds the protocol, without I/O: it opens and checks a request, sealed or
//! not, and turns a verdict, the [`UserClaims`] to grant or a reason to refuse, into the
//! signed (and, if need be, sealed) reply. [`jwt::Claims`] encodes and decodes NATS JWTs.
//!
//! Tested against servers configured with accounts in their file. In operator mode the same
//! messages flow, but the account, its signing keys and the allowed accounts come from the
//! account JWT; [`Responder::with_issuer_account`] covers a signing key.

mod error;
pub mod jwt;
mod request;
mod responder;
mod response;
mod user;

/// The nkeys crate this module signs and seals with, for its [`KeyPair`](nkeys::KeyPair) and
/// [`XKey`](nkeys::XKey).
pub use nkeys;

pub use error::{CalloutError, JwtError, KeyError};
pub use request::{AuthorizationRequest, ClientInfo, ClientTls, ConnectOpts, ServerId};
pub use responder::{OpenedRequest, Responder};
pub use response::AuthorizationResponse;
pub use user::{Expiry, NO_LIMIT, Permission, ResponsePermission, User, UserClaims};

/// The subject servers send authorization requests to, in the callout's account.
pub const AUTH_CALLOUT_SUBJECT: &str = "$SYS.REQ.USER.AUTH";
/// The header naming the server's public xkey on a sealed request.
pub const SERVER_XKEY_HEADER: &str = "Nats-Server-Xkey";
/// The audience of every authorization request.
pub const REQUEST_AUDIENCE: &str = "nats-authorization-request";
