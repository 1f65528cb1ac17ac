//! What the meta subject of an object holds (ADR-20): [`ObjectInfo`] with its options and
//! link, and the caller-side shapes [`ObjectMetadata`] (for a put) and [`UpdateMetadata`].
//!
//! The JSON field names are the ones every client writes (`name`, `description`, `headers`,
//! `metadata`, `options`, `bucket`, `nuid`, `size`, `mtime`, `chunks`, `digest`, `deleted`);
//! empty optional fields are left out, as nats.go leaves them out.

use std::collections::HashMap;
use std::fmt;

use rnats_core::HeaderMap;
use rnats_core::datetime::DateTime;
use serde::de::{Error as _, MapAccess, Visitor};
use serde::{Deserialize, Serialize};

use super::Object;

/// An object's metadata and where its data is: the JSON stored on the object's meta subject.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ObjectInfo {
    /// The object's name.
    pub name: String,
    /// What the object is, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Free-form metadata.
    #[serde(
        default,
        skip_serializing_if = "HashMap::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub metadata: HashMap<String, String>,
    /// Headers stored with the object.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "stored_headers"
    )]
    pub headers: Option<HeaderMap>,
    /// The chunk size it was stored with, or the object it links to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<ObjectOptions>,
    /// The bucket the object is in.
    #[serde(default)]
    pub bucket: String,
    /// The unique id of this version of the object; its chunks are on `$O.<bucket>.C.<nuid>`.
    #[serde(default)]
    pub nuid: String,
    /// The data's size in bytes.
    #[serde(default)]
    pub size: usize,
    /// How many chunks the data is stored in.
    #[serde(default)]
    pub chunks: usize,
    /// When this version of the metadata was stored: the server's timestamp of the meta
    /// message, on every read ([`info`](super::ObjectStore::info), `get`, list, watch), as
    /// ADR-20 and nats.go have it. The JSON's own `mtime` is not read back: nats.go writes
    /// the zero time there. On what a write returns (`put`, `delete`, `update_metadata`,
    /// links) it is this client's clock at the write, which is also what rnats stores in
    /// the JSON, as async-nats does, for readers that take the time from there. Read from
    /// JSON alone, an `mtime` that is not an RFC 3339 time (nats-py's deletion marker has
    /// `""`) is `None`.
    #[serde(
        default,
        rename = "mtime",
        serialize_with = "rnats_core::datetime::rfc3339::option::serialize",
        deserialize_with = "stored_mtime",
        skip_serializing_if = "Option::is_none"
    )]
    pub modified: Option<DateTime>,
    /// The data's digest, `SHA-256=<base64url of the hash>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// Whether the object was deleted (its metadata stays behind as the marker).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deleted: bool,
}

impl ObjectInfo {
    /// The metadata a meta message holds, `modified` being `stored`, the message's timestamp
    /// in the stream (ADR-20: the object's time is the server's, whatever the JSON says).
    pub(crate) fn from_stored(payload: &[u8], stored: DateTime) -> serde_json::Result<ObjectInfo> {
        let mut info: ObjectInfo = serde_json::from_slice(payload)?;
        info.modified = Some(stored);
        Ok(info)
    }

    /// Whether this object is a link (to an object or a whole bucket).
    pub fn is_link(&self) -> bool {
        self.link().is_some()
    }

    /// The link this object is, if it is one.
    pub fn link(&self) -> Option<&ObjectLink> {
        self.options.as_ref()?.link.as_ref()
    }
}

/// An object's options: a link, or the largest chunk its data was cut into.
#[derive(Debug, Default, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ObjectOptions {
    /// The object (or bucket) this one links to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<ObjectLink>,
    /// The chunk size the data was stored with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_chunk_size: Option<usize>,
}

/// Where a link points: an object in a bucket, or (without a name) the bucket itself.
#[derive(Debug, Default, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ObjectLink {
    /// The object linked to; `None` links the whole bucket.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The bucket linked to.
    pub bucket: String,
}

