//! `rnats server ping` and `server list`: every server of the system answers
//! `$SYS.REQ.SERVER.PING` with its statistics (a system account request).

use std::time::{Duration, Instant};

use bytes::Bytes;
use clap::{Args, ValueEnum};
use futures_util::StreamExt;
use serde_json::{Map, Value};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::event_filter::EventFilter;
use crate::conn::ConnArgs;
use crate::error::CliError;
use crate::jetstream::{bytes as size, duration};
use crate::out::{self, Table};
use crate::stats::human;

/// The request every server answers with its statistics.
pub(crate) const PING: &str = "$SYS.REQ.SERVER.PING";
/// The field of a ping's answer that holds the server's statistics (nats-server's
/// `ServerStatsMsg`).
const STATSZ: &str = "statsz";

/// Options of `server list`.
#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    /// Servers to wait for (default: as many as the first answer says are active).
    expect: Option<usize>,
    /// The servers' answers as a JSON array.
    #[arg(long)]
    json: bool,
    /// Sort by this column.
    #[arg(long, value_enum, default_value_t = SortKey::Rtt)]
    sort: SortKey,
    /// Reverse the order.
    #[arg(long, short = 'R')]
    reverse: bool,
}

/// `server list --sort`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum SortKey {
    Name,
    Cluster,
    #[value(alias = "conn")]
    Conns,
    #[value(alias = "sub")]
    Subs,
    #[value(alias = "route")]
    Routes,
    #[value(alias = "gw")]
    Gws,
    Mem,
    Cpu,
    Slow,
    Uptime,
    Rtt,
}

/// One server's answer and how long it took.
pub(crate) struct Answer {
    /// From the request to this answer.
    pub(crate) rtt: Duration,
    /// The answer: `server` (who answered) and its data (`statsz` for a ping, `data` for
    /// the monitoring requests).
    pub(crate) stats: Value,
}

impl Answer {
    fn server(&self, field: &str) -> &Value {
        &self.stats["server"][field]
    }

    fn statsz(&self, field: &str) -> &Value {
        &self.stats[STATSZ][field]
    }

    fn name(&self) -> &str {
        self.server("name").as_str().unwrap_or_default()
    }

    fn count(&self, field: &str) -> u64 {
        self.statsz(field).as_u64().unwrap_or(0)
    }

    fn len(&self, field: &str) -> u64 {
        self.statsz(field).as_array().map_or(0, |a| a.len() as u64)
    }

    /// From the server's start (`statsz.start`) to the moment it answered (`server.time`).
    fn uptime(&self) -> Duration {
        let at = |field: &Value| {
            field
                .as_str()
                .and_then(|t| OffsetDateTime::parse(t, &Rfc3339).ok())
        };
        match (at(self.statsz("start")), at(self.server("time"))) {
            (Some(start), Some(now)) => (now - start).unsigned_abs(),
            _ => Duration::ZERO,
        }
    }
}

/// Runs `server ping`: one line per server as it answers, then the statistics.
pub(crate) async fn ping(conn: &ConnArgs, expect: Option<usize>, id: bool) -> Result<(), CliError> {
    let (answers, expected) = collect(conn, expect).await?;
    let mut text = String::new();
    for answer in &answers {
        if id {
            let server_id = answer.server("id").as_str().unwrap_or_default();
            text.push_str(&format!("{server_id} "));
        }
        text.push_str(&format!("{:<60} rtt={:.2?}\n", answer.name(), answer.rtt));
    }
    let times: Vec<f64> = answers.iter().map(|a| a.rtt.as_secs_f64() * 1e3).collect();
    text.push_str("\n---- ping statistics ----\n");
    if !times.is_empty() {
        let max = times.iter().copied().fold(f64::MIN, f64::max);
        let min = times.iter().copied().fold(f64::MAX, f64::min);
        let avg = times.iter().sum::<f64>() / times.len() as f64;
        text.push_str(&format!(
            "{} replies max: {max:.2} min: {min:.2} avg: {avg:.2}\n",
            times.len()
        ));
    }
    if expected > answers.len() {
        text.push_str(&format!(
            "\nMissing {} server(s)\n",
            expected - answers.len()
        ));
    }
    out::print(&text)
}

