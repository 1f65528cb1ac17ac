//! Nkey, user JWT, `.creds` and callback authentication against real nats-servers: operator
//! mode with a memory resolver, and plain nkey users.
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use common::*;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use rnats_core::{
    AuthError, ClientError, ConnectCause, ConnectErrorKind, ConnectOptions, ConnectionEvent,
    SignedAuth,
};
use rnats_test_server::{Account, NatsServer, Operator, nkey_user, sign_nonce};

/// An operator-mode server that knows `APP` (and the system account) through a memory
/// resolver; returns the operator too, to make accounts the server does not know.
fn operator_server() -> (NatsServer, Operator, Account) {
    let operator = Operator::new();
    let app = operator.account("APP");
    let server = NatsServer::builder()
        .config(operator.server_config(&[&app]))
        .spawn()
        .unwrap();
    (server, operator, app)
}

#[tokio::test]
async fn creds_text_user_connects_and_round_trips() {
    let (server, _operator, app) = operator_server();
    let alice = app.user("alice");
    let client = ConnectOptions::new()
        .credentials(&alice.creds())
        .unwrap()
        .connect(server.url())
        .await
        .unwrap();
    round_trip(&client).await;
}

#[tokio::test]
async fn creds_file_user_connects_and_round_trips() {
    let (server, _operator, app) = operator_server();
    let alice = app.user("alice");
    let dir = ScratchDir::new();
    let path = dir.path().join("alice.creds");
    std::fs::write(&path, alice.creds()).unwrap();
    let client = ConnectOptions::new()
        .credentials_file(&path)
        .await
        .unwrap()
        .connect(server.url())
        .await
        .unwrap();
    round_trip(&client).await;
}

#[tokio::test]
async fn jwt_and_seed_user_connects_and_round_trips() {
    let (server, _operator, app) = operator_server();
    let alice = app.user("alice");
    let client = ConnectOptions::new()
        .jwt_and_seed(alice.jwt(), alice.seed())
        .connect(server.url())
        .await
        .unwrap();
    round_trip(&client).await;
}

#[tokio::test]
async fn two_users_of_one_account_talk_to_each_other() {
    let (server, _operator, app) = operator_server();
    let alice = ConnectOptions::new()
        .credentials(&app.user("alice").creds())
        .unwrap()
        .connect(server.url())
        .await
        .unwrap();
    let bob = app.user("bob");
    let bob = ConnectOptions::new()
        .jwt_and_seed(bob.jwt(), bob.seed())
        .connect(server.url())
        .await
        .unwrap();
    let mut sub = alice.subscribe("shared").await.unwrap();
    alice.flush().await.unwrap();
    bob.publish("shared", "from bob".into()).await.unwrap();
    let msg = tokio::time::timeout(WAIT, sub.next())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(msg.payload, Bytes::from("from bob"));
}

#[tokio::test]
async fn seed_not_matching_the_jwt_is_an_authorization_violation() {
    let (server, _operator, app) = operator_server();
    let alice = app.user("alice");
    let mallory = app.user("mallory");
    // Alice's JWT, but the nonce signed by Mallory's key.
    let err = connect_err(
        ConnectOptions::new().jwt_and_seed(alice.jwt(), mallory.seed()),
        server.url(),
    )
    .await;
    assert!(
        matches!(err.cause(), Some(ConnectCause::AuthorizationViolation)),
        "{err}"
    );

    // The same mix in a .creds file.
    let mixed = alice.creds().replace(&alice.seed(), &mallory.seed());
    let err = connect_err(
        ConnectOptions::new().credentials(&mixed).unwrap(),
        server.url(),
    )
    .await;
    assert!(
        matches!(err.cause(), Some(ConnectCause::AuthorizationViolation)),
        "{err}"
    );
}

#[tokio::test]
async fn user_of_an_account_the_server_does_not_know_is_an_authorization_violation() {
    let (server, operator, _app) = operator_server();
    // Signed by the trusted operator, but never preloaded into the memory resolver.
    let stranger = operator.account("UNKNOWN").user("stranger");
    let err = connect_err(
        ConnectOptions::new()
            .credentials(&stranger.creds())
            .unwrap(),
        server.url(),
    )
    .await;
    assert!(
        matches!(err.cause(), Some(ConnectCause::AuthorizationViolation)),
        "{err}"
    );

    // An account of another operator altogether.
    let foreign = Operator::new().account("APP").user("foreign");
    let err = connect_err(
        ConnectOptions::new().jwt_and_seed(foreign.jwt(), foreign.seed()),
        server.url(),
    )
    .await;
    assert!(
        matches!(err.cause(), Some(ConnectCause::AuthorizationViolation)),
        "{err}"
    );
}

