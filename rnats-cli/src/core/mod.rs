//! Core NATS commands: `pub`, `sub`, `req`, `reply`, `trace`, `server info` and `rtt`.

mod event_filter;
mod events;
mod health_checks;
mod js_publish;
mod latency;
mod messages;
pub(crate) mod pipe;
mod publish;
mod reply;
mod request;
mod schedule_flags;
mod server;
mod server_cluster;
mod server_json;
mod server_ping;
mod server_report;
mod server_request;
pub(crate) mod show;
mod subscribe;
pub(crate) mod template;
mod trace;

pub(crate) use events::{EventsArgs, run as events};
pub(crate) use latency::{LatencyArgs, run as latency};
pub(crate) use publish::{PubArgs, run as publish};
pub(crate) use reply::{ReplyArgs, run as reply};
pub(crate) use request::{
    ReqArgs, RequestFlags, messages as request_messages, run as request, send as send_requests,
};
pub(crate) use server::{RttArgs, ServerArgs, rtt, run as server};
pub(crate) use server_ping::{Answer, DATA, system_failed};
pub(crate) use server_report::{ConnectionsArgs, account_connections};
pub(crate) use subscribe::{SubArgs, run as subscribe};
pub(crate) use trace::{TraceArgs, run as trace};

use bytes::Bytes;

use crate::error::CliError;

/// A body given on the command line, or standard input when it is absent or `-`.
pub(crate) fn body_or_stdin(body: Option<&str>) -> Result<Bytes, CliError> {
    match body {
        Some(text) if text != "-" => Ok(Bytes::copy_from_slice(text.as_bytes())),
        _ => {
            if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
                eprintln!("Reading the body from standard input (end it with Ctrl-D)");
            }
            Ok(Bytes::from(crate::out::read_stdin()?))
        }
    }
}
