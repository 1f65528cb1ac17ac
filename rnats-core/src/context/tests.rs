//! Reading contexts as natscli writes them, and the options they make; no server.

use std::path::PathBuf;

use super::*;
use crate::ConnectOptions;
use crate::auth::Credentials;

/// A context file as `nats context add` writes it (jsm.go's MarshalIndent of its
/// settings), every field set.
const NATSCLI_FILE: &str = r#"{
  "description": "production",
  "url": "nats://a:4222,nats://b:4222",
  "socks_proxy": "socks5://127.0.0.1:1080",
  "token": "t0k",
  "user": "ann",
  "password": "env://ANN_PASSWORD",
  "creds": "~/prod.creds",
  "nkey": "/keys/ann.nk",
  "cert": "$CERTS/client.pem",
  "key": "$CERTS/client-key.pem",
  "ca": "file://~/ca.pem",
  "nsc": "",
  "jetstream_domain": "hub",
  "jetstream_api_prefix": "$JS.hub.API",
  "jetstream_event_prefix": "$JS.hub.EVENT",
  "inbox_prefix": "_INBOX_ann",
  "user_jwt": "eyJ0eXAi",
  "user_seed": "SUAAA",
  "color_scheme": "dark",
  "tls_first": true,
  "windows_cert_store": "",
  "windows_cert_match_by": "",
  "windows_cert_match": "",
  "windows_ca_certs_match": null
}"#;

/// A natscli file with every setting empty, `over` replacing some.
fn empty_file_with(over: &[(&str, &str)]) -> Vec<u8> {
    let mut value: serde_json::Value = serde_json::from_str(NATSCLI_FILE).expect("JSON");
    let object = value.as_object_mut().expect("object");
    for (_, v) in object.iter_mut() {
        if v.is_string() {
            *v = serde_json::Value::from("");
        }
    }
    object.insert("tls_first".into(), false.into());
    for (field, v) in over {
        object.insert((*field).into(), (*v).into());
    }
    serde_json::to_vec(&value).expect("JSON")
}

/// A test's environment: `HOME`, `CERTS` and `ANN_PASSWORD`.
fn test_env(name: &str) -> Option<String> {
    match name {
        "HOME" => Some("/home/ann".into()),
        "CERTS" => Some("/etc/certs".into()),
        "ANN_PASSWORD" => Some("pw\n".into()),
        _ => None,
    }
}

#[test]
fn every_natscli_field_is_read() {
    let c = Context::from_json("prod", NATSCLI_FILE.as_bytes()).expect("parses");
    assert_eq!(c.name(), "prod");
    assert_eq!(c.path(), None);
    assert_eq!(c.description(), Some("production"));
    assert_eq!(c.url(), Some("nats://a:4222,nats://b:4222"));
    assert_eq!(c.servers(), "nats://a:4222,nats://b:4222");
    assert_eq!(c.socks_proxy(), Some("socks5://127.0.0.1:1080"));
    assert_eq!(c.token(), Some("t0k"));
    assert_eq!(c.user(), Some("ann"));
    assert_eq!(c.password(), Some("env://ANN_PASSWORD"));
    assert_eq!(c.creds(), Some("~/prod.creds"));
    assert_eq!(c.nkey(), Some("/keys/ann.nk"));
    assert_eq!(c.cert(), Some("$CERTS/client.pem"));
    assert_eq!(c.key(), Some("$CERTS/client-key.pem"));
    assert_eq!(c.ca(), Some("file://~/ca.pem"));
    assert_eq!(c.nsc(), None);
    assert_eq!(c.jetstream_domain(), Some("hub"));
    assert_eq!(c.jetstream_api_prefix(), Some("$JS.hub.API"));
    assert_eq!(c.jetstream_event_prefix(), Some("$JS.hub.EVENT"));
    assert_eq!(c.inbox_prefix(), Some("_INBOX_ann"));
    assert_eq!(c.user_jwt(), Some("eyJ0eXAi"));
    assert_eq!(c.user_seed(), Some("SUAAA"));
    assert_eq!(c.color_scheme(), Some("dark"));
    assert!(c.tls_first());
    assert_eq!(c.windows_cert_store(), None);
}

