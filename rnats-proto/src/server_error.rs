//! The errors a server reports with `-ERR '<text>'`.

use std::fmt;

/// An error reported by the server through `-ERR`.
///
/// Known messages are recognised case-insensitively; anything else is kept
/// verbatim in [`ServerError::Other`].
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ServerError {
    /// The credentials were rejected (`Authorization Violation`).
    #[error("authorization violation")]
    AuthorizationViolation,
    /// The user's credentials expired (`User Authentication Expired`).
    #[error("user authentication expired")]
    AuthenticationExpired,
    /// The user was revoked in its account (`User Authentication Revoked`).
    #[error("user authentication revoked")]
    AuthenticationRevoked,
    /// The user's account expired (`Account Authentication Expired`).
    #[error("account authentication expired")]
    AccountAuthenticationExpired,
    /// The server already has its `max_connections` clients
    /// (`maximum connections exceeded`).
    #[error("maximum connections exceeded")]
    MaxConnectionsExceeded,
    /// The user's account already has its limit of connections
    /// (`maximum account active connections exceeded`).
    #[error("maximum account active connections exceeded")]
    MaxAccountConnectionsExceeded,
    /// A subscription would pass the connection's or the account's limit of subscriptions
    /// (`maximum subscriptions exceeded`); the server does not keep it.
    #[error("maximum subscriptions exceeded")]
    MaxSubscriptionsExceeded,
    /// The user may not publish or subscribe to a subject.
    #[error("permissions violation for {operation} to {subject:?}{}", queue_suffix(.queue))]
    PermissionViolation {
        /// Whether a publish or a subscription was refused.
        operation: PermissionOp,
        /// The subject that was refused.
        subject: String,
        /// The queue group of a refused subscription, if any.
        queue: Option<String>,
    },
    /// The server closed the connection after missed pings (`Stale Connection`).
    #[error("stale connection")]
    StaleConnection,
    /// A published message exceeded the server's `max_payload`.
    #[error("maximum payload violation")]
    MaxPayload,
    /// Any other error text, without the surrounding quotes.
    #[error("{0}")]
    Other(String),
}

/// The kind of operation refused by a [`ServerError::PermissionViolation`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PermissionOp {
    /// Publishing to a subject.
    Publish,
    /// Subscribing to a subject.
    Subscribe,
}

impl ServerError {
    /// Classifies the text of an `-ERR` line (quotes already removed).
    pub(crate) fn from_text(text: &str) -> ServerError {
        let matches = |known: &str| text.eq_ignore_ascii_case(known);
        if matches("Authorization Violation") {
            ServerError::AuthorizationViolation
        } else if matches("User Authentication Expired") {
            ServerError::AuthenticationExpired
        } else if matches("User Authentication Revoked") {
            ServerError::AuthenticationRevoked
        } else if matches("Account Authentication Expired") {
            ServerError::AccountAuthenticationExpired
        } else if matches("Maximum Connections Exceeded") {
            ServerError::MaxConnectionsExceeded
        } else if matches("Maximum Account Active Connections Exceeded") {
            ServerError::MaxAccountConnectionsExceeded
        } else if matches("Maximum Subscriptions Exceeded") {
            ServerError::MaxSubscriptionsExceeded
        } else if matches("Stale Connection") {
            ServerError::StaleConnection
        } else if matches("Maximum Payload Violation") {
            ServerError::MaxPayload
        } else {
            parse_permission(text).unwrap_or_else(|| ServerError::Other(text.to_owned()))
        }
    }
}

impl fmt::Display for PermissionOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PermissionOp::Publish => "publish",
            PermissionOp::Subscribe => "subscription",
        })
    }
}

fn queue_suffix(queue: &Option<String>) -> String {
    queue
        .as_ref()
        .map(|q| format!(" using queue {q:?}"))
        .unwrap_or_default()
}

