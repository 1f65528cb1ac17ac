//! natscli's context files, read and written the way natscli (jsm.go's `natscontext`) does:
//! `$XDG_CONFIG_HOME/nats/context/<name>.json` (else `~/.config/nats/...`), the selected
//! name in `nats/context.txt`, the one before it in `nats/previous-context.txt`. Files are
//! kept as JSON objects, so fields rnats does not know (Windows cert store, newer
//! natscli settings) survive a rewrite.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::error::CliError;

/// The string settings natscli writes in every context file, in its order.
pub(crate) const STRING_FIELDS: [&str; 19] = [
    "description",
    "url",
    "socks_proxy",
    "token",
    "user",
    "password",
    "creds",
    "nkey",
    "cert",
    "key",
    "ca",
    "nsc",
    "jetstream_domain",
    "jetstream_api_prefix",
    "jetstream_event_prefix",
    "inbox_prefix",
    "user_jwt",
    "user_seed",
    "color_scheme",
];

/// Settings shown masked by `context info`.
pub(crate) const SECRET_FIELDS: [&str; 4] = ["password", "token", "user_jwt", "user_seed"];

/// The directory of natscli's configuration, `<config>/nats`.
#[derive(Debug, Clone)]
pub(crate) struct Store {
    root: PathBuf,
}

/// One context: the JSON object of its file.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ContextFile {
    fields: Map<String, Value>,
}

impl Store {
    /// The store natscli uses: `$XDG_CONFIG_HOME/nats`, else `$HOME/.config/nats`.
    pub(crate) fn locate() -> Result<Store, CliError> {
        let config = match std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
            Some(xdg) => PathBuf::from(xdg),
            None => home_dir().ok_or(CliError::NoConfigDir)?.join(".config"),
        };
        Ok(Store {
            root: config.join("nats"),
        })
    }

    /// Where the context `name` is stored.
    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.root.join("context").join(format!("{name}.json"))
    }

    /// The names of the stored contexts, sorted; empty and badly named files are skipped as
    /// natscli skips them.
    pub(crate) fn list(&self) -> Result<Vec<String>, CliError> {
        let dir = self.root.join("context");
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(source) => {
                return Err(CliError::ReadFile {
                    what: "context directory",
                    path: dir,
                    source,
                });
            }
        };
        let mut names: Vec<String> = entries
            .filter_map(Result::ok)
            .filter(|e| e.metadata().is_ok_and(|m| m.is_file() && m.len() > 0))
            .filter_map(|e| {
                let file = e.file_name().into_string().ok()?;
                let name = file.strip_suffix(".json")?;
                valid_name(name).then(|| name.to_owned())
            })
            .collect();
        names.sort();
        Ok(names)
    }

    /// Whether the context `name` exists.
    pub(crate) fn exists(&self, name: &str) -> bool {
        valid_name(name) && self.path(name).is_file()
    }

    /// Reads the context `name`.
    pub(crate) fn load(&self, name: &str) -> Result<ContextFile, CliError> {
        if !valid_name(name) {
            return Err(invalid_name(name));
        }
        let path = self.path(name);
        match fs::read(&path) {
            Ok(bytes) => ContextFile::parse(&bytes, &path),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                Err(CliError::UnknownContext(name.to_owned()))
            }
            Err(source) => Err(CliError::ReadFile {
                what: "context",
                path,
                source,
            }),
        }
    }

    /// Writes the context `name` (mode 0600, through a temporary file so a reader never sees
    /// half of it).
    pub(crate) fn save(&self, name: &str, context: &ContextFile) -> Result<(), CliError> {
        if !valid_name(name) {
            return Err(invalid_name(name));
        }
        let mut text = serde_json::to_string_pretty(&Value::Object(context.fields.clone()))?;
        text.push('\n');
        write_atomic(&self.path(name), text.as_bytes())
    }

    /// Removes the context `name`, and the selection if it was selected.
    pub(crate) fn delete(&self, name: &str) -> Result<(), CliError> {
        if !self.exists(name) {
            return Err(CliError::UnknownContext(name.to_owned()));
        }
        if self.selected()?.as_deref() == Some(name) {
            self.select(None)?;
        }
        let path = self.path(name);
        fs::remove_file(&path).map_err(|source| CliError::WriteFile { path, source })
    }

    /// The selected context's name, if one is selected.
    pub(crate) fn selected(&self) -> Result<Option<String>, CliError> {
        let path = self.root.join("context.txt");
        match fs::read_to_string(&path) {
            Ok(text) => Ok(Some(text.trim().to_owned()).filter(|n| !n.is_empty())),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(CliError::ReadFile {
                what: "selected context",
                path,
                source,
            }),
        }
    }

    /// Selects `name` (or nothing), remembering the previous selection as natscli does.
    pub(crate) fn select(&self, name: Option<&str>) -> Result<(), CliError> {
        let selected = self.root.join("context.txt");
        if let Some(previous) = self.selected()? {
            write_atomic(&self.root.join("previous-context.txt"), previous.as_bytes())?;
        }
        match name {
            Some(name) => write_atomic(&selected, name.as_bytes()),
            None => match fs::remove_file(&selected) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
                Err(source) => Err(CliError::WriteFile {
                    path: selected,
                    source,
                }),
            },
        }
    }
}

