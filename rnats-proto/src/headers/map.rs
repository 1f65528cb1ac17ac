//! The multi-valued header collection.

use std::collections::HashMap;
use std::collections::hash_map::{Entry, RandomState};
use std::fmt;
use std::hash::{BuildHasher, BuildHasherDefault, Hasher};

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::name::{HeaderError, HeaderName, HeaderValue, IntoHeaderName, IntoHeaderValue};

/// Message headers: each name with its values, names in the order first inserted.
///
/// A name may carry several values, kept in insertion order. Names keep the case they were
/// inserted or received with, and lookups by name are **exact, case-sensitive** matches:
/// `get("nats-msg-id")` does not find `Nats-Msg-Id`. NATS servers and clients pass header names
/// through unchanged, so the sender's spelling is the one to use.
///
/// # Invalid text
///
/// Every name and value is checked on its way in, and a map never holds a name that is not
/// printable ASCII or a value with `\r`/`\n`, so encoding a map cannot forge header lines.
/// [`HeaderMap::insert`] and [`HeaderMap::append`] never panic: they drop an invalid pair and
/// remember the error, which [`HeaderMap::check`] reports and a publish of the map refuses.
/// [`HeaderMap::try_insert`] and [`HeaderMap::try_append`] return the error instead.
#[derive(Clone, Default, Debug)]
pub struct HeaderMap {
    entries: Vec<(HeaderName, Vec<HeaderValue>)>,
    /// The first error `insert`/`append` met; the pair was not stored.
    refused: Option<HeaderError>,
}

/// Where each name of a map being decoded stands, once the map has many names: the position
/// of the first name with each hash. A name is hashed once, with the std hasher's random keys
/// (a publisher cannot craft names that collide), and the table is keyed by that hash, so it
/// holds no copy of the name and does not hash again as it grows. Names whose hashes collide
/// (all but never) are found by a scan.
///
/// `S` makes the name hashes; tests give one that makes every name collide.
#[derive(Debug)]
pub(super) struct NameIndex<S = RandomState>(Option<NameTable<S>>);

#[derive(Debug)]
struct NameTable<S> {
    keys: S,
    positions: HashMap<u64, usize, BuildHasherDefault<PrehashedKey>>,
}

/// Hashes a `u64` that is already a hash to itself.
#[derive(Debug, Default)]
struct PrehashedKey(u64);

impl Hasher for PrehashedKey {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `write_u64` is used; fold anything else in rather than lose it.
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

impl<S> Default for NameIndex<S> {
    fn default() -> Self {
        NameIndex(None)
    }
}

/// Names a map holds before its decoder indexes them: below this a scan is cheaper.
const INDEX_FROM: usize = 16;

/// The values of one header name, from [`HeaderMap::get_all`].
#[derive(Debug, Clone)]
pub struct GetAll<'a, T> {
    inner: std::slice::Iter<'a, T>,
}

/// Each name with its values, from [`HeaderMap::iter`].
#[derive(Debug, Clone)]
pub struct HeaderIter<'a> {
    inner: std::slice::Iter<'a, (HeaderName, Vec<HeaderValue>)>,
}

impl HeaderMap {
    /// Creates an empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty map with room for `names` names, for a decoder that knows about how many come.
    pub(super) fn with_capacity(names: usize) -> Self {
        HeaderMap {
            entries: Vec::with_capacity(names),
            refused: None,
        }
    }

    /// Sets `name` to the single value `value`, dropping any earlier values.
    ///
    /// A name already present keeps its position. If `name` or `value` is invalid, nothing is
    /// stored and the map remembers the error (see [`HeaderMap::check`]).
    pub fn insert(&mut self, name: impl IntoHeaderName, value: impl IntoHeaderValue) {
        if let Err(e) = self.try_insert(name, value) {
            self.refused.get_or_insert(e);
        }
    }

    /// Like [`HeaderMap::insert`], but returns the error for invalid input (the map is left
    /// unchanged and does not remember it).
    pub fn try_insert(
        &mut self,
        name: impl IntoHeaderName,
        value: impl IntoHeaderValue,
    ) -> Result<(), HeaderError> {
        let name = name.try_into_header_name()?;
        let value = value.try_into_header_value()?;
        match self.position(name.as_str()) {
            Some(i) => self.entries[i].1 = vec![value],
            None => self.entries.push((name, vec![value])),
        }
        Ok(())
    }

    /// Adds another value for `name`, after its existing ones.
    ///
    /// Invalid input is handled as by [`HeaderMap::insert`].
    pub fn append(&mut self, name: impl IntoHeaderName, value: impl IntoHeaderValue) {
        if let Err(e) = self.try_append(name, value) {
            self.refused.get_or_insert(e);
        }
    }

