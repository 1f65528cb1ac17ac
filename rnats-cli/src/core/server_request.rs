//! `rnats server request <kind>`: one monitoring endpoint (VARZ, CONNZ, JSZ, ...) asked of
//! every server through the system account, on `$SYS.REQ.SERVER.PING.<KIND>` (or
//! `$SYS.REQ.SERVER.<id>.<KIND>` for one server), with natscli's filter body; each server's
//! JSON answer is printed whole, as natscli's `server request` does.

use clap::builder::PossibleValue;
use clap::{Args, Subcommand, ValueEnum};
use rnats::system::{ConnState, ConnzSort, System};
use serde_json::{Map, Value, json};

use super::event_filter::server_filter;
use super::health_checks::HealthChecks;
use super::server_ping::{Answer, DATA, Missing, count_given, first_error, system_failed};
use crate::conn::ConnArgs;
use crate::error::CliError;
use crate::out;

/// Options of `rnats server request`.
#[derive(Debug, Args)]
pub(crate) struct RequestArgs {
    /// Which monitoring data.
    #[command(subcommand)]
    kind: Kind,
    #[command(flatten)]
    filter: ServerFilter,
}

/// Which servers answer, and how much of each answer: flags of `server request` that any
/// kind takes (natscli's `--limit`, `--offset`, `--name`, `--host`, `--cluster`, `--tags`).
#[derive(Debug, Args)]
struct ServerFilter {
    /// Records of each answer at most (connections, subscriptions, JetStream entries).
    #[arg(long, global = true, value_name = "N", default_value_t = 2048)]
    limit: usize,
    /// Records of each answer to skip first.
    #[arg(long, global = true, value_name = "N", default_value_t = 0)]
    offset: usize,
    /// Only the server with this name.
    #[arg(long, global = true, value_name = "NAME")]
    name: Option<String>,
    /// Only the server with this host.
    #[arg(long, global = true, value_name = "HOST")]
    host: Option<String>,
    /// Only the servers of this cluster.
    #[arg(long, global = true, value_name = "CLUSTER")]
    cluster: Option<String>,
    /// Only servers with all these tags.
    #[arg(long, global = true, value_name = "TAG", value_delimiter = ',')]
    tags: Vec<String>,
    /// Only the server with this ID, asked on its own subject.
    #[arg(long, global = true, value_name = "ID")]
    server_id: Option<String>,
}

impl ServerFilter {
    /// The servers these flags select; `domain` is the context's JetStream domain.
    fn server_filter(&self, domain: Option<&str>) -> rnats::system::ServerFilter {
        server_filter(
            self.name.as_deref(),
            self.host.as_deref(),
            self.cluster.as_deref(),
            &self.tags,
            domain,
        )
    }

    /// Whether at most one server can match, so one answer is all to wait for (several
    /// servers can share a host).
    fn names_one(&self) -> bool {
        self.name.is_some() || self.server_id.is_some()
    }
}

