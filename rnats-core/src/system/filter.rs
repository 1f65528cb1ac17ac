//! Which servers answer a request: nats-server's `EventFilterOptions`, sent with every
//! request's options.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Which servers answer a request sent to all of them; by default every one.
///
/// Servers that the filter leaves out stay silent. The name, cluster and host match when
/// they contain the text given, or only when equal with [`exact_match`](Self::exact_match).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ServerFilter {
    /// Only servers whose name holds this text.
    #[serde(
        rename = "server_name",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub name: Option<String>,
    /// Only servers of a cluster whose name holds this text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<String>,
    /// Only servers whose host holds this text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// Whether the texts above must equal the server's, not only be part of it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exact_match: bool,
    /// Only servers with every one of these tags.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Only servers of this JetStream domain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
}

impl ServerFilter {
    /// Every server (the default).
    pub fn new() -> ServerFilter {
        ServerFilter::default()
    }

    /// Only servers whose name holds `name`.
    pub fn name(mut self, name: impl Into<String>) -> ServerFilter {
        self.name = Some(name.into());
        self
    }

    /// Only servers of a cluster whose name holds `cluster`.
    pub fn cluster(mut self, cluster: impl Into<String>) -> ServerFilter {
        self.cluster = Some(cluster.into());
        self
    }

    /// Only servers whose host holds `host`.
    pub fn host(mut self, host: impl Into<String>) -> ServerFilter {
        self.host = Some(host.into());
        self
    }

    /// Whether names, clusters and hosts must match exactly.
    pub fn exact_match(mut self, exact: bool) -> ServerFilter {
        self.exact_match = exact;
        self
    }

    /// Only servers with every one of `tags`.
    pub fn tags<I, S>(mut self, tags: I) -> ServerFilter
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tags = tags.into_iter().map(Into::into).collect();
        self
    }

    /// Only servers of the JetStream domain `domain`.
    pub fn domain(mut self, domain: impl Into<String>) -> ServerFilter {
        self.domain = Some(domain.into());
        self
    }

    /// Whether it selects every server.
    pub fn selects_all(&self) -> bool {
        *self == ServerFilter::default()
    }

    /// Adds the filter's fields to a request body: nats-server reads a kind's options and
    /// the filter from one flat JSON object.
    pub(crate) fn add_to(&self, body: &mut Map<String, Value>) {
        if let Ok(Value::Object(fields)) = serde_json::to_value(self) {
            body.extend(fields);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_filter_adds_only_what_it_sets_with_the_servers_names_for_them() {
        let mut body = Map::new();
        ServerFilter::new().add_to(&mut body);
        assert!(body.is_empty());
        ServerFilter::new()
            .name("n1")
            .exact_match(true)
            .tags(["az:1"])
            .add_to(&mut body);
        assert_eq!(
            Value::Object(body),
            json!({"server_name": "n1", "exact_match": true, "tags": ["az:1"]})
        );
    }
}
