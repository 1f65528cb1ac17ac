//! Which servers a system request reaches: nats-server's `EventFilterOptions`, the filter
//! fields natscli adds to the body of every `$SYS.REQ.SERVER.PING.*` request it sends.

use serde_json::{Map, Value, json};

/// The servers a system request selects: each field set must match, exactly, as natscli
/// asks. `server request` and the reports spell their flags differently (the reports'
/// `--host` is the server's name, as natscli's is) and both build this.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct EventFilter {
    /// The server's name.
    pub(crate) name: Option<String>,
    /// The server's host.
    pub(crate) host: Option<String>,
    /// The server's cluster.
    pub(crate) cluster: Option<String>,
    /// Tags the server must all have.
    pub(crate) tags: Vec<String>,
    /// The server's JetStream domain: the context's, as natscli narrows to it.
    pub(crate) domain: Option<String>,
}

impl EventFilter {
    /// Adds the filter's fields to a request body, with `exact_match`.
    pub(crate) fn apply(&self, body: &mut Map<String, Value>) {
        for (key, value) in [
            ("server_name", &self.name),
            ("host", &self.host),
            ("cluster", &self.cluster),
            ("domain", &self.domain),
        ] {
            if let Some(value) = value {
                body.insert(key.into(), json!(value));
            }
        }
        if !self.tags.is_empty() {
            body.insert("tags".into(), json!(self.tags));
        }
        body.insert("exact_match".into(), json!(true));
    }

    /// Whether every server is selected: no field is set.
    pub(crate) fn selects_all(&self) -> bool {
        *self == EventFilter::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_fields_set_are_sent_and_matched_exactly() {
        let filter = EventFilter {
            name: Some("n1".into()),
            tags: vec!["a".into(), "b".into()],
            domain: Some("hub".into()),
            ..EventFilter::default()
        };
        let mut body = Map::new();
        filter.apply(&mut body);
        assert_eq!(
            Value::Object(body),
            json!({ "server_name": "n1", "tags": ["a", "b"], "domain": "hub", "exact_match": true })
        );
        assert!(!filter.selects_all());
        assert!(EventFilter::default().selects_all());
    }
}
