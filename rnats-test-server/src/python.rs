//! nats-py as the second, independent client of the interchange tests.
//!
//! A test writes a short Python script against nats-py's asyncio API and runs it with
//! [`nats_py`]: the script gets the server URL as `NATS_URL` in its environment and whatever
//! else the test passes as arguments. nats-py is installed by `scripts/ensure-nats-py` (called
//! from `scripts/test` and `.ci/run`), never at test time; a missing or different version is a
//! clear error, not a skipped test.
//!
//! The interpreter is the first of these that has the pinned nats-py: `$RNATS_PYTHON` (which
//! `scripts/ensure-nats-py` exports), the virtual environment's `bin/python3` (where that script
//! installs: `$RNATS_VENV`, else `~/.cache/rnats/venv`), then `python3` from `PATH` (a machine that installed nats-py
//! by other means).

use std::ffi::OsString;
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use crate::{TestServerError, venv};

/// The nats-py release the interchange tests are written against (`pip install nats-py==…`).
pub const NATS_PY_VERSION: &str = "2.16.0";

/// Names the Python interpreter to run nats-py scripts with.
const PYTHON_ENV: &str = "RNATS_PYTHON";

/// The interpreters worth asking, in order of preference.
fn candidates() -> Vec<OsString> {
    let mut found = Vec::new();
    if let Some(python) = std::env::var_os(PYTHON_ENV).filter(|p| !p.is_empty()) {
        found.push(python);
    }
    if let Some(python) = venv::bin("python3") {
        found.push(python.into_os_string());
    }
    found.push(OsString::from("python3"));
    found
}

/// The nats-py version `python` has, if it runs at all.
fn nats_py_version(python: &OsString) -> Result<String, String> {
    let out = Command::new(python)
        .args([
            "-c",
            "import importlib.metadata as m; print(m.version('nats-py'))",
        ])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", python.to_string_lossy()))?;
    let found = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if out.status.success() && !found.is_empty() {
        Ok(found)
    } else {
        Err(format!("{}: no nats-py", python.to_string_lossy()))
    }
}

/// The interpreter with the pinned nats-py, looked up once per test binary.
fn python() -> Result<OsString, TestServerError> {
    static PYTHON: OnceLock<Result<OsString, String>> = OnceLock::new();
    let result = PYTHON.get_or_init(|| {
        let mut seen = Vec::new();
        for python in candidates() {
            match nats_py_version(&python) {
                Ok(version) if version == NATS_PY_VERSION => return Ok(python),
                Ok(version) => seen.push(format!("{}: nats-py {version}", python.to_string_lossy())),
                Err(why) => seen.push(why),
            }
        }
        Err(format!(
            "nats-py {NATS_PY_VERSION} is not installed ({}); run `. scripts/ensure-nats-py`, \
             which installs it into a virtual environment, or set {PYTHON_ENV} to a python that has it",
            seen.join("; ")
        ))
    });
    result
        .clone()
        .map_err(|message| TestServerError::Peer { message })
}

/// A `python -c script` command (the interpreter found as the module describes) with `NATS_URL=url` set, ready to take more arguments and be
/// spawned (for a peer that runs beside the test, such as a caller of an rnats service) or run to
/// completion with [`run_nats_py`].
///
/// # Errors
///
/// [`TestServerError::Peer`] when no python with the pinned nats-py is found.
pub fn nats_py(url: &str, script: &str) -> Result<Command, TestServerError> {
    let mut command = Command::new(python()?);
    command
        .arg("-c")
        .arg(script)
        .env("NATS_URL", url)
        .env("PYTHONUNBUFFERED", "1")
        .stdin(Stdio::null());
    Ok(command)
}

/// Runs `script` under nats-py against `url` with `args` and returns its standard output.
///
/// # Errors
///
/// [`TestServerError::Peer`] when nats-py is missing or the script exits with a failure (its
/// stderr is in the message), [`TestServerError::Io`] when python3 cannot be started.
pub fn run_nats_py(url: &str, script: &str, args: &[&str]) -> Result<String, TestServerError> {
    let Output {
        status,
        stdout,
        stderr,
    } = nats_py(url, script)?.args(args).output()?;
    if !status.success() {
        return Err(TestServerError::Peer {
            message: format!(
                "nats-py script failed ({status}):\n{}",
                String::from_utf8_lossy(&stderr)
            ),
        });
    }
    String::from_utf8(stdout).map_err(|e| TestServerError::Peer {
        message: format!("nats-py script printed non-UTF-8 output: {e}"),
    })
}
