//! How commands reach a server: the shared connection flags, the natscli context that
//! supplies their defaults, and the connect itself.

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;
use rnats::context::{Context, Material, nkey_seed, resolve_path, resolve_secret};
use rnats::jetstream::{self, ContextBuilder};
use rnats::{Client, ConnectOptions};

use crate::context::store::Store;
use crate::error::CliError;

/// The server natscli and nats.go use when nothing names one.
pub(crate) const DEFAULT_URL: &str = "nats://127.0.0.1:4222";

/// Connection flags, global as natscli's are: they go before or after the subcommand
/// (`rnats --context local req x hi`, `rnats req x hi --context local`). Unset ones come
/// from the selected (or `--context`) natscli context; names and environment variables are
/// natscli's, with rnats' earlier `--tls-*` spellings kept as aliases.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Connection")]
pub(crate) struct ConnArgs {
    /// Server URL(s), comma separated [default: the context's, else nats://127.0.0.1:4222].
    #[arg(long, short = 's', env = "NATS_URL", value_name = "URL", global = true)]
    pub(crate) server: Option<String>,
    /// User name; without --password, a token (as natscli takes it).
    #[arg(long, env = "NATS_USER", global = true)]
    pub(crate) user: Option<String>,
    /// Password.
    #[arg(long, env = "NATS_PASSWORD", hide_env_values = true, global = true)]
    pub(crate) password: Option<String>,
    /// Authentication token.
    #[arg(long, env = "NATS_TOKEN", hide_env_values = true, global = true)]
    pub(crate) token: Option<String>,
    /// User credentials file (JWT and NKey seed).
    #[arg(long, env = "NATS_CREDS", value_name = "FILE", global = true)]
    pub(crate) creds: Option<PathBuf>,
    /// NKey seed file.
    #[arg(long, env = "NATS_NKEY", value_name = "FILE", global = true)]
    pub(crate) nkey: Option<PathBuf>,
    /// User JWT (the JWT itself, or env://NAME, file://PATH), with --seed.
    #[arg(
        long,
        env = "NATS_JWT",
        hide_env_values = true,
        value_name = "LOCATION",
        global = true
    )]
    pub(crate) jwt: Option<String>,
    /// User NKey seed signing for --jwt (the seed itself, or env://NAME, file://PATH).
    #[arg(
        long,
        env = "NATS_SEED",
        hide_env_values = true,
        value_name = "LOCATION",
        global = true
    )]
    pub(crate) seed: Option<String>,
    /// CA certificate(s) to verify the server with (turns TLS on).
    #[arg(
        long = "tlsca",
        visible_alias = "tls-ca",
        env = "NATS_CA",
        value_name = "FILE",
        global = true
    )]
    pub(crate) tls_ca: Option<PathBuf>,
    /// Client certificate for TLS.
    #[arg(
        long = "tlscert",
        visible_alias = "tls-cert",
        env = "NATS_CERT",
        value_name = "FILE",
        global = true
    )]
    pub(crate) tls_cert: Option<PathBuf>,
    /// Private key of the client certificate.
    #[arg(
        long = "tlskey",
        visible_alias = "tls-key",
        env = "NATS_KEY",
        value_name = "FILE",
        global = true
    )]
    pub(crate) tls_key: Option<PathBuf>,
    /// Do the TLS handshake before the server's INFO.
    #[arg(long = "tlsfirst", visible_alias = "tls-first", global = true)]
    pub(crate) tls_first: bool,
    /// SOCKS5 proxy to reach the servers through: socks5://[user:password@]host[:port].
    #[arg(long, env = "NATS_SOCKS_PROXY", value_name = "PROXY", global = true)]
    pub(crate) socks_proxy: Option<String>,
    /// Connect and request timeout, e.g. 2s or 500ms [default: 5s].
    #[arg(long, env = "NATS_TIMEOUT", value_name = "DURATION", value_parser = parse_duration, global = true)]
    pub(crate) timeout: Option<Duration>,
    /// natscli context to use instead of the selected one (a name, or a path to a .json file).
    #[arg(long, env = "NATS_CONTEXT", value_name = "NAME", global = true)]
    pub(crate) context: Option<String>,
    /// Use no context, not even the selected one.
    #[arg(long, global = true, conflicts_with = "context")]
    pub(crate) no_context: bool,
    /// The connection's name, shown in the server's monitoring.
    #[arg(long, value_name = "NAME", global = true)]
    pub(crate) connection_name: Option<String>,
    /// JetStream domain to use.
    #[arg(long, value_name = "DOMAIN", global = true)]
    pub(crate) js_domain: Option<String>,
    /// Subject prefix of the JetStream API.
    #[arg(long, value_name = "PREFIX", global = true)]
    pub(crate) js_api_prefix: Option<String>,
    /// Subject prefix of JetStream advisories.
    #[arg(long, value_name = "PREFIX", global = true)]
    pub(crate) js_event_prefix: Option<String>,
    /// Prefix of the connection's reply inboxes.
    #[arg(long, value_name = "PREFIX", global = true)]
    pub(crate) inbox_prefix: Option<String>,
    /// Print each JetStream API request and its reply on stderr.
    #[arg(long, global = true)]
    pub(crate) trace: bool,
}

