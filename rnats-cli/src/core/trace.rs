//! `rnats trace`: publish a traced message (ADR-41) and draw the path the servers report, hop
//! by hop, in natscli's form.

use std::collections::{BTreeMap, BTreeSet};

use clap::Args;
use futures_util::StreamExt;
use rnats::trace::{ConnectionKind, Egress, Ingress, TraceEvent, TraceReport};

use crate::conn::ConnArgs;
use crate::error::CliError;
use crate::out;

/// Options of `rnats trace`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  rnats trace orders.new\n  \
    rnats trace orders.new '{\"id\":1}' --deliver -H Source:cli")]
pub(crate) struct TraceArgs {
    /// Subject to publish the traced message to.
    subject: String,
    /// Message body (empty when absent).
    payload: Option<String>,
    /// Deliver the message to its subscribers too; by default it is only traced.
    #[arg(long)]
    deliver: bool,
    /// Show when each event happened, relative to the message's arrival.
    #[arg(long, short = 'T')]
    timestamp: bool,
    /// A header, KEY:VALUE; repeat for more.
    #[arg(long = "header", short = 'H', value_name = "KEY:VALUE")]
    headers: Vec<String>,
    /// The servers' reports as a JSON array, as they came.
    #[arg(long, short = 'j')]
    json: bool,
}

/// Runs `rnats trace`.
pub(crate) async fn run(args: TraceArgs, conn: &ConnArgs) -> Result<(), CliError> {
    let headers = crate::parse::headers(&args.headers)?;
    let (client, settings) = conn.connect().await?;
    if !client.is_server_compatible(2, 11, 0) {
        return Err(CliError::Usage(
            "tracing messages needs nats-server 2.11 or later",
        ));
    }
    let payload = bytes::Bytes::from(args.payload.clone().unwrap_or_default());
    let mut trace = client
        .trace(args.subject.clone(), payload)
        .timeout(settings.timeout);
    if !args.deliver {
        trace = trace.trace_only();
    }
    if let Some(headers) = headers {
        trace = trace.headers(headers);
    }
    let mut traces = trace.await.map_err(CliError::Request)?;
    let mut reports = Vec::new();
    while let Some(report) = traces.next().await {
        reports.push(report?);
    }
    if args.json {
        return out::json(&serde_json::to_value(&reports)?);
    }
    if reports.is_empty() {
        return Err(CliError::NothingReceived {
            what: "no trace report",
            timeout: settings.timeout,
        });
    }
    let delivery = if args.deliver {
        " with delivery to the final destination"
    } else {
        ""
    };
    let mut text = format!(
        "Tracing message route to subject {}{delivery}\n\n",
        args.subject
    );
    text.push_str(&render(&reports, args.timestamp));
    out::print(&text)
}

/// The path as natscli draws it: each server's ingress, its events, and under each egress to
/// another server that server's report, indented.
fn render(reports: &[TraceReport], timestamps: bool) -> String {
    let by_hop: BTreeMap<Option<&str>, &TraceReport> = reports
        .iter()
        .map(|report| (report.hop(), report))
        .collect();
    let mut lines = Vec::new();
    let mut egress_counts: BTreeMap<&'static str, usize> = BTreeMap::new();
    // The origin is the report without a hop; failing that (its report was lost), the first.
    let origin = by_hop.get(&None).copied().or(reports.first());
    if let Some(origin) = origin {
        let painter = Painter {
            by_hop: &by_hop,
            timestamps,
        };
        painter.draw(origin, &mut lines, &mut egress_counts);
    }
    let mut text = lines.join("\n");
    text.push_str(
        "\n\nLegend: Client: --C Router: --> Gateway: ==> Leafnode: ~~> JetStream: --J Error: --X\n",
    );
    if !egress_counts.is_empty() {
        text.push_str("\nEgress Count:\n\n");
        let width = egress_counts.keys().map(|k| k.len()).max().unwrap_or(0);
        for (kind, count) in &egress_counts {
            text.push_str(&format!("   {kind:>width$}: {count}\n"));
        }
    }
    if egress_counts.get("JetStream").is_some_and(|n| *n > 1) {
        text.push_str(&format!(
            "\nWARNING: The message was received by {} streams\n",
            egress_counts["JetStream"]
        ));
    }
    text
}

/// Draws reports, following egresses to the servers they lead to.
struct Painter<'a> {
    by_hop: &'a BTreeMap<Option<&'a str>, &'a TraceReport>,
    timestamps: bool,
}

