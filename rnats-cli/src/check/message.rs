//! `check message`: the newest message on a subject of a stream is recent enough and says
//! what it should.

use std::time::Duration;

use clap::Args;
use regex::Regex;
use serde_json::{Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::Outcome;
use super::probes::connect;
use crate::conn::{ConnArgs, parse_duration};
use crate::jetstream::duration as show;

/// Thresholds of `check message`.
#[derive(Debug, Args)]
pub(crate) struct MessageArgs {
    /// The stream.
    #[arg(long)]
    stream: String,
    /// The subject whose newest message to check.
    #[arg(long, default_value = ">")]
    subject: String,
    /// Warn when the message is older than this.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    age_warn: Option<Duration>,
    /// Critical when the message is older than this.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    age_critical: Option<Duration>,
    /// Critical unless the body matches this regular expression.
    #[arg(long, value_name = "REGEX", value_parser = crate::parse::regex)]
    content: Option<Regex>,
    /// Take the message's age from its body, a Unix timestamp in seconds, instead of the
    /// time it was stored.
    #[arg(long)]
    body_timestamp: bool,
}

/// `check message`.
pub(super) async fn check(conn: &ConnArgs, t: &MessageArgs) -> Outcome {
    let mut outcome = Outcome::new(format!("Message {} > {}", t.stream, t.subject));
    let Some(js) = connect(conn, &mut outcome).await else {
        return outcome;
    };
    let request = json!({ "last_by_subj": t.subject });
    let reply: Result<rnats::jetstream::response::Response<Value>, _> = js
        .request(format!("STREAM.MSG.GET.{}", t.stream), &request)
        .await;
    let message = match reply.map(|r| r.into_result()) {
        Ok(Ok(found)) => found["message"].clone(),
        Ok(Err(e)) => {
            outcome.critical(format!("no message: {e}"));
            return outcome;
        }
        Err(e) => {
            outcome.critical(format!("cannot read the stream: {e}"));
            return outcome;
        }
    };
    let body = message["data"]
        .as_str()
        .and_then(|b| {
            use base64::Engine;
            base64::engine::general_purpose::STANDARD.decode(b).ok()
        })
        .unwrap_or_default();
    let body = String::from_utf8_lossy(&body).into_owned();
    let stored = if t.body_timestamp {
        body.trim()
            .parse::<i64>()
            .ok()
            .and_then(|secs| OffsetDateTime::from_unix_timestamp(secs).ok())
    } else {
        message["time"]
            .as_str()
            .and_then(|text| OffsetDateTime::parse(text, &Rfc3339).ok())
    };
    match stored {
        Some(at) => {
            let age = (OffsetDateTime::now_utc() - at).unsigned_abs();
            let text = format!("message {} old", show(Duration::from_secs(age.as_secs())));
            outcome.perf(
                "age",
                age.as_secs_f64(),
                "s",
                t.age_warn.map(|d| d.as_secs_f64()),
                t.age_critical.map(|d| d.as_secs_f64()),
            );
            if t.age_critical.is_some_and(|c| age > c) {
                outcome.critical(text);
            } else if t.age_warn.is_some_and(|w| age > w) {
                outcome.warning(text);
            } else {
                outcome.ok(text);
            }
        }
        None if t.body_timestamp => outcome.critical("the body is not a Unix timestamp"),
        None => outcome.critical("the message has no time"),
    }
    if let Some(pattern) = &t.content {
        if pattern.is_match(&body) {
            outcome.ok("content matches");
        } else {
            outcome.critical(format!("content does not match {pattern}"));
        }
    }
    outcome
}
