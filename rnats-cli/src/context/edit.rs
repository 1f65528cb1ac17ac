//! `rnats context edit NAME` without settings: the context's file in `$EDITOR`, as natscli
//! opens it, then checked before it replaces the context.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::store::{ContextFile, Store, write_private};
use crate::error::CliError;

/// Opens a copy of the context `name` (now `current`) in `$EDITOR` and saves what comes
/// back when it is a JSON object that differs. A copy that no longer parses changes
/// nothing and is kept beside it to recover by hand; an unchanged one is not written back.
pub(super) fn in_editor(store: &Store, name: &str, current: ContextFile) -> Result<(), CliError> {
    let editor = std::env::var("EDITOR")
        .ok()
        .filter(|e| !e.trim().is_empty())
        .ok_or(CliError::Usage(
            "set EDITOR to your editor, or give the settings to change as flags \
             (rnats context edit NAME --server URL)",
        ))?;
    let path = store.path(name);
    let original = std::fs::read(&path).map_err(|source| CliError::ReadFile {
        what: "context",
        path: path.clone(),
        source,
    })?;
    // Beside the context, readable by its owner only: it holds the same secrets.
    let copy = edit_path(&path);
    write_private(&copy, &original).map_err(|source| CliError::WriteFile {
        path: copy.clone(),
        source,
    })?;
    let edited = run_editor(&editor, &copy).and_then(|()| {
        std::fs::read(&copy).map_err(|source| CliError::ReadFile {
            what: "edited context",
            path: copy.clone(),
            source,
        })
    });
    let edited = match edited {
        Ok(bytes) => bytes,
        Err(e) => {
            let _ = std::fs::remove_file(&copy);
            return Err(e);
        }
    };
    // Kept on a parse error, so the edit can be recovered by hand until the next `context
    // edit`, which starts over from the context; the context stays as it was.
    let context = ContextFile::parse(&edited, &copy)?;
    let _ = std::fs::remove_file(&copy);
    if context == current {
        eprintln!("No changes to context {name:?}");
        return Ok(());
    }
    store.save(name, &context)?;
    eprintln!("Updated context {name:?} in {}", path.display());
    Ok(())
}

/// `NAME.json.edit` beside `NAME.json`.
fn edit_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".edit");
    PathBuf::from(name)
}

/// Runs `editor` (a command line, as `$EDITOR` may hold `code --wait`) on `file` through the
/// shell, on this terminal; an editor that fails changes nothing.
fn run_editor(editor: &str, file: &Path) -> Result<(), CliError> {
    let command = format!("{editor} \"$1\"");
    let failed = |source| CliError::Command {
        command: editor.to_owned(),
        source,
    };
    let status = Command::new("sh")
        .arg("-c")
        .arg(&command)
        .arg("sh")
        .arg(file)
        .status()
        .map_err(failed)?;
    if status.success() {
        Ok(())
    } else {
        Err(failed(std::io::Error::other(format!(
            "the editor exited with {status}; the context is unchanged"
        ))))
    }
}
