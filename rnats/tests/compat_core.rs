#![allow(missing_docs, clippy::unwrap_used)]
use rnats as async_nats;

// Compile-level compatibility with async-nats 0.51's Core NATS API.
//
// Everything below is written the way a program using async-nats would be written, with only
// the crate renamed. The `async fn`s that need a server are compiled, never run; the `#[test]`s
// check behaviour that needs no server.

use std::error::Error as _;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use async_nats::connection::State;
use async_nats::header::{
    HeaderMap, HeaderName, HeaderValue, IntoHeaderName, IntoHeaderValue, NATS_EXPECTED_STREAM,
    NATS_MESSAGE_ID,
};
use async_nats::message::OutboundMessage;
use async_nats::status::StatusCode;
use async_nats::subject::Subject;
use async_nats::{ConnectOptions, ServerAddr, ToServerAddrs};
use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};

// ---------------------------------------------------------------------------------------------
// Connecting
// ---------------------------------------------------------------------------------------------

#[allow(dead_code)]
async fn connect_shapes() -> Result<(), async_nats::Error> {
    let _client = async_nats::connect("nats://127.0.0.1:4222").await?;
    let _client = async_nats::connect("localhost").await?;
    let _client = async_nats::connect(String::from("nats://127.0.0.1:4222")).await?;
    let url = String::from("127.0.0.1:4222");
    let _client = async_nats::connect(&url).await?;
    let _client = async_nats::connect(vec!["nats://a:4222", "nats://b:4222"]).await?;
    let _client = async_nats::connect(vec![String::from("a"), String::from("b")]).await?;
    let _client = async_nats::connect(["nats://a:4222", "nats://b:4222"].as_slice()).await?;
    let _client = async_nats::connect(&["nats://a:4222", "nats://b:4222"][..]).await?;
    // An array by value, `connect(["a", "b"])`, is not a shape async-nats 0.51 accepts either
    // (it implements `ToServerAddrs` for `[T]`, `Vec<T>` and `&T`, not `[T; N]`), so the slice
    // forms above are the ones users write.
    let _client = async_nats::connect("nats://127.0.0.1:4222".parse::<ServerAddr>()?).await?;
    let _client = async_nats::connect(vec![
        "nats://a:4222".parse::<ServerAddr>()?,
        "nats://b:4222".parse::<ServerAddr>()?,
    ])
    .await?;
    let servers = ["a:4222", "b:4222"];
    let addrs = servers
        .iter()
        .map(|url| url.parse())
        .collect::<Result<Vec<ServerAddr>, _>>()?;
    let _client = async_nats::connect(addrs.as_slice()).await?;
    let _client = async_nats::connect(&addrs[..]).await?;
    let _client = async_nats::connect(addrs.clone()).await?;
    let _client = async_nats::connect(&addrs).await?;

    let _client =
        async_nats::connect_with_options("nats://127.0.0.1:4222", ConnectOptions::new()).await?;
    let _client =
        async_nats::connect_with_options(addrs.clone(), ConnectOptions::default()).await?;
    let _client = ConnectOptions::new()
        .name("compat")
        .connect("nats://127.0.0.1:4222")
        .await?;
    Ok(())
}

/// User code generic over anything `connect` accepts.
#[allow(dead_code)]
async fn connect_named<A: ToServerAddrs>(
    addrs: A,
    name: &str,
) -> Result<async_nats::Client, async_nats::ConnectError> {
    ConnectOptions::new().name(name).connect(addrs).await
}

#[allow(dead_code)]
async fn connect_generic_callers() -> Result<(), async_nats::Error> {
    let _client = connect_named("nats://127.0.0.1:4222", "a").await?;
    let _client = connect_named(vec!["a", "b"], "b").await?;
    let _client = connect_named("c".parse::<ServerAddr>()?, "c").await?;
    Ok(())
}

#[allow(dead_code)]
async fn connect_error_shapes() {
    match async_nats::connect("nats://127.0.0.1:4222").await {
        Ok(client) => drop(client),
        Err(err) => match err.kind() {
            async_nats::ConnectErrorKind::TimedOut => println!("timed out"),
            async_nats::ConnectErrorKind::AuthorizationViolation => println!("denied"),
            other => println!("connect failed: {other}: {err}"),
        },
    }
}

// ---------------------------------------------------------------------------------------------
// ConnectOptions
// ---------------------------------------------------------------------------------------------

#[allow(dead_code)]
async fn option_shapes() -> Result<(), async_nats::Error> {
    let _opts = ConnectOptions::with_user_and_password("u".into(), "p".into());
    let _opts = ConnectOptions::with_token("t".into());
    let _opts = ConnectOptions::new().token("t".into());
    let _opts = ConnectOptions::new().user_and_password("u".into(), "p".into());
    let seed = "SUAEL6GG2L2HIF7DUGZJGMRUFKXELGGYFMHF76UO2AYBG3K4YLWR3FKC2Q";
    let _opts = ConnectOptions::new().nkey(seed.into());
    let _opts = ConnectOptions::with_nkey(seed.to_string());
    let _opts = ConnectOptions::new()
        .add_root_certificates("ca.pem".into())
        .add_client_certificate("c".into(), "k".into())
        .require_tls(true)
        .tls_first();
    let root = std::path::PathBuf::from("ca.pem");
    let _opts = ConnectOptions::new().add_root_certificates(root);

    let read_buffer: u16 = 65535;
    let delay_for = |attempts: usize| Duration::from_millis(attempts as u64 * 100);
    let opts = ConnectOptions::new()
        .max_reconnects(5)
        .max_reconnects(None)
        .max_reconnects(Some(10))
        .read_buffer_capacity(65535)
        .read_buffer_capacity(read_buffer)
        .name("x")
        .name(String::from("y"))
        .custom_inbox_prefix("_X")
        .custom_inbox_prefix(String::from("_Y"))
        .ping_interval(Duration::from_secs(10))
        .connection_timeout(Duration::from_secs(5))
        .request_timeout(Some(Duration::from_secs(2)))
        .request_timeout(None)
        .subscription_capacity(1024)
        .client_capacity(2048)
        .retry_on_initial_connect()
        .ignore_discovered_servers()
        .retain_servers_order()
        .no_echo()
        .reconnect_delay_callback(|attempts| Duration::from_millis(attempts as u64 * 10))
        .reconnect_delay_callback(delay_for)
        .reconnect_delay_callback(|attempts| {
            std::cmp::min(
                Duration::from_millis(2u64.saturating_pow(attempts as u32)),
                Duration::from_secs(4),
            )
        })
        .skip_subject_validation(true)
        .local_address("127.0.0.1:0".parse()?);
    let cloned = opts.clone();
    println!("{cloned:?}");
    let _client = opts.connect("nats://127.0.0.1:4222").await?;
    Ok(())
}

