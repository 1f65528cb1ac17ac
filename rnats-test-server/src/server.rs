//! One running `nats-server` process, owned by the test that started it.

use std::ffi::OsString;
#[cfg(unix)]
use std::io;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

#[cfg(unix)]
use rustix::process;
use tempfile::TempDir;

use crate::builder::ServerBuilder;
use crate::error::TestServerError;
use crate::info;
use crate::log::{LogBuffer, ScanEnd};
use crate::monitor;
use crate::websocket::{self, WebsocketConf};

/// Logged once the client listener is bound; the port follows the last `:`.
const CLIENT_LISTENING: &str = "Listening for client connections on ";
/// Logged once start-up is complete (after JetStream, before routes are connected).
const SERVER_READY: &str = "Server is ready";
/// How long [`NatsServer::monitor`] waits, after a refused connection, for the process's
/// stderr to end, to tell an exited server from a refusal of a live one.
const GONE_WITHIN: Duration = Duration::from_millis(500);

/// A `nats-server` child process listening on `127.0.0.1`.
///
/// Dropping it kills the process with SIGKILL, reaps it, and deletes its temporary config
/// and JetStream store.
#[derive(Debug)]
pub struct NatsServer {
    launch: Launch,
    port: u16,
    websocket_port: Option<u16>,
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
    /// The HTTP monitoring port (`-m`), fixed for the life of the handle.
    pub(crate) monitoring_port: Option<u16>,
    /// The websocket listener's file, inside `_config_dir`, if the server has one.
    pub(crate) websocket: Option<WebsocketConf>,
    /// Holds the generated config file; removed on drop.
    pub(crate) _config_dir: Option<TempDir>,
    /// The JetStream store; removed on drop.
    pub(crate) store_dir: Option<TempDir>,
}

/// The ports a started server listens on.
#[derive(Debug, Clone, Copy)]
struct Ports {
    client: u16,
    websocket: Option<u16>,
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

    /// The websocket port on `127.0.0.1`, if the server was built with
    /// [`ServerBuilder::websocket`] or [`ServerBuilder::websocket_tls`].
    pub fn websocket_port(&self) -> Option<u16> {
        self.websocket_port
    }

    /// The websocket URL, `ws://127.0.0.1:PORT` (`wss://` with
    /// [`ServerBuilder::websocket_tls`]), if the server has a websocket listener.
    pub fn websocket_url(&self) -> Option<String> {
        let port = self.websocket_port?;
        let secure = self.launch.websocket.as_ref()?.websocket.tls.is_some();
        let scheme = if secure { "wss" } else { "ws" };
        Some(format!("{scheme}://127.0.0.1:{port}"))
    }

    /// The HTTP monitoring port on `127.0.0.1`, if the server was built with
    /// [`ServerBuilder::monitoring`].
    pub fn monitoring_port(&self) -> Option<u16> {
        self.launch.monitoring_port
    }

    /// `GET path` from the monitoring endpoints (e.g. `"/leafz?subs=1"`) and its JSON body.
    ///
    /// # Errors
    ///
    /// [`TestServerError::NoMonitoring`] without [`ServerBuilder::monitoring`],
    /// [`TestServerError::Monitoring`] on an HTTP error or a body that is not JSON,
    /// [`TestServerError::Gone`] (with the server's last log lines) when the connection is
    /// refused because the process has exited, and [`TestServerError::Io`] when the server
    /// cannot be reached otherwise.
    pub fn monitor(&self, path: &str) -> Result<serde_json::Value, TestServerError> {
        let port = self
            .launch
            .monitoring_port
            .ok_or(TestServerError::NoMonitoring)?;
        monitor::get(port, path).map_err(|e| self.refused_because_gone(e))
    }

    /// `error`, or [`TestServerError::Gone`] when it is a refused connection and the
    /// process's stderr ends within [`GONE_WITHIN`] (a process that just exited closes it
    /// moments later; one that is alive keeps it open, and the refusal stands).
    fn refused_because_gone(&self, error: TestServerError) -> TestServerError {
        let TestServerError::Io(e) = &error else {
            return error;
        };
        if e.kind() != std::io::ErrorKind::ConnectionRefused {
            return error;
        }
        match self.log.scan(Instant::now() + GONE_WITHIN, |_| None::<()>) {
            Err(ScanEnd::Closed) => TestServerError::Gone {
                log: self.log.tail(),
            },
            _ => error,
        }
    }

