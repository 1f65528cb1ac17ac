//! What the crate's unit tests share.

use rnats_core::ConnectOptions;

/// A client that never reaches a server (it keeps trying 127.0.0.1:1 in the background): for
/// tests of code that reads replies handed to it and sends nothing that must arrive.
pub(crate) async fn unconnected_client() -> rnats_core::Client {
    // With `retry_on_initial_connect` the client comes back at once.
    ConnectOptions::new()
        .retry_on_initial_connect()
        .connect("127.0.0.1:1")
        .await
        .expect("a client that connects in the background")
}