#[test]
fn empty_missing_and_null_settings_are_unset() {
    let empty = Context::from_json("e", &empty_file_with(&[])).expect("parses");
    let bare = Context::from_json("b", b"{}").expect("parses");
    let nulls = Context::from_json("n", br#"{"url": null, "tls_first": null}"#).expect("parses");
    for c in [&empty, &bare, &nulls] {
        assert_eq!(c.url(), None);
        assert_eq!(c.servers(), DEFAULT_URL);
        assert_eq!(c.user(), None);
        assert!(!c.tls_first());
    }
    // Settings rnats does not know (newer natscli ones) are not errors.
    let newer = Context::from_json("x", br#"{"url": "nats://x", "future": {"a": [1]}}"#);
    assert_eq!(newer.ok().as_ref().and_then(Context::url), Some("nats://x"));
}

#[test]
fn bad_json_and_wrong_types_are_parse_errors() {
    for bad in [
        &b"{"[..],
        b"[1]",
        b"[]",
        b"null",
        b"\"x\"",
        b"",
        br#"{"url": 4222}"#,
        br#"{"tls_first": "yes"}"#,
    ] {
        match Context::from_json("bad", bad) {
            Err(ContextError::Parse { name, path, .. }) => {
                assert_eq!((name.as_str(), path), ("bad", None));
            }
            other => panic!("{:?}: {other:?}", String::from_utf8_lossy(bad)),
        }
    }
    // A secret of the wrong type is not quoted back.
    let error = Context::from_json("bad", br#"{"password": 918273645}"#).unwrap_err();
    let text = error.to_string();
    assert!(!text.contains("918273645"), "{text}");
    assert!(text.contains("line 1"), "{text}");
}

#[test]
fn debug_masks_secrets() {
    let c = Context::from_json(
        "s",
        br#"{"url": "nats://ann:pw1@a:4222,nats://b:4222", "password": "pw2",
             "token": "tok3", "user_seed": "SUSEED4", "creds": "data:;base64,Q1JFRFM1"}"#,
    )
    .expect("parses");
    let debug = format!("{c:?}");
    for secret in ["pw1", "pw2", "tok3", "SUSEED4", "Q1JFRFM1"] {
        assert!(!debug.contains(secret), "{secret} in {debug}");
    }
    assert!(
        debug.contains("nats://*****@a:4222,nats://b:4222"),
        "{debug}"
    );
}

/// A scratch config directory in natscli's layout.
fn config_dir(contexts: &[(&str, &[u8])], selected: Option<&str>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let nats = dir.path().join("nats");
    std::fs::create_dir_all(nats.join("context")).expect("mkdir");
    for (name, json) in contexts {
        std::fs::write(nats.join("context").join(format!("{name}.json")), json).expect("write");
    }
    if let Some(name) = selected {
        std::fs::write(nats.join("context.txt"), format!("{name}\n")).expect("write");
    }
    dir
}

#[test]
fn a_store_lists_loads_and_follows_the_selection() {
    let dir = config_dir(
        &[
            ("prod", NATSCLI_FILE.as_bytes()),
            ("dev", br#"{"url": "nats://dev:4222"}"#),
            ("empty", b""),
            ("broken", b"{"),
        ],
        Some("dev"),
    );
    std::fs::write(dir.path().join("nats/context/notes.txt"), "x").expect("write");
    let store = ContextStore::at(dir.path());
    // An empty file and other extensions are not contexts, as in natscli.
    assert_eq!(
        store.names().expect("names"),
        ["broken", "dev", "prod"].map(String::from)
    );
    assert_eq!(store.selected().expect("read").as_deref(), Some("dev"));
    let selected = store.load_selected().expect("loads").expect("selected");
    assert_eq!(
        (selected.name(), selected.url()),
        ("dev", Some("nats://dev:4222"))
    );
    assert_eq!(
        selected.path(),
        Some(dir.path().join("nats/context/dev.json").as_path())
    );
    assert!(store.contains("prod") && !store.contains("nope"));

    match store.load("nope") {
        Err(ContextError::NotFound { name, path }) => {
            assert_eq!(name, "nope");
            assert_eq!(path, dir.path().join("nats/context/nope.json"));
        }
        other => panic!("{other:?}"),
    }
    match store.load("broken") {
        Err(ContextError::Parse { name, path, .. }) => {
            assert_eq!(name, "broken");
            assert_eq!(path, Some(dir.path().join("nats/context/broken.json")));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn no_selection_is_none_and_a_stale_one_is_not_found() {
    let dir = config_dir(&[("a", b"{}")], None);
    let store = ContextStore::at(dir.path());
    assert_eq!(store.selected().expect("read"), None);
    assert!(store.load_selected().expect("loads").is_none());
    std::fs::write(dir.path().join("nats/context.txt"), "  \n").expect("write");
    assert!(store.load_selected().expect("loads").is_none());
    std::fs::write(dir.path().join("nats/context.txt"), "gone").expect("write");
    assert!(matches!(
        store.load_selected(),
        Err(ContextError::NotFound { .. })
    ));
    // No config directory at all: no contexts, nothing selected.
    let nowhere = ContextStore::at(dir.path().join("missing"));
    assert_eq!(nowhere.names().expect("names"), Vec::<String>::new());
    assert_eq!(nowhere.selected().expect("read"), None);
}

#[test]
fn from_file_names_the_context_after_the_file() {
    let dir = config_dir(&[], None);
    let path = dir.path().join("staging.json");
    std::fs::write(&path, br#"{"url": "nats://s:4222"}"#).expect("write");
    let c = Context::from_file(&path).expect("loads");
    assert_eq!((c.name(), c.path()), ("staging", Some(path.as_path())));
    assert!(matches!(
        Context::from_file(dir.path().join("none.json")),
        Err(ContextError::Read {
            what: "context",
            ..
        })
    ));
}

/// The options of a context file made of `fields`, in the test environment.
fn options_of(fields: &[(&str, &str)]) -> Result<ConnectOptions, ContextError> {
    Context::from_json("t", &empty_file_with(fields))
        .expect("parses")
        .apply(ConnectOptions::new(), &test_env)
}

#[test]
fn user_and_password_win_over_the_other_logins_and_the_token_is_added() {
    let options = options_of(&[
        ("user", "ann"),
        ("password", "env://ANN_PASSWORD"),
        ("creds", "/nonexistent.creds"),
        ("token", "data:;base64,dG9rCg=="),
    ])
    .expect("applies");
    assert_eq!(
        options.user_and_password,
        Some(("ann".to_owned(), "pw".to_owned()))
    );
    assert!(options.credentials.is_none());
    assert_eq!(options.token.as_deref(), Some("tok"));
}

#[test]
fn creds_then_nkey_then_jwt() {
    let options = options_of(&[("creds", "~/app.creds"), ("nkey", "/x.nk")]).expect("applies");
    match options.credentials {
        Some(Credentials::CredsFile(path)) => {
            assert_eq!(path, PathBuf::from("/home/ann/app.creds"));
        }
        other => panic!("{other:?}"),
    }

    let dir = config_dir(&[], None);
    let seed = dir.path().join("ann.nk");
    std::fs::write(
        &seed,
        "-----BEGIN USER NKEY SEED-----\nSUAAASEED\n------END USER NKEY SEED------\n",
    )
    .expect("write");
    let options =
        options_of(&[("nkey", &seed.display().to_string()), ("user_jwt", "JWT")]).expect("applies");
    match options.credentials {
        Some(Credentials::NKey { seed }) => assert_eq!(seed.expose(), "SUAAASEED"),
        other => panic!("{other:?}"),
    }

    let options = options_of(&[("user_jwt", "JWT"), ("user_seed", "SUAAA")]).expect("applies");
    match options.credentials {
        Some(Credentials::Jwt { jwt, seed }) => {
            assert_eq!((jwt.as_str(), seed.expose()), ("JWT", "SUAAA"));
        }
        other => panic!("{other:?}"),
    }
    // A JWT alone is a bearer JWT.
    let options = options_of(&[("user_jwt", "JWT")]).expect("applies");
    assert!(matches!(
        options.credentials,
        Some(Credentials::JwtCallback { .. })
    ));
}

#[test]
fn inline_creds_are_parsed_now() {
    let bad = options_of(&[("creds", "data:;base64,bm90IGNyZWRz")]);
    assert!(
        matches!(
            bad,
            Err(ContextError::InvalidCredentials { field: "creds", .. })
        ),
        "{bad:?}"
    );
}

#[test]
fn tls_settings_expand_and_require_tls() {
    let c = Context::from_json(
        "t",
        br#"{"ca": "file://~/ca.pem", "cert": "$CERTS/client.pem",
             "key": "${CERTS}/client-key.pem", "tls_first": true, "inbox_prefix": "_I"}"#,
    )
    .expect("parses");
    let options = c.apply(ConnectOptions::new(), &test_env).expect("applies");
    assert!(options.tls.required && options.tls.first);
    assert_eq!(options.tls.root_files, [PathBuf::from("/home/ann/ca.pem")]);
    assert_eq!(
        options.tls.client_cert,
        Some((
            PathBuf::from("/etc/certs/client.pem"),
            PathBuf::from("/etc/certs/client-key.pem")
        ))
    );
    assert_eq!(options.inbox_prefix, "_I");

    // A certificate without its key is ignored, as natscli ignores it.
    let options = options_of(&[("cert", "/c.pem")]).expect("applies");
    assert!(options.tls.client_cert.is_none() && !options.tls.required);
}

#[test]
fn nsc_op_and_the_windows_store_are_typed_errors() {
    for (fields, expected) in [
        (&[("nsc", "nsc://op/acc/user")][..], "nsc"),
        (&[("creds", "nsc://op/acc/user")][..], "creds"),
        (&[("user", "a"), ("password", "op://v/i/p")][..], "password"),
        (&[("token", "op://v/i/t")][..], "token"),
    ] {
        match options_of(fields) {
            Err(ContextError::UnsupportedScheme { field, .. }) => assert_eq!(field, expected),
            other => panic!("{fields:?}: {other:?}"),
        }
    }
    assert!(matches!(
        options_of(&[("windows_cert_store", "user")]),
        Err(ContextError::UnsupportedSetting {
            field: "windows_cert_store"
        })
    ));
    // An unset variable names the setting and the variable.
    match options_of(&[("token", "env://NOT_SET")]) {
        Err(ContextError::MissingVariable { field, variable }) => {
            assert_eq!((field, variable.as_str()), ("token", "NOT_SET"));
        }
        other => panic!("{other:?}"),
    }
}
