//! Credentials that answer the server's nonce challenge: nkeys, user JWTs and `.creds` files.
//!
//! When a server wants nkey or JWT authentication its `INFO` carries a `nonce`. The client signs
//! the nonce's bytes with the user's ed25519 seed and sends the signature in `CONNECT` as `sig`,
//! encoded as URL-safe base64 without padding, next to either the user's public key (`nkey`, for
//! a plain nkey user) or the user JWT (`jwt`, for decentralised auth).
//!
//! Nothing here touches the network. A `.creds` file given by path is read again at every
//! connect, so credentials rotated on disk are the ones the next reconnect presents; reading
//! it is a plain blocking call, which the drivers make on a blocking thread where they can.

use std::fmt;
use std::future::Future;
#[cfg(feature = "nkeys")]
use std::io::Read as _;
#[cfg(feature = "nkeys")]
use std::path::Path;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;

#[cfg(feature = "nkeys")]
use base64::Engine as _;
#[cfg(feature = "nkeys")]
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
#[cfg(feature = "nkeys")]
use nkeys::{KeyPair, KeyPairType};

/// A callback that signs the server's nonce itself, for credentials held elsewhere.
///
/// It receives the nonce's bytes and returns everything `CONNECT` needs.
pub(crate) type SignNonceFn = dyn Fn(&[u8]) -> Result<SignedAuth, AuthError> + Send + Sync;

/// A boxed future, as the async callbacks return them.
type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// async-nats' auth callback: the nonce's bytes in, every credential CONNECT may carry out.
pub(crate) type AuthFn = dyn Fn(Vec<u8>) -> BoxFuture<Result<Auth, AuthError>> + Send + Sync;

/// async-nats' JWT signer: the nonce's bytes in, the raw ed25519 signature out.
#[cfg(feature = "nkeys")]
pub(crate) type SignFn = dyn Fn(Vec<u8>) -> BoxFuture<Result<Vec<u8>, AuthError>> + Send + Sync;

/// Credentials an async auth callback returns (async-nats' `Auth`): any mix of a JWT, a
/// public nkey with the raw nonce `signature`, a user name and password, or a token.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Auth {
    /// The user JWT.
    pub jwt: Option<String>,
    /// The user's public nkey.
    pub nkey: Option<String>,
    /// The raw ed25519 signature of the nonce (rnats encodes it for CONNECT).
    pub signature: Option<Vec<u8>>,
    /// A user name, sent with `password`.
    pub username: Option<String>,
    /// The password for `username`.
    pub password: Option<String>,
    /// A token.
    pub token: Option<String>,
}

impl Auth {
    /// No credentials yet; fill in the fields.
    pub fn new() -> Auth {
        Auth::default()
    }
}

/// Never prints secrets.
impl fmt::Debug for Auth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Auth")
            .field("jwt_len", &self.jwt.as_ref().map(String::len))
            .field("nkey", &self.nkey)
            .field("username", &self.username)
            .field("has_password", &self.password.is_some())
            .field("has_token", &self.token.is_some())
            .finish_non_exhaustive()
    }
}

/// What the credentials put into CONNECT at one connect.
#[derive(Default)]
pub(crate) struct Proof {
    pub(crate) jwt: Option<String>,
    pub(crate) nkey: Option<String>,
    /// URL-safe base64 without padding.
    pub(crate) sig: Option<String>,
    pub(crate) user_and_password: Option<(String, String)>,
    pub(crate) token: Option<String>,
}

impl From<SignedAuth> for Proof {
    fn from(signed: SignedAuth) -> Proof {
        Proof {
            jwt: signed.jwt,
            nkey: signed.nkey,
            sig: Some(signed.sig),
            ..Proof::default()
        }
    }
}

impl TryFrom<Auth> for Proof {
    type Error = AuthError;