    /// Like [`HeaderMap::append`], but returns the error for invalid input (the map is left
    /// unchanged and does not remember it).
    pub fn try_append(
        &mut self,
        name: impl IntoHeaderName,
        value: impl IntoHeaderValue,
    ) -> Result<(), HeaderError> {
        let name = name.try_into_header_name()?;
        let value = value.try_into_header_value()?;
        self.append_valid(name, value);
        Ok(())
    }

    /// Appends a pair the caller has already checked.
    pub(super) fn append_valid(&mut self, name: HeaderName, value: HeaderValue) {
        match self.position(name.as_str()) {
            Some(i) => self.entries[i].1.push(value),
            None => self.entries.push((name, vec![value])),
        }
    }

    /// [`HeaderMap::append_valid`] for a decoder that appends many pairs in a row: past
    /// [`INDEX_FROM`] names, names are found through `index` instead of a scan, so a
    /// block of `n` distinct names decodes in linear time rather than quadratic. Small maps,
    /// the usual case, never build the index.
    pub(super) fn append_decoded<S: BuildHasher + Default>(
        &mut self,
        name: HeaderName,
        value: HeaderValue,
        index: &mut NameIndex<S>,
    ) {
        if index.0.is_none() && self.entries.len() < INDEX_FROM {
            return self.append_valid(name, value);
        }
        let table = index.0.get_or_insert_with(|| {
            let keys = S::default();
            // The map was sized for the block's names, so the table is too.
            let mut positions =
                HashMap::with_capacity_and_hasher(self.entries.capacity(), Default::default());
            for (i, (n, _)) in self.entries.iter().enumerate() {
                positions.entry(keys.hash_one(n.as_str())).or_insert(i);
            }
            NameTable { keys, positions }
        });
        let position = match table.positions.entry(table.keys.hash_one(name.as_str())) {
            Entry::Vacant(slot) => {
                slot.insert(self.entries.len());
                None
            }
            Entry::Occupied(slot) if self.entries[*slot.get()].0 == name => Some(*slot.get()),
            // Another name with the same hash: look the long way.
            Entry::Occupied(_) => self.position(name.as_str()),
        };
        match position {
            Some(i) => self.entries[i].1.push(value),
            None => self.entries.push((name, vec![value])),
        }
    }

    /// Reports the first name or value [`HeaderMap::insert`] or [`HeaderMap::append`] refused.
    ///
    /// A publish with these headers fails with this error rather than silently sending the map
    /// without the refused header.
    pub fn check(&self) -> Result<(), HeaderError> {
        match &self.refused {
            None => Ok(()),
            Some(e) => Err(e.clone()),
        }
    }

    /// Returns the first value of `name`.
    pub fn get(&self, name: impl IntoHeaderName) -> Option<&HeaderValue> {
        self.values(name).first()
    }

    /// Returns the last value of `name`.
    pub fn get_last(&self, name: impl IntoHeaderName) -> Option<&HeaderValue> {
        self.values(name).last()
    }

    /// Returns every value of `name`, in insertion order.
    pub fn get_all(&self, name: impl IntoHeaderName) -> GetAll<'_, HeaderValue> {
        GetAll {
            inner: self.values(name).iter(),
        }
    }

    /// Removes `name` and all its values, returning the first.
    pub fn remove(&mut self, name: impl IntoHeaderName) -> Option<HeaderValue> {
        let i = name.with_name_str(|name| self.position(name))?;
        self.entries.remove(i).1.into_iter().next()
    }

    /// Iterates over each name with all its values, names in the order first inserted.
    pub fn iter(&self) -> HeaderIter<'_> {
        HeaderIter {
            inner: self.entries.iter(),
        }
    }

    /// Returns the number of distinct names (not of values).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Returns `true` if the map holds no headers.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn position(&self, name: &str) -> Option<usize> {
        self.entries.iter().position(|(n, _)| n.as_str() == name)
    }

    fn values(&self, name: impl IntoHeaderName) -> &[HeaderValue] {
        match name.with_name_str(|name| self.position(name)) {
            Some(i) => &self.entries[i].1,
            None => &[],
        }
    }
}

/// Equal when both hold the same names with the same values in the same order per name; the
/// order of different names does not matter, as on the wire.
impl PartialEq for HeaderMap {
    fn eq(&self, other: &Self) -> bool {
        self.refused == other.refused
            && self.len() == other.len()
            && self
                .entries
                .iter()
                .all(|(name, values)| other.values(name) == values.as_slice())
    }
}

impl Eq for HeaderMap {}

/// Collects with [`HeaderMap::insert`], so a repeated name keeps only its last value (as in
/// async-nats).
impl FromIterator<(HeaderName, HeaderValue)> for HeaderMap {
    fn from_iter<I: IntoIterator<Item = (HeaderName, HeaderValue)>>(iter: I) -> Self {
        let mut map = HeaderMap::new();
        for (name, value) in iter {
            map.insert(name, value);
        }
        map
    }
}

