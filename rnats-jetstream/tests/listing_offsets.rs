//! Paged listings against a peer that ignores the offset asked for. A nats-server without
//! JetStream leaves the API subjects free; a subscriber in the test answers them in the
//! server's place, every time with the same page: offset 0, a total of a million, two items.
//! nats-server echoes the offset asked for in each reply, so each listing yields that page
//! once and then ends with a `RequestError` caused by `UnexpectedPageError`, where it used to
//! yield the same two items again and again until the million.
#![allow(clippy::unwrap_used, missing_docs)]

use futures_util::{Stream, StreamExt};
use rnats_core::Client;
use rnats_jetstream::context::{RequestError, RequestErrorKind};
use rnats_jetstream::paging::UnexpectedPageError;
use rnats_test_server::NatsServer;
use serde_json::{Value, json};

/// A client on a server without JetStream, and its JetStream context.
async fn without_jetstream() -> (NatsServer, Client, rnats_jetstream::Context) {
    let server = NatsServer::builder().spawn().unwrap();
    let client = rnats_core::connect(server.url()).await.unwrap();
    let js = rnats_jetstream::new(client.clone());
    (server, client, js)
}

/// Answers every request on `subject` with `page`, from another connection.
async fn answer_always(server: &NatsServer, subject: &str, page: Value) {
    let peer = rnats_core::connect(server.url()).await.unwrap();
    let mut requests = peer.subscribe(subject.to_owned()).await.unwrap();
    peer.flush().await.unwrap();
    let page = serde_json::to_vec(&page).unwrap();
    tokio::spawn(async move {
        while let Some(request) = requests.next().await {
            if let Some(reply) = request.reply {
                peer.publish(reply, page.clone().into()).await.unwrap();
            }
        }
    });
}

/// The listing's first items, at most a dozen: more than one page of the peer's, so a listing
/// that takes the same page again shows it here instead of running on to the million.
async fn first_items<T, S>(listing: S) -> Vec<Result<T, RequestError>>
where
    S: Stream<Item = Result<T, RequestError>>,
{
    listing.take(12).collect().await
}

/// The items are the peer's page once, then the error naming the offsets, then the end.
fn assert_one_page_then_refused<T: std::fmt::Debug + PartialEq>(
    items: Vec<Result<T, RequestError>>,
    page: &[T],
) {
    assert_eq!(items.len(), page.len() + 1, "{items:?}");
    for (item, expected) in items.iter().zip(page) {
        assert_eq!(item.as_ref().unwrap(), expected);
    }
    let error = items.last().unwrap().as_ref().unwrap_err();
    assert_eq!(error.kind(), RequestErrorKind::Other);
    let refused = error.downcast_source::<UnexpectedPageError>().unwrap();
    assert_eq!((refused.asked(), refused.got()), (page.len(), 0));
}

#[tokio::test]
async fn stream_names_end_at_a_page_that_ignores_the_offset() {
    let (server, _client, js) = without_jetstream().await;
    let page = json!({
        "type": "io.nats.jetstream.api.v1.stream_names_response",
        "total": 1_000_000, "offset": 0, "limit": 1024,
        "streams": ["A", "B"],
    });
    answer_always(&server, "$JS.API.STREAM.NAMES", page).await;
    let items = first_items(js.stream_names()).await;
    assert_one_page_then_refused(items, &["A".to_owned(), "B".to_owned()]);
}

#[tokio::test]
async fn a_later_page_without_an_offset_is_refused() {
    // Every nats-server sends the offset; a reply without one reads as offset 0, right for
    // the first page only.
    let (server, _client, js) = without_jetstream().await;
    let page = json!({ "total": 1_000_000, "limit": 1024, "streams": ["A", "B"] });
    answer_always(&server, "$JS.API.STREAM.NAMES", page).await;
    let items = first_items(js.stream_names()).await;
    assert_one_page_then_refused(items, &["A".to_owned(), "B".to_owned()]);
}

#[tokio::test]
async fn consumer_names_end_at_a_page_that_ignores_the_offset() {
    let (server, _client, js) = without_jetstream().await;
    let page = json!({
        "type": "io.nats.jetstream.api.v1.consumer_names_response",
        "total": 1_000_000, "offset": 0, "limit": 1024,
        "consumers": ["c1", "c2"],
    });
    answer_always(&server, "$JS.API.CONSUMER.NAMES.ORDERS", page).await;
    let stream = js.get_stream_no_info("ORDERS").await.unwrap();
    let items = first_items(stream.consumer_names()).await;
    assert_one_page_then_refused(items, &["c1".to_owned(), "c2".to_owned()]);
}

#[tokio::test]
async fn subject_counts_end_at_a_page_that_ignores_the_offset() {
    let (server, _client, js) = without_jetstream().await;
    // A 2.15.1 reply to `STREAM.INFO` with a subjects filter (the fuzz seed), claiming more.
    let seed = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fuzz/corpus/jetstream_api/stream_info_subjects.json"
    );
    let mut page: Value = serde_json::from_slice(&std::fs::read(seed).unwrap()).unwrap();
    page["total"] = json!(1_000_000);
    assert_eq!(page["offset"], 0);
    answer_always(&server, "$JS.API.STREAM.INFO.ORDERS", page).await;
    let stream = js.get_stream_no_info("ORDERS").await.unwrap();
    let counts = stream.info_with_subjects(">").await.unwrap();
    let mut items = first_items(counts).await;
    // The page is a map: its order is not the server's.
    items[..2].sort_by(|a, b| a.as_ref().unwrap().cmp(b.as_ref().unwrap()));
    let page = [("orders.1".to_owned(), 1), ("orders.2".to_owned(), 1)];
    assert_one_page_then_refused(items, &page);
}
