//! One real nats-server per test: readiness, options, restart and clean-up.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::Duration;

use rnats_test_server::{NatsServer, TestServerError, free_port};

/// A raw protocol connection that reads whole lines.
struct Raw {
    reader: BufReader<TcpStream>,
}

impl Raw {
    fn connect(port: u16) -> Raw {
        let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect to the server");
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .expect("set a read timeout");
        Raw {
            reader: BufReader::new(stream),
        }
    }

    fn line(&mut self) -> String {
        let mut line = String::new();
        self.reader.read_line(&mut line).expect("read a line");
        line.trim_end().to_owned()
    }

    fn send(&mut self, text: &str) {
        self.reader
            .get_mut()
            .write_all(text.as_bytes())
            .expect("send");
    }
}

#[test]
fn a_started_server_greets_with_info_on_its_port() {
    let server = NatsServer::start();
    assert_eq!(server.url(), format!("nats://127.0.0.1:{}", server.port()));
    assert_eq!(server.client_url(), server.url());

    let greeting = Raw::connect(server.port()).line();
    assert!(greeting.starts_with("INFO {"), "{greeting}");
    assert!(
        greeting.contains(&format!("\"port\":{}", server.port())),
        "{greeting}"
    );

    let info = server.info().unwrap();
    assert_eq!(info["port"], u64::from(server.port()));
    assert!(!server.log_tail().is_empty());
}

#[test]
fn two_servers_get_distinct_ports() {
    let a = NatsServer::start();
    let b = NatsServer::start();
    assert_ne!(a.port(), b.port());
    assert_ne!(a.pid(), b.pid());
}

#[test]
fn drop_kills_and_reaps_the_process() {
    let server = NatsServer::with_jetstream();
    let (pid, port) = (server.pid(), server.port());
    let store = server.store_dir().unwrap().to_owned();
    assert!(Path::new(&format!("/proc/{pid}")).exists());
    drop(server);
    // Reaped, so not even a zombie entry remains.
    assert!(!Path::new(&format!("/proc/{pid}")).exists());
    assert!(TcpStream::connect(("127.0.0.1", port)).is_err());
    assert!(!store.exists());
}

#[test]
fn kill_is_idempotent_and_keeps_the_log() {
    let mut server = NatsServer::start();
    assert!(server.is_running());
    server.kill();
    server.kill();
    assert!(!server.is_running());
    assert!(
        server
            .log_tail()
            .iter()
            .any(|l| l.contains("Server is ready"))
    );
    assert!(matches!(
        server.signal("ldm"),
        Err(TestServerError::NotRunning)
    ));
}

/// A refused monitoring request to a server whose process has exited says so, with the log,
/// rather than as a bare refused connection: the multi-server builders start over on it.
#[test]
fn monitoring_a_server_that_has_exited_reports_it_gone_with_its_log() {
    let mut server = NatsServer::builder().monitoring().spawn().unwrap();
    assert!(server.monitor("/varz").is_ok());
    server.kill();
    match server.monitor("/varz") {
        Err(TestServerError::Gone { log }) => {
            assert!(log.iter().any(|l| l.contains("Server is ready")), "{log:?}");
        }
        other => panic!("expected Gone, got {other:?}"),
    }
}

#[test]
fn restart_comes_back_on_the_same_port_as_a_new_server() {
    let mut server = NatsServer::with_jetstream();
    let (port, pid) = (server.port(), server.pid());
    let before = server.info().unwrap();
    let store = server.store_dir().unwrap().to_owned();

    server.restart().unwrap();

    assert_eq!(server.port(), port);
    assert_ne!(server.pid(), pid);
    let after = server.info().unwrap();
    assert_ne!(after["server_id"], before["server_id"]);
    assert_eq!(server.store_dir(), Some(store.as_path()));
    assert!(store.exists());
}

#[test]
fn fixed_port_is_used() {
    let port = free_port();
    let server = NatsServer::builder().port(port).spawn().unwrap();
    assert_eq!(server.port(), port);
}

#[test]
fn jetstream_is_announced_in_info() {
    let server = NatsServer::with_jetstream();
    assert_eq!(server.info().unwrap()["jetstream"], true);
    assert!(server.store_dir().unwrap().is_dir());

    let plain = NatsServer::start();
    assert_eq!(plain.store_dir(), None);
    assert_ne!(plain.info().unwrap()["jetstream"], true);
}

#[test]
fn token_auth_rejects_a_wrong_token() {
    let server = NatsServer::builder().token("s3cret").spawn().unwrap();

    let mut wrong = Raw::connect(server.port());
    assert!(wrong.line().contains("\"auth_required\":true"));
    wrong.send("CONNECT {\"verbose\":false,\"auth_token\":\"nope\"}\r\nPING\r\n");
    assert_eq!(wrong.line(), "-ERR 'Authorization Violation'");

    let mut right = Raw::connect(server.port());
    right.line();
    right.send("CONNECT {\"verbose\":false,\"auth_token\":\"s3cret\"}\r\nPING\r\n");
    assert_eq!(right.line(), "PONG");
}

