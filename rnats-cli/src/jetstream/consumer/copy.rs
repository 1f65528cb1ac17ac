//! `rnats consumer copy STREAM SOURCE DESTINATION`: a new durable consumer on the same stream
//! with another's configuration and the flags given written over it, as natscli's `consumer
//! copy` makes one. Only the configuration is copied, never the source's delivery state, and
//! an existing consumer of that name with another configuration is refused, not changed.

use clap::Args;
use rnats::jetstream::Context;
use rnats::jetstream::consumer;

use super::flags::ConsumerFlags;
use super::{get_stream, show_created};
use crate::error::CliError;

/// Options of `consumer copy`.
#[derive(Debug, Args)]
pub(super) struct CopyArgs {
    /// The stream of both consumers.
    stream: String,
    /// The consumer whose configuration to copy.
    source: String,
    /// The new consumer.
    destination: String,
    #[command(flatten)]
    flags: Box<ConsumerFlags>,
    /// Print the server's consumer info as JSON.
    #[arg(long)]
    json: bool,
}

/// Runs `consumer copy`.
pub(super) async fn run(js: &Context, args: CopyArgs) -> Result<(), CliError> {
    let CopyArgs {
        stream,
        source,
        destination,
        flags,
        json,
    } = args;
    if flags.config_file.is_some() {
        return Err(CliError::Usage(
            "consumer copy takes its configuration from SOURCE; --config is for consumer add and edit",
        ));
    }
    let handle = get_stream(js, &stream).await?;
    let original = handle
        .consumer_info(&source)
        .await
        .map_err(CliError::js(format!(
            "cannot read consumer {source} on {stream}"
        )))?
        .config;
    let config = flags.applied_to(original, &destination)?;
    // Create only: a copy never rewrites a consumer that is already there (one with the
    // very same configuration is taken as it is, as the server does).
    let copy: consumer::Consumer<consumer::Config> = handle
        .create_consumer_strict(config)
        .await
        .map_err(CliError::js(format!(
            "cannot create consumer {destination} on {stream}"
        )))?;
    show_created(js, &stream, &destination, copy.cached_info(), json).await
}
