//! nats-py as the second, independent client of the interchange tests.
//!
//! A test writes a short Python script against nats-py's asyncio API and runs it with
//! [`nats_py`]: the script gets the server URL as `NATS_URL` in its environment and whatever
//! else the test passes as arguments. nats-py is installed by `scripts/ensure-nats-py` (called
//! from `scripts/test` and `.ci/run`), never at test time; a missing or different version is a
//! clear error, not a skipped test.

use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use crate::TestServerError;

/// The nats-py release the interchange tests are written against (`pip install nats-py==…`).
pub const NATS_PY_VERSION: &str = "2.16.0";

fn check_installed() -> Result<(), TestServerError> {
    static CHECKED: OnceLock<Result<(), String>> = OnceLock::new();
    let result = CHECKED.get_or_init(|| {
        let out = Command::new("python3")
            .args(["-c", "import importlib.metadata as m; print(m.version('nats-py'))"])
            .output()
            .map_err(|e| format!("cannot run python3: {e}"))?;
        let found = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        if out.status.success() && found == NATS_PY_VERSION {
            Ok(())
        } else {
            Err(format!(
                "nats-py {NATS_PY_VERSION} is not installed (found {:?}); run `. scripts/ensure-nats-py` \
                 or `pip install nats-py=={NATS_PY_VERSION}`",
                if found.is_empty() { "none" } else { found.as_str() }
            ))
        }
    });
    result
        .clone()
        .map_err(|message| TestServerError::Peer { message })
}

/// A `python3 -c script` command with `NATS_URL=url` set, ready to take more arguments and be
/// spawned (for a peer that runs beside the test, such as a caller of an rnats service) or run to
/// completion with [`run_nats_py`].
///
/// # Errors
///
/// [`TestServerError::Peer`] when python3 or the pinned nats-py is missing.
pub fn nats_py(url: &str, script: &str) -> Result<Command, TestServerError> {
    check_installed()?;
    let mut command = Command::new("python3");
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
