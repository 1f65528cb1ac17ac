//! What can go wrong: with a token ([`JwtError`]), with the keys a callout is given
//! ([`KeyError`]), with one request ([`CalloutError`]), when starting ([`StartError`]), and
//! with a connect-time window's bound ([`TimeOfDayError`]).

use nkeys::KeyPairType;

/// A NATS JWT that cannot be read, verified or signed.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum JwtError {
    /// The token is longer than [`MAX_TOKEN_SIZE`](super::jwt::MAX_TOKEN_SIZE).
    #[error("token of {0} bytes is too large")]
    TooLarge(usize),
    /// The token is not three dot-separated parts.
    #[error("a JWT has three dot-separated parts")]
    NotThreeParts,
    /// A part is not base64url without padding.
    #[error("a JWT part is not base64url without padding")]
    Base64,
    /// The header or the claims are not JSON of the expected shape.
    #[error("JWT JSON: {0}")]
    Json(#[source] serde_json::Error),
    /// The header is not `{"typ":"JWT","alg":"ed25519-nkey"}` (v1 tokens included).
    #[error("unsupported JWT header: typ {typ:?}, alg {alg:?}")]
    Header {
        /// The `typ` found.
        typ: String,
        /// The `alg` found.
        alg: String,
    },
    /// `nats.version` is newer than this module knows.
    #[error("JWT claims version {0} is newer than 2")]
    Version(u64),
    /// `nats.type` is not the kind of claims asked for.
    #[error("JWT claims are of type {found:?}, not {expected:?}")]
    ClaimType {
        /// The type asked for.
        expected: &'static str,
        /// The type found.
        found: String,
    },
    /// `iss` is not a public nkey.
    #[error("JWT issuer {0:?} is not a public nkey")]
    Issuer(String),
    /// The issuer (or the signing key) is not the kind of key that issues these claims.
    #[error("JWT issuer is a {found:?} key, not a {expected:?} key")]
    IssuerKind {
        /// The kind of key these claims need.
        expected: KeyPairType,
        /// The kind of key found.
        found: KeyPairType,
    },
    /// The signature does not verify: the token was altered or signed by another key.
    #[error("JWT signature does not verify")]
    Signature,
    /// Claims without a subject cannot be signed.
    #[error("JWT claims have no subject")]
    NoSubject,
    /// The signing key could not sign (it has no seed).
    #[error("signing the JWT: {0}")]
    Sign(#[source] nkeys::error::Error),
}

/// A key a callout cannot work with.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum KeyError {
    /// The issuer must be an account key pair (seed `SA...`).
    #[error("the callout issuer must be an account key, not a {0:?} key")]
    IssuerNotAccount(KeyPairType),
    /// The issuer was built from a public key: it cannot sign.
    #[error("the callout issuer has no seed, so it cannot sign")]
    IssuerWithoutSeed,
    /// `issuer_account` is not an account public key.
    #[error("issuer account {0:?} is not an account public key")]
    IssuerAccount(String),
    /// The xkey was built from a public key: it cannot open requests.
    #[error("the callout xkey has no seed, so it cannot open requests")]
    XkeyWithoutSeed,
    /// An account signer was given for something that is not an account public key.
    #[error("account signer given for {0:?}, which is not an account public key")]
    SignerAccount(String),
    /// An account signer is not an account key pair (the account's own, or one of its signing
    /// keys: seed `SA...`).
    #[error("the signer for account {account:?} must be an account key, not a {kind:?} key")]
    SignerNotAccount {
        /// The account it was given for.
        account: String,
        /// The kind of key it is.
        kind: KeyPairType,
    },
    /// An account signer was built from a public key: it cannot sign.
    #[error("the signer for account {0:?} has no seed, so it cannot sign")]
    SignerWithoutSeed(String),
}

