//! The command line of the `compare` bench.
//!
//! `compare [--quick] [--rounds R] [--runtime current-thread|multi-thread]
//! [--clients NAME,...] [--server URL] [--json PATH] [SCENARIO...]`. Flags this harness does
//! not know are collected and ignored.
//!
//! `cargo bench` passes `--bench` to the binary and `cargo test --all-targets` runs the same
//! binary without it; [`Args::bench`] tells the two apart so a test run does not start a
//! benchmark.

use std::fmt;
use std::path::PathBuf;

use crate::scenario::{ClientKind, Runtime, Scenario, Shape};

/// Rounds when `--rounds` is not given.
pub const DEFAULT_ROUNDS: usize = 5;

/// Usage text for `--help` and errors.
pub const USAGE: &str = "\
usage: cargo bench -p rnats-bench --bench compare -- \
[--quick] [--rounds R] [--runtime current-thread|multi-thread] [--shape block-on|spawn] [--linger-ms MS] \
[--clients rnats,async-nats,rnats-neutral,rnats-blocking,raw-tokio,raw] [--server URL [--server-pid PID]] [--json PATH] [SCENARIO...]
runtime: the tokio runtime of the async clients (default multi-thread, as #[tokio::main])
shape: where the async clients' code runs: block-on (default, as in #[tokio::main]) or spawn (a task)
linger-ms: rnats (async) connects with ConnectOptions::linger(MS milliseconds, 1 MiB); the others have no such option
server-pid: the process of the --server, to report its CPU per operation (a server the bench starts is known)
clients: which clients to run (default all; rnats-neutral, rnats-blocking, raw-tokio and raw run the Core scenarios only)
scenarios: pub32 pub1k pub8k sub32 sub1k sub8k req lat lat-idle mem js-pub32 js-pub1k \
js-pipe32 js-pipe1k js-fetch kv-put kv-put16 kv-get kv-get16 obj-put obj-get (default: all)";

/// What a run of the harness should do.
#[derive(Debug, Clone, PartialEq)]
pub struct Args {
    /// About 1/50 of the full sizes: a smoke test.
    pub quick: bool,
    /// Rounds per scenario; each round runs every client once.
    pub rounds: usize,
    /// The tokio runtime the async clients run on.
    pub runtime: Runtime,
    /// Where the async clients' code runs.
    pub shape: Shape,
    /// The async rnats client connects with this linger delay (`ConnectOptions::linger`).
    pub linger_ms: Option<u64>,
    /// The clients to run, in column order (every client unless `--clients` chose fewer).
    pub clients: Vec<ClientKind>,
    /// Use this server instead of starting one.
    pub server: Option<String>,
    /// The process of `server`, whose CPU time each run then reports.
    pub server_pid: Option<u32>,
    /// Also write the results as JSON here.
    pub json: Option<PathBuf>,
    /// Scenarios to run, in the order given (every scenario when none was named).
    pub scenarios: Vec<Scenario>,
    /// Print usage and exit.
    pub help: bool,
    /// `--bench` was given: the binary runs under `cargo bench`, not `cargo test`.
    pub bench: bool,
    /// Set in the child processes of the `mem` scenario; not for people.
    pub mem_child: Option<MemChild>,
    /// Flags that were not understood and are being ignored.
    pub ignored: Vec<String>,
}

/// A `mem` child process: which client, and which probe to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemChild {
    /// The client measured.
    pub client: ClientKind,
    /// The probe.
    pub probe: MemProbe,
}

/// The two memory probes, each in its own process so one cannot raise the other's numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemProbe {
    /// Peak RSS while publishing as fast as possible.
    Publish,
    /// Peak RSS while publishing a burst of large (8 KiB) messages as fast as possible.
    PublishLarge,
    /// RSS growth from idle subscriptions.
    IdleSubs,
    /// Peak RSS while publishing to JetStream with acks pipelined and left unawaited.
    JsPublish,
}

impl MemProbe {
    /// The name used on the child's command line.
    pub fn name(self) -> &'static str {
        match self {
            MemProbe::Publish => "publish",
            MemProbe::PublishLarge => "publish-large",
            MemProbe::IdleSubs => "idle-subs",
            MemProbe::JsPublish => "js-publish",
        }
    }

    fn from_name(name: &str) -> Option<MemProbe> {
        [
            MemProbe::Publish,
            MemProbe::PublishLarge,
            MemProbe::IdleSubs,
            MemProbe::JsPublish,
        ]
        .into_iter()
        .find(|p| p.name() == name)
    }
}

