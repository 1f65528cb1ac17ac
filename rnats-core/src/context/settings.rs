//! One context: its name and natscli's settings, read from the JSON natscli writes.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::error::ContextError;

/// The server natscli and nats.go use when a context names none.
pub const DEFAULT_URL: &str = "nats://127.0.0.1:4222";

/// One natscli context: its name and settings. Settings natscli writes as `""` read as
/// `None`; secrets and paths read as written, references unresolved.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Context {
    name: String,
    path: Option<PathBuf>,
    settings: Settings,
}

/// A context file's settings, under natscli's JSON names; fields natscli does not know
/// (and `name`, which the file name gives) are ignored.
#[derive(Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
struct Settings {
    description: Option<String>,
    url: Option<String>,
    socks_proxy: Option<String>,
    token: Option<String>,
    user: Option<String>,
    password: Option<String>,
    creds: Option<String>,
    nkey: Option<String>,
    cert: Option<String>,
    key: Option<String>,
    ca: Option<String>,
    nsc: Option<String>,
    jetstream_domain: Option<String>,
    jetstream_api_prefix: Option<String>,
    jetstream_event_prefix: Option<String>,
    inbox_prefix: Option<String>,
    user_jwt: Option<String>,
    user_seed: Option<String>,
    color_scheme: Option<String>,
    tls_first: Option<bool>,
    windows_cert_store: Option<String>,
}

impl Context {
    /// Reads a context file anywhere; its name is the file's, less `.json`.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Context, ContextError> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|source| ContextError::Read {
            what: "context",
            path: path.to_owned(),
            source,
        })?;
        let name = path
            .file_stem()
            .map(|stem| stem.to_string_lossy().into_owned())
            .unwrap_or_default();
        Context::parse(&name, &bytes, Some(path.to_owned()))
    }

    /// Reads a context from the JSON natscli writes, under `name`.
    pub fn from_json(name: impl Into<String>, json: &[u8]) -> Result<Context, ContextError> {
        Context::parse(&name.into(), json, None)
    }

    pub(super) fn parse(
        name: &str,
        json: &[u8],
        path: Option<PathBuf>,
    ) -> Result<Context, ContextError> {
        match Settings::parse(json) {
            Ok(settings) => Ok(Context {
                name: name.to_owned(),
                path,
                settings,
            }),
            Err(error) => Err(ContextError::Parse {
                name: name.to_owned(),
                path,
                reason: parse_fault(&error),
            }),
        }
    }

    /// The context's name (empty for `Context::default()`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The file it was read from, if it was.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The servers to connect to: `url` (one or several URLs, comma separated), else
    /// [`DEFAULT_URL`], as natscli does.
    pub fn servers(&self) -> &str {
        self.url().unwrap_or(DEFAULT_URL)
    }

    /// `description`: what the context is for.
    pub fn description(&self) -> Option<&str> {
        text(&self.settings.description)
    }

    /// `url`: the servers, as written.
    pub fn url(&self) -> Option<&str> {
        text(&self.settings.url)
    }

    /// `socks_proxy`: the SOCKS5 proxy natscli reaches the servers through (`host:port` or a
    /// `socks5://` URL); [`connect_options`](Self::connect_options) goes through it too.
    pub fn socks_proxy(&self) -> Option<&str> {
        text(&self.settings.socks_proxy)
    }

    /// `token`: an authentication token, or a reference to one.
    pub fn token(&self) -> Option<&str> {
        text(&self.settings.token)
    }

    /// `user`: the user name.
    pub fn user(&self) -> Option<&str> {
        text(&self.settings.user)
    }

    /// `password`: the user's password, or a reference to it.
    pub fn password(&self) -> Option<&str> {
        text(&self.settings.password)
    }

    /// `creds`: a `.creds` file (user JWT and seed), or a reference to its text.
    pub fn creds(&self) -> Option<&str> {
        text(&self.settings.creds)
    }

    /// `nkey`: a file holding an NKey user seed, or a reference to the seed.
    pub fn nkey(&self) -> Option<&str> {
        text(&self.settings.nkey)
    }

    /// `cert`: the TLS client certificate file.
    pub fn cert(&self) -> Option<&str> {
        text(&self.settings.cert)
    }

    /// `key`: the client certificate's private key file.
    pub fn key(&self) -> Option<&str> {
        text(&self.settings.key)
    }

    /// `ca`: the CA certificates to verify the servers with.
    pub fn ca(&self) -> Option<&str> {
        text(&self.settings.ca)
    }

    /// `nsc`: natscli's old `nsc://` lookup of credentials and servers; rnats refuses it.
    pub fn nsc(&self) -> Option<&str> {
        text(&self.settings.nsc)
    }

    /// `jetstream_domain`: the JetStream domain to use.
    pub fn jetstream_domain(&self) -> Option<&str> {
        text(&self.settings.jetstream_domain)
    }

    /// `jetstream_api_prefix`: the subject prefix of the JetStream API.
    pub fn jetstream_api_prefix(&self) -> Option<&str> {
        text(&self.settings.jetstream_api_prefix)
    }

    /// `jetstream_event_prefix`: the subject prefix of JetStream advisories.
    pub fn jetstream_event_prefix(&self) -> Option<&str> {
        text(&self.settings.jetstream_event_prefix)
    }

    /// `inbox_prefix`: the prefix of the connection's reply inboxes.
    pub fn inbox_prefix(&self) -> Option<&str> {
        text(&self.settings.inbox_prefix)
    }

    /// `user_jwt`: a user JWT, or a reference to one.
    pub fn user_jwt(&self) -> Option<&str> {
        text(&self.settings.user_jwt)
    }

    /// `user_seed`: the NKey seed signing for `user_jwt`, or a reference to it.
    pub fn user_seed(&self) -> Option<&str> {
        text(&self.settings.user_seed)
    }

    /// `color_scheme`: the command line's colours.
    pub fn color_scheme(&self) -> Option<&str> {
        text(&self.settings.color_scheme)
    }

    /// `tls_first`: the TLS handshake comes before the server's INFO.
    pub fn tls_first(&self) -> bool {
        self.settings.tls_first.unwrap_or(false)
    }

    /// `windows_cert_store`: the Windows certificate store natscli takes the client
    /// certificate from; rnats refuses it.
    pub fn windows_cert_store(&self) -> Option<&str> {
        text(&self.settings.windows_cert_store)
    }
}