/// Parses a duration flag for clap.
pub(crate) fn parse_duration(text: &str) -> Result<Duration, String> {
    crate::parse::duration(text).map_err(|e| e.to_string())
}

/// A setting of a context, by its accessor.
type Setting = fn(&Context) -> Option<&str>;

/// Flags and context merged: what a connect uses.
#[derive(Debug, Clone, Default)]
pub(crate) struct Settings {
    /// Server URL(s).
    pub(crate) url: String,
    user: Option<String>,
    password: Option<String>,
    token: Option<String>,
    creds: Option<Material>,
    nkey: Option<Material>,
    /// A user JWT and, unless it is a bearer JWT, the seed that signs for it.
    user_jwt: Option<(String, Option<String>)>,
    ca: Option<PathBuf>,
    cert: Option<PathBuf>,
    key: Option<PathBuf>,
    tls_first: bool,
    /// The SOCKS5 proxy as a URL for `ConnectOptions::proxy`, checked.
    socks_proxy: Option<String>,
    inbox_prefix: Option<String>,
    js_domain: Option<String>,
    js_api_prefix: Option<String>,
    connection_name: String,
    /// Connect and request timeout.
    pub(crate) timeout: Duration,
}

impl ConnArgs {
    /// The settings: flags first, then the context, then the defaults. Credentials may be
    /// references (`env://NAME`, `file://PATH`, `data:;base64,...`), resolved here by the
    /// library as natscli resolves them.
    pub(crate) fn settings(&self) -> Result<Settings, CliError> {
        let context = self.load_context()?;
        let ctx = |setting: Setting| {
            context
                .as_ref()
                .and_then(|(_, c)| setting(c).map(str::to_owned))
        };
        // A context's TLS paths as natscli reads them (`file://` too); the flags' are paths.
        let ctx_path = |field: &'static str, setting: Setting| {
            ctx(setting)
                .map(|path| resolve_path(field, &path))
                .transpose()
        };
        if let Some((name, file)) = &context
            && (file.nsc().is_some() || file.creds().is_some_and(|c| c.starts_with("nsc://")))
        {
            return Err(CliError::UnsupportedContext {
                name: name.clone(),
                reason: "nsc lookups are not supported; point `creds` at a credentials file",
            });
        }
        let (user, password, token) = self.identity(&ctx);
        let value = |field: &'static str, text: Option<String>| {
            text.map(|text| resolve_secret(field, &text)).transpose()
        };
        let material = |field: &'static str, text: Option<String>| {
            text.map(|text| Material::parse(field, &text)).transpose()
        };
        let path_text = |p: &PathBuf| p.to_string_lossy().into_owned();
        let jwt = value(
            "user_jwt",
            self.jwt.clone().or_else(|| ctx(Context::user_jwt)),
        )?;
        let seed = value(
            "user_seed",
            self.seed.clone().or_else(|| ctx(Context::user_seed)),
        )?;
        Ok(Settings {
            url: self
                .server
                .clone()
                .or_else(|| ctx(Context::url))
                .unwrap_or_else(|| DEFAULT_URL.to_owned()),
            user,
            password: value("password", password)?,
            token: value("token", token)?,
            creds: material(
                "creds",
                self.creds
                    .as_ref()
                    .map(path_text)
                    .or_else(|| ctx(Context::creds)),
            )?,
            nkey: material(
                "nkey",
                self.nkey
                    .as_ref()
                    .map(path_text)
                    .or_else(|| ctx(Context::nkey)),
            )?,
            user_jwt: jwt.map(|jwt| (jwt, seed)),
            ca: self
                .tls_ca
                .clone()
                .map_or_else(|| ctx_path("ca", Context::ca), |p| Ok(Some(p)))?,
            cert: (self.tls_cert.clone())
                .map_or_else(|| ctx_path("cert", Context::cert), |p| Ok(Some(p)))?,
            key: (self.tls_key.clone())
                .map_or_else(|| ctx_path("key", Context::key), |p| Ok(Some(p)))?,
            tls_first: self.tls_first || context.as_ref().is_some_and(|(_, c)| c.tls_first()),
            socks_proxy: self
                .socks_proxy
                .clone()
                .or_else(|| ctx(Context::socks_proxy))
                .filter(|proxy| !proxy.is_empty())
                .map(|proxy| socks_proxy_url(&proxy))
                .transpose()?,
            inbox_prefix: self
                .inbox_prefix
                .clone()
                .or_else(|| ctx(Context::inbox_prefix)),
            js_domain: self
                .js_domain
                .clone()
                .or_else(|| ctx(Context::jetstream_domain)),
            js_api_prefix: self
                .js_api_prefix
                .clone()
                .or_else(|| ctx(Context::jetstream_api_prefix)),
            connection_name: self
                .connection_name
                .clone()
                .unwrap_or_else(|| "rnats".to_owned()),
            timeout: self.timeout.unwrap_or(Duration::from_secs(5)),
        })
    }

    /// User, password and token, unresolved: natscli's rule first, `--user` without
    /// `--password` is a token (the context's user and password then stay unused); else the
    /// flags, then the context.
    fn identity(
        &self,
        ctx: &dyn Fn(Setting) -> Option<String>,
    ) -> (Option<String>, Option<String>, Option<String>) {
        if let (Some(token), None) = (&self.user, &self.password) {
            return (None, None, Some(token.clone()));
        }
        (
            self.user.clone().or_else(|| ctx(Context::user)),
            self.password.clone().or_else(|| ctx(Context::password)),
            self.token.clone().or_else(|| ctx(Context::token)),
        )
    }

    /// The context in force, with its name: `--context`, else the selected one, else none.
    fn load_context(&self) -> Result<Option<(String, Context)>, CliError> {
        if self.no_context {
            return Ok(None);
        }
        if let Some(name) = self.context.as_deref() {
            if name.ends_with(".json") || name.contains('/') {
                return Ok(Some((
                    name.to_owned(),
                    Context::from_file(Path::new(name))?,
                )));
            }
            let store = Store::locate()?;
            return Ok(Some((name.to_owned(), store.context(name)?)));
        }
        // No config directory means no selected context, not an error.
        let Ok(store) = Store::locate() else {
            return Ok(None);
        };
        Ok(store
            .selected_context()?
            .map(|context| (context.name().to_owned(), context)))
    }

    /// Whether these flags name a server: `--server` (or `NATS_URL`), or a context in force
    /// (`--context`, `NATS_CONTEXT` or the selected one), whose URL natscli uses even when
    /// it leaves the URL out.
    pub(crate) fn names_a_server(&self) -> Result<bool, CliError> {
        Ok(self.server.is_some() || self.load_context()?.is_some())
    }

    /// Connects with these flags.
    pub(crate) async fn connect(&self) -> Result<(Client, Settings), CliError> {
        let settings = self.settings()?;
        let client = settings.connect().await?;
        Ok((client, settings))
    }
}