#[allow(dead_code)]
fn event_callback_shapes() -> ConnectOptions {
    ConnectOptions::new().event_callback(|event| async move {
        match event {
            async_nats::Event::Connected => println!("connected"),
            async_nats::Event::Disconnected => println!("disconnected"),
            async_nats::Event::LameDuckMode => println!("lame duck"),
            async_nats::Event::Draining => println!("draining"),
            async_nats::Event::Closed => println!("closed"),
            async_nats::Event::SlowConsumer(sid) => {
                let sid: u64 = sid;
                println!("slow consumer {sid}")
            }
            async_nats::Event::ServerError(err) => match err {
                async_nats::ServerError::AuthorizationViolation => println!("{err}"),
                async_nats::ServerError::SlowConsumer(sid) => {
                    let sid: u64 = sid;
                    println!("slow {sid}")
                }
                async_nats::ServerError::Other(ref text) => {
                    let text: &String = text;
                    println!("{text}: {err}")
                }
            },
            async_nats::Event::ClientError(err) => match err {
                async_nats::ClientError::Other(ref text) => {
                    let text: &String = text;
                    println!("{text}: {err}")
                }
                async_nats::ClientError::MaxReconnects => println!("{err}"),
                async_nats::ClientError::ServerNotInPool => println!("{err}"),
            },
        }
    })
}

#[allow(dead_code)]
fn event_callback_forwarding() -> ConnectOptions {
    let (tx, _rx) = tokio::sync::mpsc::channel::<async_nats::Event>(16);
    ConnectOptions::new().event_callback(move |event| {
        let tx = tx.clone();
        async move {
            println!("event: {event}");
            tx.send(event).await.ok();
        }
    })
}

// `Auth` has a private field in async-nats, so users set fields on `Auth::default()`.
#[allow(dead_code, clippy::field_reassign_with_default)]
async fn auth_shapes() -> Result<(), async_nats::Error> {
    let _opts = ConnectOptions::with_auth_callback(|nonce| async move {
        let nonce: Vec<u8> = nonce;
        let mut auth = async_nats::Auth::new();
        auth.token = Some(format!("token-{}", nonce.len()));
        auth.username = Some("u".to_string());
        auth.password = Some("p".to_string());
        auth.jwt = Some("jwt".to_string());
        auth.nkey = Some("UABC".to_string());
        auth.signature = Some(vec![1, 2, 3]);
        Ok(auth)
    });
    let _opts = ConnectOptions::with_auth_callback(|_nonce| async move {
        Err(async_nats::AuthError::new("no credentials"))
    });
    let _opts = ConnectOptions::with_auth_callback(move |_nonce| async move {
        let mut auth = async_nats::Auth::default();
        auth.token = Some("t".into());
        Ok::<_, async_nats::AuthError>(auth)
    });

    let seed = "SUAEL6GG2L2HIF7DUGZJGMRUFKXELGGYFMHF76UO2AYBG3K4YLWR3FKC2Q";
    let key_pair = Arc::new(nkeys::KeyPair::from_seed(seed)?);
    let jwt = String::from("eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ");
    let _opts = ConnectOptions::with_jwt(jwt.clone(), move |nonce| {
        let key_pair = key_pair.clone();
        async move { key_pair.sign(&nonce).map_err(async_nats::AuthError::new) }
    });
    let _opts = ConnectOptions::with_jwt(jwt.clone(), |nonce| async move { Ok(nonce) });
    let _opts = ConnectOptions::new().jwt(jwt, |nonce| async move { Ok(nonce) });

    let creds = "-----BEGIN NATS USER JWT-----\n...\n------END NATS USER JWT------\n";
    let _opts = ConnectOptions::with_credentials(creds)?;
    let _opts = ConnectOptions::new().credentials(creds)?;
    let _opts = ConnectOptions::with_credentials_file("user.creds").await?;
    let path = std::path::PathBuf::from("user.creds");
    let _opts = ConnectOptions::with_credentials_file(path.clone()).await?;
    let _opts = ConnectOptions::new().credentials_file(&path).await?;
    Ok(())
}

#[allow(dead_code)]
fn tls_config_shapes() -> ConnectOptions {
    let roots = async_nats::rustls::RootCertStore::empty();
    let config = async_nats::rustls::ClientConfig::builder()
        .with_root_certificates(roots)
        .with_no_client_auth();
    ConnectOptions::new()
        .require_tls(true)
        .tls_client_config(config)
}

// ---------------------------------------------------------------------------------------------
// Client
// ---------------------------------------------------------------------------------------------

