//! Credential references, as natscli's contexts take them (jsm.go `natscontext` resolvers):
//! a credentials file, NKey seed, token, password, user JWT or seed may be written as
//! `env://NAME` (the value of the environment variable NAME), `file://PATH` (the file's
//! contents), `data:;base64,PAYLOAD` (inline, base64), or plainly: a path for credentials
//! and NKey files, the value itself for the others. `op://` (1Password) and `nsc://`
//! references need programs rnats does not run, and are refused.

use std::path::PathBuf;

use base64::Engine;

use crate::context::store::expand_home;
use crate::error::CliError;

/// Where a credentials file or NKey seed comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Material {
    /// A file to read when connecting.
    File(PathBuf),
    /// The contents themselves, from the environment or inline.
    Inline(String),
}

/// A credentials file or NKey seed reference (`what` names the setting in errors): a bare
/// path or `file://` is a file (`~` expanded), the other schemes give the contents.
pub(crate) fn material(what: &'static str, reference: &str) -> Result<Material, CliError> {
    match scheme(reference) {
        None => Ok(Material::File(expand_home(reference))),
        Some(Scheme::File) => Ok(Material::File(expand_home(&reference[FILE.len()..]))),
        Some(other) => Ok(Material::Inline(resolve(what, reference, other)?)),
    }
}

/// A token, password, user JWT or seed reference: the value itself unless it names a
/// scheme, whose value then has its line ending trimmed, as natscli trims it.
pub(crate) fn value(what: &'static str, reference: &str) -> Result<String, CliError> {
    let resolved = match scheme(reference) {
        None => return Ok(reference.to_owned()),
        Some(Scheme::File) => {
            let path = expand_home(&reference[FILE.len()..]);
            std::fs::read_to_string(&path).map_err(|source| CliError::ReadFile {
                what,
                path,
                source,
            })?
        }
        Some(other) => resolve(what, reference, other)?,
    };
    Ok(resolved.trim_end_matches(['\r', '\n']).to_owned())
}

/// The schemes natscli resolves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scheme {
    File,
    Env,
    Data,
    /// `op://` or `nsc://`: an outside program rnats does not run.
    Program,
}

const FILE: &str = "file://";
const ENV: &str = "env://";

/// The scheme `reference` starts with (case-insensitive, as natscli reads it), if it is
/// one natscli resolves; anything else is a plain path or value.
fn scheme(reference: &str) -> Option<Scheme> {
    let (name, _) = reference.split_once(':')?;
    match name.to_ascii_lowercase().as_str() {
        "file" if has_prefix(reference, FILE) => Some(Scheme::File),
        "env" if has_prefix(reference, ENV) => Some(Scheme::Env),
        "data" => Some(Scheme::Data),
        "op" | "nsc" if reference[name.len()..].starts_with("://") => Some(Scheme::Program),
        _ => None,
    }
}

fn has_prefix(text: &str, prefix: &str) -> bool {
    text.get(..prefix.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(prefix))
}

/// The contents an `env://`, `data:` or program reference stands for.
fn resolve(what: &'static str, reference: &str, scheme: Scheme) -> Result<String, CliError> {
    let bad = |reason: String| CliError::InvalidArgument {
        what,
        given: reference.to_owned(),
        reason,
    };
    match scheme {
        Scheme::Env => {
            let name = &reference[ENV.len()..];
            if name.is_empty() {
                return Err(bad("env:// names no variable".to_owned()));
            }
            match std::env::var(name) {
                Ok(value) if !value.is_empty() => Ok(value),
                Ok(_) => Err(bad(format!("the environment variable {name} is empty"))),
                Err(_) => Err(bad(format!("the environment variable {name} is not set"))),
            }
        }
        Scheme::Data => {
            // RFC 2397, base64 only, as natscli takes it: data:[media type];base64,PAYLOAD
            let (head, payload) = reference
                .split_once(',')
                .ok_or_else(|| bad("a data: reference is data:;base64,PAYLOAD".to_owned()))?;
            if !head.to_ascii_lowercase().ends_with(";base64") {
                return Err(bad("only base64 data: references are taken".to_owned()));
            }
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(payload.trim())
                .map_err(|e| bad(format!("not base64: {e}")))?;
            String::from_utf8(bytes).map_err(|_| bad("not UTF-8 text".to_owned()))
        }
        Scheme::Program => Err(bad(
            "op:// and nsc:// references run programs rnats does not run; use env:// or a file"
                .to_owned(),
        )),
        Scheme::File => unreachable!("file references are read by the caller"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_references_are_paths_or_values() {
        assert_eq!(
            material("creds", "/tmp/x.creds").ok(),
            Some(Material::File(PathBuf::from("/tmp/x.creds")))
        );
        assert_eq!(
            material("creds", "FILE:///tmp/x.creds").ok(),
            Some(Material::File(PathBuf::from("/tmp/x.creds")))
        );
        assert_eq!(value("token", "s3cret").ok().as_deref(), Some("s3cret"));
        // A password that merely holds a colon is a value, not a reference.
        assert_eq!(
            value("password", "a:b://c").ok().as_deref(),
            Some("a:b://c")
        );
    }

    #[test]
    fn data_references_are_decoded() {
        assert_eq!(
            value("token", "data:;base64,czNjcmV0Cg==").ok().as_deref(),
            Some("s3cret")
        );
        assert_eq!(
            material("nkey", "DATA:text/plain;base64,U1VBQQ==").ok(),
            Some(Material::Inline("SUAA".to_owned()))
        );
        assert!(value("token", "data:,plain").is_err());
        assert!(value("token", "data:;base64,***").is_err());
    }

    #[test]
    fn env_references_need_a_set_variable_and_programs_are_refused() {
        // PATH is set in any test environment; its value is not what matters here.
        assert!(value("token", "env://PATH").is_ok_and(|v| !v.is_empty()));
        assert!(value("token", "env://RNATS_TEST_SURELY_UNSET_VARIABLE").is_err());
        assert!(value("token", "env://").is_err());
        assert!(material("creds", "op://vault/item/field").is_err());
        assert!(material("creds", "nsc://op/acc/user").is_err());
    }
}
