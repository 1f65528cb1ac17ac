#![allow(missing_docs, clippy::unwrap_used)]
use rnats as async_nats;

// Compile-level compatibility with the rest of async-nats 0.51's public Core NATS API: the less
// common items a program may still name (server pool, reconnect-to-server callback, the
// `client::traits` abstractions, conversions, serde, struct literals, user trait impls).
//
// The `async fn`s that need a server are compiled, never run; the `#[test]`s check behaviour
// that needs no server.

use std::str::FromStr;
use std::time::Duration;

use async_nats::header::{self, HeaderMap, HeaderName, HeaderValue};
use async_nats::message::OutboundMessage;
use async_nats::status::StatusCode;
use async_nats::subject::{Subject, ToSubject};
use async_nats::{ConnectOptions, ServerAddr, ToServerAddrs};
use bytes::Bytes;

// ---------------------------------------------------------------------------------------------
// Server pool and the reconnect-to-server callback
// ---------------------------------------------------------------------------------------------

#[allow(dead_code)]
async fn server_pool_shapes(client: async_nats::Client) -> Result<(), async_nats::Error> {
    client
        .set_server_pool(vec!["nats://a:4222", "nats://b:4222"])
        .await?;
    client.set_server_pool("nats://c:4222").await?;
    let result: Result<(), async_nats::SetServerPoolError> =
        client.set_server_pool(["nats://a:4222"].as_slice()).await;
    if let Err(err) = result {
        match err.kind() {
            async_nats::SetServerPoolErrorKind::Send => {}
            async_nats::SetServerPoolErrorKind::InvalidAddress => {}
            async_nats::SetServerPoolErrorKind::MixedSchemes => {}
            async_nats::SetServerPoolErrorKind::EmptyPool => {}
        }
    }

    let servers: Vec<async_nats::Server> = client.server_pool().await?;
    for server in &servers {
        let addr: &ServerAddr = &server.addr;
        let failed_attempts: usize = server.failed_attempts;
        let did_connect: bool = server.did_connect;
        let is_discovered: bool = server.is_discovered;
        let last_error: &Option<String> = &server.last_error;
        println!(
            "{server} {addr:?} {failed_attempts} {did_connect} {is_discovered} {last_error:?}"
        );
    }
    match client.server_pool().await {
        Ok(_) => {}
        Err(err) => match err.kind() {
            async_nats::client::ServerPoolErrorKind::Send => {}
        },
    }
    let _typed: Result<Vec<async_nats::Server>, async_nats::ServerPoolError> =
        client.server_pool().await;
    Ok(())
}

#[allow(dead_code)]
fn reconnect_to_server_shapes() -> ConnectOptions {
    ConnectOptions::new().reconnect_to_server_callback(|servers, info| async move {
        let servers: Vec<async_nats::Server> = servers;
        let info: async_nats::ServerInfo = info;
        println!("{}", info.server_id);
        servers
            .iter()
            .find(|server| server.failed_attempts == 0)
            .map(|server| async_nats::ReconnectToServer {
                addr: server.addr.clone(),
                delay: Some(Duration::from_millis(100)),
            })
    })
}

// ---------------------------------------------------------------------------------------------
// client::traits
// ---------------------------------------------------------------------------------------------

#[allow(dead_code)]
async fn via_publisher<P: async_nats::client::traits::Publisher>(
    publisher: &P,
) -> Result<(), async_nats::PublishError> {
    publisher
        .publish_with_reply("events", "reply", "x".into())
        .await?;
    publisher
        .publish_message(OutboundMessage {
            subject: "events".into(),
            reply: None,
            payload: Bytes::from("y"),
            headers: None,
        })
        .await
}

#[allow(dead_code)]
async fn via_subscriber<S: async_nats::client::traits::Subscriber>(
    source: &S,
) -> Result<async_nats::Subscriber, async_nats::SubscribeError> {
    source.subscribe("events.>").await
}

