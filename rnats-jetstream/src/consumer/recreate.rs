//! Creating an ordered consumer again after a fault: the same create, sent again every second
//! while none has been answered, the earlier sends still waiting for theirs.
//!
//! A create sent while the meta leader is being elected gets no answer at all, however long
//! it waits. Giving up on it after a bound and only then sending the next one loses, after
//! the election ends, whatever is left of that bound: ordered consumers came back up to 9 s
//! after a heal that way (issue 32). Sending the same request again every second, with the
//! same name and configuration, brings one to the new leader within a second of its
//! election, and a create that is slow rather than lost is still answered: its send keeps
//! waiting. Creating a consumer that already exists with the same configuration changes
//! nothing (`CreateOrUpdate`), so a second send that lands after the first is harmless.
//! None of this costs anything in steady state.

use std::time::Duration;

use futures_util::StreamExt;
use futures_util::future::{self, Either};
use futures_util::stream::FuturesUnordered;

use super::{Consumer, FromConsumer, IntoConsumerConfig};
use crate::consumer_errors::{ConsumerError, ConsumerErrorKind};
use crate::context::Context;

/// How long a send waits for its answer before the same create is sent again.
const RESEND_EVERY: Duration = Duration::from_secs(1);
/// The most sends waiting at once.
const MOST_IN_FLIGHT: usize = 10;
/// The longest one send waits, whatever the context's timeout: by then the next sends are
/// out, and a slot is free for another. A create that the server makes later still is found
/// by the next send (same name, same configuration).
const SEND_BOUND: Duration = RESEND_EVERY.saturating_mul(MOST_IN_FLIGHT as u32);

/// Creates (or finds) the consumer `config` describes on `stream`, sending the request again
/// every [`RESEND_EVERY`] while none has been answered. Each send is bounded by `context`'s
/// timeout and by [`SEND_BOUND`]; the first answer decides, except a send timing out, which
/// leaves the others to answer. It never gives up on its own: the caller bounds it, or keeps
/// trying anyway.
pub(crate) async fn create_resending<C>(
    context: &Context,
    config: &C,
    stream: &str,
) -> Result<Consumer<C>, ConsumerError>
where
    C: IntoConsumerConfig + FromConsumer + Clone,
{
    let mut sends = FuturesUnordered::new();
    loop {
        if sends.len() < MOST_IN_FLIGHT {
            let send = context.create_consumer_on_stream(config.clone(), stream);
            sends.push(async move {
                tokio::time::timeout(SEND_BOUND, send)
                    .await
                    .unwrap_or_else(|_| Err(ConsumerError::new(ConsumerErrorKind::TimedOut)))
            });
        }
        let mut resend = std::pin::pin!(tokio::time::sleep(RESEND_EVERY));
        loop {
            match future::select(sends.next(), resend.as_mut()).await {
                Either::Left((Some(Ok(consumer)), _)) => return Ok(consumer),
                // Lost on the way, or not answered yet: the later sends may still be.
                Either::Left((Some(Err(error)), _))
                    if matches!(error.kind(), ConsumerErrorKind::TimedOut) => {}
                Either::Left((Some(Err(error)), _)) => return Err(error),
                // Every send timed out: send again now.
                Either::Left((None, _)) => break,
                Either::Right(((), _)) => break,
            }
        }
    }
}