#[tokio::test]
async fn no_credentials_against_operator_mode_is_an_authorization_violation() {
    let (server, _operator, _app) = operator_server();
    let err = connect_err(ConnectOptions::new(), server.url()).await;
    assert!(
        matches!(err.cause(), Some(ConnectCause::AuthorizationViolation)),
        "{err}"
    );
}

#[test]
fn malformed_creds_text_is_an_auth_error() {
    let user = Operator::new().account("APP").user("alice");
    let creds = user.creds();
    let without_seed = creds
        .lines()
        .take_while(|line| !line.contains("BEGIN USER NKEY SEED"))
        .collect::<Vec<_>>()
        .join("\n");
    let without_jwt = creds
        .lines()
        .skip_while(|line| !line.contains("IMPORTANT"))
        .collect::<Vec<_>>()
        .join("\n");
    let bad_seed = creds.replace(&user.seed(), "SUNOTAREALSEED");
    let cases = [
        ("empty", String::new()),
        ("garbage", "this is not a creds file\n".to_owned()),
        ("without the seed block", without_seed),
        ("without the JWT block", without_jwt),
        ("with a broken seed", bad_seed),
    ];
    for (what, text) in cases {
        match ConnectOptions::new().credentials(&text) {
            Ok(_) => panic!("creds {what} were accepted"),
            Err(err) => {
                assert_eq!(err.kind(), std::io::ErrorKind::InvalidData, "{what}: {err}");
                assert!(auth_error(&err).is_some(), "{what}: {err}");
                // The error must not echo the secret back.
                assert!(!err.to_string().contains(&user.seed()), "{what}: {err}");
                println!("{what}: {err}");
            }
        }
    }
}

#[tokio::test]
async fn missing_creds_file_is_an_auth_error_naming_the_path() {
    let dir = ScratchDir::new();
    let path = dir.path().join("nobody-here.creds");
    let err = match ConnectOptions::new().credentials_file(&path).await {
        Ok(_) => panic!("a missing creds file was accepted"),
        Err(err) => err,
    };
    assert_eq!(err.kind(), std::io::ErrorKind::NotFound, "{err}");
    assert!(
        matches!(auth_error(&err), Some(AuthError::Io { .. })),
        "{err}"
    );
    assert!(
        err.to_string().contains("nobody-here.creds"),
        "the error does not name the file: {err}"
    );
}

#[tokio::test]
async fn creds_file_is_read_at_call_time_and_again_at_connect() {
    let (server, _operator, app) = operator_server();
    let alice = app.user("alice");
    let dir = ScratchDir::new();
    let path = dir.path().join("alice.creds");
    std::fs::write(&path, alice.creds()).unwrap();
    let options = ConnectOptions::new().credentials_file(&path).await.unwrap();
    // The options name the file, not what it held: a file gone by the connect fails it.
    std::fs::remove_file(&path).unwrap();
    let err = connect_err(options.clone(), server.url()).await;
    assert_eq!(err.kind(), ConnectErrorKind::Authentication, "{err}");
    assert!(err.to_string().contains("alice.creds"), "{err}");
    std::fs::write(&path, alice.creds()).unwrap();
    let client = options.connect(server.url()).await.unwrap();
    client.flush().await.unwrap();
}

/// An operator-mode server like [`operator_server`], with its monitoring port open.
fn monitored_operator_server() -> (NatsServer, Account) {
    let operator = Operator::new();
    let app = operator.account("APP");
    let server = NatsServer::builder()
        .config(operator.server_config(&[&app]))
        .monitoring()
        .spawn()
        .unwrap();
    (server, app)
}

/// The user (public nkey) the server authenticated the connection named `name` as, once
/// the server lists exactly one such connection.
fn authorized_user(server: &NatsServer, name: &str) -> String {
    let named = |body: &serde_json::Value| -> Vec<serde_json::Value> {
        body["connections"]
            .as_array()
            .map(|all| all.iter().filter(|c| c["name"] == name).cloned().collect())
            .unwrap_or_default()
    };
    let body = server
        .wait_for_monitor("/connz?auth=true", WAIT, |body| named(body).len() == 1)
        .unwrap();
    named(&body)[0]["authorized_user"]
        .as_str()
        .unwrap_or_else(|| panic!("no authorized_user in {body}"))
        .to_owned()
}