    /// Fails for a `signature` without the `nkeys` feature, which encodes it (as async-nats
    /// refuses it there).
    fn try_from(auth: Auth) -> Result<Proof, AuthError> {
        let user_and_password = match (auth.username, auth.password) {
            (Some(user), password) => Some((user, password.unwrap_or_default())),
            (None, _) => None,
        };
        Ok(Proof {
            jwt: auth.jwt,
            nkey: auth.nkey,
            sig: auth.signature.map(encode_signature).transpose()?,
            user_and_password,
            token: auth.token,
        })
    }
}

/// A raw nonce signature as CONNECT carries it: URL-safe base64 without padding.
#[cfg(feature = "nkeys")]
fn encode_signature(sig: Vec<u8>) -> Result<String, AuthError> {
    Ok(URL_SAFE_NO_PAD.encode(sig))
}

/// Without the `nkeys` feature there is no encoder, and so no signature.
#[cfg(not(feature = "nkeys"))]
fn encode_signature(_sig: Vec<u8>) -> Result<String, AuthError> {
    Err(AuthError::Callback(
        "the auth callback returned a signature, which needs rnats' `nkeys` feature".to_owned(),
    ))
}

/// How the client proves who it is, beyond token/user-password.
///
/// `Debug` never prints a seed; of a JWT it prints only the length.
#[derive(Clone)]
pub(crate) enum Credentials {
    #[cfg(feature = "nkeys")]
    /// A plain nkey user: the seed signs the server's nonce, the public key goes in CONNECT.
    NKey {
        /// The user's nkey seed (`SU...`).
        seed: Secret,
    },
    #[cfg(feature = "nkeys")]
    /// A JWT plus the seed that signs the nonce (from a .creds file or strings).
    Jwt {
        /// The user JWT, sent as is.
        jwt: String,
        /// The user's nkey seed (`SU...`) matching the JWT's subject.
        seed: Secret,
    },
    /// Called at every connect to get (jwt, signature) or just a signature from the nonce; for
    /// dynamic credentials.
    Callback(Arc<SignNonceFn>),
    /// async-nats' auth callback, awaited at every connect.
    AsyncCallback(Arc<AuthFn>),
    #[cfg(feature = "nkeys")]
    /// A `.creds` file, read again at every connect, so a user JWT replaced on disk is the
    /// one the next reconnect presents.
    CredsFile(PathBuf),
    #[cfg(feature = "nkeys")]
    /// A JWT whose nonce signature an async callback makes (async-nats' `with_jwt`).
    JwtCallback {
        /// The user JWT, sent as is.
        jwt: String,
        /// Signs the nonce.
        sign: Arc<SignFn>,
    },
}

impl Credentials {
    /// Builds nkey credentials from a user seed, checking that it decodes as a user seed.
    /// (`ConnectOptions::nkey` stores the seed unchecked; signing at connect checks it.)
    #[cfg(all(test, feature = "nkeys"))]
    pub(crate) fn from_seed(seed: &str) -> Result<Credentials, AuthError> {
        let seed = seed.trim();
        user_key_pair(seed)?;
        Ok(Credentials::NKey {
            seed: Secret::new(seed),
        })
    }

    #[cfg(feature = "nkeys")]
    /// Parses the text of a `.creds` file: a user JWT block and a user nkey seed block.
    pub(crate) fn from_creds(text: &str) -> Result<Credentials, AuthError> {
        let blocks = CredsBlocks::parse(text)?;
        let jwt = blocks.jwt.ok_or(AuthError::InvalidCreds {
            reason: "no `BEGIN NATS USER JWT` block",
        })?;
        let seed = blocks.seed.ok_or(AuthError::InvalidCreds {
            reason: "no `BEGIN USER NKEY SEED` block",
        })?;
        Credentials::from_jwt_and_seed(jwt, seed)
    }

    #[cfg(feature = "nkeys")]
    /// Reads a `.creds` file and parses it like [`Credentials::from_creds`].
    ///
    /// This blocks on the file system.
    pub(crate) fn from_creds_file(path: &Path) -> Result<Credentials, AuthError> {
        let io_error = |source| AuthError::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = std::fs::File::open(path).map_err(io_error)?;
        // A real .creds file is about a kilobyte; the cap keeps a wrong path (a device, a log)
        // from being read whole.
        let mut text = String::new();
        file.take(MAX_CREDS_FILE_LEN + 1)
            .read_to_string(&mut text)
            .map_err(io_error)?;
        if text.len() as u64 > MAX_CREDS_FILE_LEN {
            return Err(AuthError::InvalidCreds {
                reason: "file is larger than 64 KiB",
            });
        }
        Credentials::from_creds(&text)
    }