/// Parses `Permissions Violation for {Publish|Subscription} to "<subject>"`,
/// optionally followed by ` using queue "<queue>"`.
fn parse_permission(text: &str) -> Option<ServerError> {
    let rest = strip_prefix_ignore_case(text, "Permissions Violation for ")?;
    let (operation, rest) = if let Some(r) = strip_prefix_ignore_case(rest, "Publish to ") {
        (PermissionOp::Publish, r)
    } else {
        (
            PermissionOp::Subscribe,
            strip_prefix_ignore_case(rest, "Subscription to ")?,
        )
    };
    let (subject, rest) = quoted(rest)?;
    let queue = if rest.is_empty() {
        None
    } else {
        let rest = strip_prefix_ignore_case(rest, " using queue ")?;
        let (queue, rest) = quoted(rest)?;
        if !rest.is_empty() {
            return None;
        }
        Some(queue.to_owned())
    };
    Some(ServerError::PermissionViolation {
        operation,
        subject: subject.to_owned(),
        queue,
    })
}

fn strip_prefix_ignore_case<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &s[prefix.len()..])
}

/// Splits `"inner"rest` into `(inner, rest)`.
fn quoted(s: &str) -> Option<(&str, &str)> {
    let s = s.strip_prefix('"')?;
    let end = s.find('"')?;
    Some((&s[..end], &s[end + 1..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_known_texts_case_insensitively() {
        // nats-server writes the limit errors in lower case.
        let known = [
            (
                "authorization violation",
                ServerError::AuthorizationViolation,
            ),
            (
                "User Authentication Expired",
                ServerError::AuthenticationExpired,
            ),
            ("Stale Connection", ServerError::StaleConnection),
            ("MAXIMUM PAYLOAD VIOLATION", ServerError::MaxPayload),
            (
                "User Authentication Revoked",
                ServerError::AuthenticationRevoked,
            ),
            (
                "Account Authentication Expired",
                ServerError::AccountAuthenticationExpired,
            ),
            (
                "maximum connections exceeded",
                ServerError::MaxConnectionsExceeded,
            ),
            (
                "maximum account active connections exceeded",
                ServerError::MaxAccountConnectionsExceeded,
            ),
            (
                "Maximum Subscriptions Exceeded",
                ServerError::MaxSubscriptionsExceeded,
            ),
        ];
        for (text, kind) in known {
            assert_eq!(ServerError::from_text(text), kind, "{text}");
        }
        for other in [
            "maximum connections exceeded!",
            "Unknown Protocol Operation",
        ] {
            assert_eq!(
                ServerError::from_text(other),
                ServerError::Other(other.into())
            );
        }
    }

    #[test]
    fn parses_permission_violations() {
        assert_eq!(
            ServerError::from_text("Permissions Violation for Subscription to \"foo.bar\""),
            ServerError::PermissionViolation {
                operation: PermissionOp::Subscribe,
                subject: "foo.bar".into(),
                queue: None
            }
        );
        assert_eq!(
            ServerError::from_text(
                "permissions violation for subscription to \"foo\" using queue \"q\""
            ),
            ServerError::PermissionViolation {
                operation: PermissionOp::Subscribe,
                subject: "foo".into(),
                queue: Some("q".into())
            }
        );
        let publish = ServerError::from_text("Permissions Violation for Publish to \"foo\"");
        assert_eq!(
            publish,
            ServerError::PermissionViolation {
                operation: PermissionOp::Publish,
                subject: "foo".into(),
                queue: None
            }
        );
        assert_eq!(
            publish.to_string(),
            "permissions violation for publish to \"foo\""
        );
    }

    #[test]
    fn malformed_permission_texts_are_other() {
        for text in [
            "Permissions Violation for Publish to foo",
            "Permissions Violation for Subscription to \"foo",
            "Permissions Violation for Subscription to \"foo\" extra",
            "Permissions Violation for Publish with Reply of \"foo\"",
            "Permissions Violation for é",
        ] {
            assert_eq!(
                ServerError::from_text(text),
                ServerError::Other(text.into()),
                "{text}"
            );
        }
    }
}
