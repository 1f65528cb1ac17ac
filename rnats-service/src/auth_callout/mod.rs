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
//! [`AuthCallout`] is that service: it verifies each request, opens it when the server seals
//! requests with an xkey, calls an async handler with the [`AuthorizationRequest`], signs the
//! [`UserClaims`] it returns and replies, sealed if the request was. The handler only decides
//! (and may [`Verdict::Abort`], not to answer at all).
//!
//! ```no_run
//! use rnats_service::auth_callout::{AuthCallout, UserClaims, nkeys::KeyPair};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! // The account key whose public half is the `auth_callout` block's `issuer`.
//! let issuer = KeyPair::from_seed(&std::env::var("CALLOUT_ISSUER_SEED")?)?;
//! // Connect as one of the block's `auth_users`.
//! let client = rnats_core::ConnectOptions::new()
//!     .user_and_password("auth".into(), "auth-password".into())
//!     .connect("nats://127.0.0.1:4222")
//!     .await?;
//! let callout = AuthCallout::new(client, issuer, |request| async move {
//!     match request.connect_opts.token.as_deref() {
//!         Some("let-me-in") => Ok(UserClaims::new()
//!             .name("token-user")
//!             .account("APP")
//!             .allow_publish("app.>")
//!             .allow_subscribe("app.>")
//!             .allow_subscribe("_INBOX.>")),
//!         _ => Err("unknown token".to_string()),
//!     }
//! })
//! .await?;
//! # callout.stop().await;
//! # Ok(()) }
//! ```
//!
//! The pieces are usable alone: [`Responder`] is the protocol without I/O (open a request,
//! answer it), for a program that drives its own subscription; [`jwt::Claims`] encodes and
//! decodes NATS JWTs. The user guide is `rnats::guides::auth_callout`.
//!
//! Tested against servers configured with accounts in their file and against servers in
//! operator mode. In operator mode the callout is switched on in its account's JWT (its
//! `authorization`: the service's users, the accounts it may place users in, the xkey), the
//! issuer is that account's key or, with [`AuthCalloutBuilder::issuer_account`], one of its
//! signing keys, and the server places a user in the account whose key signed the user JWT:
//! [`UserClaims::account`] names it by its public key, and
//! [`AuthCalloutBuilder::account_signer`] gives the callout a key of each account other than
//! its own. [`UserClaims::allow_connect_between`] limits the hours a user may connect. Not
//! supported: signing with an external signer, and scoped signing keys.

mod callout;
mod error;
pub mod jwt;
mod request;
mod responder;
mod response;
mod times;
mod user;
mod verdict;

/// The nkeys crate this module signs and seals with, for its [`KeyPair`](nkeys::KeyPair) and
/// [`XKey`](nkeys::XKey).
pub use nkeys;

pub use callout::{AuthCallout, AuthCalloutBuilder, DEFAULT_MAX_CONCURRENT_REQUESTS};
pub use error::{CalloutError, JwtError, KeyError, StartError, TimeOfDayError};
pub use request::{AuthorizationRequest, ClientInfo, ClientTls, ConnectOpts, ServerId};
pub use responder::{DEFAULT_CLOCK_SKEW, OpenedRequest, Responder};
pub use response::AuthorizationResponse;
pub use times::{TimeOfDay, TimeRange};
pub use user::{Expiry, MAX_LIFETIME, NO_LIMIT, Permission, ResponsePermission, User, UserClaims};
pub use verdict::Verdict;

/// The subject servers send authorization requests to, in the callout's account.
pub const AUTH_CALLOUT_SUBJECT: &str = "$SYS.REQ.USER.AUTH";
/// The header naming the server's public xkey on a sealed request.
pub const SERVER_XKEY_HEADER: &str = "Nats-Server-Xkey";
/// The audience of every authorization request.
pub const REQUEST_AUDIENCE: &str = "nats-authorization-request";
/// The global account of a server configured without operator: where a user whose claims
/// name no account is placed unless
/// [`AuthCalloutBuilder::default_account`] says otherwise.
pub const GLOBAL_ACCOUNT: &str = "$G";