impl Settings {
    /// The JetStream domain of the flags or the context, if any.
    pub(crate) fn js_domain(&self) -> Option<&str> {
        self.js_domain.as_deref()
    }

    /// Whether these settings turn TLS on (a CA, a client certificate or TLS first).
    pub(crate) fn tls(&self) -> bool {
        self.ca.is_some() || self.cert.is_some() || self.tls_first
    }

    /// Connects, failing at once when the server cannot be reached (no retry on the first
    /// connect) or refuses the credentials.
    pub(crate) async fn connect(&self) -> Result<Client, CliError> {
        let options = ConnectOptions::new()
            .name(self.connection_name.clone())
            .connection_timeout(self.timeout)
            .request_timeout(Some(self.timeout));
        self.apply(options)?
            .connect(self.url.as_str())
            .await
            .map_err(|source| CliError::Connect {
                url: self.url.clone(),
                source,
            })
    }

    /// `options` with these settings' identity (user and password, token, credentials,
    /// NKey), TLS and inbox prefix: what every connection to the server needs, whatever
    /// else it tunes (the benchmarks add their own names and buffers).
    pub(crate) fn apply(&self, mut options: ConnectOptions) -> Result<ConnectOptions, CliError> {
        if let (Some(user), Some(password)) = (&self.user, &self.password) {
            options = options.user_and_password(user.clone(), password.clone());
        } else if let Some(user) = &self.user {
            options = options.user_and_password(user.clone(), String::new());
        }
        if let Some(token) = &self.token {
            options = options.token(token.clone());
        }
        if let Some(creds) = &self.creds {
            let text = creds.read()?;
            options = options.credentials(&text).map_err(|source| {
                let path = match creds {
                    Material::File(path) => path.clone(),
                    Material::Inline(_) => PathBuf::from("(inline credentials)"),
                };
                CliError::ReadFile {
                    what: "credentials file",
                    path,
                    source,
                }
            })?;
        } else if let Some((jwt, seed)) = &self.user_jwt {
            options = match seed {
                Some(seed) => options.jwt_and_seed(jwt.clone(), seed.clone()),
                // A bearer JWT: the server asks for no signature (natscli's `--jwt` alone).
                None => options.jwt(jwt.clone(), |_nonce| async { Ok(Vec::new()) }),
            };
        }
        if let Some(nkey) = &self.nkey {
            // The seed alone, or decorated between dashed lines as `nsc` writes it.
            let seed = nkey.read_as("NKey seed file")?;
            options = options.nkey(nkey_seed(&seed).to_owned());
        }
        options = self.with_tls(options)?;
        if self.tls_first {
            options = options.tls_first();
        }
        if let Some(prefix) = &self.inbox_prefix {
            options = options.custom_inbox_prefix(prefix);
        }
        if let Some(proxy) = &self.socks_proxy {
            options = options.proxy(proxy);
        }
        Ok(options)
    }