impl<'a> Painter<'a> {
    /// Draws `origin`'s report and, under each egress that leads to another server, that
    /// server's report, depth first. Each report is drawn once: an egress that leads back to
    /// one already drawn (hops the servers got wrong) ends its path. The path is kept on a
    /// stack of its own rather than the call stack, as the servers say how long it is.
    fn draw(
        &self,
        origin: &'a TraceReport,
        lines: &mut Vec<String>,
        counts: &mut BTreeMap<&'static str, usize>,
    ) {
        let mut drawn = BTreeSet::from([origin.hop()]);
        // The reports on the path being drawn, each with the egresses it has left to draw.
        let mut path = vec![(origin, self.head(origin, 0, lines, counts))];
        while let Some((report, egresses)) = path.last_mut() {
            let report = *report;
            let Some(egress) = egresses.next() else {
                path.pop();
                continue;
            };
            let depth = path.len() - 1;
            let indent = indent(depth);
            lines.push(format!(
                "{indent}{}{}",
                self.stamp(report, egress.timestamp),
                egress_line(egress)
            ));
            if let Some(error) = &egress.error {
                lines.push(format!("{indent}  --X Error: {error}"));
            }
            *counts.entry(kind_name(egress.kind)).or_default() += 1;
            let next = (egress.hop.as_deref()).and_then(|hop| self.by_hop.get(&Some(hop)));
            if let Some(&next) = next
                && drawn.insert(next.hop())
            {
                let egresses = self.head(next, depth + 1, lines, counts);
                path.push((next, egresses));
            }
        }
    }

    /// Draws what `report`'s server did with the message up to its egresses, which it returns
    /// to be drawn one by one.
    fn head(
        &self,
        report: &'a TraceReport,
        depth: usize,
        lines: &mut Vec<String>,
        counts: &mut BTreeMap<&'static str, usize>,
    ) -> std::vec::IntoIter<&'a Egress> {
        let indent = indent(depth);
        let stamp = |at: time::OffsetDateTime| self.stamp(report, at);
        if let Some(ingress) = report.ingress() {
            lines.push(format!(
                "{indent}{}{}",
                stamp(ingress.timestamp),
                ingress_line(report, ingress)
            ));
            if let Some(error) = &ingress.error {
                lines.push(format!("{indent}--X Error: {error}"));
            }
        }
        for event in &report.events {
            match event {
                TraceEvent::SubjectMapping(mapping) => lines.push(format!(
                    "{indent}{}    Mapping subject:{:?}",
                    stamp(mapping.timestamp),
                    mapping.mapped_to
                )),
                TraceEvent::ServiceImport(import) => lines.push(format!(
                    "{indent}{}    Service Import from:{:?} to:{:?} account:{:?}",
                    stamp(import.timestamp),
                    import.from,
                    import.to,
                    import.account
                )),
                TraceEvent::StreamExport(export) => lines.push(format!(
                    "{indent}{}    Stream Export subject:{:?} account:{:?}",
                    stamp(export.timestamp),
                    export.to,
                    export.account
                )),
                TraceEvent::JetStream(js) => {
                    let action = if js.no_interest {
                        "no interest"
                    } else {
                        "stored"
                    };
                    lines.push(format!(
                        "{indent}{}--J JetStream action:{action:?} stream:{:?} subject:{:?}",
                        stamp(js.timestamp),
                        js.stream,
                        js.subject.as_deref().unwrap_or_default()
                    ));
                    if let Some(error) = &js.error {
                        lines.push(format!("{indent}--X Error: {error}"));
                    }
                    *counts.entry("JetStream").or_default() += 1;
                }
                _ => {}
            }
        }
        let egresses: Vec<&'a Egress> = report.egresses().collect();
        let from_a_client = report
            .ingress()
            .is_some_and(|i| i.kind == ConnectionKind::Client && i.error.is_none());
        let stored = report
            .events
            .iter()
            .any(|e| matches!(e, TraceEvent::JetStream(_)));
        if egresses.is_empty() && from_a_client && !stored {
            lines.push(format!("{indent}--X No active interest"));
        }
        egresses.into_iter()
    }

    /// When `at` was, after the message reached `report`'s server, with `--timestamp`.
    fn stamp(&self, report: &TraceReport, at: time::OffsetDateTime) -> String {
        match (self.timestamps, report.ingress()) {
            (true, Some(ingress)) => {
                let micros = (at - ingress.timestamp).whole_microseconds();
                format!("[+{:.3}ms] ", micros as f64 / 1000.0)
            }
            _ => String::new(),
        }
    }
}

/// The indent of a report `depth` servers from the origin's, which stops growing past
/// [`MAX_INDENT`] levels so that a long path (a broken or hostile server's) draws in room
/// that grows with its length, not its square.
fn indent(depth: usize) -> String {
    " ".repeat(depth.min(MAX_INDENT) * 4)
}

/// The deepest a report is indented.
const MAX_INDENT: usize = 32;

fn ingress_line(report: &TraceReport, ingress: &Ingress) -> String {
    let mut line = connection(ingress.kind, &ingress.name, ingress.cid);
    let from_outside = matches!(
        ingress.kind,
        ConnectionKind::Client | ConnectionKind::Gateway
    );
    if let Some(cluster) = report.server.cluster.as_deref().filter(|_| from_outside) {
        line.push_str(&format!(" cluster:{cluster:?}"));
    }
    line.push_str(&format!(
        " server:{:?} version:{:?}",
        report.server.name, report.server.version
    ));
    line
}

