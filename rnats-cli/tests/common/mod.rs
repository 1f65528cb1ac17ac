//! Running the built `rnats` binary in tests: a private config directory per test (so no
//! user context leaks in), children that are killed if a test fails, and waiting on the
//! readiness lines `sub` and `reply` print.

#![allow(dead_code, unreachable_pub)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

/// A server configuration with a system account (user `sys`) and an application account
/// with JetStream (user `app`), both with the password `pass`.
pub const ACCOUNTS: &str = r#"
accounts {
  SYS { users = [ { user: sys, password: pass } ] }
  APP { jetstream: enabled, users = [ { user: app, password: pass } ] }
}
system_account: SYS
"#;

/// Far longer than any command a test runs needs: a command still running after
/// [`HANG_LIMIT`] is waiting out this timeout, a bug where every server has answered.
pub const LONG_TIMEOUT: &str = "10m";
/// How long a test lets a command with [`LONG_TIMEOUT`] run before calling it hung.
pub const HANG_LIMIT: Duration = Duration::from_secs(120);

/// The `rnats` binary with its own `XDG_CONFIG_HOME` and `HOME`.
pub struct Rnats {
    home: tempfile::TempDir,
}

impl Rnats {
    /// A fresh, empty configuration directory.
    pub fn new() -> Rnats {
        Rnats {
            home: tempfile::tempdir().expect("temp dir"),
        }
    }

    /// `$XDG_CONFIG_HOME` of the runs.
    pub fn config_dir(&self) -> PathBuf {
        self.home.path().join("config")
    }

    /// The natscli directory, `$XDG_CONFIG_HOME/nats`.
    pub fn nats_dir(&self) -> PathBuf {
        self.config_dir().join("nats")
    }

    /// A command for `rnats args`, with no NATS_* variables from the outside.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_rnats"));
        command
            .args(args)
            .env("XDG_CONFIG_HOME", self.config_dir())
            .env("HOME", self.home.path());
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("NATS_") && key != "NATS_SERVER_BIN" {
                command.env_remove(key);
            }
        }
        command
    }

    /// Runs `rnats args` with empty standard input.
    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args)
            .stdin(Stdio::null())
            .output()
            .expect("rnats runs")
    }

    /// Runs `rnats args` with `input` on standard input.
    pub fn run_with_input(&self, args: &[&str], input: &[u8]) -> Output {
        let mut child = self
            .command(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("rnats runs");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input)
            .expect("write stdin");
        child.wait_with_output().expect("rnats ends")
    }

    /// Runs `rnats args`, checks it succeeded and returns its standard output.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert_success(&out, args);
        String::from_utf8(out.stdout).expect("utf-8 stdout")
    }

    /// Runs `rnats args`, checks it succeeded and parses its standard output as JSON.
    pub fn json(&self, args: &[&str]) -> Value {
        let stdout = self.ok(args);
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{args:?}: {e}: {stdout}"))
    }

    /// Runs `rnats args` with `--timeout` [`LONG_TIMEOUT`] and fails the test if it is still
    /// running after [`HANG_LIMIT`]: it must end as soon as the servers answered.
    pub fn ok_without_waiting_out(&self, args: &[&str]) -> String {
        self.ok_without_waiting_out_with_stderr(args).0
    }

    /// [`Rnats::ok_without_waiting_out`], returning its standard output and its standard
    /// error.
    pub fn ok_without_waiting_out_with_stderr(&self, args: &[&str]) -> (String, String) {
        let mut command = self.command(&[args, &["--timeout", LONG_TIMEOUT][..]].concat());
        let child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("rnats runs");
        // The child is waited for on a thread of its own (reading its pipes, so a full pipe
        // never looks like a hang); this thread waits for the outcome, at most HANG_LIMIT.
        let pid = child.id();
        let (done, outcome) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = done.send(child.wait_with_output());
        });
        let out: Output = match outcome.recv_timeout(HANG_LIMIT) {
            Ok(out) => out.expect("rnats ends"),
            Err(_) => {
                // Only the child this test started, by its PID.
                let _ = std::process::Command::new("kill")
                    .arg(pid.to_string())
                    .status();
                panic!(
                    "{args:?} waited out its --timeout {LONG_TIMEOUT} although every server answered"
                );
            }
        };
        assert_success(&out, args);
        (
            String::from_utf8(out.stdout).expect("utf-8"),
            String::from_utf8(out.stderr).expect("utf-8"),
        )
    }

    /// Runs `rnats args`, checks it failed with one line on stderr and returns that line.
    pub fn fails(&self, args: &[&str]) -> String {
        let out = self.run(args);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(
            !out.status.success(),
            "{args:?} should fail; stderr: {stderr}"
        );
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(
            lines.len(),
            1,
            "{args:?}: one stderr line expected: {stderr}"
        );
        assert!(lines[0].starts_with("error: "), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        lines[0].to_owned()
    }

    /// Starts `rnats args` in the background and waits until it prints a line containing
    /// `ready` on stderr (its readiness line).
    pub fn spawn_ready(&self, args: &[&str], ready: &str) -> Running {
        let mut child = self
            .command(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("rnats runs");
        let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
        // Read all along, so that a command printing more than a pipe holds never waits
        // on the test.
        let stdout = read_in_background(child.stdout.take().expect("stdout"));
        let mut running = Running {
            child: Some(child),
            stdout: Some(stdout),
            stderr: None,
            ready: String::new(),
        };
        let mut seen = String::new();
        loop {
            let mut line = String::new();
            let n = stderr.read_line(&mut line).expect("read stderr");
            if n == 0 {
                let out = running.finish();
                panic!(
                    "{args:?} ended before {ready:?}: {seen}{}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            seen.push_str(&line);
            if line.contains(ready) {
                running.ready = line.trim_end().to_owned();
                break;
            }
        }
        running.stderr = Some(read_in_background(stderr));
        running
    }
}

/// Reads `from` to its end on a thread of its own.
fn read_in_background(
    mut from: impl std::io::Read + Send + 'static,
) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut all = Vec::new();
        // A read error ends what is kept; the test then sees less output than expected.
        let _ = from.read_to_end(&mut all);
        all
    })
}