/// New metadata for an object; a new `name` renames it.
#[derive(Debug, Default, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct UpdateMetadata {
    /// The object's name (a different one renames the object).
    pub name: String,
    /// What the object is, in words.
    pub description: Option<String>,
    /// Free-form metadata.
    #[serde(default)]
    pub metadata: HashMap<String, String>,
    /// Headers stored with the object.
    pub headers: Option<HeaderMap>,
}

/// The metadata of an object to put: its name and what to store with it.
#[derive(Debug, Default, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ObjectMetadata {
    /// The object's name.
    pub name: String,
    /// What the object is, in words.
    pub description: Option<String>,
    /// The largest chunk the data is cut into (default 128 KiB).
    pub chunk_size: Option<usize>,
    /// Free-form metadata.
    #[serde(default)]
    pub metadata: HashMap<String, String>,
    /// Headers stored with the object.
    pub headers: Option<HeaderMap>,
}

impl From<&str> for ObjectMetadata {
    fn from(name: &str) -> ObjectMetadata {
        ObjectMetadata {
            name: name.to_owned(),
            ..Default::default()
        }
    }
}

impl From<ObjectInfo> for ObjectMetadata {
    fn from(info: ObjectInfo) -> ObjectMetadata {
        ObjectMetadata {
            name: info.name,
            description: info.description,
            chunk_size: None,
            metadata: info.metadata,
            headers: info.headers,
        }
    }
}

/// Anything an [`ObjectInfo`] can be borrowed from: what `add_link` links to.
pub trait AsObjectInfo {
    /// The object's info.
    fn as_info(&self) -> &ObjectInfo;
}

impl AsObjectInfo for &Object {
    fn as_info(&self) -> &ObjectInfo {
        &self.info
    }
}

impl AsObjectInfo for &ObjectInfo {
    fn as_info(&self) -> &ObjectInfo {
        self
    }
}

/// Reads `null` as the default, as other clients may write it.
fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// Reads the JSON's `mtime` without failing the metadata over it, as it is not read back
/// (ADR-20): text that is not an RFC 3339 time, such as the `""` nats-py writes on a delete,
/// is `None`.
fn stored_mtime<'de, D>(deserializer: D) -> Result<Option<DateTime>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    let text = Option::<std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
    Ok(text.and_then(|text| rnats_core::datetime::parse_rfc3339(&text).ok()))
}

/// Reads an object's headers in each form clients have stored them: a map of names to lists
/// of values (today's form), the same map wrapped as `{"inner": {..}}` (older async-nats
/// releases), or a map of names to single values.
fn stored_headers<'de, D>(deserializer: D) -> Result<Option<HeaderMap>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    Ok(Option::<StoredHeaders>::deserialize(deserializer)?.map(|headers| headers.0))
}

/// A header map read by [`stored_headers`].
struct StoredHeaders(HeaderMap);

/// One entry's value in a stored header map.
#[derive(Deserialize)]
#[serde(untagged)]
enum StoredValues {
    One(String),
    Many(Vec<String>),
    /// The whole map, under the `inner` name of the older form.
    Wrapped(StoredHeaders),
}

impl<'de> Deserialize<'de> for StoredHeaders {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(StoredHeadersVisitor)
    }
}

struct StoredHeadersVisitor;

