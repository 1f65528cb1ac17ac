//! `rnats server ping` and `server list`: every server of the system answers
//! `$SYS.REQ.SERVER.PING` with its statistics (a system account request).

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use bytes::Bytes;
use clap::{Args, ValueEnum};
use futures_util::StreamExt;
use rnats::system::{ServerAnswer, System, SystemError, SystemErrorKind};
use serde::Serialize;
use serde_json::{Map, Value};

use super::event_filter::EventFilter;
use super::server_json::{number, since, text};
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
    /// Servers to wait for (0 or none: as many as the answers count active).
    expect: Option<usize>,
    /// The servers' answers as a JSON array.
    #[arg(long, short = 'j')]
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
    /// A ping's answer from the library's system client, as the JSON the server sent it:
    /// `server` and `statsz` (and `error`, had it sent one).
    fn of_ping(answer: ServerAnswer<Value>) -> Result<Answer, CliError> {
        let mut stats = Map::new();
        stats.insert("server".to_owned(), serde_json::to_value(&answer.server)?);
        if let Some(data) = answer.data {
            stats.insert(STATSZ.to_owned(), data);
        }
        if let Some(error) = answer.error {
            stats.insert("error".to_owned(), serde_json::to_value(error)?);
        }
        Ok(Answer {
            rtt: answer.rtt.unwrap_or_default(),
            stats: Value::Object(stats),
        })
    }

    fn server(&self, field: &str) -> &Value {
        &self.stats["server"][field]
    }

    fn statsz(&self, field: &str) -> &Value {
        &self.stats[STATSZ][field]
    }

    fn name(&self) -> &str {
        self.server("name").as_str().unwrap_or_default()
    }

    /// The ID of the server that answered; empty when the answer has none.
    fn id(&self) -> &str {
        self.server("id").as_str().unwrap_or_default()
    }

    fn count(&self, field: &str) -> u64 {
        number(self.statsz(field))
    }

    fn len(&self, field: &str) -> u64 {
        self.statsz(field).as_array().map_or(0, |a| a.len() as u64)
    }

    /// From the server's start (`statsz.start`) to the moment it answered (`server.time`);
    /// zero when either is unreadable.
    fn uptime(&self) -> Duration {
        since(self.statsz("start"), self.server("time")).unwrap_or_default()
    }
}

/// Runs `server ping`: one line per server as it answers, then the statistics.
pub(crate) async fn ping(conn: &ConnArgs, expect: Option<usize>, id: bool) -> Result<(), CliError> {
    let (answers, missing) = collect(conn, expect).await?;
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
    missing.print_under(&text)
}

/// Runs `server list`: one row per server, sorted.
pub(crate) async fn list(conn: &ConnArgs, args: ListArgs) -> Result<(), CliError> {
    let (mut answers, missing) = collect(conn, args.expect).await?;
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
    missing.print_under(&format!(
        "Server overview: {} servers\n\n{}",
        answers.len(),
        table.render()
    ))
}

/// How long a ping without a count waits for more answers after the last one while the
/// answers so far are fewer than the count they report.
const QUIET_AFTER_LAST_ANSWER: Duration = Duration::from_secs(1);

/// How long it waits after the last one once they are as many: natscli's adaptive wait
/// (300 ms after each answer). A count can lag just after a server joins, so reaching it
/// does not end the wait at once.
const QUIET_ONCE_ALL_COUNTED: Duration = Duration::from_millis(300);

/// Pings every server through the library's system client ([`rnats::system::System`]),
/// which gathers answers until `expect` (or as many as the answers report active) came, or
/// the timeout passed, with the same adaptive wait as [`Wait::Adaptive`]; the answers and
/// how many servers they leave out.
async fn collect(
    conn: &ConnArgs,
    expect: Option<usize>,
) -> Result<(Vec<Answer>, Missing), CliError> {
    let (client, settings) = conn.connect().await?;
    let system = System::new(client)
        .timeout(settings.timeout)
        .expect(count_given(expect).unwrap_or(0));
    let answers = (system.ping_raw().await)
        .map_err(|e| system_failed(e, PING, settings.timeout))?
        .into_iter()
        .map(Answer::of_ping)
        .collect::<Result<Vec<_>, _>>()?;
    let wait = match count_given(expect) {
        Some(n) => Wait::Count(n),
        None => Wait::Adaptive,
    };
    let missing = wait.missing(&answers);
    Ok((answers, missing))
}

/// The command's error for a system request that failed: "no responders" is a user outside
/// the system account, no answer is [`CliError::NoServerAnswered`], as
/// [`ask_every_server`] says them.
fn system_failed(e: SystemError, subject: &str, timeout: Duration) -> CliError {
    match e.kind() {
        SystemErrorKind::NotSystemAccount => CliError::NoSystemAccount {
            subject: subject.to_owned(),
        },
        SystemErrorKind::NoAnswer => CliError::NoServerAnswered {
            subject: subject.to_owned(),
            timeout,
        },
        _ => CliError::System(e),
    }
}