/// A background `rnats`, killed when dropped unfinished.
pub struct Running {
    child: Option<Child>,
    /// Its standard output, read as it comes.
    stdout: Option<std::thread::JoinHandle<Vec<u8>>>,
    /// Its standard error after the ready line, read as it comes.
    stderr: Option<std::thread::JoinHandle<Vec<u8>>>,
    ready: String,
}

impl Running {
    /// The readiness line it printed.
    pub fn ready_line(&self) -> &str {
        &self.ready
    }

    /// Sends the command SIGINT, as a Ctrl-C in its terminal would.
    pub fn interrupt(&self) {
        let child = self.child.as_ref().expect("still running");
        // Only the child this test started, by its PID.
        let sent = std::process::Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(sent.success(), "SIGINT sent");
    }

    /// [`Running::finish`], failing the test (and killing the command) if it has not ended
    /// within `limit`.
    pub fn finish_within(&mut self, limit: std::time::Duration) -> Output {
        let pid = self.child.as_ref().expect("still running").id();
        let (done, ended) = std::sync::mpsc::channel::<()>();
        let watchdog = std::thread::spawn(move || {
            if ended.recv_timeout(limit).is_err() {
                // Only the child this test started, by its PID.
                let _ = std::process::Command::new("kill")
                    .arg(pid.to_string())
                    .status();
                return true;
            }
            false
        });
        let out = self.finish();
        let _ = done.send(());
        let killed = watchdog.join().unwrap_or(true);
        assert!(!killed, "the command did not end within {limit:?}");
        out
    }

    /// Waits for the command to end and returns its output (stderr after the ready line).
    pub fn finish(&mut self) -> Output {
        let mut child = self.child.take().expect("still running");
        let status = child.wait().expect("rnats ends");
        let joined = |reader: Option<std::thread::JoinHandle<Vec<u8>>>| {
            reader.map_or_else(Vec::new, |reader| reader.join().expect("reader thread"))
        };
        Output {
            status,
            stdout: joined(self.stdout.take()),
            stderr: joined(self.stderr.take()),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(child) = self.child.as_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Panics with both streams unless `out` is a success.
/// Connection flags for `url` as `user` of [`ACCOUNTS`].
pub fn login(url: &str, user: &str) -> Vec<String> {
    ["-s", url, "--user", user, "--password", "pass"]
        .map(str::to_owned)
        .to_vec()
}

/// `words` followed by the connection flags `conn`.
pub fn args<'a>(words: &[&'a str], conn: &'a [String]) -> Vec<&'a str> {
    words
        .iter()
        .copied()
        .chain(conn.iter().map(String::as_str))
        .collect()
}

pub fn assert_success(out: &Output, args: &[&str]) {
    assert!(
        out.status.success(),
        "{args:?} failed\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs `add` (a `stream add` of a replicated stream) again while the meta leader cannot
/// place the replicas yet ("no suitable peers": a peer can count as current a moment before
/// the leader will place a replica on it), for at most `settle`; fails the test unless it
/// succeeded. Each try is a round trip to the cluster, the event waited for.
pub fn add_once_placed(rnats: &Rnats, add: &[&str], settle: std::time::Duration) {
    let deadline = std::time::Instant::now() + settle;
    loop {
        let out = rnats.run(add);
        let placing = String::from_utf8_lossy(&out.stderr).contains("no suitable peers");
        if out.status.success() || !placing || std::time::Instant::now() > deadline {
            assert_success(&out, add);
            return;
        }
    }
}

/// Every line of `text` parsed as JSON.
pub fn json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// Writes `text` to `path`, making its directories.
pub fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}