/// The kinds of monitoring data, with natscli's names and aliases.
#[derive(Debug, Subcommand)]
enum Kind {
    /// Subscription counts, and each subscription with --detail (SUBSZ).
    ///
    /// Example: rnats server request subscriptions --detail --filter-account APP
    #[command(visible_alias = "sub", alias = "subsz")]
    Subscriptions {
        /// Answers to wait for (0 or none: one from each server a ping finds).
        wait: Option<usize>,
        /// Every subscription, not only the counts.
        #[arg(long)]
        detail: bool,
        /// Only this account's subscriptions.
        #[arg(long, value_name = "ACCOUNT")]
        filter_account: Option<String>,
        /// Only subscriptions that match this subject.
        #[arg(long, value_name = "SUBJECT")]
        filter_subject: Option<String>,
    },
    /// Runtime variables: version, limits, load (VARZ).
    ///
    /// Example: rnats server request variables --name n1
    #[command(visible_alias = "var", alias = "varz")]
    Variables {
        /// Answers to wait for (0 or none: one from each server a ping finds).
        wait: Option<usize>,
    },
    /// Client connections (CONNZ).
    ///
    /// Example: rnats server request connections --sort msgs_to --filter-account APP
    #[command(visible_alias = "conn", alias = "connz")]
    Connections(ConnectionsArgs),
    /// Cluster routes (ROUTEZ).
    #[command(visible_alias = "route", alias = "routez")]
    Routes {
        /// Answers to wait for (0 or none: one from each server a ping finds).
        wait: Option<usize>,
        /// Each route's subscriptions too.
        #[arg(long)]
        subscriptions: bool,
    },
    /// Gateways to other clusters (GATEWAYZ).
    #[command(visible_alias = "gateway", alias = "gwy", alias = "gatewayz")]
    Gateways(GatewaysArgs),
    /// Leaf node connections (LEAFZ).
    #[command(visible_alias = "leaf", alias = "leafz")]
    Leafnodes {
        /// Answers to wait for (0 or none: one from each server a ping finds).
        wait: Option<usize>,
        /// Each leaf node's subscriptions too.
        #[arg(long)]
        subscriptions: bool,
    },
    /// Accounts, or one account's details with --account (ACCOUNTZ).
    #[command(visible_alias = "acct", alias = "accountz")]
    Accounts {
        /// Answers to wait for (0 or none: one from each server a ping finds).
        wait: Option<usize>,
        /// Details of this account.
        #[arg(long, value_name = "ACCOUNT")]
        account: Option<String>,
    },
    /// JetStream usage and, on request, its accounts, streams and consumers (JSZ).
    ///
    /// Example: rnats server request jetstream --all --leader
    #[command(visible_alias = "js", alias = "jsz")]
    Jetstream(JetStreamArgs),
    /// JetStream health of each server (HEALTHZ).
    ///
    /// Example: rnats server request jetstream-health --server-only
    #[command(visible_alias = "healthz")]
    JetstreamHealth(HealthArgs),
    /// RAFT groups and their state (RAFTZ).
    #[command(alias = "raftz")]
    Raft {
        /// Answers to wait for (0 or none: one from each server a ping finds).
        wait: Option<usize>,
        /// Only this account's groups.
        #[arg(long, value_name = "ACCOUNT")]
        account: Option<String>,
        /// Only this group.
        #[arg(long, value_name = "GROUP")]
        group: Option<String>,
    },
    /// The servers' internal queues (IPQUEUESZ).
    #[command(visible_alias = "ipq", alias = "ipqueuesz")]
    Ipqueue {
        /// Answers to wait for (0 or none: one from each server a ping finds).
        wait: Option<usize>,
        /// Only the queues whose names contain this text.
        #[arg(long, value_name = "TEXT")]
        filter: Option<String>,
        /// Empty queues too (the default).
        #[arg(long, overrides_with = "no_all")]
        all: bool,
        /// Only queues that hold something.
        #[arg(long)]
        no_all: bool,
    },
    /// Disconnects a client from a server at once (KICK).
    ///
    /// Example: rnats server request kick 12 NCXYZ...
    Kick {
        /// The client's connection ID.
        #[arg(value_name = "ID")]
        client: u64,
        /// The ID of the server the client is connected to.
        // Not `server`: that is the global `--server` URL's name.
        #[arg(value_name = "SERVER_ID")]
        server_id: String,
    },
}

/// Options of `server request connections`.
#[derive(Debug, Args)]
struct ConnectionsArgs {
    /// Answers to wait for (0 or none: one from each server a ping finds).
    wait: Option<usize>,
    /// Order of each server's connections.
    #[arg(long, value_enum, default_value_t = SortArg(ConnzSort::Cid))]
    sort: SortArg,
    /// Each connection's subscriptions too.
    #[arg(long)]
    subscriptions: bool,
    /// Only the connection with this ID.
    #[arg(long, value_name = "CID")]
    filter_cid: Option<u64>,
    /// Which connections: open, closed or all.
    #[arg(long, value_enum, default_value_t = StateArg(ConnState::Open))]
    filter_state: StateArg,
    /// Only connections of this user.
    #[arg(long, value_name = "USER")]
    filter_user: Option<String>,
    /// Only connections of this account.
    #[arg(long, value_name = "ACCOUNT")]
    filter_account: Option<String>,
    /// Only connections with interest in this subject.
    #[arg(long, value_name = "SUBJECT")]
    filter_subject: Option<String>,
    /// Leave out the answers of servers without connections.
    #[arg(long)]
    filter_empty: bool,
}

/// CONNZ's `sort` on the command line: the library's [`ConnzSort`], spelled as the server
/// takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct SortArg(ConnzSort);

