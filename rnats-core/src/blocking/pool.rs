//! The server pool as the blocking client uses it between links: the server of each
//! reconnect attempt, which the user's `reconnect_to_server_callback` may choose.

use std::time::Duration;

use super::executor::block_on;
use super::state::Inner;
use crate::events::{ClientError, ConnectionEvent};
use crate::server_addr::ServerAddr;
use crate::shared::lock;

impl Inner {
    /// The server for reconnect attempt `attempts` (counted from 0) and the wait before it:
    /// the pool's next server, after the policy's delay at the start of each pass but the
    /// first, unless the `reconnect_to_server_callback` picks one of the pool's servers (and
    /// maybe its own delay). `None`: the pool is empty.
    ///
    /// The callback is async in the shared options; it runs here, on the background thread,
    /// which has nothing else to do while the link is down. A callback that never finishes
    /// stops the reconnects (and keeps this thread after a close) until it does.
    pub(super) fn next_attempt(&self, attempts: usize) -> Option<(ServerAddr, Duration)> {
        let policy = &self.options.reconnect;
        let (servers, len) = {
            let pool = lock(&self.pool);
            let servers = policy.choose_server.as_ref().map(|_| pool.snapshot());
            (servers, pool.len())
        };
        let delay = crate::reconnect::delay_before(policy, attempts, len);
        if let (Some(choose), Some(servers)) = (&policy.choose_server, servers) {
            let info = (**self.core().session.info()).clone();
            if let Some(choice) = block_on(choose(servers, info)) {
                if lock(&self.pool).contains(&choice.addr) {
                    return Some((choice.addr, choice.delay.unwrap_or(delay)));
                }
                self.events
                    .emit(ConnectionEvent::ClientError(ClientError::ServerNotInPool));
            }
        }
        let addr = lock(&self.pool).next_server()?;
        Some((addr, delay))
    }
}
