//! The floor (`src/floor/`) is pure protocol state: it imports neither tokio nor `std::net`,
//! and outside itself only the crate's vocabulary (errors, events, messages, addresses),
//! which itself imports no tokio and nothing of the drivers. So the floor's whole import
//! closure is runtime-free, which is what lets a third driver build on it.
//!
//! A source check rather than a build: rustc has no per-module dependency rule, and a
//! `clippy.toml` `disallowed-types` list applies to the whole crate.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// The modules at the crate root the floor may use: the vocabulary of the API. Each must
/// keep to the same rules (it is checked below), and may use the floor.
const VOCABULARY: &[&str] = &[
    "auth",
    "connection",
    "error",
    "events",
    "header",
    "id",
    "message",
    "proxy",
    "request_builder",
    "server_addr",
    "statistics",
    "status",
    "subject",
];

/// What both drivers share above the floor: the options and the CONNECT they send, TLS
/// settings, the date type of the API, and the OpenTelemetry hooks (the request clock both
/// time requests with; `otel::metrics` observes either client, the blocking one through a
/// trait the blocking driver implements, so that the tokio client's files still name
/// nothing of it).
const DRIVER_SUPPORT: &[&str] = &["connect_info", "datetime", "options", "otel", "tls"];

/// Names at the crate root that are not modules: `crate::Error` is the boxed error alias.
const ROOT_ITEMS: &[&str] = &["Error"];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The file's code without comments (line and doc comments; the crate has no block
/// comments), so that prose about tokio does not count.
fn code(path: &Path) -> String {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .map(|line| match line.find("//") {
            // A `//` inside a string literal (a URL) is kept: only a `//` outside quotes
            // starts a comment. Counting quotes before it is enough for this crate's code.
            Some(at) if line[..at].matches('"').count() % 2 == 0 => &line[..at],
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every `crate::name` the code uses, by its first segment.
fn crate_uses(code: &str) -> BTreeSet<String> {
    let mut uses = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let first = item.trim().split("::").next().unwrap_or("").trim();
                if !first.is_empty() {
                    uses.insert(first.to_owned());
                }
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            uses.insert(name);
        }
    }
    uses
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// What `path` breaks of the rules: tokio, the given forbidden paths, or a crate module
/// outside the floor and the vocabulary.
fn violations(path: &Path, forbidden: &[&str]) -> Vec<String> {
    violations_beyond(path, forbidden, &[])
}

/// [`violations`], with `also` allowed besides the floor and the vocabulary.
fn violations_beyond(path: &Path, forbidden: &[&str], also: &[&str]) -> Vec<String> {
    let code = code(path);
    let mut found = Vec::new();
    for word in forbidden {
        if code.contains(word) {
            found.push(format!("{}: uses `{word}`", path.display()));
        }
    }
    for used in crate_uses(&code) {
        let allowed = used == "floor"
            || VOCABULARY.contains(&used.as_str())
            || also.contains(&used.as_str())
            || ROOT_ITEMS.contains(&used.as_str());
        if !allowed {
            found.push(format!("{}: uses `crate::{used}`", path.display()));
        }
    }
    found
}

#[test]
fn the_floor_imports_neither_tokio_nor_std_net_nor_a_driver() {
    let files = rust_files(&src().join("floor"));
    assert!(files.len() >= 10, "the floor's files: {files:?}");
    let found: Vec<String> = files
        .iter()
        .flat_map(|file| violations(file, &["tokio", "std::net", "TcpStream"]))
        .collect();
    assert!(
        found.is_empty(),
        "the floor is not pure:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_vocabulary_the_floor_uses_imports_no_runtime_and_no_driver() {
    let found: Vec<String> = VOCABULARY
        .iter()
        .flat_map(|module| {
            let file = src().join(format!("{module}.rs"));
            // Address types (`SocketAddr`) are values; a socket or a lookup is I/O.
            violations(&file, &["tokio", "TcpStream", "TcpListener", "lookup_host"])
        })
        .collect();
    assert!(
        found.is_empty(),
        "the vocabulary reaches past itself:\n{}",
        found.join("\n")
    );
}

/// The blocking driver builds on the floor, the vocabulary and the support both drivers
/// share, never on the tokio client's files (and it runs no tokio: it has no runtime).
#[test]
fn the_blocking_driver_uses_none_of_the_tokio_clients_files() {
    let files = rust_files(&src().join("blocking"));
    assert!(files.len() >= 10, "the blocking driver's files: {files:?}");
    let allowed: Vec<&str> = DRIVER_SUPPORT.iter().copied().chain(["blocking"]).collect();
    let found: Vec<String> = files
        .iter()
        .flat_map(|file| violations_beyond(file, &["tokio::"], &allowed))
        .collect();
    assert!(
        found.is_empty(),
        "the blocking driver reaches into the tokio client:\n{}",
        found.join("\n")
    );
}

/// The tokio client's files (the crate root's modules outside the floor, the vocabulary and
/// the shared support) never use the blocking driver.
#[test]
fn the_tokio_client_uses_nothing_of_the_blocking_driver() {
    let found: Vec<String> = rust_files(&src())
        .into_iter()
        .filter(|file| {
            !file.starts_with(src().join("floor")) && !file.starts_with(src().join("blocking"))
        })
        .filter(|file| crate_uses(&code(file)).contains("blocking"))
        .map(|file| file.display().to_string())
        .collect();
    assert!(
        found.is_empty(),
        "these files use the blocking driver: {found:?}"
    );
}

/// The check itself: a file that names tokio or a driver module is caught.
#[test]
fn the_check_catches_tokio_and_driver_imports() {
    let dir = std::env::temp_dir().join(format!("rnats-floor-check-{}", std::process::id()));
    fs::create_dir_all(&dir).expect("a temp dir");
    let file = dir.join("bad.rs");
    fs::write(
        &file,
        "// tokio in a comment is fine\nuse crate::{error::ConnectError, shared::Shared};\n\
         fn f() { tokio::spawn(async {}); let _ = crate::floor::x; }\n",
    )
    .expect("a temp file");
    let found = violations(&file, &["tokio"]);
    fs::remove_dir_all(&dir).expect("the temp dir removed");
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found[0].ends_with("uses `tokio`"), "{found:?}");
    assert!(found[1].ends_with("uses `crate::shared`"), "{found:?}");
}
