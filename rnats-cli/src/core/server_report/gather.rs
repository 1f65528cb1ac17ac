//! Asking every server for one report's data: natscli's server filters and the count of
//! answers to wait for.

use bytes::Bytes;
use clap::Args;
use serde_json::{Value, json};

use crate::conn::ConnArgs;
use crate::core::server_ping::{Answer, ask_every_server, server_count};
use crate::error::CliError;

/// Every server's connections of the asking account: any account may ask (the server
/// imports this subject into each), as natscli's `account report connections` does.
pub(super) const ACCOUNT_CONNZ: &str = "$SYS.REQ.ACCOUNT.PING.CONNZ";

/// Filters natscli's reports share.
#[derive(Debug, Args)]
pub(super) struct ServerFilter {
    /// Servers to wait for (default: as many as a ping finds).
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

impl ServerFilter {
    /// The server filter fields of a system request body.
    pub(super) fn apply(&self, body: &mut Value) {
        if let Some(host) = &self.host {
            body["server_name"] = json!(host);
        }
        if let Some(cluster) = &self.cluster {
            body["cluster"] = json!(cluster);
        }
        if !self.tags.is_empty() {
            body["tags"] = json!(self.tags);
        }
    }

    /// Whether the filters may leave servers out (so a short count is not a problem).
    fn narrows(&self) -> bool {
        self.host.is_some() || self.cluster.is_some() || !self.tags.is_empty()
    }
}

/// Asks every server `subject` with `body`; the answers, each with its `server` and `data`.
/// A system request waits for as many servers as a ping finds; an account's (which cannot
/// ping) for the count given, else until the timeout.
pub(super) async fn ask(
    conn: &ConnArgs,
    subject: &'static str,
    body: Value,
    filter: &ServerFilter,
) -> Result<Vec<Answer>, CliError> {
    let (client, settings) = conn.connect().await?;
    let expected = if subject == ACCOUNT_CONNZ {
        filter.limit.unwrap_or(usize::MAX)
    } else {
        server_count(&client, settings.timeout, filter.limit).await?
    };
    let body = Bytes::from(serde_json::to_vec(&body)?);
    let (answers, _) = ask_every_server(&client, settings.timeout, subject, body, Some(expected))
        .await
        .or_else(|e| match e {
            // Filters can leave every server out.
            CliError::NoServerAnswered { .. } if filter.narrows() => Ok((Vec::new(), 0)),
            e => Err(e),
        })?;
    for answer in &answers {
        if let Some(error) = answer.stats.get("error") {
            let description = error["description"].as_str().unwrap_or("unknown error");
            return Err(CliError::JetStream {
                action: format!("{subject} failed"),
                source: description.to_owned().into(),
            });
        }
    }
    Ok(answers)
}
