//! `rnats server ping` and `server list`: every server of the system answers
//! `$SYS.REQ.SERVER.PING` with its statistics (a system account request).

use std::time::Duration;

use clap::{Args, ValueEnum};
use rnats::system::{ServerAnswer, System, SystemError, SystemErrorKind};
use serde::Serialize;
use serde_json::{Map, Value};

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
pub(crate) const STATSZ: &str = "statsz";
/// The field of a monitoring request's answer that holds the server's data.
pub(crate) const DATA: &str = "data";

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
    /// The answers of a gathering through the library's system client, each as the JSON
    /// the server sent: `server`, the data under `field` ([`STATSZ`] for a ping, [`DATA`]
    /// otherwise), and `error` when it sent one. An answer that did not decode is no
    /// server's: it is left out, and said on stderr.
    pub(crate) fn all_of(
        answers: Vec<ServerAnswer<Value>>,
        field: &str,
    ) -> Result<Vec<Answer>, CliError> {
        let mut kept = Vec::with_capacity(answers.len());
        for answer in answers {
            match &answer.decode_error {
                Some(e) => eprintln!("an answer did not decode and is left out: {e}"),
                None => kept.push(Answer::of(answer, field)?),
            }
        }
        Ok(kept)
    }

    /// One answer as the JSON the server sent, its data under `field`.
    fn of(answer: ServerAnswer<Value>, field: &str) -> Result<Answer, CliError> {
        let mut stats = Map::new();
        stats.insert("server".to_owned(), serde_json::to_value(&answer.server)?);
        if let Some(data) = answer.data {
            stats.insert(field.to_owned(), data);
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

/// Pings every server through the library's system client ([`rnats::system::System`]),
/// which gathers answers until `expect` (or as many as the answers count up) came, or the
/// timeout passed; the answers and how many servers they leave out.
async fn collect(
    conn: &ConnArgs,
    expect: Option<usize>,
) -> Result<(Vec<Answer>, Missing), CliError> {
    let (client, settings) = conn.connect().await?;
    let system = System::new(client)
        .timeout(settings.timeout)
        .expect(count_given(expect).unwrap_or(0));
    let gathered =
        (system.gather_ping().await).map_err(|e| system_failed(e, PING, settings.timeout))?;
    let answers = Answer::all_of(gathered.answers, STATSZ)?;
    Ok((answers, Missing(gathered.missing)))
}

/// The command's error for a system request on `subject` that failed: "no responders" is a
/// user outside the system account, no answer is [`CliError::NoServerAnswered`].
pub(crate) fn system_failed(e: SystemError, subject: &str, timeout: Duration) -> CliError {
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

/// The first answer that carries a server's error, as the command's failure.
pub(crate) fn first_error(answers: &[Answer], subject: &str) -> Result<(), CliError> {
    match answers.iter().find(|a| a.stats.get("error").is_some()) {
        Some(failed) => Err(CliError::SystemRequestFailed {
            subject: subject.to_owned(),
            server: failed.name().to_owned(),
            description: failed.stats["error"]["description"]
                .as_str()
                .unwrap_or("an error without a description")
                .to_owned(),
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_count_of_zero_is_no_count_and_missing_servers_are_said_under_the_text() {
        assert_eq!(count_given(Some(0)), None);
        assert_eq!(count_given(Some(2)), Some(2));
        assert_eq!(Missing(1).line(), "\nMissing 1 server(s)\n");
        assert_eq!(Missing(0).line(), "");
    }

    /// An answer decoded from `text` by the library, as a gathering yields it.
    fn decoded(text: Value) -> ServerAnswer<Value> {
        serde_json::from_value(text).expect("an answer")
    }

    #[test]
    fn answers_keep_the_servers_json_under_the_field_and_fail_on_an_error() {
        let answers = vec![
            decoded(json!({"server": {"name": "n1", "id": "A"}, "data": {"x": 1}})),
            decoded(
                json!({"server": {"name": "n2", "id": "B"}, "error": {"code": 500, "description": "boom"}}),
            ),
        ];
        let answers = Answer::all_of(answers, DATA).unwrap();
        assert_eq!(answers[0].stats["data"]["x"], 1);
        assert_eq!(answers[0].stats["server"]["id"], "A");
        assert_eq!(answers[1].name(), "n2");
        let failed = first_error(&answers, "S").unwrap_err().to_string();
        assert!(
            failed.contains("n2 answered S") && failed.contains("boom"),
            "{failed}"
        );
        assert!(first_error(&answers[..1], "S").is_ok());
    }
}
