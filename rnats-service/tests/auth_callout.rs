//! Authorization callouts (ADR-26) against a real nats-server configured with accounts in its
//! file: the callout connects as the `auth` user of account AUTH and binds the clients it
//! lets in to account APP, with the permissions it grants. `operator_mode` runs them against
//! a server in operator mode.
#![allow(clippy::unwrap_used)]

#[path = "auth_callout/operator_mode.rs"]
mod operator_mode;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures_util::{FutureExt, StreamExt};
use rnats_core::proto::{PermissionOp, ServerError};
use rnats_core::{Client, ConnectErrorKind, ConnectOptions, ConnectionEvent};
use rnats_service::auth_callout::jwt::Claims;
use rnats_service::auth_callout::nkeys::{KeyPair, XKey};
use rnats_service::auth_callout::{
    AuthCallout, AuthorizationRequest, AuthorizationResponse, CalloutError, TimeOfDay, UserClaims,
    Verdict,
};
use rnats_test_server::NatsServer;
use tokio::sync::mpsc;

/// How long any single wait may take before the test fails instead of hanging.
const WAIT: Duration = Duration::from_secs(20);

/// A server whose `auth_callout` names `issuer` (and `xkey`, when given). The auth timeout is
/// long, so a busy machine never makes the server give up on an answer that is coming.
fn server(issuer: &KeyPair, xkey: Option<&XKey>) -> NatsServer {
    server_with_timeout(issuer, xkey, 15)
}

/// A server as [`server`] makes, whose requests expire `auth_timeout` seconds after it sends
/// them.
fn server_with_timeout(issuer: &KeyPair, xkey: Option<&XKey>, auth_timeout: u32) -> NatsServer {
    let xkey = xkey.map_or(String::new(), |x| format!("xkey: {}", x.public_key()));
    let config = format!(
        r#"
accounts {{
  AUTH {{ users: [ {{ user: auth, password: pwd }} ] }}
  APP {{}}
}}
authorization {{
  timeout: {auth_timeout}
  auth_callout {{
    issuer: {issuer}
    auth_users: [ auth ]
    account: AUTH
    {xkey}
  }}
}}
"#,
        issuer = issuer.public_key(),
    );
    NatsServer::builder().config(config).spawn().unwrap()
}

async fn connect_as_callout(server: &NatsServer) -> Client {
    ConnectOptions::new()
        .user_and_password("auth".into(), "pwd".into())
        .connect(server.url())
        .await
        .unwrap()
}

/// Lets in `alice` with password `secret` and `bob` with token `bob-token`, both in APP;
/// refuses everyone else. Sends every request's CONNECT options to `seen`.
async fn decide(
    request: AuthorizationRequest,
    seen: mpsc::UnboundedSender<AuthorizationRequest>,
) -> Result<UserClaims, String> {
    let _ = seen.send(request.clone());
    let opts = request.connect_opts;
    match (
        opts.username.as_deref(),
        opts.password.as_deref(),
        opts.token.as_deref(),
    ) {
        (Some("alice"), Some("secret"), _) => Ok(UserClaims::new()
            .name("alice")
            .account("APP")
            .allow_publish("allowed.>")
            .allow_subscribe("allowed.>")
            .allow_subscribe("_INBOX.>")),
        (_, _, Some("bob-token")) => Ok(UserClaims::new().account("APP").allow_subscribe(">")),
        _ => Err("unknown user".into()),
    }
}

/// Starts a callout deciding with [`decide`]; returns it and the requests it sees.
async fn start_callout(
    server: &NatsServer,
    issuer: KeyPair,
    xkey: Option<XKey>,
) -> (AuthCallout, mpsc::UnboundedReceiver<AuthorizationRequest>) {
    let (seen, requests) = mpsc::unbounded_channel();
    let mut builder = AuthCallout::builder(issuer);
    if let Some(xkey) = xkey {
        builder = builder.xkey(xkey);
    }
    let callout = builder
        .start(connect_as_callout(server).await, move |request| {
            decide(request, seen.clone())
        })
        .await
        .unwrap();
    (callout, requests)
}