/// Writes `text` to `path` the way a rotation should: a new file renamed over the old one.
fn replace_file(path: &std::path::Path, text: &str) {
    let next = path.with_extension("next");
    std::fs::write(&next, text).unwrap();
    std::fs::rename(&next, path).unwrap();
}

#[tokio::test]
async fn a_creds_file_replaced_on_disk_is_used_by_the_next_reconnect() {
    let (mut server, app) = monitored_operator_server();
    let (alice, bob) = (app.user("alice"), app.user("bob"));
    let dir = ScratchDir::new();
    let path = dir.path().join("app.creds");
    std::fs::write(&path, alice.creds()).unwrap();
    let client = quick()
        .name("rotating")
        .credentials_file(&path)
        .await
        .unwrap()
        .connect(server.url())
        .await
        .unwrap();
    let mut events = client.events();
    round_trip(&client).await;
    assert_eq!(authorized_user(&server, "rotating"), alice.public_key());

    // Alice's JWT is about to expire: the file now holds bob's, and the server restarts.
    replace_file(&path, &bob.creds());
    server.restart().unwrap();
    wait_for(&mut events, |e| *e == ConnectionEvent::Reconnected).await;
    round_trip(&client).await;
    assert_eq!(authorized_user(&server, "rotating"), bob.public_key());
}

#[tokio::test]
async fn a_creds_file_broken_at_a_reconnect_fails_that_attempt_and_the_next_one_recovers() {
    let (server, app) = monitored_operator_server();
    let (alice, bob) = (app.user("alice"), app.user("bob"));
    let dir = ScratchDir::new();
    let path = dir.path().join("app.creds");
    std::fs::write(&path, alice.creds()).unwrap();
    let client = quick()
        .name("broken")
        .credentials_file(&path)
        .await
        .unwrap()
        .connect(server.url())
        .await
        .unwrap();
    let mut events = client.events();

    replace_file(&path, "this is not a creds file\n");
    client.force_reconnect().await.unwrap();
    let failed = wait_for(&mut events, |e| {
        matches!(e, ConnectionEvent::ReconnectFailed { .. })
    })
    .await;
    let ConnectionEvent::ReconnectFailed { error, .. } = failed else {
        unreachable!()
    };
    assert!(
        error.contains("JWT"),
        "the error does not say what is wrong: {error}"
    );

    // The attempts go on, and the first one after the file is whole again gets in.
    replace_file(&path, &bob.creds());
    wait_for(&mut events, |e| *e == ConnectionEvent::Reconnected).await;
    round_trip(&client).await;
    assert_eq!(authorized_user(&server, "broken"), bob.public_key());
}

#[tokio::test]
async fn an_async_auth_callback_rotates_the_jwt_at_every_connect() {
    let (mut server, app) = monitored_operator_server();
    let users = Arc::new([app.user("alice"), app.user("bob")]);
    let calls = Arc::new(AtomicUsize::new(0));
    let (in_callback, counter) = (Arc::clone(&users), Arc::clone(&calls));
    let client = ConnectOptions::with_auth_callback(move |nonce: Vec<u8>| {
        // Each connect gets the next user's JWT, as a token service would hand out.
        let user = in_callback[counter.fetch_add(1, Ordering::SeqCst) % 2].clone();
        async move {
            let key_pair = nkeys::KeyPair::from_seed(&user.seed()).map_err(AuthError::new)?;
            let mut auth = rnats_core::Auth::new();
            auth.jwt = Some(user.jwt().to_owned());
            auth.signature = Some(key_pair.sign(&nonce).map_err(AuthError::new)?);
            Ok(auth)
        }
    })
    .name("rotating")
    .reconnect_delay_callback(|_| Duration::from_millis(20))
    .connect(server.url())
    .await
    .unwrap();
    let mut events = client.events();
    assert_eq!(authorized_user(&server, "rotating"), users[0].public_key());
    server.restart().unwrap();
    wait_for(&mut events, |e| *e == ConnectionEvent::Reconnected).await;
    round_trip(&client).await;
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert_eq!(authorized_user(&server, "rotating"), users[1].public_key());
}

