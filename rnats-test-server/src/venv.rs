//! Where `scripts/ensure-nats-server` and `scripts/ensure-nats-py` put what they install: a
//! virtual environment of our own, never the system Python.
//!
//! The scripts and this module agree on one place, `$RNATS_VENV`, or
//! `$HOME/.cache/rnats/venv` when that is unset, so a plain `cargo test` finds what an earlier
//! `scripts/test` installed even in a shell that never sourced the scripts.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Names the virtual environment instead of `$HOME/.cache/rnats/venv`.
const VENV_ENV: &str = "RNATS_VENV";

/// The virtual environment's directory, whether or not it exists yet.
pub(crate) fn dir() -> Option<PathBuf> {
    match std::env::var_os(VENV_ENV) {
        Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
        _ => {
            let home = std::env::var_os("HOME").filter(|home| !home.is_empty())?;
            Some(Path::new(&home).join(".cache/rnats/venv"))
        }
    }
}

/// `name` in the virtual environment's `bin/`, when that file exists.
pub(crate) fn bin(name: &str) -> Option<PathBuf> {
    let path = dir()?.join("bin").join(name);
    path.is_file().then_some(path)
}

/// Whether a file called `name` sits in one of `PATH`'s directories.
pub(crate) fn on_path(name: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(name).is_file()))
}

/// The program to run for `name`: the one on `PATH`, else the virtual environment's, else the
/// bare name (whose spawn then fails with a clear "not found").
pub(crate) fn program(name: &str) -> OsString {
    if on_path(name) {
        return OsString::from(name);
    }
    bin(name).map_or_else(|| OsString::from(name), PathBuf::into_os_string)
}
