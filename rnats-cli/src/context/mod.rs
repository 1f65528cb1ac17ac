//! `rnats context`: natscli's contexts, read and written in natscli's own files, so a
//! context made with `nats context add` works with rnats and the other way round.

mod edit;
pub(crate) mod store;
mod validate;

use clap::{Args, Subcommand};
use serde_json::{Map, Value};

use crate::conn::ConnArgs;
use crate::error::CliError;
use crate::out::{self, Fields, Table};
use store::{ContextFile, SECRET_FIELDS, Store};

/// Options of `rnats context`.
#[derive(Debug, Args)]
pub(crate) struct ContextArgs {
    /// What to do with contexts.
    #[command(subcommand)]
    command: ContextCommand,
}

/// The context commands.
#[derive(Debug, Subcommand)]
enum ContextCommand {
    /// Lists the contexts, marking the selected one with `*`.
    ///
    /// Example: rnats context ls
    #[command(alias = "list", alias = "l")]
    Ls {
        /// One JSON object per context instead of a table.
        #[arg(long, short = 'j', conflicts_with_all = ["names", "completion"])]
        json: bool,
        /// Only the names, one a line (for scripts).
        #[arg(long, conflicts_with = "completion")]
        names: bool,
        /// `NAME:DESCRIPTION` a line, `:` in a name escaped and the selected one marked
        /// with `*`, as shell completion reads it (natscli's hidden form).
        #[arg(long, hide = true)]
        completion: bool,
    },
    /// Creates a context, or updates the settings given of an existing one.
    ///
    /// Example: rnats context add prod --server nats://prod:4222 --creds ~/prod.creds --select
    #[command(alias = "save", alias = "create")]
    Add(AddArgs),
    /// Changes the settings given of an existing context; with none, opens its file in
    /// $EDITOR and checks the result before saving it.
    ///
    /// Example: rnats context edit prod --server nats://prod2:4222
    #[command(alias = "vi")]
    Edit(AddArgs),
    /// Selects the context used when --context is not given; without NAME, shows it.
    ///
    /// Example: rnats context select prod
    #[command(alias = "switch", alias = "set")]
    Select {
        /// The context to select.
        name: Option<String>,
    },
    /// Leaves no context selected, so only flags and the environment say how to connect.
    ///
    /// Example: rnats context unselect
    Unselect,
    /// Shows a context's settings, secrets masked (the selected one without NAME).
    ///
    /// Example: rnats context info prod
    #[command(alias = "show", alias = "v", alias = "view")]
    Info {
        /// The context.
        name: Option<String>,
        /// The settings as JSON.
        #[arg(long, short = 'j')]
        json: bool,
    },
    /// Checks every context (or NAME): it loads, the files it names exist and, with
    /// --connect, it connects.
    ///
    /// Example: rnats context validate --connect
    Validate {
        /// The context (default: all).
        name: Option<String>,
        /// Also connect with each context.
        #[arg(long)]
        connect: bool,
    },
    /// Copies a context to a new name, with the settings given changed.
    ///
    /// Example: rnats context copy prod staging --server nats://staging:4222
    #[command(alias = "cp")]
    Copy(CopyArgs),
    /// Selects the context selected before the current one, and shows it.
    ///
    /// Example: rnats context previous
    #[command(alias = "-")]
    Previous,
    /// Removes a context.
    ///
    /// Example: rnats context rm old --force
    #[command(alias = "remove")]
    Rm {
        /// The context.
        name: String,
        /// Do not ask for confirmation.
        #[arg(long, short = 'f')]
        force: bool,
    },
}

/// Arguments of `context add` and `context edit`; the settings themselves are the global
/// connection flags (`--server`, `--user`, `--creds`, `--tlsca`, ...), as in natscli.
#[derive(Debug, Args)]
struct AddArgs {
    /// The context's name.
    name: String,
    /// What the context is for (`description`).
    #[arg(long)]
    description: Option<String>,
    /// Select the context afterwards.
    #[arg(long)]
    select: bool,
}

/// Arguments of `context copy`: the context copied, then `context add`'s.
#[derive(Debug, Args)]
struct CopyArgs {
    /// The context to copy.
    source: String,
    #[command(flatten)]
    add: AddArgs,
}