/// Runs `server list`: one row per server, sorted.
pub(crate) async fn list(conn: &ConnArgs, args: ListArgs) -> Result<(), CliError> {
    let (mut answers, expected) = collect(conn, args.expect).await?;
    if args.json {
        return out::json(&answers.iter().map(|a| &a.stats).collect::<Vec<_>>());
    }
    sort(&mut answers, args.sort);
    if args.reverse {
        answers.reverse();
    }
    let mut table = Table::new([
        "Name", "Cluster", "Host", "Version", "JS", "Conns", "Subs", "Routes", "GWs", "Mem",
        "CPU %", "Cores", "Slow", "Uptime", "RTT",
    ]);
    for a in &answers {
        let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
        table.row(vec![
            a.name().to_owned(),
            text(a.server("cluster")),
            text(a.server("host")),
            text(a.server("ver")),
            if a.server("jetstream").as_bool() == Some(true) {
                "yes"
            } else {
                "no"
            }
            .to_owned(),
            human::count(a.count("connections")),
            human::count(a.count("subscriptions")),
            a.len("routes").to_string(),
            a.len("gateways").to_string(),
            size(a.count("mem")),
            format!("{:.0}", a.statsz("cpu").as_f64().unwrap_or(0.0)),
            a.count("cores").to_string(),
            human::count(a.count("slow_consumers")),
            duration(a.uptime()),
            format!("{:.2?}", a.rtt),
        ]);
    }
    let mut text = format!(
        "Server overview: {} servers\n\n{}",
        answers.len(),
        table.render()
    );
    if expected > answers.len() {
        text.push_str(&format!(
            "\nMissing {} server(s)\n",
            expected - answers.len()
        ));
    }
    out::print(&text)
}

/// How long a ping without `expect` waits for more answers after the last one while the
/// answers so far are fewer than the count they report.
const QUIET_AFTER_LAST_ANSWER: Duration = Duration::from_secs(1);

/// How long it waits after the last one once they are as many: natscli's adaptive wait
/// (300 ms after each answer). A count can lag just after a server joins, so reaching it
/// does not end the wait at once.
const QUIET_ONCE_ALL_COUNTED: Duration = Duration::from_millis(300);

/// Sends the ping and gathers answers until `expect` (or as many as the first answer
/// reports active) came, or the timeout passed; the answers and how many were expected.
async fn collect(conn: &ConnArgs, expect: Option<usize>) -> Result<(Vec<Answer>, usize), CliError> {
    let (client, settings) = conn.connect().await?;
    ask_every_server(&client, settings.timeout, PING, Bytes::new(), expect).await
}

