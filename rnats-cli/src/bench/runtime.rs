//! `--runtime`: which tokio runtime a benchmark's clients run on.

use clap::ValueEnum;
use serde::Serialize;

use crate::error::CliError;

/// The tokio runtime flavour of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum RuntimeFlavor {
    /// Every task on the one thread that runs the benchmark: no cross-thread wake-ups.
    CurrentThread,
    /// A worker thread per core, as `#[tokio::main]` gives.
    #[default]
    MultiThread,
}

impl RuntimeFlavor {
    /// The name used on the command line and in the report.
    pub(crate) fn name(self) -> &'static str {
        match self {
            RuntimeFlavor::CurrentThread => "current-thread",
            RuntimeFlavor::MultiThread => "multi-thread",
        }
    }

    /// Builds a runtime of this flavour with I/O and timers enabled.
    pub(crate) fn build(self) -> Result<tokio::runtime::Runtime, CliError> {
        let mut builder = match self {
            RuntimeFlavor::CurrentThread => tokio::runtime::Builder::new_current_thread(),
            RuntimeFlavor::MultiThread => tokio::runtime::Builder::new_multi_thread(),
        };
        builder.enable_all().build().map_err(CliError::Runtime)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_the_command_line() {
        for flavor in RuntimeFlavor::value_variants() {
            let possible = flavor.to_possible_value().expect("not skipped");
            assert_eq!(possible.get_name(), flavor.name());
        }
        assert_eq!(RuntimeFlavor::default(), RuntimeFlavor::MultiThread);
    }

    #[test]
    fn both_flavours_build_and_run() {
        for flavor in RuntimeFlavor::value_variants() {
            let runtime = flavor.build().expect("runtime");
            assert_eq!(runtime.block_on(async { 1 + 1 }), 2);
        }
    }
}
