//! JetStream commands: `stream`, `consumer`, `counter`, `kv`, `object` and `account`, with the helpers they share
//! (raw API JSON for `--json`, human units for limits, durations and times).

mod account;
mod account_identity;
mod config_check;
mod consumer;
mod counter;
mod kv;
mod kv_bucket;
mod kv_list;
pub(crate) mod leader;
mod natscli_values;
mod object;
mod object_bucket;
mod object_progress;
mod object_put;
mod stream;
mod stream_backup;
mod stream_cluster;
mod stream_config;
mod stream_find;
mod stream_gaps;
mod stream_list;
mod stream_read;
mod stream_report;
mod stream_subjects;
mod stream_table;

pub(crate) use account::{AccountArgs, run as account};
pub(crate) use consumer::{ConsumerArgs, run as consumer};
pub(crate) use counter::{CounterArgs, run as counter};
pub(crate) use kv::{KvArgs, run as kv};
pub(crate) use object::{ObjectArgs, run as object};
pub(crate) use stream::{StreamArgs, run as stream};

use std::path::Path;
use std::time::Duration;

use rnats::jetstream::Context;
use rnats::jetstream::paging::{PageCursor, places_covered};
use rnats::jetstream::response::Response;
use serde_json::Value;
use time::OffsetDateTime;

use crate::error::CliError;
use crate::out;
use crate::stats::human;

/// Sends a JetStream API request and returns the server's JSON as it is, for `--json`.
pub(crate) async fn raw(js: &Context, subject: &str, body: &Value) -> Result<Value, CliError> {
    let action = format!("JetStream API {subject}");
    out::trace(">>>", subject, body);
    let response: Response<Value> = js
        .request(subject.to_owned(), body)
        .await
        .map_err(CliError::js(action.clone()))?;
    let value = response.into_result().map_err(CliError::js(action))?;
    out::trace("<<<", subject, &value);
    Ok(value)
}

/// `find --json`: the items of a paged listing (as [`raw_list`] reads them) that `keeps`
/// keeps, printed as the server sent them. Each is read as a `T` for `keeps`, with the time
/// taken once the listing is in, as natscli judges ages; `action` names what failed when an
/// item cannot be read.
pub(crate) async fn print_raw_found<T: serde::de::DeserializeOwned>(
    js: &Context,
    subject: &str,
    key: &str,
    action: &str,
    keeps: impl Fn(&T, OffsetDateTime) -> bool,
) -> Result<(), CliError> {
    let mut listed = Vec::new();
    for value in raw_list(js, subject, key).await? {
        let item: T = serde_json::from_value(value.clone()).map_err(CliError::js(action))?;
        listed.push((item, value));
    }
    let now = OffsetDateTime::now_utc();
    let found: Vec<Value> = listed
        .into_iter()
        .filter(|(item, _)| keeps(item, now))
        .map(|(_, value)| value)
        .collect();
    out::json(&found)
}

/// Every item of a paged JetStream listing (`STREAM.LIST`, `CONSUMER.LIST.<stream>`).
pub(crate) async fn raw_list(
    js: &Context,
    subject: &str,
    key: &str,
) -> Result<Vec<Value>, CliError> {
    raw_list_for(js, subject, &serde_json::json!({}), key).await
}

/// Every item of a paged JetStream listing, each page asked for with `request` (a JSON
/// object) and the page's offset. The library's cursor walks it, so a reply at another offset
/// than asked for ends the listing with an error instead of repeating items.
pub(crate) async fn raw_list_for(
    js: &Context,
    subject: &str,
    request: &Value,
    key: &str,
) -> Result<Vec<Value>, CliError> {
    let mut items = Vec::new();
    let mut cursor = PageCursor::new();
    while !cursor.is_done() {
        let mut page_request = request.clone();
        page_request["offset"] = Value::from(cursor.offset());
        let page = raw(js, subject, &page_request).await?;
        let batch = page
            .get(key)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        // A missing offset reads as 0, as the library reads it, so a later page without one
        // is refused; a missing total reads as 0, the last page; a huge number saturates.
        let number = |field: &str| {
            page.get(field)
                .and_then(Value::as_u64)
                .map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX))
        };
        cursor
            .handle_page(number("offset"), number("total"), covered(&page, &batch))
            .map_err(CliError::js(format!("JetStream API {subject}")))?;
        items.extend(batch);
    }
    Ok(items)
}

/// What a listing could not list (nats-server 2.12+), under the table: the names no server
/// answered for, then those offline with the server's reason. Empty when there are none.
pub(crate) fn render_unlisted(
    noun: &str,
    missing: &[String],
    offline: &std::collections::BTreeMap<String, String>,
) -> String {
    let mut text = String::new();
    let mut inaccessible: Vec<&String> = missing
        .iter()
        .filter(|name| !offline.contains_key(*name))
        .collect();
    inaccessible.sort();
    if !inaccessible.is_empty() {
        let names: Vec<&str> = inaccessible.iter().map(|n| n.as_str()).collect();
        text.push_str(&format!("\nInaccessible {noun}: {}\n", names.join(", ")));
    }
    if !offline.is_empty() {
        let mut table = out::Table::new(["Offline", "Reason"]);
        for (name, reason) in offline {
            table.row(vec![name.clone(), reason.clone()]);
        }
        text.push('\n');
        text.push_str(&table.render());
    }
    text
}