#[allow(dead_code)]
async fn publish_shapes(client: async_nats::Client) -> Result<(), async_nats::Error> {
    client.publish("events.a", "x".into()).await?;
    client.publish("events.a", Bytes::from_static(b"x")).await?;
    client
        .publish(String::from("events.b"), Bytes::from("y"))
        .await?;
    client
        .publish(Subject::from("events.c"), Bytes::new())
        .await?;
    let subject = format!("events.{}", 1);
    client.publish(subject.clone(), "z".into()).await?;
    let data = Bytes::from("reused");
    for _ in 0..3 {
        client.publish("events.d", data.clone()).await?;
    }

    let mut headers = HeaderMap::new();
    headers.insert("k", "v");
    headers.insert(NATS_MESSAGE_ID, "id-1");
    client
        .publish_with_headers("events.h", headers.clone(), "x".into())
        .await?;
    client
        .publish_with_reply("events.r", "reply.to", "x".into())
        .await?;
    let inbox = client.new_inbox();
    client
        .publish_with_reply("events.r", inbox.clone(), "x".into())
        .await?;
    client
        .publish_with_reply_and_headers("events.rh", "reply.to", headers, "x".into())
        .await?;

    client.flush().await?;
    Ok(())
}

#[allow(dead_code)]
async fn publish_error_shapes(client: &async_nats::Client) {
    if let Err(err) = client.publish("bad subject", "x".into()).await {
        let kind: async_nats::PublishErrorKind = err.kind();
        match kind {
            async_nats::PublishErrorKind::MaxPayloadExceeded => println!("too big"),
            async_nats::PublishErrorKind::InvalidSubject => println!("bad subject"),
            async_nats::PublishErrorKind::Send => println!("send failed: {err}"),
        }
    }
}

#[allow(dead_code)]
async fn request_shapes(client: async_nats::Client) -> Result<(), async_nats::Error> {
    let response = client.request("service", "x".into()).await?;
    println!("{:?}", response.payload);
    let mut headers = HeaderMap::new();
    headers.insert("X-Trace", "1");
    let _response = client
        .request_with_headers("service", headers.clone(), "x".into())
        .await?;
    let request = async_nats::Request::new()
        .payload("x".into())
        .headers(headers.clone())
        .timeout(Some(Duration::from_secs(1)))
        .inbox(client.new_inbox());
    let _response = client.send_request("service", request).await?;
    let _response = client
        .send_request(
            "service",
            async_nats::client::Request::new()
                .payload(Bytes::from("x"))
                .timeout(None),
        )
        .await?;

    match client.request("service", "x".into()).await {
        Ok(message) => println!("{:?}", message),
        Err(err) => match err.kind() {
            async_nats::client::RequestErrorKind::TimedOut => println!("timed out"),
            async_nats::client::RequestErrorKind::NoResponders => println!("no responders"),
            _ => println!("request failed: {err}"),
        },
    }
    match client.request("service", "x".into()).await {
        Ok(_) => {}
        Err(err) => match err.kind() {
            async_nats::RequestErrorKind::TimedOut => {}
            async_nats::RequestErrorKind::NoResponders => {}
            async_nats::RequestErrorKind::InvalidSubject => {}
            async_nats::RequestErrorKind::MaxPayloadExceeded => {}
            async_nats::RequestErrorKind::Other => {}
        },
    }
    Ok(())
}

#[allow(dead_code)]
async fn subscribe_shapes(client: async_nats::Client) -> Result<(), async_nats::Error> {
    let mut subscriber = client.subscribe("events.>").await?;
    let _other = client.subscribe(String::from("events.*")).await?;
    let _other = client.subscribe(Subject::from_static("events.x")).await?;
    let mut workers = client.queue_subscribe("jobs", "workers".into()).await?;
    let _more = client
        .queue_subscribe(String::from("jobs"), String::from("workers"))
        .await?;

    while let Some(message) = subscriber.next().await {
        println!("{}: {:?}", message.subject, message.payload);
        if let Some(reply) = message.reply {
            client.publish(reply, "ack".into()).await?;
        }
    }
    if let Some(message) = workers.next().await {
        let message: async_nats::Message = message;
        drop(message);
    }
    let _batch: Vec<async_nats::Message> = workers.by_ref().take(3).collect().await;

    subscriber.unsubscribe().await?;
    workers.unsubscribe_after(3).await?;
    workers.drain().await?;

    let sub = client.subscribe("stream").await?;
    let _first_two: Vec<_> = sub.take(2).collect().await;

    match client.subscribe("bad subject").await {
        Ok(_) => {}
        Err(err) => match err.kind() {
            async_nats::SubscribeErrorKind::InvalidSubject => {}
            async_nats::SubscribeErrorKind::InvalidQueueName => {}
            async_nats::SubscribeErrorKind::Other => {}
        },
    }
    match client.queue_subscribe("ok", "bad queue".into()).await {
        Ok(_) => {}
        Err(err) => match err.kind() {
            async_nats::client::SubscribeErrorKind::InvalidSubject => {}
            async_nats::client::SubscribeErrorKind::InvalidQueueName => {}
            async_nats::client::SubscribeErrorKind::Other => {}
        },
    }
    Ok(())
}

#[allow(dead_code)]
async fn subscriber_unsubscribe_error(mut sub: async_nats::Subscriber) {
    let result: Result<(), async_nats::UnsubscribeError> = sub.unsubscribe().await;
    if let Err(err) = result {
        println!("{err}");
    }
}

