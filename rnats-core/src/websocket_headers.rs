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
