//! Credential references and paths, resolved as natscli resolves them (jsm.go
//! `natscontext`): a credentials file, NKey seed, token, password, user JWT or seed may be
//! written as `env://NAME` (the variable's value), `file://PATH` (the file's contents),
//! `data:[type];base64,PAYLOAD` (inline), or plainly: a path for credentials and NKey seeds,
//! the value itself for the others. Schemes are matched in any case, as URI schemes are.
//! `nsc://` and `op://` make natscli run the `nsc` or 1Password program; rnats refuses them
//! with [`ContextError::UnsupportedScheme`]. Paths expand `$NAME`, `${NAME}` and a leading
//! `~`.

use std::fmt;
use std::path::PathBuf;

use base64::Engine;

use super::error::ContextError;

/// Where a credentials file or NKey seed comes from.
#[derive(Clone, PartialEq, Eq)]
pub enum Material {
    /// A file, read when connecting.
    File(PathBuf),
    /// The contents themselves, from the environment or a `data:` URI.
    Inline(String),
}

/// How the resolvers see the environment: the process's, or a test's.
pub(crate) type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The process's environment.
pub(crate) fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

impl Material {
    /// Reads the reference in a `creds` or `nkey` setting (`field` names it in errors): a
    /// bare path or `file://PATH` is a file, `env://` and `data:` give the contents.
    pub fn parse(field: &'static str, reference: &str) -> Result<Material, ContextError> {
        Material::parse_in(field, reference, &process_env)
    }

    pub(crate) fn parse_in(
        field: &'static str,
        reference: &str,
        env: Env<'_>,
    ) -> Result<Material, ContextError> {
        match Scheme::of(reference) {
            Scheme::None => Ok(Material::File(expand_in(reference, env))),
            Scheme::File => Ok(Material::File(expand_in(
                strip_scheme(reference, FILE),
                env,
            ))),
            Scheme::Env => Ok(Material::Inline(from_env(field, reference, env)?)),
            Scheme::Data => Ok(Material::Inline(from_data(field, reference)?)),
            Scheme::Other(scheme) => Err(ContextError::UnsupportedScheme { field, scheme }),
        }
    }

    /// The text: the file's, or the contents held. A file that cannot be read is a
    /// [`ContextError::Read`] of a "credentials file"; [`read_as`](Self::read_as) names it.
    pub fn read(&self) -> Result<String, ContextError> {
        self.read_as("credentials file")
    }

    /// As [`read`](Self::read), a file that cannot be read being named `what` in the error
    /// ("NKey seed file", say).
    pub fn read_as(&self, what: &'static str) -> Result<String, ContextError> {
        match self {
            Material::File(path) => {
                std::fs::read_to_string(path).map_err(|source| ContextError::Read {
                    what,
                    path: path.clone(),
                    source,
                })
            }
            Material::Inline(text) => Ok(text.clone()),
        }
    }
}

/// Never prints inline contents: they are secrets.
impl fmt::Debug for Material {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Material::File(path) => f.debug_tuple("File").field(path).finish(),
            Material::Inline(_) => f.debug_tuple("Inline").field(&"<redacted>").finish(),
        }
    }
}

/// Resolves the reference in a `token`, `password`, `user_jwt` or `user_seed` setting
/// (`field` names it in errors): the value itself unless it starts with `env://`,
/// `file://` or `data:`, whose value then loses its trailing line break, as natscli trims
/// it. Any other scheme is part of the value, except `nsc://` and `op://`, which are
/// refused.
pub fn resolve_secret(field: &'static str, reference: &str) -> Result<String, ContextError> {
    resolve_secret_in(field, reference, &process_env)
}

