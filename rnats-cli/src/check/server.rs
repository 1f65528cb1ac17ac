//! `check server`: one server's health from the system account's view
//! (`$SYS.REQ.SERVER.PING.VARZ`): CPU, memory, connections, subscriptions, uptime, and
//! whether authentication, TLS and JetStream are on.

use std::time::Duration;

use clap::Args;
use rnats::system::{ServerFilter, System};
use serde_json::Value;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::Outcome;
use crate::conn::{ConnArgs, parse_duration};
use crate::core::system_failed;
use crate::jetstream::duration as show;

/// Every server's general information.
const VARZ: &str = "$SYS.REQ.SERVER.PING.VARZ";

/// Thresholds of `check server`.
#[derive(Debug, Args)]
pub(crate) struct ServerArgs {
    /// The server's name (the one that must answer).
    #[arg(long)]
    name: String,
    /// Warn past this CPU use, in percent.
    #[arg(long, value_name = "PERCENT")]
    cpu_warn: Option<f64>,
    /// Critical past this CPU use, in percent.
    #[arg(long, value_name = "PERCENT")]
    cpu_critical: Option<f64>,
    /// Warn past this memory use, in bytes.
    #[arg(long, value_name = "BYTES")]
    mem_warn: Option<u64>,
    /// Critical past this memory use, in bytes.
    #[arg(long, value_name = "BYTES")]
    mem_critical: Option<u64>,
    /// Warn past this many connections (below it when higher than --conn-critical).
    #[arg(long, value_name = "N")]
    conn_warn: Option<u64>,
    /// Critical past this many connections (below it when lower than --conn-warn).
    #[arg(long, value_name = "N")]
    conn_critical: Option<u64>,
    /// Warn past this many subscriptions (below it when higher than --subs-critical).
    #[arg(long, value_name = "N")]
    subs_warn: Option<u64>,
    /// Critical past this many subscriptions (below it when lower than --subs-warn).
    #[arg(long, value_name = "N")]
    subs_critical: Option<u64>,
    /// Warn when the server has been up for less than this (it restarted).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    uptime_warn: Option<Duration>,
    /// Critical when the server has been up for less than this.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    uptime_critical: Option<Duration>,
    /// Critical unless clients must authenticate.
    #[arg(long)]
    auth_required: bool,
    /// Critical unless clients must use TLS.
    #[arg(long)]
    tls_required: bool,
    /// Critical unless JetStream is on.
    #[arg(long)]
    js_required: bool,
}

/// `check server`.
pub(super) async fn check(conn: &ConnArgs, t: &ServerArgs) -> Outcome {
    let mut outcome = Outcome::new(format!("Server {}", t.name));
    let (client, settings) = match conn.connect().await {
        Ok(connected) => connected,
        Err(e) => {
            outcome.critical(e.to_string());
            return outcome;
        }
    };
    let system = System::new(client)
        .timeout(settings.timeout)
        .filter(ServerFilter::new().name(&t.name).exact_match(true))
        .expect(1);
    let varz = match system.request_raw("VARZ", Value::Null).await {
        Ok(answers) => answers.into_iter().next().and_then(|a| a.data),
        Err(e) => {
            outcome.critical(system_failed(e, VARZ, settings.timeout).to_string());
            return outcome;
        }
    };
    let Some(varz) = varz.filter(|v| v.is_object()) else {
        outcome.critical(format!("server {} did not answer", t.name));
        return outcome;
    };
    let cpu = varz["cpu"].as_f64().unwrap_or(0.0);
    above(&mut outcome, "cpu", cpu, "%", t.cpu_warn, t.cpu_critical);
    let mem = varz["mem"].as_u64().unwrap_or(0) as f64;
    let as_f64 = |v: Option<u64>| v.map(|n| n as f64);
    above(
        &mut outcome,
        "mem",
        mem,
        "B",
        as_f64(t.mem_warn),
        as_f64(t.mem_critical),
    );
    let conns = varz["connections"].as_u64().unwrap_or(0) as f64;
    count(
        &mut outcome,
        "connections",
        conns,
        t.conn_warn,
        t.conn_critical,
    );
    let subs = varz["subscriptions"].as_u64().unwrap_or(0) as f64;
    count(
        &mut outcome,
        "subscriptions",
        subs,
        t.subs_warn,
        t.subs_critical,
    );
    uptime(&mut outcome, &varz, t);
    for (required, field, what) in [
        (t.auth_required, "auth_required", "authentication"),
        (t.tls_required, "tls_required", "TLS"),
    ] {
        if required {
            required_on(&mut outcome, varz[field].as_bool() == Some(true), what);
        }
    }
    if t.js_required {
        let on = varz["jetstream"]["config"].is_object();
        required_on(&mut outcome, on, "JetStream");
    }
    outcome
}

/// A value that must stay at or below its marks.
fn above(
    outcome: &mut Outcome,
    what: &str,
    v: f64,
    unit: &'static str,
    warn: Option<f64>,
    crit: Option<f64>,
) {
    outcome.perf(what, v, unit, warn, crit);
    let text = format!("{what} {v:.0}{unit}");
    if crit.is_some_and(|c| v > c) {
        outcome.critical(text);
    } else if warn.is_some_and(|w| v > w) {
        outcome.warning(text);
    } else if warn.is_some() || crit.is_some() {
        outcome.ok(text);
    }
}

/// A count held to its marks: above them is bad, or, when the warning mark is the higher
/// one (natscli's inversion), below them.
fn count(outcome: &mut Outcome, what: &str, v: f64, warn: Option<u64>, crit: Option<u64>) {
    let (warn, crit) = (warn.map(|n| n as f64), crit.map(|n| n as f64));
    let inverted = matches!((warn, crit), (Some(w), Some(c)) if w > c);
    if !inverted {
        return above(outcome, what, v, "", warn, crit);
    }
    outcome.perf(what, v, "", warn, crit);
    let text = format!("{v:.0} {what}");
    if crit.is_some_and(|c| v <= c) {
        outcome.critical(text);
    } else if warn.is_some_and(|w| v <= w) {
        outcome.warning(text);
    } else {
        outcome.ok(text);
    }
}

/// The server's uptime held to its minimums.
fn uptime(outcome: &mut Outcome, varz: &Value, t: &ServerArgs) {
    let at = |field: &str| {
        varz[field]
            .as_str()
            .and_then(|text| OffsetDateTime::parse(text, &Rfc3339).ok())
    };
    let (Some(start), Some(now)) = (at("start"), at("now")) else {
        return;
    };
    let up = (now - start).unsigned_abs();
    outcome.perf(
        "uptime",
        up.as_secs_f64(),
        "s",
        t.uptime_warn.map(|d| d.as_secs_f64()),
        t.uptime_critical.map(|d| d.as_secs_f64()),
    );
    let text = format!("up {}", show(Duration::from_secs(up.as_secs())));
    if t.uptime_critical.is_some_and(|c| up < c) {
        outcome.critical(text);
    } else if t.uptime_warn.is_some_and(|w| up < w) {
        outcome.warning(text);
    } else if t.uptime_warn.is_some() || t.uptime_critical.is_some() {
        outcome.ok(text);
    }
}

/// A setting that must be on.
fn required_on(outcome: &mut Outcome, on: bool, what: &str) {
    if on {
        outcome.ok(format!("{what} required"));
    } else {
        outcome.critical(format!("{what} not required"));
    }
}
