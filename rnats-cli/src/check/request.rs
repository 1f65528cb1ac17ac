//! `check request`: a request-reply service answers in time, with what is expected.

use std::time::{Duration, Instant};

use bytes::Bytes;
use clap::Args;
use regex::Regex;
use rnats::{HeaderMap, Request};

use super::Outcome;
use super::probes::timed;
use crate::conn::{ConnArgs, parse_duration};

/// Thresholds of `check request`.
#[derive(Debug, Args)]
pub(crate) struct RequestArgs {
    /// The subject to send the request to.
    #[arg(long)]
    subject: String,
    /// The request's body.
    #[arg(long, default_value = "")]
    payload: String,
    /// A header of the request, K=V or K:V (repeatable).
    #[arg(long = "headers", value_name = "K=V", value_parser = parse_pair)]
    headers: Vec<(String, String)>,
    /// Critical unless the reply's body matches this regular expression.
    #[arg(long, value_name = "REGEX", value_parser = crate::parse::regex)]
    match_payload: Option<Regex>,
    /// Critical unless the reply has this header with this value, K=V (repeatable).
    #[arg(long, value_name = "K=V", value_parser = parse_pair)]
    match_headers: Vec<(String, String)>,
    /// Warn when the reply takes longer.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    response_warn: Option<Duration>,
    /// Critical when the reply takes longer.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    response_critical: Option<Duration>,
}

/// Parses `K=V` (or `K:V`).
fn parse_pair(text: &str) -> Result<(String, String), String> {
    let (key, value) = text
        .split_once('=')
        .or_else(|| text.split_once(':'))
        .ok_or("expected K=V")?;
    if key.trim().is_empty() {
        return Err("expected K=V".to_owned());
    }
    Ok((key.trim().to_owned(), value.trim().to_owned()))
}

/// `check request`.
pub(super) async fn check(conn: &ConnArgs, t: &RequestArgs) -> Outcome {
    let mut outcome = Outcome::new(format!("Request {}", t.subject));
    let (client, settings) = match conn.connect().await {
        Ok(connected) => connected,
        Err(e) => {
            outcome.critical(e.to_string());
            return outcome;
        }
    };
    let mut request = Request::new().payload(Bytes::from(t.payload.clone()));
    if !t.headers.is_empty() {
        let mut headers = HeaderMap::new();
        for (key, value) in &t.headers {
            headers.insert(key.as_str(), value.as_str());
        }
        request = request.headers(headers);
    }
    let started = Instant::now();
    let reply = match client.send_request(t.subject.clone(), request).await {
        Ok(reply) => reply,
        Err(e) => {
            outcome.critical(format!("no reply: {e}"));
            return outcome;
        }
    };
    let took = started.elapsed();
    let crit = t.response_critical.unwrap_or(settings.timeout);
    let warn = t.response_warn.unwrap_or(crit);
    timed(&mut outcome, "time", "reply", took, warn, crit);
    if let Some(pattern) = &t.match_payload {
        let body = String::from_utf8_lossy(&reply.payload);
        if pattern.is_match(&body) {
            outcome.ok("payload matches");
        } else {
            outcome.critical(format!("payload does not match {pattern}"));
        }
    }
    for (key, wanted) in &t.match_headers {
        let got = reply
            .headers
            .as_ref()
            .and_then(|h| h.get(key.as_str()))
            .map(|v| v.as_str().to_owned());
        match got {
            Some(value) if value == *wanted => outcome.ok(format!("header {key} matches")),
            Some(value) => outcome.critical(format!("header {key} is {value:?}, not {wanted:?}")),
            None => outcome.critical(format!("no header {key}")),
        }
    }
    outcome
}