impl<'a> IntoIterator for &'a HeaderMap {
    type Item = (&'a HeaderName, &'a Vec<HeaderValue>);
    type IntoIter = HeaderIter<'a>;

    fn into_iter(self) -> HeaderIter<'a> {
        self.iter()
    }
}

impl<'a> Iterator for HeaderIter<'a> {
    type Item = (&'a HeaderName, &'a Vec<HeaderValue>);

    fn next(&mut self) -> Option<Self::Item> {
        self.inner.next().map(|(n, v)| (n, v))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

impl DoubleEndedIterator for HeaderIter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.inner.next_back().map(|(n, v)| (n, v))
    }
}

impl ExactSizeIterator for HeaderIter<'_> {}

impl std::iter::FusedIterator for HeaderIter<'_> {}

impl<'a, T> Iterator for GetAll<'a, T> {
    type Item = &'a T;

    fn next(&mut self) -> Option<&'a T> {
        self.inner.next()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

impl<T> DoubleEndedIterator for GetAll<'_, T> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.inner.next_back()
    }
}

impl<T> ExactSizeIterator for GetAll<'_, T> {}

impl<T> std::iter::FusedIterator for GetAll<'_, T> {}

/// A JSON-style object of name to list of values, as async-nats writes it.
impl Serialize for HeaderMap {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.len()))?;
        for (name, values) in self {
            map.serialize_entry(name, values)?;
        }
        map.end()
    }
}

/// Reads the form [`Serialize`] writes; an invalid name or value is an error.
impl<'de> Deserialize<'de> for HeaderMap {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(MapVisitor)
    }
}

struct MapVisitor;

