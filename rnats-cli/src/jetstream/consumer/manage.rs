//! `consumer edit`, `pause`, `resume`, `unpin` and `reset`: changes to a consumer that
//! exists.

use std::path::PathBuf;

use clap::Args;
use rnats::jetstream::Context;
use rnats::jetstream::consumer::{self, PauseResponse};
use time::macros::format_description;
use time::{OffsetDateTime, PrimitiveDateTime};

use super::flags::ConsumerFlags;
use super::{get_stream, render_info, render_state};
use crate::error::CliError;
use crate::jetstream::{CONSUMER_FILE_DEFAULTS, duration, read_config, time};
use crate::out;

/// Options of `consumer edit`.
#[derive(Debug, Args)]
pub(super) struct EditArgs {
    /// The stream.
    stream: String,
    /// The consumer.
    name: String,
    /// Take the config from this JSON file (the server's ConsumerConfig) instead of the
    /// consumer's; flags override it.
    #[arg(
        long = "config",
        value_name = "FILE",
        help_heading = "Consumer settings"
    )]
    config_file: Option<PathBuf>,
    #[command(flatten)]
    flags: Box<ConsumerFlags>,
    /// Print the configuration the edit would send, and change nothing.
    #[arg(long)]
    dry_run: bool,
    /// Accepted as natscli has it; an edit never asks.
    #[arg(long, short = 'f')]
    force: bool,
    /// Print the server's consumer info as JSON.
    #[arg(long, short = 'j')]
    json: bool,
}

/// Options of `consumer pause`.
#[derive(Debug, Args)]
pub(super) struct PauseArgs {
    /// The stream.
    stream: String,
    /// The consumer.
    name: String,
    /// Until when: a duration from now (1h), an RFC 3339 time, or `YYYY-MM-DD HH:MM:SS` (UTC).
    until: String,
    /// Do not ask for confirmation.
    #[arg(long, short = 'f')]
    force: bool,
}

/// Options of `consumer resume`.
#[derive(Debug, Args)]
pub(super) struct ResumeArgs {
    /// The stream.
    stream: String,
    /// The consumer.
    name: String,
    /// Do not ask for confirmation.
    #[arg(long, short = 'f')]
    force: bool,
}

/// Options of `consumer unpin`.
#[derive(Debug, Args)]
pub(super) struct UnpinArgs {
    /// The stream.
    stream: String,
    /// The consumer (with the pinned_client priority policy).
    name: String,
    /// The priority group to unpin.
    group: String,
    /// Do not ask for confirmation.
    #[arg(long, short = 'f')]
    force: bool,
}

/// Options of `consumer reset`.
#[derive(Debug, Args)]
pub(super) struct ResetArgs {
    /// The stream.
    stream: String,
    /// The consumer.
    name: String,
    /// The stream sequence to deliver from again [default: the consumer's ack floor].
    #[arg(long, value_name = "SEQ")]
    sequence: Option<u64>,
    /// Do not ask for confirmation.
    #[arg(long, short = 'f')]
    force: bool,
    /// The consumer's info after the reset, as JSON.
    #[arg(long, short = 'j')]
    json: bool,
}

/// `consumer edit`: the consumer's config (or `--config`'s) with the flags written in.
pub(super) async fn edit(js: &Context, args: EditArgs) -> Result<(), CliError> {
    let EditArgs {
        stream,
        name,
        config_file,
        flags,
        dry_run,
        json,
        ..
    } = args;
    let handle = get_stream(js, &stream).await?;
    let action = format!("cannot edit consumer {name} on {stream}");
    let current = handle
        .consumer_info(&name)
        .await
        .map_err(CliError::js(&action))?
        .config;
    let base = match &config_file {
        Some(path) => read_config(path, CONSUMER_FILE_DEFAULTS)?,
        None => current,
    };
    let config = flags.applied_to(base, &name)?;
    if dry_run {
        return out::json_pretty(&config);
    }
    let updated: consumer::Consumer<consumer::Config> = js
        .update_consumer_on_stream(config, &stream)
        .await
        .map_err(CliError::js(&action))?;
    if json {
        return super::info_json(js, &stream, &name).await;
    }
    eprintln!("Updated consumer {name} on {stream}");
    out::print(&render_info(updated.cached_info()))
}

/// `consumer pause`.
pub(super) async fn pause(js: &Context, args: PauseArgs) -> Result<(), CliError> {
    let until = pause_until(&args.until)?;
    let handle = get_stream(js, &args.stream).await?;
    out::confirm(
        &format!(
            "Really pause consumer {} on {} until {}",
            args.name,
            args.stream,
            time(until)
        ),
        args.force,
    )?;
    let response = handle
        .pause_consumer(&args.name, until)
        .await
        .map_err(CliError::js(format!(
            "cannot pause consumer {} on {}",
            args.name, args.stream
        )))?;
    print_pause(&args.stream, &args.name, &response)
}

