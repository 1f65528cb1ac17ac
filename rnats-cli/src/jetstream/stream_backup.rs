//! `rnats stream backup STREAM DIR` and `rnats stream restore DIR`: the server's snapshot
//! and restore API, into and out of natscli's backup directory (`backup.json` with the
//! stream's configuration and state, `stream.tar.s2` with the snapshot's bytes), so either
//! tool restores the other's backups.
//!
//! The transfer is the library's: `Stream::snapshot` (the data as a stream of chunks, acked
//! as they are taken) and `Context::restore_stream` (the data read and sent in chunks, each
//! acked by the server); this file adds the directory, the progress bar and the report.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use clap::Args;
use futures_util::StreamExt;
use indicatif::{ProgressBar, ProgressStyle};
use rnats::jetstream::Context;
use rnats::jetstream::stream::{
    BACKUP_DATA_FILE, BACKUP_METADATA_FILE, Config, RestoreErrorKind, State,
};
use serde_json::{Value, json};
use tokio::io::{AsyncRead, ReadBuf};

use crate::error::CliError;
use crate::out;
use crate::stats::human;

/// The file with the stream's configuration and state, natscli's name.
const METADATA_FILE: &str = BACKUP_METADATA_FILE;
/// The file with the snapshot's bytes (an s2-compressed tar), natscli's name.
const DATA_FILE: &str = BACKUP_DATA_FILE;
/// How long to wait for the next snapshot chunk.
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
    let stream = js
        .get_stream_no_info(name)
        .await
        .map_err(CliError::js(format!("cannot back up stream {name}")))?;
    let mut snapshot = stream
        .snapshot()
        .no_consumers(args.no_consumers)
        .check(args.check)
        .timeout(TRANSFER_TIMEOUT);
    // The server clamps both sizes into its range, so a larger one is its maximum.
    if let Some(size) = args.chunk_size {
        snapshot = snapshot.chunk_size(u32::try_from(size).unwrap_or(u32::MAX));
    }
    if let Some(size) = args.window_size {
        snapshot = snapshot.window_size(u32::try_from(size).unwrap_or(u32::MAX));
    }
    let mut snapshot = snapshot
        .start()
        .await
        .map_err(CliError::js(format!("cannot back up stream {name}")))?;

    make_private_dir(&args.target)?;
    // An older backup's metadata would vouch for data this run may not finish writing.
    let _ = std::fs::remove_file(args.target.join(METADATA_FILE));
    let data_path = args.target.join(DATA_FILE);
    let mut data = std::fs::File::create(&data_path).map_err(|source| CliError::WriteFile {
        path: data_path.clone(),
        source,
    })?;
    let bar = bar(
        "backup",
        snapshot.state().bytes,
        !args.json && !args.no_progress && std::io::stderr().is_terminal(),
    );
    let (mut received, mut count) = (0u64, 0u64);
    while let Some(chunk) = snapshot.next().await {
        let chunk = chunk.map_err(CliError::js(format!("backup of stream {name} failed")))?;
        data.write_all(&chunk)
            .map_err(|source| CliError::WriteFile {
                path: data_path.clone(),
                source,
            })?;
        received += chunk.len() as u64;
        count += 1;
        bar.set_position(received);
    }
    bar.finish_and_clear();
    data.sync_all().map_err(|source| CliError::WriteFile {
        path: data_path.clone(),
        source,
    })?;
    // As natscli: the metadata only once the data is complete, so a directory with a
    // `backup.json` holds a whole backup. Its keys, `config` and `state`, are the snapshot
    // answer's as the server wrote them, which natscli's restore reads into its request.
    let metadata_path = args.target.join(METADATA_FILE);
    std::fs::write(&metadata_path, snapshot.backup_json()).map_err(|source| {
        CliError::WriteFile {
            path: metadata_path.clone(),
            source,
        }
    })?;
    let messages = snapshot.state().messages;
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
    let cannot = |reason: String| CliError::JetStream {
        action: format!("cannot restore stream {name}"),
        source: reason.into(),
    };
    // Checked as a stream's configuration and state, but sent as the JSON they are, so that
    // fields this version has no name for (a newer server's) are restored too.
    serde_json::from_value::<Config>(config.clone())
        .map_err(|e| cannot(format!("the configuration is not a stream's: {e}")))?;
    let state = match &metadata["state"] {
        Value::Null => None,
        state => {
            serde_json::from_value::<State>(state.clone())
                .map_err(|e| cannot(format!("the backed-up state is not a stream's: {e}")))?;
            Some(state.clone())
        }
    };
    let data_path = dir.join(DATA_FILE);
    let file = tokio::fs::File::open(&data_path)
        .await
        .map_err(|source| CliError::ReadFile {
            what: "backup data",
            path: data_path.clone(),
            source,
        })?;
    let total = file.metadata().await.map(|m| m.len()).unwrap_or(0);
    let bar = bar(
        "restore",
        total,
        !args.json && !args.no_progress && std::io::stderr().is_terminal(),
    );
    let mut data = Progress {
        inner: file,
        bar: bar.clone(),
        read: 0,
    };
    let restored = js.restore_stream_json(config, state, &mut data).await;
    bar.finish_and_clear();
    let info = match restored {
        Ok(info) => info,
        Err(error) if error.kind() == RestoreErrorKind::AlreadyExists => {
            return Err(cannot(
                "a stream of that name exists; remove it first".to_owned(),
            ));
        }
        Err(error) => {
            return Err(CliError::js(format!("restore of stream {name} failed"))(
                error,
            ));
        }
    };
    if args.json {
        // The server's JSON, as `stream info --json` prints it.
        let info = super::raw(js, &format!("STREAM.INFO.{name}"), &Value::Null).await?;
        return out::json_pretty(&info);
    }
    out::print(&format!(
        "Restored stream {name} ({} messages) from {}: {} sent\n",
        human::count(info.state.messages),
        dir.display(),
        super::bytes(data.read),
    ))
}

/// The backup data as it is read for the restore, moving the progress bar.
struct Progress<R> {
    inner: R,
    bar: ProgressBar,
    /// Bytes read so far.
    read: u64,
}

impl<R: AsyncRead + Unpin> AsyncRead for Progress<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            self.read += (buf.filled().len() - before) as u64;
            self.bar.set_position(self.read);
        }
        polled
    }
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
