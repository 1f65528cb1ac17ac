//! The command line of the `scale` bench:
//! `cargo bench -p rnats-bench --bench scale -- [--quick] [--rounds N] [--points N,...]
//! [--clients NAME,...] [--server URL] [--json PATH] [--svg-dir DIR] [AXIS...]`.

use std::fmt;
use std::path::PathBuf;

use super::Axis;

/// Usage text for `--help` and errors.
pub const USAGE: &str = "\
usage: cargo bench -p rnats-bench --bench scale -- [--quick] [--rounds N] [--points N,...] \
[--clients rnats,async-nats,rnats-blocking] [--server URL] [--json PATH] [--svg-dir DIR] [AXIS...]
quick: the smallest point of each axis only (CI)
rounds: measure every point N times (clients taking turns) and report each figure's median
points: these points instead of the axis' own (say 1000000 keys, once, outside CI)
clients: rnats-blocking runs where the blocking client applies (subs requests connections headers)
svg-dir: write AXIS.svg there for each axis run (docs/scale)
axes: subs requests servers connections headers kv-keys objects (default: all)";

/// The clients the scale bench knows.
pub const CLIENTS: [&str; 3] = ["rnats", "async-nats", "rnats-blocking"];

/// What a run of the scale bench should do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScaleArgs {
    /// The smallest point of each axis only.
    pub quick: bool,
    /// Runs of every point per client; each figure reported is their median.
    pub rounds: usize,
    /// Points to run instead of each axis' own.
    pub points: Option<Vec<usize>>,
    /// Client names, in column order.
    pub clients: Vec<&'static str>,
    /// Use this server instead of starting one.
    pub server: Option<String>,
    /// Write the raw points of every axis here, as one JSON array.
    pub json: Option<PathBuf>,
    /// Write `AXIS.svg` here for every axis.
    pub svg_dir: Option<PathBuf>,
    /// Axes in the order given (all when none was named).
    pub axes: Vec<Axis>,
    /// `--bench` was given (as `cargo bench` does; `cargo test` runs the binary without it).
    pub bench: bool,
    /// Print usage and exit.
    pub help: bool,
}

/// Why the command line was rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ScaleArgsError {
    /// A flag that takes a value came last.
    MissingValue(&'static str),
    /// A bare word that names no axis.
    UnknownAxis(String),
    /// `--clients` named an unknown client, or none.
    BadClients(String),
    /// `--rounds` or `--points` is not a positive number, or a list of them.
    BadNumber(&'static str, String),
    /// A flag this bench does not know.
    UnknownFlag(String),
}

impl fmt::Display for ScaleArgsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScaleArgsError::MissingValue(flag) => write!(f, "{flag} needs a value"),
            ScaleArgsError::UnknownAxis(name) => write!(f, "unknown axis {name:?}"),
            ScaleArgsError::BadClients(value) => write!(
                f,
                "--clients wants a comma-separated list from {}, not {value:?}",
                CLIENTS.join(",")
            ),
            ScaleArgsError::UnknownFlag(flag) => write!(f, "unknown flag {flag:?}"),
            ScaleArgsError::BadNumber(flag, value) => {
                write!(f, "{flag} wants positive numbers, not {value:?}")
            }
        }
    }
}

impl std::error::Error for ScaleArgsError {}

