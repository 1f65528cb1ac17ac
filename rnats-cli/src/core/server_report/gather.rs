//! Asking every server for one report's data: natscli's server filters and the count of
//! answers to wait for.

use bytes::Bytes;
use clap::Args;
use serde_json::{Map, Value};

use crate::conn::ConnArgs;
use crate::core::event_filter::EventFilter;
use crate::core::server_ping::{
    Answer, Census, Missing, PING, Wait, ask_every_server, census, count_given,
};
use crate::error::CliError;

/// Every server's connections of the asking account: any account may ask (the server
/// imports this subject into each), as natscli's `account report connections` does.
pub(super) const ACCOUNT_CONNZ: &str = "$SYS.REQ.ACCOUNT.PING.CONNZ";

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
/// with its `server` and `data`, and how many servers they leave out. A system request
/// waits for the count given, else for each server that answers a ping with the same
/// filter; an account's (which cannot ping) for the count given, else until the timeout.
/// A server's error answer fails the report.
pub(super) async fn ask(
    conn: &ConnArgs,
    subject: &'static str,
    mut body: Value,
    filter: &ReportFilter,
) -> Result<(Vec<Answer>, Missing), CliError> {
    let (client, settings) = conn.connect().await?;
    let event = filter.event_filter(settings.js_domain());
    if let Some(fields) = body.as_object_mut() {
        event.apply(fields);
    }
    // The flags can leave every server out: then there is nothing to report.
    let none_matched =
        |e: &CliError| matches!(e, CliError::NoServerAnswered { .. }) && filter.narrows();
    let wait = match count_given(filter.limit) {
        Some(n) => Wait::Count(n),
        None if subject == ACCOUNT_CONNZ => Wait::Timeout,
        None => match census(&client, settings.timeout, &event, subject).await {
            Ok(census) => Wait::Census(census),
            Err(e) if none_matched(&e) => return Ok((Vec::new(), Missing::default())),
            Err(e) => return Err(e),
        },
    };
    let body = Bytes::from(serde_json::to_vec(&body)?);
    let answers = match ask_every_server(&client, settings.timeout, subject, body, &wait).await {
        Ok(answers) => answers,
        Err(e) if none_matched(&e) => return Ok((Vec::new(), Missing::default())),
        Err(e) => return Err(e),
    };
    match answers.iter().find(|a| a.stats.get("error").is_some()) {
        Some(failed) => Err(CliError::SystemRequestFailed {
            subject: subject.to_owned(),
            server: server_name(failed).to_owned(),
            description: failed.stats["error"]["description"]
                .as_str()
                .unwrap_or("an error without a description")
                .to_owned(),
        }),
        None => {
            let missing = wait.missing(&answers);
            Ok((answers, missing))
        }
    }
}

/// Pings every server `filter` selects for its statistics (`$SYS.REQ.SERVER.PING`, whose
/// answers carry `statsz`), waiting for the count given or as a ping does; the answers
/// and how many servers they leave out.
pub(super) async fn ping(
    conn: &ConnArgs,
    filter: &ReportFilter,
) -> Result<(Vec<Answer>, Missing), CliError> {
    let (client, settings) = conn.connect().await?;
    let event = filter.event_filter(settings.js_domain());
    let mut body = Map::new();
    event.apply(&mut body);
    let body = Bytes::from(serde_json::to_vec(&body)?);
    let count = count_given(filter.limit);
    let wait = count.map_or(Wait::Adaptive, Wait::Count);
    match ask_every_server(&client, settings.timeout, PING, body, &wait).await {
        // The ping is its own census: with a filter, only a count tells who is missing.
        Ok(answers) => {
            let missing = match count {
                Some(_) => wait.missing(&answers),
                None => Census::of(&answers, !event.selects_all()).missing(&answers),
            };
            Ok((answers, missing))
        }
        // The flags can leave every server out: then there is nothing to report.
        Err(CliError::NoServerAnswered { .. }) if filter.narrows() => {
            Ok((Vec::new(), Missing::default()))
        }
        Err(e) => Err(e),
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
