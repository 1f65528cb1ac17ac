#![allow(missing_docs, clippy::unwrap_used)]
// Timestamps are pinned as async-nats' default type, `time::OffsetDateTime`; with the `chrono`
// feature they are chrono's, in async-nats as here, and this file is left out.
#![cfg(all(feature = "jetstream", not(feature = "chrono")))]
use rnats as async_nats;

// Compile-level compatibility with async-nats 0.51's JetStream API (Key-Value, Object Store and
// the Service API are left out). Every shape here was also compiled against async-nats itself.
//
// The `async fn`s that need a server are compiled, never run; the `#[test]`s check behaviour
// that needs no server (defaults, serde names, error codes, message parsing).

use std::collections::HashMap;
use std::time::Duration;

use async_nats::jetstream::{self, consumer, stream};
use bytes::Bytes;
use futures_util::{StreamExt, TryStreamExt};
use time::OffsetDateTime;

// ---------------------------------------------------------------------------------------------
// Context: construction, publishing, account
// ---------------------------------------------------------------------------------------------

#[allow(dead_code)]
async fn context_shapes(client: async_nats::Client) -> Result<(), async_nats::Error> {
    let js: jetstream::Context = jetstream::new(client.clone());
    let _domain: jetstream::Context = jetstream::with_domain(client.clone(), "hub");
    let _domain_string = jetstream::with_domain(client.clone(), String::from("leaf"));
    let _prefix: jetstream::Context = jetstream::with_prefix(client.clone(), "$JS.hub.API");

    let _built: jetstream::Context = jetstream::ContextBuilder::new()
        .timeout(Duration::from_secs(5))
        .max_ack_inflight(1024)
        .build(client.clone());
    let _with_prefix = jetstream::context::ContextBuilder::new()
        .api_prefix("$JS.other.API")
        .timeout(Duration::from_secs(2))
        .ack_timeout(Duration::from_secs(3))
        .build(client.clone());
    let _with_domain = jetstream::ContextBuilder::new()
        .domain("edge")
        .backpressure_on_inflight(true)
        .concurrency_limit(Some(16))
        .build(client.clone());
    let _default_builder: jetstream::ContextBuilder<jetstream::context::Yes> = Default::default();

    let mut tuned = js.clone();
    tuned.set_timeout(Duration::from_millis(1500));
    let _inner: async_nats::Client = js.client();

    // Publish, then await the ack future.
    let ack: jetstream::publish::PublishAck = js.publish("events.a", "x".into()).await?.await?;
    let stream_name: String = ack.stream;
    let sequence: u64 = ack.sequence;
    let domain: String = ack.domain;
    let duplicate: bool = ack.duplicate;
    let value: Option<String> = ack.value;
    let batch_id: Option<String> = ack.batch_id;
    let batch_size: Option<u64> = ack.batch_size;
    println!("{stream_name} {sequence} {domain} {duplicate} {value:?} {batch_id:?} {batch_size:?}");

    let pending: jetstream::context::PublishAckFuture = js
        .publish(String::from("events.b"), Bytes::from_static(b"y"))
        .await?;
    let _ack: Result<jetstream::publish::PublishAck, jetstream::context::PublishError> =
        pending.await;
    let subject = async_nats::Subject::from("events.c");
    js.publish(subject, Bytes::new()).await?;

    let mut headers = async_nats::HeaderMap::new();
    headers.insert("Nats-Msg-Id", "id-1");
    let _ack = js
        .publish_with_headers("events.d", headers, "with headers".into())
        .await?
        .await?;

    let publish = jetstream::message::PublishMessage::build()
        .payload("data".into())
        .message_id("id-2")
        .expected_stream("EVENTS")
        .expected_last_message_id("id-1")
        .expected_last_sequence(10)
        .expected_last_subject_sequence(4)
        .header("X-Custom", "value")
        .ttl(Duration::from_secs(30));
    js.send_publish("events.e", publish).await?.await?;

    let mut more = async_nats::HeaderMap::new();
    more.insert("A", "b");
    let _named: jetstream::message::OutboundMessage = jetstream::message::PublishMessage::build()
        .headers(more)
        .payload(Bytes::from_static(b"z"))
        .outbound_message("events.f");
    // The same call without naming the type.
    let outbound = jetstream::message::PublishMessage::build()
        .payload(Bytes::from_static(b"z"))
        .outbound_message("events.f");
    let _subject: async_nats::Subject = outbound.subject;
    let _payload: Bytes = outbound.payload;
    let _headers: Option<async_nats::HeaderMap> = outbound.headers;

    // Fire many, then wait for all acks.
    for i in 0..10 {
        let _ = js.publish(format!("events.{i}"), "n".into()).await?;
    }
    js.wait_for_acks().await;

    let account: jetstream::account::Account = js.query_account().await?;
    let memory: u64 = account.memory;
    let storage: u64 = account.storage;
    let reserved_memory: u64 = account.reserved_memory;
    let reserved_storage: u64 = account.reserved_storage;
    let streams: usize = account.streams;
    let consumers: usize = account.consumers;
    let account_domain: Option<String> = account.domain.clone();
    let limits: jetstream::account::Limits = account.limits;
    let requests: jetstream::account::Requests = account.requests;
    let tiers: &HashMap<String, jetstream::account::Tier> = &account.tiers;
    println!(
        "{memory} {storage} {reserved_memory} {reserved_storage} {streams} {consumers} \
         {account_domain:?} {}",
        tiers.len()
    );
    let max_memory: Option<i64> = limits.max_memory;
    let max_storage: Option<i64> = limits.max_storage;
    let max_streams: Option<i64> = limits.max_streams;
    let max_consumers: Option<i64> = limits.max_consumers;
    let max_bytes_required: bool = limits.max_bytes_required;
    let max_ack_pending: i64 = limits.max_ack_pending;
    let memory_max_stream_bytes: Option<i64> = limits.memory_max_stream_bytes;
    let storage_max_stream_bytes: Option<i64> = limits.storage_max_stream_bytes;
    println!(
        "{max_memory:?} {max_storage:?} {max_streams:?} {max_consumers:?} {max_bytes_required} \
         {max_ack_pending} {memory_max_stream_bytes:?} {storage_max_stream_bytes:?}"
    );
    let total: u64 = requests.total;
    let errors: u64 = requests.errors;
    let level: usize = requests.level;
    let inflight: u64 = requests.inflight;
    println!("{total} {errors} {level} {inflight}");
    for (name, tier) in &account.tiers {
        let tier: &jetstream::account::Tier = tier;
        println!(
            "{name} {} {} {} {} {} {} {:?}",
            tier.memory,
            tier.storage,
            tier.reserved_memory,
            tier.reserved_storage,
            tier.streams,
            tier.consumers,
            tier.limits
        );
    }
    match js.query_account().await {
        Ok(_) => {}
        Err(err) => account_error(&err),
    }

    // Raw API requests.
    let _info: jetstream::account::Account = js.request("INFO", &()).await?;
    let raw: Result<serde_json::Value, jetstream::context::RequestError> =
        js.request("STREAM.NAMES", &serde_json::json!({})).await;
    if let Err(err) = raw {
        request_error(&err);
    }
    Ok(())
}

// Code generic over a context's capabilities, through `jetstream::context::traits`.
#[allow(dead_code)]
async fn generic_over_context_traits<C>(js: &C) -> Result<(), async_nats::Error>
where
    C: jetstream::context::traits::Requester
        + jetstream::context::traits::RequestSender
        + jetstream::context::traits::Publisher
        + jetstream::context::traits::ClientProvider
        + jetstream::context::traits::TimeoutProvider,
{
    let info: jetstream::response::Response<jetstream::account::Account> =
        js.request("INFO", &()).await?;
    drop(info);
    let inbox = js.client().new_inbox();
    js.send_request(
        "STREAM.NAMES",
        async_nats::Request::new().inbox(inbox.clone()),
    )
    .await?;
    let ack = js.publish("events.one", Bytes::from_static(b"x")).await?;
    ack.await?;
    let message = jetstream::message::OutboundMessage {
        subject: "events.two".into(),
        payload: Bytes::from_static(b"y"),
        headers: None,
    };
    js.publish_message(message).await?.await?;
    let _: Duration = js.timeout();
    Ok(())
}

// A context also serves the Core client's traits (raw, unprefixed subjects).
#[allow(dead_code)]
async fn context_as_core_traits(js: jetstream::Context) -> Result<(), async_nats::Error> {
    use async_nats::client::traits::{Publisher, Requester};
    let reply = Requester::send_request(&js, "svc.echo", async_nats::Request::new()).await?;
    drop(reply);
    Publisher::publish_with_reply(&js, "svc.echo", "reply.to", Bytes::new()).await?;
    generic_over_context_traits(&js).await
}

#[allow(deprecated, dead_code)]
async fn deprecated_publish_alias(js: jetstream::Context) -> Result<(), async_nats::Error> {
    let ack = js
        .send_publish(
            "events.old",
            jetstream::context::Publish::build()
                .payload("old".into())
                .message_id("legacy")
                .expected_stream("EVENTS"),
        )
        .await?
        .await?;
    println!("{}", ack.sequence);
    Ok(())
}

#[allow(dead_code)]
async fn publish_error_handling(js: jetstream::Context) {
    match js.publish("events.x", "x".into()).await {
        Ok(future) => match future.await {
            Ok(ack) => println!("{}", ack.sequence),
            Err(err) => publish_error(&err),
        },
        Err(err) => publish_error(&err),
    }
}