#[test]
fn user_password_auth_rejects_a_wrong_password() {
    let server = NatsServer::builder()
        .user_password("alice", "pw")
        .spawn()
        .unwrap();

    let mut wrong = Raw::connect(server.port());
    wrong.line();
    wrong.send("CONNECT {\"verbose\":false,\"user\":\"alice\",\"pass\":\"bad\"}\r\nPING\r\n");
    assert_eq!(wrong.line(), "-ERR 'Authorization Violation'");

    let mut right = Raw::connect(server.port());
    right.line();
    right.send("CONNECT {\"verbose\":false,\"user\":\"alice\",\"pass\":\"pw\"}\r\nPING\r\n");
    assert_eq!(right.line(), "PONG");
}

#[test]
fn max_payload_merges_with_config_text() {
    let server = NatsServer::builder()
        .config("server_name: merged-config")
        .max_payload(1234)
        .spawn()
        .unwrap();
    let info = server.info().unwrap();
    assert_eq!(info["max_payload"], 1234);
    assert_eq!(info["server_name"], "merged-config");
}

#[test]
fn max_payload_merges_with_a_config_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("user.conf");
    std::fs::write(&file, "server_name: from-file\n").unwrap();

    let server = NatsServer::builder()
        .config_file(&file)
        .max_payload(2048)
        .spawn()
        .unwrap();
    let info = server.info().unwrap();
    assert_eq!(info["max_payload"], 2048);
    assert_eq!(info["server_name"], "from-file");

    let plain = NatsServer::builder().config_file(&file).spawn().unwrap();
    assert_eq!(plain.info().unwrap()["server_name"], "from-file");
}

#[test]
fn lame_duck_signal_reaches_the_server() {
    let server = NatsServer::start();
    server.signal("ldm").unwrap();
    server
        .wait_for_log("Entering lame duck mode", Duration::from_secs(5))
        .unwrap();
}

#[test]
fn a_missing_binary_is_reported_as_not_found() {
    let err = NatsServer::builder()
        .binary("/nonexistent/nats-server")
        .spawn()
        .unwrap_err();
    assert!(matches!(err, TestServerError::NotFound), "{err:?}");
}

#[test]
fn a_bad_flag_is_reported_with_the_log() {
    let err = NatsServer::builder()
        .arg("--no-such-flag")
        .spawn()
        .unwrap_err();
    match err {
        TestServerError::Exited { log } => {
            assert!(log.iter().any(|l| l.contains("no-such-flag")), "{log:?}")
        }
        other => panic!("expected Exited, got {other:?}"),
    }
}

#[test]
fn a_taken_port_makes_the_second_server_exit() {
    let first = NatsServer::start();
    let err = NatsServer::builder()
        .port(first.port())
        .spawn()
        .unwrap_err();
    assert!(matches!(err, TestServerError::Exited { .. }), "{err:?}");
}

/// The state letter of each thread of process `pid`, from `/proc/<pid>/task/*/stat` (`T`
/// when stopped).
fn thread_states(pid: u32) -> Vec<char> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).expect("list the threads");
    tasks
        .map(|task| {
            let stat = std::fs::read_to_string(task.expect("a thread").path().join("stat"))
                .expect("read the stat");
            // `tid (comm) S ...`: the command may hold spaces and parentheses, the state
            // follows the last `)`.
            let (_, rest) = stat.rsplit_once(')').expect("a stat line");
            rest.trim_start().chars().next().expect("a state")
        })
        .collect()
}

#[test]
fn a_frozen_server_answers_only_once_thawed() {
    let mut server = NatsServer::start();
    let mut raw = Raw::connect(server.port());
    assert!(raw.line().starts_with("INFO "));
    raw.send("CONNECT {\"verbose\":false}\r\n");

    // Stopped when freeze returns, every thread of it: none is left to answer.
    server.freeze().unwrap();
    let states = thread_states(server.pid());
    assert!(states.iter().all(|&s| s == 'T'), "{states:?}");
    // Taken into the socket's buffer, read by nobody until the thaw.
    raw.send("PING\r\n");
    server.unfreeze().unwrap();
    let states = thread_states(server.pid());
    assert!(!states.contains(&'T'), "{states:?}");
    assert_eq!(raw.line(), "PONG");

    // A frozen server can still be killed; a stopped one cannot be frozen.
    server.freeze().unwrap();
    server.kill();
    assert!(matches!(server.freeze(), Err(TestServerError::NotRunning)));
}
