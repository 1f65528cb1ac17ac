//! `rnats kv ls`: a bucket's keys, alone or (`-v`) with their revisions, times and values;
//! and the JSON form of an entry that `kv get`, `history` and `watch` print as well.

use futures_util::StreamExt;
use rnats::jetstream::kv::{Entry, Operation, Store};
use serde_json::{Value, json};
use time::format_description::well_known::Rfc3339;

use super::time;
use crate::error::CliError;
use crate::out::{self, Table};

/// `kv ls BUCKET` and `kv keys`: the keys, one a line.
pub(super) async fn list_keys(
    store: &Store,
    bucket: &str,
    filters: &[String],
    json: bool,
) -> Result<(), CliError> {
    let all = sorted_keys(store, bucket, filters).await?;
    if json {
        return out::json(&all);
    }
    if all.is_empty() {
        eprintln!("No keys in {bucket}");
        return Ok(());
    }
    out::print(&all.iter().map(|k| format!("{k}\n")).collect::<String>())
}

/// `kv ls BUCKET -v`: each key with its revision and time (and value, with
/// `--display-value`), as natscli's verbose listing; the Delta column it adds is left out,
/// as a single read never has one.
pub(super) async fn list_entries(
    store: &Store,
    bucket: &str,
    filters: &[String],
    values: bool,
    json: bool,
) -> Result<(), CliError> {
    let action = format!("cannot read the keys of {bucket}");
    let mut entries = Vec::new();
    for key in sorted_keys(store, bucket, filters).await? {
        // A key deleted since the listing has no value left to show.
        match store.entry(&key).await.map_err(CliError::js(&action))? {
            Some(entry) if entry.operation == Operation::Put => entries.push(entry),
            _ => {}
        }
    }
    if json {
        let objects: Vec<Value> = entries
            .iter()
            .map(|e| Value::Object(entry_fields_json(e, values)))
            .collect();
        return out::json(&objects);
    }
    if entries.is_empty() {
        eprintln!("No keys in {bucket}");
        return Ok(());
    }
    let mut table = if values {
        Table::new(["Key", "Created", "Revision", "Value"])
    } else {
        Table::new(["Key", "Created", "Revision"])
    };
    for e in &entries {
        let mut row = vec![e.key.clone(), time(e.created), e.revision.to_string()];
        if values {
            row.push(one_line(&e.value));
        }
        table.row(row);
    }
    out::print(&format!("Keys in bucket {bucket}\n\n{}", table.render()))
}

/// The keys of `store` matching any of `filters` (every key when there are none), sorted.
async fn sorted_keys(
    store: &Store,
    bucket: &str,
    filters: &[String],
) -> Result<Vec<String>, CliError> {
    let action = format!("cannot list the keys of {bucket}");
    let mut keys = if filters.is_empty() {
        store.keys().await
    } else {
        store
            .keys_with_filters(filters.iter().map(String::as_str))
            .await
    }
    .map_err(CliError::js(&action))?;
    let mut all = Vec::new();
    while let Some(key) = keys.next().await {
        all.push(key.map_err(CliError::js(&action))?);
    }
    all.sort();
    Ok(all)
}

/// A value on one table line: control characters (a newline, a tab) written as escapes.
fn one_line(value: &[u8]) -> String {
    let text = String::from_utf8_lossy(value);
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// An entry as `--json` prints it: a UTF-8 value as text, any other in base64.
pub(super) fn entry_json(e: &Entry) -> serde_json::Map<String, Value> {
    entry_fields_json(e, true)
}

/// [`entry_json`], with the value only when `value` (`kv ls -v --json` leaves it out unless
/// `--display-value`, and then never copies or encodes it).
fn entry_fields_json(e: &Entry, value: bool) -> serde_json::Map<String, Value> {
    let mut object = serde_json::Map::new();
    object.insert("bucket".into(), json!(e.bucket));
    object.insert("key".into(), json!(e.key));
    object.insert("revision".into(), json!(e.revision));
    object.insert("operation".into(), json!(e.operation.as_str()));
    object.insert(
        "created".into(),
        json!(e.created.format(&Rfc3339).unwrap_or_default()),
    );
    if !value {
        return object;
    }
    match std::str::from_utf8(&e.value) {
        Ok(text) => object.insert("value".into(), json!(text)),
        Err(_) => object.insert(
            "value_base64".into(),
            json!(base64::Engine::encode(
                &base64::engine::general_purpose::STANDARD,
                &e.value
            )),
        ),
    };
    object
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_keeps_to_one_table_line() {
        assert_eq!(one_line(b"plain value"), "plain value");
        assert_eq!(one_line(b"two\nlines\tand\x07"), "two\\nlines\\tand\\u{7}");
        assert_eq!(one_line("héllo".as_bytes()), "héllo");
        assert_eq!(one_line(&[0xff, b'a']), "\u{fffd}a");
    }

    #[test]
    fn the_json_value_is_left_out_unless_asked_for() {
        let entry = Entry {
            bucket: "config".into(),
            key: "blob".into(),
            value: vec![0xff, 0x00].into(),
            revision: 3,
            delta: 0,
            created: time::OffsetDateTime::UNIX_EPOCH,
            operation: Operation::Put,
            seen_current: true,
        };
        let bare = entry_fields_json(&entry, false);
        assert!(!bare.contains_key("value") && !bare.contains_key("value_base64"));
        assert_eq!(bare["revision"], 3);
        let full = entry_json(&entry);
        assert_eq!(full["value_base64"], "/wA=");
        assert_eq!(bare.len() + 1, full.len());
    }
}