// ---------------------------------------------------------------------------------------------
// Exhaustive matches on the error kinds users handle
// ---------------------------------------------------------------------------------------------

fn publish_error(err: &jetstream::context::PublishError) {
    match err.kind() {
        jetstream::context::PublishErrorKind::StreamNotFound => {}
        jetstream::context::PublishErrorKind::WrongLastMessageId => {}
        jetstream::context::PublishErrorKind::WrongLastSequence => {}
        jetstream::context::PublishErrorKind::TimedOut => {}
        jetstream::context::PublishErrorKind::BrokenPipe => {}
        jetstream::context::PublishErrorKind::MaxAckPending => {}
        jetstream::context::PublishErrorKind::MaxPayloadExceeded => {}
        jetstream::context::PublishErrorKind::Other => {}
    }
}

fn request_error(err: &jetstream::context::RequestError) {
    match err.kind() {
        jetstream::context::RequestErrorKind::NoResponders => {}
        jetstream::context::RequestErrorKind::TimedOut => {}
        jetstream::context::RequestErrorKind::InvalidSubject => {}
        jetstream::context::RequestErrorKind::Other => {}
    }
}

fn account_error(err: &jetstream::context::AccountError) {
    match err.kind() {
        jetstream::context::AccountErrorKind::TimedOut => {}
        jetstream::context::AccountErrorKind::JetStream(js_err) => jetstream_error(&js_err),
        jetstream::context::AccountErrorKind::JetStreamUnavailable => {}
        jetstream::context::AccountErrorKind::Other => {}
    }
}

fn create_stream_error(err: &jetstream::context::CreateStreamError) {
    match err.kind() {
        jetstream::context::CreateStreamErrorKind::EmptyStreamName => {}
        jetstream::context::CreateStreamErrorKind::InvalidStreamName => {}
        jetstream::context::CreateStreamErrorKind::DomainAndExternalSet => {}
        jetstream::context::CreateStreamErrorKind::JetStreamUnavailable => {}
        jetstream::context::CreateStreamErrorKind::JetStream(js_err) => jetstream_error(&js_err),
        jetstream::context::CreateStreamErrorKind::TimedOut => {}
        jetstream::context::CreateStreamErrorKind::Response => {}
        jetstream::context::CreateStreamErrorKind::NotFound => {}
        jetstream::context::CreateStreamErrorKind::ResponseParse => {}
    }
}

fn update_stream_error(err: &jetstream::context::UpdateStreamError) {
    let kind: jetstream::context::UpdateStreamErrorKind = err.kind();
    if let jetstream::context::CreateStreamErrorKind::NotFound = kind {}
}

fn get_stream_error(err: &jetstream::context::GetStreamError) {
    match err.kind() {
        jetstream::context::GetStreamErrorKind::EmptyName => {}
        jetstream::context::GetStreamErrorKind::Request => {}
        jetstream::context::GetStreamErrorKind::InvalidStreamName => {}
        jetstream::context::GetStreamErrorKind::JetStream(js_err) => jetstream_error(&js_err),
    }
}

fn delete_stream_error(err: &jetstream::context::DeleteStreamError) {
    match err.kind() {
        jetstream::context::DeleteStreamErrorKind::EmptyName => {}
        jetstream::context::DeleteStreamErrorKind::Request => {}
        jetstream::context::DeleteStreamErrorKind::InvalidStreamName => {}
        jetstream::context::DeleteStreamErrorKind::JetStream(_) => {}
    }
}

fn stream_by_subject_error(err: &jetstream::context::GetStreamByNameError) {
    match err.kind() {
        jetstream::context::GetStreamByNameErrorKind::Request => {}
        jetstream::context::GetStreamByNameErrorKind::NotFound => {}
        jetstream::context::GetStreamByNameErrorKind::InvalidSubject => {}
        jetstream::context::GetStreamByNameErrorKind::JetStream(_) => {}
    }
}

fn streams_error(err: &jetstream::context::StreamsError) {
    let kind: jetstream::context::StreamsErrorKind = err.kind();
    match kind {
        jetstream::context::RequestErrorKind::NoResponders => {}
        jetstream::context::RequestErrorKind::TimedOut => {}
        jetstream::context::RequestErrorKind::InvalidSubject => {}
        jetstream::context::RequestErrorKind::Other => {}
    }
}

fn consumer_info_error(err: &jetstream::context::ConsumerInfoError) {
    match err.kind() {
        jetstream::context::ConsumerInfoErrorKind::InvalidName => {}
        jetstream::context::ConsumerInfoErrorKind::Offline => {}
        jetstream::context::ConsumerInfoErrorKind::NotFound => {}
        jetstream::context::ConsumerInfoErrorKind::StreamNotFound => {}
        jetstream::context::ConsumerInfoErrorKind::Request => {}
        jetstream::context::ConsumerInfoErrorKind::JetStream(_) => {}
        jetstream::context::ConsumerInfoErrorKind::TimedOut => {}
        jetstream::context::ConsumerInfoErrorKind::NoResponders => {}
    }
}

fn consumer_error(err: &stream::ConsumerError) {
    match err.kind() {
        stream::ConsumerErrorKind::TimedOut => {}
        stream::ConsumerErrorKind::Request => {}
        stream::ConsumerErrorKind::InvalidConsumerType => {}
        stream::ConsumerErrorKind::InvalidName => {}
        stream::ConsumerErrorKind::JetStream(js_err) => jetstream_error(&js_err),
        stream::ConsumerErrorKind::Other => {}
    }
}

fn consumer_create_strict_error(err: &stream::ConsumerCreateStrictError) {
    match err.kind() {
        stream::ConsumerCreateStrictErrorKind::TimedOut => {}
        stream::ConsumerCreateStrictErrorKind::Request => {}
        stream::ConsumerCreateStrictErrorKind::InvalidConsumerType => {}
        stream::ConsumerCreateStrictErrorKind::InvalidName => {}
        stream::ConsumerCreateStrictErrorKind::AlreadyExists => {}
        stream::ConsumerCreateStrictErrorKind::JetStream(_) => {}
        stream::ConsumerCreateStrictErrorKind::Other => {}
    }
}

fn consumer_update_error(err: &stream::ConsumerUpdateError) {
    match err.kind() {
        stream::ConsumerUpdateErrorKind::TimedOut => {}
        stream::ConsumerUpdateErrorKind::Request => {}
        stream::ConsumerUpdateErrorKind::InvalidConsumerType => {}
        stream::ConsumerUpdateErrorKind::InvalidName => {}
        stream::ConsumerUpdateErrorKind::DoesNotExist => {}
        stream::ConsumerUpdateErrorKind::JetStream(_) => {}
        stream::ConsumerUpdateErrorKind::Other => {}
    }
}

fn consumer_reset_error(err: &stream::ConsumerResetError) {
    match err.kind() {
        stream::ConsumerResetErrorKind::TimedOut => {}
        stream::ConsumerResetErrorKind::Request => {}
        stream::ConsumerResetErrorKind::NotFound => {}
        stream::ConsumerResetErrorKind::InvalidReset => {}
        stream::ConsumerResetErrorKind::JetStream(_) => {}
    }
}

fn direct_get_error(err: &stream::DirectGetError) {
    match err.kind() {
        stream::DirectGetErrorKind::NotFound => {}
        stream::DirectGetErrorKind::InvalidSubject => {}
        stream::DirectGetErrorKind::TimedOut => {}
        stream::DirectGetErrorKind::Request => {}
        stream::DirectGetErrorKind::ErrorResponse(status, description) => {
            let _status: async_nats::StatusCode = status;
            let _description: String = description;
        }
        stream::DirectGetErrorKind::Other => {}
    }
}

fn delete_message_error(err: &stream::DeleteMessageError) {
    match err.kind() {
        stream::DeleteMessageErrorKind::Request => {}
        stream::DeleteMessageErrorKind::TimedOut => {}
        stream::DeleteMessageErrorKind::JetStream(_) => {}
    }
}

fn purge_error(err: &stream::PurgeError) {
    match err.kind() {
        stream::PurgeErrorKind::Request => {}
        stream::PurgeErrorKind::TimedOut => {}
        stream::PurgeErrorKind::JetStream(_) => {}
    }
}

fn last_raw_message_error(err: &stream::LastRawMessageError) {
    match err.kind() {
        stream::LastRawMessageErrorKind::NoMessageFound => {}
        stream::LastRawMessageErrorKind::InvalidSubject => {}
        stream::LastRawMessageErrorKind::JetStream(_) => {}
        stream::LastRawMessageErrorKind::Other => {}
    }
}

fn raw_message_error(err: &stream::RawMessageError) {
    let kind: stream::RawMessageErrorKind = err.kind();
    if kind == stream::LastRawMessageErrorKind::NoMessageFound {}
}

fn info_error(err: &stream::InfoError) {
    request_error(err);
}

fn consumers_error(err: &stream::ConsumersError) {
    let _kind: stream::ConsumersErrorKind = err.kind();
}

fn consumer_stream_error(err: &consumer::StreamError) {
    match err.kind() {
        consumer::StreamErrorKind::TimedOut => {}
        consumer::StreamErrorKind::Other => {}
    }
}

fn pull_messages_error(err: &consumer::pull::MessagesError) {
    match err.kind() {
        consumer::pull::MessagesErrorKind::MissingHeartbeat => {}
        consumer::pull::MessagesErrorKind::ConsumerDeleted => {}
        consumer::pull::MessagesErrorKind::Pull => {}
        consumer::pull::MessagesErrorKind::PushBasedConsumer => {}
        consumer::pull::MessagesErrorKind::NoResponders => {}
        consumer::pull::MessagesErrorKind::RequestLimitExceeded => {}
        consumer::pull::MessagesErrorKind::Other => {}
    }
}