#[tokio::test]
async fn plain_nkey_user_connects_and_a_wrong_seed_is_rejected() {
    let (seed, public) = nkey_user();
    let server = NatsServer::builder().nkey_users(&[public]).spawn().unwrap();
    let client = ConnectOptions::new()
        .nkey(seed)
        .connect(server.url())
        .await
        .unwrap();
    round_trip(&client).await;

    let (other_seed, _) = nkey_user();
    let err = connect_err(ConnectOptions::new().nkey(other_seed), server.url()).await;
    assert!(
        matches!(err.cause(), Some(ConnectCause::AuthorizationViolation)),
        "{err}"
    );

    let err = connect_err(ConnectOptions::new(), server.url()).await;
    assert!(
        matches!(err.cause(), Some(ConnectCause::AuthorizationViolation)),
        "{err}"
    );
}

#[tokio::test]
async fn auth_callback_signing_with_the_users_seed_connects_in_operator_mode() {
    let (server, _operator, app) = operator_server();
    let alice = app.user("alice");
    let (jwt, seed) = (alice.jwt().to_owned(), alice.seed());
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&calls);
    let client = ConnectOptions::new()
        .auth_callback(move |nonce: &[u8]| -> Result<SignedAuth, AuthError> {
            counter.fetch_add(1, Ordering::SeqCst);
            let nonce = std::str::from_utf8(nonce).unwrap();
            assert!(!nonce.is_empty(), "the server always sends a nonce here");
            Ok(SignedAuth {
                jwt: Some(jwt.clone()),
                nkey: None,
                sig: sign_nonce(&seed, nonce),
            })
        })
        .connect(server.url())
        .await
        .unwrap();
    round_trip(&client).await;
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn auth_callback_signing_for_a_plain_nkey_user_connects() {
    let (seed, public) = nkey_user();
    let server = NatsServer::builder()
        .nkey_users(std::slice::from_ref(&public))
        .spawn()
        .unwrap();
    let client = ConnectOptions::new()
        .auth_callback(move |nonce: &[u8]| -> Result<SignedAuth, AuthError> {
            let nonce = std::str::from_utf8(nonce).unwrap();
            Ok(SignedAuth {
                jwt: None,
                nkey: Some(public.clone()),
                sig: sign_nonce(&seed, nonce),
            })
        })
        .connect(server.url())
        .await
        .unwrap();
    round_trip(&client).await;
}

#[tokio::test]
async fn async_auth_callback_answers_a_plain_nkey_users_nonce_with_raw_signature_bytes() {
    let (seed, public) = nkey_user();
    let server = NatsServer::builder()
        .nkey_users(std::slice::from_ref(&public))
        .spawn()
        .unwrap();
    let key_pair = Arc::new(nkeys::KeyPair::from_seed(&seed).unwrap());
    let client = ConnectOptions::with_auth_callback(move |nonce: Vec<u8>| {
        let key_pair = Arc::clone(&key_pair);
        async move {
            let mut auth = rnats_core::Auth::new();
            auth.nkey = Some(key_pair.public_key());
            auth.signature = Some(key_pair.sign(&nonce).map_err(AuthError::new)?);
            Ok(auth)
        }
    })
    .connect(server.url())
    .await
    .unwrap();
    round_trip(&client).await;
}

#[tokio::test]
async fn with_jwt_signs_the_nonce_through_an_async_callback_in_operator_mode() {
    let (server, _operator, app) = operator_server();
    let alice = app.user("alice");
    let key_pair = Arc::new(nkeys::KeyPair::from_seed(&alice.seed()).unwrap());
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&calls);
    let client = ConnectOptions::with_jwt(alice.jwt().to_owned(), move |nonce| {
        let key_pair = Arc::clone(&key_pair);
        counter.fetch_add(1, Ordering::SeqCst);
        async move { key_pair.sign(&nonce).map_err(AuthError::new) }
    })
    .connect(server.url())
    .await
    .unwrap();
    round_trip(&client).await;
    assert_eq!(calls.load(Ordering::SeqCst), 1);

    // A signer that fails fails the connect with the async-nats kind.
    let err = connect_err(
        ConnectOptions::with_jwt(alice.jwt().to_owned(), |_| async {
            Err(AuthError::new("key store unreachable"))
        }),
        server.url(),
    )
    .await;
    assert_eq!(err.kind(), rnats_core::ConnectErrorKind::Authentication);
    assert!(err.to_string().contains("key store unreachable"), "{err}");
}

