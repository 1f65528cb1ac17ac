//! Authentication fixtures against a real nats-server: operator-mode JWT users and plain
//! nkey users, logging in by signing the INFO nonce.

mod common;

use common::Raw;
use rnats_test_server::{NatsServer, Operator, nkey_user, sign_nonce};

/// The nonce of a greeting.
fn nonce(info: &serde_json::Value) -> String {
    info["nonce"].as_str().expect("INFO has a nonce").to_owned()
}

#[test]
fn an_operator_mode_user_logs_in_with_its_jwt_and_nonce_signature() {
    let operator = Operator::new();
    let account = operator.account("APP");
    let user = account.user("alice");
    let server = NatsServer::builder()
        .config(operator.server_config(&[&account]))
        .spawn()
        .unwrap();

    let mut raw = Raw::connect(server.port());
    let info = raw.info();
    assert_eq!(info["auth_required"], true, "{info}");
    let connect = serde_json::json!({
        "jwt": user.jwt(),
        "sig": user.sign_nonce(&nonce(&info)),
        "protocol": 1,
        "verbose": false,
    });
    raw.send(&format!("CONNECT {connect}\r\nPING\r\n"));
    assert_eq!(raw.line(), "PONG");
}

#[test]
fn an_operator_mode_user_with_a_wrong_signature_is_rejected() {
    let operator = Operator::new();
    let account = operator.account("APP");
    let user = account.user("alice");
    let impostor = account.user("mallory");
    let server = NatsServer::builder()
        .config(operator.server_config(&[&account]))
        .spawn()
        .unwrap();

    let mut raw = Raw::connect(server.port());
    let info = raw.info();
    let connect = serde_json::json!({
        "jwt": user.jwt(),
        "sig": impostor.sign_nonce(&nonce(&info)),
        "protocol": 1,
        "verbose": false,
    });
    raw.send(&format!("CONNECT {connect}\r\nPING\r\n"));
    assert_eq!(raw.line(), "-ERR 'Authorization Violation'");
}

#[test]
fn a_user_of_an_account_the_server_does_not_know_is_rejected() {
    let operator = Operator::new();
    let known = operator.account("APP");
    let unknown = operator.account("OTHER");
    let user = unknown.user("bob");
    let server = NatsServer::builder()
        .config(operator.server_config(&[&known]))
        .spawn()
        .unwrap();

    let mut raw = Raw::connect(server.port());
    let info = raw.info();
    let connect = serde_json::json!({
        "jwt": user.jwt(),
        "sig": sign_nonce(&user.seed(), &nonce(&info)),
        "protocol": 1,
        "verbose": false,
    });
    raw.send(&format!("CONNECT {connect}\r\nPING\r\n"));
    assert_eq!(raw.line(), "-ERR 'Authorization Violation'");
}

#[test]
fn a_system_account_user_logs_in_and_jetstream_servers_accept_the_config() {
    let operator = Operator::new();
    let account = operator.account("APP");
    let admin = operator.system_account().user("admin");
    let server = NatsServer::builder()
        .jetstream(true)
        .config(operator.server_config(&[&account]))
        .spawn()
        .unwrap();

    let mut raw = Raw::connect(server.port());
    let info = raw.info();
    let connect = serde_json::json!({
        "jwt": admin.jwt(),
        "sig": admin.sign_nonce(&nonce(&info)),
        "protocol": 1,
        "verbose": false,
    });
    raw.send(&format!("CONNECT {connect}\r\nPING\r\n"));
    assert_eq!(raw.line(), "PONG");
}

#[test]
fn a_plain_nkey_user_logs_in_by_signing_the_nonce() {
    let (seed, public_key) = nkey_user();
    let server = NatsServer::builder()
        .nkey_users(&[&public_key])
        .spawn()
        .unwrap();

    let mut raw = Raw::connect(server.port());
    let info = raw.info();
    assert_eq!(info["auth_required"], true, "{info}");
    let connect = serde_json::json!({
        "nkey": public_key,
        "sig": sign_nonce(&seed, &nonce(&info)),
        "protocol": 1,
        "verbose": false,
    });
    raw.send(&format!("CONNECT {connect}\r\nPING\r\n"));
    assert_eq!(raw.line(), "PONG");
}

#[test]
fn a_plain_nkey_user_with_a_wrong_signature_is_rejected() {
    let (_, public_key) = nkey_user();
    let (other_seed, _) = nkey_user();
    let server = NatsServer::builder()
        .nkey_users(&[&public_key])
        .spawn()
        .unwrap();

    let mut raw = Raw::connect(server.port());
    let info = raw.info();
    let connect = serde_json::json!({
        "nkey": public_key,
        "sig": sign_nonce(&other_seed, &nonce(&info)),
        "protocol": 1,
        "verbose": false,
    });
    raw.send(&format!("CONNECT {connect}\r\nPING\r\n"));
    assert_eq!(raw.line(), "-ERR 'Authorization Violation'");
}