#[allow(dead_code)]
async fn flush_drain_shapes(client: async_nats::Client) -> Result<(), async_nats::Error> {
    client.flush().await?;
    if let Err(err) = client.flush().await {
        match err.kind() {
            async_nats::client::FlushErrorKind::SendError => {}
            async_nats::client::FlushErrorKind::FlushError => {}
        }
    }
    let flushed: Result<(), async_nats::client::FlushError> = client.flush().await;
    flushed?;
    let drained: Result<(), async_nats::client::DrainError> = client.drain().await;
    drained?;
    client.drain().await?;
    let reconnected: Result<(), async_nats::client::ReconnectError> =
        client.force_reconnect().await;
    reconnected?;
    client.force_reconnect().await?;
    Ok(())
}

#[allow(dead_code)]
fn inspect_shapes(client: &async_nats::Client) {
    let inbox: String = client.new_inbox();
    println!("{inbox}");

    let info: async_nats::ServerInfo = client.server_info();
    let server_id: String = info.server_id;
    let server_name: String = info.server_name;
    let host: String = info.host;
    let port: u16 = info.port;
    let version: String = info.version;
    let auth_required: bool = info.auth_required;
    let tls_required: bool = info.tls_required;
    let max_payload: usize = info.max_payload;
    let proto: i8 = info.proto;
    let client_id: u64 = info.client_id;
    let go: String = info.go;
    let nonce: String = info.nonce;
    let connect_urls: Vec<String> = info.connect_urls;
    let client_ip: String = info.client_ip;
    let headers: bool = info.headers;
    let lame_duck_mode: bool = info.lame_duck_mode;
    let cluster: Option<String> = info.cluster;
    let domain: Option<String> = info.domain;
    let jetstream: bool = info.jetstream;
    println!(
        "{server_id} {server_name} {host} {port} {version} {auth_required} {tls_required} \
         {max_payload} {proto} {client_id} {go} {nonce} {connect_urls:?} {client_ip} {headers} \
         {lame_duck_mode} {cluster:?} {domain:?} {jetstream}"
    );

    let maybe: Option<async_nats::ServerInfo> = client.try_server_info();
    if let Some(info) = maybe {
        println!("{:?}", info.clone());
    }
    let max: usize = client.max_payload();
    let compatible: bool = client.is_server_compatible(2, 10, 0);
    let timeout: Option<Duration> = client.timeout();
    println!("{max} {compatible} {timeout:?}");

    let state = client.connection_state();
    println!("state: {}", state);
    match state {
        State::Pending => {}
        State::Connected => {}
        State::Disconnected => {}
    }
    match client.connection_state() {
        async_nats::connection::State::Connected => {}
        async_nats::connection::State::Pending | async_nats::connection::State::Disconnected => {}
    }
    let connected: bool = client.connection_state() == State::Connected;
    println!("{connected}");

    let stats: Arc<async_nats::Statistics> = client.statistics();
    let in_messages: u64 = stats.in_messages.load(Ordering::Relaxed);
    let out_messages: u64 = stats.out_messages.load(Ordering::Relaxed);
    let in_bytes: u64 = stats.in_bytes.load(Ordering::Relaxed);
    let out_bytes: u64 = stats.out_bytes.load(Ordering::Relaxed);
    let connects: u64 = stats.connects.load(Ordering::Relaxed);
    let client_stats: Arc<async_nats::client::Statistics> = client.statistics();
    println!(
        "{in_messages} {out_messages} {in_bytes} {out_bytes} {connects} {:?}",
        client_stats
    );
    println!("{client:?}");
}

#[allow(dead_code)]
async fn sink_shapes(client: async_nats::Client) -> Result<(), async_nats::Error> {
    let mut sink = client.clone();
    sink.send(OutboundMessage {
        subject: "events.sink".into(),
        reply: None,
        payload: "x".into(),
        headers: None,
    })
    .await?;
    let mut headers = HeaderMap::new();
    headers.insert("k", "v");
    sink.feed(OutboundMessage {
        subject: Subject::from("events.sink"),
        reply: Some(Subject::from("reply")),
        payload: Bytes::from("y"),
        headers: Some(headers),
    })
    .await?;
    SinkExt::flush(&mut sink).await?;

    let result: Result<(), async_nats::PublishError> = client
        .clone()
        .send(async_nats::message::OutboundMessage {
            subject: "events.sink".into(),
            reply: None,
            payload: Bytes::new(),
            headers: None,
        })
        .await;
    result?;

    let messages = (0..3).map(|i| {
        Ok(OutboundMessage {
            subject: format!("events.{i}").into(),
            reply: None,
            payload: Bytes::from(i.to_string()),
            headers: None,
        })
    });
    let mut stream = futures_util::stream::iter(messages);
    sink.send_all(&mut stream).await?;
    Ok(())
}

/// `Client` and `Subscriber` move into spawned tasks and the futures they return are `Send`.
#[allow(dead_code)]
async fn spawn_shapes(client: async_nats::Client) -> Result<(), async_nats::Error> {
    let publisher = tokio::spawn({
        let client = client.clone();
        async move {
            client.publish("events", "x".into()).await?;
            client.flush().await?;
            Ok::<(), async_nats::Error>(())
        }
    });
    let mut subscriber = client.subscribe("events").await?;
    let receiver = tokio::spawn(async move {
        while let Some(message) = subscriber.next().await {
            println!("{:?}", message);
        }
    });
    let requester = tokio::spawn({
        let client = client.clone();
        async move { client.request("svc", "x".into()).await }
    });
    publisher.await??;
    receiver.await?;
    let _response = requester.await??;
    Ok(())
}

/// User code taking any sink of outbound messages, e.g. a `Client`.
#[allow(dead_code)]
async fn forward_into<S>(mut sink: S, message: OutboundMessage) -> Result<(), async_nats::Error>
where
    S: futures_util::Sink<OutboundMessage, Error = async_nats::PublishError> + Unpin,
{
    sink.send(message).await?;
    Ok(())
}

