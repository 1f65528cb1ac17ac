//! `rnats events`: follow the server's advisories and metrics (JetStream's `$JS.EVENT.>`, the
//! system account's connection events) as lines a person reads, or as JSON.

use std::time::Duration;

use clap::Args;
use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use regex::Regex;
use rnats::jetstream::consumer::DeliverPolicy;
use rnats::jetstream::consumer::pull::OrderedConfig;
use serde_json::Value;

use crate::conn::{ConnArgs, parse_duration};
use crate::error::CliError;
use crate::out;

/// Options of `rnats events`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  rnats events --js-advisory\n  \
    rnats events --all --json --context system\n  \
    rnats events --stream ADVISORIES --since 1h --filter 'consumer_action|ORDERS'")]
pub(crate) struct EventsArgs {
    /// Every kind below.
    #[arg(long, short = 'a')]
    all: bool,
    /// JetStream advisories (`$JS.EVENT.ADVISORY.>`): API audits, stream and consumer actions,
    /// leader elections, terminated or max-delivered messages.
    #[arg(long)]
    js_advisory: bool,
    /// JetStream metrics (`$JS.EVENT.METRIC.>`), such as acknowledgement samples.
    #[arg(long)]
    js_metric: bool,
    /// Connection, disconnection and authentication-error events (the system account's;
    /// on by default, `--srv-advisory=false` to leave them out).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true")]
    srv_advisory: bool,
    /// Leave the connection events out (natscli's `--no-srv-advisory`).
    #[arg(long)]
    no_srv_advisory: bool,
    /// More subjects to follow, as events.
    #[arg(long, value_name = "SUBJECTS", value_delimiter = ',')]
    subjects: Vec<String>,
    /// One JSON object per event, as the server sent it.
    #[arg(long, short = 'j')]
    json: bool,
    /// One CloudEvents v1.0 JSON object per event (natscli's `--cloudevent`): type, id,
    /// time, source and subject from the NATS event, the event itself as `data`.
    #[arg(long, conflicts_with = "short")]
    cloudevent: bool,
    /// One short line per event: time, kind and subject.
    #[arg(long, conflicts_with = "json")]
    short: bool,
    /// Exit after this many events.
    #[arg(long, short = 'c', value_parser = clap::value_parser!(u64).range(1..))]
    count: Option<u64>,
    /// Only events whose JSON matches this regular expression (natscli's `--filter`).
    #[arg(long, value_name = "REGEX", value_parser = crate::parse::regex)]
    filter: Option<Regex>,
    /// Read the events stored in this stream (one capturing advisories) instead of
    /// subscribing, then follow the new ones.
    #[arg(long, value_name = "STREAM")]
    stream: Option<String>,
    /// With --stream: start with the events this recent, e.g. 1h (default: all stored).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, requires = "stream")]
    since: Option<Duration>,
}

/// One event as it arrived: its subject and body.
type Event = Result<(String, bytes::Bytes), CliError>;

/// Runs `rnats events`.
pub(crate) async fn run(args: EventsArgs, conn: &ConnArgs) -> Result<(), CliError> {
    let mut events = match &args.stream {
        Some(stream) => from_stream(conn, stream, args.since).await?,
        None => subscribed(&args, conn).await?,
    };
    let mut seen = 0u64;
    while let Some(event) = events.next().await {
        let (subject, payload) = event?;
        if let Some(filter) = &args.filter
            && !filter.is_match(&String::from_utf8_lossy(&payload))
        {
            continue;
        }
        seen += 1;
        let body: Value = serde_json::from_slice(&payload).unwrap_or(Value::Null);
        if args.cloudevent {
            match cloud_event(&body) {
                Some(event) => out::json(&event)?,
                // As natscli: an event without a NATS event type cannot be one.
                None => out::print(&format!(
                    "Event error: unknown event schema on subject {subject}\n"
                ))?,
            }
        } else if args.json {
            match &body {
                Value::Null => out::json(&serde_json::json!({
                    "subject": subject,
                    "data": String::from_utf8_lossy(&payload),
                }))?,
                body => out::json(body)?,
            }
        } else {
            out::print(&format!("{}\n", line(&subject, &body, args.short)))?;
        }
        if args.count == Some(seen) {
            return Ok(());
        }
    }
    Err(CliError::SubscriptionEnded)
}