/// Why the command line was rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ArgsError {
    /// A flag that takes a value came last.
    MissingValue(&'static str),
    /// `--rounds` was not a positive integer.
    BadRounds(String),
    /// A bare word that names no scenario.
    UnknownScenario(String),
    /// `--mem-child` named no client or probe.
    BadMemChild(String),
    /// `--runtime` named no runtime.
    BadRuntime(String),
    /// `--shape` named no shape.
    BadShape(String),
    /// `--linger-ms` was not a positive number of milliseconds.
    BadLinger(String),
    /// `--server-pid` was not a process id.
    BadServerPid(String),
    /// `--clients` named a client that does not exist, or none.
    BadClients(String),
}

impl fmt::Display for ArgsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArgsError::MissingValue(flag) => write!(f, "{flag} needs a value"),
            ArgsError::BadRounds(value) => {
                write!(f, "--rounds wants a positive integer, not {value:?}")
            }
            ArgsError::UnknownScenario(name) => write!(f, "unknown scenario {name:?}"),
            ArgsError::BadMemChild(value) => write!(f, "bad --mem-child value {value:?}"),
            ArgsError::BadRuntime(value) => write!(
                f,
                "--runtime wants current-thread or multi-thread, not {value:?}"
            ),
            ArgsError::BadShape(value) => {
                write!(f, "--shape wants block-on or spawn, not {value:?}")
            }
            ArgsError::BadLinger(value) => {
                write!(
                    f,
                    "--linger-ms wants a positive number of milliseconds, not {value:?}"
                )
            }
            ArgsError::BadServerPid(value) => {
                write!(f, "--server-pid wants a process id, not {value:?}")
            }
            ArgsError::BadClients(value) => {
                let names: Vec<&str> = ClientKind::ALL.iter().map(|c| c.name()).collect();
                write!(
                    f,
                    "--clients wants a comma-separated list from {}, not {value:?}",
                    names.join(",")
                )
            }
        }
    }
}

impl std::error::Error for ArgsError {}

