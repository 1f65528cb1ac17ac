//! Message headers (ADR-4): the map, its names and values, and the names the server reads.
//!
//! Names and values built by the infallible conversions (`"x".into()`, `HeaderValue::from`)
//! are checked when they enter a [`HeaderMap`], which never panics and never stores invalid
//! text; a publish of a map that refused something fails with a typed error. See
//! [`HeaderMap`]'s "Invalid text" section.
//!
//! ```
//! use rnats_core::header::{HeaderMap, NATS_MESSAGE_ID};
//!
//! let mut headers = HeaderMap::new();
//! headers.insert(NATS_MESSAGE_ID, "order-17");
//! headers.append("X-Tag", "a");
//! headers.append("X-Tag", "b");
//! assert_eq!(headers.get(NATS_MESSAGE_ID).unwrap().as_str(), "order-17");
//! assert_eq!(headers.get_all("X-Tag").count(), 2);
//! ```

pub use rnats_proto::header_constants::*;
pub use rnats_proto::{
    GetAll, HeaderError, HeaderIter, HeaderMap, HeaderName, HeaderValue, IntoHeaderName,
    IntoHeaderValue,
};

/// What parsing a [`HeaderName`] fails with; async-nats' name for [`HeaderError`].
pub type ParseHeaderNameError = HeaderError;

/// What parsing a [`HeaderValue`] fails with; async-nats' name for [`HeaderError`].
pub type ParseHeaderValueError = HeaderError;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn async_nats_call_shapes() {
        let mut headers = HeaderMap::new();
        headers.insert(NATS_MESSAGE_ID, "x");
        headers.insert("X-Test", "Test".parse::<HeaderValue>().unwrap());
        headers.append("X-Test", "Second");
        headers.insert(NATS_EXPECTED_LAST_SEQUENCE, HeaderValue::from(3u64));
        assert_eq!(headers.get(NATS_MESSAGE_ID).unwrap().to_string(), "x");
        assert_eq!(headers.get_last("X-Test").unwrap().as_str(), "Second");
        let names: Vec<(&HeaderName, &Vec<HeaderValue>)> = headers.iter().collect();
        assert_eq!(names.len(), headers.len());
        assert_eq!(headers.len(), 3);
        assert_eq!(headers.check(), Ok(()));
        let parsed: Result<HeaderName, ParseHeaderNameError> = "Bad Name".parse();
        assert!(parsed.is_err());
    }
}