impl ValueEnum for SortArg {
    fn value_variants<'a>() -> &'a [SortArg] {
        use ConnzSort::*;
        &[
            SortArg(Cid),
            SortArg(Start),
            SortArg(Subs),
            SortArg(Pending),
            SortArg(MsgsTo),
            SortArg(MsgsFrom),
            SortArg(BytesTo),
            SortArg(BytesFrom),
            SortArg(Last),
            SortArg(Idle),
            SortArg(Uptime),
            SortArg(Stop),
            SortArg(Reason),
            SortArg(Rtt),
        ]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let name = match self.0 {
            ConnzSort::Cid => "cid",
            ConnzSort::Start => "start",
            ConnzSort::Subs => "subs",
            ConnzSort::Pending => "pending",
            ConnzSort::MsgsTo => "msgs_to",
            ConnzSort::MsgsFrom => "msgs_from",
            ConnzSort::BytesTo => "bytes_to",
            ConnzSort::BytesFrom => "bytes_from",
            ConnzSort::Last => "last",
            ConnzSort::Idle => "idle",
            ConnzSort::Uptime => "uptime",
            ConnzSort::Stop => "stop",
            ConnzSort::Reason => "reason",
            ConnzSort::Rtt => "rtt",
            // A sort this version of the CLI does not offer.
            _ => return None,
        };
        Some(PossibleValue::new(name))
    }
}

/// CONNZ's `state` on the command line (here and in the connections report): the
/// library's [`ConnState`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StateArg(pub(crate) ConnState);

impl ValueEnum for StateArg {
    fn value_variants<'a>() -> &'a [StateArg] {
        &[
            StateArg(ConnState::Open),
            StateArg(ConnState::Closed),
            StateArg(ConnState::All),
        ]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(match self.0 {
            ConnState::Open => "open",
            ConnState::Closed => "closed",
            ConnState::All => "all",
            _ => return None,
        }))
    }
}

/// Options of `server request gateways`.
#[derive(Debug, Args)]
struct GatewaysArgs {
    /// Answers to wait for (0 or none: one from each server a ping finds).
    wait: Option<usize>,
    /// Only the gateway with this name.
    #[arg(value_name = "NAME")]
    filter_name: Option<String>,
    /// Each gateway's accounts too.
    #[arg(long)]
    accounts: bool,
    /// Only this account in the account details (implies --accounts).
    #[arg(long, value_name = "ACCOUNT")]
    filter_account: Option<String>,
    /// Leave out the subscriptions of the account named by --filter-account.
    #[arg(long)]
    no_subscriptions: bool,
}

/// Options of `server request jetstream`.
#[derive(Debug, Args)]
struct JetStreamArgs {
    /// Answers to wait for (0 or none: one from each server a ping finds).
    wait: Option<usize>,
    /// Only this account's usage.
    #[arg(long, value_name = "ACCOUNT")]
    account: Option<String>,
    /// Each account's usage.
    #[arg(long)]
    accounts: bool,
    /// Each stream.
    #[arg(long)]
    streams: bool,
    /// Each consumer.
    #[arg(long)]
    consumer: bool,
    /// The configuration of streams and consumers.
    #[arg(long)]
    config: bool,
    /// The RAFT groups of streams and consumers.
    #[arg(long)]
    raft: bool,
    /// Only the meta leader answers.
    #[arg(long)]
    leader: bool,
    /// Only stream leaders list their streams.
    #[arg(long)]
    stream_leader: bool,
    /// Accounts, streams, consumers, configuration and RAFT groups.
    #[arg(long)]
    all: bool,
}

/// Options of `server request jetstream-health`.
#[derive(Debug, Args)]
struct HealthArgs {
    /// Answers to wait for (0 or none: one from each server a ping finds).
    wait: Option<usize>,
    #[command(flatten)]
    checks: HealthChecks,
    /// Leave out the details of failures (included by default).
    #[arg(long)]
    no_details: bool,
}

/// One request: the endpoint, its options and how many answers to wait for.
struct Request {
    /// The endpoint's name in the subject (`VARZ`, ...).
    endpoint: &'static str,
    /// The endpoint's options; the server filter joins them.
    options: Map<String, Value>,
    /// Answers to wait for, when the command says (0 says nothing).
    wait: Option<usize>,
}