#[allow(dead_code)]
async fn via_requester<R>(requester: &R) -> Result<async_nats::Message, async_nats::RequestError>
where
    R: async_nats::client::traits::Requester + async_nats::client::traits::TimeoutProvider,
{
    let timeout: Option<Duration> = requester.timeout();
    requester
        .send_request(
            "svc",
            async_nats::Request::new()
                .payload("x".into())
                .timeout(timeout),
        )
        .await
}

#[allow(dead_code)]
async fn traits_on_client(client: async_nats::Client) -> Result<(), async_nats::Error> {
    via_publisher(&client).await?;
    let _subscriber = via_subscriber(&client).await?;
    let _message = via_requester(&client).await?;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Request, ServerInfo, Message and Statistics as plain values
// ---------------------------------------------------------------------------------------------

#[allow(dead_code)]
async fn request_literal(client: async_nats::Client) -> Result<(), async_nats::Error> {
    let request = async_nats::Request {
        payload: Some(Bytes::from("x")),
        headers: None,
        timeout: Some(Some(Duration::from_secs(1))),
        inbox: Some(client.new_inbox()),
    };
    let _reply = client.send_request("svc", request).await?;
    let request = async_nats::client::Request {
        payload: Some("y".into()),
        ..Default::default()
    };
    let payload: &Option<Bytes> = &request.payload;
    let headers: &Option<HeaderMap> = &request.headers;
    let timeout: &Option<Option<Duration>> = &request.timeout;
    let inbox: &Option<String> = &request.inbox;
    println!("{payload:?} {headers:?} {timeout:?} {inbox:?}");
    let _reply = client.send_request("svc", request).await?;
    let _reply = client
        .send_request("svc", async_nats::Request::default())
        .await?;
    Ok(())
}

#[allow(dead_code)]
async fn publish_with_user_subjects(client: async_nats::Client) -> Result<(), async_nats::Error> {
    client.publish(Topic("orders"), "x".into()).await?;
    client
        .publish_with_reply(Topic("orders"), Topic("replies"), "x".into())
        .await?;
    let _sub = client.subscribe(Topic("orders")).await?;
    let _reply = client.request(Topic("svc"), "x".into()).await?;
    Ok(())
}

#[allow(dead_code)]
async fn publish_generic<S: ToSubject>(
    client: &async_nats::Client,
    subject: S,
) -> Result<(), async_nats::PublishError> {
    client.publish(subject, Bytes::new()).await
}

#[allow(dead_code)]
async fn turbofish_shapes(client: async_nats::Client) -> Result<(), async_nats::Error> {
    let _client = async_nats::connect::<&str>("nats://127.0.0.1:4222").await?;
    client.publish::<&str>("events", "x".into()).await?;
    client
        .publish_with_reply::<&str, String>("events", client.new_inbox(), "x".into())
        .await?;
    let _sub = client.subscribe::<String>("events".to_string()).await?;
    let _reply = client.request::<Subject>("svc".into(), "x".into()).await?;
    let _ = &client;
    Ok(())
}

#[allow(dead_code)]
async fn socket_addr_shapes(addr: ServerAddr) -> std::io::Result<()> {
    for socket in addr.socket_addrs().await? {
        let socket: std::net::SocketAddr = socket;
        println!("{socket}");
    }
    Ok(())
}

#[allow(dead_code)]
#[allow(deprecated)]
fn deprecated_alias(message: async_nats::PublishMessage) -> OutboundMessage {
    message
}

#[allow(dead_code)]
fn protocol_types(info: &async_nats::ConnectInfo) -> u8 {
    println!("{} {} {}", info.lang, info.version, info.echo);
    match info.protocol {
        async_nats::Protocol::Original => 0,
        async_nats::Protocol::Dynamic => 1,
    }
}

#[allow(dead_code)]
fn callback_error(err: async_nats::CallbackError) -> String {
    match err {
        async_nats::CallbackError::Client(client) => client.to_string(),
        async_nats::CallbackError::Server(server) => server.to_string(),
    }
}

/// A user's own subject type.
struct Topic(&'static str);

impl ToSubject for Topic {
    fn to_subject(&self) -> Subject {
        Subject::from_static(self.0)
    }
}

/// A user's own server list type.
struct Cluster {
    hosts: Vec<String>,
}

impl ToServerAddrs for Cluster {
    type Iter = std::vec::IntoIter<ServerAddr>;

    fn to_server_addrs(&self) -> std::io::Result<Self::Iter> {
        self.hosts
            .iter()
            .map(|host| host.parse::<ServerAddr>())
            .collect::<std::io::Result<Vec<_>>>()
            .map(Vec::into_iter)
    }
}

#[allow(dead_code)]
async fn connect_user_list() -> Result<async_nats::Client, async_nats::ConnectError> {
    async_nats::connect(Cluster {
        hosts: vec!["a:4222".into(), "b:4222".into()],
    })
    .await
}

/// Every root-level name async-nats 0.51 exports for Core NATS (and its default features).
#[allow(unused_imports, dead_code, deprecated)]
fn root_exports() {
    use async_nats::client::{DrainError, ReconnectError};
    use async_nats::client::{FlushError, FlushErrorKind};
    use async_nats::header::{
        IntoHeaderName, IntoHeaderValue, ParseHeaderNameError, ParseHeaderValueError,
    };
    use async_nats::rustls;
    use async_nats::status::InvalidStatusCode;
    use async_nats::{Auth, AuthError, ClientError, Event, ServerError};
    use async_nats::{CallbackError, ConnectInfo, Protocol, PublishMessage};
    use async_nats::{Client, ConnectOptions, Message, Request, Statistics, Subscriber};
    use async_nats::{ConnectError, ConnectErrorKind, Error, UnsubscribeError};
    use async_nats::{HeaderMap, HeaderName, HeaderValue, StatusCode, Subject, SubjectError};
    use async_nats::{PublishError, PublishErrorKind, RequestError, RequestErrorKind};
    use async_nats::{ReconnectToServer, Server, ServerAddr, ServerInfo, ToServerAddrs, ToSubject};
    use async_nats::{
        ServerPoolError, ServerPoolErrorKind, SetServerPoolError, SetServerPoolErrorKind,
    };
    use async_nats::{SubscribeError, SubscribeErrorKind};
    use async_nats::{connect, connect_with_options};
}

#[test]
fn server_shapes_compile() {
    let _ = server_pool_shapes;
    let _ = reconnect_to_server_shapes;
    let _ = traits_on_client;
    let _ = request_literal;
    let _ = publish_with_user_subjects;
    let _ = publish_generic::<Topic>;
    let _ = turbofish_shapes;
    let _ = socket_addr_shapes;
    let _ = deprecated_alias;
    let _ = protocol_types;
    let _ = callback_error;
    let _ = root_exports;
    let _ = connect_user_list;
}

#[test]
fn user_trait_impls() -> Result<(), async_nats::Error> {
    assert_eq!(Topic("t.x").to_subject().as_str(), "t.x");
    assert_eq!("lit".to_subject(), Subject::from("lit"));
    assert_eq!(String::from("own").to_subject().as_str(), "own");
    assert_eq!(Subject::from("s").to_subject().as_str(), "s");

    let cluster = Cluster {
        hosts: vec!["a:1".into(), "tls://b:2".into()],
    };
    let addrs: Vec<ServerAddr> = cluster.to_server_addrs()?.collect();
    assert_eq!(addrs.len(), 2);
    assert!(addrs[1].tls_required());
    Ok(())
}

#[test]
fn server_info_and_statistics_values() {
    let info = async_nats::ServerInfo {
        max_payload: 1024,
        version: "2.10.0".into(),
        domain: Some("hub".into()),
        ..Default::default()
    };
    assert_eq!(info.max_payload, 1024);
    assert_eq!(info.clone(), info);
    assert!(!info.jetstream);

    let stats = async_nats::Statistics::default();
    stats
        .in_messages
        .fetch_add(2, std::sync::atomic::Ordering::Relaxed);
    assert_eq!(
        stats.in_messages.load(std::sync::atomic::Ordering::Relaxed),
        2
    );
    println!("{stats:?}");
}

#[test]
fn message_literals() {
    let mut headers = HeaderMap::new();
    headers.insert("k", "v");
    let message = async_nats::Message {
        subject: "a.b".into(),
        reply: Some("inbox.1".into()),
        payload: Bytes::from("x"),
        headers: Some(headers),
        status: Some(StatusCode::OK),
        description: None,
        length: 1,
    };
    let copy = message.clone();
    assert_eq!(copy.subject.as_str(), "a.b");
    assert_eq!(copy.reply.as_deref(), Some("inbox.1"));
    let outbound = OutboundMessage {
        subject: message.subject,
        reply: message.reply,
        payload: message.payload,
        headers: message.headers,
    };
    println!("{:?}", outbound.clone());
}

#[test]
fn header_map_extras() -> Result<(), async_nats::Error> {
    let mut headers = HeaderMap::default();
    headers.append("multi", "1");
    headers.append("multi", "2");
    headers.append("multi", String::from("3"));
    assert_eq!(headers.len(), 1);
    let all: Vec<&str> = headers.get_all("multi").map(|v| v.as_str()).collect();
    assert_eq!(all, vec!["1", "2", "3"]);
    assert_eq!(headers.get("multi").map(|v| v.as_str()), Some("1"));
    assert_eq!(headers.get_last("multi").map(|v| v.as_str()), Some("3"));

    let collected: HeaderMap = vec![
        (HeaderName::from_static("A"), HeaderValue::from("1")),
        (header::NATS_SUBJECT, HeaderValue::from(2i32)),
    ]
    .into_iter()
    .collect();
    assert_eq!(collected.len(), 2);
    assert_eq!(
        collected.get(header::NATS_SUBJECT).map(|v| v.as_str()),
        Some("2")
    );

    let name = HeaderName::try_from("X-Try")?;
    let owned = HeaderName::try_from(String::from("X-Owned"))?;
    let parsed = HeaderName::from_str("X-Parsed")?;
    let bad: Result<HeaderName, header::ParseHeaderNameError> = "bad name".parse();
    assert!(bad.is_err());
    let as_str: &str = name.as_ref();
    assert_eq!(as_str, "X-Try");
    let as_bytes: &[u8] = owned.as_ref();
    assert_eq!(as_bytes, b"X-Owned");
    assert_eq!(parsed.to_string(), "X-Parsed");

    let value = HeaderValue::new();
    assert_eq!(value.as_str(), "");
    let bad: Result<HeaderValue, header::ParseHeaderValueError> = "a\nb".parse();
    assert!(bad.is_err());
    let seven = HeaderValue::from(7u16);
    let s: &str = seven.as_ref();
    assert_eq!(s, "7");
    for value in [
        HeaderValue::from(1i16),
        HeaderValue::from(1i64),
        HeaderValue::from(1isize),
        HeaderValue::from(1u32),
        HeaderValue::from(1usize),
    ] {
        assert_eq!(value.as_str(), "1");
    }

    let standard = [
        header::NATS_STREAM,
        header::NATS_SEQUENCE,
        header::NATS_TIME_STAMP,
        header::NATS_SUBJECT,
        header::NATS_MESSAGE_ID,
        header::NATS_LAST_STREAM,
        header::NATS_LAST_CONSUMER,
        header::NATS_LAST_SEQUENCE,
        header::NATS_EXPECTED_LAST_SUBJECT_SEQUENCE,
        header::NATS_EXPECTED_LAST_MESSAGE_ID,
        header::NATS_EXPECTED_LAST_SEQUENCE,
        header::NATS_EXPECTED_STREAM,
        header::NATS_MESSAGE_TTL,
        header::NATS_MARKER_REASON,
        header::NATS_ROLLUP,
        header::NATS_SCHEDULE,
        header::NATS_SCHEDULE_TARGET,
        header::NATS_SCHEDULE_TTL,
        header::NATS_SCHEDULE_SOURCE,
        header::NATS_SCHEDULE_TIME_ZONE,
        header::NATS_SCHEDULE_ROLLUP,
        header::NATS_SCHEDULER,
        header::NATS_SCHEDULE_NEXT,
        header::NATS_BATCH_ID,
        header::NATS_BATCH_SEQUENCE,
        header::NATS_BATCH_COMMIT,
        header::NATS_REQUIRED_API_LEVEL,
        header::NATS_PIN_ID,
    ];
    for name in &standard {
        let text = name.to_string();
        assert_eq!(&text.parse::<HeaderName>()?, name);
    }
    assert_eq!(header::NATS_MESSAGE_ID.to_string(), "Nats-Msg-Id");
    assert_eq!(header::NATS_MESSAGE_TTL.to_string(), "Nats-TTL");
    let values: [&str; 8] = [
        header::NATS_BATCH_COMMIT_FINAL,
        header::NATS_BATCH_COMMIT_EOB,
        header::NATS_SCHEDULE_ROLLUP_SUB,
        header::NATS_SCHEDULE_YEARLY,
        header::NATS_SCHEDULE_MONTHLY,
        header::NATS_SCHEDULE_WEEKLY,
        header::NATS_SCHEDULE_DAILY,
        header::NATS_SCHEDULE_HOURLY,
    ];
    assert_eq!(values[0], "1");
    Ok(())
}

#[test]
#[allow(unsafe_code)]
fn subject_extras() -> Result<(), async_nats::Error> {
    let subject = Subject::validated("a.b")?;
    assert!(subject.is_valid());
    let err: async_nats::SubjectError = Subject::validated("a..b").unwrap_err();
    assert_eq!(err, async_nats::subject::SubjectError::InvalidFormat);
    assert_eq!(err.to_string(), "invalid subject format");
    for text in ["", "a b", "a\tb", ".a", "a.", "a.>.b"] {
        assert!(
            matches!(
                Subject::validated(text),
                Err(async_nats::SubjectError::InvalidFormat)
            ),
            "{text:?}"
        );
    }
    // rnats' own detail stays one parse away.
    assert_eq!(
        "a..b".parse::<Subject>().unwrap_err(),
        async_nats::SubjectCause::EmptyToken
    );
    assert!(!Subject::from("bad..subject").is_valid());
    const CHECKED: Subject = Subject::from_static_validated("ok.subject");
    assert_eq!(CHECKED.as_str(), "ok.subject");
    let from_bytes = Subject::from_utf8(Bytes::from_static(b"from.bytes"))?;
    assert_eq!(from_bytes.as_str(), "from.bytes");
    assert!(Subject::from_utf8(vec![0xff, 0xfe]).is_err());
    let tried = Subject::try_from(Bytes::from("tried"))?;
    assert_eq!(tried.as_str(), "tried");
    // SAFETY: the bytes are valid UTF-8.
    let unchecked = unsafe { Subject::from_bytes_unchecked(Bytes::from_static(b"raw")) };
    assert_eq!(unchecked.as_str(), "raw");
    let mut sorted = [Subject::from("b"), Subject::from("a")];
    sorted.sort();
    assert_eq!(sorted[0].as_str(), "a");
    Ok(())
}

#[test]
fn status_code_extras() -> Result<(), async_nats::Error> {
    assert_eq!(StatusCode::PIN_ID_MISMATCH.as_u16(), 423);
    assert_eq!(StatusCode::from_bytes(b"503")?, StatusCode::NO_RESPONDERS);
    let bad: Result<StatusCode, async_nats::status::InvalidStatusCode> =
        StatusCode::from_bytes(b"5x3");
    assert!(bad.is_err());
    assert_eq!(StatusCode::try_from(408u16)?, StatusCode::TIMEOUT);
    assert_eq!(StatusCode::try_from("404")?, StatusCode::NOT_FOUND);
    assert_eq!(StatusCode::try_from(&b"200"[..])?, StatusCode::OK);
    assert_eq!(StatusCode::default(), StatusCode::OK);
    assert!(StatusCode::from_u16(301)?.is_redirection());
    assert!(503 == StatusCode::NO_RESPONDERS);
    assert!(StatusCode::OK < StatusCode::NOT_FOUND);
    let from_ref: StatusCode = StatusCode::from(&StatusCode::OK);
    assert_eq!(from_ref, StatusCode::OK);
    assert_eq!(format!("{:?}", StatusCode::NO_RESPONDERS), "503");
    Ok(())
}

#[test]
fn server_addr_from_url() -> Result<(), async_nats::Error> {
    let url: url::Url = "nats://127.0.0.1:4222".parse()?;
    let addr = ServerAddr::from_url(url.clone())?;
    assert_eq!(addr.into_inner(), url);
    let http: url::Url = "http://127.0.0.1".parse()?;
    assert!(ServerAddr::from_url(http).is_err());
    Ok(())
}

#[test]
fn error_conversions() {
    fn connect_io() -> Result<(), async_nats::ConnectError> {
        Err(std::io::Error::other("refused"))?;
        Ok(())
    }
    assert_eq!(
        connect_io().unwrap_err().kind(),
        async_nats::ConnectErrorKind::Io
    );

    fn request_from_publish() -> Result<(), async_nats::RequestError> {
        Err(async_nats::PublishError::new(
            async_nats::PublishErrorKind::Send,
        ))?;
        Ok(())
    }
    assert_eq!(
        request_from_publish().unwrap_err().kind(),
        async_nats::RequestErrorKind::Other
    );

    fn request_from_subscribe() -> Result<(), async_nats::RequestError> {
        Err(async_nats::SubscribeError::new(
            async_nats::SubscribeErrorKind::Other,
        ))?;
        Ok(())
    }
    assert_eq!(
        request_from_subscribe().unwrap_err().kind(),
        async_nats::RequestErrorKind::Other
    );

    let boxed: async_nats::Error = Box::new(async_nats::ServerError::AuthorizationViolation);
    assert!(!boxed.to_string().is_empty());
    let err = async_nats::SetServerPoolError::new(async_nats::SetServerPoolErrorKind::EmptyPool);
    assert_eq!(err.kind(), async_nats::SetServerPoolErrorKind::EmptyPool);
    let err = async_nats::ServerPoolError::new(async_nats::ServerPoolErrorKind::Send);
    assert_eq!(err.kind(), async_nats::ServerPoolErrorKind::Send);
}

#[test]
fn serde_shapes() -> Result<(), async_nats::Error> {
    let mut headers = HeaderMap::new();
    headers.insert("k", "v");
    let message = async_nats::Message {
        subject: "a.b".into(),
        reply: None,
        payload: Bytes::from("x"),
        headers: Some(headers.clone()),
        status: Some(StatusCode::NO_RESPONDERS),
        description: Some("none".into()),
        length: 1,
    };
    let json = serde_json::to_string(&message)?;
    let back: async_nats::Message = serde_json::from_str(&json)?;
    assert_eq!(back.subject.as_str(), "a.b");
    assert_eq!(back.status, Some(StatusCode::NO_RESPONDERS));
    drop(message);

    let json = serde_json::to_string(&headers)?;
    let back: HeaderMap = serde_json::from_str(&json)?;
    assert_eq!(back, headers);

    let json = serde_json::to_string(&Subject::from("s.t"))?;
    assert_eq!(json, "\"s.t\"");
    let back: Subject = serde_json::from_str(&json)?;
    assert_eq!(back.as_str(), "s.t");

    let json = serde_json::to_string(&StatusCode::OK)?;
    let back: StatusCode = serde_json::from_str(&json)?;
    assert_eq!(back, StatusCode::OK);

    let name: HeaderName = serde_json::from_str("\"X-Name\"")?;
    assert_eq!(name.to_string(), "X-Name");
    let value: HeaderValue = serde_json::from_str("\"val\"")?;
    assert_eq!(value.as_str(), "val");

    let info: async_nats::ServerInfo =
        serde_json::from_str(r#"{"server_id":"id","max_payload":2048,"jetstream":true}"#)?;
    assert_eq!(info.max_payload, 2048);
    assert!(info.jetstream);
    Ok(())
}
