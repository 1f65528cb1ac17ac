//! `stream ls`: the streams in a table, their names, or (`--json`) the names as a JSON array,
//! leaving out the streams the system keeps for itself unless `-a` asks for them, as natscli
//! does.

use clap::Args;
use futures_util::StreamExt;
use rnats::jetstream::Context;
use rnats::jetstream::stream::Info;
use serde_json::json;

use super::render_unlisted;
use crate::error::CliError;
use crate::out;

/// Options of `stream ls`.
#[derive(Debug, Args)]
pub(crate) struct LsArgs {
    /// The names of the streams listed, as a JSON array (natscli's form).
    #[arg(long, short = 'j')]
    json: bool,
    /// Only the names, one per line: every stream, the system's too, as natscli lists them.
    #[arg(long, short = 'n')]
    names: bool,
    /// Only the streams that hold messages on this subject (wildcards allowed).
    #[arg(long, value_name = "SUBJECT")]
    subject: Option<String>,
}

/// Whether `name` is a stream the system keeps for itself, as jsm.go's `IsInternalStream`
/// has it: a Key-Value bucket's (`KV_`), an Object Store bucket's (`OBJ_`), or MQTT's state
/// (`$MQTT_`).
pub(crate) fn is_internal(name: &str) -> bool {
    ["KV_", "OBJ_", "$MQTT_"]
        .iter()
        .any(|prefix| name.starts_with(prefix))
}

/// Runs `stream ls`; `all` (the `stream` command's `-a`) keeps the internal streams in.
pub(crate) async fn run(js: &Context, args: LsArgs, all: bool) -> Result<(), CliError> {
    let mut infos = Vec::new();
    let mut unlisted = String::new();
    if args.json || args.subject.is_some() {
        // The server filters: a stream is listed when its subjects overlap `subject`.
        let request = match &args.subject {
            Some(subject) => json!({ "subject": subject }),
            None => json!({}),
        };
        for item in super::stream_report::list(js, &request).await? {
            infos.push(serde_json::from_value::<Info>(item)?);
        }
    } else {
        let mut streams = js.streams();
        while let Some(info) = streams.next().await {
            infos.push(info.map_err(CliError::js("cannot list streams"))?);
        }
        unlisted = render_unlisted("streams", streams.missing(), streams.offline());
    }
    infos.sort_by(|a, b| a.config.name.cmp(&b.config.name));
    if args.names {
        let text: String = infos
            .iter()
            .map(|i| format!("{}\n", i.config.name))
            .collect();
        // The names are for scripts: what could not be listed goes to stderr.
        eprint!("{unlisted}");
        return out::print(&text);
    }
    let listed = infos.len();
    if !all {
        infos.retain(|info| !is_internal(&info.config.name));
    }
    if args.json {
        let names: Vec<&str> = infos.iter().map(|i| i.config.name.as_str()).collect();
        return out::json(&names);
    }
    if infos.is_empty() && unlisted.is_empty() {
        if infos.len() < listed {
            eprintln!("No streams defined, pass -a to include system streams");
        } else {
            eprintln!("No streams defined");
        }
        return Ok(());
    }
    if !infos.is_empty() {
        super::stream_table::table(&infos).print()?;
    }
    out::print(&unlisted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_buckets_and_mqtt_streams_are_internal() {
        for name in ["KV_config", "OBJ_files", "$MQTT_msgs"] {
            assert!(is_internal(name), "{name}");
        }
        for name in ["ORDERS", "KV", "kv_config", "OBJECTS", "MQTT_x"] {
            assert!(!is_internal(name), "{name}");
        }
    }
}