async fn connect_alice(
    server: &NatsServer,
    password: &str,
) -> Result<Client, rnats_core::ConnectError> {
    ConnectOptions::new()
        .name("alice-app")
        .user_and_password("alice".into(), password.into())
        .connect(server.url())
        .await
}

/// The client `alice` gets in, is bound to APP (where `bob` sees what she publishes), may
/// publish under `allowed.>` and is refused anything else.
async fn alice_gets_what_she_was_granted(server: &NatsServer) {
    let alice = connect_alice(server, "secret").await.unwrap();
    let bob = ConnectOptions::with_token("bob-token".into())
        .connect(server.url())
        .await
        .unwrap();
    let mut bob_sees = bob.subscribe("allowed.greeting").await.unwrap();
    bob.flush().await.unwrap();
    let mut events = alice.events();
    alice.publish("denied.greeting", "no".into()).await.unwrap();
    alice
        .publish("allowed.greeting", "hello".into())
        .await
        .unwrap();
    alice.flush().await.unwrap();
    let message = tokio::time::timeout(WAIT, bob_sees.next())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(message.payload, "hello");
    let event = tokio::time::timeout(WAIT, events.next()).await.unwrap();
    assert_eq!(
        event,
        Some(ConnectionEvent::ServerError(
            ServerError::PermissionViolation {
                operation: PermissionOp::Publish,
                subject: "denied.greeting".into(),
                queue: None,
            }
        ))
    );
}

#[tokio::test]
async fn a_callout_lets_in_the_clients_it_accepts_with_what_it_grants() {
    let issuer = KeyPair::new_account();
    let server = server(&issuer, None);
    let (callout, mut requests) = start_callout(&server, issuer, None).await;

    alice_gets_what_she_was_granted(&server).await;
    let request = requests.recv().await.unwrap();
    assert_eq!(
        (
            request.connect_opts.username.as_deref(),
            request.connect_opts.password.as_deref(),
            request.connect_opts.name.as_deref(),
            request.connect_opts.lang.as_deref(),
        ),
        (
            Some("alice"),
            Some("secret"),
            Some("alice-app"),
            Some("rust")
        )
    );
    assert_eq!(request.connect_opts.protocol, 1);
    assert_eq!(request.client_info.host.as_deref(), Some("127.0.0.1"));
    assert!(request.server.id.starts_with('N'));
    assert_eq!(request.server.xkey, None, "requests come in clear");
    assert!(request.user_nkey.starts_with('U'));

    let refused = connect_alice(&server, "guess").await.unwrap_err();
    assert_eq!(
        refused.kind(),
        ConnectErrorKind::AuthorizationViolation,
        "{refused}"
    );
    let bob = requests.recv().await.unwrap();
    assert_eq!(bob.connect_opts.token.as_deref(), Some("bob-token"));
    let refused = requests.recv().await.unwrap();
    let mut expected = request.connect_opts;
    expected.password = Some("guess".into());
    assert_eq!(refused.connect_opts, expected);
    callout.stop().await;
}

#[tokio::test]
async fn a_callout_with_the_xkey_answers_sealed_requests() {
    let issuer = KeyPair::new_account();
    let xkey = XKey::new();
    let server = server(&issuer, Some(&xkey));
    let (callout, mut requests) = start_callout(&server, issuer, Some(xkey)).await;

    alice_gets_what_she_was_granted(&server).await;
    let request = requests.recv().await.unwrap();
    assert!(
        request
            .server
            .xkey
            .as_deref()
            .is_some_and(|x| x.starts_with('X'))
    );
    let refused = connect_alice(&server, "guess").await.unwrap_err();
    assert_eq!(
        refused.kind(),
        ConnectErrorKind::AuthorizationViolation,
        "{refused}"
    );
    callout.stop().await;
}

