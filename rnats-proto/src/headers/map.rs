//! The ordered, multi-valued header collection.

use super::name::{HeaderError, HeaderName, HeaderValue, IntoHeaderName, IntoHeaderValue};

/// Message headers: an ordered list of `(name, value)` pairs.
///
/// A name may appear several times. Names keep the case they were inserted
/// or received with, and lookups by name are **exact, case-sensitive**
/// matches: `get("nats-msg-id")` does not find `Nats-Msg-Id`. NATS servers
/// and clients pass header names through unchanged, so the sender's spelling
/// is the one to use.
#[derive(Clone, Default, PartialEq, Eq, Debug)]
pub struct HeaderMap {
    entries: Vec<(HeaderName, HeaderValue)>,
}

impl HeaderMap {
    /// Creates an empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `name` to the single value `value`, dropping any earlier values.
    ///
    /// The pair takes the position of the first earlier value, if any, so
    /// replacing a header does not reorder the block.
    ///
    /// # Panics
    ///
    /// Panics if `name` or `value` is a string that fails validation (see
    /// [`HeaderName`], [`HeaderValue`]). Already-validated `HeaderName` and
    /// `HeaderValue` arguments never panic; use [`HeaderMap::try_insert`] for
    /// untrusted text.
    pub fn insert(&mut self, name: impl IntoHeaderName, value: impl IntoHeaderValue) {
        if let Err(e) = self.try_insert(name, value) {
            panic!("HeaderMap::insert: {e}");
        }
    }

    /// Like [`HeaderMap::insert`], but reports invalid input instead of panicking.
    pub fn try_insert(
        &mut self,
        name: impl IntoHeaderName,
        value: impl IntoHeaderValue,
    ) -> Result<(), HeaderError> {
        let name = name.try_into_header_name()?;
        let value = value.try_into_header_value()?;
        match self.entries.iter().position(|(n, _)| *n == name) {
            Some(first) => {
                self.entries[first].1 = value;
                let mut i = 0;
                self.entries.retain(|(n, _)| {
                    i += 1;
                    i - 1 <= first || *n != name
                });
            }
            None => self.entries.push((name, value)),
        }
        Ok(())
    }

    /// Adds another value for `name` after all existing pairs.
    ///
    /// # Panics
    ///
    /// Panics under the same conditions as [`HeaderMap::insert`]; use
    /// [`HeaderMap::try_append`] for untrusted text.
    pub fn append(&mut self, name: impl IntoHeaderName, value: impl IntoHeaderValue) {
        if let Err(e) = self.try_append(name, value) {
            panic!("HeaderMap::append: {e}");
        }
    }

    /// Like [`HeaderMap::append`], but reports invalid input instead of panicking.
    pub fn try_append(
        &mut self,
        name: impl IntoHeaderName,
        value: impl IntoHeaderValue,
    ) -> Result<(), HeaderError> {
        let name = name.try_into_header_name()?;
        let value = value.try_into_header_value()?;
        self.entries.push((name, value));
        Ok(())
    }

    /// Returns the first value stored under exactly `name`.
    pub fn get(&self, name: impl AsRef<str>) -> Option<&HeaderValue> {
        let name = name.as_ref();
        self.entries
            .iter()
            .find(|(n, _)| n.as_str() == name)
            .map(|(_, v)| v)
    }

    /// Returns every value stored under exactly `name`, in insertion order.
    pub fn get_all(&self, name: impl AsRef<str>) -> impl Iterator<Item = &HeaderValue> {
        self.entries
            .iter()
            .filter(move |(n, _)| n.as_str() == name.as_ref())
            .map(|(_, v)| v)
    }

    /// Removes every value stored under exactly `name`, returning the first.
    pub fn remove(&mut self, name: impl AsRef<str>) -> Option<HeaderValue> {
        let name = name.as_ref();
        let first = self.entries.iter().position(|(n, _)| n.as_str() == name)?;
        let (_, value) = self.entries.remove(first);
        self.entries.retain(|(n, _)| n.as_str() != name);
        Some(value)
    }

    /// Iterates over every `(name, value)` pair in order; a name with several
    /// values appears once per value.
    pub fn iter(&self) -> impl Iterator<Item = (&HeaderName, &HeaderValue)> {
        self.entries.iter().map(|(n, v)| (n, v))
    }

    /// Returns the number of `(name, value)` pairs (not distinct names).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Returns `true` if the map holds no pairs.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl<'a> IntoIterator for &'a HeaderMap {
    type Item = (&'a HeaderName, &'a HeaderValue);
    type IntoIter = std::iter::Map<
        std::slice::Iter<'a, (HeaderName, HeaderValue)>,
        fn(&'a (HeaderName, HeaderValue)) -> (&'a HeaderName, &'a HeaderValue),
    >;

    fn into_iter(self) -> Self::IntoIter {
        self.entries.iter().map(|(n, v)| (n, v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(map: &HeaderMap) -> Vec<(&str, &str)> {
        map.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect()
    }

    #[test]
    fn append_keeps_order_and_duplicates() {
        let mut map = HeaderMap::new();
        map.append("A", "1");
        map.append("B", "2");
        map.append("A", "3");
        assert_eq!(pairs(&map), [("A", "1"), ("B", "2"), ("A", "3")]);
        assert_eq!(map.get("A").unwrap(), "1");
        assert_eq!(map.get_all("A").collect::<Vec<_>>(), ["1", "3"]);
        assert_eq!(map.len(), 3);
    }

    #[test]
    fn insert_replaces_all_values_in_place() {
        let mut map = HeaderMap::new();
        map.append("A", "1");
        map.append("B", "2");
        map.append("A", "3");
        map.insert("A", "x");
        assert_eq!(pairs(&map), [("A", "x"), ("B", "2")]);
        map.insert("C", 5u64);
        assert_eq!(pairs(&map), [("A", "x"), ("B", "2"), ("C", "5")]);
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
        assert_eq!(pairs(&map), [("B", "2")]);
        assert!(map.remove("A").is_none());
    }

    #[test]
    fn try_variants_report_errors() {
        let mut map = HeaderMap::new();
        assert_eq!(map.try_insert("a b", "v"), Err(HeaderError::InvalidName));
        assert_eq!(map.try_append("a", "v\r\n"), Err(HeaderError::InvalidValue));
        assert!(map.is_empty());
    }

    #[test]
    #[should_panic(expected = "HeaderMap::insert")]
    fn insert_panics_on_invalid_text() {
        HeaderMap::new().insert("bad name", "v");
    }
}
