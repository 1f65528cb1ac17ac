//! `rnats sub`: print the messages on a subject, for people or as JSON lines.

use clap::Args;
use futures_util::StreamExt;

use super::show::Shown;
use crate::conn::ConnArgs;
use crate::error::CliError;
use crate::out;

/// Options of `rnats sub`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  rnats sub 'orders.>'\n  rnats sub jobs --queue workers --count 10 --json"
)]
pub(crate) struct SubArgs {
    /// Subject to subscribe to; wildcards `*` and `>` allowed.
    subject: String,
    /// Join this queue group.
    #[arg(long, short = 'q', value_name = "GROUP")]
    queue: Option<String>,
    /// Exit after this many messages.
    #[arg(long, short = 'c', value_parser = clap::value_parser!(u64).range(1..))]
    count: Option<u64>,
    /// One JSON object per message: subject, reply, headers, data.
    #[arg(long)]
    json: bool,
    /// Print only the bodies, one per line.
    #[arg(long, conflicts_with = "json")]
    raw: bool,
}

/// Runs `rnats sub`.
pub(crate) async fn run(args: SubArgs, conn: &ConnArgs) -> Result<(), CliError> {
    let (client, _) = conn.connect().await?;
    let mut subscriber = match &args.queue {
        Some(group) => {
            client
                .queue_subscribe(args.subject.clone(), group.clone())
                .await?
        }
        None => client.subscribe(args.subject.clone()).await?,
    };
    client.flush().await?;
    // Scripts and tests wait for this line before publishing.
    match &args.queue {
        Some(group) => eprintln!("Subscribed to {:?} in queue group {group:?}", args.subject),
        None => eprintln!("Subscribed to {:?}", args.subject),
    }
    let mut received = 0u64;
    while let Some(message) = subscriber.next().await {
        received += 1;
        let shown = Shown {
            subject: message.subject.as_str(),
            reply: message.reply.as_ref().map(|r| r.as_str()),
            headers: message.headers.as_ref(),
            payload: &message.payload,
        };
        if args.json {
            out::json(&shown.json())?;
        } else if args.raw {
            out::print_bytes(&message.payload)?;
            out::print("\n")?;
        } else {
            let mut title = format!("[#{received}] Received on {:?}", shown.subject);
            if let Some(reply) = shown.reply {
                title.push_str(&format!(" with reply {reply:?}"));
            }
            out::print(&shown.human(&title))?;
        }
        if args.count == Some(received) {
            return Ok(());
        }
    }
    Err(CliError::SubscriptionEnded)
}
