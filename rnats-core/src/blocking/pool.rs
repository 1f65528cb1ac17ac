//! The server pool as the blocking client uses it between links: the server of each
//! reconnect attempt, which the user's `reconnect_to_server_callback` may choose.

use std::sync::Arc;
use std::time::Duration;

use rnats_proto::ServerInfo;

use super::executor::block_on;
use super::state::Inner;
use crate::reconnect;
use crate::server_addr::ServerAddr;

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
        let (delay, servers) = reconnect::plan_attempt(&self.pool, policy, attempts);
        let mut choice = None;
        if let (Some(choose), Some(servers)) = (&policy.choose_server, servers) {
            let info = Arc::clone(self.core().session.info());
            choice = block_on(choose(servers, ServerInfo::clone(&info)));
        }
        reconnect::settle_attempt(&self.pool, choice, delay, |event| self.events.emit(event))
    }
}
