//! The server's limits and late refusals, as `-ERR`s of their own kind (ADR-40's error list):
//! the connection limits refuse a connect, the subscription limit refuses a subscription and
//! leaves the connection up. Against a real nats-server.
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use common::{WAIT, connect_err, next_payload, wait_for};
use rnats_core::proto::ServerError;
use rnats_core::{ConnectCause, ConnectErrorKind, ConnectOptions, ConnectionEvent};
use rnats_test_server::NatsServer;

fn refused_by(err: &rnats_core::ConnectError) -> Option<&ServerError> {
    match err.cause() {
        Some(ConnectCause::Server(error)) => Some(error),
        _ => None,
    }
}

#[tokio::test]
async fn a_connect_past_max_connections_is_refused_with_its_own_error() {
    let server = NatsServer::builder()
        .config("max_connections: 1\n")
        .spawn()
        .unwrap();
    let first = rnats_core::connect(server.url()).await.unwrap();
    first.flush().await.unwrap();

    let err = connect_err(ConnectOptions::new(), server.url()).await;
    assert_eq!(
        refused_by(&err),
        Some(&ServerError::MaxConnectionsExceeded),
        "{err}"
    );
    // async-nats reports a server's refusal other than the credentials' as `Io`: the next
    // attempt may get in.
    assert_eq!(err.kind(), ConnectErrorKind::Io);
    assert!(
        err.to_string().contains("maximum connections exceeded"),
        "{err}"
    );

    // The client that got in is unaffected.
    first.flush().await.unwrap();
}

#[tokio::test]
async fn a_connect_past_the_accounts_max_connections_is_refused_with_its_own_error() {
    let config = r#"
accounts {
  LIMITED {
    users: [ { user: "a", password: "a" }, { user: "b", password: "b" } ]
    limits: { max_connections: 1 }
  }
  OPEN { users: [ { user: "c", password: "c" } ] }
}
"#;
    let server = NatsServer::builder().config(config).spawn().unwrap();
    let login = |user: &str| ConnectOptions::new().user_and_password(user.into(), user.into());
    let first = login("a").connect(server.url()).await.unwrap();
    first.flush().await.unwrap();

    let err = connect_err(login("b"), server.url()).await;
    assert_eq!(
        refused_by(&err),
        Some(&ServerError::MaxAccountConnectionsExceeded),
        "{err}"
    );
    assert_eq!(err.kind(), ConnectErrorKind::Io);

    // Another account is not limited by this one's count.
    let other = login("c").connect(server.url()).await.unwrap();
    other.flush().await.unwrap();
}

#[tokio::test]
async fn a_subscription_past_max_subscriptions_is_reported_and_the_connection_stays_up() {
    let server = NatsServer::builder()
        .config("max_subscriptions: 3\n")
        .spawn()
        .unwrap();
    let client = rnats_core::connect(server.url()).await.unwrap();
    let mut events = client.events();
    let mut first = client.subscribe("limits.first").await.unwrap();
    let mut extra = Vec::new();
    for i in 0..4 {
        extra.push(client.subscribe(format!("limits.extra.{i}")).await.unwrap());
    }
    client.flush().await.unwrap();

    let event = wait_for(&mut events, |e| {
        matches!(e, ConnectionEvent::ServerError(_))
    })
    .await;
    assert_eq!(
        event,
        ConnectionEvent::ServerError(ServerError::MaxSubscriptionsExceeded)
    );
    // The async-nats shape keeps the server's text.
    assert_eq!(
        event.to_event(),
        Some(rnats_core::Event::ServerError(
            rnats_core::ServerError::Other("maximum subscriptions exceeded".into())
        ))
    );

    // The server kept the connection, and so did the client: no reconnect, and the
    // subscription made within the limit still gets its messages.
    client
        .publish("limits.first", "still here".into())
        .await
        .unwrap();
    assert_eq!(next_payload(&mut first).await, "still here");
    assert_eq!(client.connection_state(), rnats_core::State::Connected);
    assert_eq!(
        client
            .statistics()
            .connects
            .load(std::sync::atomic::Ordering::Relaxed),
        1
    );
}

#[test]
fn the_blocking_client_reports_the_subscription_limit_and_stays_up() {
    let server = NatsServer::builder()
        .config("max_subscriptions: 3\n")
        .spawn()
        .unwrap();
    let client = ConnectOptions::new()
        .connect_blocking(server.url())
        .unwrap();
    let mut events = client.events();
    let mut first = client.subscribe("limits.first").unwrap();
    let _extra: Vec<_> = (0..4)
        .map(|i| client.subscribe(format!("limits.extra.{i}")).unwrap())
        .collect();
    client.flush().unwrap();
    let event = common::wait_for_blocking(&mut events, |e| {
        matches!(e, ConnectionEvent::ServerError(_))
    });
    assert_eq!(
        event,
        ConnectionEvent::ServerError(ServerError::MaxSubscriptionsExceeded)
    );
    client.publish("limits.first", "still here".into()).unwrap();
    let msg = first.next_timeout(WAIT).unwrap().unwrap();
    assert_eq!(msg.payload, "still here");
    assert!(client.is_connected());
}

#[test]
fn the_blocking_client_is_refused_past_max_connections() {
    let server = NatsServer::builder()
        .config("max_connections: 1\n")
        .spawn()
        .unwrap();
    let first = ConnectOptions::new()
        .connect_blocking(server.url())
        .unwrap();
    first.flush().unwrap();
    let err = ConnectOptions::new()
        .connect_blocking(server.url())
        .expect_err("the second connection is refused");
    assert_eq!(
        refused_by(&err),
        Some(&ServerError::MaxConnectionsExceeded),
        "{err}"
    );
}

#[tokio::test]
async fn an_expired_account_is_reported_ends_the_link_and_the_login_is_then_refused() {
    use rnats_test_server::Operator;
    let operator = Operator::new();
    let app = operator.account_expiring("APP", std::time::Duration::from_secs(2));
    let server = NatsServer::builder()
        .config(operator.server_config(&[&app]))
        .spawn()
        .unwrap();
    let client = common::quick()
        .credentials(&app.user("alice").creds())
        .unwrap()
        .connect(server.url())
        .await
        .unwrap();
    let mut events = client.events();
    client.flush().await.unwrap();

    // The server ends the connection when the account's JWT expires (ADR-40): the error
    // is reported, the link ends at once, and the reconnect is refused.
    assert_eq!(
        wait_for(&mut events, |e| matches!(
            e,
            ConnectionEvent::ServerError(_)
        ))
        .await,
        ConnectionEvent::ServerError(ServerError::AccountAuthenticationExpired)
    );
    let next = wait_for(&mut events, |e| {
        !matches!(e, ConnectionEvent::ServerError(_))
    })
    .await;
    assert!(
        matches!(&next, ConnectionEvent::Disconnected { reason } if reason.contains("account authentication expired")),
        "{next:?}"
    );
    let refused = wait_for(&mut events, |e| {
        matches!(e, ConnectionEvent::ReconnectFailed { .. })
    })
    .await;
    assert!(
        matches!(&refused, ConnectionEvent::ReconnectFailed { error, .. } if error.contains("authorization violation")),
        "{refused:?}"
    );
}