impl AddArgs {
    /// Writes the settings given into `context`: this command's and the connection flags;
    /// how many were given. `--user` without `--password` is a token, as natscli saves it.
    fn apply(&self, conn: &ConnArgs, context: &mut ContextFile) -> usize {
        let path = |p: &Option<std::path::PathBuf>| p.as_ref().map(|p| p.display().to_string());
        let (user, token) = match (&conn.user, &conn.password) {
            (Some(token), None) => (None, Some(token.clone())),
            _ => (conn.user.clone(), conn.token.clone()),
        };
        // One way to log in replaces the other: a token saved over a user and password (or
        // the other way round) would otherwise send both at the next connect.
        let replaced: &[&str] = match (&user, &token) {
            (_, Some(_)) => &["user", "password"],
            (Some(_), None) => &["token"],
            (None, None) => &[],
        };
        for field in replaced {
            context.set_text(field, "");
        }
        let texts = [
            ("url", conn.server.clone()),
            ("socks_proxy", conn.socks_proxy.clone()),
            ("description", self.description.clone()),
            ("user", user),
            ("password", conn.password.clone()),
            ("token", token),
            ("user_jwt", conn.jwt.clone()),
            ("user_seed", conn.seed.clone()),
            ("creds", path(&conn.creds)),
            ("nkey", path(&conn.nkey)),
            ("ca", path(&conn.tls_ca)),
            ("cert", path(&conn.tls_cert)),
            ("key", path(&conn.tls_key)),
            ("jetstream_domain", conn.js_domain.clone()),
            ("jetstream_api_prefix", conn.js_api_prefix.clone()),
            ("jetstream_event_prefix", conn.js_event_prefix.clone()),
            ("inbox_prefix", conn.inbox_prefix.clone()),
        ];
        let mut given = 0;
        for (field, value) in texts {
            if let Some(value) = value {
                context.set_text(field, &value);
                given += 1;
            }
        }
        if conn.tls_first {
            context.set_flag("tls_first", true);
            given += 1;
        }
        given
    }
}

/// Runs a context command.
pub(crate) fn run(args: ContextArgs, conn: &ConnArgs) -> Result<(), CliError> {
    let store = Store::locate()?;
    match args.command {
        ContextCommand::Ls {
            json,
            names,
            completion,
        } => {
            let form = if json {
                ListForm::Json
            } else if names {
                ListForm::Names
            } else if completion {
                ListForm::Completion
            } else {
                ListForm::Table
            };
            list(&store, form)
        }
        ContextCommand::Add(add) => save(&store, &add, conn, false),
        ContextCommand::Edit(add) => save(&store, &add, conn, true),
        ContextCommand::Select { name: Some(name) } => {
            if !store.exists(&name) {
                return Err(CliError::UnknownContext(name));
            }
            store.select(Some(&name))?;
            eprintln!("Selected context {name:?}");
            Ok(())
        }
        ContextCommand::Select { name: None } => match store.selected()? {
            Some(name) => out::print(&format!("{name}\n")),
            None => {
                eprintln!("No context is selected");
                Ok(())
            }
        },
        ContextCommand::Unselect => match store.selected()? {
            Some(name) => {
                store.select(None)?;
                eprintln!("Unselected context {name:?}");
                Ok(())
            }
            None => {
                eprintln!("No context is selected");
                Ok(())
            }
        },
        ContextCommand::Copy(copy) => {
            if !store.exists(&copy.source) {
                return Err(CliError::UnknownContext(copy.source));
            }
            if store.exists(&copy.add.name) {
                return Err(CliError::ContextExists(copy.add.name));
            }
            let mut context = store.load(&copy.source)?;
            copy.add.apply(conn, &mut context);
            store.save(&copy.add.name, &context)?;
            eprintln!(
                "Copied context {:?} to {:?} in {}",
                copy.source,
                copy.add.name,
                store.path(&copy.add.name).display()
            );
            if copy.add.select {
                store.select(Some(&copy.add.name))?;
                eprintln!("Selected context {:?}", copy.add.name);
            }
            Ok(())
        }
        ContextCommand::Previous => {
            // natscli's: with nothing selected before, the current one is shown as it is.
            let previous = store.previous()?;
            if previous.is_none() && store.selected()?.is_none() {
                return Err(CliError::Usage(
                    "no context is selected, and none was before",
                ));
            }
            if let Some(previous) = previous {
                if !store.exists(&previous) {
                    return Err(CliError::UnknownContext(previous));
                }
                store.select(Some(&previous))?;
                eprintln!("Selected context {previous:?}");
            }
            info(&store, None, false)
        }
        ContextCommand::Info { name, json } => info(&store, name, json),
        ContextCommand::Validate { name, connect } => validate::run(&store, name, connect),
        ContextCommand::Rm { name, force } => {
            if !store.exists(&name) {
                return Err(CliError::UnknownContext(name));
            }
            out::confirm(&format!("Really remove context {name:?}"), force)?;
            store.delete(&name)?;
            eprintln!("Removed context {name:?}");
            Ok(())
        }
    }
}