#[tokio::test]
async fn a_callout_without_the_xkey_reports_the_sealed_requests_it_cannot_open() {
    let issuer = KeyPair::new_account();
    let server = server(&issuer, Some(&XKey::new()));
    let (errors, mut reported) = mpsc::unbounded_channel();
    let callout = AuthCallout::builder(issuer)
        .on_error(move |error| {
            let _ = errors.send(error);
        })
        .start(connect_as_callout(&server).await, |_| async {
            Ok(UserClaims::new())
        })
        .await
        .unwrap();
    // The client waits for an answer that never comes; the report is what the test awaits.
    let client = connect_in_background(&server, "alice", "secret");
    let error = tokio::time::timeout(WAIT, reported.recv())
        .await
        .unwrap()
        .unwrap();
    assert!(matches!(error, CalloutError::Encrypted), "{error}");
    client.abort();
    callout.stop().await;
}

/// Starts a callout that grants every client `UserClaims::new()` with nothing changed.
async fn start_granting_nothing_in_particular(
    server: &NatsServer,
    issuer: KeyPair,
    default_account: Option<&str>,
) -> AuthCallout {
    let mut builder = AuthCallout::builder(issuer);
    if let Some(account) = default_account {
        builder = builder.default_account(account);
    }
    builder
        .start(connect_as_callout(server).await, |request| async move {
            match request.connect_opts.token.as_deref() {
                Some("bob-token") => Ok(UserClaims::new().account("APP")),
                _ => Ok(UserClaims::new()),
            }
        })
        .await
        .unwrap()
}

/// `client` gets back what it publishes to itself, so it is in and may use its account.
async fn echoes(client: &Client) {
    let mut echo = client.subscribe("echo").await.unwrap();
    client.publish("echo", "hi".into()).await.unwrap();
    let message = tokio::time::timeout(WAIT, echo.next())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(message.payload, "hi");
}

#[tokio::test]
async fn a_user_granted_no_account_joins_the_global_account() {
    let issuer = KeyPair::new_account();
    let server = server(&issuer, None);
    let callout = start_granting_nothing_in_particular(&server, issuer, None).await;
    // The server looks the user JWT's `aud` up as an account: an empty one is never found.
    let client = connect_alice(&server, "anything").await.unwrap();
    echoes(&client).await;
    callout.stop().await;
}

#[tokio::test]
async fn a_user_granted_no_account_joins_the_default_account_set() {
    let issuer = KeyPair::new_account();
    let server = server(&issuer, None);
    let callout = start_granting_nothing_in_particular(&server, issuer, Some("APP")).await;
    let alice = connect_alice(&server, "anything").await.unwrap();
    // Bob is placed in APP explicitly: he sees what alice publishes there.
    let bob = ConnectOptions::with_token("bob-token".into())
        .connect(server.url())
        .await
        .unwrap();
    let mut bob_sees = bob.subscribe("greeting").await.unwrap();
    bob.flush().await.unwrap();
    alice.publish("greeting", "hello".into()).await.unwrap();
    let message = tokio::time::timeout(WAIT, bob_sees.next())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(message.payload, "hello");
    callout.stop().await;
}

#[tokio::test]
async fn a_user_who_never_expires_stays_connected() {
    let issuer = KeyPair::new_account();
    let server = server(&issuer, None);
    let callout = AuthCallout::new(connect_as_callout(&server).await, issuer, |_| async {
        Ok(UserClaims::new()
            .account("APP")
            .expires_after(Duration::MAX))
    })
    .await
    .unwrap();
    // Written as `exp` = i64::MAX, the server's nanosecond arithmetic overflowed and it closed
    // the connection at once as expired.
    let client = connect_alice(&server, "anything").await.unwrap();
    let mut events = client.events();
    echoes(&client).await;
    client.flush().await.unwrap();
    let event = events.next().now_or_never();
    assert_eq!(event, None, "no disconnect, no server error");
    callout.stop().await;
}