/// User code taking any stream of messages, e.g. a `Subscriber`.
#[allow(dead_code)]
async fn count_messages<S>(mut stream: S) -> usize
where
    S: futures_util::Stream<Item = async_nats::Message> + Unpin,
{
    let mut n = 0;
    while stream.next().await.is_some() {
        n += 1;
    }
    n
}

#[allow(dead_code)]
async fn trait_bound_callers(client: async_nats::Client) -> Result<(), async_nats::Error> {
    let message = OutboundMessage {
        subject: "a".into(),
        reply: None,
        payload: Bytes::new(),
        headers: None,
    };
    forward_into(client.clone(), message).await?;
    let subscriber = client.subscribe("a").await?;
    println!("{subscriber:?}");
    let _n: usize = count_messages(subscriber).await;
    let timed = tokio::time::timeout(Duration::from_secs(1), async {
        let mut subscriber = client.subscribe("b").await?;
        Ok::<_, async_nats::Error>(subscriber.next().await)
    })
    .await;
    if let Ok(Ok(Some(message))) = timed {
        println!("{message:?}");
    }
    Ok(())
}

/// The module paths async-nats users import from name the same types as the root re-exports.
#[allow(dead_code)]
fn module_paths(
    client: async_nats::client::Client,
    message: async_nats::message::Message,
    headers: async_nats::header::HeaderMap,
    status: async_nats::status::StatusCode,
    subject: async_nats::subject::Subject,
    state: async_nats::connection::State,
) {
    let _: async_nats::Client = client;
    let _: async_nats::Message = message;
    let _: async_nats::HeaderMap = headers;
    let _: async_nats::StatusCode = status;
    let _: async_nats::Subject = subject;
    let _: async_nats::connection::State = state;
    let _: fn(async_nats::client::Request) -> async_nats::Request = |r| r;
    let _: fn(async_nats::client::Statistics) -> async_nats::Statistics = |s| s;
    let _: fn(async_nats::client::PublishError) -> async_nats::PublishError = |e| e;
    let _: fn(async_nats::client::PublishErrorKind) -> async_nats::PublishErrorKind = |e| e;
    let _: fn(async_nats::client::RequestError) -> async_nats::RequestError = |e| e;
    let _: fn(async_nats::client::RequestErrorKind) -> async_nats::RequestErrorKind = |e| e;
    let _: fn(async_nats::client::SubscribeError) -> async_nats::SubscribeError = |e| e;
    let _: fn(async_nats::client::SubscribeErrorKind) -> async_nats::SubscribeErrorKind = |e| e;
    let _: fn(async_nats::header::HeaderName) -> async_nats::HeaderName = |n| n;
    let _: fn(async_nats::header::HeaderValue) -> async_nats::HeaderValue = |v| v;
    let _: fn(async_nats::subject::SubjectError) -> async_nats::SubjectError = |e| e;
    let _: fn(async_nats::ConnectError) -> async_nats::error::Error<async_nats::ConnectErrorKind> =
        |e| e;
    let _: fn(
        async_nats::client::FlushError,
    ) -> async_nats::error::Error<async_nats::client::FlushErrorKind> = |e| e;
    let _: fn(async_nats::PublishError) -> async_nats::error::Error<async_nats::PublishErrorKind> =
        |e| e;
}

// ---------------------------------------------------------------------------------------------
// Message
// ---------------------------------------------------------------------------------------------

#[allow(dead_code)]
fn message_fields(message: async_nats::Message) {
    let subject: async_nats::Subject = message.subject.clone();
    let reply: Option<async_nats::Subject> = message.reply.clone();
    let payload: Bytes = message.payload.clone();
    let headers: Option<async_nats::HeaderMap> = message.headers.clone();
    let status: Option<async_nats::StatusCode> = message.status;
    let description: Option<String> = message.description.clone();
    let length: usize = message.length;
    println!("{subject} {reply:?} {payload:?} {headers:?} {status:?} {description:?} {length}");

    let subject_str: &str = message.subject.as_str();
    let from_utf8 = std::str::from_utf8(&message.payload);
    println!("{subject_str} {from_utf8:?}");
    if let Some(headers) = &message.headers {
        let id: Option<&str> = headers.get(NATS_MESSAGE_ID).map(|v| v.as_str());
        println!("{id:?}");
    }
    if message.status == Some(StatusCode::NO_RESPONDERS) {
        println!("no responders");
    }
    let copy = message.clone();
    println!("{copy:?}");
}

// ---------------------------------------------------------------------------------------------
// Tests that need no server
// ---------------------------------------------------------------------------------------------

#[test]
fn server_shapes_compile() {
    let _ = connect_shapes;
    let _ = connect_generic_callers;
    let _ = connect_error_shapes;
    let _ = option_shapes;
    let _ = event_callback_shapes;
    let _ = event_callback_forwarding;
    let _ = auth_shapes;
    let _ = tls_config_shapes;
    let _ = publish_shapes;
    let _ = publish_error_shapes;
    let _ = request_shapes;
    let _ = subscribe_shapes;
    let _ = subscriber_unsubscribe_error;
    let _ = flush_drain_shapes;
    let _ = inspect_shapes;
    let _ = sink_shapes;
    let _ = spawn_shapes;
    let _ = message_fields;
    let _ = trait_bound_callers;
    let _ = module_paths;
}

