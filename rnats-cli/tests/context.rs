//! natscli contexts: files written the way natscli writes them are used by rnats, and files
//! rnats writes carry natscli's field names.

mod common;

use common::{Rnats, write};
use rnats_test_server::NatsServer;
use serde_json::Value;

/// A context file as `nats context add` writes it (jsm.go `natscontext`, MarshalIndent).
fn natscli_context(url: &str, token: &str) -> String {
    format!(
        r#"{{
  "description": "made by natscli",
  "url": "{url}",
  "socks_proxy": "",
  "token": "{token}",
  "user": "",
  "password": "",
  "creds": "",
  "nkey": "",
  "cert": "",
  "key": "",
  "ca": "",
  "nsc": "",
  "jetstream_domain": "",
  "jetstream_api_prefix": "",
  "jetstream_event_prefix": "",
  "inbox_prefix": "",
  "user_jwt": "",
  "color_scheme": "",
  "tls_first": false,
  "windows_cert_store": "",
  "windows_cert_match_by": "",
  "windows_cert_match": "",
  "windows_ca_certs_match": null
}}"#
    )
}

#[test]
fn a_selected_natscli_context_supplies_server_and_token() {
    let server = NatsServer::builder().token("tok").spawn().expect("server");
    let rnats = Rnats::new();
    write(
        &rnats.nats_dir().join("context/dev.json"),
        &natscli_context(&server.url(), "tok"),
    );
    write(&rnats.nats_dir().join("context.txt"), "dev");
    // No --server and no --token: both come from the context.
    let info = rnats.json(&["server", "info", "--json"]);
    assert_eq!(info["port"], server.port());

    let ls = rnats.ok(&["context", "ls"]);
    assert!(ls.contains("dev*"), "{ls}");
    assert!(ls.contains("made by natscli"), "{ls}");
    let info = rnats.json(&["context", "info", "dev", "--json"]);
    assert_eq!(info["token"], "*****", "secrets are masked");

    // Flags override the context.
    let line = rnats.fails(&["rtt", "--token", "wrong"]);
    assert!(line.contains("authorization violation"), "{line}");
    let line = rnats.fails(&["rtt", "-s", "nats://127.0.0.1:1"]);
    assert!(
        line.contains("cannot connect to nats://127.0.0.1:1"),
        "{line}"
    );
}

#[test]
fn context_flag_picks_another_context_and_unknown_ones_are_errors() {
    let server = NatsServer::start();
    let rnats = Rnats::new();
    write(
        &rnats.nats_dir().join("context/good.json"),
        &natscli_context(&server.url(), ""),
    );
    write(
        &rnats.nats_dir().join("context/bad.json"),
        &natscli_context("nats://127.0.0.1:1", ""),
    );
    write(&rnats.nats_dir().join("context.txt"), "bad\n");
    rnats.ok(&["rtt", "--count", "1", "--context", "good"]);
    let line = rnats.fails(&["rtt"]);
    assert!(line.contains("127.0.0.1:1"), "{line}");
    let line = rnats.fails(&["rtt", "--context", "missing"]);
    assert!(line.contains("unknown context \"missing\""), "{line}");
}