/// How many places of a listing a raw page covers: its items, and the names it reports
/// `missing` or `offline` without carrying them (nats-server 2.12+), as the library counts
/// them.
fn covered(page: &Value, items: &[Value]) -> usize {
    let listed: Vec<&str> = items.iter().filter_map(listed_name).collect();
    let missing = page.get("missing").and_then(Value::as_array);
    let missing = missing.into_iter().flatten().filter_map(Value::as_str);
    let offline = page.get("offline").and_then(Value::as_object);
    let offline = offline
        .into_iter()
        .flat_map(|o| o.keys().map(String::as_str));
    // An item without a name still takes its place.
    let unnamed = items.len() - listed.len();
    places_covered(&listed, missing.chain(offline)) + unnamed
}

/// `--storage` of `stream add`, `kv add` and `object add`, with natscli's short spellings.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum Storage {
    #[value(alias = "f")]
    File,
    #[value(alias = "m")]
    Memory,
}

impl From<Storage> for rnats::jetstream::stream::StorageType {
    fn from(storage: Storage) -> Self {
        match storage {
            Storage::File => Self::File,
            Storage::Memory => Self::Memory,
        }
    }
}

/// A size flag (`--max-bytes 1GB`), for clap.
pub(crate) fn parse_size(text: &str) -> Result<i64, String> {
    crate::parse::size(text).map_err(|e| e.to_string())
}

/// The name an item of a raw stream or consumer listing goes by.
fn listed_name(item: &Value) -> Option<&str> {
    let name = item.pointer("/config/name").or_else(|| item.get("name"));
    name.and_then(Value::as_str)
}

/// The JetStream API level a stream or consumer needs, from the `_nats.req.level` the server
/// puts in its metadata (nats-server 2.11+, ADR-44); 0 when it names none or no number.
pub(crate) fn required_api_level(metadata: &std::collections::HashMap<String, String>) -> i64 {
    metadata
        .get("_nats.req.level")
        .and_then(|level| level.parse().ok())
        .unwrap_or(0)
}

/// `find`'s `--leader`: whether `leader` leads (or, inverted, does not lead) what `cluster`
/// describes. Only clustered streams and consumers have a leader to compare, inverted or not.
pub(crate) fn led_by(
    cluster: Option<&rnats::jetstream::stream::ClusterInfo>,
    leader: &str,
    invert: bool,
) -> bool {
    cluster.is_some_and(|c| (c.leader.as_deref().unwrap_or("") == leader) != invert)
}

/// `find`'s `--api-level`: whether what carries `metadata` needs API level `level` or more
/// (inverted: less).
pub(crate) fn needs_api_level(
    metadata: &std::collections::HashMap<String, String>,
    level: i64,
    invert: bool,
) -> bool {
    let required = required_api_level(metadata);
    if invert {
        required < level
    } else {
        required >= level
    }
}

/// Reads a JSON config file (`--config FILE`).
pub(crate) fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, CliError> {
    let bytes = std::fs::read(path).map_err(|source| CliError::ReadFile {
        what: "config file",
        path: path.to_owned(),
        source,
    })?;
    serde_json::from_slice(&bytes).map_err(|source| CliError::ParseFile {
        path: path.to_owned(),
        source,
    })
}

/// Reads a stream's or consumer's `--config FILE`: the configuration itself, or an info
/// document that holds it under `config` (what `stream info --json` and `consumer info
/// --json` print), as natscli takes either. `defaults` fill the fields the file leaves out
/// that the configuration's type cannot do without (natscli, in Go, reads a missing field as
/// its zero value, which the server takes as the default).
pub(crate) fn read_config<T: serde::de::DeserializeOwned>(
    path: &Path,
    defaults: &[(&str, &str)],
) -> Result<T, CliError> {
    let parse_error = |source| CliError::ParseFile {
        path: path.to_owned(),
        source,
    };
    let mut document: serde_json::Value = read_json(path)?;
    if let Some(config) = document.get_mut("config").filter(|c| c.is_object()) {
        document = config.take();
    }
    if let Some(fields) = document.as_object_mut() {
        for (field, value) in defaults {
            fields
                .entry(*field)
                .or_insert_with(|| serde_json::Value::from(*value));
        }
    }
    serde_json::from_value(document).map_err(parse_error)
}

/// What a consumer's `--config` file may leave out, as the server reads it: every consumer
/// delivers from the start and acknowledges nothing unless told otherwise.
pub(crate) const CONSUMER_FILE_DEFAULTS: &[(&str, &str)] =
    &[("deliver_policy", "all"), ("ack_policy", "none")];

