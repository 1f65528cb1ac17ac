//! Asking every server for one report's data: natscli's server filters and the count of
//! answers to wait for.

use clap::Args;
use rnats::system::{ServerFilter, System, SystemError, SystemErrorKind};
use serde_json::Value;

use crate::conn::ConnArgs;
use crate::core::event_filter::server_filter;
use crate::core::server_ping::{
    Answer, DATA, Missing, PING, STATSZ, count_given, first_error, system_failed,
};
use crate::error::CliError;

/// What a report asks for: one kind of monitoring data, of every server (through the
/// system account) or of the user's own account (which any account may ask).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Endpoint {
    /// The kind (`CONNZ`, `ROUTEZ`, ...).
    kind: &'static str,
    /// Whether it is the account's own request (`$SYS.REQ.ACCOUNT.PING.<KIND>`).
    account: bool,
}

impl Endpoint {
    /// `kind` of every server, on `$SYS.REQ.SERVER.PING.<KIND>`.
    pub(super) const fn server(kind: &'static str) -> Endpoint {
        Endpoint {
            kind,
            account: false,
        }
    }

    /// The subject the request goes on, as the errors name it.
    fn subject(self) -> String {
        let scope = if self.account { "ACCOUNT" } else { "SERVER" };
        format!("$SYS.REQ.{scope}.PING.{}", self.kind)
    }
}

/// Every server's connections of the asking account: any account may ask (the server
/// imports this subject into each), as natscli's `account report connections` does.
pub(super) const ACCOUNT_CONNZ: Endpoint = Endpoint {
    kind: "CONNZ",
    account: true,
};

/// Flags natscli's reports share: the servers to ask, how many to wait for, and the output.
#[derive(Debug, Args)]
pub(super) struct ReportFilter {
    /// Servers to wait for (0 or none: each server that answers a ping with the same filters).
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
    fn server_filter(&self, domain: Option<&str>) -> ServerFilter {
        let (name, cluster) = (self.host.as_deref(), self.cluster.as_deref());
        server_filter(name, None, cluster, &self.tags, domain)
    }

    /// The library's system client on `conn`, asking the servers these flags select and
    /// waiting for the count given; with the command's error for a failure to connect.
    async fn system(&self, conn: &ConnArgs) -> Result<(System, std::time::Duration), CliError> {
        let (client, settings) = conn.connect().await?;
        let system = System::new(client)
            .timeout(settings.timeout)
            .filter(self.server_filter(settings.js_domain()))
            .expect(count_given(self.limit).unwrap_or(0));
        Ok((system, settings.timeout))
    }

    /// Whether `e` says that no server answered and the flags may have left them all out:
    /// then there is nothing to report, and no failure.
    fn none_matched(&self, e: &SystemError) -> bool {
        e.kind() == SystemErrorKind::NoAnswer && self.narrows()
    }

    /// Whether the flags may leave servers out (so no answer at all is no error).
    fn narrows(&self) -> bool {
        self.host.is_some() || self.cluster.is_some() || !self.tags.is_empty()
    }
}

/// Asks every server `endpoint` with `body` and `filter`'s server filter through the
/// library's system client; the answers, each with its `server` and `data`, and how many
/// servers they leave out. A system request waits for the count given, else for each
/// server that answers a ping with the same filter; an account's (which cannot ping) for
/// the count given, else until the timeout. A server's error answer fails the report.
pub(super) async fn ask(
    conn: &ConnArgs,
    endpoint: Endpoint,
    body: Value,
    filter: &ReportFilter,
) -> Result<(Vec<Answer>, Missing), CliError> {
    let (system, timeout) = filter.system(conn).await?;
    let subject = endpoint.subject();
    let gathered = match endpoint.account {
        true => system.gather_account(endpoint.kind, body).await,
        false => system.gather(endpoint.kind, body).await,
    };
    let gathered = match gathered {
        Ok(gathered) => gathered,
        Err(e) if filter.none_matched(&e) => return Ok((Vec::new(), Missing::default())),
        Err(e) => return Err(system_failed(e, &subject, timeout)),
    };
    let answers = Answer::all_of(gathered.answers, DATA)?;
    first_error(&answers, &subject)?;
    Ok((answers, Missing(gathered.missing)))
}

/// Pings every server `filter` selects for its statistics (`$SYS.REQ.SERVER.PING`, whose
/// answers carry `statsz`), waiting for the count given or as a ping does; the answers
/// and how many servers they leave out (with a filter, only a count tells).
pub(super) async fn ping(
    conn: &ConnArgs,
    filter: &ReportFilter,
) -> Result<(Vec<Answer>, Missing), CliError> {
    let (system, timeout) = filter.system(conn).await?;
    match system.gather_ping().await {
        Ok(gathered) => {
            let answers = Answer::all_of(gathered.answers, STATSZ)?;
            Ok((answers, Missing(gathered.missing)))
        }
        Err(e) if filter.none_matched(&e) => Ok((Vec::new(), Missing::default())),
        Err(e) => Err(system_failed(e, PING, timeout)),
    }
}

/// The name of the server that gave `answer`.
pub(super) fn server_name(answer: &Answer) -> &str {
    answer.stats["server"]["name"].as_str().unwrap_or_default()
}

/// Orders answers by the name of the server that gave them.
pub(super) fn by_server_name(a: &Answer, b: &Answer) -> std::cmp::Ordering {
    server_name(a).cmp(server_name(b))
}