pub(crate) fn resolve_secret_in(
    field: &'static str,
    reference: &str,
    env: Env<'_>,
) -> Result<String, ContextError> {
    let resolved = match Scheme::of(reference) {
        Scheme::None => return Ok(reference.to_owned()),
        Scheme::Other(scheme) if scheme == "nsc" || scheme == "op" => {
            return Err(ContextError::UnsupportedScheme { field, scheme });
        }
        Scheme::Other(_) => return Ok(reference.to_owned()),
        Scheme::File => {
            let path = expand_in(strip_scheme(reference, FILE), env);
            std::fs::read_to_string(&path).map_err(|source| ContextError::Read {
                what: field,
                path,
                source,
            })?
        }
        Scheme::Env => from_env(field, reference, env)?,
        Scheme::Data => from_data(field, reference)?,
    };
    Ok(resolved.trim_end_matches(['\r', '\n']).to_owned())
}

/// A path setting (`cert`, `key`, `ca`) as natscli reads it: bare or `file://`, with
/// `$NAME`, `${NAME}` and a leading `~` expanded; other schemes are refused.
pub(crate) fn tls_path(
    field: &'static str,
    reference: &str,
    env: Env<'_>,
) -> Result<PathBuf, ContextError> {
    match Scheme::of(reference) {
        Scheme::None => Ok(expand_in(reference, env)),
        Scheme::File => Ok(expand_in(strip_scheme(reference, FILE), env)),
        Scheme::Env => Err(unsupported(field, "env")),
        Scheme::Data => Err(unsupported(field, "data")),
        Scheme::Other(scheme) => Err(ContextError::UnsupportedScheme { field, scheme }),
    }
}

fn unsupported(field: &'static str, scheme: &str) -> ContextError {
    ContextError::UnsupportedScheme {
        field,
        scheme: scheme.to_owned(),
    }
}

/// A path setting (`cert`, `key`, `ca`, named `field` in errors) as natscli reads it: bare or
/// `file://`, with `$NAME`, `${NAME}` and a leading `~` expanded; other schemes
/// (`env://`, `data:`, ...) are [`ContextError::UnsupportedScheme`].
pub fn resolve_path(field: &'static str, reference: &str) -> Result<PathBuf, ContextError> {
    tls_path(field, reference, &process_env)
}

/// `path` with `$NAME` and `${NAME}` replaced by the variables' values (unset ones by
/// nothing), then a leading `~` by `$HOME`, as natscli expands the paths in a context.
pub fn expand_path(path: &str) -> PathBuf {
    expand_in(path, &process_env)
}

pub(crate) fn expand_in(path: &str, env: Env<'_>) -> PathBuf {
    let expanded = expand_variables(path, env);
    let home = || env("HOME").filter(|h| !h.is_empty());
    if expanded == "~" {
        if let Some(home) = home() {
            return PathBuf::from(home);
        }
    } else if let Some(rest) = expanded.strip_prefix("~/")
        && let Some(home) = home()
    {
        return PathBuf::from(home).join(rest);
    }
    PathBuf::from(expanded)
}

/// `$NAME` and `${NAME}` (NAME of letters, digits and `_`) replaced by their values; any
/// other `$` is kept.
fn expand_variables(text: &str, env: Env<'_>) -> String {
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, len) = match after.strip_prefix('{') {
            Some(braced) => match braced.find('}') {
                Some(end) if end > 0 && braced[..end].chars().all(is_name) => {
                    (&braced[..end], end + 2)
                }
                _ => ("", 0),
            },
            None => {
                let end = after.find(|c| !is_name(c)).unwrap_or(after.len());
                (&after[..end], end)
            }
        };
        if name.is_empty() {
            out.push('$');
            rest = after;
        } else {
            out.push_str(&env(name).unwrap_or_default());
            rest = &after[len..];
        }
    }
    out.push_str(rest);
    out
}

const FILE: &str = "file://";
const ENV: &str = "env://";
const DATA: &str = "data:";

/// What a setting's text starts with.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Scheme {
    /// No URI scheme (or a one-letter one, a Windows drive): a path or a plain value.
    None,
    File,
    Env,
    Data,
    /// Any other scheme, lower case.
    Other(String),
}

