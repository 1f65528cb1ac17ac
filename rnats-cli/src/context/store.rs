//! natscli's context files, written the way natscli (jsm.go's `natscontext`) writes them:
//! `$XDG_CONFIG_HOME/nats/context/<name>.json` (else `~/.config/nats/...`), the selected
//! name in `nats/context.txt`, the one before it in `nats/previous-context.txt`. Finding
//! and reading them is the library's (`rnats::context`); here files are kept as JSON
//! objects for editing, so fields rnats does not know (Windows cert store, newer natscli
//! settings) survive a rewrite.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use rnats::context::{Context, ContextError, ContextStore};
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

/// The directory of natscli's configuration, `<config>/nats`: the library's reader, and
/// the writes.
#[derive(Debug, Clone)]
pub(crate) struct Store {
    contexts: ContextStore,
}

/// One context: the JSON object of its file.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ContextFile {
    fields: Map<String, Value>,
}

impl Store {
    /// The store natscli uses: `$XDG_CONFIG_HOME/nats`, else `$HOME/.config/nats`.
    pub(crate) fn locate() -> Result<Store, CliError> {
        Ok(Store {
            contexts: ContextStore::locate()?,
        })
    }

    /// Where the context `name` is stored.
    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.contexts.path(name)
    }

    /// The names of the stored contexts, sorted; empty and badly named files are skipped as
    /// natscli skips them.
    pub(crate) fn list(&self) -> Result<Vec<String>, CliError> {
        Ok(self.contexts.names()?)
    }

    /// Whether the context `name` exists.
    pub(crate) fn exists(&self, name: &str) -> bool {
        self.contexts.contains(name)
    }

    /// The settings of the context `name`, to connect with or show.
    pub(crate) fn context(&self, name: &str) -> Result<Context, CliError> {
        Ok(self.contexts.load(name)?)
    }

    /// The selected context's settings, if one is selected.
    pub(crate) fn selected_context(&self) -> Result<Option<Context>, CliError> {
        Ok(self.contexts.load_selected()?)
    }

    /// The file of the context `name`, to edit.
    pub(crate) fn load(&self, name: &str) -> Result<ContextFile, CliError> {
        // The library's load says whether it exists and holds natscli's settings.
        self.context(name)?;
        let path = self.path(name);
        let bytes = fs::read(&path).map_err(|source| CliError::ReadFile {
            what: "context",
            path: path.clone(),
            source,
        })?;
        ContextFile::parse(&bytes, &path)
    }

    /// Writes the context `name` (mode 0600, through a temporary file so a reader never sees
    /// half of it).
    pub(crate) fn save(&self, name: &str, context: &ContextFile) -> Result<(), CliError> {
        if !ContextStore::is_valid_name(name) {
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
        Ok(self.contexts.selected()?)
    }

    /// The context selected before the current one, if any.
    pub(crate) fn previous(&self) -> Result<Option<String>, CliError> {
        Ok(self.contexts.previous()?)
    }

    /// Selects `name` (or nothing), remembering the previous selection as natscli does.
    pub(crate) fn select(&self, name: Option<&str>) -> Result<(), CliError> {
        let root = self.contexts.nats_dir();
        let selected = root.join("context.txt");
        if let Some(previous) = self.selected()? {
            write_atomic(&root.join("previous-context.txt"), previous.as_bytes())?;
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

    /// Parses a context file's bytes; `path` is for the error. The library reads the
    /// settings (so a file it would refuse is refused here too); the object is kept whole.
    pub(crate) fn parse(bytes: &[u8], path: &Path) -> Result<ContextFile, CliError> {
        let parse = |source| CliError::ParseFile {
            path: path.to_owned(),
            source,
        };
        let name = path
            .file_stem()
            .map(|stem| stem.to_string_lossy().into_owned())
            .unwrap_or_default();
        match Context::from_json(name, bytes) {
            // The library's words, which never quote the file's text (a secret, perhaps).
            Err(ContextError::Parse { name, reason, .. }) => {
                return Err(CliError::Context(ContextError::Parse {
                    name,
                    path: Some(path.to_owned()),
                    reason,
                }));
            }
            Err(other) => return Err(other.into()),
            Ok(_) => {}
        }
        match serde_json::from_slice(bytes).map_err(parse)? {
            Value::Object(fields) => Ok(ContextFile { fields }),
            _ => Err(parse(serde::de::Error::custom(
                "a context file holds a JSON object",
            ))),
        }
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

fn invalid_name(name: &str) -> CliError {
    CliError::InvalidArgument {
        what: "context name",
        given: name.to_owned(),
        reason: "must not be empty or contain \"..\", \"/\" or \"\\\"".to_owned(),
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
    fn unknown_fields_survive_and_secrets_are_masked() {
        let path = Path::new("x.json");
        let mut ctx = ContextFile::parse(
            br#"{"url":"nats://a:4222","password":"s3cret","windows_cert_store":"user"}"#,
            path,
        )
        .expect("parses");
        ctx.set_text("user", "bob");
        assert_eq!(ctx.fields["url"], "nats://a:4222");
        assert_eq!(ctx.fields["user"], "bob");
        assert_eq!(ctx.fields["windows_cert_store"], "user");
        assert_eq!(ctx.masked()["password"], "*****");
        assert!(ContextFile::parse(b"[1]", path).is_err());
        assert!(ContextFile::parse(b"{", path).is_err());
        // A setting of the wrong type is refused, as the library refuses it when reading.
        assert!(ContextFile::parse(br#"{"url": 4222}"#, path).is_err());
    }
}