/// A count of answers to wait for, as the command line gave it: 0 is no count, natscli's
/// default wait.
pub(crate) fn count_given(count: Option<usize>) -> Option<usize> {
    count.filter(|&n| n > 0)
}

/// When [`ask_every_server`] stops waiting for answers (the timeout ends every wait).
#[derive(Debug)]
pub(crate) enum Wait {
    /// A ping's adaptive wait: until a moment after the last answer, a longer moment while
    /// the answers are fewer than the servers they report active.
    Adaptive,
    /// Until this many answered.
    Count(usize),
    /// Until every server a ping found answered, or as many as it counts active; others
    /// that answer meanwhile are taken too.
    Census(Census),
    /// Until the timeout: an account's request, which has no ping to count servers by.
    Timeout,
}

impl Wait {
    /// Whether `answers` are all there is to wait for.
    fn satisfied_by(&self, answers: &[Answer]) -> bool {
        match self {
            Wait::Adaptive | Wait::Timeout => false,
            Wait::Count(n) => answers.len() >= *n,
            Wait::Census(census) => census.answered_by(answers),
        }
    }

    /// How many servers `answers` leave out: short of the count, the servers the census
    /// found, or, for a ping, the servers its answers count active.
    pub(crate) fn missing(&self, answers: &[Answer]) -> Missing {
        match self {
            Wait::Adaptive => Census::of(answers, false).missing(answers),
            Wait::Count(n) => Missing(n.saturating_sub(answers.len())),
            Wait::Census(census) => census.missing(answers),
            Wait::Timeout => Missing(0),
        }
    }
}

/// The servers that answered a ping: who the request that follows waits for.
///
/// Not merely how many: the request takes the first answers that come, and a server that
/// missed the ping's wait may answer the request before one that did not, so only the
/// servers' IDs tell whether each of them answered.
#[derive(Debug)]
pub(crate) struct Census {
    /// The IDs of the servers that answered.
    ids: BTreeSet<String>,
    /// The most servers an answer counted active (`statsz.active_servers`), and at least
    /// as many as answered.
    active: usize,
    /// Whether the ping carried a filter: then the servers it left out are not missing,
    /// and the count of active servers, which counts every server, is no target.
    filtered: bool,
}

impl Census {
    /// The census a ping's `answers` take; `filtered` says the ping carried a filter.
    pub(crate) fn of(answers: &[Answer], filtered: bool) -> Census {
        let ids: BTreeSet<String> = answers.iter().map(|a| a.id().to_owned()).collect();
        let counted = answers
            .iter()
            .filter_map(|a| a.statsz("active_servers").as_u64())
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
            .max()
            .unwrap_or(0);
        Census {
            active: counted.max(ids.len()),
            ids,
            filtered,
        }
    }

    /// Whether `answers` include every server the census found, or, unfiltered, as many
    /// servers as it counts active (a server that restarted answers under a new ID).
    fn answered_by(&self, answers: &[Answer]) -> bool {
        let answered: BTreeSet<&str> = answers.iter().map(Answer::id).collect();
        self.ids.iter().all(|id| answered.contains(id.as_str()))
            || (!self.filtered && answered.len() >= self.active)
    }

    /// The servers the census found that did not answer, and, unfiltered, those counted
    /// active beyond every server that answered either.
    pub(crate) fn missing(&self, answers: &[Answer]) -> Missing {
        let answered: BTreeSet<&str> = answers.iter().map(Answer::id).collect();
        let silent = (self.ids.iter())
            .filter(|id| !answered.contains(id.as_str()))
            .count();
        let beyond = match self.filtered {
            true => 0,
            false => self.active.saturating_sub(answered.len() + silent),
        };
        Missing(silent + beyond)
    }
}

/// How many servers a command's answers leave out, said as `server list` says it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Missing(pub(crate) usize);

impl Missing {
    /// `Missing N server(s)` after an empty line, or nothing when none is missing.
    pub(crate) fn line(self) -> String {
        match self.0 {
            0 => String::new(),
            n => format!("\nMissing {n} server(s)\n"),
        }
    }

    /// Prints `text` with the line under it.
    pub(crate) fn print_under(self, text: &str) -> Result<(), CliError> {
        out::print(&format!("{text}{}", self.line()))
    }

    /// Prints `value` as JSON, and the line on stderr, so the JSON stays whole.
    pub(crate) fn json_with<T: Serialize + ?Sized>(self, value: &T) -> Result<(), CliError> {
        out::json(value)?;
        self.tell();
        Ok(())
    }

    /// Says the line on stderr.
    pub(crate) fn tell(self) {
        if self.0 > 0 {
            eprint!("{}", self.line());
        }
    }
}