impl Kind {
    /// The request of this kind, with `filter`'s record window where the endpoint pages.
    fn request(&self, filter: &ServerFilter) -> Request {
        let mut options = Map::new();
        let (endpoint, wait) = match self {
            Kind::Subscriptions {
                wait,
                detail,
                filter_account,
                filter_subject,
            } => {
                window(&mut options, filter);
                options.insert("subscriptions".into(), json!(detail));
                put(&mut options, "account", filter_account.as_deref());
                put(&mut options, "test", filter_subject.as_deref());
                ("SUBSZ", *wait)
            }
            Kind::Variables { wait } => ("VARZ", *wait),
            Kind::Connections(args) => {
                window(&mut options, filter);
                connz_options(&mut options, args);
                ("CONNZ", args.wait)
            }
            Kind::Routes {
                wait,
                subscriptions,
            } => {
                options.insert("subscriptions".into(), json!(subscriptions));
                options.insert("subscriptions_detail".into(), json!(subscriptions));
                ("ROUTEZ", *wait)
            }
            Kind::Gateways(args) => {
                gatewayz_options(&mut options, args);
                ("GATEWAYZ", args.wait)
            }
            Kind::Leafnodes {
                wait,
                subscriptions,
            } => {
                options.insert("subscriptions".into(), json!(subscriptions));
                ("LEAFZ", *wait)
            }
            Kind::Accounts { wait, account } => {
                put(&mut options, "account", account.as_deref());
                ("ACCOUNTZ", *wait)
            }
            Kind::Jetstream(args) => {
                window(&mut options, filter);
                jsz_options(&mut options, args);
                // Only the meta leader answers: one answer is all there is.
                ("JSZ", count_given(args.wait).or(args.leader.then_some(1)))
            }
            Kind::JetstreamHealth(args) => {
                options.extend(args.checks.options(!args.no_details));
                ("HEALTHZ", args.wait)
            }
            Kind::Raft {
                wait,
                account,
                group,
            } => {
                put(&mut options, "account", account.as_deref());
                put(&mut options, "group", group.as_deref());
                ("RAFTZ", *wait)
            }
            Kind::Ipqueue {
                wait,
                filter,
                no_all,
                ..
            } => {
                options.insert("all".into(), json!(!no_all));
                put(&mut options, "filter", filter.as_deref());
                ("IPQUEUESZ", *wait)
            }
            Kind::Kick { client, .. } => {
                options.insert("cid".into(), json!(client));
                ("KICK", Some(1))
            }
        };
        Request {
            endpoint,
            options,
            wait: count_given(wait),
        }
    }
}

/// Runs `server request ...`: asks, then prints every answer, sorted by server name, as
/// indented JSON. An answer that carries an error is printed too, and fails the command.
pub(crate) async fn run(args: RequestArgs, conn: &ConnArgs) -> Result<(), CliError> {
    let request = args.kind.request(&args.filter);
    // Kick names its server: only that server's own subject reaches the client.
    let server_id = match &args.kind {
        Kind::Kick { server_id, .. } => Some(server_id.as_str()),
        _ => args.filter.server_id.as_deref(),
    };
    let subject = match server_id {
        Some(id) => format!("$SYS.REQ.SERVER.{}.{}", token(id)?, request.endpoint),
        None => format!("$SYS.REQ.SERVER.PING.{}", request.endpoint),
    };
    let (client, settings) = conn.connect().await?;
    let mut system = System::new(client).timeout(settings.timeout);
    if !matches!(args.kind, Kind::Kick { .. }) {
        // The census ping carries the same filter, so only the servers it selects are
        // waited for.
        system = system.filter(args.filter.server_filter(settings.js_domain()));
    }
    if let Some(id) = server_id {
        system = system.server(id);
    }
    // One server named: one answer is all there is to wait for.
    let expect = request.wait.or(args.filter.names_one().then_some(1));
    let gathered = (system.expect(expect.unwrap_or(0)))
        .gather(request.endpoint, Value::Object(request.options))
        .await
        .map_err(|e| system_failed(e, &subject, settings.timeout))?;
    let missing = Missing(gathered.missing);
    let mut answers = Answer::all_of(gathered.answers, DATA)?;
    if let Kind::Connections(connz) = &args.kind
        && connz.filter_empty
    {
        answers.retain(|a| a.stats["data"]["num_connections"].as_u64().unwrap_or(0) > 0);
    }
    answers.sort_by(|a, b| server_name(a).cmp(server_name(b)));
    let mut text = String::new();
    for answer in &answers {
        text.push_str(&serde_json::to_string_pretty(&answer.stats)?);
        text.push('\n');
    }
    out::print(&text)?;
    // On stderr: the answers on stdout are JSON.
    missing.tell();
    first_error(&answers, &subject)
}

/// The name of the server that gave `answer`.
fn server_name(answer: &Answer) -> &str {
    answer.stats["server"]["name"].as_str().unwrap_or_default()
}

/// A server ID as one subject token: no dots, wildcards or spaces.
fn token(id: &str) -> Result<&str, CliError> {
    let bad = |c: char| c == '.' || c == '*' || c == '>' || c.is_whitespace();
    if id.is_empty() || id.contains(bad) {
        return Err(CliError::InvalidArgument {
            what: "server ID",
            given: id.to_owned(),
            reason: "a server ID is one subject token (see `rnats server ping --id`)".into(),
        });
    }
    Ok(id)
}