impl ScaleArgs {
    /// Parses the arguments after the program name.
    pub fn parse(args: impl IntoIterator<Item = String>) -> Result<ScaleArgs, ScaleArgsError> {
        let mut parsed = ScaleArgs {
            quick: false,
            rounds: 1,
            points: None,
            clients: CLIENTS.to_vec(),
            server: None,
            json: None,
            svg_dir: None,
            axes: Vec::new(),
            bench: false,
            help: false,
        };
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            let (flag, inline) = crate::args::split_flag(&arg);
            let mut value = |name: &'static str| match &inline {
                Some(v) => Ok(v.clone()),
                None => args.next().ok_or(ScaleArgsError::MissingValue(name)),
            };
            match flag {
                "--quick" => parsed.quick = true,
                "--bench" => parsed.bench = true,
                "-h" | "--help" => parsed.help = true,
                "--server" => parsed.server = Some(value("--server")?),
                "--json" => parsed.json = Some(value("--json")?.into()),
                "--rounds" => {
                    let raw = value("--rounds")?;
                    parsed.rounds = match raw.parse() {
                        Ok(n) if n > 0 => n,
                        _ => return Err(ScaleArgsError::BadNumber("--rounds", raw)),
                    };
                }
                "--points" => {
                    let raw = value("--points")?;
                    let points: Result<Vec<usize>, _> =
                        raw.split(',').map(|n| n.trim().parse()).collect();
                    parsed.points = match points {
                        Ok(mut p) if !p.is_empty() => {
                            p.sort_unstable();
                            p.dedup();
                            Some(p)
                        }
                        _ => return Err(ScaleArgsError::BadNumber("--points", raw)),
                    };
                }
                "--svg-dir" => parsed.svg_dir = Some(value("--svg-dir")?.into()),
                "--clients" => {
                    let raw = value("--clients")?;
                    let clients: Option<Vec<&'static str>> = raw
                        .split(',')
                        .map(|name| CLIENTS.into_iter().find(|c| *c == name))
                        .collect();
                    parsed.clients = match clients {
                        Some(c) if !c.is_empty() => c,
                        _ => return Err(ScaleArgsError::BadClients(raw)),
                    };
                }
                other if other.starts_with('-') => {
                    return Err(ScaleArgsError::UnknownFlag(other.to_owned()));
                }
                name => parsed.axes.push(
                    Axis::from_name(name)
                        .ok_or_else(|| ScaleArgsError::UnknownAxis(name.into()))?,
                ),
            }
        }
        if parsed.axes.is_empty() {
            parsed.axes = Axis::ALL.to_vec();
        }
        Ok(parsed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<ScaleArgs, ScaleArgsError> {
        ScaleArgs::parse(args.iter().map(|s| s.to_string()))
    }

    #[test]
    fn defaults_run_every_axis_with_every_client() {
        let args = parse(&["--bench"]).unwrap();
        assert!(args.bench && !args.quick);
        assert_eq!((args.rounds, args.points.clone()), (1, None));
        assert_eq!(args.axes, Axis::ALL.to_vec());
        assert_eq!(args.clients, vec!["rnats", "async-nats", "rnats-blocking"]);
    }

    #[test]
    fn reads_flags_and_axes_in_order() {
        let args = parse(&[
            "--quick",
            "--rounds",
            "3",
            "--points=1000000,1000",
            "--clients=async-nats,rnats-blocking",
            "--json",
            "out.json",
            "--svg-dir",
            "docs/scale",
            "--server",
            "nats://127.0.0.1:4222",
            "requests",
            "subs",
        ])
        .unwrap();
        assert!(args.quick);
        assert_eq!(args.rounds, 3);
        assert_eq!(args.points, Some(vec![1000, 1_000_000]));
        assert_eq!(args.clients, vec!["async-nats", "rnats-blocking"]);
        assert_eq!(args.json, Some(PathBuf::from("out.json")));
        assert_eq!(args.svg_dir, Some(PathBuf::from("docs/scale")));
        assert_eq!(args.server.as_deref(), Some("nats://127.0.0.1:4222"));
        assert_eq!(args.axes, vec![Axis::Requests, Axis::Subs]);
    }

    #[test]
    fn rejects_what_it_does_not_know() {
        assert_eq!(
            parse(&["bogus"]),
            Err(ScaleArgsError::UnknownAxis("bogus".into()))
        );
        assert_eq!(
            parse(&["--clients", "raw"]),
            Err(ScaleArgsError::BadClients("raw".into()))
        );
        assert_eq!(
            parse(&["--json"]),
            Err(ScaleArgsError::MissingValue("--json"))
        );
        assert_eq!(
            parse(&["--rounds", "0"]),
            Err(ScaleArgsError::BadNumber("--rounds", "0".into()))
        );
        assert_eq!(
            parse(&["--points", "1,x"]),
            Err(ScaleArgsError::BadNumber("--points", "1,x".into()))
        );
        assert_eq!(
            parse(&["--fast"]),
            Err(ScaleArgsError::UnknownFlag("--fast".into()))
        );
    }
}
