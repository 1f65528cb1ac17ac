//! What can go wrong finding, reading and applying a natscli context.

use std::io;
use std::path::{Path, PathBuf};

use crate::{AuthError, ConnectError};

/// Why a context could not be loaded, resolved or connected with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ContextError {
    /// Neither `XDG_CONFIG_HOME` nor `HOME` is set, so there is no context directory.
    #[error("cannot find the context directory: set XDG_CONFIG_HOME or HOME")]
    NoConfigDir,
    /// A name natscli refuses: empty, or holding `..`, `/` or `\`.
    #[error(
        "invalid context name {name:?}: it must not be empty or contain \"..\", \"/\" or \"\\\""
    )]
    InvalidName {
        /// The name given.
        name: String,
    },
    /// No context of that name (or the selected one names a context that is gone).
    #[error("unknown context {name:?}: no file {}", path.display())]
    NotFound {
        /// The name asked for.
        name: String,
        /// Where its file would be.
        path: PathBuf,
    },
    /// A file could not be read: a context, the selection, or a file a setting names.
    #[error("cannot read {what} {}: {source}", path.display())]
    Read {
        /// What the file is for (`context`, `credentials file`, ...).
        what: &'static str,
        /// Its path.
        path: PathBuf,
        /// Why reading failed.
        #[source]
        source: io::Error,
    },
    /// A context is not the JSON object natscli writes (bad JSON, or a setting of the wrong
    /// type).
    #[error("cannot parse context {name:?}{}: {reason}", in_file(path.as_deref()))]
    Parse {
        /// The context.
        name: String,
        /// Its file, when it came from one.
        path: Option<PathBuf>,
        /// What is wrong with it, and where: the kind of fault and its line and column, never
        /// the text found there (a password of the wrong type would be shown).
        reason: String,
    },
    /// An `env://NAME` reference names a variable that is not set, or is empty.
    #[error("{field}: the environment variable {variable} is not set or is empty")]
    MissingVariable {
        /// The setting holding the reference.
        field: &'static str,
        /// The variable it names.
        variable: String,
    },
    /// A reference of a scheme natscli resolves, written wrongly (`env://` with no name, a
    /// `data:` URI that is not base64, ...).
    #[error("{field}: {reason}")]
    InvalidReference {
        /// The setting holding the reference.
        field: &'static str,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A reference rnats does not resolve: `nsc://` and `op://` (natscli runs the `nsc` and
    /// 1Password programs for them), or a scheme no resolver takes where a file is expected.
    #[error("{field}: {scheme}: references are not supported; name a file, or use env:// or data:")]
    UnsupportedScheme {
        /// The setting holding the reference (`nsc` for natscli's old `nsc` setting).
        field: &'static str,
        /// The scheme, lower case (`nsc`, `op`, ...).
        scheme: String,
    },
    /// A setting rnats cannot honour: the Windows certificate store.
    #[error("the {field} setting is not supported")]
    UnsupportedSetting {
        /// The setting.
        field: &'static str,
    },
    /// The text a `creds` setting resolves to is not a `.creds` file.
    #[error("{field}: {source}")]
    InvalidCredentials {
        /// The setting.
        field: &'static str,
        /// What is wrong with the text.
        #[source]
        source: AuthError,
    },
    /// Connecting with the context's settings failed; the server's refusal of the
    /// credentials is [`ConnectErrorKind::AuthorizationViolation`](crate::ConnectErrorKind).
    #[error("cannot connect: {0}")]
    Connect(#[source] ConnectError),
}

/// ` in PATH`, or nothing.
fn in_file(path: Option<&Path>) -> String {
    path.map(|p| format!(" in {}", p.display()))
        .unwrap_or_default()
}