/// Never prints secrets: the password, token, JWT and seed are masked, and so are
/// credentials in the URLs.
impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let masked = |value: Option<&str>| value.map(|_| "*****");
        f.debug_struct("Context")
            .field("name", &self.name)
            .field("path", &self.path)
            .field("url", &self.url().map(redact_urls))
            .field("user", &self.user())
            .field("password", &masked(self.password()))
            .field("token", &masked(self.token()))
            .field("creds", &self.creds().map(redact_inline))
            .field("nkey", &self.nkey().map(redact_inline))
            .field("user_jwt", &masked(self.user_jwt()))
            .field("user_seed", &masked(self.user_seed()))
            .field("ca", &self.ca())
            .field("cert", &self.cert())
            .field("key", &self.key())
            .field("tls_first", &self.tls_first())
            .field("inbox_prefix", &self.inbox_prefix())
            .field("jetstream_domain", &self.jetstream_domain())
            .field("jetstream_api_prefix", &self.jetstream_api_prefix())
            .finish_non_exhaustive()
    }
}

impl Settings {
    /// The settings of a context file, which must hold a JSON object (a derived struct
    /// would take an array as well).
    fn parse(json: &[u8]) -> Result<Settings, serde_json::Error> {
        let first = json.iter().find(|b| !b.is_ascii_whitespace());
        if first.is_some_and(|b| *b != b'{') {
            return Err(serde::de::Error::custom(
                "a context file holds a JSON object",
            ));
        }
        serde_json::from_slice(json)
    }
}

/// A setting natscli left empty reads as unset.
fn text(value: &Option<String>) -> Option<&str> {
    value.as_deref().filter(|v| !v.is_empty())
}

/// `nats://user:pass@host` as `nats://*****@host`, each URL of a list.
fn redact_urls(urls: &str) -> String {
    urls.split(',')
        .map(|url| match (url.find("://"), url.rfind('@')) {
            (Some(scheme), Some(at)) if at > scheme => {
                format!("{}*****{}", &url[..scheme + 3], &url[at..])
            }
            _ => url.to_owned(),
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// A `data:` URI holds the secret itself.
fn redact_inline(reference: &str) -> &str {
    if reference
        .get(..5)
        .is_some_and(|h| h.eq_ignore_ascii_case("data:"))
    {
        "data:*****"
    } else {
        reference
    }
}

/// What is wrong with a context's JSON, without serde's words for it, which quote the value
/// found (a secret, perhaps).
fn parse_fault(error: &serde_json::Error) -> String {
    use serde_json::error::Category;
    let what = match error.classify() {
        Category::Syntax => "not valid JSON",
        Category::Eof => "the JSON ends early",
        Category::Data => "not the JSON object natscli writes (a setting of the wrong type?)",
        Category::Io => "unreadable",
    };
    match error.line() {
        0 => what.to_owned(),
        line => format!("{what} at line {line}, column {}", error.column()),
    }
}
