//! Connection flags beyond tokens and passwords: NKey seed files, TLS with a CA and a client
//! certificate, and `NATS_URL`; and who the server says the user is (`account info`).

mod common;

use common::Rnats;
use rnats_test_server::{NatsServer, TestCa, nkey_user};

#[test]
fn an_nkey_seed_file_authenticates() {
    let (seed, public) = nkey_user();
    let server = NatsServer::builder()
        .nkey_users(&[public])
        .spawn()
        .expect("server");
    let url = server.url();
    let dir = tempfile::tempdir().expect("temp dir");
    let seed_file = dir.path().join("user.nk");
    std::fs::write(&seed_file, format!("{seed}\n")).expect("write seed");
    let seed_file = seed_file.to_string_lossy().into_owned();
    let rnats = Rnats::new();
    rnats.ok(&["rtt", "--count", "1", "--nkey", &seed_file, "-s", &url]);
    let line = rnats.fails(&["rtt", "-s", &url]);
    assert!(line.contains("authorization violation"), "{line}");
    let line = rnats.fails(&["rtt", "--nkey", "/nonexistent/user.nk", "-s", &url]);
    assert!(line.contains("cannot read NKey seed file"), "{line}");
}

#[test]
fn tls_with_a_ca_and_a_client_certificate() {
    let dir = tempfile::tempdir().expect("temp dir");
    let files = TestCa::new().write_to(dir.path()).expect("certificates");
    let server = NatsServer::builder()
        .tls(&files, true, false)
        .spawn()
        .expect("server");
    let url = format!("tls://127.0.0.1:{}", server.port());
    let path = |p: &std::path::Path| p.to_string_lossy().into_owned();
    let (ca, cert, key) = (
        path(&files.ca),
        path(&files.client_cert),
        path(&files.client_key),
    );
    let rnats = Rnats::new();
    let info = rnats.json(&[
        "server",
        "info",
        "--json",
        "--tls-ca",
        &ca,
        "--tls-cert",
        &cert,
        "--tls-key",
        &key,
        "-s",
        &url,
    ]);
    assert_eq!(info["tls_required"], true);
    let text = rnats.ok(&[
        "account",
        "info",
        "--tls-ca",
        &ca,
        "--tls-cert",
        &cert,
        "--tls-key",
        &key,
        "-s",
        &url,
    ]);
    assert_eq!(field(&text, "TLS connection"), "yes", "{text}");
    // Without the client certificate the server refuses us.
    let line = rnats.fails(&["rtt", "--tls-ca", &ca, "-s", &url]);
    assert!(
        line.starts_with(&format!("error: cannot connect to {url}")),
        "{line}"
    );
    let line = rnats.fails(&["rtt", "--tls-ca", &ca, "--tls-cert", &cert, "-s", &url]);
    assert!(
        line.contains("--tls-cert and --tls-key go together"),
        "{line}"
    );

    // A natscli context may name its files as file:// URLs.
    let context = dir.path().join("tls.json");
    let text = serde_json::json!({
        "url": url,
        "ca": format!("file://{ca}"),
        "cert": format!("file://{cert}"),
        "key": format!("file://{key}"),
    });
    std::fs::write(&context, text.to_string()).expect("context written");
    let context = path(&context);
    rnats.ok(&["rtt", "--count", "1", "--context", &context]);
}

#[test]
fn nats_url_names_the_server() {
    let server = NatsServer::start();
    let rnats = Rnats::new();
    let out = rnats
        .command(&["server", "info", "--json"])
        .env("NATS_URL", server.url())
        .output()
        .expect("rnats runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let info: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(info["port"], server.port());
}

/// `account info` as `user` (password `pass`) with `extra` flags; its output.
fn account_info(rnats: &Rnats, url: &str, user: &str, extra: &[&str]) -> String {
    let login = ["-s", url, "--user", user, "--password", "pass"];
    rnats.ok(&[&["account", "info"][..], &login, extra].concat())
}

/// The value of the `label: value` line of `text`.
fn field<'a>(text: &'a str, label: &str) -> &'a str {
    text.lines()
        .find_map(|l| l.trim_start().strip_prefix(label)?.strip_prefix(": "))
        .unwrap_or_else(|| panic!("no {label:?} in {text}"))
}

#[test]
fn account_info_says_who_the_user_is() {
    // `app` may publish only where it needs to: its permissions come back in USER.INFO.
    let server = NatsServer::builder()
        .jetstream(true)
        .config(
            r#"
accounts {
  SYS { users = [ { user: sys, password: pass } ] }
  APP {
    jetstream: enabled
    users = [ {
      user: app, password: pass,
      permissions: {
        publish: { allow: ["orders.>", "$JS.API.>", "$SYS.REQ.USER.INFO"] }
        subscribe: { allow: ["_INBOX.>", "orders.>"], deny: ["orders.secret"] }
      }
    } ]
  }
}
system_account: SYS
"#,
        )
        .spawn()
        .expect("nats-server starts");
    let url = server.url();
    let rnats = Rnats::new();
    let run = |user: &str| account_info(&rnats, &url, user, &[]);
    let info_json = |user: &str| -> serde_json::Value {
        let out = account_info(&rnats, &url, user, &["--json"]);
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
    };

    let sys = run("sys");
    assert_eq!(field(&sys, "User"), "sys", "{sys}");
    assert_eq!(field(&sys, "Account"), "SYS", "{sys}");
    assert_eq!(field(&sys, "System account"), "yes", "{sys}");
    assert_eq!(field(&sys, "Expires"), "never", "{sys}");
    assert_eq!(field(&sys, "Headers supported"), "yes", "{sys}");
    assert_eq!(field(&sys, "Maximum payload"), "1 MiB", "{sys}");
    assert_eq!(field(&sys, "Connected URL"), url, "{sys}");
    assert_eq!(field(&sys, "Connected server version"), "2.15.1", "{sys}");
    assert_eq!(field(&sys, "TLS connection"), "no", "{sys}");
    assert!(field(&sys, "Client ID").parse::<u64>().is_ok(), "{sys}");
    // The system account has no JetStream: said, and not a failure.
    assert!(sys.contains("JetStream is not available"), "{sys}");

    let app = run("app");
    assert_eq!(field(&app, "User"), "app", "{app}");
    assert_eq!(field(&app, "Account"), "APP", "{app}");
    assert_eq!(field(&app, "System account"), "no", "{app}");
    assert_eq!(
        field(&app, "Publish allow"),
        "$JS.API.>, $SYS.REQ.USER.INFO, orders.>",
        "{app}"
    );
    assert_eq!(field(&app, "Subscribe deny"), "orders.secret", "{app}");
    assert_eq!(field(&app, "Streams"), "0", "{app}");

    let json = info_json("app");
    let identity = &json["identity"];
    assert_eq!(identity["user"]["user"], "app", "{json}");
    assert_eq!(identity["account"], "APP", "{json}");
    assert_eq!(identity["system_account"], false, "{json}");
    assert_eq!(identity["connection"]["server_version"], "2.15.1", "{json}");
    assert_eq!(json["jetstream"]["streams"], 0, "{json}");
    let json = info_json("sys");
    assert_eq!(json["identity"]["system_account"], true, "{json}");
    assert!(json["jetstream"].is_null(), "{json}");
    assert!(json["jetstream_error"].is_string(), "{json}");
}
