//! One running `nats-server` process, owned by the test that started it.

use std::ffi::OsString;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tempfile::TempDir;

use crate::builder::ServerBuilder;
use crate::error::TestServerError;
use crate::info;
use crate::log::{LogBuffer, ScanEnd};

/// Logged once the client listener is bound; the port follows the last `:`.
const CLIENT_LISTENING: &str = "Listening for client connections on ";
/// Logged once start-up is complete (after JetStream, before routes are connected).
const SERVER_READY: &str = "Server is ready";

/// A `nats-server` child process listening on `127.0.0.1`.
///
/// Dropping it kills the process with SIGKILL, reaps it, and deletes its temporary config
/// and JetStream store.
#[derive(Debug)]
pub struct NatsServer {
    launch: Launch,
    port: u16,
    pid: u32,
    log: Arc<LogBuffer>,
    process: Option<Process>,
}

/// What is needed to start (and restart) the same server: the command line without `-p`
/// and the temporary directories it refers to.
#[derive(Debug)]
pub(crate) struct Launch {
    pub(crate) program: OsString,
    pub(crate) args: Vec<OsString>,
    pub(crate) ready_timeout: Duration,
    /// Holds the generated config file; removed on drop.
    pub(crate) _config_dir: Option<TempDir>,
    /// The JetStream store; removed on drop.
    pub(crate) store_dir: Option<TempDir>,
}

/// The live child and the thread draining its stderr.
#[derive(Debug)]
struct Process {
    child: Child,
    stderr_reader: JoinHandle<()>,
}

impl NatsServer {
    /// Starts a default server.
    ///
    /// # Panics
    ///
    /// Panics with the reason (binary missing, early exit with its log, ...) if the server
    /// cannot be started: a convenience for tests.
    pub fn start() -> NatsServer {
        Self::builder()
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start nats-server: {e}"))
    }

    /// Starts a server with JetStream enabled on a temporary store.
    ///
    /// # Panics
    ///
    /// As [`NatsServer::start`].
    pub fn with_jetstream() -> NatsServer {
        Self::builder()
            .jetstream(true)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start nats-server with JetStream: {e}"))
    }

    /// Options for a server; same as [`ServerBuilder::new`].
    pub fn builder() -> ServerBuilder {
        ServerBuilder::new()
    }

    /// The client port on `127.0.0.1`.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The client URL, `nats://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// Same as [`url`](Self::url).
    pub fn client_url(&self) -> String {
        self.url()
    }

    /// Process id of the current (or, after [`kill`](Self::kill), the last) process.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The JetStream store directory, if JetStream is enabled.
    pub fn store_dir(&self) -> Option<&Path> {
        self.launch.store_dir.as_ref().map(TempDir::path)
    }

    /// Kills the server and starts it again with the same arguments on the same port, then
    /// waits for readiness. The JetStream store is kept.
    pub fn restart(&mut self) -> Result<(), TestServerError> {
        self.kill();
        let (process, log, port) = spawn_ready(&self.launch, Some(self.port))?;
        debug_assert_eq!(port, self.port);
        self.pid = process.child.id();
        self.log = log;
        self.process = Some(process);
        Ok(())
    }

    /// Kills the server now (SIGKILL) and reaps it; does nothing if it is already stopped.
    pub fn kill(&mut self) {
        if let Some(process) = self.process.take() {
            process.stop();
        }
    }

    /// Whether the process is still running (it has not been killed nor exited on its own).
    pub fn is_running(&mut self) -> bool {
        match &mut self.process {
            Some(process) => matches!(process.child.try_wait(), Ok(None)),
            None => false,
        }
    }

    /// Sends a signal through `nats-server --signal <sig>=<pid>`, e.g. `ldm` (lame duck
    /// mode), `reload`, `reopen`, `stop` or `quit`.
    ///
    /// A server in lame duck mode with no clients left shuts itself down at once; wait on
    /// [`wait_for_log`](Self::wait_for_log) (`"Entering lame duck mode"`) rather than on
    /// the process.
    pub fn signal(&self, sig: &str) -> Result<(), TestServerError> {
        if self.process.is_none() {
            return Err(TestServerError::NotRunning);
        }
        let output = Command::new(&self.launch.program)
            .arg("--signal")
            .arg(format!("{sig}={}", self.pid))
            .stdin(Stdio::null())
            .output()
            .map_err(spawn_error)?;
        if output.status.success() {
            return Ok(());
        }
        let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
        text.push_str(&String::from_utf8_lossy(&output.stderr));
        Err(TestServerError::Signal {
            signal: sig.to_owned(),
            status: output.status,
            output: text.trim().to_owned(),
        })
    }

