//! How messages are shown: a header line, the headers and the body for people, one JSON
//! object per message for scripts.

use base64::Engine;
use rnats::HeaderMap;
use serde_json::{Map, Value};

/// The parts of a message that are shown, whatever client type it came in.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Shown<'a> {
    /// Its subject.
    pub(crate) subject: &'a str,
    /// Its reply subject.
    pub(crate) reply: Option<&'a str>,
    /// Its headers.
    pub(crate) headers: Option<&'a HeaderMap>,
    /// Its body.
    pub(crate) payload: &'a [u8],
}

impl Shown<'_> {
    /// `Key: value` lines, then a blank line and the body, then a blank line.
    pub(crate) fn human(&self, title: &str) -> String {
        let mut out = format!("{title}\n");
        if let Some(headers) = self.headers.filter(|h| !h.is_empty()) {
            for (name, values) in headers.iter() {
                for value in values {
                    out.push_str(&format!("{}: {}\n", name.as_str(), value.as_str()));
                }
            }
        }
        out.push('\n');
        out.push_str(&String::from_utf8_lossy(self.payload));
        if !self.payload.is_empty() {
            out.push('\n');
        }
        out.push('\n');
        out
    }

    /// `{"subject", "reply"?, "headers"?, "data" | "data_base64"}`: the body as text when it
    /// is UTF-8, base64 otherwise.
    pub(crate) fn json(&self) -> Map<String, Value> {
        let mut object = Map::new();
        object.insert("subject".into(), Value::String(self.subject.to_owned()));
        if let Some(reply) = self.reply {
            object.insert("reply".into(), Value::String(reply.to_owned()));
        }
        if let Some(headers) = self.headers.filter(|h| !h.is_empty()) {
            object.insert("headers".into(), Value::Object(headers_json(headers)));
        }
        match std::str::from_utf8(self.payload) {
            Ok(text) => object.insert("data".into(), Value::String(text.to_owned())),
            Err(_) => object.insert(
                "data_base64".into(),
                Value::String(base64::engine::general_purpose::STANDARD.encode(self.payload)),
            ),
        };
        object
    }
}

/// Headers as `{"Name": ["value", ...]}`.
pub(crate) fn headers_json(headers: &HeaderMap) -> Map<String, Value> {
    headers
        .iter()
        .map(|(name, values)| {
            let values = values
                .iter()
                .map(|v| Value::String(v.as_str().to_owned()))
                .collect();
            (name.as_str().to_owned(), Value::Array(values))
        })
        .collect()
}