/// How `context ls` prints the contexts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ListForm {
    Table,
    Json,
    Names,
    Completion,
}

fn list(store: &Store, form: ListForm) -> Result<(), CliError> {
    let selected = store.selected()?;
    // As natscli: a context that does not load is left out, with a line on stderr (none for
    // completion, which has no room for errors).
    let mut contexts = Vec::new();
    for name in store.list()? {
        match store.context(&name) {
            Ok(context) => contexts.push((name, context)),
            Err(error) if form != ListForm::Completion => {
                eprintln!("Could not load context {name}: {error}");
            }
            Err(_) => {}
        }
    }
    let mark = |name: &str| {
        if selected.as_deref() == Some(name) {
            "*"
        } else {
            ""
        }
    };
    match form {
        ListForm::Names => {
            for (name, _) in &contexts {
                println!("{name}");
            }
            Ok(())
        }
        ListForm::Completion => {
            for (name, context) in &contexts {
                let escaped = name.replace(':', "\\:");
                let description = context.description().unwrap_or_default();
                println!("{escaped}{}:{description}", mark(name));
            }
            Ok(())
        }
        ListForm::Json => {
            let all: Vec<Value> = contexts
                .iter()
                .map(|(name, context)| {
                    let mut entry = Map::new();
                    entry.insert("name".into(), Value::String(name.clone()));
                    entry.insert(
                        "selected".into(),
                        Value::Bool(selected.as_deref() == Some(name)),
                    );
                    entry.insert(
                        "description".into(),
                        Value::String(context.description().unwrap_or_default().to_owned()),
                    );
                    entry.insert(
                        "url".into(),
                        Value::String(context.url().unwrap_or_default().to_owned()),
                    );
                    Value::Object(entry)
                })
                .collect();
            out::json(&all)
        }
        ListForm::Table if contexts.is_empty() => {
            eprintln!("No contexts; make one with `rnats context add NAME --server URL`");
            Ok(())
        }
        ListForm::Table => {
            let mut table = Table::new(["Name", "Description", "URL"]);
            for (name, context) in &contexts {
                table.row(vec![
                    format!("{name}{}", mark(name)),
                    context.description().unwrap_or_default().to_owned(),
                    context.url().unwrap_or_default().to_owned(),
                ]);
            }
            table.print()
        }
    }
}

fn save(store: &Store, add: &AddArgs, conn: &ConnArgs, must_exist: bool) -> Result<(), CliError> {
    let existing = store.exists(&add.name);
    if must_exist && !existing {
        return Err(CliError::UnknownContext(add.name.clone()));
    }
    let mut context = if existing {
        store.load(&add.name)?
    } else {
        ContextFile::new()
    };
    let before = context.clone();
    let given = add.apply(conn, &mut context);
    if must_exist && given == 0 && !add.select {
        // natscli's `context edit NAME`: the file in $EDITOR.
        edit::in_editor(store, &add.name, before)?;
    } else if existing && context == before {
        eprintln!("No changes to context {:?}", add.name);
    } else {
        store.save(&add.name, &context)?;
        let verb = if existing { "Updated" } else { "Created" };
        eprintln!(
            "{verb} context {:?} in {}",
            add.name,
            store.path(&add.name).display()
        );
    }
    if add.select {
        store.select(Some(&add.name))?;
        eprintln!("Selected context {:?}", add.name);
    }
    Ok(())
}

fn info(store: &Store, name: Option<String>, json: bool) -> Result<(), CliError> {
    let name = match name {
        Some(name) => name,
        None => store
            .selected()?
            .ok_or(CliError::Usage("no context is selected; name one"))?,
    };
    let context = store.load(&name)?;
    let masked = context.masked();
    if json {
        return out::json_pretty(&masked);
    }
    let mut fields = Fields::new();
    fields.add("Name", &name);
    fields.add("Path", store.path(&name).display());
    if store.selected()?.as_deref() == Some(&name) {
        fields.add("Selected", "yes");
    }
    for (field, value) in &masked {
        let text = match value {
            Value::String(s) if s.is_empty() => continue,
            Value::String(s) => s.clone(),
            Value::Bool(false) | Value::Null => continue,
            other => other.to_string(),
        };
        let label = if SECRET_FIELDS.contains(&field.as_str()) {
            field.clone()
        } else {
            field.replace('_', " ")
        };
        fields.add(&label, text);
    }
    out::print(&format!("Context {name:?}\n\n{}", fields.render()))
}