impl Scheme {
    /// The URI scheme `text` starts with (RFC 3986: a letter, then letters, digits, `+`,
    /// `-` or `.`, then `:`), of two characters or more so `C:\x` stays a path.
    fn of(text: &str) -> Scheme {
        let Some((name, _)) = text.split_once(':') else {
            return Scheme::None;
        };
        let valid = name.len() >= 2
            && name.starts_with(|c: char| c.is_ascii_alphabetic())
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
        if !valid {
            return Scheme::None;
        }
        match name.to_ascii_lowercase().as_str() {
            "file" => Scheme::File,
            "env" => Scheme::Env,
            "data" => Scheme::Data,
            other => Scheme::Other(other.to_owned()),
        }
    }
}

/// `text` without `prefix`, matched in any case (the caller knows the scheme is there; a
/// `file:` without `//` keeps what follows the colon).
fn strip_scheme<'a>(text: &'a str, prefix: &str) -> &'a str {
    match text.get(..prefix.len()) {
        Some(head) if head.eq_ignore_ascii_case(prefix) => &text[prefix.len()..],
        _ => text.split_once(':').map_or(text, |(_, rest)| rest),
    }
}

/// The value of the variable an `env://NAME` reference names.
fn from_env(field: &'static str, reference: &str, env: Env<'_>) -> Result<String, ContextError> {
    let name = strip_scheme(reference, ENV);
    if name.is_empty() {
        return Err(ContextError::InvalidReference {
            field,
            reason: "env:// names no variable",
        });
    }
    env(name)
        .filter(|value| !value.is_empty())
        .ok_or_else(|| ContextError::MissingVariable {
            field,
            variable: name.to_owned(),
        })
}