    /// `options` with the TLS settings: a CA or a client certificate turns TLS on.
    fn with_tls(&self, mut options: ConnectOptions) -> Result<ConnectOptions, CliError> {
        if let Some(ca) = &self.ca {
            options = options.add_root_certificates(ca.clone()).require_tls(true);
        }
        match (&self.cert, &self.key) {
            (Some(cert), Some(key)) => {
                options = options
                    .add_client_certificate(cert.clone(), key.clone())
                    .require_tls(true);
            }
            (None, None) => {}
            _ => {
                return Err(CliError::Usage("--tls-cert and --tls-key go together"));
            }
        }
        Ok(options)
    }

    /// A JetStream context on `client` with the context's domain or API prefix.
    pub(crate) fn jetstream(&self, client: Client) -> jetstream::Context {
        let builder = ContextBuilder::new();
        match (&self.js_domain, &self.js_api_prefix) {
            (Some(domain), _) => builder.domain(domain).timeout(self.timeout).build(client),
            (None, Some(prefix)) => builder
                .api_prefix(prefix)
                .timeout(self.timeout)
                .build(client),
            (None, None) => builder.timeout(self.timeout).build(client),
        }
    }
}

/// `--socks-proxy` (natscli's flag, `NATS_SOCKS_PROXY` and a context's `socks_proxy`): a
/// SOCKS5 proxy, `socks5://[user:password@]host[:port]`, `socks5h://...` or a bare
/// `host:port`, as a URL for the library's `ConnectOptions::proxy`. The servers' names go to
/// the proxy to resolve, for either scheme, as natscli sends them: the proxy is often the only
/// one that can. Checked here, so that a bad one is refused before any connect.
fn socks_proxy_url(setting: &str) -> Result<String, CliError> {
    let invalid = |e: rnats::proxy::ProxyError| match e {
        rnats::proxy::ProxyError::InvalidUrl { url, reason } => CliError::InvalidArgument {
            what: "SOCKS proxy",
            given: url,
            reason,
        },
        other => CliError::InvalidArgument {
            what: "SOCKS proxy",
            given: String::new(),
            reason: other.to_string(),
        },
    };
    let url = rnats::proxy::natscli_socks_url(setting).map_err(invalid)?;
    url.parse::<rnats::proxy::Proxy>().map_err(invalid)?;
    Ok(url)
}

/// Connects and makes a JetStream context, for the JetStream commands.
pub(crate) async fn jetstream(args: &ConnArgs) -> Result<jetstream::Context, CliError> {
    let (client, settings) = args.connect().await?;
    Ok(settings.jetstream(client))
}