    /// Polls the monitoring endpoint `path` until `holds` accepts its body, and returns that
    /// body: the way to wait for the server's view of interest, connections or JetStream to
    /// catch up (e.g. a leaf node's subscription reaching the hub) without a fixed sleep.
    ///
    /// # Errors
    ///
    /// [`TestServerError::NotFormed`] with the last body seen when `timeout` passes first;
    /// the errors of [`monitor`](Self::monitor) other than a refused connection (a server
    /// still starting up is polled again).
    pub fn wait_for_monitor(
        &self,
        path: &str,
        timeout: Duration,
        mut holds: impl FnMut(&serde_json::Value) -> bool,
    ) -> Result<serde_json::Value, TestServerError> {
        let what = format!("{path} on {} to satisfy the test's condition", self.url());
        monitor::poll_until(Instant::now() + timeout, &what, |last_seen| {
            let body = match self.monitor(path) {
                Ok(body) => body,
                Err(TestServerError::Io(e)) => {
                    *last_seen = e.to_string();
                    return Ok(None);
                }
                Err(e) => return Err(e),
            };
            if holds(&body) {
                return Ok(Some(body));
            }
            *last_seen = body.to_string();
            Ok(None)
        })
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

    /// Kills the server and starts it again with the same arguments on the same port (and
    /// websocket port), then waits for readiness. The JetStream store is kept.
    pub fn restart(&mut self) -> Result<(), TestServerError> {
        self.kill();
        let fixed = Ports {
            client: self.port,
            websocket: self.websocket_port,
        };
        let (process, log, ports) = spawn_ready(&self.launch, Some(fixed))?;
        debug_assert_eq!(ports.client, self.port);
        debug_assert_eq!(ports.websocket, self.websocket_port);
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

    /// Freezes the server (SIGSTOP), as a long GC pause or a stopped VM would: its sockets
    /// stay open and take bytes into their kernel buffers, but nothing is read, answered or
    /// sent, so its peers and clients notice only through their own timeouts. Undone by
    /// [`unfreeze`](Self::unfreeze); [`kill`](Self::kill) and drop work on a frozen server.
    ///
    /// Returns once every thread of the server has stopped, not merely once the signal was
    /// sent: the kernel stops a process's threads one by one, and until the last one has,
    /// the others may still read and answer what reaches them.
    #[cfg(unix)]
    pub fn freeze(&self) -> Result<(), TestServerError> {
        let pid = self.running_pid()?;
        process::kill_process(pid, process::Signal::STOP).map_err(io::Error::from)?;
        // The parent is told when the stop is complete (the last thread has stopped). NOWAIT
        // leaves that report where it is, and std's own `wait` never asks for stops. EXITED:
        // a server that dies instead of stopping must not leave this waiting.
        let status = process::waitid(
            process::WaitId::Pid(pid),
            process::WaitIdOptions::STOPPED
                | process::WaitIdOptions::EXITED
                | process::WaitIdOptions::NOWAIT,
        )
        .map_err(io::Error::from)?;
        match status {
            Some(status) if status.stopped() => Ok(()),
            _ => Err(TestServerError::NotRunning),
        }
    }

    /// Lets a server frozen by [`freeze`](Self::freeze) run again (SIGCONT). Every thread is
    /// runnable again when this returns: the kernel wakes them as it takes the signal.
    #[cfg(unix)]
    pub fn unfreeze(&self) -> Result<(), TestServerError> {
        let pid = self.running_pid()?;
        process::kill_process(pid, process::Signal::CONT).map_err(io::Error::from)?;
        Ok(())
    }

    /// The process to signal, while there is one.
    #[cfg(unix)]
    fn running_pid(&self) -> Result<process::Pid, TestServerError> {
        if self.process.is_none() {
            return Err(TestServerError::NotRunning);
        }
        let raw = i32::try_from(self.pid).map_err(|_| TestServerError::NotRunning)?;
        process::Pid::from_raw(raw).ok_or(TestServerError::NotRunning)
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
        let fixed = port.map(|client| Ports {
            client,
            websocket: None,
        });
        let (process, log, ports) = spawn_ready(&launch, fixed)?;
        Ok(NatsServer {
            pid: process.child.id(),
            launch,
            port: ports.client,
            websocket_port: ports.websocket,
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

/// Spawns the server with `-p <port>` (or `-p -1`), and its websocket listener on the given
/// port (or any), and waits for its readiness log lines. On failure the child is killed and
/// reaped before returning.
fn spawn_ready(
    launch: &Launch,
    ports: Option<Ports>,
) -> Result<(Process, Arc<LogBuffer>, Ports), TestServerError> {
    let deadline = Instant::now() + launch.ready_timeout;
    if let Some(conf) = &launch.websocket {
        conf.write(ports.and_then(|p| p.websocket))?;
    }
    let port_arg = ports.map_or_else(|| "-1".to_owned(), |p| p.client.to_string());
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
    match wait_ready(&log, deadline, launch.websocket.is_some()) {
        Ok(ports) => Ok((process, log, ports)),
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

/// Waits for the client listener line (and the websocket one, if `websocket`), then for the
/// line saying start-up is complete, and returns the ports.
fn wait_ready(log: &LogBuffer, deadline: Instant, websocket: bool) -> Result<Ports, ScanEnd> {
    let mut client = None;
    let mut websocket_port = None;
    log.scan(deadline, |line| {
        if let Some((_, addr)) = line.split_once(CLIENT_LISTENING) {
            client = addr
                .rsplit_once(':')
                .and_then(|(_, p)| p.trim().parse().ok());
        }
        if let Some(port) = websocket::listening_port(line) {
            websocket_port = Some(port);
        }
        if !line.contains(SERVER_READY) || (websocket && websocket_port.is_none()) {
            return None;
        }
        client.map(|client| Ports {
            client,
            websocket: websocket_port,
        })
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
