//! `sub --direct` (natscli's), and what `sub` does with a work-queue or interest stream: the
//! stream's messages read by batched direct gets (ADR-31, nats-server 2.11+) instead of a
//! consumer, which such a stream refuses without acks (work queue) or would hold messages
//! for (interest). Nothing on the server changes: the messages stay where they are. Direct
//! gets have no push, so once the stored messages are read the stream is asked again every
//! [`POLL`] for newer ones.

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use rnats::jetstream::ServerVersion;
use rnats::jetstream::consumer::DeliverPolicy;
use rnats::jetstream::message::StreamMessage;
use rnats::jetstream::stream::{DirectGetErrorKind, Stream};
use time::OffsetDateTime;

use super::{SubArgs, dump, ignored, print_human, stamp};
use crate::core::show::Shown;
use crate::error::CliError;
use crate::out;

/// How often a caught-up read asks for newer messages.
const POLL: Duration = Duration::from_millis(250);

/// The first release with batched direct gets; an older server answers one message a
/// request, which would read as a stream that ends after its first message.
const BATCHED_GETS: ServerVersion = ServerVersion::new(2, 11, 0);

/// Where the first request starts.
enum From {
    Sequence(u64),
    Time(OffsetDateTime),
    /// The last message of each subject up to this sequence, then on from the next.
    LastPerSubject(u64),
}

/// Reads `stream` (its info fetched) from `deliver` on, filtered to `filter` (all subjects
/// when empty), printing each message, until `--count`, `--wait`, `-T`, or an error.
/// `server` is the connected server's version.
pub(super) async fn read(
    args: &SubArgs,
    deliver: &DeliverPolicy,
    stream: &Stream,
    filter: &str,
    server: &str,
) -> Result<(), CliError> {
    let info = stream.cached_info();
    let name = info.config.name.clone();
    let action = format!("cannot read stream {name} by direct gets");
    let refused = |why: String| CliError::JetStream {
        action: action.clone(),
        source: why.into(),
    };
    if !server
        .parse::<ServerVersion>()
        .is_ok_and(|version| version >= BATCHED_GETS)
    {
        return Err(refused(format!(
            "batched direct gets need nats-server {BATCHED_GETS} or later; this one is {server}"
        )));
    }
    if !info.config.allow_direct {
        return Err(refused(
            "the stream does not allow direct gets (stream edit --allow-direct)".to_owned(),
        ));
    }
    if let Some(dir) = args.dump.as_deref().filter(|d| !super::is_stdout(d)) {
        std::fs::create_dir_all(dir).map_err(|source| CliError::WriteFile {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    let filter = if filter.is_empty() { ">" } else { filter };
    let (first, last) = (info.state.first_sequence.max(1), info.state.last_sequence);
    let mut from = match deliver {
        DeliverPolicy::All => From::Sequence(first),
        DeliverPolicy::New => From::Sequence(last + 1),
        // The last message on the filter, which need not be the stream's last.
        DeliverPolicy::Last if filter != ">" => {
            match stream.direct_get_last_for_subject(filter).await {
                Ok(message) => From::Sequence(message.sequence),
                Err(error) if error.kind() == DirectGetErrorKind::NotFound => {
                    From::Sequence(last + 1)
                }
                Err(error) => return Err(CliError::js(&action)(error)),
            }
        }
        DeliverPolicy::Last => From::Sequence(last.max(first)),
        DeliverPolicy::LastPerSubject => From::LastPerSubject(last),
        DeliverPolicy::ByStartSequence { start_sequence } => From::Sequence(*start_sequence),
        DeliverPolicy::ByStartTime { start_time } => From::Time(*start_time),
    };
    eprintln!(
        "Subscribed to {filter:?} in stream {name} {} (direct)",
        super::stream::deliver_words(deliver)
    );
    let mut received = 0u64;
    // When a message last came, shown or left out by -I: what --wait counts from.
    let mut last_read = Instant::now();
    // Whether any message was read: -T with --new waits for the first, as a consumer does.
    let mut read_any = false;
    loop {
        let batch = match from {
            From::Sequence(sequence) => stream.direct_batch(filter).sequence(sequence).send().await,
            From::Time(at) => stream.direct_batch(filter).start_time(at).send().await,
            From::LastPerSubject(0) => {
                // Nothing stored yet: on with what comes.
                from = From::Sequence(1);
                continue;
            }
            From::LastPerSubject(up_to) => {
                stream
                    .direct_multi_last([filter])
                    .up_to_sequence(up_to)
                    .send()
                    .await
            }
        };
        let mut batch = batch.map_err(CliError::js(&action))?;
        // After a last-per-subject snapshot, the messages stored after it.
        let mut next = match from {
            From::LastPerSubject(up_to) => Some(up_to + 1),
            _ => None,
        };
        while let Some(message) = batch.next().await {
            let message = message.map_err(CliError::js(&action))?;
            if !matches!(from, From::LastPerSubject(_)) {
                next = Some(message.sequence + 1);
            }
            last_read = Instant::now();
            read_any = true;
            if ignored(&args.ignore, message.subject.as_str()) {
                continue;
            }
            received += 1;
            show(args, &name, message, received).await?;
            if args.limit() == Some(received) {
                return Ok(());
            }
        }
        match next {
            Some(sequence) => from = From::Sequence(sequence),
            // Nothing at or after a start time yet: the next message is the next stored.
            None if matches!(from, From::Time(_)) => from = From::Sequence(last + 1),
            None => {}
        }
        // The batch pages until nothing is pending: the read has caught up.
        if args.terminate_at_end && (read_any || *deliver != DeliverPolicy::New) {
            return Ok(());
        }
        if args.wait.is_some_and(|wait| last_read.elapsed() >= wait) {
            return Ok(());
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Prints one message read by direct get: natscli's `Received JetStream message (direct)`
/// line, JSON with the stream, sequence and time added, the body alone, or a dump file.
async fn show(
    args: &SubArgs,
    stream: &str,
    mut message: StreamMessage,
    received: u64,
) -> Result<(), CliError> {
    if let Some(dir) = &args.dump {
        let as_core = rnats::Message {
            subject: message.subject.clone(),
            reply: None,
            payload: message.payload.clone(),
            headers: (!message.headers.is_empty()).then(|| message.headers.clone()),
            status: None,
            description: None,
            length: message.payload.len(),
        };
        return dump(dir, &as_core, &message.sequence.to_string());
    }
    message.payload = args
        .translated_body(&message.payload, message.subject.as_str(), stream)
        .await;
    if args.raw {
        out::print_bytes(&message.payload)?;
        return out::print("\n");
    }
    let shown = Shown {
        subject: message.subject.as_str(),
        reply: None,
        headers: Some(&message.headers),
        payload: if args.shows_bodies() {
            &message.payload
        } else {
            &[]
        },
    };
    if args.json {
        let mut object = shown.json();
        // What the server said was left to read after this one, as a consumer's ack says.
        let pending = message
            .headers
            .get("Nats-Num-Pending")
            .and_then(|value| value.as_str().parse::<u64>().ok());
        super::stream::stored_fields(&mut object, stream, message.sequence, pending, message.time);
        return out::json(&object);
    }
    let title = format!(
        "[#{received}]{} Received JetStream message (direct): stream: {stream} seq {} / subject: {} / time: {}",
        stamp(
            args,
            message.time,
            (OffsetDateTime::now_utc() - message.time).unsigned_abs()
        ),
        message.sequence,
        shown.subject,
        crate::jetstream::time(message.time),
    );
    print_human(args, &shown, &title)
}