fn egress_line(egress: &Egress) -> String {
    let mut line = format!(
        "{} {}",
        arrow(egress.kind),
        connection(egress.kind, &egress.name, egress.cid)
    );
    if let Some(account) = &egress.account {
        line.push_str(&format!(" account:{account:?}"));
    }
    if let Some(subject) = &egress.subscription {
        line.push_str(&format!(" subject:{subject:?}"));
    }
    if let Some(queue) = &egress.queue {
        line.push_str(&format!(" queue:{queue:?}"));
    }
    line
}

/// `Client "name" cid:5`, with the id prefix natscli uses for each kind.
fn connection(kind: ConnectionKind, name: &str, cid: u64) -> String {
    let prefix = match kind {
        ConnectionKind::Router => "rid",
        ConnectionKind::Gateway => "gid",
        ConnectionKind::Leaf => "lid",
        _ => "cid",
    };
    match name {
        "" => format!("{} {prefix}:{cid}", kind_name(kind)),
        name => format!("{} {name:?} {prefix}:{cid}", kind_name(kind)),
    }
}

fn kind_name(kind: ConnectionKind) -> &'static str {
    match kind {
        ConnectionKind::Client => "Client",
        ConnectionKind::Router => "Router",
        ConnectionKind::Gateway => "Gateway",
        ConnectionKind::System => "System",
        ConnectionKind::Leaf => "Leafnode",
        ConnectionKind::JetStream => "JetStream",
        ConnectionKind::Account => "Account",
        _ => "Unknown",
    }
}

fn arrow(kind: ConnectionKind) -> &'static str {
    match kind {
        ConnectionKind::Client => "--C",
        ConnectionKind::Router => "-->",
        ConnectionKind::Gateway => "==>",
        ConnectionKind::Leaf => "~~>",
        ConnectionKind::JetStream => "--J",
        _ => "-->",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A report from server `name`, reached through `hop` (none: the origin), with an egress
    /// to a route for each of `egresses`.
    fn report(name: &str, hop: Option<&str>, egresses: &[&str]) -> TraceReport {
        let header = match hop {
            Some(hop) => serde_json::json!({ "Nats-Trace-Hop": [hop] }),
            None => serde_json::json!({}),
        };
        let mut events = vec![serde_json::json!({
            "type": "in", "ts": "2026-12-06T10:00:00Z", "kind": 1, "cid": 1,
            "name": "up", "acc": "A", "subj": "x",
        })];
        for egress in egresses {
            events.push(serde_json::json!({
                "type": "eg", "ts": "2026-12-06T10:00:00Z", "kind": 1, "cid": 2,
                "name": "next", "hop": egress,
            }));
        }
        serde_json::from_value(serde_json::json!({
            "server": { "name": name, "host": "h", "id": "N", "ver": "2.15.1", "jetstream": false,
                        "flags": 0, "seq": 1, "time": "2026-12-06T10:00:00Z" },
            "request": { "header": header, "msgsize": 1 },
            "hops": egresses.len(),
            "events": events,
        }))
        .unwrap()
    }

    #[test]
    fn each_report_is_drawn_under_the_egress_that_leads_to_it() {
        let reports = [
            report("n1", None, &["1"]),
            report("n2", Some("1"), &["1.1"]),
            report("n3", Some("1.1"), &[]),
        ];
        let text = render(&reports, false);
        let at = |name: &str| {
            assert_eq!(
                text.matches(&format!("server:{name:?}")).count(),
                1,
                "{text}"
            );
            text.find(&format!("server:{name:?}"))
        };
        assert!(at("n1") < at("n2") && at("n2") < at("n3"), "{text}");
    }

    #[test]
    fn a_path_as_long_as_the_servers_say_draws_in_room_that_grows_with_it() {
        // Each report forwards to the next: far deeper than a call stack per report allows.
        const SERVERS: usize = 20_000;
        let hops: Vec<String> = (0..SERVERS).map(|i| i.to_string()).collect();
        let mut reports = vec![report("origin", None, &[hops[0].as_str()])];
        for (i, hop) in hops.iter().enumerate() {
            let next: Vec<&str> = hops.get(i + 1).map(String::as_str).into_iter().collect();
            reports.push(report(&format!("n{i}"), Some(hop), &next));
        }
        let text = render(&reports, false);
        assert_eq!(text.matches("server:").count(), SERVERS + 1);
        let deepest = " ".repeat(MAX_INDENT * 4);
        assert!(
            text.lines()
                .all(|line| !line.starts_with(&format!("{deepest} "))),
            "indented past the cap"
        );
        assert!(text.len() < SERVERS * 1024, "{} bytes", text.len());
    }

    #[test]
    fn hops_that_lead_back_to_a_drawn_report_end_the_path() {
        // A report whose egress names its own hop, with no origin's report; and an origin
        // and a forwarded report that name each other.
        for reports in [
            vec![report("n1", Some("1"), &["1"])],
            vec![
                report("n1", None, &["1"]),
                report("n2", Some("1"), &["1", "2"]),
            ],
        ] {
            let text = render(&reports, false);
            for server in &reports {
                let drawn = text
                    .matches(&format!("server:{:?}", server.server.name))
                    .count();
                assert_eq!(drawn, 1, "{text}");
            }
        }
    }
}