#[test]
fn server_addr_parsing() -> Result<(), async_nats::Error> {
    let addr: ServerAddr = "demo.nats.io".parse()?;
    assert_eq!(addr.scheme(), "nats");
    assert_eq!(addr.host(), "demo.nats.io");
    assert_eq!(addr.port(), 4222);
    assert!(!addr.tls_required());
    assert!(!addr.is_websocket());
    assert!(!addr.has_user_pass());
    assert_eq!(addr.username(), None);
    assert_eq!(addr.password(), None);
    assert_eq!(addr.as_url_str(), "nats://demo.nats.io");

    let addr = "tls://secure.example:4443".parse::<ServerAddr>()?;
    assert!(addr.tls_required());
    assert_eq!(addr.port(), 4443);

    let addr = "ws://localhost:8080".parse::<ServerAddr>()?;
    assert!(addr.is_websocket());
    assert_eq!(addr.scheme(), "ws");
    assert_eq!(addr.port(), 8080);
    let addr = "wss://localhost".parse::<ServerAddr>()?;
    assert!(addr.is_websocket());
    assert_eq!(addr.port(), 443);

    let addr = "nats://alice:s3cret@127.0.0.1:4333".parse::<ServerAddr>()?;
    assert!(addr.has_user_pass());
    assert_eq!(addr.username(), Some("alice"));
    assert_eq!(addr.password(), Some("s3cret"));
    assert_eq!(addr.host(), "127.0.0.1");
    assert_eq!(addr.port(), 4333);

    let addr = "nats://[::1]:4222".parse::<ServerAddr>()?;
    assert_eq!(addr.host(), "::1");

    let url = "nats://127.0.0.1:5222".parse::<ServerAddr>()?.into_inner();
    assert_eq!(url.scheme(), "nats");
    assert_eq!(url.port(), Some(5222));

    let bad: Result<ServerAddr, std::io::Error> = "http://127.0.0.1:4222".parse();
    let err = bad.unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);

    let one = "a:1".parse::<ServerAddr>()?;
    let same = one.clone();
    assert_eq!(one, same);
    let mut set = std::collections::HashSet::new();
    set.insert(one);
    assert!(set.contains(&same));
    Ok(())
}

#[test]
fn to_server_addrs_lists() -> Result<(), async_nats::Error> {
    let list: Vec<ServerAddr> = "nats://a:4222".to_server_addrs()?.collect();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].host(), "a");

    let list: Vec<ServerAddr> = vec!["a:1", "b:2"].to_server_addrs()?.collect();
    assert_eq!(list.len(), 2);
    assert_eq!(list[1].port(), 2);

    let list: Vec<ServerAddr> = String::from("c:3").to_server_addrs()?.collect();
    assert_eq!(list[0].port(), 3);

    let addrs = vec!["d:4".parse::<ServerAddr>()?, "e:5".parse::<ServerAddr>()?];
    let list: Vec<ServerAddr> = addrs.as_slice().to_server_addrs()?.collect();
    assert_eq!(list, addrs);

    assert!(vec!["ok:1", "http://bad"].to_server_addrs().is_err());
    Ok(())
}

#[test]
fn header_maps() -> Result<(), async_nats::Error> {
    let mut headers = HeaderMap::new();
    assert!(headers.is_empty());
    headers.insert("k", "v");
    headers.insert(NATS_MESSAGE_ID, "id");
    headers.insert(String::from("owned"), String::from("value"));
    headers.insert("typed", HeaderValue::from("x"));
    assert_eq!(headers.len(), 4);
    assert!(!headers.is_empty());
    assert_eq!(headers.get("k").map(|v| v.as_str()), Some("v"));
    assert_eq!(headers.get(NATS_MESSAGE_ID).map(|v| v.as_str()), Some("id"));
    assert_eq!(headers.get("Nats-Msg-Id").map(|v| v.as_str()), Some("id"));
    assert_eq!(
        headers.get("owned").map(|v| v.to_string()),
        Some("value".to_string())
    );
    assert!(headers.get("missing").is_none());

    headers.insert("k", "replaced");
    assert_eq!(headers.get("k").map(|v| v.as_str()), Some("replaced"));
    assert_eq!(headers.len(), 4);

    let mut names = Vec::new();
    for (name, values) in headers.iter() {
        let name: &HeaderName = name;
        let values: &Vec<HeaderValue> = values;
        names.push(name.to_string());
        assert!(!values.is_empty());
    }
    names.sort();
    assert_eq!(names, vec!["Nats-Msg-Id", "k", "owned", "typed"]);

    let name = "X-Key".parse::<HeaderName>()?;
    headers.insert(name.clone(), "parsed");
    assert_eq!(headers.get(name).map(|v| v.as_str()), Some("parsed"));
    assert!("bad key".parse::<HeaderName>().is_err());
    assert!("bad:key".parse::<HeaderName>().is_err());
    let standard: HeaderName = "Nats-Msg-Id".parse()?;
    assert_eq!(standard, NATS_MESSAGE_ID);
    assert_eq!(NATS_EXPECTED_STREAM.to_string(), "Nats-Expected-Stream");

    let value = HeaderValue::from("x");
    assert_eq!(value.as_str(), "x");
    assert_eq!(value.to_string(), "x");
    let number = HeaderValue::from(42u64);
    assert_eq!(number.as_str(), "42");
    let parsed: HeaderValue = "y".parse()?;
    assert_eq!(parsed, HeaderValue::from(String::from("y")));
    assert!("a\r\nb".parse::<HeaderValue>().is_err());

    let copy = headers.clone();
    assert_eq!(copy, headers);
    Ok(())
}

/// A user helper written against the conversion traits.
fn set_header<K: IntoHeaderName, V: IntoHeaderValue>(headers: &mut HeaderMap, name: K, value: V) {
    headers.insert(name, value);
}

#[test]
fn header_conversion_traits() {
    let mut headers = HeaderMap::new();
    set_header(&mut headers, "a", "1");
    set_header(&mut headers, String::from("b"), String::from("2"));
    set_header(&mut headers, NATS_MESSAGE_ID, HeaderValue::from("3"));
    assert_eq!(headers.len(), 3);
    let name: HeaderName = "c".into_header_name();
    let value: HeaderValue = "4".into_header_value();
    headers.insert(name, value);
    assert_eq!(headers.get("c").map(|v| v.as_str()), Some("4"));
}

