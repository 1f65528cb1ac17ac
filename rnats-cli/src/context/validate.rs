//! `rnats context validate [NAME] [--connect]`: loads each context (or the one named),
//! checks that the files it names exist and, with `--connect`, connects with it, as
//! natscli's does. One line per context; exit code 1 if any failed.

use rnats::context::{Context, Material, resolve_path};

use super::store::Store;
use crate::conn::ConnArgs;
use crate::error::CliError;
use crate::out;

/// A setting of a context.
type Setting = fn(&Context) -> Option<&str>;

/// The context settings that name files.
const FILE_FIELDS: [(&str, Setting, &str); 5] = [
    ("creds", Context::creds, "credentials"),
    ("nkey", Context::nkey, "NKey seed"),
    ("ca", Context::ca, "CA certificate"),
    ("cert", Context::cert, "client certificate"),
    ("key", Context::key, "client key"),
];

/// Validates `name`, or every context when `None`.
pub(super) fn run(store: &Store, name: Option<String>, connect: bool) -> Result<(), CliError> {
    let names = match name {
        Some(name) if !store.exists(&name) => return Err(CliError::UnknownContext(name)),
        Some(name) => vec![name],
        None => store.list()?,
    };
    let mut failed = 0;
    for name in names {
        match check(store, &name, connect) {
            Ok(what) => out::print(&format!("Context {name:?}: OK, {what}\n"))?,
            Err(why) => {
                failed += 1;
                out::print(&format!("Context {name:?}: FAILED, {why}\n"))?;
            }
        }
    }
    if failed > 0 {
        return Err(CliError::Usage("context validation failed"));
    }
    Ok(())
}

/// Checks one context; what was checked, or why it fails.
fn check(store: &Store, name: &str, connect: bool) -> Result<String, String> {
    let context = store.context(name).map_err(|e| e.to_string())?;
    for (field, setting, what) in FILE_FIELDS {
        // Credentials and seeds may be references (`env://NAME`) rather than files.
        let path = match (field, setting(&context)) {
            (_, None) => None,
            ("creds" | "nkey", Some(text)) => match Material::parse(field, text) {
                Ok(Material::File(path)) => Some(path),
                Ok(Material::Inline(_)) => None,
                Err(e) => return Err(e.to_string()),
            },
            (_, Some(text)) => Some(resolve_path(field, text).map_err(|e| e.to_string())?),
        };
        if let Some(path) = path
            && !path.is_file()
        {
            return Err(format!("its {what} file {} does not exist", path.display()));
        }
    }
    let conn = ConnArgs {
        context: Some(name.to_owned()),
        ..ConnArgs::default()
    };
    let settings = conn.settings().map_err(|e| e.to_string())?;
    if !connect {
        return Ok(format!("settings load ({})", settings.url));
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    runtime.block_on(async {
        let client = settings.connect().await.map_err(|e| e.to_string())?;
        client.flush().await.map_err(|e| e.to_string())?;
        Ok(format!("connected to {}", settings.url))
    })
}
