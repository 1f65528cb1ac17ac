//! What the meta subject of an object holds (ADR-20): [`ObjectInfo`] with its options and
//! link, and the caller-side shapes [`ObjectMetadata`] (for a put) and [`UpdateMetadata`].
//!
//! The JSON field names are the ones every client writes (`name`, `description`, `headers`,
//! `metadata`, `options`, `bucket`, `nuid`, `size`, `mtime`, `chunks`, `digest`, `deleted`);
//! empty optional fields are left out, as nats.go leaves them out.

use std::collections::HashMap;

use rnats_core::HeaderMap;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

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
    #[serde(default, skip_serializing_if = "Option::is_none")]
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
    /// When this version was stored.
    #[serde(
        default,
        rename = "mtime",
        with = "time::serde::rfc3339::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub modified: Option<OffsetDateTime>,
    /// The data's digest, `SHA-256=<base64url of the hash>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// Whether the object was deleted (its metadata stays behind as the marker).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deleted: bool,
}

impl ObjectInfo {
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
        assert_eq!(info.modified.unwrap().nanosecond(), 123_456_789);
        assert!(!info.deleted);
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
}