impl<'de> Visitor<'de> for MapVisitor {
    type Value = HeaderMap;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a map of header names to lists of values")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<HeaderMap, A::Error> {
        let mut map = HeaderMap::new();
        while let Some((name, values)) = access.next_entry::<HeaderName, Vec<HeaderValue>>()? {
            // Both were checked by their own `Deserialize`.
            for value in values {
                map.append_valid(name.clone(), value);
            }
        }
        Ok(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(map: &HeaderMap) -> Vec<(&str, Vec<&str>)> {
        map.iter()
            .map(|(n, vs)| (n.as_str(), vs.iter().map(HeaderValue::as_str).collect()))
            .collect()
    }

    /// Every name hashes alike, so an index sees only collisions.
    #[derive(Default)]
    struct OneHash;

    impl Hasher for OneHash {
        fn finish(&self) -> u64 {
            7
        }

        fn write(&mut self, _: &[u8]) {}
    }

    #[test]
    fn decoding_through_the_index_keeps_names_and_values_in_order_even_when_hashes_collide() {
        let pairs_in: Vec<(String, String)> = (0..300)
            .map(|i| (format!("N-{}", i % 90), format!("v{i}")))
            .collect();
        let mut scanned = HeaderMap::new();
        let mut indexed = HeaderMap::new();
        let mut colliding = HeaderMap::new();
        let mut index = NameIndex::<RandomState>::default();
        let mut colliding_index = NameIndex::<BuildHasherDefault<OneHash>>::default();
        for (name, value) in &pairs_in {
            let name = name.as_str().into_header_name();
            let value = HeaderValue::from(value.as_str());
            scanned.append_valid(name.clone(), value.clone());
            indexed.append_decoded(name.clone(), value.clone(), &mut index);
            colliding.append_decoded(name, value, &mut colliding_index);
        }
        assert!(index.0.is_some() && colliding_index.0.is_some());
        assert_eq!(scanned.len(), 90);
        assert_eq!(pairs(&indexed), pairs(&scanned));
        assert_eq!(pairs(&colliding), pairs(&scanned));
        let n7: Vec<&str> = indexed.get_all("N-7").map(HeaderValue::as_str).collect();
        assert_eq!(n7, ["v7", "v97", "v187", "v277"]);
    }

    #[test]
    fn append_groups_values_by_name() {
        let mut map = HeaderMap::new();
        map.append("A", "1");
        map.append("B", "2");
        map.append("A", "3");
        assert_eq!(pairs(&map), [("A", vec!["1", "3"]), ("B", vec!["2"])]);
        assert_eq!(map.get("A").unwrap(), "1");
        assert_eq!(map.get_last("A").unwrap(), "3");
        assert_eq!(map.get_all("A").collect::<Vec<_>>(), ["1", "3"]);
        assert_eq!(map.get_all("A").len(), 2);
        assert_eq!(map.get_all("missing").count(), 0);
        assert_eq!(map.len(), 2);
        assert_eq!(map.iter().len(), 2);
        assert!(!map.is_empty());
    }

    #[test]
    fn insert_replaces_all_values_in_place() {
        let mut map = HeaderMap::new();
        map.append("A", "1");
        map.append("B", "2");
        map.append("A", "3");
        map.insert("A", "x");
        assert_eq!(pairs(&map), [("A", vec!["x"]), ("B", vec!["2"])]);
        map.insert("C", 5u64);
        assert_eq!(map.get("C").unwrap(), "5");
        assert_eq!(map.len(), 3);
    }

    #[test]
    fn lookups_take_names_str_and_string() {
        let mut map = HeaderMap::new();
        let name = HeaderName::from_static("Nats-Msg-Id");
        map.insert(name.clone(), HeaderValue::from("1"));
        assert_eq!(map.get(&name).unwrap(), "1");
        assert_eq!(map.get(name.clone()).unwrap(), "1");
        assert_eq!(map.get("Nats-Msg-Id").unwrap(), "1");
        assert_eq!(map.get(String::from("Nats-Msg-Id")).unwrap(), "1");
        let owned = String::from("Nats-Msg-Id");
        assert_eq!(map.get(&owned).unwrap(), "1");
        // An invalid name is simply absent, not a panic.
        assert!(map.get("bad name").is_none());
    }

    #[test]
    fn lookups_are_case_sensitive() {
        let mut map = HeaderMap::new();
        map.insert("Nats-Msg-Id", "1");
        assert!(map.get("nats-msg-id").is_none());
        assert_eq!(map.iter().next().unwrap().0, "Nats-Msg-Id");
    }

    #[test]
    fn remove_returns_first_and_drops_all() {
        let mut map = HeaderMap::new();
        map.append("A", "1");
        map.append("B", "2");
        map.append("A", "3");
        assert_eq!(map.remove("A").unwrap(), "1");
        assert_eq!(pairs(&map), [("B", vec!["2"])]);
        assert!(map.remove("A").is_none());
    }

    #[test]
    fn try_variants_report_errors_and_leave_map_clean() {
        let mut map = HeaderMap::new();
        assert_eq!(map.try_insert("a b", "v"), Err(HeaderError::InvalidName));
        assert_eq!(map.try_append("a", "v\r\n"), Err(HeaderError::InvalidValue));
        assert_eq!(
            map.try_insert("a", HeaderValue::from("v\n")),
            Err(HeaderError::InvalidValue)
        );
        assert!(map.is_empty());
        assert_eq!(map.check(), Ok(()));
    }

    #[test]
    fn insert_refuses_invalid_text_without_panicking() {
        let mut map = HeaderMap::new();
        map.insert("Ok", "1");
        map.insert("bad name", "v");
        map.append("X", "v\r\nForged: 1");
        map.insert("Y", HeaderValue::from("\n"));
        assert_eq!(pairs(&map), [("Ok", vec!["1"])]);
        // The first refusal is the one reported.
        assert_eq!(map.check(), Err(HeaderError::InvalidName));
        assert!(map.get("X").is_none());
    }

    #[test]
    fn equality_ignores_order_of_names_only() {
        let mut a = HeaderMap::new();
        a.append("A", "1");
        a.append("A", "2");
        a.append("B", "3");
        let mut b = HeaderMap::new();
        b.append("B", "3");
        b.append("A", "1");
        b.append("A", "2");
        assert_eq!(a, b);
        let mut c = HeaderMap::new();
        c.append("B", "3");
        c.append("A", "2");
        c.append("A", "1");
        assert_ne!(a, c);
        let mut refused = a.clone();
        refused.insert("bad name", "x");
        assert_ne!(a, refused);
    }

    #[test]
    fn collects_like_insert() {
        let map: HeaderMap = [
            (HeaderName::from_static("A"), HeaderValue::from("1")),
            (HeaderName::from_static("B"), HeaderValue::from(2)),
            (HeaderName::from_static("A"), HeaderValue::from("3")),
        ]
        .into_iter()
        .collect();
        assert_eq!(pairs(&map), [("A", vec!["3"]), ("B", vec!["2"])]);
    }

    #[test]
    fn serde_round_trip() {
        let mut map = HeaderMap::new();
        map.append("A", "1");
        map.append("A", "2");
        map.append("B", "3");
        let json = serde_json::to_string(&map).unwrap();
        assert_eq!(json, r#"{"A":["1","2"],"B":["3"]}"#);
        assert_eq!(serde_json::from_str::<HeaderMap>(&json).unwrap(), map);
        assert_eq!(serde_json::to_string(&HeaderMap::new()).unwrap(), "{}");
        assert!(serde_json::from_str::<HeaderMap>(r#"{"a b":["1"]}"#).is_err());
        assert!(serde_json::from_str::<HeaderMap>(r#"{"A":["1\r\nB: 2"]}"#).is_err());
    }
}
