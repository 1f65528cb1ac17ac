//! A context's settings made [`ConnectOptions`], with natscli's rules (jsm.go
//! `natscontext`'s `NATSOptions`): which login wins, what turns TLS on.

use super::error::ContextError;
use super::reference::{Env, Material, process_env, resolve_secret_in, tls_path};
use super::settings::Context;
use crate::auth::Credentials;
use crate::{Client, ConnectOptions};

/// What an `nkey` file is called when it cannot be read.
pub(crate) const NKEY_FILE: &str = "NKey seed file";

impl Context {
    /// Connect options with this context's login, TLS and inbox prefix, references resolved
    /// (environment variables and `file://` secrets are read now; a bare `creds` path is
    /// read at every connect, so a rotated file is used by the next reconnect). Connect
    /// them to [`servers`](Self::servers); other options may be set on top.
    ///
    /// natscli's rules: the login is the first set of `user` (with `password`), `creds`,
    /// `nkey`, `user_jwt` (signed for by `user_seed`, or a bearer JWT without one); `token`
    /// is sent as well when set. `ca` trusts that CA and requires TLS, `cert` and `key`
    /// together give the client certificate and require TLS (one without the other is
    /// ignored, as natscli ignores it). `socks_proxy` sends every connection through that
    /// SOCKS5 proxy, the servers' names resolved by it, as natscli does (see
    /// [`natscli_socks_url`](crate::proxy::natscli_socks_url)); a URL that does not parse
    /// fails the connect.
    pub fn connect_options(&self) -> Result<ConnectOptions, ContextError> {
        self.apply(ConnectOptions::new(), &process_env)
    }

    /// Connects to [`servers`](Self::servers) with
    /// [`connect_options`](Self::connect_options).
    pub async fn connect(&self) -> Result<Client, ContextError> {
        self.connect_options()?
            .connect(self.servers())
            .await
            .map_err(ContextError::Connect)
    }

    /// `options` with this context's settings, references resolved in `env`.
    pub(crate) fn apply(
        &self,
        options: ConnectOptions,
        env: Env<'_>,
    ) -> Result<ConnectOptions, ContextError> {
        if self.nsc().is_some() {
            return Err(ContextError::UnsupportedScheme {
                field: "nsc",
                scheme: "nsc".to_owned(),
            });
        }
        if self.windows_cert_store().is_some() {
            return Err(ContextError::UnsupportedSetting {
                field: "windows_cert_store",
            });
        }
        let mut options = self.login(options, env)?;
        if let Some(token) = self.token() {
            options = options.token(resolve_secret_in("token", token, env)?);
        }
        if let (Some(cert), Some(key)) = (self.cert(), self.key()) {
            options = options
                .add_client_certificate(tls_path("cert", cert, env)?, tls_path("key", key, env)?)
                .require_tls(true);
        }
        if let Some(ca) = self.ca() {
            options = options
                .add_root_certificates(tls_path("ca", ca, env)?)
                .require_tls(true);
        }
        if let Some(prefix) = self.inbox_prefix() {
            options = options.custom_inbox_prefix(prefix);
        }
        if self.tls_first() {
            options = options.tls_first();
        }
        if let Some(proxy) = self.socks_proxy() {
            let url = crate::proxy::natscli_socks_url(proxy).map_err(|_| {
                ContextError::UnsupportedScheme {
                    field: "socks_proxy",
                    scheme: proxy.split_once("://").map_or("", |(s, _)| s).to_owned(),
                }
            })?;
            options = options.proxy(url);
        }
        Ok(options)
    }

    /// `options` with the one login natscli picks.
    fn login(
        &self,
        mut options: ConnectOptions,
        env: Env<'_>,
    ) -> Result<ConnectOptions, ContextError> {
        if let Some(user) = self.user() {
            let password = match self.password() {
                Some(password) => resolve_secret_in("password", password, env)?,
                None => String::new(),
            };
            return Ok(options.user_and_password(user.to_owned(), password));
        }
        if let Some(creds) = self.creds() {
            let credentials = match Material::parse_in("creds", creds, env)? {
                // Read at every connect, as `credentials_file` reads it.
                Material::File(path) => {
                    Credentials::CredsFile(std::path::absolute(&path).unwrap_or(path))
                }
                Material::Inline(text) => Credentials::from_creds(&text).map_err(|source| {
                    ContextError::InvalidCredentials {
                        field: "creds",
                        source,
                    }
                })?,
            };
            options.credentials = Some(credentials);
            return Ok(options);
        }
        if let Some(nkey) = self.nkey() {
            let text = Material::parse_in("nkey", nkey, env)?.read_as(NKEY_FILE)?;
            return Ok(options.nkey(nkey_seed(&text).to_owned()));
        }
        if let Some(jwt) = self.user_jwt() {
            let jwt = resolve_secret_in("user_jwt", jwt, env)?;
            return Ok(match self.user_seed() {
                Some(seed) => options.jwt_and_seed(jwt, resolve_secret_in("user_seed", seed, env)?),
                // A bearer JWT: the server asks for no signature.
                None => options.jwt(jwt, |_nonce| async { Ok(Vec::new()) }),
            });
        }
        Ok(options)
    }
}

impl ConnectOptions {
    /// The options of a natscli context: the same as
    /// [`Context::connect_options`](crate::context::Context::connect_options).
    pub fn from_context(context: &Context) -> Result<ConnectOptions, ContextError> {
        context.connect_options()
    }
}

/// The seed in an NKey seed file's `text`: the file may hold the seed alone or decorated, as
/// `nsc` writes keys, between dashed lines; the first line starting with `SU` is the seed.
pub fn nkey_seed(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .find(|line| line.starts_with("SU"))
        .unwrap_or_else(|| text.trim())
}