#[test]
fn add_select_ls_rm_round_trip_in_natscli_format() {
    let server = NatsServer::start();
    let rnats = Rnats::new();
    rnats.ok(&[
        "context",
        "add",
        "local",
        "--server",
        &server.url(),
        "--description",
        "my box",
        "--user",
        "bob",
        "--password",
        "pw",
        "--select",
    ]);
    let path = rnats.nats_dir().join("context/local.json");
    let file: Value =
        serde_json::from_slice(&std::fs::read(&path).expect("written")).expect("JSON");
    assert_eq!(file["url"], server.url());
    assert_eq!(file["description"], "my box");
    assert_eq!(file["user"], "bob");
    assert_eq!(file["password"], "pw");
    for field in [
        "token",
        "creds",
        "nkey",
        "cert",
        "key",
        "ca",
        "jetstream_domain",
        "inbox_prefix",
    ] {
        assert_eq!(file[field], "", "natscli's field {field} is written");
    }
    assert_eq!(file["tls_first"], false);
    let selected = std::fs::read_to_string(rnats.nats_dir().join("context.txt")).expect("selected");
    assert_eq!(selected, "local");

    // A field rnats does not know survives an edit.
    let mut edited = file.clone();
    edited["windows_cert_store"] = Value::from("user");
    std::fs::write(&path, serde_json::to_vec(&edited).expect("JSON")).expect("write");
    rnats.ok(&["context", "edit", "local", "--description", "renamed"]);
    let file: Value =
        serde_json::from_slice(&std::fs::read(&path).expect("written")).expect("JSON");
    assert_eq!(file["description"], "renamed");
    assert_eq!(file["windows_cert_store"], "user");
    assert_eq!(file["user"], "bob");

    // One way to log in replaces the other: a token over the user and password, and back.
    rnats.ok(&["context", "edit", "local", "--user", "tok"]);
    let file: Value =
        serde_json::from_slice(&std::fs::read(&path).expect("written")).expect("JSON");
    assert_eq!(
        (&file["token"], &file["user"], &file["password"]),
        (&Value::from("tok"), &Value::from(""), &Value::from(""))
    );
    rnats.ok(&[
        "context",
        "edit",
        "local",
        "--user",
        "bob",
        "--password",
        "pw",
    ]);
    let file: Value =
        serde_json::from_slice(&std::fs::read(&path).expect("written")).expect("JSON");
    assert_eq!(
        (&file["token"], &file["user"], &file["password"]),
        (&Value::from(""), &Value::from("bob"), &Value::from("pw"))
    );

    rnats.ok(&["context", "add", "other", "--server", "nats://127.0.0.1:1"]);
    let list = rnats.json(&["context", "ls", "--json"]);
    let names: Vec<(&str, bool)> = list
        .as_array()
        .expect("array")
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap_or_default(),
                c["selected"] == true,
            )
        })
        .collect();
    assert_eq!(names, [("local", true), ("other", false)]);
    assert_eq!(rnats.ok(&["context", "ls", "--names"]), "local\nother\n");
    assert_eq!(
        rnats.ok(&["context", "ls", "--completion"]),
        "local*:renamed\nother:\n"
    );
    rnats.ok(&[
        "context",
        "add",
        "at:host",
        "--server",
        "nats://127.0.0.1:1",
    ]);
    assert_eq!(
        rnats.ok(&["context", "ls", "--completion"]),
        "at\\:host:\nlocal*:renamed\nother:\n",
        "a colon in a name is escaped for the shell"
    );
    rnats.ok(&["context", "rm", "at:host", "--force"]);
    // A context that does not load is left out of every listing, with a line on stderr.
    std::fs::write(rnats.nats_dir().join("context/broken.json"), "{").expect("write");
    let out = rnats.run(&["context", "ls", "--names"]);
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "local\nother\n");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("Could not load context broken"), "{said}");
    assert!(rnats.ok(&["context", "ls"]).contains("other"));
    let listed = rnats.json(&["context", "ls", "--json"]);
    assert_eq!(listed.as_array().map(Vec::len), Some(2), "{listed}");
    std::fs::remove_file(rnats.nats_dir().join("context/broken.json")).expect("remove");

    rnats.ok(&["context", "select", "other"]);
    let previous =
        std::fs::read_to_string(rnats.nats_dir().join("previous-context.txt")).expect("previous");
    assert_eq!(previous, "local");
    assert_eq!(rnats.ok(&["context", "select"]), "other\n");

    let line = rnats.fails(&["context", "rm", "other"]);
    assert!(line.contains("--force"), "{line}");
    rnats.ok(&["context", "rm", "other", "--force"]);
    assert!(
        !rnats.nats_dir().join("context.txt").exists(),
        "rm unselects"
    );
    let list = rnats.json(&["context", "ls", "--json"]);
    assert_eq!(list.as_array().map(Vec::len), Some(1));
    let line = rnats.fails(&["context", "select", "other"]);
    assert!(line.contains("unknown context"), "{line}");
}

