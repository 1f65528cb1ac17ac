//! `rnats stream backup STREAM DIR` and `rnats stream restore DIR`: the server's snapshot
//! and restore API, into and out of natscli's backup directory (`backup.json` with the
//! stream's configuration and state, `stream.tar.s2` with the snapshot's bytes), so either
//! tool restores the other's backups.
//!
//! Backup: `$JS.API.STREAM.SNAPSHOT.<stream>` names an inbox; the server sends the snapshot
//! there in chunks, each with a reply subject the client acks to open the window for more,
//! and ends with an empty message (a status of 408 or 500 in its headers means it failed).
//! Restore: `$JS.API.STREAM.RESTORE.<stream>` answers with a subject to send chunks to,
//! each a request the server acks with an empty reply; an empty chunk ends the upload and
//! is answered with the restored stream's info or an error.

use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use bytes::Bytes;
use clap::Args;
use futures_util::StreamExt;
use indicatif::{ProgressBar, ProgressStyle};
use rnats::Request;
use rnats::jetstream::Context;
use serde_json::{Value, json};

use super::raw;
use crate::error::CliError;
use crate::out;
use crate::stats::human;

/// The file with the stream's configuration and state, natscli's name.
const METADATA_FILE: &str = "backup.json";
/// The file with the snapshot's bytes (an s2-compressed tar), natscli's name.
const DATA_FILE: &str = "stream.tar.s2";
/// Bytes per restore chunk.
const RESTORE_CHUNK: usize = 128 * 1024;
/// How long to wait for the next snapshot chunk, or the server's answer to the last
/// restore chunk (it restores the stream before answering).
const TRANSFER_TIMEOUT: Duration = Duration::from_secs(60);

/// Options of `rnats stream backup`.
#[derive(Debug, Args)]
pub(crate) struct BackupArgs {
    /// The stream to back up.
    stream: String,
    /// The directory to write the backup into (made if missing).
    target: PathBuf,
    /// Draw a progress bar on a terminal (the default; never when piped).
    #[arg(long, overrides_with = "no_progress")]
    progress: bool,
    /// No progress bar.
    #[arg(long)]
    no_progress: bool,
    /// Have the server check the stream's health before the backup.
    #[arg(long)]
    check: bool,
    /// Back up the consumers too (the default).
    #[arg(long, overrides_with = "no_consumers")]
    consumers: bool,
    /// Leave the consumers out.
    #[arg(long)]
    no_consumers: bool,
    /// Bytes per chunk the server sends (1KiB to 1MiB), e.g. 256KB.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    chunk_size: Option<u64>,
    /// Bytes the server sends before waiting for acks (1KiB to 32MiB), e.g. 8MB.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    window_size: Option<u64>,
    /// Print what was written as JSON.
    #[arg(long, short = 'j')]
    json: bool,
}

/// Options of `rnats stream restore`.
#[derive(Debug, Args)]
pub(crate) struct RestoreArgs {
    /// The directory holding the backup (`backup.json`, `stream.tar.s2`); or, as natscli's
    /// cheat sheet writes it, the stream's name and then the directory.
    #[arg(value_name = "[STREAM] DIR", num_args = 1..=2, required = true)]
    words: Vec<PathBuf>,
    /// Draw a progress bar on a terminal (the default; never when piped).
    #[arg(long, overrides_with = "no_progress")]
    progress: bool,
    /// No progress bar.
    #[arg(long)]
    no_progress: bool,
    /// Restore with this stream configuration (JSON) instead of the backed-up one; the
    /// name must stay the same.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Place the stream in this cluster.
    #[arg(long, value_name = "CLUSTER")]
    cluster: Option<String>,
    /// Place the stream on servers with this tag (repeatable).
    #[arg(long, value_name = "TAG")]
    tag: Vec<String>,
    /// Replicas to restore with, instead of the backed-up number.
    #[arg(long, value_name = "N")]
    replicas: Option<u64>,
    /// Print the restored stream's info as JSON.
    #[arg(long, short = 'j')]
    json: bool,
}

/// Parses a byte size with natscli's units.
fn parse_size(text: &str) -> Result<u64, String> {
    let bytes = crate::parse::size(text).map_err(|e| e.to_string())?;
    u64::try_from(bytes).map_err(|_| format!("{text} is not a size in bytes"))
}