fn pull_ordered_error(err: &consumer::pull::OrderedError) {
    match err.kind() {
        consumer::pull::OrderedErrorKind::MissingHeartbeat => {}
        consumer::pull::OrderedErrorKind::ConsumerDeleted => {}
        consumer::pull::OrderedErrorKind::Pull => {}
        consumer::pull::OrderedErrorKind::PushBasedConsumer => {}
        consumer::pull::OrderedErrorKind::Recreate => {}
        consumer::pull::OrderedErrorKind::NoResponders => {}
        consumer::pull::OrderedErrorKind::RequestLimitExceeded => {}
        consumer::pull::OrderedErrorKind::Other => {}
    }
}

fn batch_error(err: &consumer::pull::BatchError) {
    match err.kind() {
        consumer::pull::BatchErrorKind::Subscribe => {}
        consumer::pull::BatchErrorKind::Pull => {}
        consumer::pull::BatchErrorKind::Flush => {}
        consumer::pull::BatchErrorKind::Serialize => {}
        consumer::pull::BatchErrorKind::PinnedClient => {}
    }
}

fn batch_request_error(err: &consumer::pull::BatchRequestError) {
    match err.kind() {
        consumer::pull::BatchRequestErrorKind::Publish => {}
        consumer::pull::BatchRequestErrorKind::Flush => {}
        consumer::pull::BatchRequestErrorKind::Serialize => {}
    }
}

fn pull_recreate_error(err: &consumer::pull::ConsumerRecreateError) {
    match err.kind() {
        consumer::pull::ConsumerRecreateErrorKind::GetStream => {}
        consumer::pull::ConsumerRecreateErrorKind::Recreate => {}
        consumer::pull::ConsumerRecreateErrorKind::TimedOut => {}
    }
}

fn push_messages_error(err: &consumer::push::MessagesError) {
    match err.kind() {
        consumer::push::MessagesErrorKind::MissingHeartbeat => {}
        consumer::push::MessagesErrorKind::ConsumerDeleted => {}
        consumer::push::MessagesErrorKind::PullBasedConsumer => {}
        consumer::push::MessagesErrorKind::Other => {}
    }
}

fn push_ordered_error(err: &consumer::push::OrderedError) {
    match err.kind() {
        consumer::push::OrderedErrorKind::MissingHeartbeat => {}
        consumer::push::OrderedErrorKind::ConsumerDeleted => {}
        consumer::push::OrderedErrorKind::PullBasedConsumer => {}
        consumer::push::OrderedErrorKind::Recreate => {}
        consumer::push::OrderedErrorKind::Other => {}
    }
}

fn push_recreate_error(err: &consumer::push::ConsumerRecreateError) {
    match err.kind() {
        consumer::push::ConsumerRecreateErrorKind::GetStream => {}
        consumer::push::ConsumerRecreateErrorKind::Subscription => {}
        consumer::push::ConsumerRecreateErrorKind::Recreate => {}
        consumer::push::ConsumerRecreateErrorKind::TimedOut => {}
    }
}

fn stream_message_error(err: &jetstream::message::StreamMessageError) {
    match err.kind() {
        jetstream::message::StreamMessageErrorKind::MissingHeader => {}
        jetstream::message::StreamMessageErrorKind::ParseError => {}
    }
}

fn jetstream_error(err: &jetstream::Error) {
    let _code: usize = err.code();
    let _error_code: jetstream::ErrorCode = err.error_code();
    match err.kind() {
        jetstream::ErrorCode::STREAM_NOT_FOUND => {}
        jetstream::ErrorCode::CONSUMER_NOT_FOUND => {}
        jetstream::ErrorCode::STREAM_NAME_EXIST => {}
        jetstream::ErrorCode::STREAM_WRONG_LAST_SEQUENCE => {}
        jetstream::ErrorCode::STREAM_WRONG_LAST_MESSAGE_ID => {}
        jetstream::ErrorCode(10_000) => {}
        jetstream::ErrorCode(_) => {}
    }
    let _as_std: &dyn std::error::Error = err;
}

// ---------------------------------------------------------------------------------------------
// Streams
// ---------------------------------------------------------------------------------------------

#[allow(dead_code)]
async fn stream_management_shapes(js: jetstream::Context) -> Result<(), async_nats::Error> {
    let mut created: stream::Stream = js
        .create_stream(stream::Config {
            name: "EVENTS".to_string(),
            subjects: vec!["events.>".to_string()],
            max_messages: 10_000,
            storage: stream::StorageType::Memory,
            retention: stream::RetentionPolicy::WorkQueue,
            discard: stream::DiscardPolicy::New,
            max_age: Duration::from_secs(3600),
            ..Default::default()
        })
        .await?;
    let _from_str: stream::Stream = js.create_stream("PLAIN").await?;
    let config = stream::Config {
        name: "BYREF".into(),
        ..Default::default()
    };
    let _by_ref = js.create_stream(&config).await?;

    let _fetched: stream::Stream = js.get_stream("EVENTS").await?;
    let _fetched_string = js.get_stream(String::from("EVENTS")).await?;
    let no_info: stream::Stream<()> = js.get_stream_no_info("EVENTS").await?;
    let _info: stream::Info = no_info.get_info().await?;
    let _existing: stream::Stream = js.get_or_create_stream("EVENTS").await?;
    let _existing = js
        .get_or_create_stream(stream::Config {
            name: "OTHER".into(),
            subjects: vec!["other.*".into()],
            ..Default::default()
        })
        .await?;

    let mut updated_config = created.cached_info().config.clone();
    updated_config.max_messages = 20_000;
    let updated: stream::Info = js.update_stream(&updated_config).await?;
    let _updated_by_value: stream::Info = js.update_stream(updated.config).await?;
    let _upserted: stream::Info = js.create_or_update_stream(updated_config).await?;

    let deleted: stream::DeleteStatus = js.delete_stream("OTHER").await?;
    let _success: bool = deleted.success;

    let names: Vec<String> = js.stream_names().try_collect().await?;
    println!("{names:?}");
    let mut names = js.stream_names();
    while let Some(name) = names.next().await {
        let name: String = name?;
        println!("{name}");
    }
    let _filtered: jetstream::context::StreamNames = js.stream_names();
    let mut streams: jetstream::context::Streams = js.streams();
    while let Some(info) = streams.try_next().await? {
        let info: stream::Info = info;
        println!("{}", info.config.name);
    }
    let all: Vec<stream::Info> = js.streams().try_collect().await?;
    println!("{}", all.len());

    let owner: String = js.stream_by_subject("events.a").await?;
    println!("{owner}");

    // Error handling on management calls.
    match js.create_stream("bad.name").await {
        Ok(_) => {}
        Err(err) => create_stream_error(&err),
    }
    if let Err(err) = js.update_stream(&config).await {
        update_stream_error(&err);
    }
    if let Err(err) = js.get_stream("missing").await {
        get_stream_error(&err);
    }
    if let Err(err) = js.delete_stream("missing").await {
        delete_stream_error(&err);
    }
    if let Err(err) = js.stream_by_subject("nothing").await {
        stream_by_subject_error(&err);
    }
    if let Some(Err(err)) = js.stream_names().next().await {
        streams_error(&err);
    }
    if let Some(Err(err)) = js.streams().next().await {
        streams_error(&err);
    }

    // Info and state.
    let info: &stream::Info = created.info().await?;
    let config: &stream::Config = &info.config;
    let created_at: OffsetDateTime = info.created;
    let state: &stream::State = &info.state;
    let cluster: &Option<stream::ClusterInfo> = &info.cluster;
    let mirror: &Option<stream::SourceInfo> = &info.mirror;
    let sources: &Vec<stream::SourceInfo> = &info.sources;
    println!(
        "{} {created_at} {cluster:?} {mirror:?} {}",
        config.name,
        sources.len()
    );
    let messages: u64 = state.messages;
    let bytes: u64 = state.bytes;
    let first_sequence: u64 = state.first_sequence;
    let first_timestamp: OffsetDateTime = state.first_timestamp;
    let last_sequence: u64 = state.last_sequence;
    let last_timestamp: OffsetDateTime = state.last_timestamp;
    let consumer_count: usize = state.consumer_count;
    let subjects_count: u64 = state.subjects_count;
    let deleted_count: Option<u64> = state.deleted_count;
    let deleted: &Option<Vec<u64>> = &state.deleted;
    println!(
        "{messages} {bytes} {first_sequence} {first_timestamp} {last_sequence} {last_timestamp} \
         {consumer_count} {subjects_count} {deleted_count:?} {deleted:?}"
    );
    if let Some(cluster) = &info.cluster {
        let name: &Option<String> = &cluster.name;
        let raft_group: &Option<String> = &cluster.raft_group;
        let leader: &Option<String> = &cluster.leader;
        let leader_since: Option<OffsetDateTime> = cluster.leader_since;
        let system_account: bool = cluster.system_account;
        let traffic_account: &Option<String> = &cluster.traffic_account;
        println!(
            "{name:?} {raft_group:?} {leader:?} {leader_since:?} {system_account} {traffic_account:?}"
        );
        for peer in &cluster.replicas {
            let peer: &stream::PeerInfo = peer;
            let active: Duration = peer.active;
            let lag: Option<u64> = peer.lag;
            println!(
                "{} {} {active:?} {} {lag:?}",
                peer.name, peer.current, peer.offline
            );
        }
    }
    for source in &info.sources {
        let lag: u64 = source.lag;
        let active: Option<Duration> = source.active;
        let filter_subject: &Option<String> = &source.filter_subject;
        let dest: &Option<String> = &source.subject_transform_dest;
        let transforms: &Vec<stream::SubjectTransform> = &source.subject_transforms;
        println!(
            "{} {lag} {active:?} {filter_subject:?} {dest:?} {}",
            source.name,
            transforms.len()
        );
    }
    let cached: &stream::Info = created.cached_info();
    println!("{}", cached.state.messages);
    let fresh: stream::Info = created.get_info().await?;
    println!("{}", fresh.state.messages);
    if let Err(err) = created.get_info().await {
        info_error(&err);
    }

    let mut with_subjects: stream::InfoWithSubjects =
        created.info_with_subjects("events.>").await?;
    while let Some(entry) = with_subjects.next().await {
        let (subject, count): (String, usize) = entry?;
        println!("{subject} {count}");
    }
    let _info_with_deleted = created
        .info_builder()
        .with_deleted(true)
        .subjects("events.*")
        .fetch()
        .await?;

    // Purging.
    let purged: stream::PurgeResponse = created.purge().await?;
    let _success: bool = purged.success;
    let _count: u64 = purged.purged;
    created.purge().filter("events.a").keep(5).await?;
    created
        .purge()
        .filter(String::from("events.b"))
        .sequence(42)
        .await?;
    created.purge().keep(100).await?;
    created.purge().sequence(7).await?;
    match created.purge().filter("events.c").await {
        Ok(response) => println!("{}", response.purged),
        Err(err) => purge_error(&err),
    }

    // Fetching and deleting messages.
    let raw: jetstream::message::StreamMessage = created.get_raw_message(1).await?;
    read_stream_message(&raw);
    let last: jetstream::message::StreamMessage =
        created.get_last_raw_message_by_subject("events.a").await?;
    read_stream_message(&last);
    let _first = created
        .get_first_raw_message_by_subject("events.a", 1)
        .await?;
    let _next = created.get_next_raw_message_by_subject("events.a").await?;
    let _built: jetstream::message::StreamMessage =
        created.raw_message_builder().sequence(3).send().await?;
    let _built_last = created
        .raw_message_builder()
        .last_by_subject("events.a")
        .send()
        .await?;
    match created.get_last_raw_message_by_subject("events.none").await {
        Ok(_) => {}
        Err(err) => last_raw_message_error(&err),
    }
    if let Err(err) = created.get_raw_message(999).await {
        raw_message_error(&err);
    }

    let direct: jetstream::message::StreamMessage = created.direct_get(1).await?;
    read_stream_message(&direct);
    let _direct_last = created.direct_get_last_for_subject("events.a").await?;
    let _direct_first = created.direct_get_first_for_subject("events.a").await?;
    let _direct_next = created
        .direct_get_next_for_subject("events.a", Some(2))
        .await?;
    let _direct_next_none = created
        .direct_get_next_for_subject(String::from("events.a"), None)
        .await?;
    let _direct_builder: jetstream::message::StreamMessage = created
        .direct_get_builder()
        .next_by_subject("events.a")
        .send()
        .await?;
    if let Err(err) = created.direct_get(1000).await {
        direct_get_error(&err);
    }

    let removed: bool = created.delete_message(1).await?;
    println!("{removed}");
    if let Err(err) = created.delete_message(2).await {
        delete_message_error(&err);
    }
    Ok(())
}