#[test]
fn validate_loads_connects_and_names_what_is_wrong() {
    let server = NatsServer::builder().token("tok").spawn().expect("server");
    let rnats = Rnats::new();
    write(
        &rnats.nats_dir().join("context/good.json"),
        &natscli_context(&server.url(), "tok"),
    );
    let out = rnats.ok(&["context", "validate", "good", "--connect"]);
    assert!(
        out.contains(&format!(
            "Context \"good\": OK, connected to {}",
            server.url()
        )),
        "{out}"
    );

    // A credentials file that is not there, and a server that refuses the token.
    let missing = natscli_context(&server.url(), "tok")
        .replace("\"creds\": \"\"", "\"creds\": \"/nonexistent/app.creds\"");
    write(&rnats.nats_dir().join("context/nocreds.json"), &missing);
    write(
        &rnats.nats_dir().join("context/badtoken.json"),
        &natscli_context(&server.url(), "wrong"),
    );
    let out = rnats.run(&["context", "validate", "--connect"]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("Context \"nocreds\": FAILED, its credentials file /nonexistent/app.creds"),
        "{stdout}"
    );
    assert!(
        stdout.contains("Context \"badtoken\": FAILED, "),
        "{stdout}"
    );
    assert!(stdout.contains("Context \"good\": OK"), "{stdout}");
    // Without --connect the token is not tried.
    let out = rnats.ok(&["context", "validate", "badtoken"]);
    assert!(out.contains("OK, settings load"), "{out}");
}