#[tokio::test]
async fn auth_callback_with_a_wrong_signature_is_an_authorization_violation() {
    let (server, _operator, app) = operator_server();
    let alice = app.user("alice");
    let (jwt, wrong_seed) = (alice.jwt().to_owned(), app.user("mallory").seed());
    let err = connect_err(
        ConnectOptions::new().auth_callback(move |nonce: &[u8]| {
            Ok(SignedAuth {
                jwt: Some(jwt.clone()),
                nkey: None,
                sig: sign_nonce(&wrong_seed, std::str::from_utf8(nonce).unwrap()),
            })
        }),
        server.url(),
    )
    .await;
    assert!(
        matches!(err.cause(), Some(ConnectCause::AuthorizationViolation)),
        "{err}"
    );
}

#[tokio::test]
async fn failing_auth_callback_fails_the_connect() {
    let (server, _operator, _app) = operator_server();
    let result = tokio::time::timeout(
        WAIT,
        ConnectOptions::new()
            .auth_callback(|_: &[u8]| Err(AuthError::Callback("vault down".into())))
            .connect(server.url()),
    )
    .await
    .expect("a failing callback must not hang the connect");
    match result {
        Ok(_) => panic!("connected although the callback failed"),
        Err(err) => println!("failing callback: {err}"),
    }
}

#[tokio::test]
async fn jwt_user_reauthenticates_after_a_restart() {
    let (mut server, _operator, app) = operator_server();
    let alice = app.user("alice");
    let client = ConnectOptions::new()
        .credentials(&alice.creds())
        .unwrap()
        .reconnect_delay_callback(|_| Duration::from_millis(20))
        .connect(server.url())
        .await
        .unwrap();
    let mut events = client.events();
    round_trip(&client).await;
    // The new server process sends a new nonce; the client must sign it again.
    server.restart().unwrap();
    wait_for(&mut events, |e| *e == ConnectionEvent::Reconnected).await;
    client.flush().await.unwrap();
    round_trip(&client).await;
}

#[tokio::test]
async fn auth_callback_is_called_again_on_reconnect() {
    let (seed, public) = nkey_user();
    let mut server = NatsServer::builder()
        .nkey_users(std::slice::from_ref(&public))
        .spawn()
        .unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&calls);
    let client = ConnectOptions::new()
        .auth_callback(move |nonce: &[u8]| {
            counter.fetch_add(1, Ordering::SeqCst);
            Ok(SignedAuth {
                jwt: None,
                nkey: Some(public.clone()),
                sig: sign_nonce(&seed, std::str::from_utf8(nonce).unwrap()),
            })
        })
        .reconnect_delay_callback(|_| Duration::from_millis(20))
        .connect(server.url())
        .await
        .unwrap();
    let mut events = client.events();
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    server.restart().unwrap();
    wait_for(&mut events, |e| *e == ConnectionEvent::Reconnected).await;
    round_trip(&client).await;
    assert!(calls.load(Ordering::SeqCst) >= 2);
}

#[tokio::test]
async fn debug_of_options_never_shows_the_seed_or_the_jwt() {
    let user = Operator::new().account("APP").user("alice");
    let seed = user.seed();
    let jwt = user.jwt().to_owned();
    // The part after the `SU` prefix is the secret itself.
    let secret = &seed[2..];
    let dir = ScratchDir::new();
    let path = dir.path().join("alice.creds");
    std::fs::write(&path, user.creds()).unwrap();
    let (nkey_seed, _) = nkey_user();

    let shown = [
        (
            "credentials",
            format!(
                "{:?}",
                ConnectOptions::new().credentials(&user.creds()).unwrap()
            ),
        ),
        (
            "credentials_file",
            format!(
                "{:?}",
                ConnectOptions::new().credentials_file(&path).await.unwrap()
            ),
        ),
        (
            "jwt_and_seed",
            format!(
                "{:?}",
                ConnectOptions::new().jwt_and_seed(jwt.clone(), seed.clone())
            ),
        ),
        (
            "nkey",
            format!("{:?}", ConnectOptions::new().nkey(nkey_seed.clone())),
        ),
    ];
    for (what, text) in shown {
        assert!(!text.contains(secret), "{what}: seed leaked: {text}");
        assert!(
            !text.contains(&nkey_seed[2..]),
            "{what}: seed leaked: {text}"
        );
        assert!(!text.contains(&jwt), "{what}: JWT leaked: {text}");
        // Not even the JWT's signature part.
        let jwt_sig = jwt.rsplit('.').next().unwrap();
        assert!(!text.contains(jwt_sig), "{what}: JWT leaked: {text}");
    }
}