impl<'de> Visitor<'de> for StoredHeadersVisitor {
    type Value = StoredHeaders;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a map of header names to values")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<StoredHeaders, A::Error> {
        let mut headers = HeaderMap::new();
        while let Some((name, values)) = access.next_entry::<String, StoredValues>()? {
            let values = match values {
                StoredValues::One(value) => vec![value],
                StoredValues::Many(values) => values,
                StoredValues::Wrapped(inner) if name == "inner" && headers.is_empty() => {
                    headers = inner.0;
                    continue;
                }
                StoredValues::Wrapped(_) => {
                    return Err(A::Error::custom(format!(
                        "header {name:?} holds a map, not values"
                    )));
                }
            };
            for value in values {
                headers
                    .try_append(name.as_str(), value)
                    .map_err(A::Error::custom)?;
            }
        }
        Ok(StoredHeaders(headers))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_metadata_nats_go_writes() {
        let json = r#"{"name":"a/b.txt","description":"d","options":{"max_chunk_size":131072},
            "bucket":"files","nuid":"ABC","size":5,"mtime":"2024-05-01T10:11:12.123456789Z",
            "chunks":1,"digest":"SHA-256=LPJNul-wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ="}"#;
        let info: ObjectInfo = serde_json::from_str(json).unwrap();
        assert_eq!(info.name, "a/b.txt");
        assert_eq!(info.options.unwrap().max_chunk_size, Some(131_072));
        assert_eq!(
            rnats_core::datetime::to_nanos(&info.modified.unwrap()) % 1_000_000_000,
            123_456_789
        );
        assert!(!info.deleted);
    }

    #[test]
    fn an_mtime_that_is_not_a_time_does_not_fail_the_metadata() {
        // nats-py's deletion marker.
        let json = r#"{"name":"n","bucket":"b","nuid":"N","mtime":"","digest":"","deleted":true}"#;
        let info: ObjectInfo = serde_json::from_str(json).unwrap();
        assert!(info.deleted);
        assert_eq!(info.modified, None);
        // nats.go's zero time, and nats-py's clock on a put, are times.
        for mtime in ["0001-01-01T00:00:00Z", "2026-05-01T10:11:12.123456+00:00"] {
            let json = format!(r#"{{"name":"n","mtime":"{mtime}"}}"#);
            let info: ObjectInfo = serde_json::from_str(&json).unwrap();
            assert!(info.modified.is_some(), "{mtime}");
        }
        let epoch = rnats_core::datetime::from_nanos(0).unwrap();
        let info = ObjectInfo::from_stored(br#"{"name":"n","mtime":""}"#, epoch);
        assert_eq!(info.unwrap().modified, Some(epoch));
    }

    #[test]
    fn leaves_empty_fields_out() {
        let info = ObjectInfo {
            name: "x".into(),
            description: None,
            metadata: HashMap::new(),
            headers: None,
            options: Some(ObjectOptions {
                link: Some(ObjectLink {
                    name: None,
                    bucket: "other".into(),
                }),
                max_chunk_size: None,
            }),
            bucket: "b".into(),
            nuid: "N".into(),
            size: 0,
            chunks: 0,
            modified: None,
            digest: None,
            deleted: false,
        };
        let json = serde_json::to_string(&info).unwrap();
        assert_eq!(
            json,
            r#"{"name":"x","options":{"link":{"bucket":"other"}},"bucket":"b","nuid":"N","size":0,"chunks":0}"#
        );
    }

    #[test]
    fn reads_headers_in_every_stored_form() {
        let mut expected = HeaderMap::new();
        expected.insert("Content-Type", "text/plain");
        expected.append("X-Tag", "a");
        expected.append("X-Tag", "b");
        let forms = [
            r#"{"Content-Type":["text/plain"],"X-Tag":["a","b"]}"#,
            r#"{"inner":{"Content-Type":["text/plain"],"X-Tag":["a","b"]}}"#,
            r#"{"Content-Type":"text/plain","X-Tag":["a","b"]}"#,
        ];
        for form in forms {
            let json = format!(r#"{{"name":"n","bucket":"b","nuid":"N","headers":{form}}}"#);
            let info: ObjectInfo = serde_json::from_str(&json).unwrap();
            assert_eq!(info.headers.as_ref(), Some(&expected), "{form}");
            // Written back in today's form.
            let again: ObjectInfo =
                serde_json::from_str(&serde_json::to_string(&info).unwrap()).unwrap();
            assert_eq!(again, info);
        }
        let null: ObjectInfo = serde_json::from_str(r#"{"name":"n","headers":null}"#).unwrap();
        assert_eq!(null.headers, None);
        // A header literally named `inner` is still a header.
        let named: ObjectInfo =
            serde_json::from_str(r#"{"name":"n","headers":{"inner":["x"]}}"#).unwrap();
        assert_eq!(named.headers.unwrap().get("inner").unwrap(), "x");
        for bad in [
            r#"{"name":"n","headers":{"X":{"Y":["z"]}}}"#,
            r#"{"name":"n","headers":{"Bad Name":["z"]}}"#,
            r#"{"name":"n","headers":["z"]}"#,
        ] {
            assert!(serde_json::from_str::<ObjectInfo>(bad).is_err(), "{bad}");
        }
    }
}
