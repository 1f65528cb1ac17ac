//! Asking every server for one report's data: natscli's server filters and the count of
//! answers to wait for.

use bytes::Bytes;
use clap::Args;
use serde_json::{Map, Value};

use crate::conn::ConnArgs;
use crate::core::event_filter::EventFilter;
use crate::core::server_ping::{Answer, PING, ask_every_server, server_count};
use crate::error::CliError;

/// Every server's connections of the asking account: any account may ask (the server
/// imports this subject into each), as natscli's `account report connections` does.
pub(super) const ACCOUNT_CONNZ: &str = "$SYS.REQ.ACCOUNT.PING.CONNZ";

/// Flags natscli's reports share: the servers to ask, how many to wait for, and the output.
#[derive(Debug, Args)]
pub(super) struct ReportFilter {
    /// Servers to wait for (default: as many as answer a ping with the same filters).
    pub(super) limit: Option<usize>,
    /// Only the server with this name.
    #[arg(long, value_name = "NAME")]
    pub(super) host: Option<String>,
    /// Only the servers of this cluster.
    #[arg(long, value_name = "CLUSTER")]
    pub(super) cluster: Option<String>,
    /// Only servers with these tags.
    #[arg(long, value_name = "TAG")]
    pub(super) tags: Vec<String>,
    /// The servers' answers as JSON.
    #[arg(long, short = 'j')]
    pub(super) json: bool,
    /// Reverse the order.
    #[arg(long, short = 'R')]
    pub(super) reverse: bool,
}

impl ReportFilter {
    /// The servers these flags select (natscli's `--host` is the server's name); `domain`
    /// is the context's JetStream domain.
    fn event_filter(&self, domain: Option<&str>) -> EventFilter {
        EventFilter {
            name: self.host.clone(),
            host: None,
            cluster: self.cluster.clone(),
            tags: self.tags.clone(),
            domain: domain.map(str::to_owned),
        }
    }

    /// Whether the flags may leave servers out (so no answer at all is no error).
    fn narrows(&self) -> bool {
        self.host.is_some() || self.cluster.is_some() || !self.tags.is_empty()
    }
}

/// Asks every server `subject` with `body` and `filter`'s server filter; the answers, each
/// with its `server` and `data`. A system request waits for the count given, else for as
/// many servers as answer a ping with the same filter; an account's (which cannot ping) for
/// the count given, else until the timeout. A server's error answer fails the report.
pub(super) async fn ask(
    conn: &ConnArgs,
    subject: &'static str,
    mut body: Value,
    filter: &ReportFilter,
) -> Result<Vec<Answer>, CliError> {
    let (client, settings) = conn.connect().await?;
    let event = filter.event_filter(settings.js_domain());
    if let Some(fields) = body.as_object_mut() {
        event.apply(fields);
    }
    // Filters can leave every server out: then there is nothing to report.
    let none_matched =
        |e: &CliError| matches!(e, CliError::NoServerAnswered { .. }) && filter.narrows();
    let expected = if subject == ACCOUNT_CONNZ {
        filter.limit.unwrap_or(usize::MAX)
    } else {
        match server_count(&client, settings.timeout, filter.limit, &event).await {
            Ok(n) => n,
            Err(e) if none_matched(&e) => return Ok(Vec::new()),
            Err(e) => return Err(e),
        }
    };
    let body = Bytes::from(serde_json::to_vec(&body)?);
    let answers =
        match ask_every_server(&client, settings.timeout, subject, body, Some(expected)).await {
            Ok((answers, _)) => answers,
            Err(e) if none_matched(&e) => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
    match answers.iter().find(|a| a.stats.get("error").is_some()) {
        Some(failed) => Err(CliError::SystemRequestFailed {
            subject: subject.to_owned(),
            server: failed.stats["server"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            description: failed.stats["error"]["description"]
                .as_str()
                .unwrap_or("an error without a description")
                .to_owned(),
        }),
        None => Ok(answers),
    }
}

/// Pings every server `filter` selects for its statistics (`$SYS.REQ.SERVER.PING`, whose
/// answers carry `statsz`), waiting for the count given or as a ping does.
pub(super) async fn ping(conn: &ConnArgs, filter: &ReportFilter) -> Result<Vec<Answer>, CliError> {
    let (client, settings) = conn.connect().await?;
    let mut body = Map::new();
    filter.event_filter(settings.js_domain()).apply(&mut body);
    let body = Bytes::from(serde_json::to_vec(&body)?);
    match ask_every_server(&client, settings.timeout, PING, body, filter.limit).await {
        Ok((answers, _)) => Ok(answers),
        // Filters can leave every server out: then there is nothing to report.
        Err(CliError::NoServerAnswered { .. }) if filter.narrows() => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

/// Orders answers by the name of the server that gave them.
pub(super) fn by_server_name(a: &Answer, b: &Answer) -> std::cmp::Ordering {
    let name = |x: &Answer| {
        x.stats["server"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    name(a).cmp(&name(b))
}