    #[cfg(feature = "nkeys")]
    /// Builds JWT credentials from a user JWT and the user seed that signs for it.
    pub(crate) fn from_jwt_and_seed(jwt: &str, seed: &str) -> Result<Credentials, AuthError> {
        let jwt = jwt.trim();
        check_jwt(jwt)?;
        let seed = seed.trim();
        user_key_pair(seed)?;
        Ok(Credentials::Jwt {
            jwt: jwt.to_owned(),
            seed: Secret::new(seed),
        })
    }

    /// Wraps a callback that signs the nonce itself, called again at every connect.
    pub(crate) fn from_callback<F>(sign_nonce: F) -> Credentials
    where
        F: Fn(&[u8]) -> Result<SignedAuth, AuthError> + Send + Sync + 'static,
    {
        Credentials::Callback(Arc::new(sign_nonce))
    }

    /// Wraps async-nats' async auth callback.
    pub(crate) fn from_async_callback<F, Fut>(callback: F) -> Credentials
    where
        F: Fn(Vec<u8>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Auth, AuthError>> + Send + 'static,
    {
        Credentials::AsyncCallback(Arc::new(move |nonce| Box::pin(callback(nonce))))
    }

    #[cfg(feature = "nkeys")]
    /// Wraps a JWT and async-nats' async nonce signer.
    pub(crate) fn from_jwt_callback<F, Fut>(jwt: String, sign: F) -> Credentials
    where
        F: Fn(Vec<u8>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<u8>, AuthError>> + Send + 'static,
    {
        Credentials::JwtCallback {
            jwt,
            sign: Arc::new(move |nonce| Box::pin(sign(nonce))),
        }
    }

    /// What goes into CONNECT for a server that sent `nonce` (empty when it sent none).
    ///
    /// The async auth callback is asked at every connect, nonce or not, since it may answer
    /// with a token or a password; the other credentials only sign a nonce, and without one
    /// there is nothing to prove, so nothing is sent.
    pub(crate) async fn prove(&self, nonce: &str) -> Result<Proof, AuthError> {
        match self {
            Credentials::AsyncCallback(callback) => {
                callback(nonce.as_bytes().to_vec()).await?.try_into()
            }
            _ if nonce.is_empty() => Ok(Proof::default()),
            #[cfg(feature = "nkeys")]
            Credentials::JwtCallback { jwt, sign } => {
                let sig = sign(nonce.as_bytes().to_vec()).await?;
                Ok(Proof {
                    jwt: Some(jwt.clone()),
                    sig: Some(encode_signature(sig)?),
                    ..Proof::default()
                })
            }
            signer => Ok(signer.sign(nonce)?.into()),
        }
    }

    /// Signs the server's nonce (INFO `nonce`, as bytes of the string) and returns what CONNECT
    /// needs.
    ///
    /// An empty nonce is [`AuthError::MissingNonce`]: a server that asks for nkey or JWT auth
    /// always sends one, and signing nothing would prove nothing.
    pub(crate) fn sign(&self, nonce: &str) -> Result<SignedAuth, AuthError> {
        if nonce.is_empty() {
            return Err(AuthError::MissingNonce);
        }
        match self {
            #[cfg(feature = "nkeys")]
            Credentials::NKey { seed } => {
                let key_pair = user_key_pair(seed.expose())?;
                Ok(SignedAuth {
                    jwt: None,
                    nkey: Some(key_pair.public_key()),
                    sig: sign_nonce(&key_pair, nonce)?,
                })
            }
            #[cfg(feature = "nkeys")]
            Credentials::Jwt { jwt, seed } => {
                let key_pair = user_key_pair(seed.expose())?;
                // With a JWT the server takes the public key from the JWT's subject, so `nkey`
                // stays out of CONNECT (as nats.go and nats.rs do).
                Ok(SignedAuth {
                    jwt: Some(jwt.clone()),
                    nkey: None,
                    sig: sign_nonce(&key_pair, nonce)?,
                })
            }
            Credentials::Callback(sign) => sign(nonce.as_bytes()),
            // The drivers read the file off their thread first (`connect_info::prove`); this
            // reads it here.
            #[cfg(feature = "nkeys")]
            Credentials::CredsFile(path) => Credentials::from_creds_file(path)?.sign(nonce),
            #[cfg(feature = "nkeys")]
            Credentials::JwtCallback { .. } => Err(AuthError::Callback(
                "an async callback cannot sign synchronously".to_owned(),
            )),
            Credentials::AsyncCallback(_) => Err(AuthError::Callback(
                "an async callback cannot sign synchronously".to_owned(),
            )),
        }
    }
}

#[cfg(feature = "nkeys")]
/// A secret string (an nkey seed) whose `Debug` prints `<redacted>`.
///
/// The memory is not wiped on drop; the type only keeps the value out of logs.
#[derive(Clone)]
pub(crate) struct Secret(String);

#[cfg(feature = "nkeys")]
impl Secret {
    /// Wraps a secret value.
    pub(crate) fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    /// The secret itself, for the one place that must use it.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

/// What goes into CONNECT.
#[derive(Clone, PartialEq, Eq)]
pub struct SignedAuth {
    /// The user JWT (`jwt` field), for decentralised auth.
    pub jwt: Option<String>,
    /// The user's public nkey (`nkey` field), for a plain nkey user.
    pub nkey: Option<String>,
    /// The nonce signature, URL-safe base64 without padding (`sig` field).
    pub sig: String,
}

/// Why credentials could not be loaded or could not answer the server's nonce.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// The seed is not a valid nkey seed (bad encoding or checksum).
    #[error("invalid nkey seed")]
    InvalidSeed,
    /// The seed is a valid nkey seed but not a user's (`SU...`).
    #[error("the nkey seed is not a user seed (expected one starting with `SU`)")]
    NotUserSeed,
    /// The user JWT is empty or holds characters a JWT cannot.
    #[error("invalid user JWT: {reason}")]
    InvalidJwt {
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The `.creds` text does not hold exactly one JWT block and one seed block.
    #[error("invalid credentials file: {reason}")]
    InvalidCreds {
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The credentials file could not be read.
    #[error("cannot read credentials file {}", path.display())]
    Io {
        /// The file that was being read.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The server asked for a signature but sent no nonce to sign.
    #[error("the server sent no nonce to sign")]
    MissingNonce,
    /// The user's signing callback failed.
    #[error("credentials callback failed: {0}")]
    Callback(String),
}

impl AuthError {
    /// An error of the user's own signing callback, described by `reason` (async-nats'
    /// constructor).
    pub fn new(reason: impl ToString) -> AuthError {
        AuthError::Callback(reason.to_string())
    }
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            #[cfg(feature = "nkeys")]
            Credentials::NKey { seed } => f.debug_struct("NKey").field("seed", seed).finish(),
            #[cfg(feature = "nkeys")]
            Credentials::Jwt { jwt, seed } => f
                .debug_struct("Jwt")
                .field("jwt_len", &jwt.len())
                .field("seed", seed)
                .finish(),
            Credentials::Callback(_) | Credentials::AsyncCallback(_) => f
                .debug_tuple("Callback")
                .field(&format_args!("<fn>"))
                .finish(),
            #[cfg(feature = "nkeys")]
            Credentials::CredsFile(path) => f.debug_tuple("CredsFile").field(path).finish(),
            #[cfg(feature = "nkeys")]
            Credentials::JwtCallback { jwt, .. } => f
                .debug_struct("JwtCallback")
                .field("jwt_len", &jwt.len())
                .finish_non_exhaustive(),
        }
    }
}

#[cfg(feature = "nkeys")]
impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

impl fmt::Debug for SignedAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The public key is public; the JWT is a bearer of identity, so only its length shows.
        f.debug_struct("SignedAuth")
            .field("jwt_len", &self.jwt.as_ref().map(String::len))
            .field("nkey", &self.nkey)
            .field("sig", &format_args!("<redacted>"))
            .finish()
    }
}

#[cfg(feature = "nkeys")]
/// The largest `.creds` file read, in bytes.
const MAX_CREDS_FILE_LEN: u64 = 64 * 1024;

#[cfg(feature = "nkeys")]
/// Decodes a seed and checks that it belongs to a user, the only kind a client connects as.
fn user_key_pair(seed: &str) -> Result<KeyPair, AuthError> {
    // The nkeys error is dropped on purpose: the seed must not travel into messages.
    let key_pair = KeyPair::from_seed(seed).map_err(|_| AuthError::InvalidSeed)?;
    if key_pair.key_pair_type() != KeyPairType::User {
        return Err(AuthError::NotUserSeed);
    }
    Ok(key_pair)
}

#[cfg(feature = "nkeys")]
/// Signs the nonce's bytes; NATS wants the signature as URL-safe base64 without padding.
fn sign_nonce(key_pair: &KeyPair, nonce: &str) -> Result<String, AuthError> {
    // nkeys only fails to sign for a key pair without a seed, which `from_seed` never builds.
    let sig = key_pair
        .sign(nonce.as_bytes())
        .map_err(|_| AuthError::InvalidSeed)?;
    Ok(URL_SAFE_NO_PAD.encode(sig))
}

#[cfg(feature = "nkeys")]
/// Checks the JWT enough to keep junk out of CONNECT; the server verifies it for real.
fn check_jwt(jwt: &str) -> Result<(), AuthError> {
    if jwt.is_empty() {
        return Err(AuthError::InvalidJwt {
            reason: "it is empty",
        });
    }
    // Same alphabet that nkeys' decorated-JWT pattern accepts: base64url, dots, padding.
    let jwt_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '=');
    if !jwt.chars().all(jwt_char) {
        return Err(AuthError::InvalidJwt {
            reason: "it holds characters outside base64url and `.`",
        });
    }
    Ok(())
}