/// The text of an RFC 2397 `data:` URI; natscli takes base64 ones only.
fn from_data(field: &'static str, reference: &str) -> Result<String, ContextError> {
    let bad = |reason| ContextError::InvalidReference { field, reason };
    let (header, payload) = strip_scheme(reference, DATA)
        .split_once(',')
        .ok_or(bad("a data: URI is data:;base64,PAYLOAD"))?;
    if !header.split(';').any(|part| part.trim() == "base64") {
        return Err(bad("only base64 data: URIs are taken"));
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(payload.trim())
        .map_err(|_| bad("the data: URI's payload is not base64"))?;
    String::from_utf8(bytes).map_err(|_| bad("the data: URI's payload is not UTF-8 text"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An environment of `vars` only.
    fn env_of(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn plain_text_is_a_path_or_a_value() {
        let env = env_of(&[("HOME", "/home/ann")]);
        assert_eq!(
            Material::parse_in("creds", "/tmp/x.creds", &env).ok(),
            Some(Material::File(PathBuf::from("/tmp/x.creds")))
        );
        assert_eq!(
            Material::parse_in("creds", "FILE://~/x.creds", &env).ok(),
            Some(Material::File(PathBuf::from("/home/ann/x.creds")))
        );
        // A drive letter is not a scheme.
        assert_eq!(
            Material::parse_in("creds", "C:\\x.creds", &env).ok(),
            Some(Material::File(PathBuf::from("C:\\x.creds")))
        );
        assert_eq!(
            resolve_secret_in("token", "s3cret", &env).ok().as_deref(),
            Some("s3cret")
        );
        // A password that merely looks like a URI is a value.
        assert_eq!(
            resolve_secret_in("password", "pass:word", &env)
                .ok()
                .as_deref(),
            Some("pass:word")
        );
    }

    #[test]
    fn env_references_take_the_variable_and_need_it_set() {
        let env = env_of(&[("APP_TOKEN", "t0k\n"), ("EMPTY", "")]);
        assert_eq!(
            resolve_secret_in("token", "Env://APP_TOKEN", &env)
                .ok()
                .as_deref(),
            Some("t0k")
        );
        assert_eq!(
            Material::parse_in("nkey", "env://APP_TOKEN", &env).ok(),
            Some(Material::Inline("t0k\n".to_owned()))
        );
        for (reference, variable) in [("env://UNSET", "UNSET"), ("env://EMPTY", "EMPTY")] {
            match resolve_secret_in("token", reference, &env) {
                Err(ContextError::MissingVariable { field, variable: v }) => {
                    assert_eq!((field, v.as_str()), ("token", variable));
                }
                other => panic!("{reference}: {other:?}"),
            }
        }
        assert!(matches!(
            resolve_secret_in("token", "env://", &env),
            Err(ContextError::InvalidReference { .. })
        ));
    }

    #[test]
    fn data_uris_are_base64_only() {
        let env = env_of(&[]);
        assert_eq!(
            resolve_secret_in("token", "data:;base64,czNjcmV0Cg==", &env)
                .ok()
                .as_deref(),
            Some("s3cret")
        );
        assert_eq!(
            Material::parse_in("nkey", "DATA:text/plain;base64,U1VBQQ==", &env).ok(),
            Some(Material::Inline("SUAA".to_owned()))
        );
        // Not base64 (even where the payload would decode), no comma, bad base64, not UTF-8.
        for bad in [
            "data:,plain",
            "data:text/plain,czNjcmV0",
            "data:;base64,***",
            "data:;base64",
            "data:;base64,/w==",
        ] {
            assert!(
                matches!(
                    resolve_secret_in("token", bad, &env),
                    Err(ContextError::InvalidReference { .. })
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn file_references_read_the_file_without_its_line_break() {
        let dir = std::env::temp_dir().join(format!("rnats-context-ref-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        std::fs::write(dir.join("token"), "from-file\r\n").expect("write");
        let env = |name: &str| (name == "DIR").then(|| dir.display().to_string());
        assert_eq!(
            resolve_secret_in("token", "file://$DIR/token", &env)
                .ok()
                .as_deref(),
            Some("from-file")
        );
        assert!(matches!(
            resolve_secret_in("token", "file://$DIR/none", &env),
            Err(ContextError::Read { what: "token", .. })
        ));
        std::fs::remove_dir_all(&dir).expect("clean up");
    }

    #[test]
    fn programs_are_refused() {
        let env = env_of(&[]);
        for (field, reference, scheme) in [
            ("creds", "nsc://op/acc/user", "nsc"),
            ("creds", "op://vault/item/creds", "op"),
            ("nkey", "https://example.com/seed", "https"),
        ] {
            match Material::parse_in(field, reference, &env) {
                Err(ContextError::UnsupportedScheme { scheme: s, .. }) => assert_eq!(s, scheme),
                other => panic!("{reference}: {other:?}"),
            }
        }
        assert!(matches!(
            resolve_secret_in("password", "OP://vault/item/pw", &env),
            Err(ContextError::UnsupportedScheme { .. })
        ));
        assert!(matches!(
            tls_path("ca", "env://CA", &env),
            Err(ContextError::UnsupportedScheme { .. })
        ));
    }

    #[test]
    fn paths_expand_variables_and_home() {
        let env = env_of(&[("HOME", "/home/ann"), ("SECRETS", "/run/s")]);
        let cases = [
            ("~", "/home/ann"),
            ("~/ca.pem", "/home/ann/ca.pem"),
            ("$SECRETS/app.creds", "/run/s/app.creds"),
            ("${SECRETS}x/app.creds", "/run/sx/app.creds"),
            ("$HOME/$UNSET/a", "/home/ann//a"),
            ("a$", "a$"),
            ("a$-b", "a$-b"),
            ("${}x", "${}x"),
            ("~ann/x", "~ann/x"),
        ];
        for (path, expanded) in cases {
            assert_eq!(expand_in(path, &env), PathBuf::from(expanded), "{path}");
        }
        assert_eq!(
            tls_path("cert", "file://~/c.pem", &env).ok(),
            Some(PathBuf::from("/home/ann/c.pem"))
        );
    }

    #[test]
    fn inline_material_is_not_printed() {
        let debug = format!("{:?}", Material::Inline("SUSECRET".to_owned()));
        assert!(!debug.contains("SUSECRET"), "{debug}");
    }
}