    /// The last stderr lines (up to 200) of the current or last process.
    pub fn log_tail(&self) -> Vec<String> {
        self.log.tail()
    }

    /// Waits until a stderr line containing `needle` has been logged by the current process
    /// (including lines logged before the call, as long as they are still retained) and
    /// returns it.
    pub fn wait_for_log(&self, needle: &str, timeout: Duration) -> Result<String, TestServerError> {
        let deadline = Instant::now() + timeout;
        self.log
            .scan(deadline, |line| {
                line.contains(needle).then(|| line.to_owned())
            })
            .map_err(|_| TestServerError::LogLineMissing {
                needle: needle.to_owned(),
                log: self.log.tail(),
            })
    }

    /// Connects, reads the server's first `INFO` line and returns its JSON body.
    pub fn info(&self) -> Result<serde_json::Value, TestServerError> {
        info::read_info(self.port, Duration::from_secs(5))
    }

    /// Starts the process described by `launch` and waits for readiness.
    pub(crate) fn launch(launch: Launch, port: Option<u16>) -> Result<NatsServer, TestServerError> {
        let (process, log, port) = spawn_ready(&launch, port)?;
        Ok(NatsServer {
            pid: process.child.id(),
            launch,
            port,
            log,
            process: Some(process),
        })
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        self.kill();
    }
}

impl Process {
    /// SIGKILL, reap, and let the stderr reader reach end of file.
    fn stop(mut self) {
        // Errors mean the child is already gone, which is what we want anyway.
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = self.stderr_reader.join();
    }
}

/// Spawns the server with `-p <port>` (or `-p -1`) and waits for its readiness log lines.
/// On failure the child is killed and reaped before returning.
fn spawn_ready(
    launch: &Launch,
    port: Option<u16>,
) -> Result<(Process, Arc<LogBuffer>, u16), TestServerError> {
    let deadline = Instant::now() + launch.ready_timeout;
    let port_arg = port.map_or_else(|| "-1".to_owned(), |p| p.to_string());
    let mut child = Command::new(&launch.program)
        .args(&launch.args)
        .args(["-p", &port_arg])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(spawn_error)?;
    let drained = child
        .stderr
        .take()
        .ok_or_else(|| std::io::Error::other("child stderr was not piped"))
        .and_then(LogBuffer::drain);
    let (log, stderr_reader) = match drained {
        Ok(drained) => drained,
        Err(e) => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(e.into());
        }
    };
    let process = Process {
        child,
        stderr_reader,
    };
    match wait_ready(&log, deadline) {
        Ok(port) => Ok((process, log, port)),
        Err(end) => {
            process.stop();
            let log = log.tail();
            Err(match end {
                ScanEnd::Closed => TestServerError::Exited { log },
                ScanEnd::TimedOut => TestServerError::NotReady { log },
            })
        }
    }
}

/// Waits for the client listener line, then for the line saying start-up is complete, and
/// returns the client port.
fn wait_ready(log: &LogBuffer, deadline: Instant) -> Result<u16, ScanEnd> {
    let mut port = None;
    log.scan(deadline, |line| {
        if let Some((_, addr)) = line.split_once(CLIENT_LISTENING) {
            port = addr
                .rsplit_once(':')
                .and_then(|(_, p)| p.trim().parse().ok());
        }
        if line.contains(SERVER_READY) {
            port
        } else {
            None
        }
    })
}

/// Maps a failed spawn to [`TestServerError::NotFound`] when the binary is missing.
fn spawn_error(e: std::io::Error) -> TestServerError {
    if e.kind() == std::io::ErrorKind::NotFound {
        TestServerError::NotFound
    } else {
        TestServerError::Io(e)
    }
}
