//! [`Verdict`]: what a handler decides about a client, including not answering at all.

use super::UserClaims;

/// A handler's decision. Most handlers return `Result<UserClaims, String>`, which converts
/// into the first two; a handler that may also [`Abort`](Verdict::Abort) returns a `Verdict`.
///
/// ```
/// use rnats_service::auth_callout::{AuthorizationRequest, UserClaims, Verdict};
///
/// async fn decide(request: AuthorizationRequest) -> Verdict {
///     match request.connect_opts.token.as_deref() {
///         Some("let-me-in") => Verdict::Allow(UserClaims::new().account("APP")),
///         // A client hammering the server with guesses waits out its auth timeout.
///         Some(_) => Verdict::Abort,
///         None => Verdict::Deny("a token is required".into()),
///     }
/// }
/// # let _ = decide;
/// ```
#[derive(Debug, Clone, PartialEq)]
// Made once per request and moved once, as the `Result<UserClaims, String>` it stands for: a
// box would only make `Allow` clumsier to write.
#[allow(clippy::large_enum_variant)]
pub enum Verdict {
    /// Let the client in as this user.
    Allow(UserClaims),
    /// Refuse the client, for this reason: the server logs it, the client gets an
    /// authorization violation at once.
    Deny(String),
    /// Send no answer (callout.go's `ErrAbortRequest`): the server refuses the client only
    /// when its auth timeout passes, which slows down a client trying credentials at speed.
    /// Not reported to [`on_error`](super::AuthCalloutBuilder::on_error).
    Abort,
}

// The only `Result` that converts: with a second one, a handler that never returns `Err` would
// leave its error type to guess.
impl From<Result<UserClaims, String>> for Verdict {
    fn from(result: Result<UserClaims, String>) -> Verdict {
        match result {
            Ok(user) => Verdict::Allow(user),
            Err(reason) => Verdict::Deny(reason),
        }
    }
}