/// A callout whose handler never decides: it tells `entered` each time it is called, and
/// reports to `errors`. Requests expire 2 s after the server sends them (its default), and
/// the callout allows 4 s of clock skew on top, so a busy machine still reads them in time.
async fn start_hung_callout(
    server: &NatsServer,
    issuer: KeyPair,
    max_concurrent: usize,
) -> (
    AuthCallout,
    mpsc::UnboundedReceiver<()>,
    mpsc::UnboundedReceiver<CalloutError>,
) {
    let (entered, called) = mpsc::unbounded_channel();
    let (errors, reported) = mpsc::unbounded_channel();
    let callout = AuthCallout::builder(issuer)
        .clock_skew(Duration::from_secs(4))
        .max_concurrent_requests(max_concurrent)
        .on_error(move |error| {
            let _ = errors.send(error);
        })
        .start(connect_as_callout(server).await, move |_| {
            let _ = entered.send(());
            std::future::pending::<Result<UserClaims, String>>()
        })
        .await
        .unwrap();
    (callout, called, reported)
}

/// Connects as `user` with `password` in a task of its own: the client waits for an answer
/// that may never come.
fn connect_in_background(
    server: &NatsServer,
    user: &str,
    password: &str,
) -> tokio::task::JoinHandle<Result<Client, rnats_core::ConnectError>> {
    let url = server.url();
    let (user, password) = (user.to_owned(), password.to_owned());
    tokio::spawn(async move {
        ConnectOptions::new()
            .user_and_password(user, password)
            .connect(url)
            .await
    })
}

#[tokio::test]
async fn a_hung_handler_is_cut_off_when_its_request_expires() {
    let issuer = KeyPair::new_account();
    let server = server_with_timeout(&issuer, None, 2);
    let (callout, mut called, mut reported) = start_hung_callout(&server, issuer, 16).await;
    let client = connect_in_background(&server, "alice", "secret");
    tokio::time::timeout(WAIT, called.recv())
        .await
        .unwrap()
        .unwrap();
    // `stop` waits for the request in progress, but only until it expires.
    tokio::time::timeout(WAIT, callout.stop())
        .await
        .expect("stop returns once the hung request expires");
    let error = reported.try_recv().unwrap();
    assert!(matches!(error, CalloutError::Timeout), "{error}");
    client.abort();
}

#[tokio::test]
async fn requests_beyond_the_concurrency_cap_are_dropped_and_reported() {
    let issuer = KeyPair::new_account();
    let server = server_with_timeout(&issuer, None, 2);
    let (callout, mut called, mut reported) = start_hung_callout(&server, issuer, 1).await;
    let first = connect_in_background(&server, "alice", "secret");
    tokio::time::timeout(WAIT, called.recv())
        .await
        .unwrap()
        .unwrap();
    let second = connect_in_background(&server, "alice", "secret");
    let error = tokio::time::timeout(WAIT, reported.recv())
        .await
        .unwrap()
        .unwrap();
    assert!(matches!(error, CalloutError::Busy(1)), "{error}");
    assert!(
        called.try_recv().is_err(),
        "the second request was not handled"
    );
    tokio::time::timeout(WAIT, callout.stop()).await.unwrap();
    first.abort();
    second.abort();
}

#[tokio::test]
async fn a_panicking_error_callback_does_not_stop_the_callout() {
    let issuer = KeyPair::new_account();
    let server = server(&issuer, None);
    let (errors, mut reported) = mpsc::unbounded_channel();
    let callout = AuthCallout::builder(issuer)
        .on_error(move |error| {
            let _ = errors.send(error);
            panic!("the error callback panics");
        })
        .start(connect_as_callout(&server).await, |request| async move {
            assert_ne!(
                request.connect_opts.username.as_deref(),
                Some("boom"),
                "the handler panics"
            );
            Ok(UserClaims::new().account("APP"))
        })
        .await
        .unwrap();
    let boom = connect_in_background(&server, "boom", "boom");
    let error = tokio::time::timeout(WAIT, reported.recv())
        .await
        .unwrap()
        .unwrap();
    assert!(matches!(error, CalloutError::HandlerPanicked), "{error}");
    // The callback panicked reporting that; the callout still answers.
    let alice = connect_alice(&server, "anything").await.unwrap();
    echoes(&alice).await;
    boom.abort();
    callout.stop().await;
}