#[cfg(feature = "nkeys")]
/// The two blocks of a `.creds` file, borrowed from its text.
///
/// The layout, as `nsc generate creds` writes it, is free text around
///
/// ```text
/// -----BEGIN NATS USER JWT-----
/// eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ...
/// ------END NATS USER JWT------
///
/// -----BEGIN USER NKEY SEED-----
/// SUAB...
/// ------END USER NKEY SEED------
/// ```
///
/// Like nats.go, a block starts at a line of the form `---...LABEL...---` and its value is the
/// next line. Lines are trimmed, so CRLF endings and indentation are fine; blank lines inside a
/// block are skipped. A block is told apart by its label (`...JWT` or `...SEED`) rather than by
/// its position, and must be closed by another dashes line.
#[derive(Default)]
struct CredsBlocks<'a> {
    jwt: Option<&'a str>,
    seed: Option<&'a str>,
}

#[cfg(feature = "nkeys")]
/// Which value a `BEGIN` line introduces.
enum BlockKind {
    Jwt,
    Seed,
}

#[cfg(feature = "nkeys")]
impl<'a> CredsBlocks<'a> {
    fn parse(text: &'a str) -> Result<CredsBlocks<'a>, AuthError> {
        let mut blocks = CredsBlocks::default();
        // `lines` splits on `\n` and drops a `\r` before it; `trim` catches any stray one.
        let mut lines = text.lines().map(str::trim).filter(|line| !line.is_empty());
        while let Some(line) = lines.next() {
            let Some(kind) = dashes_label(line).and_then(begin_kind) else {
                continue;
            };
            let value = match lines.next() {
                Some(value) if dashes_label(value).is_none() => value,
                _ => return Err(kind.invalid(BlockProblem::Empty)),
            };
            if lines.next().is_none_or(|end| dashes_label(end).is_none()) {
                return Err(kind.invalid(BlockProblem::NotClosed));
            }
            let slot = match kind {
                BlockKind::Jwt => &mut blocks.jwt,
                BlockKind::Seed => &mut blocks.seed,
            };
            if slot.replace(value).is_some() {
                return Err(kind.invalid(BlockProblem::Twice));
            }
        }
        Ok(blocks)
    }
}

#[cfg(feature = "nkeys")]
/// What can be wrong with one block of a `.creds` file.
#[derive(Clone, Copy)]
enum BlockProblem {
    Empty,
    NotClosed,
    Twice,
}

#[cfg(feature = "nkeys")]
impl BlockKind {
    /// An error naming the block and its problem, never its content.
    fn invalid(&self, problem: BlockProblem) -> AuthError {
        // `reason` is a static string, so every pair is spelled out.
        let reason = match (self, problem) {
            (BlockKind::Jwt, BlockProblem::Empty) => "the user JWT block is empty",
            (BlockKind::Seed, BlockProblem::Empty) => "the user nkey seed block is empty",
            (BlockKind::Jwt, BlockProblem::NotClosed) => {
                "the user JWT block is not closed after its one-line value"
            }
            (BlockKind::Seed, BlockProblem::NotClosed) => {
                "the user nkey seed block is not closed after its one-line value"
            }
            (BlockKind::Jwt, BlockProblem::Twice) => "more than one user JWT block",
            (BlockKind::Seed, BlockProblem::Twice) => "more than one user nkey seed block",
        };
        AuthError::InvalidCreds { reason }
    }
}

#[cfg(feature = "nkeys")]
/// The label of a `---...---` marker line, or `None` for any other line.
fn dashes_label(line: &str) -> Option<&str> {
    let inner = line.strip_prefix("---")?.strip_suffix("---")?;
    let label = inner.trim_matches('-').trim();
    (!label.is_empty()).then_some(label)
}

#[cfg(feature = "nkeys")]
/// Which block a marker label opens, if it is a `BEGIN` line for one we know.
fn begin_kind(label: &str) -> Option<BlockKind> {
    let what = label.strip_prefix("BEGIN")?.trim_start();
    if what.ends_with("JWT") {
        Some(BlockKind::Jwt)
    } else if what.ends_with("SEED") {
        Some(BlockKind::Seed)
    } else {
        None
    }
}

#[cfg(all(test, feature = "nkeys"))]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    const DUMMY_JWT: &str = "eyJ0eXAiOiJKV1QifQ.eyJzdWIiOiJVQUJDIn0.c2lnbmF0dXJl";