/// Publishes `body` to the system request `subject` and gathers the servers' answers until
/// `expect` came (for a ping with no `expect`: as many as the answers report active),
/// or `timeout` passed; the answers and how many were expected.
///
/// A status instead of an answer ("no responders") means the account is not the system
/// account: [`CliError::NoSystemAccount`]; no answer at all before the timeout is
/// [`CliError::NoServerAnswered`] (filters that matched no server, or an account the
/// server tells nothing).
pub(crate) async fn ask_every_server(
    client: &rnats::Client,
    timeout: Duration,
    subject: &str,
    body: Bytes,
    expect: Option<usize>,
) -> Result<(Vec<Answer>, usize), CliError> {
    let inbox = client.new_inbox();
    let mut replies = client.subscribe(inbox.clone()).await?;
    let started = Instant::now();
    client
        .publish_with_reply(subject.to_owned(), inbox, body)
        .await?;
    let deadline = rnats::deadline::after(timeout);
    let mut expected = expect.unwrap_or(0);
    let mut answers = Vec::new();
    // Without `expect`, the wait ends a moment after the last answer, as natscli's adaptive
    // wait does, not at the timeout: an answer that never comes (a server that went away,
    // or one lost on a route) costs a second, and one more than the servers counted so far
    // (a count that lags a joining server) is still taken. An `expect` given ends the wait
    // when that many came, or else at the timeout.
    let mut until = deadline;
    while expect.is_none_or(|n| answers.len() < n) {
        let Ok(Some(message)) = tokio::time::timeout_at(until, replies.next()).await else {
            break;
        };
        let rtt = started.elapsed();
        // A status instead of statistics: no responders, so no system account.
        if message.status.is_some() || message.payload.is_empty() {
            return Err(CliError::NoSystemAccount {
                subject: subject.to_owned(),
            });
        }
        let Ok(stats) = serde_json::from_slice::<Value>(&message.payload) else {
            continue;
        };
        if expect.is_none() {
            // Every answer tells how many servers its sender knows; the largest count
            // wins, so one server that has not yet heard of a peer does not end the wait.
            let active = stats[STATSZ]["active_servers"].as_u64().unwrap_or(0);
            expected = expected.max(usize::try_from(active).unwrap_or(usize::MAX));
        }
        answers.push(Answer { rtt, stats });
        if expect.is_none() {
            let quiet = match answers.len() >= expected && expected > 0 {
                true => QUIET_ONCE_ALL_COUNTED,
                false => QUIET_AFTER_LAST_ANSWER,
            };
            until = deadline.min(tokio::time::Instant::now() + quiet);
        }
    }
    if answers.is_empty() {
        return Err(CliError::NoServerAnswered {
            subject: subject.to_owned(),
            timeout,
        });
    }
    Ok((answers, expected))
}

/// How many answers to wait for: `expect` when given, else how many servers answer a ping
/// that carries `filter` (nats-server's `EventFilterOptions`, which the ping honours as the
/// monitoring requests do): the servers that are up and that the filter selects.
///
/// Not the count the answers report active: a server the others still count but that no
/// longer answers (stopped, frozen, cut off) would make the request that follows wait out
/// its whole timeout for an answer that never comes. The ping itself waits a moment for
/// such a server (see [`ask_every_server`]).
pub(crate) async fn server_count(
    client: &rnats::Client,
    timeout: Duration,
    expect: Option<usize>,
    filter: &EventFilter,
) -> Result<usize, CliError> {
    if let Some(n) = expect {
        return Ok(n);
    }
    let body = if filter.selects_all() {
        Bytes::new()
    } else {
        let mut fields = Map::new();
        filter.apply(&mut fields);
        Bytes::from(serde_json::to_vec(&fields)?)
    };
    let (answers, _) = ask_every_server(client, timeout, PING, body, None).await?;
    Ok(answers.len())
}

fn sort(answers: &mut [Answer], key: SortKey) {
    answers.sort_by(|a, b| {
        let by = |f: &dyn Fn(&Answer) -> u64| f(a).cmp(&f(b));
        match key {
            SortKey::Name => a.name().cmp(b.name()),
            SortKey::Cluster => a
                .server("cluster")
                .as_str()
                .cmp(&b.server("cluster").as_str()),
            SortKey::Conns => by(&|x| x.count("connections")),
            SortKey::Subs => by(&|x| x.count("subscriptions")),
            SortKey::Routes => by(&|x| x.len("routes")),
            SortKey::Gws => by(&|x| x.len("gateways")),
            SortKey::Mem => by(&|x| x.count("mem")),
            SortKey::Cpu => a
                .statsz("cpu")
                .as_f64()
                .unwrap_or(0.0)
                .total_cmp(&b.statsz("cpu").as_f64().unwrap_or(0.0)),
            SortKey::Slow => by(&|x| x.count("slow_consumers")),
            SortKey::Uptime => a.uptime().cmp(&b.uptime()),
            SortKey::Rtt => a.rtt.cmp(&b.rtt),
        }
        .then_with(|| a.name().cmp(b.name()))
    });
}
