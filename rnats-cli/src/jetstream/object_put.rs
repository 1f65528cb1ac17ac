//! `object put`: a file (or standard input) stored as an object, named as natscli names it,
//! and never over an existing object unless confirmed.

use std::path::PathBuf;

use clap::Args;
use rnats::jetstream::object_store::{InfoErrorKind, ObjectInfo, ObjectMetadata, ObjectStore};

use super::bytes;
use super::object_progress::progress_bar;
use crate::error::CliError;
use crate::out;

/// Options of `object put`.
#[derive(Debug, Args)]
pub(super) struct PutArgs {
    /// The bucket.
    pub(super) bucket: String,
    /// The file to store; standard input when absent or `-`.
    file: Option<PathBuf>,
    /// The object's name (default: the file's path as given, cleaned as natscli cleans it:
    /// `./docs//a.txt` is `docs/a.txt`; required for standard input).
    #[arg(long)]
    name: Option<String>,
    /// What the object is.
    #[arg(long)]
    description: Option<String>,
    /// A header stored with the object, KEY:VALUE (no templates); repeat for more.
    #[arg(long = "header", short = 'H', value_name = "KEY:VALUE", value_parser = crate::parse::header_flag)]
    headers: Vec<String>,
    /// The largest chunk the data is cut into, in bytes [default: 131072]; one larger than
    /// the server's largest message is cut to it.
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u32).range(1..))]
    chunk_size: Option<u32>,
    /// Replace an existing object without asking (without a terminal, replacing needs it).
    #[arg(long, short = 'f')]
    force: bool,
    /// Draw a progress bar on a terminal (the default; never when piped).
    #[arg(long, overrides_with = "no_progress")]
    progress: bool,
    /// No progress bar, not even on a terminal (natscli's `--no-progress`).
    #[arg(long)]
    no_progress: bool,
    /// The object's info as JSON.
    #[arg(long, short = 'j')]
    json: bool,
}

/// Runs `object put` into `store`, the bucket `args` names.
pub(super) async fn run(store: &ObjectStore, args: PutArgs) -> Result<(), CliError> {
    let bucket = args.bucket;
    let file = args.file.filter(|f| f.as_os_str() != "-");
    let given = match (args.name, &file) {
        (Some(name), _) => name,
        (None, Some(path)) => path.to_string_lossy().into_owned(),
        (None, None) => {
            return Err(CliError::Usage(
                "--name is needed when reading standard input",
            ));
        }
    };
    let name = clean_path(&given);
    // Their shape was checked as the command line was read; a name the protocol cannot
    // carry is refused here, before anything is stored.
    let headers = crate::parse::headers(&args.headers)?;
    // natscli asks before replacing an object that is there (a deleted one is not), and
    // cannot ask without a terminal. Only a server that says there is none spares the
    // question: a lookup that failed (a timeout) may have missed one.
    let there = match store.info(&name).await {
        Ok(existing) => !existing.deleted,
        Err(error) if error.kind() == InfoErrorKind::NotFound => false,
        Err(_) => true,
    };
    if there {
        out::confirm(
            &format!("Replace existing object {bucket} > {name}"),
            args.force,
        )?;
    }
    let meta = ObjectMetadata {
        name: name.clone(),
        description: args.description,
        headers,
        chunk_size: args.chunk_size.map(|size| size as usize),
        ..Default::default()
    };
    let action = format!("cannot put {name} into {bucket}");
    let progress = !args.no_progress;
    let info = match &file {
        Some(path) => {
            let mut reader =
                tokio::fs::File::open(path)
                    .await
                    .map_err(|source| CliError::ReadFile {
                        what: "file",
                        path: path.clone(),
                        source,
                    })?;
            let total = reader.metadata().await.ok().map(|m| m.len());
            put_from(store, meta, &mut reader, total, progress, action).await?
        }
        None => {
            let mut stdin = tokio::io::stdin();
            put_from(store, meta, &mut stdin, None, progress, action).await?
        }
    };
    if args.json {
        return out::json(&info);
    }
    eprintln!(
        "Stored {name} in {bucket}: {} in {} chunks",
        bytes(info.size as u64),
        info.chunks
    );
    Ok(())
}

/// Puts what `reader` gives, with a progress bar of `total` bytes (a spinner when unknown).
async fn put_from(
    store: &ObjectStore,
    meta: ObjectMetadata,
    reader: &mut (impl tokio::io::AsyncRead + Unpin),
    total: Option<u64>,
    progress: bool,
    action: String,
) -> Result<ObjectInfo, CliError> {
    let bar = progress_bar(total, progress);
    let shown = bar.clone();
    let info = store
        .put_with_progress(meta, reader, move |p| shown.set_position(p.bytes))
        .await
        .map_err(CliError::js(action));
    bar.finish_and_clear();
    info
}

/// A slash-separated path reduced lexically as Go's `filepath.Clean` reduces it on Unix,
/// which natscli applies to an object's name: one slash between elements, no `.` elements,
/// each `..` taking out the element before it (or dropped right after a leading `/`), and
/// `.` for what is left empty.
fn clean_path(path: &str) -> String {
    let rooted = path.starts_with('/');
    let mut kept: Vec<&str> = Vec::new();
    for element in path.split('/') {
        match element {
            "" | "." => {}
            ".." => match kept.last() {
                Some(&last) if last != ".." => {
                    kept.pop();
                }
                _ if rooted => {}
                _ => kept.push(".."),
            },
            other => kept.push(other),
        }
    }
    let joined = kept.join("/");
    match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".to_owned(),
        (false, false) => joined,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_clean_as_go_cleans_them() {
        for (given, cleaned) in [
            ("docs/a.txt", "docs/a.txt"),
            ("./report.pdf", "report.pdf"),
            ("docs//a/./b.txt", "docs/a/b.txt"),
            ("docs/../a.txt", "a.txt"),
            ("../a.txt", "../a.txt"),
            ("../../a/../b", "../../b"),
            ("/tmp/../x", "/x"),
            ("/../x", "/x"),
            ("docs/", "docs"),
            ("", "."),
            ("./", "."),
            ("/", "/"),
            ("a/..", "."),
        ] {
            assert_eq!(clean_path(given), cleaned, "{given}");
        }
    }
}
