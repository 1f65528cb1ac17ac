//! `stream find`: the streams that pass natscli's filters (age, idleness, contents,
//! consumers, subjects, placement, sources), as a table, their names, or the server's JSON.

use std::time::Duration;

use clap::Args;
use futures_util::StreamExt;
use regex::Regex;
use rnats::jetstream::Context;
use rnats::jetstream::stream::Info;
use time::OffsetDateTime;

use super::{led_by, needs_api_level, print_raw_found, render_unlisted};
use crate::conn::parse_duration;
use crate::error::CliError;
use crate::out;

/// Options of `stream find`: each filter given must pass; `--invert` turns each around.
#[derive(Debug, Default, Args)]
pub(crate) struct FindArgs {
    /// Streams with their leader or a replica on a server whose name matches this regular
    /// expression.
    #[arg(long, value_name = "REGEX", value_parser = crate::parse::regex)]
    server_name: Option<Regex>,
    /// Streams in a cluster whose name matches this regular expression.
    #[arg(long, value_name = "REGEX", value_parser = crate::parse::regex)]
    cluster: Option<Regex>,
    /// Streams holding no messages.
    #[arg(long)]
    empty: bool,
    /// Streams that stored no message for this long, e.g. 1h (never counts as idle).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    idle: Option<Duration>,
    /// Streams created at least this long ago, e.g. 24h.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    created: Option<Duration>,
    /// Streams with this many consumers or fewer (a negative number: any).
    #[arg(long, value_name = "THRESHOLD", allow_negative_numbers = true)]
    consumers: Option<i64>,
    /// Streams with a subject inside this subject or wildcard (e.g. 'orders.>').
    #[arg(long, value_name = "SUBJECT")]
    subject: Option<String>,
    /// Streams with this many replicas or fewer (0: any).
    #[arg(long, value_name = "REPLICAS")]
    replicas: Option<usize>,
    /// Streams that source messages from other streams.
    #[arg(long)]
    sourced: bool,
    /// Streams that mirror another stream.
    #[arg(long)]
    mirrored: bool,
    /// Clustered streams led by this server.
    #[arg(long, value_name = "SERVER")]
    leader: Option<String>,
    /// Streams that need at least this JetStream API level (their `_nats.req.level`).
    #[arg(long, value_name = "LEVEL")]
    api_level: Option<i64>,
    /// Turn each filter around: older becomes newer, with becomes without.
    #[arg(long, overrides_with = "no_invert")]
    invert: bool,
    /// natscli's `--no-invert`: the filters as they are (the default).
    #[arg(long, hide = true)]
    no_invert: bool,
    /// Only the names, one per line.
    #[arg(long, short = 'n')]
    names: bool,
    /// The server's infos of the streams found, as a JSON array.
    #[arg(long, short = 'j', conflicts_with = "names")]
    json: bool,
}

/// Runs `stream find`.
pub(crate) async fn run(js: &Context, args: FindArgs) -> Result<(), CliError> {
    if args.json {
        let action = "cannot read the server's stream list";
        let keeps = |info: &Info, now| args.keeps(info, now);
        return print_raw_found(js, "STREAM.LIST", "streams", action, keeps).await;
    }
    let mut streams = js.streams();
    let mut listed = Vec::new();
    while let Some(info) = streams.next().await {
        listed.push(info.map_err(CliError::js("cannot list streams"))?);
    }
    let unlisted = render_unlisted("streams", streams.missing(), streams.offline());
    let now = OffsetDateTime::now_utc();
    let mut found: Vec<Info> = listed
        .into_iter()
        .filter(|info| args.keeps(info, now))
        .collect();
    if args.names {
        found.sort_by(|a, b| a.config.name.cmp(&b.config.name));
        let text: String = found
            .iter()
            .map(|i| format!("{}\n", i.config.name))
            .collect();
        // The names are for scripts: what could not be listed goes to stderr.
        eprint!("{unlisted}");
        return out::print(&text);
    }
    if found.is_empty() {
        eprintln!("No streams matched");
        return out::print(&unlisted);
    }
    // natscli's order: by the bytes stored, smallest first.
    found.sort_by(|a, b| (a.state.bytes, &a.config.name).cmp(&(b.state.bytes, &b.config.name)));
    super::stream_table::table(&found).print()?;
    out::print(&unlisted)
}