#[test]
fn unselect_leaves_no_context_selected() {
    let rnats = Rnats::new();
    rnats.ok(&[
        "context",
        "add",
        "a",
        "--server",
        "nats://127.0.0.1:1",
        "--select",
    ]);
    let out = rnats.run(&["context", "unselect"]);
    common::assert_success(&out, &["context", "unselect"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "Unselected context \"a\"\n"
    );
    assert!(!rnats.nats_dir().join("context.txt").exists());
    assert_eq!(rnats.ok(&["context", "select"]), "");
    let out = rnats.run(&["context", "unselect"]);
    common::assert_success(&out, &["context", "unselect"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "No context is selected\n"
    );
}

/// `rnats context edit NAME` with `$EDITOR` set to `editor`; its output.
fn edit_with(rnats: &Rnats, name: &str, editor: Option<&str>) -> std::process::Output {
    let mut command = rnats.command(&["context", "edit", name]);
    match editor {
        Some(editor) => command.env("EDITOR", editor),
        None => command.env_remove("EDITOR"),
    };
    command
        .stdin(std::process::Stdio::null())
        .output()
        .expect("rnats runs")
}

#[test]
fn edit_without_settings_opens_the_editor_and_checks_what_comes_back() {
    let rnats = Rnats::new();
    rnats.ok(&["context", "add", "e", "--server", "nats://127.0.0.1:1"]);
    let path = rnats.nats_dir().join("context/e.json");
    let url = |rnats: &Rnats| {
        let file: Value =
            serde_json::from_slice(&std::fs::read(&path).expect("read")).expect("JSON");
        assert_eq!(file, rnats.json(&["context", "info", "e", "--json"]));
        file["url"].as_str().map(str::to_owned)
    };

    // natscli needs EDITOR too.
    let out = edit_with(&rnats, "e", None);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("set EDITOR"));

    // The editor's change is saved.
    let out = edit_with(&rnats, "e", Some("sed -i s/127.0.0.1:1/127.0.0.1:2/"));
    common::assert_success(&out, &["context", "edit"]);
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("Updated context \"e\""));
    assert_eq!(url(&rnats).as_deref(), Some("nats://127.0.0.1:2"));

    // Nothing changed: nothing written, and no "Updated".
    let before = std::fs::read(&path).expect("read");
    let out = edit_with(&rnats, "e", Some("true"));
    common::assert_success(&out, &["context", "edit"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "No changes to context \"e\"\n"
    );
    let out = rnats.run(&["context", "edit", "e", "--server", "nats://127.0.0.1:2"]);
    common::assert_success(&out, &["context", "edit", "--server"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "No changes to context \"e\"\n"
    );
    assert_eq!(std::fs::read(&path).expect("read"), before);

    // What is not a JSON object, or an editor that fails, leaves the context as it was.
    let dir = tempfile::tempdir().expect("temp dir");
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{ not json").expect("write");
    let out = edit_with(&rnats, "e", Some(&format!("cp {}", bad.display())));
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot parse"));
    let out = edit_with(&rnats, "e", Some("false"));
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(std::fs::read(&path).expect("read"), before);
}

#[test]
fn add_saves_a_user_without_password_as_a_token_and_the_jwt_and_seed() {
    let rnats = Rnats::new();
    rnats.ok(&[
        "context",
        "add",
        "t",
        "--server",
        "nats://127.0.0.1:1",
        "--user",
        "s3cret",
        "--jwt",
        "env://MY_JWT",
        "--seed",
        "env://MY_SEED",
    ]);
    let file: Value = serde_json::from_slice(
        &std::fs::read(rnats.nats_dir().join("context/t.json")).expect("written"),
    )
    .expect("JSON");
    assert_eq!(file["token"], "s3cret");
    assert_eq!(file["user"], "");
    assert_eq!(file["user_jwt"], "env://MY_JWT");
    assert_eq!(file["user_seed"], "env://MY_SEED");
}

#[test]
fn previous_goes_back_and_forth_between_the_last_two_selections() {
    let rnats = Rnats::new();
    let line = rnats.fails(&["context", "previous"]);
    assert!(
        line.contains("no context is selected, and none was before"),
        "{line}"
    );
    let add = |name: &str, port: &str| {
        let url = format!("nats://127.0.0.1:{port}");
        rnats.ok(&["context", "add", name, "--server", &url, "--select"]);
    };
    add("a", "1");
    // Nothing selected before `a`: the current context is shown and stays selected.
    let shown = rnats.ok(&["context", "previous"]);
    assert!(shown.contains("nats://127.0.0.1:1"), "{shown}");
    assert_eq!(rnats.ok(&["context", "select"]), "a\n");
    add("b", "2");
    let shown = rnats.ok(&["context", "previous"]);
    assert!(shown.contains("nats://127.0.0.1:1"), "{shown}");
    assert_eq!(rnats.ok(&["context", "select"]), "a\n");
    // natscli's alias; and the files natscli reads say the same.
    rnats.ok(&["context", "-"]);
    assert_eq!(rnats.ok(&["context", "select"]), "b\n");
    let previous = std::fs::read_to_string(rnats.nats_dir().join("previous-context.txt"))
        .expect("previous-context.txt");
    assert_eq!(previous.trim(), "a");
    // A previous context removed since is an error, not a silent selection.
    rnats.ok(&["context", "rm", "a", "--force"]);
    let line = rnats.fails(&["context", "previous"]);
    assert!(line.contains("unknown context \"a\""), "{line}");
    assert_eq!(rnats.ok(&["context", "select"]), "b\n");
    // After an unselect, the one unselected is the way back.
    rnats.ok(&["context", "unselect"]);
    rnats.ok(&["context", "previous"]);
    assert_eq!(rnats.ok(&["context", "select"]), "b\n");
}

#[test]
fn copy_makes_a_new_context_from_another_with_the_settings_given() {
    let rnats = Rnats::new();
    rnats.ok(&[
        "context",
        "add",
        "prod",
        "--server",
        "nats://127.0.0.1:1",
        "--description",
        "production",
        "--user",
        "app",
        "--password",
        "secret",
    ]);
    rnats.ok(&[
        "context",
        "copy",
        "prod",
        "staging",
        "--server",
        "nats://127.0.0.1:2",
        "--select",
    ]);
    let staging: Value = serde_json::from_str(
        &std::fs::read_to_string(rnats.nats_dir().join("context/staging.json"))
            .expect("staging.json"),
    )
    .expect("JSON");
    assert_eq!(staging["url"], "nats://127.0.0.1:2", "the flag given");
    assert_eq!(staging["description"], "production", "the rest copied");
    assert_eq!(staging["user"], "app");
    assert_eq!(staging["password"], "secret");
    assert_eq!(rnats.ok(&["context", "select"]), "staging\n");
    // The source is left as it was.
    let prod = rnats.json(&["context", "info", "prod", "--json"]);
    assert_eq!(prod["url"], "nats://127.0.0.1:1");

    let line = rnats.fails(&["context", "cp", "prod", "staging"]);
    assert!(line.contains("\"staging\" already exists"), "{line}");
    let line = rnats.fails(&["context", "cp", "nothing", "other"]);
    assert!(line.contains("unknown context \"nothing\""), "{line}");
    assert!(!rnats.nats_dir().join("context/other.json").exists());
}