/// `consumer resume`.
pub(super) async fn resume(js: &Context, args: ResumeArgs) -> Result<(), CliError> {
    let handle = get_stream(js, &args.stream).await?;
    out::confirm(
        &format!("Really resume consumer {} on {}", args.name, args.stream),
        args.force,
    )?;
    let response = handle
        .resume_consumer(&args.name)
        .await
        .map_err(CliError::js(format!(
            "cannot resume consumer {} on {}",
            args.name, args.stream
        )))?;
    print_pause(&args.stream, &args.name, &response)
}

/// `consumer unpin`.
pub(super) async fn unpin(js: &Context, args: UnpinArgs) -> Result<(), CliError> {
    let handle = get_stream(js, &args.stream).await?;
    out::confirm(
        &format!(
            "Really unpin the client of group {} of consumer {} on {}",
            args.group, args.name, args.stream
        ),
        args.force,
    )?;
    handle
        .unpin_consumer(&args.name, &args.group)
        .await
        .map_err(CliError::js(format!(
            "cannot unpin group {} of consumer {} on {}",
            args.group, args.name, args.stream
        )))?;
    out::print(&format!(
        "Unpinned group {} of consumer {} on {}\n",
        args.group, args.name, args.stream
    ))
}

/// `consumer reset` (ADR-60): asks, resets, and shows the consumer's state after.
pub(super) async fn reset(js: &Context, args: ResetArgs) -> Result<(), CliError> {
    let ResetArgs {
        stream,
        name,
        sequence,
        force,
        json,
    } = args;
    let handle = get_stream(js, &stream).await?;
    let action = format!("cannot reset consumer {name} on {stream}");
    // Fail on a missing consumer before asking anything.
    handle
        .consumer_info(&name)
        .await
        .map_err(CliError::js(&action))?;
    let target = match sequence {
        Some(sequence) => format!("stream sequence {sequence}"),
        None => "its ack floor".to_owned(),
    };
    out::confirm(
        &format!("Really reset consumer {name} on {stream} to {target}"),
        force,
    )?;
    let response = handle
        .reset_consumer(&name, sequence)
        .await
        .map_err(CliError::js(&action))?;
    if json {
        return super::info_json(js, &stream, &name).await;
    }
    eprintln!(
        "Reset consumer {name} on {stream} to stream sequence {}",
        response.reset_seq
    );
    out::print(&render_state(&response.info))
}

fn print_pause(stream: &str, name: &str, response: &PauseResponse) -> Result<(), CliError> {
    if response.paused {
        let left = response
            .pause_remaining
            .map(|d| format!(" ({} left)", duration(d)))
            .unwrap_or_default();
        out::print(&format!(
            "Paused consumer {name} on {stream} until {}{left}\n",
            time(response.pause_until)
        ))
    } else {
        out::print(&format!("Consumer {name} on {stream} is not paused\n"))
    }
}

/// natscli's pause deadline: a duration from now, or a time (RFC 3339, or Go's
/// `time.DateTime` layout read as UTC).
pub(super) fn pause_until(text: &str) -> Result<OffsetDateTime, CliError> {
    if let Ok(t) = OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339) {
        return Ok(t);
    }
    let layout = format_description!("[year]-[month]-[day] [hour]:[minute]:[second]");
    if let Ok(t) = PrimitiveDateTime::parse(text, layout) {
        return Ok(t.assume_utc());
    }
    match crate::parse::duration(text) {
        Ok(d) if !d.is_zero() => crate::parse::time_ahead("pause time", d),
        _ => Err(CliError::InvalidArgument {
            what: "pause time",
            given: text.to_owned(),
            reason: "expected a duration (1h), an RFC 3339 time or YYYY-MM-DD HH:MM:SS".to_owned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pause_times_read_as_natscli_writes_them() {
        let t = pause_until("2030-01-02 03:04:05").expect("a time");
        assert_eq!((t.year(), t.hour(), t.second()), (2030, 3, 5));
        let t = pause_until("2030-01-02T03:04:05Z").expect("RFC 3339");
        assert_eq!(t.day(), 2);
        let later = pause_until("1h").expect("a duration");
        assert!(later > OffsetDateTime::now_utc());
        assert!(pause_until("soon").is_err());
        assert!(pause_until("0s").is_err());
    }

    #[test]
    fn pauses_past_year_9999_are_refused() {
        assert!(pause_until("8000y").is_err());
    }
}
