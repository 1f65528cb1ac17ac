//! `consumer add --backoff`: natscli's generated redelivery back-off, the delays the server
//! waits before each redelivery of an unacknowledged message.

use std::time::Duration;

use clap::{Args, ValueEnum};

use crate::conn::parse_duration;
use crate::error::CliError;

/// natscli's back-off flags.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Consumer settings")]
pub(super) struct BackoffFlags {
    /// Redeliver after growing delays: `linear` spreads --backoff-steps delays evenly from
    /// --backoff-min to --backoff-max; `none` removes a back-off.
    #[arg(long, value_enum, value_name = "MODE")]
    backoff: Option<Mode>,
    /// How many delays `linear` makes.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    backoff_steps: u32,
    /// The first (shortest) delay.
    #[arg(long, value_name = "DURATION", default_value = "1m", value_parser = parse_duration)]
    backoff_min: Duration,
    /// The last (longest) delay.
    #[arg(long, value_name = "DURATION", default_value = "20m", value_parser = parse_duration)]
    backoff_max: Duration,
}

/// `--backoff`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Mode {
    Linear,
    None,
}

impl BackoffFlags {
    /// The delays to set, or `None` to leave the config's as they are.
    pub(super) fn delays(&self) -> Result<Option<Vec<Duration>>, CliError> {
        match self.backoff {
            None => Ok(None),
            Some(Mode::None) => Ok(Some(Vec::new())),
            Some(Mode::Linear) => {
                linear(self.backoff_steps, self.backoff_min, self.backoff_max).map(Some)
            }
        }
    }
}

/// The most delays `--backoff-steps` makes. The server refuses a back-off longer than the
/// consumer's max_deliver, and a message redelivered more than a few thousand times is
/// nobody's plan; the cap keeps a typo such as 4294967295 from building a list of 64 GiB
/// before the server ever sees it.
const MAX_STEPS: u32 = 10_000;

/// `steps` delays from `min` to `max`, evenly apart (one step: `min` alone).
fn linear(steps: u32, min: Duration, max: Duration) -> Result<Vec<Duration>, CliError> {
    if min.is_zero() || max < min {
        return Err(CliError::InvalidArgument {
            what: "--backoff-min/--backoff-max",
            given: format!("{min:?}/{max:?}"),
            reason: "the shortest delay must be above zero and at most the longest".to_owned(),
        });
    }
    if steps > MAX_STEPS {
        return Err(CliError::InvalidArgument {
            what: "--backoff-steps",
            given: steps.to_string(),
            reason: format!("at most {MAX_STEPS} delays are made"),
        });
    }
    if steps == 1 {
        return Ok(vec![min]);
    }
    let gap = (max - min) / (steps - 1);
    Ok((0..steps).map(|i| min + gap * i).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_spreads_the_steps_from_min_to_max() {
        let s = Duration::from_secs;
        assert_eq!(
            linear(5, s(60), s(300)).expect("valid"),
            [s(60), s(120), s(180), s(240), s(300)]
        );
        assert_eq!(linear(1, s(60), s(300)).expect("valid"), [s(60)]);
        assert!(linear(3, s(60), s(30)).is_err());
        assert!(linear(3, Duration::ZERO, s(30)).is_err());
    }

    #[test]
    fn steps_past_the_cap_are_refused() {
        let s = Duration::from_secs;
        assert!(linear(u32::MAX, s(1), s(2)).is_err());
        assert!(linear(MAX_STEPS + 1, s(1), s(2)).is_err());
        assert_eq!(
            linear(MAX_STEPS, s(1), s(2)).map(|d| d.len()).ok(),
            Some(10_000)
        );
    }
}
