//! The HTTP headers the WebSocket upgrade request carries beyond the protocol's own: a
//! cookie or a bearer token for a proxy in front of the server, or the cookies nats-server
//! reads credentials from (`websocket { jwt_cookie, user_cookie, pass_cookie, token_cookie }`).
//! Static, or made by a callback at every connect so that a rotating token is fresh at each
//! reconnect (nats.go's `WebSocketConnectionHeadersHandler`, nats.rs PRs 1588/1589).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use http::HeaderMap;

use crate::auth::AuthError;

/// The boxed future a headers callback returns.
type HeadersFuture = Pin<Box<dyn Future<Output = Result<HeaderMap, AuthError>> + Send>>;

/// Where the upgrade request's extra headers come from.
#[derive(Clone, Default)]
pub(crate) enum WebSocketHeaders {
    /// None beyond the protocol's own.
    #[default]
    None,
    /// The same headers at every connect.
    Static(HeaderMap),
    /// Asked for at every connect, before the upgrade request is sent.
    Callback(Arc<dyn Fn() -> HeadersFuture + Send + Sync>),
}

impl WebSocketHeaders {
    /// Wraps a callback that makes the headers.
    pub(crate) fn from_callback<F, Fut>(callback: F) -> WebSocketHeaders
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<HeaderMap, AuthError>> + Send + 'static,
    {
        WebSocketHeaders::Callback(Arc::new(move || Box::pin(callback())))
    }

    /// The headers for this connect (the callback's, asked now).
    pub(crate) async fn resolve(&self) -> Result<HeaderMap, AuthError> {
        match self {
            WebSocketHeaders::None => Ok(HeaderMap::new()),
            WebSocketHeaders::Static(headers) => Ok(headers.clone()),
            WebSocketHeaders::Callback(make) => make().await,
        }
    }
}

/// Names only: header values are often credentials.
impl fmt::Debug for WebSocketHeaders {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WebSocketHeaders::None => f.write_str("None"),
            WebSocketHeaders::Static(headers) => f
                .debug_tuple("Static")
                .field(&headers.keys().map(|name| name.as_str()).collect::<Vec<_>>())
                .finish(),
            WebSocketHeaders::Callback(_) => f.write_str("Callback(<fn>)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    #[test]
    fn debug_shows_the_names_and_never_the_values() {
        let mut headers = HeaderMap::new();
        headers.insert(
            http::header::AUTHORIZATION,
            HeaderValue::from_static("Bearer secret-token"),
        );
        let shown = format!("{:?}", WebSocketHeaders::Static(headers));
        assert!(shown.contains("authorization"), "{shown}");
        assert!(!shown.contains("secret-token"), "{shown}");
        let callback = WebSocketHeaders::from_callback(|| async { Ok(HeaderMap::new()) });
        assert_eq!(format!("{callback:?}"), "Callback(<fn>)");
    }

    #[tokio::test]
    async fn a_callback_is_asked_at_every_resolve() {
        let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = Arc::clone(&calls);
        let headers = WebSocketHeaders::from_callback(move || {
            let n = counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            async move {
                let mut headers = HeaderMap::new();
                headers.insert("x-attempt", HeaderValue::from(n));
                Ok(headers)
            }
        });
        for n in 0..3_usize {
            let resolved = headers.resolve().await.unwrap();
            assert_eq!(resolved["x-attempt"], HeaderValue::from(n));
        }
    }
}