/// Why one authorization request went unanswered. Nothing is sent back for these, but for
/// [`NoAccountSigner`](Self::NoAccountSigner), which [`AuthCallout`](super::AuthCallout)
/// answers with a refusal: the server refuses the connecting client once its auth timeout
/// passes, and the client sees an authorization violation.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum CalloutError {
    /// The request came without a reply subject.
    #[error("authorization request without a reply subject")]
    NoReply,
    /// The request is sealed but this callout has no xkey: configure one with
    /// [`AuthCalloutBuilder::xkey`](super::AuthCalloutBuilder::xkey). Also the answer of a
    /// [`Responder`](super::Responder) without an xkey to a sealed request: it is not sent in
    /// clear.
    #[error("authorization request is encrypted but the callout has no xkey")]
    Encrypted,
    /// The callout has an xkey but the request came in clear: the server's `auth_callout`
    /// block has no `xkey`, or something else published the request.
    #[error("authorization request is not encrypted but the callout has an xkey")]
    NotEncrypted,
    /// A sealed request without the `Nats-Server-Xkey` header naming the server's xkey.
    #[error("encrypted authorization request without a valid Nats-Server-Xkey header")]
    NoServerXkey,
    /// The request does not open with this callout's xkey and the server's.
    #[error("authorization request does not decrypt: {0}")]
    Decrypt(#[source] nkeys::error::Error),
    /// The request is not a valid authorization request JWT signed by a server.
    #[error("authorization request: {0}")]
    Request(#[source] JwtError),
    /// The request's issuer is not the server id it names.
    #[error("authorization request issued by {issuer:?}, not by its server {server:?}")]
    NotFromServer {
        /// The request's `iss`.
        issuer: String,
        /// The request's `server_id.id`.
        server: String,
    },
    /// The request's audience is not `nats-authorization-request`.
    #[error("authorization request for audience {0:?}")]
    Audience(Option<String>),
    /// The request's server xkey differs from the `Nats-Server-Xkey` header it was opened with.
    #[error("authorization request names xkey {signed:?}, its header {header:?}")]
    XkeyMismatch {
        /// The xkey in the signed request.
        signed: Option<String>,
        /// The xkey in the header.
        header: String,
    },
    /// The request expired, clock skew allowed for, before it was read.
    #[error("authorization request expired")]
    Expired,
    /// The request's `user_nkey` is not a user public key.
    #[error("authorization request's user nkey {0:?} is not a user public key")]
    UserNkey(String),
    /// The handler's [`UserClaims::expires_at`](super::UserClaims::expires_at) is within the
    /// first second of the Unix epoch or before it: a user JWT's `exp` would be 0, which means
    /// "never expires".
    #[error("user expiry {0:?} is not after the Unix epoch")]
    ExpiryBeforeEpoch(std::time::SystemTime),
    /// The handler placed the user in an account by its public key (operator mode), and the
    /// callout holds no key of that account: the server would refuse a user JWT signed by
    /// any other. Give one with
    /// [`AuthCalloutBuilder::account_signer`](super::AuthCalloutBuilder::account_signer).
    /// [`AuthCallout`](super::AuthCallout) refuses the client at once, with this error's
    /// text as the reason, and reports it; a [`Responder`](super::Responder) leaves the
    /// refusal to its caller.
    #[error("no signing key for account {0:?}, so no user can be placed in it")]
    NoAccountSigner(String),
    /// The user JWT or the response could not be signed.
    #[error("signing the authorization response: {0}")]
    Sign(#[source] JwtError),
    /// The response could not be sealed for the server.
    #[error("encrypting the authorization response: {0}")]
    Seal(#[source] nkeys::error::Error),
    /// The handler panicked.
    #[error("the authorization handler panicked")]
    HandlerPanicked,
    /// The handler had not decided, or the answer had not gone out, when the request
    /// expired (clock skew allowed for): the server no longer waits for it, so none is sent.
    #[error("the authorization handler did not decide before the request expired")]
    Timeout,
    /// This many requests were already being answered
    /// ([`AuthCalloutBuilder::max_concurrent_requests`](super::AuthCalloutBuilder::max_concurrent_requests)):
    /// the request was dropped.
    #[error("{0} authorization requests already in progress; request dropped")]
    Busy(usize),
    /// The response could not be published.
    #[error("publishing the authorization response: {0}")]
    Publish(#[source] rnats_core::PublishError),
}

/// Why an [`AuthCallout`](super::AuthCallout) did not start.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The issuer or xkey cannot be used.
    #[error(transparent)]
    Key(#[from] KeyError),
    /// The queue group is not a valid queue group name.
    #[error("invalid queue group {0:?}")]
    QueueGroup(String),
    /// Subscribing to the callout subject failed (the client is closed).
    #[error("subscribing to the callout subject: {0}")]
    Subscribe(#[source] rnats_core::SubscribeError),
    /// The subscription could not be confirmed with the server (the connection closed).
    #[error("flushing the callout subscription: {0}")]
    Flush(#[source] rnats_core::FlushError),
}

/// A connect-time window's bound that is not a time of day.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TimeOfDayError {
    /// Not `HH:MM:SS` (one or two digits of hour, two of minute and second).
    #[error("time of day {0:?} is not HH:MM:SS")]
    Format(String),
    /// An hour past 23, or a minute or second past 59.
    #[error("time of day {0:?} is out of range (00:00:00 to 23:59:59)")]
    OutOfRange(String),
}
