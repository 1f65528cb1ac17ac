//! `rnats bench scale AXIS`: how a cost grows along one axis, with rnats alone. The probes
//! are rnats-bench's ([`rnats_bench::scale`]), the same code the side-by-side
//! `cargo bench -p rnats-bench --bench scale` runs for rnats and async-nats.
//!
//! The `rnats` binary does not count its heap allocations, so memory figures here are
//! resident memory (RSS); the bench's are live heap bytes and the more exact of the two.

use rnats_bench::scale::{Axis, rnats_side, svg, to_json, to_markdown};

use super::args::{BenchFlags, ScaleArgs};
use super::target::Target;
use crate::conn::ConnArgs;
use crate::error::CliError;

/// Parses the AXIS argument.
pub(super) fn parse_axis(text: &str) -> Result<Axis, String> {
    Axis::from_name(text).ok_or_else(|| {
        let names: Vec<&str> = Axis::ALL.iter().map(|a| a.name()).collect();
        format!("unknown axis {text:?}; one of {}", names.join(", "))
    })
}

/// Runs `axis` against the server `conn` names (a private JetStream-enabled nats-server when
/// it names none; only its URL is used) and
/// prints the table, or the JSON with `--json`; `--svg` also draws the chart.
pub(super) fn run(flags: &BenchFlags, args: &ScaleArgs, conn: &ConnArgs) -> Result<(), CliError> {
    let axis = args.axis;
    let target = Target::resolve(conn, true)?;
    let url = target.url();
    let runtime = flags.runtime.build()?;
    let points = axis.plan(args.smallest);
    if !flags.json {
        eprintln!("scale {axis}: points {points:?} against {url}");
    }
    let curve = runtime.block_on(rnats_side::run_axis(axis, &url, points));
    // Stop every connection task before the private server (dropped after us) goes away.
    drop(runtime);
    let curves = [curve];
    if let Some(path) = &args.svg {
        let chart = svg::chart(axis, &curves).map_err(|e| CliError::Plot(e.to_string()))?;
        std::fs::write(path, chart).map_err(|source| CliError::WriteFile {
            path: path.clone(),
            source,
        })?;
    }
    if flags.json {
        println!("{}", serde_json::to_string(&to_json(axis, &curves))?);
    } else {
        println!("{}", to_markdown(axis, &curves));
    }
    let failed = curves[0].points.iter().any(|(_, r)| r.is_err());
    if failed {
        return Err(CliError::Usage(
            "invalid run: some points failed (see FAILED under the table)",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_parse_by_name() {
        assert_eq!(parse_axis("subs"), Ok(Axis::Subs));
        assert_eq!(parse_axis("kv-keys"), Ok(Axis::KvKeys));
        let err = parse_axis("bogus").unwrap_err();
        assert!(err.contains("bogus") && err.contains("objects"), "{err}");
    }
}