impl ContextFile {
    /// A new context as natscli writes one: every known setting present, empty.
    pub(crate) fn new() -> ContextFile {
        let mut fields = Map::new();
        for field in STRING_FIELDS {
            fields.insert(field.to_owned(), Value::String(String::new()));
        }
        fields.insert("tls_first".to_owned(), Value::Bool(false));
        ContextFile { fields }
    }

    /// Parses a context file's bytes; `path` is for the error.
    pub(crate) fn parse(bytes: &[u8], path: &Path) -> Result<ContextFile, CliError> {
        let parse = |source| CliError::ParseFile {
            path: path.to_owned(),
            source,
        };
        match serde_json::from_slice(bytes).map_err(parse)? {
            Value::Object(fields) => Ok(ContextFile { fields }),
            _ => Err(parse(serde::de::Error::custom(
                "a context file holds a JSON object",
            ))),
        }
    }

    /// Reads a context from a file named by path (`--context ./ctx.json`).
    pub(crate) fn load_path(path: &Path) -> Result<ContextFile, CliError> {
        let bytes = fs::read(path).map_err(|source| CliError::ReadFile {
            what: "context",
            path: path.to_owned(),
            source,
        })?;
        ContextFile::parse(&bytes, path)
    }

    /// A string setting, `None` when absent or empty.
    pub(crate) fn text(&self, field: &str) -> Option<&str> {
        self.fields
            .get(field)
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty())
    }

    /// A boolean setting, false when absent.
    pub(crate) fn flag(&self, field: &str) -> bool {
        self.fields
            .get(field)
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    /// A path setting with `~` expanded, as natscli expands it.
    pub(crate) fn path(&self, field: &str) -> Option<PathBuf> {
        self.text(field).map(expand_home)
    }

    /// Sets a string setting (natscli keeps unset ones as `""`).
    pub(crate) fn set_text(&mut self, field: &str, value: &str) {
        self.fields
            .insert(field.to_owned(), Value::String(value.to_owned()));
    }

    /// Sets a boolean setting.
    pub(crate) fn set_flag(&mut self, field: &str, value: bool) {
        self.fields.insert(field.to_owned(), Value::Bool(value));
    }

    /// Every setting, as JSON, secrets masked.
    pub(crate) fn masked(&self) -> Map<String, Value> {
        let mut fields = self.fields.clone();
        for secret in SECRET_FIELDS {
            if let Some(value) = fields.get_mut(secret)
                && value.as_str().is_some_and(|v| !v.is_empty())
            {
                *value = Value::String("*****".to_owned());
            }
        }
        fields
    }
}

/// natscli's rule for names (jsm.go `ValidateName`): not empty, no `..`, `/` or `\`.
pub(crate) fn valid_name(name: &str) -> bool {
    !name.is_empty() && !name.contains("..") && !name.contains(['/', '\\'])
}

fn invalid_name(name: &str) -> CliError {
    CliError::InvalidArgument {
        what: "context name",
        given: name.to_owned(),
        reason: "must not be empty or contain \"..\", \"/\" or \"\\\"".to_owned(),
    }
}

/// The user's home directory, from `$HOME`.
fn home_dir() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// `~/x` made `$HOME/x`.
pub(crate) fn expand_home(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), home_dir()) {
        (Some(rest), Some(home)) => home.join(rest),
        _ if path == "~" => home_dir().unwrap_or_else(|| PathBuf::from(path)),
        _ => PathBuf::from(path),
    }
}

/// Writes `bytes` to a temporary file beside `path` (mode 0600), then renames it over.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    let failed = |source| CliError::WriteFile {
        path: path.to_owned(),
        source,
    };
    if let Some(dir) = path.parent() {
        create_private_dir(dir).map_err(failed)?;
    }
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    write_private(&tmp, bytes).map_err(failed)?;
    fs::rename(&tmp, path).map_err(|e| {
        let _ = fs::remove_file(&tmp);
        failed(e)
    })
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> io::Result<()> {
    fs::create_dir_all(dir)
}

/// Writes `bytes` to `path`, replacing what is there; a new file is readable by its owner
/// only (mode 0600), as natscli makes its files. `stream add --output` and `consumer add
/// --output` write with it too.
#[cfg(unix)]
pub(crate) fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(bytes)
}

/// Writes `bytes` to `path`, replacing what is there.
#[cfg(not(unix))]
pub(crate) fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    fs::write(path, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_natscli() {
        assert!(valid_name("prod"));
        assert!(valid_name("my.ctx"));
        assert!(!valid_name(""));
        assert!(!valid_name("../x"));
        assert!(!valid_name("a/b"));
        assert!(!valid_name("a\\b"));
    }

    #[test]
    fn unknown_fields_survive_and_secrets_are_masked() {
        let path = Path::new("x.json");
        let mut ctx = ContextFile::parse(
            br#"{"url":"nats://a:4222","password":"s3cret","windows_cert_store":"user"}"#,
            path,
        )
        .expect("parses");
        ctx.set_text("user", "bob");
        assert_eq!(ctx.text("url"), Some("nats://a:4222"));
        assert_eq!(ctx.fields["windows_cert_store"], "user");
        assert_eq!(ctx.masked()["password"], "*****");
        assert!(ContextFile::parse(b"[1]", path).is_err());
        assert!(ContextFile::parse(b"{", path).is_err());
    }
}
