//! `rnats server report health`: every server's health (`$SYS.REQ.SERVER.PING.HEALTHZ`,
//! with details), a row per server and its errors below it, as natscli's health report
//! shows them. A report, not a check: it exits 0 whatever the servers say (`server check`
//! turns health into an exit code).

use std::collections::BTreeSet;

use clap::Args;
use serde_json::Value;

use super::super::health_checks::HealthChecks;
use super::cells::{number, text};
use super::gather::{Endpoint, ReportFilter, ask, by_server_name};
use crate::conn::ConnArgs;
use crate::error::CliError;
use crate::out::Table;
use crate::stats::human;

/// Every server's health.
const HEALTHZ: Endpoint = Endpoint::server("HEALTHZ");
/// Errors shown under one server at most; past that, the first ones and a count of the rest.
const SHOWN_ERRORS: usize = 10;

/// Options of `server report health`.
#[derive(Debug, Args)]
pub(super) struct HealthArgs {
    #[command(flatten)]
    filter: ReportFilter,
    #[command(flatten)]
    checks: HealthChecks,
}

/// Runs `server report health`.
pub(super) async fn run(conn: &ConnArgs, args: HealthArgs) -> Result<(), CliError> {
    let body = Value::Object(args.checks.options(true));
    let (mut answers, missing) = ask(conn, HEALTHZ, body, &args.filter).await?;
    answers.sort_by(by_server_name);
    if args.filter.reverse {
        answers.reverse();
    }
    if args.filter.json {
        return missing.json_with(&answers.iter().map(|a| &a.stats).collect::<Vec<_>>());
    }
    let replies: Vec<&Value> = answers.iter().map(|a| &a.stats).collect();
    let healthy = replies.iter().filter(|r| is_ok(r)).count();
    let clusters: BTreeSet<String> = replies
        .iter()
        .map(|r| text(&r["server"]["cluster"]))
        .collect();
    missing.print_under(&format!(
        "Health report: {healthy} ok, {} not ok of {} servers in {} clusters\n\n{}",
        replies.len() - healthy,
        replies.len(),
        clusters.len(),
        table(&replies).render()
    ))
}

/// Whether a server said it is healthy (HTTP status 200).
fn is_ok(reply: &Value) -> bool {
    number(&reply["data"]["status_code"]) == 200
}

/// The errors a server listed (`data.errors`, each with its type), or, without a list, its
/// one `data.error`.
fn errors(data: &Value) -> Vec<(String, String)> {
    match data["errors"].as_array() {
        Some(list) if !list.is_empty() => list
            .iter()
            .map(|e| (text(&e["type"]), text(&e["error"])))
            .collect(),
        _ => match data["error"].as_str() {
            Some(error) if !error.is_empty() => vec![(String::new(), error.to_owned())],
            _ => Vec::new(),
        },
    }
}

/// natscli's columns: a row per server with its status, its errors below it, and a Total
/// row.
fn table(replies: &[&Value]) -> Table {
    let mut table = Table::new(["Server", "Cluster", "Domain", "Status", "Type", "Error"]);
    let mut total_errors = 0usize;
    for reply in replies {
        let (server, data) = (&reply["server"], &reply["data"]);
        table.row(vec![
            text(&server["name"]),
            text(&server["cluster"]),
            text(&server["domain"]),
            format!(
                "{} ({})",
                text(&data["status"]),
                number(&data["status_code"])
            ),
        ]);
        let errors = errors(data);
        total_errors += errors.len();
        // natscli's cut: all of ten, or nine and a count of the rest.
        let shown = if errors.len() > SHOWN_ERRORS {
            SHOWN_ERRORS - 1
        } else {
            errors.len()
        };
        for (kind, error) in &errors[..shown] {
            let blank = || String::new();
            table.row(vec![
                blank(),
                blank(),
                blank(),
                blank(),
                kind.clone(),
                error.clone(),
            ]);
        }
        if shown < errors.len() {
            let more = format!("{} more errors", errors.len() - shown);
            table.row(vec![String::new(), String::new(), String::new(), more]);
        }
    }
    let mut total = vec![String::new(); 6];
    total[0] = "Total".to_owned();
    total[5] = format!("{} errors", human::count(total_errors as u64));
    table.row(total);
    table
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn errors_come_from_the_list_or_else_the_one_error() {
        let listed = json!({ "errors": [{ "type": "STREAM", "error": "gone" }], "error": "x" });
        assert_eq!(errors(&listed), [("STREAM".to_owned(), "gone".to_owned())]);
        let one = json!({ "errors": [], "error": "JetStream not enabled" });
        assert_eq!(
            errors(&one),
            [(String::new(), "JetStream not enabled".to_owned())]
        );
        assert!(errors(&json!({ "status": "ok" })).is_empty());
    }

    #[test]
    fn past_ten_errors_nine_are_shown_and_the_rest_counted() {
        let list: Vec<Value> = (0..12)
            .map(|i| json!({ "type": "CONSUMER", "error": format!("e{i}") }))
            .collect();
        let reply = json!({
            "server": { "name": "n1" },
            "data": { "status": "unavailable", "status_code": 503, "errors": list },
        });
        let text = table(&[&reply]).render();
        assert!(text.contains("unavailable (503)"), "{text}");
        assert!(text.contains("e8") && !text.contains("e9"), "{text}");
        assert!(text.contains("3 more errors"), "{text}");
        assert!(text.contains("12 errors"), "{text}");
    }
}