/// Writes a `--cluster` and `--tags` given into a stream's or bucket's placement, keeping
/// what was not given (an edit that names only tags keeps the cluster). As in natscli's
/// `stream edit`, an empty `--cluster ""` or a lone `--tag ""` removes that part, and a
/// placement left with neither is removed.
pub(crate) fn apply_placement(
    placement: &mut Option<rnats::jetstream::stream::Placement>,
    cluster: Option<String>,
    tags: Vec<String>,
) {
    if cluster.is_none() && tags.is_empty() {
        return;
    }
    let target = placement.get_or_insert_with(Default::default);
    if let Some(cluster) = cluster {
        target.cluster = (!cluster.is_empty()).then_some(cluster);
    }
    if !tags.is_empty() {
        target.tags = if tags == [""] { Vec::new() } else { tags };
    }
    if target.cluster.is_none() && target.tags.is_empty() {
        *placement = None;
    }
}

/// A count limit: `unlimited` at -1 or 0.
pub(crate) fn limit(n: i64) -> String {
    if n <= 0 {
        "unlimited".to_owned()
    } else {
        human::count(n as u64)
    }
}

/// A byte limit: `unlimited` at -1 or 0.
pub(crate) fn limit_bytes(n: i64) -> String {
    if n <= 0 {
        "unlimited".to_owned()
    } else {
        bytes(n as u64)
    }
}

/// A bucket's metadata as `key=value, ...` in key order, leaving out the server's own
/// `_nats.*` entries (API levels), which are not the user's; `None` when nothing is left.
pub(crate) fn user_metadata(
    metadata: &std::collections::HashMap<String, String>,
) -> Option<String> {
    let mut entries: Vec<String> = metadata
        .iter()
        .filter(|(k, _)| !k.starts_with("_nats."))
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    entries.sort();
    (!entries.is_empty()).then(|| entries.join(", "))
}

/// A byte count in human units.
pub(crate) fn bytes(n: u64) -> String {
    human::size(usize::try_from(n).unwrap_or(usize::MAX))
}

/// A duration as `1d2h3m4s`, `250ms`, or `zero` for none.
pub(crate) fn duration(d: Duration) -> String {
    if d.is_zero() {
        return "0s".to_owned();
    }
    if d < Duration::from_secs(1) {
        return format!("{}ms", d.as_millis());
    }
    let mut secs = d.as_secs();
    let mut out = String::new();
    for (unit, size) in [("d", 86_400), ("h", 3600), ("m", 60)] {
        if secs >= size {
            out.push_str(&format!("{}{unit}", secs / size));
            secs %= size;
        }
    }
    if secs > 0 || out.is_empty() {
        out.push_str(&format!("{secs}s"));
    }
    out
}

/// A time as `2026-12-01 13:05:00 UTC`, or `never` for year 1 (Go's zero time).
pub(crate) fn time(t: OffsetDateTime) -> String {
    if t.year() <= 1 {
        return "never".to_owned();
    }
    let t = t.to_offset(time::UtcOffset::UTC);
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02} UTC",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    )
}

/// How long ago `t` was, roughly: `5s`, `3m12s`, `2d4h`.
pub(crate) fn ago(t: OffsetDateTime) -> String {
    let elapsed = OffsetDateTime::now_utc() - t;
    let secs = elapsed.whole_seconds().max(0) as u64;
    duration(Duration::from_secs(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_like_go() {
        assert_eq!(duration(Duration::ZERO), "0s");
        assert_eq!(duration(Duration::from_millis(250)), "250ms");
        assert_eq!(duration(Duration::from_secs(120)), "2m");
        assert_eq!(duration(Duration::from_secs(90_061)), "1d1h1m1s");
    }

    #[test]
    fn placement_flags_set_keep_and_clear() {
        use rnats::jetstream::stream::Placement;
        let placed = |cluster: Option<&str>, tags: &[&str]| {
            Some(Placement {
                cluster: cluster.map(str::to_owned),
                tags: tags.iter().map(|t| (*t).to_owned()).collect(),
            })
        };
        let tags =
            |tags: &[&str]| -> Vec<String> { tags.iter().map(|t| (*t).to_owned()).collect() };

        let mut placement = None;
        apply_placement(&mut placement, None, Vec::new());
        assert_eq!(placement, None, "nothing given, nothing placed");
        apply_placement(&mut placement, Some("east".to_owned()), tags(&["ssd"]));
        assert_eq!(placement, placed(Some("east"), &["ssd"]));
        apply_placement(&mut placement, None, tags(&["ssd", "fast"]));
        assert_eq!(
            placement,
            placed(Some("east"), &["ssd", "fast"]),
            "cluster kept"
        );
        apply_placement(&mut placement, Some(String::new()), Vec::new());
        assert_eq!(placement, placed(None, &["ssd", "fast"]), "cluster removed");
        apply_placement(&mut placement, None, tags(&[""]));
        assert_eq!(placement, None, "tags removed, and with them the placement");
    }

    #[test]
    fn limits_say_unlimited() {
        assert_eq!(limit(-1), "unlimited");
        assert_eq!(limit(1000), "1,000");
        assert_eq!(limit_bytes(0), "unlimited");
        assert_eq!(limit_bytes(2048), "2 KiB");
    }
}