/// The events of the subjects the flags choose, as they are published.
async fn subscribed(
    args: &EventsArgs,
    conn: &ConnArgs,
) -> Result<BoxStream<'static, Event>, CliError> {
    let subjects = subjects(args, conn.js_event_prefix.as_deref());
    if subjects.is_empty() {
        return Err(CliError::Usage("no events were chosen"));
    }
    let (client, _) = conn.connect().await?;
    let mut streams = Vec::new();
    for (_, subject) in &subjects {
        streams.push(client.subscribe(subject.clone()).await?);
    }
    client.flush().await?;
    // Scripts and tests wait for these lines: the server has the subscriptions by now.
    for (what, subject) in &subjects {
        eprintln!("Listening for {what} on {subject}");
    }
    // The client lives as long as the stream: its subscriptions end with it.
    let events = futures_util::stream::select_all(streams).map(move |message| {
        let _ = &client;
        Ok((message.subject.to_string(), message.payload))
    });
    Ok(events.boxed())
}

/// The events stored in `stream` (from `since` ago, else all), then the new ones, read by
/// an ordered consumer.
async fn from_stream(
    conn: &ConnArgs,
    stream: &str,
    since: Option<Duration>,
) -> Result<BoxStream<'static, Event>, CliError> {
    let js = crate::conn::jetstream(conn).await?;
    let action = format!("cannot read events from stream {stream}");
    let deliver_policy = match since {
        Some(since) => DeliverPolicy::ByStartTime {
            start_time: crate::parse::time_ago("--since", since)?,
        },
        None => DeliverPolicy::All,
    };
    let consumer = js
        .get_stream(stream)
        .await
        .map_err(CliError::js(&action))?
        .create_consumer(OrderedConfig {
            deliver_policy,
            ..Default::default()
        })
        .await
        .map_err(CliError::js(&action))?;
    let messages = consumer.messages().await.map_err(CliError::js(&action))?;
    eprintln!("Reading events from stream {stream}");
    let stream = stream.to_owned();
    let events = messages.map(move |message| {
        let message = message.map_err(CliError::js(format!(
            "cannot read events from stream {stream}"
        )))?;
        Ok((message.subject.to_string(), message.payload.clone()))
    });
    Ok(events.boxed())
}

/// Where the JSON schemas of NATS events are published; a CloudEvent's `dataschema` points
/// into it, as jsm.go's does.
const SCHEMAS: &str = "https://raw.githubusercontent.com/nats-io/jsm.go/master/schemas";

/// A NATS event (`type` like `io.nats.jetstream.advisory.v1.stream_action`) as a CloudEvent
/// v1.0, with the attributes natscli derives: source `urn:nats:jetstream` and subject
/// `advisory` from the type's third and fourth words, the event's `id` and `timestamp`, and
/// its schema's address. `None` for anything that is not a NATS event.
fn cloud_event(body: &Value) -> Option<Value> {
    let kind = body["type"]
        .as_str()
        .filter(|t| t.starts_with("io.nats."))?;
    let words: Vec<&str> = kind.split('.').collect();
    let (source, subject) = (words.get(2)?, words.get(3)?);
    let schema = format!(
        "{SCHEMAS}/{}.json",
        kind["io.nats.".len()..].replace('.', "/")
    );
    Some(serde_json::json!({
        "type": kind,
        "time": body["timestamp"].as_str().unwrap_or("0001-01-01T00:00:00Z"),
        "id": body["id"].as_str().unwrap_or_default(),
        "source": format!("urn:nats:{source}"),
        "dataschema": schema,
        "specversion": "1.0",
        "subject": subject,
        "data": body,
    }))
}

/// The subjects the flags choose, each with what it carries.
fn subjects(args: &EventsArgs, js_event_prefix: Option<&str>) -> Vec<(&'static str, String)> {
    let js = js_event_prefix.unwrap_or("$JS.EVENT");
    let mut chosen = Vec::new();
    if args.all || args.js_advisory {
        chosen.push(("JetStream advisories", format!("{js}.ADVISORY.>")));
    }
    if args.all || args.js_metric {
        chosen.push(("JetStream metrics", format!("{js}.METRIC.>")));
    }
    if args.all || (args.srv_advisory && !args.no_srv_advisory) {
        chosen.push(("client connections", "$SYS.ACCOUNT.*.CONNECT".to_owned()));
        chosen.push((
            "client disconnections",
            "$SYS.ACCOUNT.*.DISCONNECT".to_owned(),
        ));
        chosen.push((
            "authentication errors",
            "$SYS.SERVER.*.CLIENT.AUTH.ERR".to_owned(),
        ));
    }
    for subject in &args.subjects {
        chosen.push(("events", subject.clone()));
    }
    chosen
}

