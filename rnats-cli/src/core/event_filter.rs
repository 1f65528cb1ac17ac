//! Which servers a system request reaches: the library's [`ServerFilter`]
//! (nats-server's `EventFilterOptions`), matched exactly, as natscli matches it.

use rnats::system::ServerFilter;

/// The servers `filter` selects, each field set matched exactly as natscli asks (the
/// library matches a part of the name by default). A filter that selects every server
/// stays as it is, so that a ping still counts every server.
pub(crate) fn exactly(filter: ServerFilter) -> ServerFilter {
    let exact = !filter.selects_all();
    filter.exact_match(exact)
}

/// A filter of the fields the command line gave: the server's `name`, `host` and
/// `cluster`, its `tags`, and the context's JetStream `domain`.
pub(crate) fn server_filter(
    name: Option<&str>,
    host: Option<&str>,
    cluster: Option<&str>,
    tags: &[String],
    domain: Option<&str>,
) -> ServerFilter {
    let mut filter = ServerFilter::new().tags(tags.iter().cloned());
    filter.name = name.map(str::to_owned);
    filter.host = host.map(str::to_owned);
    filter.cluster = cluster.map(str::to_owned);
    filter.domain = domain.map(str::to_owned);
    exactly(filter)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn only_the_fields_set_are_sent_and_matched_exactly() {
        let tags = ["a".to_owned(), "b".to_owned()];
        let filter = server_filter(Some("n1"), None, None, &tags, Some("hub"));
        assert_eq!(
            serde_json::to_value(&filter).unwrap(),
            json!({ "server_name": "n1", "tags": ["a", "b"], "domain": "hub", "exact_match": true })
        );
        let every = server_filter(None, None, None, &[], None);
        assert!(every.selects_all(), "{every:?}");
    }
}
