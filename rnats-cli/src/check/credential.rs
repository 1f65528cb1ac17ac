//! `check credential`: a credentials file's user JWT is valid for long enough.

use std::path::PathBuf;
use std::time::Duration;

use base64::Engine;
use clap::Args;
use serde_json::Value;
use time::OffsetDateTime;

use super::Outcome;
use crate::conn::parse_duration;
use crate::jetstream::duration as show;

/// Thresholds of `check credential`.
#[derive(Debug, Args)]
pub(crate) struct CredentialArgs {
    /// The credentials file (a user JWT and its NKey seed).
    #[arg(long, value_name = "FILE")]
    credential: PathBuf,
    /// Warn when the JWT expires sooner than this.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    validity_warn: Option<Duration>,
    /// Critical when the JWT expires sooner than this.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    validity_critical: Option<Duration>,
    /// Critical when the JWT never expires (the default; `--require-expiry false` to allow).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    require_expiry: bool,
}

/// `check credential`.
pub(super) fn check(t: &CredentialArgs) -> Outcome {
    let mut outcome = Outcome::new("Credential");
    let text = match std::fs::read_to_string(&t.credential) {
        Ok(text) => text,
        Err(e) => {
            outcome.critical(format!("cannot read {}: {e}", t.credential.display()));
            return outcome;
        }
    };
    let Some(claims) = user_jwt(&text).and_then(|jwt| claims(&jwt)) else {
        outcome.critical("no user JWT in the file");
        return outcome;
    };
    let Some(expires) = claims["exp"].as_i64().filter(|exp| *exp > 0) else {
        if t.require_expiry {
            outcome.critical("the credential never expires");
        } else {
            outcome.ok("the credential never expires");
        }
        return outcome;
    };
    let now = OffsetDateTime::now_utc().unix_timestamp();
    let left = expires - now;
    outcome.perf(
        "expiry",
        left as f64,
        "s",
        t.validity_warn.map(|d| d.as_secs_f64()),
        t.validity_critical.map(|d| d.as_secs_f64()),
    );
    if left <= 0 {
        outcome.critical("the credential has expired");
        return outcome;
    }
    let left = Duration::from_secs(left.unsigned_abs());
    let text = format!("expires in {}", show(left));
    if t.validity_critical.is_some_and(|c| left < c) {
        outcome.critical(text);
    } else if t.validity_warn.is_some_and(|w| left < w) {
        outcome.warning(text);
    } else {
        outcome.ok(text);
    }
    outcome
}

/// The user JWT of a credentials file: the line after `-----BEGIN NATS USER JWT-----`.
fn user_jwt(text: &str) -> Option<String> {
    let mut lines = text.lines().map(str::trim);
    lines.find(|l| l.starts_with("-----BEGIN NATS USER JWT"))?;
    lines.find(|l| !l.is_empty()).map(str::to_owned)
}

/// The claims (the middle part) of a JWT.
fn claims(jwt: &str) -> Option<Value> {
    let payload = jwt.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .ok()?;
    serde_json::from_slice(&bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn creds(claims: &str) -> String {
        let encode = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
        format!(
            "-----BEGIN NATS USER JWT-----\n{}.{}.sig\n------END NATS USER JWT------\n\n\
             -----BEGIN USER NKEY SEED-----\nSUAX\n------END USER NKEY SEED------\n",
            encode(r#"{"typ":"JWT","alg":"ed25519-nkey"}"#),
            encode(claims)
        )
    }

    fn checked(text: &str, warn: Option<u64>, require: bool) -> Outcome {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("user.creds");
        std::fs::write(&path, text).expect("written");
        check(&CredentialArgs {
            credential: path,
            validity_warn: warn.map(Duration::from_secs),
            validity_critical: Some(Duration::from_secs(60)),
            require_expiry: require,
        })
    }

    #[test]
    fn expiry_is_held_to_the_thresholds() {
        let now = OffsetDateTime::now_utc().unix_timestamp();
        let soon = creds(&format!(r#"{{"exp":{}}}"#, now + 600));
        assert_eq!(
            checked(&soon, Some(3600), true).status(),
            super::super::Status::Warning
        );
        assert_eq!(
            checked(&soon, None, true).status(),
            super::super::Status::Ok
        );
        let gone = creds(&format!(r#"{{"exp":{}}}"#, now - 1));
        assert_eq!(
            checked(&gone, None, true).status(),
            super::super::Status::Critical
        );
        let forever = creds(r#"{"sub":"U"}"#);
        assert_eq!(
            checked(&forever, None, true).status(),
            super::super::Status::Critical
        );
        assert_eq!(
            checked(&forever, None, false).status(),
            super::super::Status::Ok
        );
        assert_eq!(
            checked("junk", None, false).status(),
            super::super::Status::Critical
        );
    }
}