impl Args {
    /// Parses the arguments after the program name.
    pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Args, ArgsError> {
        let mut parsed = Args {
            quick: false,
            rounds: DEFAULT_ROUNDS,
            runtime: Runtime::default(),
            shape: Shape::default(),
            linger_ms: None,
            clients: ClientKind::ALL.to_vec(),
            server: None,
            server_pid: None,
            json: None,
            scenarios: Vec::new(),
            help: false,
            bench: false,
            mem_child: None,
            ignored: Vec::new(),
        };
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            let (flag, inline) = split_flag(&arg);
            let mut value = |name: &'static str| match &inline {
                Some(v) => Ok(v.clone()),
                None => args.next().ok_or(ArgsError::MissingValue(name)),
            };
            match flag {
                "--quick" => parsed.quick = true,
                "--bench" => parsed.bench = true,
                "-h" | "--help" => parsed.help = true,
                "--rounds" => {
                    let raw = value("--rounds")?;
                    parsed.rounds = match raw.parse::<usize>() {
                        Ok(n) if n > 0 => n,
                        _ => return Err(ArgsError::BadRounds(raw)),
                    };
                }
                "--runtime" => {
                    let raw = value("--runtime")?;
                    parsed.runtime = Runtime::from_name(&raw).ok_or(ArgsError::BadRuntime(raw))?;
                }
                "--shape" => {
                    let raw = value("--shape")?;
                    parsed.shape = Shape::from_name(&raw).ok_or(ArgsError::BadShape(raw))?;
                }
                "--linger-ms" => {
                    let raw = value("--linger-ms")?;
                    parsed.linger_ms = match raw.parse::<u64>() {
                        Ok(ms) if ms > 0 => Some(ms),
                        _ => return Err(ArgsError::BadLinger(raw)),
                    };
                }
                "--clients" => parsed.clients = parse_clients(&value("--clients")?)?,
                "--server" => parsed.server = Some(value("--server")?),
                "--server-pid" => {
                    let raw = value("--server-pid")?;
                    parsed.server_pid = match raw.parse::<u32>() {
                        Ok(pid) if pid > 0 => Some(pid),
                        _ => return Err(ArgsError::BadServerPid(raw)),
                    };
                }
                "--json" => parsed.json = Some(PathBuf::from(value("--json")?)),
                "--mem-child" => {
                    let client = value("--mem-child")?;
                    let probe = args.next().ok_or(ArgsError::MissingValue("--mem-child"))?;
                    parsed.mem_child = Some(MemChild {
                        client: ClientKind::from_name(&client)
                            .ok_or_else(|| ArgsError::BadMemChild(client.clone()))?,
                        probe: MemProbe::from_name(&probe).ok_or(ArgsError::BadMemChild(probe))?,
                    });
                }
                "all" => parsed.scenarios.extend(Scenario::ALL),
                _ if flag.starts_with('-') => parsed.ignored.push(arg.clone()),
                name => {
                    let scenario = Scenario::from_name(name)
                        .ok_or_else(|| ArgsError::UnknownScenario(name.to_owned()))?;
                    parsed.scenarios.push(scenario);
                }
            }
        }
        if parsed.scenarios.is_empty() {
            parsed.scenarios.extend(Scenario::ALL);
        }
        // Naming a scenario twice runs it once.
        let mut seen = Vec::new();
        parsed.scenarios.retain(|s| {
            let first = !seen.contains(s);
            seen.push(*s);
            first
        });
        Ok(parsed)
    }

    /// The arguments that make a child process run `probe` for `client` with this run's sizes
    /// against `server`.
    pub fn mem_child_args(&self, server: &str, client: ClientKind, probe: MemProbe) -> Vec<String> {
        let mut args = vec![
            "--mem-child".to_owned(),
            client.name().to_owned(),
            probe.name().to_owned(),
            "--server".to_owned(),
            server.to_owned(),
        ];
        if self.quick {
            args.push("--quick".to_owned());
        }
        args.extend(["--runtime".to_owned(), self.runtime.name().to_owned()]);
        args
    }
}

/// `--flag=value` -> (`--flag`, `Some("value")`); anything else is a flag or word on its own.
/// Both of the bench's command lines accept `--flag=value` as well as `--flag value`.
pub(crate) fn split_flag(arg: &str) -> (&str, Option<String>) {
    match arg.split_once('=') {
        Some((flag, value)) if flag.starts_with("--") => (flag, Some(value.to_owned())),
        _ => (arg, None),
    }
}