/// Publishes `body` to the system request `subject` and gathers the servers' answers until
/// `wait` is satisfied or `timeout` passed.
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
    wait: &Wait,
) -> Result<Vec<Answer>, CliError> {
    let inbox = client.new_inbox();
    let mut replies = client.subscribe(inbox.clone()).await?;
    let started = Instant::now();
    client
        .publish_with_reply(subject.to_owned(), inbox, body)
        .await?;
    let deadline = rnats::deadline::after(timeout);
    let mut active = 0;
    let mut answers = Vec::new();
    // The adaptive wait ends a moment after the last answer, as natscli's does, not at the
    // timeout: an answer that never comes (a server that went away, or one lost on a
    // route) costs a second, and one more than the servers counted so far (a count that
    // lags a joining server) is still taken. The other waits end when satisfied, or else
    // at the timeout.
    let mut until = deadline;
    while !wait.satisfied_by(&answers) {
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
        if let Wait::Adaptive = wait {
            // Every answer tells how many servers its sender knows; the largest count
            // wins, so one server that has not yet heard of a peer does not end the wait.
            let counted = stats[STATSZ]["active_servers"].as_u64().unwrap_or(0);
            active = active.max(usize::try_from(counted).unwrap_or(usize::MAX));
            let quiet = match answers.len() + 1 >= active && active > 0 {
                true => QUIET_ONCE_ALL_COUNTED,
                false => QUIET_AFTER_LAST_ANSWER,
            };
            until = deadline.min(tokio::time::Instant::now() + quiet);
        }
        answers.push(Answer { rtt, stats });
    }
    if answers.is_empty() {
        return Err(CliError::NoServerAnswered {
            subject: subject.to_owned(),
            timeout,
        });
    }
    Ok(answers)
}

/// Pings the servers `filter` selects (nats-server's `EventFilterOptions`, which the ping
/// honours as the monitoring requests do) for the census of the request `asked`: the
/// servers that are up and selected. No answer is said of `asked`, not of the ping.
///
/// Not the count the answers report active: a server the others still count but that no
/// longer answers (stopped, frozen, cut off) would make the request that follows wait out
/// its whole timeout for an answer that never comes. The ping itself waits a moment for
/// such a server (see [`Wait::Adaptive`]).
pub(crate) async fn census(
    client: &rnats::Client,
    timeout: Duration,
    filter: &EventFilter,
    asked: &str,
) -> Result<Census, CliError> {
    let body = if filter.selects_all() {
        Bytes::new()
    } else {
        let mut fields = Map::new();
        filter.apply(&mut fields);
        Bytes::from(serde_json::to_vec(&fields)?)
    };
    let answers = ask_every_server(client, timeout, PING, body, &Wait::Adaptive)
        .await
        .map_err(|e| match e {
            CliError::NoServerAnswered { timeout, .. } => CliError::NoServerAnswered {
                subject: asked.to_owned(),
                timeout,
            },
            e => e,
        })?;
    Ok(Census::of(&answers, !filter.selects_all()))
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// An answer from the server `id`, which counts `active` servers.
    fn answer(id: &str, active: u64) -> Answer {
        Answer {
            rtt: Duration::ZERO,
            stats: json!({ "server": { "id": id }, "statsz": { "active_servers": active } }),
        }
    }

    #[test]
    fn a_census_waits_for_each_server_it_found_not_for_as_many_answers() {
        // The ping heard A and B; C, counted but slow, missed its wait.
        let census = Census::of(&[answer("A", 3), answer("B", 3)], false);
        let wait = Wait::Census(census);
        // C answers the request first: two answers, but B's is still to come.
        let mut answers = vec![answer("C", 0), answer("A", 0)];
        assert!(!wait.satisfied_by(&answers));
        answers.push(answer("B", 0));
        assert!(wait.satisfied_by(&answers));
        assert_eq!(wait.missing(&answers), Missing(0));
        // Had B never answered: B is missing, and C stood in for nobody.
        assert_eq!(wait.missing(&answers[..2]), Missing(1));
        // Nor had C: B, and the third server the answers count active.
        assert_eq!(wait.missing(&answers[1..2]), Missing(2));
    }

    #[test]
    fn as_many_as_are_active_end_the_wait_unless_the_ping_was_filtered() {
        // A restarted under a new ID (A2): every active server has answered.
        let answers = [answer("A2", 0), answer("B", 0)];
        let census = Census::of(&[answer("A", 2), answer("B", 2)], false);
        assert!(census.answered_by(&answers));
        assert_eq!(census.missing(&answers), Missing(1));
        // Filtered, the count of active servers counts servers the filter left out: only
        // the servers found count, and none beyond them is missing.
        let census = Census::of(&[answer("A", 5)], true);
        assert!(!census.answered_by(&[answer("B", 0)]));
        assert!(census.answered_by(&[answer("A", 0)]));
        assert_eq!(census.missing(&[answer("A", 0)]), Missing(0));
    }

    #[test]
    fn a_count_of_zero_is_no_count_and_a_ping_counts_the_active_servers() {
        assert_eq!(count_given(Some(0)), None);
        assert_eq!(count_given(Some(2)), Some(2));
        assert_eq!(Wait::Count(3).missing(&[answer("A", 0)]), Missing(2));
        assert_eq!(
            Wait::Adaptive.missing(&[answer("A", 3), answer("B", 2)]),
            Missing(1)
        );
        assert_eq!(Missing(1).line(), "\nMissing 1 server(s)\n");
        assert_eq!(Missing(0).line(), "");
    }
}
