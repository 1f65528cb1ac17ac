//! nats.js on node as the peer client of the JetStream, Key-Value and Object Store
//! interchange tests.
//!
//! A test writes a short CommonJS script against nats.js (`@nats-io/transport-node`'s
//! `connect`, `@nats-io/jetstream`, `@nats-io/kv`, `@nats-io/obj`) and runs it with
//! [`run_nats_js`]: the script gets the server URL as `NATS_URL` in its environment and
//! whatever else the test passes as arguments (`process.argv.slice(1)`). nats.js is installed by `scripts/ensure-nats-js`
//! (called from `scripts/test` and `.ci/run`) into `RNATS_NATS_JS_DIR`, by default
//! `~/.cache/rnats/nats-js-<version>`, never at test time; a missing or different version is
//! a clear error, not a skipped test.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use crate::TestServerError;

/// The nats.js release the interchange tests are written against (npm `@nats-io/jetstream`,
/// `@nats-io/kv`, `@nats-io/obj` and `@nats-io/transport-node`).
pub const NATS_JS_VERSION: &str = "3.4.0";

/// Where `scripts/ensure-nats-js` installs nats.js.
fn install_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("RNATS_NATS_JS_DIR") {
        return PathBuf::from(dir);
    }
    let home = std::env::var_os("HOME").unwrap_or_default();
    PathBuf::from(home)
        .join(".cache/rnats")
        .join(format!("nats-js-{NATS_JS_VERSION}"))
}

fn check_installed() -> Result<PathBuf, TestServerError> {
    static CHECKED: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let result = CHECKED.get_or_init(|| {
        let modules = install_dir().join("node_modules");
        for package in ["jetstream", "kv", "obj", "transport-node"] {
            let manifest = modules.join("@nats-io").join(package).join("package.json");
            let text = std::fs::read_to_string(&manifest).unwrap_or_default();
            let found = serde_json::from_str::<serde_json::Value>(&text)
                .ok()
                .and_then(|v| v["version"].as_str().map(str::to_owned));
            if found.as_deref() != Some(NATS_JS_VERSION) {
                return Err(format!(
                    "nats.js {NATS_JS_VERSION} (@nats-io/{package}) is not installed in {} (found {}); \
                     run `. scripts/ensure-nats-js`",
                    modules.display(),
                    found.as_deref().unwrap_or("none")
                ));
            }
        }
        Ok(modules)
    });
    result
        .clone()
        .map_err(|message| TestServerError::Peer { message })
}

/// A `node -e script` command with `NATS_URL=url` and nats.js on `NODE_PATH`, ready to take
/// more arguments and be spawned, or run to completion with [`run_nats_js`].
///
/// # Errors
///
/// [`TestServerError::Peer`] when the pinned nats.js is missing.
pub fn nats_js(url: &str, script: &str) -> Result<Command, TestServerError> {
    let modules = check_installed()?;
    let mut command = Command::new("node");
    command
        .arg("-e")
        .arg(script)
        .env("NATS_URL", url)
        .env("NODE_PATH", modules)
        .stdin(Stdio::null());
    Ok(command)
}

/// Runs `script` under nats.js against `url` with `args` and returns its standard output.
///
/// # Errors
///
/// [`TestServerError::Peer`] when nats.js is missing or the script exits with a failure (its
/// stderr is in the message), [`TestServerError::Io`] when node cannot be started.
pub fn run_nats_js(url: &str, script: &str, args: &[&str]) -> Result<String, TestServerError> {
    let Output {
        status,
        stdout,
        stderr,
    } = nats_js(url, script)?.args(args).output()?;
    if !status.success() {
        return Err(TestServerError::Peer {
            message: format!(
                "nats.js script failed ({status}):\n{}",
                String::from_utf8_lossy(&stderr)
            ),
        });
    }
    String::from_utf8(stdout).map_err(|e| TestServerError::Peer {
        message: format!("nats.js script printed non-UTF-8 output: {e}"),
    })
}
