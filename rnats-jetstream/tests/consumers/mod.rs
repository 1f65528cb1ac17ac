//! Watching a stream's consumers from the Object Store tests: readers delete the consumers
//! they read through, and the tests wait for that on the server's deletion advisories.

use futures_util::{StreamExt, TryStreamExt};
use rnats_jetstream::Context;

/// The names of `stream`'s consumers.
pub(crate) async fn consumer_names(js: &Context, stream: &str) -> Vec<String> {
    let stream = js.get_stream(stream).await.unwrap();
    stream.consumer_names().try_collect().await.unwrap()
}

/// Waits until `stream` has no consumers, looking again after each deletion advisory that
/// `deleted` receives, and every 100 ms besides: the server announces a deletion just before
/// it takes the consumer off its list. Fails after 10 s with one left.
pub(crate) async fn until_no_consumers(
    js: &Context,
    stream: &str,
    deleted: &mut rnats_core::Subscriber,
) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let names = consumer_names(js, stream).await;
        if names.is_empty() {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "nobody deleted {names:?}"
        );
        let advisory = deleted.next();
        let _ = tokio::time::timeout(std::time::Duration::from_millis(100), advisory).await;
    }
}