/// Backs `args.stream` up into `args.target`.
pub(crate) async fn backup(js: &Context, args: BackupArgs) -> Result<(), CliError> {
    let name = args.stream.as_str();
    let info = raw(js, &format!("STREAM.INFO.{name}"), &Value::Null).await?;
    let expected = info
        .pointer("/state/bytes")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    make_private_dir(&args.target)?;
    // An older backup's metadata would vouch for data this run may not finish writing.
    let _ = std::fs::remove_file(args.target.join(METADATA_FILE));
    let data_path = args.target.join(DATA_FILE);
    let mut data = std::fs::File::create(&data_path).map_err(|source| CliError::WriteFile {
        path: data_path.clone(),
        source,
    })?;

    let client = js.client();
    let inbox = client.new_inbox();
    let mut chunks = client.subscribe(inbox.clone()).await?;
    client.flush().await?;
    let mut request = json!({
        "deliver_subject": inbox,
        "no_consumers": args.no_consumers,
        "jsck": args.check,
    });
    if let Some(size) = args.chunk_size {
        request["chunk_size"] = json!(size);
    }
    if let Some(size) = args.window_size {
        request["window_size"] = json!(size);
    }
    let started = raw(js, &format!("STREAM.SNAPSHOT.{name}"), &request).await?;

    let bar = bar(
        "backup",
        expected,
        !args.json && !args.no_progress && std::io::stderr().is_terminal(),
    );
    let failed = |reason: String| CliError::JetStream {
        action: format!("backup of stream {name} failed"),
        source: reason.into(),
    };
    let (mut received, mut count) = (0u64, 0u64);
    loop {
        let chunk = match tokio::time::timeout(TRANSFER_TIMEOUT, chunks.next()).await {
            Ok(Some(chunk)) => chunk,
            Ok(None) => return Err(failed("the connection closed".to_owned())),
            Err(_) => return Err(failed(format!("no data for {TRANSFER_TIMEOUT:?}"))),
        };
        if chunk.payload.is_empty() {
            match chunk.status {
                Some(status) if status.as_u16() >= 400 => {
                    let reason = chunk.description.unwrap_or_default();
                    return Err(failed(format!("the server said {status} {reason}")));
                }
                _ => break,
            }
        }
        data.write_all(&chunk.payload)
            .map_err(|source| CliError::WriteFile {
                path: data_path.clone(),
                source,
            })?;
        received += chunk.payload.len() as u64;
        count += 1;
        bar.set_position(received);
        if let Some(reply) = chunk.reply {
            client.publish(reply, Bytes::new()).await?;
        }
    }
    bar.finish_and_clear();
    data.sync_all().map_err(|source| CliError::WriteFile {
        path: data_path.clone(),
        source,
    })?;
    // As natscli: the metadata only once the data is complete, so a directory with a
    // `backup.json` holds a whole backup. Its keys, `config` and `state`, are the snapshot
    // answer's, which natscli's restore reads into its restore request.
    let metadata = json!({ "config": started["config"], "state": started["state"] });
    write_json(&args.target.join(METADATA_FILE), &metadata)?;
    let messages = started
        .pointer("/state/messages")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    if args.json {
        return out::json(&json!({
            "stream": name,
            "directory": args.target,
            "bytes": received,
            "chunks": count,
            "messages": messages,
        }));
    }
    out::print(&format!(
        "Backed up stream {name} ({} messages) into {}: {} in {} chunks\n",
        human::count(messages),
        args.target.display(),
        super::bytes(received),
        human::count(count),
    ))
}

impl RestoreArgs {
    /// The backup directory and, when given before it, the stream it must hold.
    fn dir_and_stream(&self) -> (PathBuf, Option<String>) {
        match self.words.as_slice() {
            [stream, dir, ..] => (dir.clone(), Some(stream.to_string_lossy().into_owned())),
            [dir] => (dir.clone(), None),
            [] => (PathBuf::from("."), None),
        }
    }
}