/// One event as a line: `[time] kind on subject`, then, unless `short`, the event's own
/// fields as `key=value` (the client's name and account for connection events).
fn line(subject: &str, body: &Value, short: bool) -> String {
    let kind = body["type"]
        .as_str()
        .map(|t| t.rsplit('.').next().unwrap_or(t).to_owned())
        .unwrap_or_else(|| "event".to_owned());
    let time = body["timestamp"]
        .as_str()
        .or_else(|| body["server"]["time"].as_str())
        .and_then(|t| t.get(11..19))
        .unwrap_or("--:--:--");
    let mut text = format!("[{time}] {kind} on {subject}");
    if short {
        return text;
    }
    let Value::Object(fields) = body else {
        return text;
    };
    for (key, value) in fields {
        let shown = match value {
            Value::String(s) if !matches!(key.as_str(), "type" | "id" | "timestamp") => {
                format!("{s:?}")
            }
            Value::Number(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            _ => continue,
        };
        text.push_str(&format!(" {key}={shown}"));
    }
    for key in ["name", "acc", "user", "host"] {
        if let Some(value) = body["client"][key].as_str().filter(|v| !v.is_empty()) {
            text.push_str(&format!(" client.{key}={value:?}"));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_advisory_reads_as_one_line_with_its_fields() {
        let body = serde_json::json!({
            "type": "io.nats.jetstream.advisory.v1.stream_action",
            "id": "abc",
            "timestamp": "2026-12-02T06:30:01.5Z",
            "stream": "ORDERS",
            "action": "create",
        });
        let subject = "$JS.EVENT.ADVISORY.STREAM.CREATED.ORDERS";
        assert_eq!(
            line(subject, &body, true),
            "[06:30:01] stream_action on $JS.EVENT.ADVISORY.STREAM.CREATED.ORDERS"
        );
        let full = line(subject, &body, false);
        assert!(full.contains(" action=\"create\""), "{full}");
        assert!(full.contains(" stream=\"ORDERS\""), "{full}");
        assert!(!full.contains("abc"), "{full}");
    }

    #[test]
    fn a_connection_event_names_its_client_and_anything_else_still_prints() {
        let body = serde_json::json!({
            "type": "io.nats.server.advisory.v1.client_connect",
            "server": {"time": "2026-12-02T07:00:00Z"},
            "client": {"name": "worker", "acc": "APP"},
        });
        assert_eq!(
            line("$SYS.ACCOUNT.APP.CONNECT", &body, false),
            "[07:00:00] client_connect on $SYS.ACCOUNT.APP.CONNECT client.name=\"worker\" \
             client.acc=\"APP\""
        );
        assert_eq!(line("x", &Value::Null, false), "[--:--:--] event on x");
    }

    #[test]
    fn a_nats_event_becomes_a_cloud_event() {
        let body = serde_json::json!({
            "type": "io.nats.jetstream.advisory.v1.stream_action",
            "id": "abc",
            "timestamp": "2026-12-02T06:30:01.5Z",
            "stream": "ORDERS",
        });
        let event = cloud_event(&body).expect("a NATS event");
        assert_eq!(event["specversion"], "1.0");
        assert_eq!(event["source"], "urn:nats:jetstream");
        assert_eq!(event["subject"], "advisory");
        assert_eq!(event["id"], "abc");
        assert_eq!(event["time"], "2026-12-02T06:30:01.5Z");
        assert_eq!(
            event["dataschema"],
            "https://raw.githubusercontent.com/nats-io/jsm.go/master/schemas/jetstream/advisory/v1/stream_action.json"
        );
        assert_eq!(event["data"], body);
        assert!(cloud_event(&serde_json::json!({"type": "custom"})).is_none());
        assert!(cloud_event(&Value::Null).is_none());
    }
}