#[test]
fn status_codes() -> Result<(), async_nats::Error> {
    assert_eq!(StatusCode::NO_RESPONDERS.as_u16(), 503);
    assert_eq!(StatusCode::OK.as_u16(), 200);
    assert_eq!(StatusCode::NOT_FOUND.as_u16(), 404);
    assert_eq!(StatusCode::TIMEOUT.as_u16(), 408);
    assert_eq!(StatusCode::REQUEST_TERMINATED.as_u16(), 409);
    assert_eq!(StatusCode::IDLE_HEARTBEAT.as_u16(), 100);
    assert_eq!(StatusCode::from_u16(503)?, StatusCode::NO_RESPONDERS);
    assert_eq!("404".parse::<StatusCode>()?, StatusCode::NOT_FOUND);
    assert!(StatusCode::from_u16(99).is_err());
    assert!(StatusCode::from_u16(1000).is_err());
    assert_eq!(StatusCode::NO_RESPONDERS.to_string(), "503");
    assert!(StatusCode::NO_RESPONDERS.is_server_error());
    assert!(StatusCode::NOT_FOUND.is_client_error());
    assert!(StatusCode::OK.is_success());
    assert!(StatusCode::IDLE_HEARTBEAT.is_informational());
    assert!(StatusCode::NO_RESPONDERS == 503);
    let raw: u16 = StatusCode::TIMEOUT.into();
    assert_eq!(raw, 408);
    let code = StatusCode::OK;
    let copied = code;
    assert_eq!(code, copied);
    match Some(StatusCode::NO_RESPONDERS) {
        Some(StatusCode::NO_RESPONDERS) => {}
        _ => panic!("constant pattern did not match"),
    }
    Ok(())
}

#[test]
fn subjects() {
    let subject = Subject::from("a.b");
    assert_eq!(subject.as_str(), "a.b");
    assert_eq!(subject.to_string(), "a.b");
    assert!(subject.starts_with("a."));
    assert_eq!(&*subject, "a.b");
    const STATIC: Subject = Subject::from_static("static.subject");
    assert_eq!(STATIC.as_str(), "static.subject");
    let owned = async_nats::Subject::from(String::from("x.y"));
    assert_eq!(owned.clone().into_string(), "x.y");
    let as_ref: &str = owned.as_ref();
    assert_eq!(as_ref, "x.y");
    assert_eq!(Subject::from("a.b"), subject);
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum LookupErrorKind {
    Missing,
    Corrupt,
}

impl std::fmt::Display for LookupErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LookupErrorKind::Missing => write!(f, "missing"),
            LookupErrorKind::Corrupt => write!(f, "corrupt"),
        }
    }
}

type LookupError = async_nats::error::Error<LookupErrorKind>;

fn describe<K>(err: &async_nats::error::Error<K>) -> String
where
    K: Clone + std::fmt::Debug + std::fmt::Display + PartialEq,
{
    format!("[{}] {}", err.kind(), err)
}

fn lookup(found: bool) -> Result<u32, LookupError> {
    if found {
        Ok(1)
    } else {
        Err(LookupError::new(LookupErrorKind::Missing))
    }
}

fn lookup_boxed() -> Result<u32, async_nats::Error> {
    let value = lookup(false)?;
    Ok(value)
}

#[test]
fn generic_error_type() {
    let err = LookupError::new(LookupErrorKind::Missing);
    assert_eq!(err.kind(), LookupErrorKind::Missing);
    assert_eq!(err.to_string(), "missing");
    assert!(err.source().is_none());

    let err = LookupError::with_source(LookupErrorKind::Corrupt, std::io::Error::other("disk"));
    assert_eq!(err.kind(), LookupErrorKind::Corrupt);
    assert_eq!(err.to_string(), "corrupt: disk");
    assert_eq!(
        err.source().map(|s| s.to_string()),
        Some("disk".to_string())
    );
    assert_eq!(describe(&err), "[corrupt] corrupt: disk");

    let err = LookupError::with_source(LookupErrorKind::Corrupt, "text source");
    assert_eq!(err.to_string(), "corrupt: text source");

    let err: LookupError = LookupErrorKind::Missing.into();
    assert_eq!(err.kind(), LookupErrorKind::Missing);
    println!("{err:?}");

    assert_eq!(lookup(true).ok(), Some(1));
    let boxed = lookup_boxed().unwrap_err();
    assert_eq!(boxed.to_string(), "missing");
    assert!(boxed.downcast_ref::<LookupError>().is_some());
}

fn connect_kind_name(kind: async_nats::ConnectErrorKind) -> &'static str {
    match kind {
        async_nats::ConnectErrorKind::ServerParse => "server parse",
        async_nats::ConnectErrorKind::Dns => "dns",
        async_nats::ConnectErrorKind::Authentication => "authentication",
        async_nats::ConnectErrorKind::AuthorizationViolation => "authorization violation",
        async_nats::ConnectErrorKind::TimedOut => "timed out",
        async_nats::ConnectErrorKind::Tls => "tls",
        async_nats::ConnectErrorKind::Io => "io",
        async_nats::ConnectErrorKind::MaxReconnects => "max reconnects",
    }
}

fn request_kind_name(kind: async_nats::client::RequestErrorKind) -> &'static str {
    match kind {
        async_nats::client::RequestErrorKind::TimedOut => "timed out",
        async_nats::client::RequestErrorKind::NoResponders => "no responders",
        async_nats::client::RequestErrorKind::InvalidSubject => "invalid subject",
        async_nats::client::RequestErrorKind::MaxPayloadExceeded => "max payload",
        async_nats::client::RequestErrorKind::Other => "other",
    }
}

