//! Helpers shared by the Service API integration tests.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used)]

use std::future::Future;
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use rnats_core::{Client, Message};
use rnats_service::endpoint::Endpoint;
use rnats_service::{Request, error};
use serde_json::Value;
use tokio::task::JoinHandle;

/// How long any single wait may take before the test fails instead of hanging.
pub const WAIT: Duration = Duration::from_secs(20);

/// Connects a client to `url`.
pub async fn connect(url: &str) -> Client {
    rnats_core::connect(url).await.unwrap()
}

/// Answers every request of `endpoint` with `answer(&request)` until the stream ends; returns
/// how many it answered.
pub fn serve<F>(mut endpoint: Endpoint, answer: F) -> JoinHandle<usize>
where
    F: Fn(&Request) -> Result<Bytes, error::Error> + Send + 'static,
{
    tokio::spawn(async move {
        let mut answered = 0;
        while let Some(request) = endpoint.next().await {
            let response = answer(&request);
            request.respond(response).await.unwrap();
            answered += 1;
        }
        answered
    })
}

/// Echoes each request's payload.
pub fn echo(request: &Request) -> Result<Bytes, error::Error> {
    Ok(request.message.payload.clone())
}

/// A request that fails the test after [`WAIT`] instead of hanging.
pub async fn request(client: &Client, subject: &str, payload: &str) -> Message {
    within(client.request(subject.to_owned(), Bytes::from(payload.to_owned())))
        .await
        .unwrap()
}

/// A request whose reply is parsed as JSON.
pub async fn request_json(client: &Client, subject: &str) -> Value {
    let reply = request(client, subject, "").await;
    serde_json::from_slice(&reply.payload).unwrap()
}

/// Awaits `future`, failing the test after [`WAIT`].
pub async fn within<F: Future>(future: F) -> F::Output {
    tokio::time::timeout(WAIT, future).await.expect("timed out")
}

/// The keys of a JSON object, sorted.
pub fn keys(value: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = value
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    keys
}