impl FindArgs {
    /// Whether `info` passes every filter given, `now` being the time ages are taken at.
    /// Each filter is natscli's, and so is what `--invert` makes of it: "at least" becomes
    /// "at most" (both keep the threshold itself), "with" becomes "without".
    fn keeps(&self, info: &Info, now: OffsetDateTime) -> bool {
        let (config, state, invert) = (&info.config, &info.state, self.invert);
        // A threshold test that --invert turns from `<=` into `>=`.
        let at_most = |value: i64, limit: i64| {
            if invert {
                value >= limit
            } else {
                value <= limit
            }
        };
        let checks = [
            self.created.filter(|span| !span.is_zero()).map(|span| {
                let age = now - info.created;
                if invert { age <= span } else { age >= span }
            }),
            self.idle
                .filter(|span| !span.is_zero())
                .map(|span| (now - state.last_timestamp > span) != invert),
            self.empty.then_some((state.messages == 0) != invert),
            self.consumers
                .filter(|limit| *limit >= 0)
                .map(|limit| at_most(count(state.consumer_count), limit)),
            self.cluster.as_ref().map(|re| {
                let name = info.cluster.as_ref().map(|c| c.name.as_deref());
                name.is_some_and(|name| re.is_match(name.unwrap_or(""))) != invert
            }),
            self.subject
                .as_deref()
                .filter(|s| !s.is_empty())
                .map(|wanted| {
                    let subjects = &config.subjects;
                    subjects.iter().any(|s| subject_within(s, wanted)) != invert
                }),
            self.server_name.as_ref().map(|re| {
                let on_server = info.cluster.as_ref().is_some_and(|c| {
                    c.leader.as_deref().is_some_and(|l| re.is_match(l))
                        || c.replicas.iter().any(|r| re.is_match(&r.name))
                });
                on_server != invert
            }),
            self.replicas
                .filter(|limit| *limit > 0)
                .map(|limit| at_most(count(config.num_replicas.max(1)), count(limit))),
            self.sourced
                .then(|| config.sources.as_ref().is_some_and(|s| !s.is_empty()) != invert),
            self.mirrored.then(|| config.mirror.is_some() != invert),
            self.leader
                .as_deref()
                .map(|leader| led_by(info.cluster.as_ref(), leader, invert)),
            self.api_level
                .filter(|level| *level > 0)
                .map(|level| needs_api_level(&config.metadata, level, invert)),
        ];
        checks.into_iter().all(|check| check.unwrap_or(true))
    }
}

fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Whether every subject `subject` (which may hold wildcards) stands for lies inside
/// `wanted`: `orders.*` is inside `orders.>` and `*.*`, `orders.>` is not inside `orders.*`.
/// An empty token (`a..b`) is in no subject, as in natscli.
fn subject_within(subject: &str, wanted: &str) -> bool {
    let mut tokens = subject.split('.');
    for want in wanted.split('.') {
        let Some(token) = tokens.next() else {
            return false;
        };
        match (want, token) {
            ("", _) | (_, "") => return false,
            (">", _) => return true,
            (_, ">") => return false,
            ("*", _) => {}
            (_, "*") => return false,
            (want, token) if want != token => return false,
            _ => {}
        }
    }
    tokens.next().is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_subject_is_within_a_wildcard_that_covers_all_it_stands_for() {
        for (subject, wanted) in [
            ("orders.new", "orders.new"),
            ("orders.new", "orders.*"),
            ("orders.new", "orders.>"),
            ("orders.*", "orders.>"),
            ("orders.*", "*.*"),
            ("orders.eu.>", "orders.>"),
            ("orders.>", ">"),
        ] {
            assert!(subject_within(subject, wanted), "{subject} in {wanted}");
        }
        for (subject, wanted) in [
            ("orders.new", "orders.old"),
            ("orders.>", "orders.*"),
            ("orders.*", "orders.new"),
            ("orders", "orders.>"),
            ("orders.new.x", "orders.*"),
            ("orders.new", "orders.new.x"),
            ("orders.>", "orders.new"),
            ("orders..new", "orders..new"),
            ("orders.new", "orders..>"),
        ] {
            assert!(
                !subject_within(subject, wanted),
                "{subject} not in {wanted}"
            );
        }
    }
}