fn read_stream_message(message: &jetstream::message::StreamMessage) {
    let subject: &async_nats::Subject = &message.subject;
    let sequence: u64 = message.sequence;
    let headers: &async_nats::HeaderMap = &message.headers;
    let payload: &Bytes = &message.payload;
    let time: OffsetDateTime = message.time;
    println!(
        "{subject} {sequence} {} {} {time}",
        headers.len(),
        payload.len()
    );
}

// ---------------------------------------------------------------------------------------------
// Consumers: management
// ---------------------------------------------------------------------------------------------

#[allow(dead_code)]
async fn consumer_management_shapes(js: jetstream::Context) -> Result<(), async_nats::Error> {
    let stream = js.get_stream("EVENTS").await?;

    let pull: consumer::PullConsumer = stream
        .create_consumer(consumer::pull::Config {
            durable_name: Some("worker".to_string()),
            ack_policy: consumer::AckPolicy::Explicit,
            deliver_policy: consumer::DeliverPolicy::All,
            filter_subject: "events.a".to_string(),
            ..Default::default()
        })
        .await?;
    let _typed: consumer::Consumer<consumer::pull::Config> = pull;

    let got: consumer::PullConsumer = stream.get_consumer("worker").await?;
    let _turbofish = stream
        .get_consumer::<consumer::pull::Config>("worker")
        .await?;
    let _or_create: consumer::PullConsumer = stream
        .get_or_create_consumer(
            "worker",
            consumer::pull::Config {
                durable_name: Some("worker".into()),
                ..Default::default()
            },
        )
        .await?;
    let _generic: consumer::Consumer<consumer::Config> = stream
        .create_consumer(consumer::Config {
            durable_name: Some("generic".into()),
            ..Default::default()
        })
        .await?;
    let _generic_from_str = stream
        .create_consumer(consumer::Config::from("named"))
        .await?;

    let updated: consumer::PullConsumer = stream
        .update_consumer(consumer::pull::Config {
            durable_name: Some("worker".into()),
            max_deliver: 5,
            ..Default::default()
        })
        .await?;
    let _strict: consumer::PullConsumer = stream
        .create_consumer_strict(consumer::pull::Config {
            name: Some("strict".into()),
            ..Default::default()
        })
        .await?;
    match stream
        .create_consumer_strict(consumer::pull::Config::default())
        .await
    {
        Ok(_) => {}
        Err(err) => consumer_create_strict_error(&err),
    }
    if let Err(err) = stream
        .update_consumer(consumer::pull::Config::default())
        .await
    {
        consumer_update_error(&err);
    }

    let info: consumer::Info = stream.consumer_info("worker").await?;
    read_consumer_info(&info);
    if let Err(err) = stream.consumer_info("missing").await {
        consumer_info_error(&err);
    }

    let deleted: stream::DeleteStatus = stream.delete_consumer("worker").await?;
    println!("{}", deleted.success);
    if let Err(err) = stream.delete_consumer("missing").await {
        consumer_error(&err);
    }

    let paused: stream::PauseResponse = stream
        .pause_consumer(
            "worker",
            OffsetDateTime::now_utc() + Duration::from_secs(60),
        )
        .await?;
    let _paused: bool = paused.paused;
    let _until: OffsetDateTime = paused.pause_until;
    let _remaining: Option<Duration> = paused.pause_remaining;
    let _resumed: stream::PauseResponse = stream.resume_consumer("worker").await?;
    stream.unpin_consumer("worker", "group").await?;
    let reset: stream::ConsumerResetResponse = stream.reset_consumer("worker", Some(10)).await?;
    let _reset_seq: u64 = reset.reset_seq;
    let _reset_info: consumer::Info = reset.info;
    if let Err(err) = stream.reset_consumer("worker", None).await {
        consumer_reset_error(&err);
    }

    let names: Vec<String> = stream.consumer_names().try_collect().await?;
    println!("{names:?}");
    let mut names: stream::ConsumerNames = stream.consumer_names();
    while let Some(name) = names.next().await {
        println!("{}", name?);
    }
    let mut consumers: stream::Consumers = stream.consumers();
    while let Some(info) = consumers.next().await {
        match info {
            Ok(info) => read_consumer_info(&info),
            Err(err) => consumers_error(&err),
        }
    }

    // Consumers through the context.
    let from_stream: consumer::PullConsumer =
        js.get_consumer_from_stream("worker", "EVENTS").await?;
    let _typed = js
        .get_consumer_from_stream::<consumer::pull::Config, _, _>("worker", "EVENTS")
        .await?;
    let _on_stream: consumer::PullConsumer = js
        .create_consumer_on_stream(
            consumer::pull::Config {
                durable_name: Some("ctx".into()),
                ..Default::default()
            },
            "EVENTS",
        )
        .await?;
    let _updated_on_stream: consumer::PullConsumer = js
        .update_consumer_on_stream(
            consumer::pull::Config {
                durable_name: Some("ctx".into()),
                ..Default::default()
            },
            "EVENTS",
        )
        .await?;
    let _strict_on_stream: consumer::PushConsumer = js
        .create_consumer_strict_on_stream(
            consumer::push::Config {
                deliver_subject: "deliver.ctx".into(),
                durable_name: Some("ctx_push".into()),
                ..Default::default()
            },
            "EVENTS",
        )
        .await?;
    let _deleted: stream::DeleteStatus = js.delete_consumer_from_stream("ctx", "EVENTS").await?;
    match js
        .get_consumer_from_stream::<consumer::pull::Config, _, _>("x", "EVENTS")
        .await
    {
        Ok(_) => {}
        Err(err) => consumer_error(&err),
    }

    // Consumer info on the handle.
    let mut handle = got;
    let info: &consumer::Info = handle.info().await?;
    read_consumer_info(info);
    let cached: &consumer::Info = handle.cached_info();
    println!("{}", cached.name);
    let owned: consumer::Info = updated.get_info().await?;
    println!("{}", owned.stream_name);
    if let Err(err) = from_stream.get_info().await {
        consumer_info_error(&err);
    }
    let _reset: stream::ConsumerResetResponse = handle.reset(None).await?;
    Ok(())
}

