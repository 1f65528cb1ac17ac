//! `rnats consumer copy STREAM SOURCE DESTINATION`: a new durable consumer on the same stream
//! with another's configuration and the flags given written over it, as natscli's `consumer
//! copy` makes one. Only the configuration is copied, never the source's delivery state, and
//! an existing consumer of that name with another configuration is refused, not changed.

use clap::Args;
use rnats::jetstream::Context;
use rnats::jetstream::consumer;

use super::flags::ConsumerFlags;
use super::{consumer_info, show_consumer};
use crate::error::CliError;

/// Options of `consumer copy`; `--config` is `add`'s and `edit`'s, as the configuration here
/// is SOURCE's.
#[derive(Debug, Args)]
pub(super) struct CopyArgs {
    /// The stream of both consumers.
    stream: String,
    /// The consumer whose configuration to copy.
    source: String,
    /// The new consumer.
    destination: String,
    /// Make the copy a pull consumer, dropping a push source's push settings.
    #[arg(
        long,
        conflicts_with = "deliver_subject",
        help_heading = "Consumer settings"
    )]
    pull: bool,
    #[command(flatten)]
    flags: Box<ConsumerFlags>,
    /// Print the server's consumer info as JSON.
    #[arg(long, short = 'j')]
    json: bool,
}

/// Runs `consumer copy`.
pub(super) async fn run(js: &Context, args: CopyArgs) -> Result<(), CliError> {
    let CopyArgs {
        stream,
        source,
        destination,
        pull,
        flags,
        json,
    } = args;
    let original = consumer_info(js, &stream, &source).await?.config;
    let config = flags.applied_to_new(original, &destination, pull)?;
    // Create only: a copy never rewrites a consumer that is already there (one with the
    // very same configuration is taken as it is, as the server does).
    let copy: consumer::Consumer<consumer::Config> = js
        .create_consumer_strict_on_stream(config, &stream)
        .await
        .map_err(CliError::js(format!(
            "cannot create consumer {destination} on {stream}"
        )))?;
    show_consumer(js, &stream, &destination, copy.cached_info(), json).await
}