    fn user_seed() -> (KeyPair, String) {
        let key_pair = KeyPair::new_user();
        let seed = key_pair.seed().unwrap();
        (key_pair, seed)
    }

    fn creds_text(jwt: &str, seed: &str) -> String {
        format!(
            "-----BEGIN NATS USER JWT-----\n{jwt}\n------END NATS USER JWT------\n\n\
             ************************* IMPORTANT *************************\n\
             NKEY Seed printed below can be used to sign and prove identity.\n\
             NKEYs are sensitive and should be treated as secrets.\n\n\
             -----BEGIN USER NKEY SEED-----\n{seed}\n------END USER NKEY SEED------\n\n\
             *************************************************************\n"
        )
    }

    fn verify(public_key: &str, nonce: &str, sig: &str) {
        assert!(
            !sig.contains(['=', '+', '/']),
            "sig must be URL-safe base64 without padding: {sig}"
        );
        let sig_bytes = URL_SAFE_NO_PAD.decode(sig).unwrap();
        assert_eq!(sig_bytes.len(), 64);
        KeyPair::from_public_key(public_key)
            .unwrap()
            .verify(nonce.as_bytes(), &sig_bytes)
            .unwrap();
    }

    fn creds_reason(result: Result<Credentials, AuthError>) -> &'static str {
        match result {
            Err(AuthError::InvalidCreds { reason }) => reason,
            other => panic!("expected InvalidCreds, got {other:?}"),
        }
    }

    #[test]
    fn creds_round_trip() {
        let (_, seed) = user_seed();
        let creds = Credentials::from_creds(&creds_text(DUMMY_JWT, &seed)).unwrap();
        match creds {
            Credentials::Jwt { jwt, seed: parsed } => {
                assert_eq!(jwt, DUMMY_JWT);
                assert_eq!(parsed.expose(), seed);
            }
            other => panic!("expected Jwt credentials, got {other:?}"),
        }
    }

    #[test]
    fn creds_with_crlf_and_indentation_parse() {
        let (_, seed) = user_seed();
        let text = creds_text(DUMMY_JWT, &seed)
            .lines()
            .map(|line| format!("   {line}  \r\n"))
            .collect::<String>();
        let creds = Credentials::from_creds(&text).unwrap();
        let Credentials::Jwt { jwt, seed: parsed } = creds else {
            panic!("expected Jwt credentials");
        };
        assert_eq!(jwt, DUMMY_JWT);
        assert_eq!(parsed.expose(), seed);
    }

    #[test]
    fn jwt_credentials_sign_the_nonce() {
        let (key_pair, seed) = user_seed();
        let creds = Credentials::from_creds(&creds_text(DUMMY_JWT, &seed)).unwrap();
        let nonce = "PXoWU7zWAMt75FY";
        let signed = creds.sign(nonce).unwrap();
        assert_eq!(signed.jwt.as_deref(), Some(DUMMY_JWT));
        assert_eq!(signed.nkey, None);
        verify(&key_pair.public_key(), nonce, &signed.sig);
    }

    #[test]
    fn nkey_credentials_sign_the_nonce_and_send_the_public_key() {
        let (key_pair, seed) = user_seed();
        let creds = Credentials::from_seed(&seed).unwrap();
        let nonce = "a-nonce_from=INFO";
        let signed = creds.sign(nonce).unwrap();
        assert_eq!(signed.jwt, None);
        assert_eq!(signed.nkey, Some(key_pair.public_key()));
        verify(&key_pair.public_key(), nonce, &signed.sig);
    }

    #[test]
    fn from_jwt_and_seed_matches_creds() {
        let (key_pair, seed) = user_seed();
        let creds = Credentials::from_jwt_and_seed(DUMMY_JWT, &seed).unwrap();
        let signed = creds.sign("n").unwrap();
        assert_eq!(signed.jwt.as_deref(), Some(DUMMY_JWT));
        verify(&key_pair.public_key(), "n", &signed.sig);
    }

    #[test]
    fn empty_nonce_is_missing() {
        let (_, seed) = user_seed();
        let creds = Credentials::from_seed(&seed).unwrap();
        assert!(matches!(creds.sign(""), Err(AuthError::MissingNonce)));
    }

    #[test]
    fn missing_seed_block_is_rejected() {
        let text = "-----BEGIN NATS USER JWT-----\nabc.def.ghi\n------END NATS USER JWT------\n";
        assert!(creds_reason(Credentials::from_creds(text)).contains("SEED"));
    }

    #[test]
    fn missing_jwt_block_is_rejected() {
        let (_, seed) = user_seed();
        let text =
            format!("-----BEGIN USER NKEY SEED-----\n{seed}\n------END USER NKEY SEED------\n");
        assert!(creds_reason(Credentials::from_creds(&text)).contains("JWT"));
        assert!(creds_reason(Credentials::from_creds("just some text\n")).contains("JWT"));
    }

    #[test]
    fn garbage_seed_is_invalid() {
        let text = creds_text(DUMMY_JWT, "SUNOTAREALSEED");
        assert!(matches!(
            Credentials::from_creds(&text),
            Err(AuthError::InvalidSeed)
        ));
        assert!(matches!(
            Credentials::from_seed("hello"),
            Err(AuthError::InvalidSeed)
        ));
    }

    #[test]
    fn non_user_seed_is_rejected() {
        let account_seed = KeyPair::new_account().seed().unwrap();
        assert!(matches!(
            Credentials::from_seed(&account_seed),
            Err(AuthError::NotUserSeed)
        ));
    }

    #[test]
    fn malformed_blocks_are_rejected() {
        let (_, seed) = user_seed();
        let unclosed = format!(
            "-----BEGIN NATS USER JWT-----\n{DUMMY_JWT}\nmore text\n\
             -----BEGIN USER NKEY SEED-----\n{seed}\n------END USER NKEY SEED------\n"
        );
        assert!(creds_reason(Credentials::from_creds(&unclosed)).contains("not closed"));

        let empty = "-----BEGIN NATS USER JWT-----\n------END NATS USER JWT------\n";
        assert!(creds_reason(Credentials::from_creds(empty)).contains("empty"));

        let twice = format!(
            "{}{}",
            creds_text(DUMMY_JWT, &seed),
            creds_text(DUMMY_JWT, &seed)
        );
        assert!(creds_reason(Credentials::from_creds(&twice)).contains("more than one"));

        let bad_jwt = creds_text("not a jwt", &seed);
        assert!(matches!(
            Credentials::from_creds(&bad_jwt),
            Err(AuthError::InvalidJwt { .. })
        ));
        assert!(matches!(
            Credentials::from_jwt_and_seed("has space", &seed),
            Err(AuthError::InvalidJwt { .. })
        ));
    }

    #[test]
    fn debug_never_shows_secrets() {
        let (key_pair, seed) = user_seed();
        let secret_part = &seed[2..];
        let jwt_creds = Credentials::from_jwt_and_seed(DUMMY_JWT, &seed).unwrap();
        let nkey_creds = Credentials::from_seed(&seed).unwrap();
        let signed = jwt_creds.sign("nonce").unwrap();
        let callback = Credentials::from_callback(|_| Err(AuthError::Callback("no".into())));
        for shown in [
            format!("{jwt_creds:?}"),
            format!("{nkey_creds:?}"),
            format!("{signed:?}"),
            format!("{callback:?}"),
            format!("{:?}", Secret::new(seed.clone())),
        ] {
            assert!(!shown.contains(secret_part), "seed leaked: {shown}");
            assert!(!shown.contains(DUMMY_JWT), "JWT leaked: {shown}");
            assert!(!shown.contains(&signed.sig), "signature leaked: {shown}");
        }
        assert!(format!("{jwt_creds:?}").contains(&DUMMY_JWT.len().to_string()));
        assert!(format!("{nkey_creds:?}").contains("<redacted>"));
        // The public key is not secret, and helps when debugging a rejected CONNECT.
        let nkey_signed = nkey_creds.sign("nonce").unwrap();
        assert!(format!("{nkey_signed:?}").contains(&key_pair.public_key()));
    }

    #[test]
    fn callback_gets_the_nonce_bytes() {
        let creds = Credentials::from_callback(|nonce| {
            Ok(SignedAuth {
                jwt: Some("j.w.t".to_owned()),
                nkey: None,
                sig: String::from_utf8_lossy(nonce).into_owned(),
            })
        });
        let signed = creds.clone().sign("abc").unwrap();
        assert_eq!(signed.sig, "abc");
        assert_eq!(signed.jwt.as_deref(), Some("j.w.t"));

        let failing = Credentials::from_callback(|_| Err(AuthError::Callback("vault down".into())));
        let err = failing.sign("abc").unwrap_err();
        assert_eq!(err.to_string(), "credentials callback failed: vault down");
    }

    #[test]
    fn creds_file_is_read_and_missing_file_names_its_path() {
        let (_, seed) = user_seed();
        let dir = std::env::temp_dir().join(format!("rnats-auth-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("user.creds");
        std::fs::write(&path, creds_text(DUMMY_JWT, &seed)).unwrap();
        let creds = Credentials::from_creds_file(&path).unwrap();
        assert!(matches!(creds, Credentials::Jwt { .. }));

        let missing = dir.join("missing.creds");
        let err = Credentials::from_creds_file(&missing).unwrap_err();
        assert!(matches!(err, AuthError::Io { .. }));
        assert!(err.to_string().contains("missing.creds"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