fn read_consumer_info(info: &consumer::Info) {
    let stream_name: &String = &info.stream_name;
    let name: &String = &info.name;
    let created: OffsetDateTime = info.created;
    let config: &consumer::Config = &info.config;
    let delivered: consumer::SequenceInfo = info.delivered;
    let ack_floor: consumer::SequenceInfo = info.ack_floor;
    let num_ack_pending: usize = info.num_ack_pending;
    let num_redelivered: usize = info.num_redelivered;
    let num_waiting: usize = info.num_waiting;
    let num_pending: u64 = info.num_pending;
    let cluster: &Option<stream::ClusterInfo> = &info.cluster;
    let push_bound: bool = info.push_bound;
    let paused: bool = info.paused;
    let pause_remaining: Option<Duration> = info.pause_remaining;
    let priority_groups: &Vec<consumer::PriorityGroupState> = &info.priority_groups;
    println!(
        "{stream_name} {name} {created} {:?} {num_ack_pending} {num_redelivered} {num_waiting} \
         {num_pending} {cluster:?} {push_bound} {paused} {pause_remaining:?}",
        config.durable_name
    );
    let consumer_sequence: u64 = delivered.consumer_sequence;
    let stream_sequence: u64 = delivered.stream_sequence;
    let last_active: Option<OffsetDateTime> = ack_floor.last_active;
    println!("{consumer_sequence} {stream_sequence} {last_active:?}");
    for group in priority_groups {
        let group_name: &String = &group.group;
        let pinned: &Option<String> = &group.pinned_client_id;
        let pinned_ts: Option<OffsetDateTime> = group.pinned_ts;
        println!("{group_name} {pinned:?} {pinned_ts:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// Pull consumers: consuming
// ---------------------------------------------------------------------------------------------

#[allow(dead_code)]
async fn pull_consuming_shapes(consumer: consumer::PullConsumer) -> Result<(), async_nats::Error> {
    let mut messages: consumer::pull::Stream = consumer.messages().await?;
    while let Some(message) = messages.next().await {
        let message: jetstream::Message = message?;
        message.ack().await?;
    }

    let mut fetched: consumer::pull::Batch = consumer.fetch().max_messages(10).messages().await?;
    while let Some(message) = fetched.next().await {
        let message = message?;
        handle_message(message).await?;
    }
    let _fetch_all = consumer
        .fetch()
        .max_messages(100)
        .max_bytes(1024 * 1024)
        .expires(Duration::from_secs(1))
        .heartbeat(Duration::from_millis(200))
        .min_pending(10)
        .min_ack_pending(5)
        .group("workers")
        .priority(1)
        .messages()
        .await?;

    let mut batch = consumer
        .batch()
        .max_messages(50)
        .expires(Duration::from_secs(2))
        .messages()
        .await?;
    while let Some(message) = batch.try_next().await? {
        message.ack().await?;
    }
    let _batch_all: consumer::pull::Batch = consumer
        .batch()
        .max_bytes(4096)
        .heartbeat(Duration::from_millis(500))
        .min_pending(1)
        .min_ack_pending(1)
        .group("workers")
        .messages()
        .await?;
    match consumer.fetch().messages().await {
        Ok(_) => {}
        Err(err) => batch_error(&err),
    }
    if let Err(err) = consumer.batch().messages().await {
        batch_error(&err);
    }

    let mut streamed = consumer
        .stream()
        .max_messages_per_batch(100)
        .heartbeat(Duration::from_secs(5))
        .messages()
        .await?;
    while let Some(message) = streamed.next().await {
        match message {
            Ok(message) => message.ack().await?,
            Err(err) => pull_messages_error(&err),
        }
    }
    let _streamed_all: consumer::pull::Stream = consumer
        .stream()
        .max_bytes_per_batch(1024)
        .expires(Duration::from_secs(30))
        .min_pending(2)
        .min_ack_pending(2)
        .group("workers")
        .priority(0)
        .messages()
        .await?;
    let _builder: consumer::pull::StreamBuilder<'_> = consumer.stream();
    let _fetch_builder: consumer::pull::FetchBuilder<'_> = consumer.fetch();
    let _batch_builder: consumer::pull::BatchBuilder<'_> = consumer.batch();
    if let Err(err) = consumer.messages().await {
        consumer_stream_error(&err);
    }

    let mut sequence: consumer::pull::Sequence = consumer.sequence(10)?;
    if let Some(batch) = sequence.next().await {
        let mut batch: consumer::pull::Batch = batch?;
        while let Some(message) = batch.next().await {
            message?.ack().await?;
        }
    }

    let inbox = async_nats::Subject::from("_INBOX.manual");
    consumer
        .request_batch(
            consumer::pull::BatchConfig {
                batch: 10,
                expires: Some(Duration::from_secs(1)),
                no_wait: false,
                max_bytes: 0,
                idle_heartbeat: Duration::ZERO,
                min_pending: None,
                min_ack_pending: None,
                group: None,
                priority: None,
            },
            inbox,
        )
        .await
        .inspect_err(batch_request_error)?;
    Ok(())
}

async fn handle_message(message: jetstream::Message) -> Result<(), async_nats::Error> {
    let info: jetstream::message::Info<'_> = message.info()?;
    let domain: Option<&str> = info.domain;
    let acc_hash: Option<&str> = info.acc_hash;
    let stream: &str = info.stream;
    let consumer_name: &str = info.consumer;
    let stream_sequence: u64 = info.stream_sequence;
    let consumer_sequence: u64 = info.consumer_sequence;
    let delivered: i64 = info.delivered;
    let pending: u64 = info.pending;
    let published: OffsetDateTime = info.published;
    let token: Option<&str> = info.token;
    println!(
        "{domain:?} {acc_hash:?} {stream} {consumer_name} {stream_sequence} {consumer_sequence} \
         {delivered} {pending} {published} {token:?}"
    );

    // Deref to the Core NATS message.
    let subject: &async_nats::Subject = &message.subject;
    let payload: &Bytes = &message.payload;
    let reply: &Option<async_nats::Subject> = &message.reply;
    let headers: &Option<async_nats::HeaderMap> = &message.headers;
    println!("{subject} {} {reply:?} {headers:?}", payload.len());
    let inner: &async_nats::Message = &message.message;
    let _context: &jetstream::Context = &message.context;
    println!("{}", inner.subject);

    message
        .ack_with(jetstream::AckKind::Nak(Some(Duration::from_secs(1))))
        .await?;
    message.ack_with(jetstream::AckKind::Nak(None)).await?;
    message.ack_with(jetstream::AckKind::Progress).await?;
    message.ack_with(jetstream::AckKind::Term).await?;
    message.ack_with(jetstream::AckKind::Next).await?;
    message.ack_with(jetstream::message::AckKind::Ack).await?;
    message.double_ack().await?;
    message.double_ack_with(jetstream::AckKind::Term).await?;

    let (core, acker): (async_nats::Message, jetstream::message::Acker) = message.split();
    println!("{}", core.subject);
    acker.ack().await?;
    acker.ack_with(jetstream::AckKind::Progress).await?;
    acker.double_ack().await?;
    acker.double_ack_with(jetstream::AckKind::Ack).await?;
    Ok(())
}

#[allow(dead_code)]
async fn message_conversions(message: jetstream::Message) -> Result<(), async_nats::Error> {
    let core: async_nats::Message = message.clone().into();
    let stream_message: jetstream::message::StreamMessage =
        jetstream::message::StreamMessage::try_from(core)?;
    read_stream_message(&stream_message);
    let result: Result<(), async_nats::Error> = message.ack().await;
    result?;
    Ok(())
}

#[allow(dead_code)]
async fn ordered_pull_shapes(stream: stream::Stream) -> Result<(), async_nats::Error> {
    let consumer: consumer::OrderedPullConsumer = stream
        .create_consumer(consumer::pull::OrderedConfig {
            name: Some("ordered".into()),
            filter_subject: "events.>".into(),
            deliver_policy: consumer::DeliverPolicy::Last,
            replay_policy: consumer::ReplayPolicy::Instant,
            headers_only: false,
            ..Default::default()
        })
        .await?;
    let mut messages: consumer::pull::Ordered = consumer.messages().await?;
    while let Some(message) = messages.next().await {
        match message {
            Ok(message) => println!("{}", message.subject),
            Err(err) => pull_ordered_error(&err),
        }
    }
    let config = consumer::pull::OrderedConfig {
        name: None,
        description: Some("all fields".into()),
        filter_subject: String::new(),
        filter_subjects: vec!["a".into(), "b".into()],
        replay_policy: consumer::ReplayPolicy::Original,
        rate_limit: 0,
        sample_frequency: 0,
        headers_only: true,
        deliver_policy: consumer::DeliverPolicy::New,
        max_waiting: 0,
        metadata: HashMap::new(),
        max_batch: 0,
        max_bytes: 0,
        max_expires: Duration::ZERO,
    };
    let _ordered = stream.create_consumer(config).await?;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Push consumers
// ---------------------------------------------------------------------------------------------

#[allow(dead_code)]
async fn push_shapes(stream: stream::Stream) -> Result<(), async_nats::Error> {
    let consumer: consumer::PushConsumer = stream
        .create_consumer(consumer::push::Config {
            deliver_subject: "deliver.events".to_string(),
            durable_name: Some("pusher".into()),
            deliver_group: Some("group".into()),
            ack_policy: consumer::AckPolicy::Explicit,
            idle_heartbeat: Duration::from_secs(5),
            flow_control: true,
            ..Default::default()
        })
        .await?;
    let mut messages: consumer::push::Messages = consumer.messages().await?;
    while let Some(message) = messages.next().await {
        match message {
            Ok(message) => message.ack().await?,
            Err(err) => push_messages_error(&err),
        }
    }
    let _got: consumer::PushConsumer = stream.get_consumer("pusher").await?;
    let _typed = stream
        .get_consumer::<consumer::push::Config>("pusher")
        .await?;

    let ordered: consumer::OrderedPushConsumer = stream
        .create_consumer(consumer::push::OrderedConfig {
            deliver_subject: "deliver.ordered".into(),
            filter_subject: "events.>".into(),
            deliver_policy: consumer::DeliverPolicy::ByStartSequence { start_sequence: 10 },
            ..Default::default()
        })
        .await?;
    let mut ordered_messages: consumer::push::Ordered = ordered.messages().await?;
    while let Some(message) = ordered_messages.next().await {
        match message {
            Ok(message) => println!("{}", message.subject),
            Err(err) => push_ordered_error(&err),
        }
    }
    let _full = consumer::push::OrderedConfig {
        deliver_subject: "x".into(),
        name: Some("n".into()),
        description: None,
        filter_subject: String::new(),
        filter_subjects: Vec::new(),
        replay_policy: consumer::ReplayPolicy::Instant,
        rate_limit: 1,
        sample_frequency: 1,
        headers_only: false,
        deliver_policy: consumer::DeliverPolicy::All,
        max_waiting: 0,
        metadata: HashMap::new(),
    };
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Type paths users name
// ---------------------------------------------------------------------------------------------

#[allow(dead_code)]
struct Holder {
    pull: async_nats::jetstream::consumer::PullConsumer,
    push: async_nats::jetstream::consumer::PushConsumer,
    stream: async_nats::jetstream::stream::Stream,
    stream_no_info: async_nats::jetstream::stream::Stream<()>,
    message: async_nats::jetstream::Message,
    context: async_nats::jetstream::Context,
    error: async_nats::jetstream::Error,
    code: async_nats::jetstream::ErrorCode,
    ack_kind: async_nats::jetstream::AckKind,
    stream_config: async_nats::jetstream::stream::Config,
    consumer_config: async_nats::jetstream::consumer::Config,
    pull_config: async_nats::jetstream::consumer::pull::Config,
    push_config: async_nats::jetstream::consumer::push::Config,
    publish_ack: async_nats::jetstream::publish::PublishAck,
    response: async_nats::jetstream::response::Response<async_nats::jetstream::account::Account>,
}

fn generic_consumer<T: consumer::IntoConsumerConfig + consumer::FromConsumer>(config: T) -> T {
    let _generic: consumer::Config = config.into_consumer_config();
    T::try_from_consumer_config(_generic).unwrap()
}

// ---------------------------------------------------------------------------------------------
// Struct literals with every field
// ---------------------------------------------------------------------------------------------

fn full_stream_config() -> stream::Config {
    stream::Config {
        name: "FULL".to_string(),
        max_bytes: 1_000_000,
        max_messages: 1000,
        max_messages_per_subject: 10,
        discard: stream::DiscardPolicy::Old,
        discard_new_per_subject: false,
        subjects: vec!["full.>".to_string()],
        retention: stream::RetentionPolicy::Limits,
        max_consumers: 10,
        max_age: Duration::from_secs(60),
        max_message_size: 1024,
        storage: stream::StorageType::File,
        num_replicas: 1,
        no_ack: false,
        duplicate_window: Duration::from_secs(120),
        template_owner: String::new(),
        sealed: false,
        description: Some("every field".to_string()),
        allow_rollup: true,
        deny_delete: false,
        deny_purge: false,
        republish: Some(stream::Republish {
            source: "full.>".into(),
            destination: "copy.>".into(),
            headers_only: false,
        }),
        allow_direct: true,
        mirror_direct: false,
        mirror: None,
        sources: Some(vec![stream::Source {
            name: "UPSTREAM".into(),
            start_sequence: Some(1),
            start_time: Some(OffsetDateTime::UNIX_EPOCH),
            filter_subject: Some("up.>".into()),
            external: Some(stream::External {
                api_prefix: "$JS.up.API".into(),
                delivery_prefix: Some("deliver.up".into()),
            }),
            domain: None,
            subject_transforms: vec![stream::SubjectTransform {
                source: "up.>".into(),
                destination: "down.>".into(),
            }],
            consumer: Some(stream::StreamConsumerSource::new("src", "deliver.src")),
        }]),
        metadata: HashMap::from([("team".to_string(), "core".to_string())]),
        subject_transform: Some(stream::SubjectTransform {
            source: "full.>".into(),
            destination: "t.>".into(),
        }),
        compression: Some(stream::Compression::S2),
        consumer_limits: Some(stream::ConsumerLimits {
            inactive_threshold: Duration::from_secs(30),
            max_ack_pending: 100,
        }),
        first_sequence: Some(1),
        placement: Some(stream::Placement {
            cluster: Some("east".into()),
            tags: vec!["ssd".into()],
        }),
        persist_mode: Some(stream::PersistenceMode::Async),
        pause_until: None,
        allow_message_ttl: true,
        subject_delete_marker_ttl: Some(Duration::from_secs(5)),
        allow_atomic_publish: false,
        allow_message_schedules: false,
        allow_message_counter: false,
        allow_batch_publish: false,
    }
}

fn full_pull_config() -> consumer::pull::Config {
    consumer::pull::Config {
        durable_name: Some("durable".into()),
        name: Some("durable".into()),
        description: None,
        deliver_policy: consumer::DeliverPolicy::ByStartTime {
            start_time: OffsetDateTime::UNIX_EPOCH,
        },
        ack_policy: consumer::AckPolicy::All,
        ack_wait: Duration::from_secs(30),
        max_deliver: 3,
        filter_subject: String::new(),
        filter_subjects: vec!["a".into()],
        replay_policy: consumer::ReplayPolicy::Instant,
        rate_limit: 0,
        sample_frequency: 50,
        max_waiting: 512,
        max_ack_pending: 1000,
        headers_only: false,
        max_batch: 100,
        max_bytes: 0,
        max_expires: Duration::from_secs(10),
        inactive_threshold: Duration::from_secs(300),
        num_replicas: 1,
        memory_storage: true,
        metadata: HashMap::new(),
        backoff: vec![Duration::from_secs(1), Duration::from_secs(2)],
        priority_policy: consumer::PriorityPolicy::PinnedClient,
        priority_groups: vec!["workers".into()],
        priority_timeout: Duration::from_secs(1),
        pause_until: None,
    }
}

fn full_push_config() -> consumer::push::Config {
    consumer::push::Config {
        deliver_subject: "deliver".into(),
        durable_name: None,
        name: None,
        description: None,
        deliver_group: None,
        deliver_policy: consumer::DeliverPolicy::LastPerSubject,
        ack_policy: consumer::AckPolicy::None,
        ack_wait: Duration::ZERO,
        max_deliver: 0,
        filter_subject: "x".into(),
        filter_subjects: Vec::new(),
        replay_policy: consumer::ReplayPolicy::Original,
        rate_limit: 1000,
        sample_frequency: 0,
        max_waiting: 0,
        max_ack_pending: 0,
        headers_only: true,
        flow_control: true,
        idle_heartbeat: Duration::from_secs(5),
        num_replicas: 0,
        memory_storage: false,
        metadata: HashMap::new(),
        backoff: Vec::new(),
        inactive_threshold: Duration::ZERO,
        pause_until: Some(OffsetDateTime::UNIX_EPOCH),
    }
}

fn full_consumer_config() -> consumer::Config {
    consumer::Config {
        deliver_subject: Some("deliver".into()),
        durable_name: Some("d".into()),
        name: None,
        description: None,
        deliver_group: None,
        deliver_policy: consumer::DeliverPolicy::All,
        ack_policy: consumer::AckPolicy::FlowControl,
        ack_wait: Duration::ZERO,
        max_deliver: 0,
        filter_subject: String::new(),
        filter_subjects: Vec::new(),
        replay_policy: consumer::ReplayPolicy::Instant,
        rate_limit: 0,
        sample_frequency: 0,
        max_waiting: 0,
        max_ack_pending: 0,
        headers_only: false,
        flow_control: false,
        idle_heartbeat: Duration::ZERO,
        max_batch: 0,
        max_bytes: 0,
        max_expires: Duration::ZERO,
        inactive_threshold: Duration::ZERO,
        num_replicas: 0,
        memory_storage: false,
        metadata: HashMap::new(),
        backoff: Vec::new(),
        priority_policy: consumer::PriorityPolicy::Prioritized,
        priority_groups: Vec::new(),
        priority_timeout: Duration::ZERO,
        pause_until: None,
    }
}

// ---------------------------------------------------------------------------------------------
// Tests that need no server
// ---------------------------------------------------------------------------------------------

#[test]
fn compile_only_shapes_are_referenced() {
    // Referencing the server-needing functions keeps them type-checked without running them.
    let _ = context_shapes;
    let _ = deprecated_publish_alias;
    let _ = publish_error_handling;
    let _ = stream_management_shapes;
    let _ = consumer_management_shapes;
    let _ = pull_consuming_shapes;
    let _ = message_conversions;
    let _ = ordered_pull_shapes;
    let _ = push_shapes;
    let _ = handle_message;
    let _ = pull_recreate_error;
    let _ = push_recreate_error;
    let _ = stream_message_error;
    let _ = generic_consumer::<consumer::pull::Config>;
    let _ = full_push_config;
    let _ = full_consumer_config;
}

#[test]
fn datetime_is_the_type_of_jetstream_timestamps() {
    use async_nats::datetime::{self, DateTime};
    let at: DateTime = datetime::parse_rfc3339("2026-01-02T03:04:05Z").unwrap();
    let later: DateTime = datetime::add_std_duration(at, Duration::from_secs(60)).unwrap();
    let _config = consumer::pull::Config {
        pause_until: Some(later),
        ..Default::default()
    };
    let from_nanos: OffsetDateTime = datetime::from_nanos(1_767_323_045_000_000_000).unwrap();
    assert_eq!(from_nanos, at);
    assert!(datetime::now() > at);
}

#[test]
fn stream_config_defaults() {
    let config = stream::Config::default();
    assert_eq!(config.name, "");
    assert!(config.subjects.is_empty());
    assert_eq!(config.max_messages, 0);
    assert_eq!(config.max_bytes, 0);
    assert_eq!(config.max_age, Duration::ZERO);
    assert_eq!(config.num_replicas, 0);
    assert_eq!(config.storage, stream::StorageType::File);
    assert_eq!(config.retention, stream::RetentionPolicy::Limits);
    assert_eq!(config.discard, stream::DiscardPolicy::Old);
    assert_eq!(
        stream::PersistenceMode::default(),
        stream::PersistenceMode::Default
    );
    assert_eq!(config.mirror, None);
    assert_eq!(config.sources, None);
    assert!(config.metadata.is_empty());

    let from_str = stream::Config::from("NAMED");
    assert_eq!(from_str.name, "NAMED");
    let from_ref: stream::Config = (&from_str).into();
    assert_eq!(from_ref, from_str);
}

#[test]
fn stream_config_json_names() {
    let json = serde_json::to_value(full_stream_config()).unwrap();
    assert_eq!(json["name"], "FULL");
    assert_eq!(json["max_msgs"], 1000);
    assert_eq!(json["max_msgs_per_subject"], 10);
    assert_eq!(json["max_bytes"], 1_000_000);
    assert_eq!(json["max_msg_size"], 1024);
    assert_eq!(json["max_age"], 60_000_000_000u64);
    assert_eq!(json["duplicate_window"], 120_000_000_000u64);
    assert_eq!(json["storage"], "file");
    assert_eq!(json["retention"], "limits");
    assert_eq!(json["discard"], "old");
    assert_eq!(json["allow_rollup_hdrs"], true);
    assert_eq!(json["allow_direct"], true);
    assert_eq!(json["allow_msg_ttl"], true);
    assert_eq!(json["subject_delete_marker_ttl"], 5_000_000_000u64);
    assert_eq!(json["compression"], "s2");
    assert_eq!(json["first_seq"], 1);
    assert_eq!(json["persist_mode"], "async");
    assert_eq!(json["republish"]["src"], "full.>");
    assert_eq!(json["republish"]["dest"], "copy.>");
    assert_eq!(json["subject_transform"]["dest"], "t.>");
    assert_eq!(json["placement"]["cluster"], "east");
    assert_eq!(json["consumer_limits"]["max_ack_pending"], 100);
    let source = &json["sources"][0];
    assert_eq!(source["name"], "UPSTREAM");
    assert_eq!(source["opt_start_seq"], 1);
    assert_eq!(source["opt_start_time"], "1970-01-01T00:00:00Z");
    assert_eq!(source["external"]["api"], "$JS.up.API");
    assert_eq!(source["external"]["deliver"], "deliver.up");
    assert_eq!(source["subject_transforms"][0]["src"], "up.>");
    assert_eq!(source["consumer"]["name"], "src");
    assert_eq!(json["metadata"]["team"], "core");

    let memory = stream::Config {
        name: "M".into(),
        storage: stream::StorageType::Memory,
        retention: stream::RetentionPolicy::WorkQueue,
        discard: stream::DiscardPolicy::New,
        ..Default::default()
    };
    let json = serde_json::to_value(&memory).unwrap();
    assert_eq!(json["storage"], "memory");
    assert_eq!(json["retention"], "workqueue");
    assert_eq!(json["discard"], "new");
    assert_eq!(
        serde_json::to_value(stream::RetentionPolicy::Interest).unwrap(),
        "interest"
    );
    assert_eq!(
        serde_json::to_value(stream::Compression::None).unwrap(),
        "none"
    );

    let back: stream::Config =
        serde_json::from_value(serde_json::to_value(full_stream_config()).unwrap()).unwrap();
    assert_eq!(back, full_stream_config());
}

#[test]
fn consumer_config_defaults_and_json() {
    let pull = consumer::pull::Config::default();
    assert_eq!(pull.durable_name, None);
    assert_eq!(pull.ack_policy, consumer::AckPolicy::Explicit);
    assert_eq!(pull.deliver_policy, consumer::DeliverPolicy::All);
    assert_eq!(pull.replay_policy, consumer::ReplayPolicy::Instant);
    assert_eq!(pull.ack_wait, Duration::ZERO);
    assert_eq!(
        consumer::PriorityPolicy::default(),
        consumer::PriorityPolicy::None
    );

    let push = consumer::push::Config::default();
    assert_eq!(push.deliver_subject, "");
    assert_eq!(push.ack_policy, consumer::AckPolicy::Explicit);

    // The wire names are those of the generic config the typed one turns into.
    let json = serde_json::to_value(consumer::IntoConsumerConfig::into_consumer_config(
        full_pull_config(),
    ))
    .unwrap();
    assert_eq!(json["durable_name"], "durable");
    assert_eq!(json["deliver_policy"], "by_start_time");
    assert_eq!(json["opt_start_time"], "1970-01-01T00:00:00Z");
    assert_eq!(json["ack_policy"], "all");
    assert_eq!(json["ack_wait"], 30_000_000_000u64);
    assert_eq!(json["max_deliver"], 3);
    assert_eq!(json["sample_freq"], "50");
    assert_eq!(json["mem_storage"], true);
    assert_eq!(json["max_expires"], 10_000_000_000u64);
    assert_eq!(json["inactive_threshold"], 300_000_000_000u64);
    assert_eq!(json["backoff"][1], 2_000_000_000u64);
    assert_eq!(json["priority_policy"], "pinned_client");
    assert_eq!(json["priority_groups"][0], "workers");
    assert_eq!(json["filter_subjects"][0], "a");

    // The wire names are those of the generic config the typed one turns into.
    let json = serde_json::to_value(consumer::IntoConsumerConfig::into_consumer_config(
        full_push_config(),
    ))
    .unwrap();
    assert_eq!(json["deliver_subject"], "deliver");
    assert_eq!(json["deliver_policy"], "last_per_subject");
    assert_eq!(json["ack_policy"], "none");
    assert_eq!(json["replay_policy"], "original");
    assert_eq!(json["rate_limit_bps"], 1000);
    assert_eq!(json["flow_control"], true);
    assert_eq!(json["idle_heartbeat"], 5_000_000_000u64);
    assert_eq!(json["headers_only"], true);

    let by_seq = consumer::Config {
        deliver_policy: consumer::DeliverPolicy::ByStartSequence { start_sequence: 42 },
        ..Default::default()
    };
    let json = serde_json::to_value(&by_seq).unwrap();
    assert_eq!(json["deliver_policy"], "by_start_sequence");
    assert_eq!(json["opt_start_seq"], 42);
    let back: consumer::Config = serde_json::from_value(json).unwrap();
    assert_eq!(back, by_seq);

    assert_eq!(
        consumer::Config::from("durable").durable_name.as_deref(),
        Some("durable")
    );
    assert_eq!(
        serde_json::to_value(consumer::AckPolicy::FlowControl).unwrap(),
        "flow_control"
    );

    // Conversions between the generic and the typed configs.
    let generic: consumer::Config =
        consumer::IntoConsumerConfig::into_consumer_config(full_pull_config());
    assert_eq!(generic.durable_name.as_deref(), Some("durable"));
    let pull_again: consumer::pull::Config =
        consumer::FromConsumer::try_from_consumer_config(generic).unwrap();
    assert_eq!(pull_again, full_pull_config());
    let pushy = consumer::Config {
        deliver_subject: Some("d".into()),
        ..Default::default()
    };
    assert!(
        <consumer::pull::Config as consumer::FromConsumer>::try_from_consumer_config(pushy)
            .is_err()
    );

    let ordered = consumer::pull::OrderedConfig::default();
    assert_eq!(ordered.name, None);
    let ordered_push = consumer::push::OrderedConfig::default();
    assert_eq!(ordered_push.deliver_subject, "");

    let batch = consumer::pull::BatchConfig::default();
    assert_eq!(batch.batch, 0);
    assert_eq!(batch.expires, None);
}

#[test]
fn error_codes_and_jetstream_error() {
    assert_eq!(
        jetstream::ErrorCode::STREAM_NOT_FOUND,
        jetstream::ErrorCode(10059)
    );
    assert_eq!(
        jetstream::ErrorCode::CONSUMER_NOT_FOUND,
        jetstream::ErrorCode(10014)
    );
    assert_eq!(
        jetstream::ErrorCode::STREAM_NAME_EXIST,
        jetstream::ErrorCode(10058)
    );
    assert_eq!(jetstream::ErrorCode::STREAM_WRONG_LAST_SEQUENCE.0, 10071);
    assert_eq!(jetstream::ErrorCode::STREAM_WRONG_LAST_MESSAGE_ID.0, 10070);
    assert_eq!(jetstream::ErrorCode::JETSTREAM_NOT_ENABLED.0, 10076);
    assert_eq!(jetstream::ErrorCode::default(), jetstream::ErrorCode(0));

    let err: jetstream::Error = serde_json::from_value(serde_json::json!({
        "code": 404,
        "err_code": 10059,
        "description": "stream not found",
    }))
    .unwrap();
    assert_eq!(err.code(), 404);
    assert_eq!(err.error_code(), jetstream::ErrorCode::STREAM_NOT_FOUND);
    assert_eq!(err.kind(), jetstream::ErrorCode::STREAM_NOT_FOUND);
    assert!(err.to_string().contains("stream not found"));
    jetstream_error(&err);

    let response: jetstream::response::Response<jetstream::account::Account> =
        serde_json::from_value(serde_json::json!({
            "type": "io.nats.jetstream.api.v1.account_info_response",
            "error": { "code": 503, "err_code": 10039, "description": "not enabled" }
        }))
        .unwrap();
    match response {
        jetstream::response::Response::Err { error } => {
            assert_eq!(
                error.kind(),
                jetstream::ErrorCode::JETSTREAM_NOT_ENABLED_FOR_ACCOUNT
            )
        }
        jetstream::response::Response::Ok(_) => panic!("expected an error response"),
    }

    // The typed error wrappers are built and inspected the way async-nats users do.
    let publish: jetstream::context::PublishError =
        async_nats::error::Error::new(jetstream::context::PublishErrorKind::TimedOut);
    assert_eq!(
        publish.kind(),
        jetstream::context::PublishErrorKind::TimedOut
    );
    publish_error(&publish);
    let create: jetstream::context::CreateStreamError =
        jetstream::context::CreateStreamErrorKind::JetStream(err.clone()).into();
    create_stream_error(&create);
    let consumer_err = stream::ConsumerError::with_source(stream::ConsumerErrorKind::Other, "boom");
    assert!(std::error::Error::source(&consumer_err).is_some());
    consumer_error(&consumer_err);
    get_stream_error(&jetstream::context::GetStreamError::new(
        jetstream::context::GetStreamErrorKind::EmptyName,
    ));
    batch_error(&consumer::pull::BatchError::new(
        consumer::pull::BatchErrorKind::Flush,
    ));
    pull_messages_error(&consumer::pull::MessagesError::new(
        consumer::pull::MessagesErrorKind::MissingHeartbeat,
    ));
}

#[test]
fn info_and_account_json() {
    let info: stream::Info = serde_json::from_value(serde_json::json!({
        "config": {
            "name": "EVENTS",
            "subjects": ["events.>"],
            "retention": "workqueue",
            "max_consumers": -1,
            "max_msgs": -1,
            "max_bytes": -1,
            "max_age": 0,
            "max_msgs_per_subject": -1,
            "max_msg_size": -1,
            "discard": "new",
            "storage": "memory",
            "num_replicas": 1,
            "duplicate_window": 120000000000u64
        },
        "created": "2024-01-02T03:04:05.123456789Z",
        "state": {
            "messages": 3,
            "bytes": 120,
            "first_seq": 1,
            "first_ts": "2024-01-02T03:04:06Z",
            "last_seq": 3,
            "last_ts": "2024-01-02T03:04:07Z",
            "num_subjects": 2,
            "consumer_count": 1
        },
        "cluster": { "leader": "n1" }
    }))
    .unwrap();
    assert_eq!(info.config.name, "EVENTS");
    assert_eq!(info.config.retention, stream::RetentionPolicy::WorkQueue);
    assert_eq!(info.config.storage, stream::StorageType::Memory);
    assert_eq!(info.config.duplicate_window, Duration::from_secs(120));
    assert_eq!(info.created.year(), 2024);
    assert_eq!(info.created.nanosecond(), 123_456_789);
    assert_eq!(info.state.messages, 3);
    assert_eq!(info.state.first_sequence, 1);
    assert_eq!(info.state.last_sequence, 3);
    assert_eq!(info.state.subjects_count, 2);
    assert_eq!(info.state.consumer_count, 1);
    assert_eq!(info.state.last_timestamp.second(), 7);
    assert_eq!(
        info.cluster.as_ref().and_then(|c| c.leader.as_deref()),
        Some("n1")
    );

    let account: jetstream::account::Account = serde_json::from_value(serde_json::json!({
        "memory": 10,
        "storage": 20,
        "reserved_memory": 0,
        "reserved_storage": 0,
        "streams": 2,
        "consumers": 3,
        "domain": "hub",
        "limits": {
            "max_memory": -1,
            "max_storage": 1024,
            "max_streams": -1,
            "max_consumers": -1,
            "max_bytes_required": false,
            "max_ack_pending": -1,
            "memory_max_stream_bytes": -1,
            "storage_max_stream_bytes": -1
        },
        "api": { "total": 7, "errors": 1 }
    }))
    .unwrap();
    assert_eq!(account.streams, 2);
    assert_eq!(account.domain.as_deref(), Some("hub"));
    assert_eq!(account.limits.max_memory, None);
    assert_eq!(account.limits.max_storage, Some(1024));
    assert_eq!(account.requests.total, 7);
    assert_eq!(account.requests.errors, 1);
    assert!(account.tiers.is_empty());

    let ack: jetstream::publish::PublishAck = serde_json::from_value(serde_json::json!({
        "stream": "EVENTS", "seq": 9, "duplicate": true
    }))
    .unwrap();
    assert_eq!(ack.stream, "EVENTS");
    assert_eq!(ack.sequence, 9);
    assert!(ack.duplicate);
    assert_eq!(ack.domain, "");

    let consumer_info: consumer::Info = serde_json::from_value(serde_json::json!({
        "stream_name": "EVENTS",
        "name": "worker",
        "created": "2024-01-02T03:04:05Z",
        "config": { "durable_name": "worker", "deliver_policy": "all", "ack_policy": "explicit" },
        "delivered": { "consumer_seq": 4, "stream_seq": 6, "last_active": "2024-01-02T03:04:09Z" },
        "ack_floor": { "consumer_seq": 3, "stream_seq": 5 },
        "num_ack_pending": 1,
        "num_redelivered": 0,
        "num_waiting": 2,
        "num_pending": 10
    }))
    .unwrap();
    assert_eq!(consumer_info.name, "worker");
    assert_eq!(consumer_info.delivered.stream_sequence, 6);
    assert_eq!(consumer_info.delivered.consumer_sequence, 4);
    assert!(consumer_info.delivered.last_active.is_some());
    assert_eq!(consumer_info.ack_floor.last_active, None);
    assert_eq!(consumer_info.num_pending, 10);
    assert_eq!(
        consumer_info.config.ack_policy,
        consumer::AckPolicy::Explicit
    );
    read_consumer_info(&consumer_info);
}

#[test]
fn stream_message_from_core_message() {
    let mut headers = async_nats::HeaderMap::new();
    headers.insert(async_nats::header::NATS_SEQUENCE, "17");
    headers.insert(
        async_nats::header::NATS_TIME_STAMP,
        "2024-05-06T07:08:09.5Z",
    );
    headers.insert(async_nats::header::NATS_SUBJECT, "events.a");
    headers.insert(async_nats::header::NATS_STREAM, "EVENTS");
    let core = async_nats::Message {
        subject: "$JS.API.DIRECT.GET.EVENTS".into(),
        reply: None,
        payload: Bytes::from_static(b"hello"),
        headers: Some(headers),
        status: None,
        description: None,
        length: 5,
    };
    let message = jetstream::message::StreamMessage::try_from(core).unwrap();
    assert_eq!(message.sequence, 17);
    assert_eq!(message.subject.as_str(), "events.a");
    assert_eq!(message.payload, Bytes::from_static(b"hello"));
    assert_eq!(message.time.millisecond(), 500);
    read_stream_message(&message);

    let bare = async_nats::Message {
        subject: "x".into(),
        reply: None,
        payload: Bytes::new(),
        headers: None,
        status: None,
        description: None,
        length: 0,
    };
    let err = jetstream::message::StreamMessage::try_from(bare).unwrap_err();
    assert_eq!(
        err.kind(),
        jetstream::message::StreamMessageErrorKind::MissingHeader
    );

    let raw = stream::RawMessage {
        subject: "events.b".into(),
        sequence: 3,
        payload: "aGk=".into(),
        headers: None,
        time: OffsetDateTime::UNIX_EPOCH,
    };
    let converted = jetstream::message::StreamMessage::try_from(raw).unwrap();
    assert_eq!(converted.payload, Bytes::from_static(b"hi"));
    assert_eq!(converted.sequence, 3);
}

#[test]
fn ack_kinds() {
    let kinds = [
        jetstream::AckKind::Ack,
        jetstream::AckKind::Nak(None),
        jetstream::AckKind::Nak(Some(Duration::from_secs(1))),
        jetstream::AckKind::Progress,
        jetstream::AckKind::Next,
        jetstream::AckKind::Term,
    ];
    let bodies: Vec<Bytes> = kinds.iter().map(|kind| Bytes::from(*kind)).collect();
    assert_eq!(bodies[0], Bytes::from_static(b"+ACK"));
    assert_eq!(bodies[1], Bytes::from_static(b"-NAK"));
    assert_eq!(bodies[3], Bytes::from_static(b"+WPI"));
    assert_eq!(bodies[4], Bytes::from_static(b"+NXT"));
    assert_eq!(bodies[5], Bytes::from_static(b"+TERM"));
    assert_eq!(
        bodies[2],
        Bytes::from_static(b"-NAK {\"delay\":1000000000}")
    );
}