fn publish_kind_name(kind: async_nats::client::PublishErrorKind) -> &'static str {
    match kind {
        async_nats::client::PublishErrorKind::MaxPayloadExceeded => "max payload",
        async_nats::client::PublishErrorKind::InvalidSubject => "invalid subject",
        async_nats::client::PublishErrorKind::Send => "send",
    }
}

fn subscribe_kind_name(kind: async_nats::client::SubscribeErrorKind) -> &'static str {
    match kind {
        async_nats::client::SubscribeErrorKind::InvalidSubject => "invalid subject",
        async_nats::client::SubscribeErrorKind::InvalidQueueName => "invalid queue name",
        async_nats::client::SubscribeErrorKind::Other => "other",
    }
}

fn flush_kind_name(kind: async_nats::client::FlushErrorKind) -> &'static str {
    match kind {
        async_nats::client::FlushErrorKind::SendError => "send",
        async_nats::client::FlushErrorKind::FlushError => "flush",
    }
}

#[test]
fn error_kinds() {
    let err = async_nats::ConnectError::new(async_nats::ConnectErrorKind::TimedOut);
    let kind = err.kind();
    let again = kind;
    assert_eq!(kind, again);
    assert_eq!(connect_kind_name(err.kind()), "timed out");
    assert_eq!(err.to_string(), kind.to_string());
    let err = async_nats::ConnectError::with_source(
        async_nats::ConnectErrorKind::Io,
        std::io::Error::other("refused"),
    );
    assert_eq!(connect_kind_name(err.kind()), "io");
    assert!(err.to_string().ends_with(": refused"));
    assert!(err.source().is_some());

    let err = async_nats::RequestError::new(async_nats::RequestErrorKind::NoResponders);
    assert_eq!(request_kind_name(err.kind()), "no responders");
    assert_eq!(
        err.kind(),
        async_nats::client::RequestErrorKind::NoResponders
    );
    let err = async_nats::client::RequestError::with_source(
        async_nats::client::RequestErrorKind::TimedOut,
        "late",
    );
    assert_eq!(request_kind_name(err.kind()), "timed out");

    let err = async_nats::PublishError::new(async_nats::PublishErrorKind::InvalidSubject);
    assert_eq!(publish_kind_name(err.kind()), "invalid subject");
    let err: async_nats::client::PublishError = async_nats::PublishErrorKind::Send.into();
    assert_eq!(publish_kind_name(err.kind()), "send");

    let err = async_nats::SubscribeError::new(async_nats::SubscribeErrorKind::InvalidQueueName);
    assert_eq!(subscribe_kind_name(err.kind()), "invalid queue name");

    let err = async_nats::client::FlushError::new(async_nats::client::FlushErrorKind::FlushError);
    assert_eq!(flush_kind_name(err.kind()), "flush");

    let boxed: async_nats::Error = Box::new(err);
    assert!(
        boxed
            .downcast_ref::<async_nats::client::FlushError>()
            .is_some()
    );
}

#[test]
fn error_kind_display_matches_async_nats() {
    use async_nats::ConnectErrorKind as C;
    use async_nats::client::{
        FlushErrorKind as F, PublishErrorKind as P, RequestErrorKind as R, SubscribeErrorKind as S,
    };
    assert_eq!(R::TimedOut.to_string(), "request timed out");
    assert_eq!(R::NoResponders.to_string(), "no responders");
    assert_eq!(R::InvalidSubject.to_string(), "invalid subject");
    assert_eq!(
        P::MaxPayloadExceeded.to_string(),
        "max payload size exceeded"
    );
    assert_eq!(P::InvalidSubject.to_string(), "invalid subject");
    assert_eq!(S::InvalidSubject.to_string(), "invalid subject");
    assert_eq!(S::InvalidQueueName.to_string(), "invalid queue name");
    assert_eq!(F::SendError.to_string(), "failed to send flush request");
    assert_eq!(F::FlushError.to_string(), "flush failed");
    assert_eq!(C::TimedOut.to_string(), "timed out");
    assert_eq!(
        C::AuthorizationViolation.to_string(),
        "authorization violation"
    );
    assert_eq!(
        C::MaxReconnects.to_string(),
        "reached maximum number of reconnects"
    );
}

#[test]
fn events_and_auth_values() {
    let event = async_nats::Event::SlowConsumer(7);
    assert_eq!(event.clone(), async_nats::Event::SlowConsumer(7));
    assert_ne!(event, async_nats::Event::Connected);
    assert!(!async_nats::Event::Connected.to_string().is_empty());
    let event = async_nats::Event::ServerError(async_nats::ServerError::Other("x".into()));
    println!("{event} {event:?}");
    let event = async_nats::Event::ClientError(async_nats::ClientError::MaxReconnects);
    println!("{event} {event:?}");

    let err = async_nats::AuthError::new("bad nonce");
    assert!(err.to_string().contains("bad nonce"));
    let boxed: async_nats::Error = Box::new(async_nats::AuthError::new(String::from("x")));
    println!("{boxed}");

    let mut auth = async_nats::Auth::new();
    auth.token = Some("t".into());
    let auth = auth.clone();
    assert_eq!(auth.token.as_deref(), Some("t"));
    assert!(auth.username.is_none());
}

#[tokio::test]
async fn connect_rejects_bad_scheme() {
    let err = async_nats::connect("http://127.0.0.1:4222")
        .await
        .unwrap_err();
    assert_eq!(err.kind(), async_nats::ConnectErrorKind::ServerParse);
}
