//! Where natscli keeps its contexts: `<config>/nats/context/NAME.json`, the selected name
//! in `<config>/nats/context.txt`, `<config>` being `$XDG_CONFIG_HOME`, else
//! `$HOME/.config` (jsm.go `natscontext`'s file backend).

use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::error::ContextError;
use super::settings::Context;

/// The natscli contexts of one configuration directory. Reads only; `nats context add`
/// (or `rnats context add`) writes them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextStore {
    /// `<config>/nats`.
    root: PathBuf,
}

/// The shorthands for natscli's own directory.
impl Context {
    /// Loads the context `name` from natscli's directory ([`ContextStore::locate`]).
    pub fn load(name: &str) -> Result<Context, ContextError> {
        ContextStore::locate()?.load(name)
    }

    /// Loads the selected context from natscli's directory; `None` when none is selected
    /// (natscli then uses the defaults: `Context::default()`).
    pub fn load_selected() -> Result<Option<Context>, ContextError> {
        ContextStore::locate()?.load_selected()
    }

    /// The names of the contexts in natscli's directory, sorted.
    pub fn names() -> Result<Vec<String>, ContextError> {
        ContextStore::locate()?.names()
    }
}

impl ContextStore {
    /// The directory natscli uses: `$XDG_CONFIG_HOME/nats`, else `$HOME/.config/nats`.
    pub fn locate() -> Result<ContextStore, ContextError> {
        let config = config_home(
            std::env::var_os("XDG_CONFIG_HOME"),
            std::env::var_os("HOME"),
        )
        .ok_or(ContextError::NoConfigDir)?;
        Ok(ContextStore::at(config))
    }

    /// The contexts under `config_home`, the directory `XDG_CONFIG_HOME` would name (the
    /// one holding `nats/`): for tests, or a program with a configuration of its own.
    pub fn at(config_home: impl Into<PathBuf>) -> ContextStore {
        ContextStore {
            root: config_home.into().join("nats"),
        }
    }

    /// `<config>/nats`, the directory holding `context/` and `context.txt`.
    pub fn nats_dir(&self) -> &Path {
        &self.root
    }

    /// Where the context `name` is (or would be) kept.
    pub fn path(&self, name: &str) -> PathBuf {
        self.root.join("context").join(format!("{name}.json"))
    }

    /// Whether natscli accepts `name`: not empty, without `..`, `/` or `\`.
    pub fn is_valid_name(name: &str) -> bool {
        !name.is_empty() && !name.contains("..") && !name.contains(['/', '\\'])
    }

    /// Whether a context `name` exists.
    pub fn contains(&self, name: &str) -> bool {
        ContextStore::is_valid_name(name) && self.path(name).is_file()
    }

    /// The names of the contexts, sorted; empty files and files whose name natscli would
    /// refuse are left out, as natscli leaves them out.
    pub fn names(&self) -> Result<Vec<String>, ContextError> {
        let dir = self.root.join("context");
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(source) => {
                return Err(ContextError::Read {
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
                ContextStore::is_valid_name(name).then(|| name.to_owned())
            })
            .collect();
        names.sort();
        Ok(names)
    }

    /// The selected context's name, if one is selected.
    pub fn selected(&self) -> Result<Option<String>, ContextError> {
        self.read_name("context.txt", "selected context")
    }

    /// The context selected before the current one, if any (`nats context select -`).
    pub fn previous(&self) -> Result<Option<String>, ContextError> {
        self.read_name("previous-context.txt", "previous context")
    }

    /// Loads the context `name`.
    pub fn load(&self, name: &str) -> Result<Context, ContextError> {
        if !ContextStore::is_valid_name(name) {
            return Err(ContextError::InvalidName {
                name: name.to_owned(),
            });
        }
        let path = self.path(name);
        match fs::read(&path) {
            Ok(bytes) => Context::parse(name, &bytes, Some(path)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Err(ContextError::NotFound {
                name: name.to_owned(),
                path,
            }),
            Err(source) => Err(ContextError::Read {
                what: "context",
                path,
                source,
            }),
        }
    }

    /// Loads the selected context; `None` when none is selected. A selection naming a
    /// context that is gone is [`ContextError::NotFound`], as natscli fails on it.
    pub fn load_selected(&self) -> Result<Option<Context>, ContextError> {
        match self.selected()? {
            Some(name) => self.load(&name).map(Some),
            None => Ok(None),
        }
    }

    /// The trimmed name in `file`, `None` when it is missing or blank.
    fn read_name(&self, file: &str, what: &'static str) -> Result<Option<String>, ContextError> {
        let path = self.root.join(file);
        match fs::read_to_string(&path) {
            Ok(text) => Ok(Some(text.trim().to_owned()).filter(|n| !n.is_empty())),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(ContextError::Read { what, path, source }),
        }
    }
}

/// natscli's configuration directory: `XDG_CONFIG_HOME` when set and not empty, else
/// `$HOME/.config`.
fn config_home(xdg: Option<OsString>, home: Option<OsString>) -> Option<PathBuf> {
    match xdg.filter(|v| !v.is_empty()) {
        Some(xdg) => Some(PathBuf::from(xdg)),
        None => home
            .filter(|v| !v.is_empty())
            .map(|home| PathBuf::from(home).join(".config")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xdg_config_home_wins_over_home() {
        let some = |s: &str| Some(OsString::from(s));
        assert_eq!(
            config_home(some("/xdg"), some("/home/ann")),
            Some(PathBuf::from("/xdg"))
        );
        assert_eq!(
            config_home(some(""), some("/home/ann")),
            Some(PathBuf::from("/home/ann/.config"))
        );
        assert_eq!(
            config_home(None, some("/home/ann")),
            Some(PathBuf::from("/home/ann/.config"))
        );
        assert_eq!(config_home(None, some("")), None);
        assert_eq!(config_home(None, None), None);
        assert_eq!(
            ContextStore::at("/xdg").path("prod"),
            PathBuf::from("/xdg/nats/context/prod.json")
        );
    }

    #[test]
    fn names_follow_natscli() {
        for good in ["prod", "my.ctx", "with space", "a*b"] {
            assert!(ContextStore::is_valid_name(good), "{good}");
        }
        for bad in ["", "../x", "a..b", "a/b", "a\\b"] {
            assert!(!ContextStore::is_valid_name(bad), "{bad}");
        }
        let store = ContextStore::at("/nonexistent");
        assert!(matches!(
            store.load("../etc"),
            Err(ContextError::InvalidName { .. })
        ));
    }
}
