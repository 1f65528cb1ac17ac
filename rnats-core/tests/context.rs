//! natscli contexts against real nats-servers: each way of logging in a context names
//! connects, and the same context with a wrong secret is refused by the server.
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use common::*;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use rnats_core::context::{Context, ContextError, ContextStore};
use rnats_core::{ConnectErrorKind, ConnectOptions};
use rnats_test_server::{NatsServer, Operator, nkey_user};
use serde_json::json;

/// A context file as natscli writes it: every setting, empty unless `fields` sets it.
fn context_json(fields: serde_json::Value) -> Vec<u8> {
    let mut file = json!({
        "description": "", "url": "", "socks_proxy": "", "token": "", "user": "",
        "password": "", "creds": "", "nkey": "", "cert": "", "key": "", "ca": "", "nsc": "",
        "jetstream_domain": "", "jetstream_api_prefix": "", "jetstream_event_prefix": "",
        "inbox_prefix": "", "user_jwt": "", "user_seed": "", "color_scheme": "",
        "tls_first": false, "windows_cert_store": "", "windows_cert_match_by": "",
        "windows_cert_match": "", "windows_ca_certs_match": null
    });
    for (field, value) in fields.as_object().unwrap() {
        file[field] = value.clone();
    }
    serde_json::to_vec_pretty(&file).unwrap()
}

/// A context named `name` made of `fields`.
fn context(name: &str, fields: serde_json::Value) -> Context {
    Context::from_json(name, &context_json(fields)).unwrap()
}

/// Connects with `context`, which the server must accept.
async fn connects(context: &Context) {
    let client = tokio::time::timeout(WAIT, context.connect())
        .await
        .expect("a connect must not hang")
        .unwrap_or_else(|e| panic!("context {:?}: {e}", context.name()));
    round_trip(&client).await;
}

/// Connects with `context`, which the server must refuse as an authorization violation.
async fn refused(context: &Context) {
    let result = tokio::time::timeout(WAIT, context.connect())
        .await
        .expect("a refused connect must not hang");
    match result {
        Err(ContextError::Connect(e)) => assert_eq!(
            e.kind(),
            ConnectErrorKind::AuthorizationViolation,
            "context {:?}: {e}",
            context.name()
        ),
        Err(other) => panic!("context {:?}: {other}", context.name()),
        Ok(_) => panic!("context {:?} connected", context.name()),
    }
}

#[tokio::test]
async fn user_and_password_context_connects_and_a_wrong_password_is_refused() {
    let server = NatsServer::builder()
        .user_password("ann", "s3cret")
        .spawn()
        .unwrap();
    let url = server.url();
    connects(&context(
        "good",
        json!({"url": url, "user": "ann", "password": "s3cret"}),
    ))
    .await;
    // The password as a data: URI, resolved when connecting.
    connects(&context(
        "inline",
        json!({"url": url, "user": "ann", "password": "data:;base64,czNjcmV0Cg=="}),
    ))
    .await;
    refused(&context(
        "bad",
        json!({"url": url, "user": "ann", "password": "wrong"}),
    ))
    .await;
}

#[tokio::test]
async fn token_context_connects_and_a_wrong_token_is_refused() {
    let server = NatsServer::builder().token("t0ken").spawn().unwrap();
    let dir = ScratchDir::new();
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, "t0ken\n").unwrap();
    connects(&context(
        "good",
        json!({"url": server.url(), "token": "t0ken"}),
    ))
    .await;
    connects(&context(
        "file",
        json!({"url": server.url(), "token": format!("file://{}", token_file.display())}),
    ))
    .await;
    refused(&context(
        "bad",
        json!({"url": server.url(), "token": "wrong"}),
    ))
    .await;
}