/// The credentials error inside an `io::Error` from the credentials loaders.
fn auth_error(err: &std::io::Error) -> Option<&AuthError> {
    err.get_ref()?.downcast_ref::<AuthError>()
}

/// A server with a system account and an application account, a user in each.
fn server_with_a_system_account() -> NatsServer {
    NatsServer::builder()
        .config(
            "accounts {\n  SYS { users [{user: sys, password: pw}] }\n  \
             APP { users [{user: app, password: pw}] }\n}\nsystem_account: SYS\n",
        )
        .spawn()
        .unwrap()
}

#[tokio::test]
async fn the_server_says_whether_the_user_is_in_the_system_account() {
    let server = server_with_a_system_account();
    let url = format!("nats://127.0.0.1:{}", server.port());
    for (user, system) in [("sys", true), ("app", false)] {
        let client = ConnectOptions::with_user_and_password(user.into(), "pw".into())
            .connect(&url)
            .await
            .unwrap();
        // The answer to CONNECT came right behind the handshake's PONG; a flush makes sure
        // it is in even when it came in a read of its own.
        client.flush().await.unwrap();
        assert_eq!(client.is_system_account(), system, "{user}");
        let account = if system { "SYS" } else { "APP" };
        assert_eq!(
            client.server_info().remote_account.as_deref(),
            Some(account)
        );

        let blocking = ConnectOptions::with_user_and_password(user.into(), "pw".into())
            .connect_blocking(&url)
            .unwrap();
        blocking.flush().unwrap();
        assert_eq!(blocking.is_system_account(), system, "blocking {user}");
        assert_eq!(
            blocking.server_info().remote_account.as_deref(),
            Some(account)
        );
        blocking.close();
    }
}

/// A server whose configuration file names the users `keep` and `gone` (password `pw`), and
/// the file, rewritten by [`drop_user_gone`].
fn server_with_two_users() -> (NatsServer, ScratchDir, std::path::PathBuf) {
    let dir = ScratchDir::new();
    let conf = dir.path().join("users.conf");
    std::fs::write(
        &conf,
        "authorization { users [{user: keep, password: pw}, {user: gone, password: pw}] }\n",
    )
    .unwrap();
    let server = NatsServer::builder().config_file(&conf).spawn().unwrap();
    (server, dir, conf)
}

/// Removes the user `gone` and has the server reload its configuration: it closes that
/// user's connections and refuses the login from then on.
fn drop_user_gone(server: &NatsServer, conf: &std::path::Path) {
    std::fs::write(
        conf,
        "authorization { users [{user: keep, password: pw}] }\n",
    )
    .unwrap();
    server.signal("reload").unwrap();
}

#[tokio::test]
async fn a_login_refused_twice_in_a_row_closes_the_client_when_asked() {
    let (server, _dir, conf) = server_with_two_users();
    let client = ConnectOptions::with_user_and_password("gone".into(), "pw".into())
        .close_on_repeated_auth_error()
        .reconnect_delay_callback(|_| Duration::from_millis(20))
        .connect(server.url())
        .await
        .unwrap();
    let mut events = client.events();
    client.flush().await.unwrap();

    drop_user_gone(&server, &conf);
    wait_for(&mut events, |e| {
        matches!(e, ConnectionEvent::ClientError(ClientError::Other(why)) if why.contains("twice"))
    })
    .await;
    wait_for(&mut events, |e| *e == ConnectionEvent::Closed).await;
    assert!(client.is_closed());
}

#[test]
fn a_login_refused_twice_in_a_row_closes_the_blocking_client_when_asked() {
    let (server, _dir, conf) = server_with_two_users();
    let client = ConnectOptions::with_user_and_password("gone".into(), "pw".into())
        .close_on_repeated_auth_error()
        .reconnect_delay_callback(|_| Duration::from_millis(20))
        .connect_blocking(server.url())
        .unwrap();
    let mut events = client.events();
    client.flush().unwrap();

    drop_user_gone(&server, &conf);
    let mut told = false;
    wait_for_blocking(&mut events, |event| {
        if let ConnectionEvent::ClientError(ClientError::Other(why)) = event {
            told |= why.contains("twice");
        }
        *event == ConnectionEvent::Closed
    });
    assert!(told, "the give-up was not reported");
    assert!(client.is_closed());
}