#[tokio::test]
async fn an_aborting_handler_sends_no_answer() {
    let issuer = KeyPair::new_account();
    let server = server(&issuer, None);
    let (aborted, mut aborts) = mpsc::unbounded_channel();
    let callout = AuthCallout::builder(issuer)
        .start(connect_as_callout(&server).await, move |request| {
            let aborted = aborted.clone();
            async move {
                if request.connect_opts.password.as_deref() == Some("guess") {
                    let _ = aborted.send(());
                    return Verdict::Abort;
                }
                Verdict::Allow(UserClaims::new().account("APP"))
            }
        })
        .await
        .unwrap();
    // The server's replies travel in the callout's account, on `$SYS._INBOX.>`.
    let monitor = connect_as_callout(&server).await;
    let mut replies = monitor.subscribe("$SYS._INBOX.>").await.unwrap();
    monitor.flush().await.unwrap();

    let guesser = connect_in_background(&server, "alice", "guess");
    tokio::time::timeout(WAIT, aborts.recv())
        .await
        .unwrap()
        .unwrap();
    connect_alice(&server, "secret").await.unwrap();
    // The first reply the callout sent is alice's welcome: nothing went to the guesser.
    let reply = tokio::time::timeout(WAIT, replies.next())
        .await
        .unwrap()
        .unwrap();
    let response =
        Claims::<AuthorizationResponse>::decode(std::str::from_utf8(&reply.payload).unwrap())
            .unwrap();
    assert_eq!(response.nats.error, None);
    assert!(response.nats.jwt.is_some());
    assert!(!guesser.is_finished(), "the guesser still waits");
    guesser.abort();
    callout.stop().await;
}

#[tokio::test]
async fn a_user_that_requires_a_proxy_is_refused_a_direct_connection() {
    let issuer = KeyPair::new_account();
    let server = server(&issuer, None);
    let callout = AuthCallout::new(
        connect_as_callout(&server).await,
        issuer,
        |request| async move {
            let user = UserClaims::new().account("APP");
            match request.connect_opts.username.as_deref() {
                Some("alice") => Ok(user.require_proxy()),
                _ => Ok(user),
            }
        },
    )
    .await
    .unwrap();
    let refused = connect_alice(&server, "secret").await.unwrap_err();
    assert_eq!(
        refused.kind(),
        ConnectErrorKind::AuthorizationViolation,
        "{refused}"
    );
    let bob = ConnectOptions::new()
        .user_and_password("bob".into(), "secret".into())
        .connect(server.url())
        .await
        .unwrap();
    echoes(&bob).await;
    callout.stop().await;
}

#[tokio::test]
async fn the_server_lets_users_in_only_within_their_connect_windows() {
    let issuer = KeyPair::new_account();
    let server = server(&issuer, None);
    // The time of day in UTC `hours` from now; windows two hours wide around now, or an hour
    // away from it, do not move across it while the test runs.
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let in_hours = move |hours: u64| TimeOfDay::from_seconds_after_midnight(now + hours * 3600);
    let callout = AuthCallout::new(
        connect_as_callout(&server).await,
        issuer,
        move |request| async move {
            let user = UserClaims::new().account("APP");
            let (window, zone) = match request.connect_opts.username.as_deref() {
                // From an hour ago (23 hours ahead) to an hour ahead.
                Some("open") => ((in_hours(23), in_hours(1)), "UTC"),
                Some("closed") => ((in_hours(1), in_hours(2)), "UTC"),
                _ => ((in_hours(23), in_hours(1)), "Nowhere/Atlantis"),
            };
            Ok(user
                .allow_connect_between(window.0, window.1)
                .times_location(zone))
        },
    )
    .await
    .unwrap();
    let open = connect_alice_as(&server, "open").await.unwrap();
    echoes(&open).await;
    for user in ["closed", "nowhere"] {
        let refused = connect_alice_as(&server, user).await.unwrap_err();
        assert_eq!(
            refused.kind(),
            ConnectErrorKind::AuthorizationViolation,
            "{user}: {refused}"
        );
    }
    callout.stop().await;
}

async fn connect_alice_as(
    server: &NatsServer,
    user: &str,
) -> Result<Client, rnats_core::ConnectError> {
    ConnectOptions::new()
        .user_and_password(user.into(), "secret".into())
        .connect(server.url())
        .await
}