/// Sets `key` to `value` when there is one.
fn put(body: &mut Map<String, Value>, key: &str, value: Option<&str>) {
    if let Some(value) = value {
        body.insert(key.into(), json!(value));
    }
}

/// The record window (`offset`, `limit`) of the endpoints that page.
fn window(options: &mut Map<String, Value>, filter: &ServerFilter) {
    options.insert("offset".into(), json!(filter.offset));
    options.insert("limit".into(), json!(filter.limit));
}

/// CONNZ's options (nats-server's `ConnzOptions`).
fn connz_options(options: &mut Map<String, Value>, args: &ConnectionsArgs) {
    options.insert("sort".into(), json!(args.sort.0));
    // User names, as natscli always asks for them.
    options.insert("auth".into(), json!(true));
    options.insert("subscriptions".into(), json!(args.subscriptions));
    options.insert("subscriptions_detail".into(), json!(args.subscriptions));
    options.insert("state".into(), json!(args.filter_state.0));
    if let Some(cid) = args.filter_cid {
        options.insert("cid".into(), json!(cid));
    }
    put(options, "user", args.filter_user.as_deref());
    put(options, "acc", args.filter_account.as_deref());
    put(options, "filter_subject", args.filter_subject.as_deref());
}

/// GATEWAYZ's options (nats-server's `GatewayzOptions`).
fn gatewayz_options(options: &mut Map<String, Value>, args: &GatewaysArgs) {
    put(options, "name", args.filter_name.as_deref());
    let accounts = args.accounts || args.filter_account.is_some();
    options.insert("accounts".into(), json!(accounts));
    if let Some(account) = &args.filter_account {
        options.insert("account_name".into(), json!(account));
        options.insert("subscriptions".into(), json!(!args.no_subscriptions));
        options.insert("subscriptions_detail".into(), json!(!args.no_subscriptions));
    }
}

/// JSZ's options (nats-server's `JSzOptions`).
fn jsz_options(options: &mut Map<String, Value>, args: &JetStreamArgs) {
    put(options, "account", args.account.as_deref());
    for (key, on) in [
        ("accounts", args.accounts),
        ("streams", args.streams),
        ("consumer", args.consumer),
        ("config", args.config),
        ("raft", args.raft),
    ] {
        options.insert(key.into(), json!(on || args.all));
    }
    options.insert("leader_only".into(), json!(args.leader));
    options.insert("stream_leader_only".into(), json!(args.stream_leader));
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    /// `server request` alone, to parse its flags.
    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        request: RequestArgs,
    }

    fn body(args: &[&str]) -> Value {
        let cli = Cli::try_parse_from([&["request"][..], args].concat()).expect("parses");
        let mut request = cli.request.kind.request(&cli.request.filter);
        let filter = serde_json::to_value(cli.request.filter.server_filter(None));
        let Ok(Value::Object(filter)) = filter else {
            panic!("a filter is an object: {filter:?}");
        };
        request.options.extend(filter);
        Value::Object(request.options)
    }

    #[test]
    fn connections_take_natscli_filters_after_the_kind() {
        let body = body(&[
            "conn",
            "--sort",
            "msgs_to",
            "--filter-state",
            "all",
            "--filter-account",
            "APP",
            "--name",
            "n1",
            "--limit",
            "5",
        ]);
        assert_eq!(body["sort"], "msgs_to");
        assert_eq!(body["state"], 2);
        assert_eq!(body["acc"], "APP");
        assert_eq!(body["server_name"], "n1");
        assert_eq!(body["exact_match"], true);
        assert_eq!(
            (body["limit"].as_u64(), body["offset"].as_u64()),
            (Some(5), Some(0))
        );
    }

    #[test]
    fn healthz_and_jsz_options_are_spelled_as_the_server_reads_them() {
        let health = body(&["healthz", "-J", "--no-details", "--tags", "a,b"]);
        assert_eq!(health["js-enabled-only"], true);
        assert_eq!(health["js-server-only"], false);
        assert_eq!(health["details"], false);
        assert_eq!(health["tags"], json!(["a", "b"]));
        let jsz = body(&["jsz", "--all", "--leader"]);
        for key in [
            "accounts",
            "streams",
            "consumer",
            "config",
            "raft",
            "leader_only",
        ] {
            assert_eq!(jsz[key], true, "{key}: {jsz}");
        }
    }

    #[test]
    fn a_server_id_is_one_token() {
        assert!(token("NABC").is_ok());
        for bad in ["", "a.b", "*", ">", "a b"] {
            assert!(token(bad).is_err(), "{bad:?}");
        }
    }
}