#[tokio::test]
async fn creds_context_connects_from_a_file_or_inline_and_a_stranger_is_refused() {
    let operator = Operator::new();
    let app = operator.account("APP");
    let server = NatsServer::builder()
        .config(operator.server_config(&[&app]))
        .spawn()
        .unwrap();
    let dir = ScratchDir::new();
    let creds = dir.path().join("alice.creds");
    std::fs::write(&creds, app.user("alice").creds()).unwrap();
    connects(&context(
        "file",
        json!({"url": server.url(), "creds": creds.display().to_string()}),
    ))
    .await;
    let inline = format!("data:;base64,{}", STANDARD.encode(app.user("bob").creds()));
    connects(&context(
        "inline",
        json!({"url": server.url(), "creds": inline}),
    ))
    .await;
    // A user of an account this server does not trust.
    let stranger = dir.path().join("stranger.creds");
    std::fs::write(&stranger, Operator::new().account("APP").user("x").creds()).unwrap();
    refused(&context(
        "stranger",
        json!({"url": server.url(), "creds": stranger.display().to_string()}),
    ))
    .await;
}

#[tokio::test]
async fn nkey_and_jwt_contexts_connect_and_wrong_keys_are_refused() {
    let (seed, public) = nkey_user();
    let server = NatsServer::builder().nkey_users(&[public]).spawn().unwrap();
    let dir = ScratchDir::new();
    let seed_file = dir.path().join("user.nk");
    std::fs::write(&seed_file, format!("{seed}\n")).unwrap();
    connects(&context(
        "nkey",
        json!({"url": server.url(), "nkey": seed_file.display().to_string()}),
    ))
    .await;
    let (other, _) = nkey_user();
    let other_file = dir.path().join("other.nk");
    std::fs::write(&other_file, other).unwrap();
    refused(&context(
        "other",
        json!({"url": server.url(), "nkey": other_file.display().to_string()}),
    ))
    .await;

    let operator = Operator::new();
    let app = operator.account("APP");
    let server = NatsServer::builder()
        .config(operator.server_config(&[&app]))
        .spawn()
        .unwrap();
    let alice = app.user("alice");
    connects(&context(
        "jwt",
        json!({"url": server.url(), "user_jwt": alice.jwt(), "user_seed": alice.seed()}),
    ))
    .await;
    let mallory = app.user("mallory");
    refused(&context(
        "mixed",
        json!({"url": server.url(), "user_jwt": alice.jwt(), "user_seed": mallory.seed()}),
    ))
    .await;
}

#[tokio::test]
async fn the_selected_context_of_a_config_directory_connects() {
    let server = NatsServer::builder().token("sel").spawn().unwrap();
    let dir = ScratchDir::new();
    let nats = dir.path().join("nats");
    std::fs::create_dir_all(nats.join("context")).unwrap();
    std::fs::write(
        nats.join("context/local.json"),
        context_json(json!({"url": server.url(), "token": "sel"})),
    )
    .unwrap();
    std::fs::write(
        nats.join("context/other.json"),
        context_json(json!({"url": server.url(), "token": "wrong"})),
    )
    .unwrap();
    std::fs::write(nats.join("context.txt"), "local").unwrap();
    let store = ContextStore::at(dir.path());
    let selected = store.load_selected().unwrap().expect("a selected context");
    assert_eq!(selected.name(), "local");
    // The options alone, with the program's own on top, connect to the servers too.
    let client = ConnectOptions::from_context(&selected)
        .unwrap()
        .name("context-test")
        .connect(selected.servers())
        .await
        .unwrap();
    round_trip(&client).await;
    refused(&store.load("other").unwrap()).await;
}

#[tokio::test]
async fn a_context_socks_proxy_is_where_the_connection_goes() {
    let server = NatsServer::start();
    // A proxy address nothing listens on: the connect fails reaching the proxy, which shows
    // it went that way; natscli's bare `host:port` is a SOCKS5 proxy.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let proxied = context(
        "proxied",
        json!({"url": server.url(), "socks_proxy": closed.to_string()}),
    );
    let result = tokio::time::timeout(WAIT, proxied.connect())
        .await
        .expect("a refused connect must not hang");
    match result {
        Err(ContextError::Connect(e)) => assert!(
            matches!(
                e.cause(),
                Some(rnats_core::ConnectCause::Proxy(
                    rnats_core::proxy::ProxyError::Unreachable { .. }
                ))
            ),
            "{e}"
        ),
        Err(other) => panic!("{other}"),
        Ok(_) => panic!("connected around the proxy"),
    }
}