/// Restores the stream backed up in the directory `args` names.
pub(crate) async fn restore(js: &Context, args: RestoreArgs) -> Result<(), CliError> {
    let (dir, expected) = args.dir_and_stream();
    let metadata: Value = super::read_json(&dir.join(METADATA_FILE))?;
    let backed_up = metadata["config"]["name"].as_str().unwrap_or_default();
    if let Some(expected) = expected.filter(|e| e != backed_up) {
        return Err(CliError::JetStream {
            action: format!("cannot restore stream {expected}"),
            source: format!("the backup in {} holds stream {backed_up:?}", dir.display()).into(),
        });
    }
    let mut config = match &args.config {
        Some(path) => super::read_json::<Value>(path)?,
        None => metadata["config"].clone(),
    };
    let name = config["name"].as_str().unwrap_or_default().to_owned();
    if name.is_empty() {
        return Err(CliError::Usage(
            "the backup's configuration has no stream name",
        ));
    }
    if metadata["config"]["name"].as_str() != Some(name.as_str()) {
        return Err(CliError::Usage(
            "--config must keep the backed-up stream's name",
        ));
    }
    if args.cluster.is_some() || !args.tag.is_empty() {
        config["placement"] = json!({ "cluster": args.cluster, "tags": args.tag });
    }
    if let Some(replicas) = args.replicas {
        config["num_replicas"] = json!(replicas);
    }
    if raw(js, &format!("STREAM.INFO.{name}"), &Value::Null)
        .await
        .is_ok()
    {
        return Err(CliError::JetStream {
            action: format!("cannot restore stream {name}"),
            source: "a stream of that name exists; remove it first".into(),
        });
    }
    let data_path = dir.join(DATA_FILE);
    let mut data = std::fs::File::open(&data_path).map_err(|source| CliError::ReadFile {
        what: "backup data",
        path: data_path.clone(),
        source,
    })?;
    let total = data.metadata().map(|m| m.len()).unwrap_or(0);

    let request = json!({ "config": config, "state": metadata["state"] });
    let started = raw(js, &format!("STREAM.RESTORE.{name}"), &request).await?;
    let Some(deliver) = started["deliver_subject"].as_str() else {
        return Err(CliError::JetStream {
            action: format!("cannot restore stream {name}"),
            source: "the server named no subject to send the backup to".into(),
        });
    };
    let bar = bar(
        "restore",
        total,
        !args.json && !args.no_progress && std::io::stderr().is_terminal(),
    );
    let client = js.client();
    let failed = |reason: String| CliError::JetStream {
        action: format!("restore of stream {name} failed"),
        source: reason.into(),
    };
    let mut sent = 0u64;
    let mut buffer = vec![0u8; RESTORE_CHUNK];
    loop {
        let n = read_full(&mut data, &mut buffer).map_err(|source| CliError::ReadFile {
            what: "backup data",
            path: data_path.clone(),
            source,
        })?;
        if n == 0 {
            break;
        }
        let ack = client
            .send_request(
                deliver.to_owned(),
                Request::new()
                    .payload(Bytes::copy_from_slice(&buffer[..n]))
                    .timeout(Some(TRANSFER_TIMEOUT)),
            )
            .await?;
        if !ack.payload.is_empty() {
            return Err(failed(api_error(&ack.payload)));
        }
        sent += n as u64;
        bar.set_position(sent);
    }
    let done = client
        .send_request(
            deliver.to_owned(),
            Request::new().timeout(Some(TRANSFER_TIMEOUT)),
        )
        .await?;
    bar.finish_and_clear();
    let info: Value = serde_json::from_slice(&done.payload)
        .map_err(|e| failed(format!("the server's answer is not JSON: {e}")))?;
    if info.get("error").is_some() {
        return Err(failed(api_error(&done.payload)));
    }
    if args.json {
        return out::json_pretty(&info);
    }
    let messages = info
        .pointer("/state/messages")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    out::print(&format!(
        "Restored stream {name} ({} messages) from {}: {} sent\n",
        human::count(messages),
        dir.display(),
        super::bytes(sent),
    ))
}

/// The description of a JetStream API error reply, or the reply itself.
fn api_error(payload: &[u8]) -> String {
    let text = String::from_utf8_lossy(payload);
    serde_json::from_slice::<Value>(payload)
        .ok()
        .and_then(|v| {
            let error = v.get("error")?;
            let description = error.get("description")?.as_str()?;
            let code = error.get("err_code").and_then(Value::as_u64).unwrap_or(0);
            Some(format!("{description} (error code {code})"))
        })
        .unwrap_or_else(|| text.into_owned())
}

/// Reads until `buffer` is full or the file ends; the bytes read.
fn read_full(file: &mut std::fs::File, buffer: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buffer.len() {
        match file.read(&mut buffer[filled..])? {
            0 => break,
            n => filled += n,
        }
    }
    Ok(filled)
}

/// Makes the backup directory, readable by its owner only as natscli makes it (the backup
/// holds every message of the stream).
fn make_private_dir(path: &Path) -> Result<(), CliError> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(path).map_err(|source| CliError::WriteFile {
        path: path.to_path_buf(),
        source,
    })
}

/// Writes `value` to `path` as indented JSON.
fn write_json(path: &Path, value: &Value) -> Result<(), CliError> {
    let text = serde_json::to_string_pretty(value)?;
    std::fs::write(path, text).map_err(|source| CliError::WriteFile {
        path: path.to_path_buf(),
        source,
    })
}

/// A byte progress bar labelled `label` towards `total`, hidden unless `visible`.
fn bar(label: &'static str, total: u64, visible: bool) -> ProgressBar {
    if !visible {
        return ProgressBar::hidden();
    }
    let style = ProgressStyle::with_template(
        "{msg:>8} [{elapsed_precise}] {wide_bar:.cyan/blue} {bytes}/{total_bytes} ({bytes_per_sec})",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar());
    ProgressBar::new(total)
        .with_style(style)
        .with_message(label)
}