/// `rnats,raw` -> those clients, in [`ClientKind::ALL`] order (the table's column order),
/// each once.
fn parse_clients(list: &str) -> Result<Vec<ClientKind>, ArgsError> {
    let mut named = Vec::new();
    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        named.push(ClientKind::from_name(name).ok_or_else(|| ArgsError::BadClients(list.into()))?);
    }
    if named.is_empty() {
        return Err(ArgsError::BadClients(list.into()));
    }
    Ok(ClientKind::ALL
        .into_iter()
        .filter(|c| named.contains(c))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::PayloadSize;

    fn parse(args: &[&str]) -> Result<Args, ArgsError> {
        Args::parse(args.iter().map(|s| s.to_string()))
    }

    #[test]
    fn defaults_run_everything() {
        let args = parse(&[]).expect("parses");
        assert!(!args.quick);
        assert!(!args.bench);
        assert_eq!(args.rounds, DEFAULT_ROUNDS);
        assert_eq!(args.server, None);
        assert_eq!(args.scenarios, Scenario::ALL.to_vec());
        assert_eq!(args.mem_child, None);
        assert_eq!(args.runtime, Runtime::MultiThread);
        assert_eq!(args.shape, Shape::BlockOn);
        assert_eq!(args.clients, ClientKind::ALL.to_vec());
    }

    #[test]
    fn linger() {
        assert_eq!(parse(&[]).unwrap().linger_ms, None);
        assert_eq!(parse(&["--linger-ms", "10"]).unwrap().linger_ms, Some(10));
        assert_eq!(
            parse(&["--linger-ms=0"]),
            Err(ArgsError::BadLinger("0".into()))
        );
        assert_eq!(
            parse(&["--linger-ms", "soon"]),
            Err(ArgsError::BadLinger("soon".into()))
        );
    }

    #[test]
    fn server_pid() {
        assert_eq!(parse(&[]).unwrap().server_pid, None);
        let args = parse(&["--server", "nats://127.0.0.1:4222", "--server-pid=4321"]).unwrap();
        assert_eq!(args.server_pid, Some(4321));
        for bad in ["0", "-3", "server"] {
            assert_eq!(
                parse(&["--server-pid", bad]),
                Err(ArgsError::BadServerPid(bad.into()))
            );
        }
    }

    #[test]
    fn shapes() {
        assert_eq!(parse(&["--shape", "spawn"]).unwrap().shape, Shape::Spawn);
        assert_eq!(parse(&["--shape=block-on"]).unwrap().shape, Shape::BlockOn);
        assert_eq!(
            parse(&["--shape", "thread"]),
            Err(ArgsError::BadShape("thread".into()))
        );
    }

    #[test]
    fn runtime_and_clients() {
        let args = parse(&["--runtime", "current-thread", "--clients=raw,rnats"]).expect("parses");
        assert_eq!(args.runtime, Runtime::CurrentThread);
        assert_eq!(args.clients, vec![ClientKind::Rnats, ClientKind::Raw]);
        let args = parse(&["--runtime=multi-thread", "--clients", "async-nats"]).expect("parses");
        assert_eq!(args.runtime, Runtime::MultiThread);
        assert_eq!(args.clients, vec![ClientKind::AsyncNats]);
        assert_eq!(
            parse(&["--runtime", "single"]),
            Err(ArgsError::BadRuntime("single".into()))
        );
        assert_eq!(
            parse(&["--clients", "rnats,nats.go"]),
            Err(ArgsError::BadClients("rnats,nats.go".into()))
        );
        assert_eq!(
            parse(&["--clients", ","]),
            Err(ArgsError::BadClients(",".into()))
        );
        assert_eq!(
            parse(&["--runtime"]),
            Err(ArgsError::MissingValue("--runtime"))
        );
    }

    #[test]
    fn flags_and_scenarios() {
        let args = parse(&[
            "--bench",
            "--quick",
            "--nocapture",
            "--rounds",
            "3",
            "--server=nats://127.0.0.1:4222",
            "req",
            "pub8k",
            "--json",
            "out.json",
            "req",
        ])
        .expect("parses");
        assert!(args.quick);
        assert_eq!(args.rounds, 3);
        assert_eq!(args.server.as_deref(), Some("nats://127.0.0.1:4222"));
        assert_eq!(args.json, Some(PathBuf::from("out.json")));
        assert_eq!(
            args.scenarios,
            vec![Scenario::Req, Scenario::Pub(PayloadSize::K8)]
        );
        assert!(args.bench);
        assert_eq!(args.ignored, vec!["--nocapture".to_owned()]);
    }

    #[test]
    fn rejects_bad_input() {
        assert_eq!(
            parse(&["--rounds", "0"]),
            Err(ArgsError::BadRounds("0".into()))
        );
        assert_eq!(
            parse(&["--rounds", "x"]),
            Err(ArgsError::BadRounds("x".into()))
        );
        assert_eq!(
            parse(&["--rounds"]),
            Err(ArgsError::MissingValue("--rounds"))
        );
        assert_eq!(
            parse(&["pub64"]),
            Err(ArgsError::UnknownScenario("pub64".into()))
        );
        assert!(matches!(
            parse(&["--mem-child", "nats.go", "publish"]),
            Err(ArgsError::BadMemChild(_))
        ));
    }

    #[test]
    fn mem_child_round_trip() {
        let parent = parse(&["--quick", "--runtime", "current-thread", "mem"]).expect("parses");
        let child_args = parent.mem_child_args(
            "nats://127.0.0.1:1234",
            ClientKind::AsyncNats,
            MemProbe::IdleSubs,
        );
        let child = Args::parse(child_args).expect("child parses");
        assert_eq!(
            child.mem_child,
            Some(MemChild {
                client: ClientKind::AsyncNats,
                probe: MemProbe::IdleSubs
            })
        );
        assert!(child.quick);
        assert_eq!(child.runtime, Runtime::CurrentThread);
        assert_eq!(child.server.as_deref(), Some("nats://127.0.0.1:1234"));
    }
}
